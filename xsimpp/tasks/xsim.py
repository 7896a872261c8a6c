"""The xsim / xsim++ task (Artetxe & Schwenk 2019; Chen et al. 2023): bitexts (+ augmented English)
-> encoder (cached) -> margin kNN -> error-rate records, as LASER's xsim.py computes them.

No printing here; the CLI renders what this returns.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..cache import EmbeddingCache
from ..datasets.base import LASER_PUBLISHED, STYLES, AugmentedTargets, Bitext, augmented_style, load_augmented, text_checksum
from ..encoders.base import Encoder
from ..errors import BadInputError, MissingResourceError
from ..results import Outcomes, ResultRecord
from ..scoring import EngineConfig, XsimResult, micro_average, xsim
from ..scoring.pxsim import pxsim
from ..engine import DEFAULT_MARGIN, MARGINS, DeviceRows, hold_rows
from ..engine.knn import check_k
from ..scoring.xsim import MODES
from ..textio import path
from .base import (MAX_K, IntervalSettings, MetricInfo, Task, TaskReport, bitext_sides, check_margin_k, embedder_for,
                   knob, pair_scores_for, sign)
from .registry import DerivedMetric
from .retrieval import RetrievalSource, open_bitexts, select_lines
from .tables import errtype_table, xsim_table


# Protocols of `xsimpp eval`: LASER's (its xsim.py: ratio margin by default) and the xSIM++ paper's
# ("we report all results using the absolute margin similarity", with its own style of negatives).
PROTOCOLS = ("laser", "xsimpp-paper")
PAPER_PROTOCOL = {"margin": "absolute", "style": "paper"}


# P-xSIM's knobs change only p-xsim records, which sign them as they are used (``Rerank.view``: the
# auxiliary encoder's id, revision and fingerprint -- its options included -- alpha and rerank_k).
_SIGNED_BY_RERANK = "signed by the p-xsim records' view (Rerank.view); without --rerank it changes no number"


@dataclass(frozen=True)
class XsimSettings(IntervalSettings):
    """margin (ratio, distance, absolute), k neighbours for the margin averages, and the
    comparison mode (text: a duplicate of the gold sentence counts as correct, LASER's default);
    ``protocol`` presets them (xsimpp-paper: the absolute margin and paper-style negatives).
    With ``rerank`` (an encoder name or object; ``rerank_options`` for a name) the run is P-xSIM:
    each source's ``rerank_k`` margin candidates rescored by it and blended
    ``alpha * margin + (1 - alpha) * aux`` (``xsimpp.scoring.pxsim``)."""

    PRESETS = {"laser": {}, "xsimpp-paper": {"margin": PAPER_PROTOCOL["margin"]}}
    FIXED = {"xsimpp-paper": ("margin",)}

    margin: str = knob(DEFAULT_MARGIN, "margin scoring, as LASER's xsim.py", choices=MARGINS)
    k: int = knob(4, "neighbours for the margin averages", type=int, min=1, max=MAX_K)
    mode: str = knob("text", "error when the neighbour's text differs from the gold (text, LASER's) or its index "
                             "does (index)", choices=MODES)
    protocol: str = knob("laser", "laser: LASER's xsim.py, --margin as given; xsimpp-paper: the xSIM++ paper's "
                                  "absolute margin with paper-style negatives", choices=PROTOCOLS,
                         unsigned="what it sets is signed: the margin, and on xsim++ records the negatives and the "
                                  "protocol they and the margin make (protocol_of)")
    rerank: Any = knob(None, "P-xSIM: rescore each source's --pxsim-k margin candidates with this encoder (cosine, "
                             "or its pair scores) and blend alpha * margin + (1 - alpha) * aux (LASER's pxsim.py)",
                       metavar="ENCODER", unsigned=_SIGNED_BY_RERANK)
    rerank_options: dict | None = knob(None, "options of the --rerank encoder", cli=False, unsigned=_SIGNED_BY_RERANK)
    alpha: float = knob(0.5, "P-xSIM blend weight of the margin", type=float, unsigned=_SIGNED_BY_RERANK)
    rerank_k: int = knob(16, "P-xSIM: the K margin candidates of each source that --rerank rescores (LASER's 16)",
                         flag="--pxsim-k", metavar="K", type=int, min=1, max=MAX_K, unsigned=_SIGNED_BY_RERANK)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_margin_k(self.margin, self.k)
        if self.mode not in MODES:
            raise BadInputError(f"mode must be 'text' or 'index', got '{self.mode}'")
        if self.protocol not in PROTOCOLS:
            raise BadInputError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")
        if self.rerank is None and self.rerank_options:
            raise BadInputError("--rerank-opt sets an option of the --rerank encoder; give --rerank too")
        if not isinstance(self.alpha, (int, float)) or not 0.0 <= self.alpha <= 1.0:
            raise BadInputError(f"--alpha must be between 0 and 1, not {self.alpha}")
        if not isinstance(self.rerank_k, int) or isinstance(self.rerank_k, bool) or self.rerank_k < 1:
            raise BadInputError(f"--pxsim-k (rerank_k) must be at least 1, not {self.rerank_k}")
        if self.rerank_k > MAX_K:  # signed as given, so a K past any margin's neighbours is refused, not capped
            raise BadInputError(f"--pxsim-k (rerank_k) must be at most {MAX_K}, not {self.rerank_k}")

    def signed_values(self) -> dict:
        return {"k": 1 if self.margin == "absolute" else self.k}  # the absolute margin has no neighbours


@dataclass(frozen=True)
class BitextSource(RetrievalSource):
    """xsim's bitexts and, for xsim++, the augmented targets."""

    augmented: Any = knob(None, "xsim++: folder with <target>_augmented.<split> + errtype JSON, or 'auto'",
                          metavar="DIR|auto", type=path)
    style: str | None = knob(None, "which build of `xsimpp augment` --augmented uses: strict or paper negatives; "
                                   "paper also takes LASER's published ones (`xsimpp download laser_xsimpp`) "
                                   "(default: strict where both exist; paper under --protocol xsimpp-paper)",
                             choices=STYLES)
    allow_errtypes: Sequence[str] = knob((), "accept this error type name in the errtype JSON besides causality, "
                                             "entity, number (repeatable)", flag="--allow-errtype", action="append",
                                         metavar="NAME")


@dataclass
class XsimData:
    bitexts: list[Bitext]
    augmented: AugmentedTargets | None
    nway: bool = False


@dataclass
class PairResult:
    src_lang: str
    tgt_lang: str
    xsim: XsimResult
    xsimpp: XsimResult | None = None


@dataclass
class EvalReport(TaskReport):
    dataset: str
    split: str
    encoder_id: str
    pairs: list[PairResult] = field(default_factory=list)
    nway: bool = False  # every ordered pair of the languages (rendered as a matrix)
    categories: tuple[str, ...] | None = None  # the xsim++ negatives' error types (None: no xsim++)

    def average(self, which: str = "xsim") -> XsimResult:
        res = [p.xsim if which == "xsim" else p.xsimpp for p in self.pairs]
        return micro_average([r for r in res if r is not None])


# Negatives that stand for the paper's: its own files as LASER published them, and those without a
# sidecar (LASER's files copied by hand) when paper-style ones are asked for.
PAPER_NEGATIVES = (PAPER_PROTOCOL["style"], LASER_PUBLISHED)


def protocol_of(margin: str, style: str) -> str:
    """The protocol a (margin, negatives style) pair is: the paper's, or LASER's scoring."""
    return "xsimpp-paper" if margin == PAPER_PROTOCOL["margin"] and style in PAPER_NEGATIVES else "laser"


def _style_dirs(d: Path, style: str | None) -> list[Path]:
    """Where one folder may hold negatives of `style`: `<d>/<style>/` (what `xsimpp augment` writes),
    then `<d>` itself (LASER's layout: its own published files are the paper's negatives). No style
    asked: the default style first, then the folder itself, then the paper's."""
    return [d / style, d] if style else [d / STYLES[0], d, d / STYLES[1]]


def _style_ok(found: str, wanted: str | None) -> bool:
    return wanted is None or found == wanted or (wanted == "paper" and found in (*PAPER_NEGATIVES, "unrecorded"))


def find_augmented(spec: str | Path | None, dataset, lang: str, allow_errtypes=(),
                   style: str | None = None) -> AugmentedTargets | None:
    """``None`` -> no xsim++; ``"auto"`` -> the dataset's known folders; else a folder path.

    ``style`` ("strict" or "paper"; None: any) picks which build of `xsimpp augment` to use: each
    folder is tried as ``<folder>/<style>/`` and then itself, whose files count when their sidecar
    says that style (LASER's published negatives, marked by `xsimpp download laser_xsimpp` or without
    a sidecar, count as the paper's).
    The style found is in every xsim++ record's signature (``negatives``)."""
    if spec is None:
        return None
    if style is not None and style not in STYLES:
        raise BadInputError(f"unknown augmentation style {style!r}; choose strict or paper")
    name = f"{lang}_augmented.{dataset.split}"
    if str(spec) == "auto":
        tried = dataset.augmented_dirs()
        stale = None  # an older generator's build: passed over (its numbers are not this version's)
        for base in tried:
            for d in _style_dirs(base, style):
                if (d / name).is_file() and _style_ok(augmented_style(d, lang, dataset.split), style):
                    aug = load_augmented(d, lang, dataset.split, allow_errtypes)
                    if not aug.stale():
                        return aug
                    stale = stale or aug
        where = ", ".join(str(d) for d in tried) or "(no default location for this dataset)"
        build = (f" --lang {lang}" if lang != dataset.default_target else "") + (f" --style {style}" if style else "")
        if stale is not None:
            raise MissingResourceError(
                f"The augmented {lang} data in {stale.directory} was built by generator {stale.generator} of an "
                f"earlier xsimpp, not this version's {stale.current_generator}; "
                f"rebuild it with `xsimpp augment {dataset.name} --split {dataset.split}{build}` (or pass it as "
                f"--augmented DIR to score the old negatives, signed with their generator)")
        if lang != dataset.default_target and style == PAPER_PROTOCOL["style"]:
            raise MissingResourceError(
                f"No paper-style augmented {lang} data for {dataset.name} {dataset.split}: the paper's method is "
                f"English-only; score strict negatives (drop --style paper / --protocol xsimpp-paper), built with "
                f"`xsimpp augment {dataset.name} --split {dataset.split} --lang {lang}`")
        which = f"{style}-style " if style else ""
        laser = (f", fetch LASER's published ones with `xsimpp download laser_xsimpp --split {dataset.split}`"
                 if dataset.name == "flores200" and lang == "eng_Latn" and style != "strict" else "")
        raise MissingResourceError(
            f"No {which}augmented {lang} data for {dataset.name} {dataset.split} (looked in {where}); "
            f"build it with `xsimpp augment {dataset.name} --split {dataset.split}{build}`{laser} or pass --augmented DIR"
        )
    d = next((c for c in _style_dirs(Path(spec), style) if (c / name).is_file()), Path(spec))
    aug = load_augmented(d, lang, dataset.split, allow_errtypes)
    if not _style_ok(aug.style, style):
        raise BadInputError(f"the augmented data in {d} is {aug.style}-style, not {style}; "
                            f"build {style}-style negatives with `xsimpp augment ... --style {style}`")
    return aug


def _record(metric: str, res: XsimResult, bt: Bitext, encoder: Encoder, settings: XsimSettings,
            checksum: str, **view) -> ResultRecord:
    sig = sign(encoder, bt.dataset, bt.split, checksum, metric, settings, **view)
    return ResultRecord(metric, res.error_rate, res.n, bt.src_lang, bt.tgt_lang, sig, errors=res.errors,
                        error_types=dict(res.error_types), outcomes=xsim_outcomes(res))


def xsim_outcomes(res: XsimResult) -> Outcomes:
    """A source's outcome: its chosen target, right or wrong (in the settings' mode), the chosen and
    gold scores and, for xsim++, the error type of a wrong choice."""
    return Outcomes.build("error_rate", res.correct, res.nn, None, res.chosen_score, res.gold_score,
                          res.error_type if res.error_types else None)


@dataclass
class Rerank:
    """P-xSIM (``xsimpp.scoring.pxsim``): the ``k`` nearest targets by the main encoder's margin
    (its averages over the settings' k neighbours) rescored by ``encoder`` (cosine of its vectors,
    or its pair scores) and blended ``alpha * margin + (1 - alpha) * aux``. LASER's pxsim.py uses one
    k (16) for both: ``--k 16 --pxsim-k 16`` reproduces it."""

    encoder: Encoder
    alpha: float = 0.5
    k: int = 16
    cache: EmbeddingCache | None = None

    def view(self) -> dict:
        """What the rerank adds to a record's signature: the auxiliary encoder, alpha, candidates."""
        e = self.encoder
        return {"rerank": f"{e.id}@{e.revision}+cfg.{e.fingerprint[:8]}", "alpha": self.alpha, "rerank_k": self.k}


def evaluate_bitexts(
    encoder: Encoder,
    bitexts: Sequence[Bitext],
    settings: XsimSettings | None = None,
    *,
    augmented: AugmentedTargets | None = None,
    cache: EmbeddingCache | None = None,
    progress: Callable[[int], None] | None = None,
    config: EngineConfig | None = None,
    rerank: Rerank | None = None,
) -> EvalReport:
    """xsim for every bitext; xsim++ too where ``augmented`` matches the bitext's target language.
    With ``rerank`` the records are P-xSIM ("p-xsim", "p-xsim++") instead."""
    st = settings or XsimSettings()
    knobs = dict(margin=st.margin, mode=st.mode, config=config)
    first = bitexts[0]
    report = EvalReport(first.dataset, first.split, encoder.id,
                        categories=augmented.categories if augmented is not None else None)
    embed = embedder_for(encoder, cache, progress)
    pairs = pair_scores_for(encoder, cache, progress)
    aux_embed = aux_pairs = None
    if rerank is not None:
        aux_embed = embedder_for(rerank.encoder, rerank.cache, progress)
        aux_pairs = pair_scores_for(rerank.encoder, rerank.cache, progress)
    prefix = "p-" if rerank is not None else ""
    view = rerank.view() if rerank is not None else {}

    # targets held on the engine's device when it selects there, the last two (xsim's, xsim++'s)
    holding = rerank is None and config is not None and config.selects_on_device()
    held: dict[tuple, DeviceRows] = {}

    def vectors(emb, bt: Bitext, aug: AugmentedTargets | None) -> dict:
        key = (bt.tgt_lang, text_checksum(bt.tgt), aug.checksum if aug is not None else None) if holding else None
        y = held.get(key) if holding else None
        if y is None:
            y = emb(bt.tgt, bt.tgt_lang)
            if aug is not None:  # the negatives on their own: the gold targets are already encoded
                y = np.concatenate([y, emb(aug.lines, bt.tgt_lang)])
            if holding:
                y = held[key] = hold_rows(y, config)
                while len(held) > 2:
                    held.pop(next(iter(held)))
        return {"x": emb(bt.src, bt.src_lang), "y": y}

    def score(bt: Bitext, aug: AugmentedTargets | None = None) -> XsimResult:
        more = list(aug.lines) if aug is not None else []
        targets = list(bt.tgt) + more
        errtypes = aug.errtypes if aug is not None else None
        if embed is not None:
            main = vectors(embed, bt, aug)
        else:
            main = dict(similarity=pairs(bt.src, bt.tgt, bt.src_lang, bt.tgt_lang, more))
        if rerank is None:
            return xsim(**main, k=st.k, tgt_text=targets, errtypes=errtypes, **knobs)
        if aux_embed is not None:
            aux_vecs = vectors(aux_embed, bt, aug)
            aux = dict(x_aux=aux_vecs["x"], y_aux=aux_vecs["y"])
        else:
            aux = dict(aux_similarity=aux_pairs(bt.src, bt.tgt, bt.src_lang, bt.tgt_lang, more))
        return pxsim(**main, **aux, alpha=rerank.alpha, k=min(rerank.k, len(targets)), k_margin=st.k,
                     tgt_text=targets, errtypes=errtypes, **knobs)

    for bt in bitexts:
        aug = augmented if augmented is not None and augmented.lang == bt.tgt_lang else None
        res = score(bt)
        pair = PairResult(bt.src_lang, bt.tgt_lang, res)
        report.records.append(_record(prefix + "xsim", res, bt, encoder, st, bt.checksum, **view))
        if aug is not None:
            respp = score(bt, aug)
            pair.xsimpp = respp
            checksum = hashlib.sha256((bt.checksum + aug.checksum).encode()).hexdigest()
            # Which negatives and which protocol: an xsim++ number means nothing without them.
            report.records.append(_record(prefix + "xsim++", respp, bt, encoder, st, checksum, negatives=aug.style,
                                          protocol=protocol_of(st.margin, aug.style), **aug.signature_view(), **view))
        report.pairs.append(pair)
    report.count_encoding(embed or pairs)
    if rerank is not None:
        aux_count = aux_embed or aux_pairs
        report.n_encoded += aux_count.n_encoded
        report.n_cached += aux_count.n_requested - aux_count.n_encoded
    return report


def encoding_sides(bitexts: Sequence[Bitext], augmented: AugmentedTargets | None) -> list[tuple[str, list[str]]]:
    """The (language, sentences) sides ``evaluate_bitexts`` encodes, in the order it asks for them."""
    sides = []
    for bt in bitexts:
        sides += bitext_sides([bt])
        if augmented is not None and augmented.lang == bt.tgt_lang:
            sides.append((bt.tgt_lang, augmented.lines))
    return sides


def count_sentences(bitexts: Sequence[Bitext], augmented: AugmentedTargets | None) -> int:
    """Sentences the run will look up or encode: each distinct side once (the progress total)."""
    sides = {}
    for bt in bitexts:
        sides[(bt.src_lang, text_checksum(bt.src))] = len(bt.src)
        sides[(bt.tgt_lang, text_checksum(bt.tgt))] = len(bt.tgt)
    total = sum(sides.values())
    if augmented is not None and any(bt.tgt_lang == augmented.lang for bt in bitexts):
        total += len(augmented.lines)
    return total


# xsim++'s error types (``misaligned``: a wrong choice of another sentence, not of a negative).
ERROR_TYPES = ("causality", "entity", "number", "misaligned")


def all_error_type_subsets(types: Sequence[str] = ERROR_TYPES) -> list[tuple[str, ...]]:
    """Every non-empty combination of error types (the paper's Table 4 ablation, and more)."""
    return [c for r in range(1, len(types) + 1) for c in itertools.combinations(types, r)]


def restricted_name(types: Sequence[str]) -> str:
    """The metric of xsim++ counting only errors of ``types`` (``xsim++[entity+number]``)."""
    return "xsim++[" + "+".join(types) + "]"


def restricted_rate(record: ResultRecord, types: Sequence[str]) -> float:
    """xsim++ counting only the errors of ``types`` in an xsim++ record, in %."""
    counts = {str(k).lower(): v for k, v in record.error_types.items()}
    return 100.0 * sum(counts.get(t, 0) for t in types) / record.n


# xsim++ over each set of error types (Chen et al. 2023, Table 4): read off an xsim++ record's
# error-type counts, so a set costs no second run.
RESTRICTED = {restricted_name(types): DerivedMetric(
    "error %", True, f"xsim++ counting only {', '.join(types)} errors", base="xsim++",
    read=functools.partial(restricted_rate, types=types)) for types in all_error_type_subsets()}


class XsimTask(Task):
    name = "xsim"
    description = "xsim / xsim++ error rate of margin-based retrieval (LASER's xsim.py); P-xSIM with a rerank"
    metrics = {**{m: MetricInfo("error %", lower_is_better=True) for m in ("xsim", "xsim++", "p-xsim", "p-xsim++")},
               **RESTRICTED}
    Source = BitextSource
    Settings = XsimSettings

    def load(self, source: BitextSource, settings: XsimSettings) -> XsimData:
        style = source.style
        if settings.protocol == "xsimpp-paper":
            if style not in (None, PAPER_PROTOCOL["style"]):
                raise BadInputError("--protocol xsimpp-paper uses paper-style negatives; drop --style strict "
                                    "(or score strict negatives with --margin absolute)")
            style = PAPER_PROTOCOL["style"]
        ds, bitexts = open_bitexts(source)
        aug = (find_augmented(source.augmented, ds, bitexts[0].tgt_lang, source.allow_errtypes, style)
               if source.augmented else None)
        limited = select_lines(bitexts, source.limit, source.sample, source.sample_seed)
        if aug is not None and limited is not bitexts:
            kept = {t.strip() for bt in limited if bt.tgt_lang == aug.lang for t in bt.tgt}
            lines = [ln for ln in aug.lines if aug.errtypes[ln.strip()]["src"].strip() in kept]
            aug = dataclasses.replace(aug, split=limited[0].split, lines=lines,
                                      errtypes={ln.strip(): aug.errtypes[ln.strip()] for ln in lines})
        for bt in limited:
            if aug is not None and bt.tgt_lang == aug.lang:
                aug.check_sources(bt.tgt, f"the {bt.tgt_lang} target text")
            if settings.margin != "absolute":  # the margin's k neighbours both ways, refused before any encoding
                check_k(settings.k, len(bt.tgt), "target set")
                check_k(settings.k, len(bt.src), "source set")
        return XsimData(limited, aug, bool(source.nway))

    def sides(self, data: XsimData, settings: XsimSettings) -> list[tuple[str, list[str]]]:
        return encoding_sides(data.bitexts, data.augmented)

    def total(self, data: XsimData, settings: XsimSettings) -> int:
        return count_sentences(data.bitexts, data.augmented) * (2 if settings.rerank is not None else 1)

    def evaluate(self, encoder: Encoder, data: XsimData, settings: XsimSettings, ctx) -> EvalReport:
        aux = None
        if settings.rerank is not None:
            if ctx.run.ray:
                raise BadInputError("--ray does not distribute P-xSIM's auxiliary encoder yet; drop --ray or --rerank")
            aux_enc, aux_cache = ctx.encoder(settings.rerank, settings.rerank_options)
            aux = Rerank(aux_enc, alpha=settings.alpha, k=settings.rerank_k, cache=aux_cache)
        report = evaluate_bitexts(encoder, data.bitexts, settings, augmented=data.augmented, cache=ctx.cache,
                                  progress=ctx.progress, config=ctx.engine, rerank=aux)
        report.nway = data.nway
        return report

    def render(self, report: EvalReport) -> str:
        if report.nway:
            return render_nway(report)
        with_pp = any(p.xsimpp is not None for p in report.pairs)
        rows = [(f"{p.src_lang}-{p.tgt_lang}", p.xsim.error_rate, p.xsim.n,
                 p.xsimpp.error_rate if p.xsimpp is not None else None) for p in report.pairs]
        avg = report.average("xsim")
        avg_pp = report.average("xsim++").error_rate if with_pp else None
        label = report.records[0].metric  # xsim, or p-xsim with --rerank
        out = xsim_table(report.dataset, rows, (avg.error_rate, avg.n, avg_pp), with_pp, label)
        if with_pp:
            per_pair = {f"{p.src_lang}-{p.tgt_lang}": p.xsimpp.error_types for p in report.pairs if p.xsimpp is not None}
            out += f"\n\nAbsolute error under augmented transformations for: {report.pairs[0].tgt_lang}\n"
            out += errtype_table(per_pair, report.categories)
            pp = next(r.signature.params for r in report.records if r.metric.endswith("xsim++"))
            out += f"\nxsim++ negatives: {pp['negatives']}; protocol: {pp['protocol']} (margin {pp['margin']})"
            if "negatives_generator" in pp:
                out += (f"\n{report.pairs[0].tgt_lang} negatives: {pp['negatives_categories'].replace('+', ', ')} "
                        f"(generator {pp['negatives_generator']}"
                        + (f", causality rules {pp['negatives_causality_rules']}" if "negatives_causality_rules" in pp
                           else "") + "); '-': a category this target has no negatives for")
        return out


def render_nway(report: EvalReport) -> str:
    from tabulate import tabulate

    langs = list(dict.fromkeys([p.src_lang for p in report.pairs] + [p.tgt_lang for p in report.pairs]))
    cell = {(p.src_lang, p.tgt_lang): p.xsim.error_rate for p in report.pairs}
    body = [[s] + [("-" if s == t else f"{cell[(s, t)]:.2f}") for t in langs] for s in langs]
    col_avg = [sum(cell[(s, t)] for s in langs if s != t) / (len(langs) - 1) for t in langs]
    body.append(["avg"] + [f"{v:.2f}" for v in col_avg])
    table = tabulate(body, headers=["src \\ tgt"] + langs, tablefmt="grid", disable_numparse=True)
    return f"{table}\nGlobal average: {sum(col_avg) / len(col_avg):.2f}"
