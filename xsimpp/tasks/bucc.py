"""The BUCC 2018 task (Zweigenbaum et al. 2018): comparable corpora with gold pairs -> encoder
(cached) -> margin mining -> threshold (tuned on gold, a prior proportion, or cross-validated) ->
precision / recall / F1 records, under one of two protocols:

- ``laser`` (default): LASER's / XTREME's. Candidates = forward best per source ∪ backward best per
  target; optional filters, applied to the candidates before any threshold is set.
- ``keung``: Keung et al. (2020), sections 2 and 3.1. Each (non-English) source is paired with its
  nearest target by the ratio margin (forward only, k = 4); the threshold keeps the best ~2 % of
  the source sentences *counted before the filters*, and only then do the digit filter (ASCII
  ``[0-9]+`` runs as sets, their footnote 2) and the edit-distance filter drop pairs.
  ``BuccSettings.PRESETS["keung"]`` holds the paper's values. Only the prior-proportion threshold depends on
  the order of filters and threshold: a score threshold tuned on gold (or cross-validated)
  extracts {score >= t} ∩ {passes the filters} whichever comes first.

``BuccTask.render`` prints the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..cache import EmbeddingCache
from ..datasets.bucc import BuccSplit
from ..encoders.base import Encoder
from ..errors import BadInputError
from ..results import Outcomes, ResultRecord
from ..engine import DEFAULT_MARGIN, MARGINS
from ..scoring import EngineConfig
from ..scoring.bucc import (DIGIT_RULES, PRF, Candidates, CrossValidation, apply_filters, cross_validate,
                            evaluate_threshold, expand_duplicates, gold_mask, keep_fraction_threshold, mine_candidates,
                            tune_threshold, unique_texts)
from ..scoring.bucc import one_to_one as greedy_one_to_one
from ..textio import MAX_SEED, path, seed
from .base import (MAX_FOLDS, MAX_K, Embedder, IntervalSettings, MetricInfo, PairScores, Task, TaskReport,
                   check_margin_k, embedder_for, knob, pair_scores_for, sign)


PROTOCOLS = ("laser", "keung")
KEUNG_KEEP_FRACTION = 0.02  # "we choose a score threshold such that we retrieve ~2% of the pairs"
KEUNG_MAX_EDIT_SIMILARITY = 0.5  # "remove sentence pairs where ... the character-level edit distance is <=50%"


# The threshold knobs decide each record's threshold rule, which that record signs as ``threshold``
# (keep-fraction=F, best-f1@SPLIT, cvFOLDS-seedS): a record a knob does not shape does not carry it.
_SIGNED_AS_RULE = "signed per record as its threshold rule (threshold=keep-fraction=F / best-f1@SPLIT / cvN-seedS)"


@dataclass(frozen=True)
class BuccSettings(IntervalSettings):
    """The protocol (``laser`` or ``keung``, see the module docstring), mining (margin, k; k is
    clipped to each side's size as LASER does), the greedy one-to-one selection, the filters
    (``digits``: None, "unicode" or "ascii"; True means "unicode", the rule of earlier versions),
    and how the threshold is set: best F1 on a tune split's gold (default), a prior proportion
    (``keep_fraction``), plus ``cv`` folds (seeded). Earlier spellings are accepted by ``make``:
    ``digit_filter=True`` (= ``digits="unicode"``), ``edit_filter`` (True = 0.5, False = none, or
    the cut); ``keung=True`` is refused with the two things it could have meant."""

    PRESETS = {"laser": {}, "keung": {"keep_fraction": KEUNG_KEEP_FRACTION, "digits": "ascii",
                                      "max_edit_similarity": KEUNG_MAX_EDIT_SIMILARITY}}
    ALIASES = ("digit_filter", "edit_filter", "keung")

    margin: str = knob(DEFAULT_MARGIN, "margin scoring, as LASER", choices=MARGINS)
    k: int = knob(4, "neighbours for the margin (clipped to set sizes)", type=int, min=1, max=MAX_K)
    one_to_one: bool = knob(False, "greedy one-to-one selection before thresholding, as LASER's/XTREME's BUCC "
                                   "scripts", signed_in="retrieval")
    digits: Any = knob(None, "digit filter: keep pairs whose digit runs match as sets. ascii: Keung et al.'s [0-9]+ on "
                             "the raw text (default under --protocol keung); unicode: any decimal digit after NFKC, so "
                             "full-width '２００８' matches '2008' (a deviation from the paper); none: no digit filter",
                       choices=("ascii", "unicode", "none"), signed_in="filters")
    max_edit_similarity: float | None = knob(None, "drop near-copies: pairs with Levenshtein similarity >= this",
                                             cli=False, signed_in="filters")
    keep_fraction: float | None = knob(None, "threshold by prior proportion (Keung et al. 2020): extract the best F x "
                                             "#source sentences (--protocol keung: 0.02, counted before the filters)",
                                       type=float, metavar="F", unsigned=_SIGNED_AS_RULE)
    cv: int | None = knob(None, "also report FOLDS-fold cross-validated thresholds", type=int, min=2, max=MAX_FOLDS,
                          metavar="FOLDS",
                          unsigned=_SIGNED_AS_RULE)
    seed: int = knob(0, "seed for --cv folds and --sample", type=seed, min=0, max=MAX_SEED,
                     unsigned=_SIGNED_AS_RULE + "; --sample's seed is in the record's subset")
    protocol: str = knob("laser", "laser: LASER's/XTREME's; keung: Keung et al. 2020 (forward retrieval, "
                                  "--keep-fraction 0.02 counted before the filters, then --digits ascii and "
                                  "--edit-filter 0.5)", choices=PROTOCOLS)

    @classmethod
    def make(cls, **given: Any) -> "BuccSettings":
        if given.pop("keung", False):
            raise BadInputError("--keung no longer exists: for Keung et al.'s protocol (forward retrieval, 2 % kept, "
                                "then the filters) use --protocol keung; for the two filters alone under the LASER "
                                "protocol use --digit-filter --edit-filter")
        if given.pop("digit_filter", False):
            if given.get("digits") not in (None, "unicode"):
                raise BadInputError(f"--digit-filter is --digits unicode; it cannot be combined with --digits "
                                    f"{given['digits']}")
            given["digits"] = "unicode"
        if "edit_filter" in given:
            edit = given.pop("edit_filter")
            if edit is not None:
                given["max_edit_similarity"] = None if edit is False else (0.5 if edit is True else edit)
        return super().make(**given)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_margin_k(self.margin, self.k)
        if self.protocol not in PROTOCOLS:
            raise BadInputError(f"BUCC protocol must be one of {', '.join(PROTOCOLS)}, not {self.protocol!r}")
        digits = "unicode" if self.digits is True else (None if self.digits in (False, None, "none") else self.digits)
        if digits is not None and digits not in DIGIT_RULES:
            raise BadInputError(f"digit rule must be one of {', '.join(DIGIT_RULES)} or none, not {self.digits!r}")
        object.__setattr__(self, "digits", digits)
        if self.protocol == "keung" and self.one_to_one:
            raise BadInputError("the greedy one-to-one selection is LASER's/XTREME's, not part of Keung et al.'s "
                                "protocol (forward retrieval); use it with --protocol laser")
        if self.keep_fraction is not None and not 0 < self.keep_fraction <= 1:
            raise BadInputError(f"keep fraction must be in (0, 1], got {self.keep_fraction}")
        if self.max_edit_similarity is not None and not 0 < self.max_edit_similarity <= 1:
            raise BadInputError(f"edit similarity cut must be in (0, 1], got {self.max_edit_similarity}")
        if self.cv is not None and (not isinstance(self.cv, (int, np.integer)) or self.cv < 2):
            raise BadInputError(f"cross-validation needs at least 2 folds, got {self.cv!r}")

    @property
    def filters(self) -> str:
        parts = ([f"digits-{self.digits}"] if self.digits else []) + (
            [f"edit<{self.max_edit_similarity:g}"] if self.max_edit_similarity is not None else [])
        return "+".join(parts) or "none"

    def signed_values(self) -> dict:
        """The filters and the retrieval as they are applied (the threshold rule and subset are per record)."""
        retrieval = "forward" if self.protocol == "keung" else ("max-1to1" if self.one_to_one else "max")
        return {"k": 1 if self.margin == "absolute" else self.k, "filters": self.filters, "retrieval": retrieval}


@dataclass
class MinedSplit:
    """Candidates of one split in line space (after the filters), with their gold flags."""

    data: BuccSplit
    cands: Candidates
    is_gold: np.ndarray
    n_gold: int
    n_mined: int  # candidates before the filters
    dropped: dict[str, int] = field(default_factory=dict)
    n_unique: tuple[int, int] = (0, 0)
    unfiltered_score: np.ndarray | None = None  # every candidate's score before the filters (sorted)


@dataclass
class BuccReport(TaskReport):
    pair: str
    encoder_id: str
    apply_split: str
    tune_split: str | None
    method: str  # "best-f1", "keep-fraction"
    optimistic: bool
    result: PRF  # on the apply split at the chosen threshold
    tuned: PRF | None  # on the tune split at its optimum (best-f1 only)
    cv: CrossValidation | None
    mined: dict[str, MinedSplit]
    settings: BuccSettings
    k_used: int  # k after clipping to the sides' sizes

    @property
    def params(self) -> dict:
        return self.settings.params()


def mine_split(encoder: Encoder, data: BuccSplit, settings: BuccSettings, embed: Embedder | None,
               config: EngineConfig | None = None, pairs: PairScores | None = None) -> MinedSplit:
    """Mine one split. Policy for duplicate sentences: mine over the distinct texts of each side
    (each is encoded once and occupies one place in every neighbourhood, as LASER's ``--unify``),
    then give every line that carries a mined text the text pair's score. LASER drops sentences
    that occur more than once, losing their gold pairs; this keeps them all."""
    st = settings
    forward = st.protocol == "keung"
    u_src, inv_src = unique_texts(data.src)
    u_tgt, inv_tgt = unique_texts(data.tgt)
    if embed is not None:
        x = embed(u_src, data.src_lang)
        y = embed(u_tgt, data.tgt_lang)
        cands = mine_candidates(x, y, margin=st.margin, k=st.k, config=config, forward_only=forward)
    else:
        scores = pairs or PairScores(encoder, None)
        sim = scores(u_src, u_tgt, data.src_lang, data.tgt_lang)
        cands = mine_candidates(similarity=sim, margin=st.margin, k=st.k, config=config, forward_only=forward)
    if st.one_to_one:  # over distinct texts, as LASER (--unify) does, so duplicates do not block each other
        cands = greedy_one_to_one(cands)
    cands = expand_duplicates(cands, inv_src, inv_tgt)
    n_mined, unfiltered_score = len(cands), cands.score
    cands, dropped = apply_filters(data.src, data.tgt, cands, digits=st.digits,
                                   max_edit_similarity=st.max_edit_similarity)
    if data.gold is not None:
        gs, gt = data.gold_indices()
        is_gold, n_gold = gold_mask(cands, gs, gt), len(gs)
    else:
        is_gold, n_gold = np.zeros(len(cands), dtype=bool), 0
    return MinedSplit(data, cands, is_gold, n_gold, n_mined, dropped, (len(u_src), len(u_tgt)), unfiltered_score)


def evaluate_bucc(
    encoder: Encoder,
    apply: BuccSplit,
    tune: BuccSplit | None = None,
    settings: BuccSettings | None = None,
    *,
    cache: EmbeddingCache | None = None,
    progress: Callable[[int], None] | None = None,
    config: EngineConfig | None = None,
) -> BuccReport:
    """BUCC F1 on ``apply`` with a threshold tuned on ``tune`` (best F1 on its gold) or set by a
    prior proportion (``settings.keep_fraction`` of the source sentences; no gold needed).

    When ``tune`` is the ``apply`` split itself the F1 is optimistic (the threshold saw the test
    gold); ``settings.cv`` folds give the honest single-split figure beside it.
    """
    st = settings or BuccSettings()
    if apply.gold is None:
        raise BadInputError(f"BUCC {apply.pair} {apply.split} has no gold file, so it cannot be scored")
    if st.keep_fraction is None and tune is None:
        raise BadInputError("choose how to set the threshold: a tune split with gold, or a keep fraction")
    for split in (apply, tune if st.keep_fraction is None else None):
        if split is not None and split.gold is not None and len(split.gold) == 0:
            subset = f" ({split.subset})" if split.subset else ""
            raise BadInputError(f"BUCC {split.pair} {split.split}{subset} holds no gold pair, so precision, recall and "
                                "F1 are undefined; use more lines (--head, --sample) or the full split")
    embed = embedder_for(encoder, cache, progress)
    pairs = pair_scores_for(encoder, cache, progress)
    mined = {apply.split: mine_split(encoder, apply, st, embed, config, pairs)}
    a = mined[apply.split]
    optimistic = False
    tuned = None
    if st.keep_fraction is not None:
        method = "keep-fraction"
        # Keung et al. count the kept share before their filters run; LASER-protocol runs count
        # what the filters left (filters first, as in earlier versions)
        counted = a.unfiltered_score if st.protocol == "keung" else a.cands.score
        threshold = keep_fraction_threshold(counted, st.keep_fraction, len(apply.src))
        tune_name = None
        rule = f"keep-fraction={st.keep_fraction:g}"
    else:
        if tune.gold is None:
            raise BadInputError(f"BUCC {tune.pair} {tune.split} has no gold file, so no threshold can be tuned on it")
        same = tune.split == apply.split and tune.checksum == apply.checksum
        t = a if same else mine_split(encoder, tune, st, embed, config, pairs)
        mined[tune.split] = t
        tuned = tune_threshold(t.cands.score, t.is_gold, t.n_gold)
        threshold, method, optimistic, tune_name = tuned.threshold, "best-f1", same, tune.split
        rule = f"best-f1@{tune_name}"
    result = evaluate_threshold(a.cands.score, a.is_gold, a.n_gold, threshold)
    cvres = None
    if st.cv:
        gs, _ = apply.gold_indices()
        cvres = cross_validate(a.cands, a.is_gold, gs, len(apply.src), folds=st.cv, seed=st.seed)

    k_used = a.cands.k_fwd if st.margin != "absolute" else 1
    report = BuccReport(apply.pair, encoder.id, apply.split, tune_name, method, optimistic, result, tuned, cvres,
                        mined, st, k_used)
    gold_src, gold_tgt = apply.gold_indices()
    report.records.append(_bucc_record(encoder, apply, result, st, rule, a, k_used, optimistic,
                                       bucc_outcomes(a, a.cands.score >= threshold, gold_src, gold_tgt)))
    if a.dropped:  # what the threshold kept before the filters removed pairs (Keung et al.'s order)
        report.records[0].extra["above_threshold_before_filters"] = int((a.unfiltered_score >= threshold).sum())
    if cvres is not None:
        rec = _bucc_record(encoder, apply, cvres.pooled, st, f"cv{st.cv}-seed{st.seed}", a, k_used, False,
                           bucc_outcomes(a, cvres.kept, gold_src, gold_tgt))
        rec.extra["fold_thresholds"] = [round(v, 6) for v in cvres.thresholds]
        report.records.append(rec)
    report.count_encoding(embed or pairs)
    return report


def bucc_outcomes(mined: MinedSplit, kept: np.ndarray, gold_src: np.ndarray, gold_tgt: np.ndarray) -> Outcomes:
    """BUCC's items: every extracted pair (correct when gold; its margin score) and every gold pair
    left out (chosen -1), each in the unit of its source sentence, so a resample draws source
    sentences with all their pairs at the record's threshold(s) (F1 = sum 2c / sum (1 + c))."""
    c = mined.cands
    hits = kept & mined.is_gold
    found = set(zip(c.src[hits].tolist(), c.tgt[hits].tolist()))
    missed = [(s, t) for s, t in zip(gold_src.tolist(), gold_tgt.tolist()) if (s, t) not in found]
    m_src = np.array([s for s, _ in missed], dtype=np.int64)
    m_tgt = np.array([t for _, t in missed], dtype=np.int64)
    return Outcomes.build("pair_f1", np.concatenate([mined.is_gold[kept], np.zeros(len(missed), bool)]),
                          np.concatenate([c.tgt[kept], np.full(len(missed), -1)]),
                          np.concatenate([np.where(mined.is_gold[kept], c.tgt[kept], -1), m_tgt]),
                          np.concatenate([c.score[kept], np.full(len(missed), np.nan)]), None, None,
                          np.concatenate([c.src[kept], m_src]))


def _bucc_record(encoder: Encoder, data: BuccSplit, prf: PRF, settings: BuccSettings, rule: str, mined: MinedSplit,
                 k_used: int, optimistic: bool, outcomes: Outcomes | None = None) -> ResultRecord:
    sig = sign(encoder, "bucc2018", data.split, data.checksum, "bucc_f1", settings, threshold=rule,
               subset=data.subset or "all")
    extra = {"precision": 100 * prf.precision, "recall": 100 * prf.recall, "threshold": prf.threshold,
             "n_extracted": prf.n_extracted, "n_correct": prf.n_correct, "n_gold": prf.n_gold,
             "n_candidates": len(mined.cands), "dropped_by_filters": dict(mined.dropped), "k_used": k_used,
             "unit": "F1 %"}
    if optimistic:
        extra["optimistic"] = "threshold tuned on the gold of the split it is applied to"
    return ResultRecord("bucc_f1", 100 * prf.f1, prf.n_gold, data.src_lang, data.tgt_lang, sig,
                        errors=prf.n_extracted - prf.n_correct + prf.n_gold - prf.n_correct, extra=extra,
                        outcomes=outcomes)


BUCC_DUMP_FIELDS = ("status", "src_id", "tgt_id", "score", "src", "tgt")


def bucc_rows(report: BuccReport) -> list[dict]:
    """Extracted pairs (TP, FP) and missed gold pairs (FN) on the apply split; a missed pair's score
    is its candidate score when it was mined but fell below the threshold, else empty."""
    m = report.mined[report.apply_split]
    d = m.data
    keep = m.cands.score >= report.result.threshold
    rows = []
    for s, t, v, g, kept in zip(m.cands.src, m.cands.tgt, m.cands.score, m.is_gold, keep):
        if kept or g:
            rows.append({"status": ("TP" if g else "FP") if kept else "FN", "src_id": d.src_ids[s], "tgt_id": d.tgt_ids[t],
                         "score": round(float(v), 6), "src": d.src[s], "tgt": d.tgt[t]})
    found = {(r["src_id"], r["tgt_id"]) for r in rows if r["status"] in ("TP", "FN")}
    src_text, tgt_text = dict(zip(d.src_ids, d.src)), dict(zip(d.tgt_ids, d.tgt))
    for a, b in d.gold or ():
        if (a, b) not in found:
            rows.append({"status": "FN", "src_id": a, "tgt_id": b, "score": "", "src": src_text[a], "tgt": tgt_text[b]})
    return rows


@dataclass(frozen=True)
class BuccSource:
    """Which BUCC 2018 data: the pair, the split whose gold tunes the threshold, the split it is
    applied to, and a subset of lines (``head``, seeded ``sample``)."""

    pair: str = knob("zh-en", "language pair as in the file names, source first")
    tune: str = knob("sample", "split whose gold sets the threshold")
    apply: str | None = knob(None, "split the threshold is applied to (default: test when present, else --tune)")
    sample: str | None = knob(None, "score a subset: every gold-pair sentence + seeded random others, e.g. 1000x1500",
                              metavar="NSRCxNTGT")
    head: int | None = knob(None, "use only the first N lines of each side (quick looks)", type=int, metavar="N")
    data_dir: Any = knob(None, "data root (default: $XSIMPP_DATA_DIR, then the user data dir)", type=path)


def _subset(split: BuccSplit, head: int | None, sample: str | None, seed: int) -> BuccSplit:
    if head is not None:
        if not isinstance(head, int) or head < 1:
            raise BadInputError(f"--head must be a positive number of lines, got {head}")
        split = split.head(head)
    if sample:
        try:
            n_src, n_tgt = (int(v) for v in str(sample).lower().split("x"))
        except ValueError:
            raise BadInputError(f"--sample takes NSRCxNTGT, e.g. 1000x1500, not '{sample}'") from None
        split = split.sample(n_src, n_tgt, seed)
    return split


@dataclass
class BuccData:
    apply: BuccSplit
    tune: BuccSplit | None  # None: the threshold is a keep fraction


class BuccTask(Task):
    name = "bucc"
    description = "BUCC 2018 bitext mining precision / recall / F1 (LASER/XTREME or Keung et al. protocol)"
    metrics = {"bucc_f1": MetricInfo("F1 %", lower_is_better=False)}
    Source = BuccSource
    Settings = BuccSettings

    def load(self, source: BuccSource, settings: BuccSettings) -> BuccData:
        from ..datasets.bucc import Bucc2018

        ds = Bucc2018(source.data_dir)
        splits = ds.splits(source.pair)
        apply_name = source.apply or ("test" if "test" in splits else source.tune)
        apply = _subset(ds.load(source.pair, apply_name), source.head, source.sample, settings.seed)
        tune = None
        if settings.keep_fraction is None:
            tune = apply if source.tune == apply_name else _subset(ds.load(source.pair, source.tune), source.head,
                                                                   source.sample, settings.seed)
        return BuccData(apply, tune)

    def sides(self, data: BuccData, settings) -> list[tuple[str, list[str]]]:
        splits = [data.apply] + ([data.tune] if data.tune is not None and data.tune is not data.apply else [])
        return [side for sp in splits for side in ((sp.src_lang, list(dict.fromkeys(sp.src))),
                                                   (sp.tgt_lang, list(dict.fromkeys(sp.tgt))))]

    def evaluate(self, encoder: Encoder, data: BuccData, settings: BuccSettings, ctx) -> BuccReport:
        return evaluate_bucc(encoder, data.apply, data.tune, settings, cache=ctx.cache, progress=ctx.progress,
                             config=ctx.engine)

    def render(self, report: BuccReport) -> str:
        from tabulate import tabulate

        m = report.mined[report.apply_split]
        d = m.data
        p = report.params
        lines = [f"BUCC 2018 {report.pair} {report.apply_split}"
                 + (f" ({d.subset})" if d.subset else "")
                 + f": {len(d.src)} {d.src_lang} x {len(d.tgt)} {d.tgt_lang} sentences "
                 + f"({m.n_unique[0]} x {m.n_unique[1]} distinct), {m.n_gold} gold pairs; "
                 + f"protocol {p['protocol']}"
                 + (" (forward retrieval; the kept share counted before the filters)" if p["protocol"] == "keung" else "")
                 + f"; margin {p['margin']}, k={report.k_used}"
                 + ("; greedy one-to-one" if p.get("retrieval") == "max-1to1" else "")
                 + f"; filters: {p['filters']}"
                 + (f" (dropped {', '.join(f'{k} {v}' for k, v in m.dropped.items())} of {m.n_mined} candidates)"
                    if m.dropped else f" ({m.n_mined} candidates)")]
        r = report.result
        if report.method == "keep-fraction":
            how = "keep fraction (prior)"
        else:
            how = f"best F1 on {report.tune_split}" + (" (OPTIMISTIC: tuned on this split's gold)" if report.optimistic
                                                       else "")
        rows = [[how, f"{100 * r.precision:.2f}", f"{100 * r.recall:.2f}", f"{100 * r.f1:.2f}", f"{r.threshold:.6f}",
                 r.n_extracted, r.n_correct]]
        if report.cv is not None:
            c = report.cv.pooled
            rows.append([f"{report.cv.folds}-fold CV (seed {report.cv.seed}), pooled", f"{100 * c.precision:.2f}",
                         f"{100 * c.recall:.2f}", f"{100 * c.f1:.2f}", f"{report.cv.threshold_mean:.6f} (mean)",
                         c.n_extracted, c.n_correct])
        lines.append(tabulate(rows, headers=["threshold", "P %", "R %", "F1 %", "threshold value", "extracted",
                                             "correct"], tablefmt="psql", disable_numparse=True))
        if p["protocol"] == "keung" and "above_threshold_before_filters" in report.records[0].extra:
            lines.append(f"{report.records[0].extra['above_threshold_before_filters']} pairs above the first row's "
                         f"threshold before the filters, {r.n_extracted} after")
        if report.tuned is not None and not report.optimistic:
            t = report.tuned
            lines.append(f"on {report.tune_split} at its optimum: P {100 * t.precision:.2f}, R {100 * t.recall:.2f}, "
                         f"F1 {100 * t.f1:.2f}")
        if report.cv is not None:
            lines.append("fold thresholds: " + ", ".join(f"{v:.6f}" for v in report.cv.thresholds))
        return "\n".join(lines)
