"""Mining F1 on general text (`xsimpp mining-f1`), the ground truth `xsimpp study` ranks proxies by:
a language's gold pairs (FLORES-200 devtest and NTREX-128, X -> target) hidden among real
target-language distractors (``xsimpp.datasets.pool``), mined with the margin kNN both ways (BUCC's
candidates), scored as F1 / precision / recall -- mining without a cluster.

Per language:
- ``mining_f1``: every gold pair mined against the gold target lines plus the pool, F1 with the
  threshold cross-validated over source sentences (``scoring.bucc.cross_validate``; precision,
  recall and the mean threshold beside it);
- ``mining_f1_ntrex`` / ``mining_f1_flores``: the same candidates restricted to the NTREX (FLORES)
  sources and gold; NTREX sentences are ones no FLORES-based proxy saw;
- ``mining_p_fixed`` / ``mining_r_fixed`` / ``mining_f1_fixed``: at a threshold fixed in advance
  (LASER's usual ratio-margin cut, 1.06), as a miner who cannot tune on gold runs it.

``unpaired_sources = N`` adds each language's first N FLORES *dev* source lines, whose translations
are nowhere among the targets (every FLORES dev line of the target is kept out of the pool), as a
miner's sources mostly have no translation on the other side: every pair they form is a false
positive in every figure above that counts all sources (the NTREX-only and FLORES-only ones keep
their own sources).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..datasets import pool_sources
from ..datasets.base import Bitext, text_checksum
from ..datasets.pool import (ENGLISH, NEAR_DUPLICATE_KINDS, Distractors, add_near_duplicates, build_distractors,
                             check_sources, normalise)
from ..encoders.base import Encoder
from ..engine import DEFAULT_MARGIN, MARGINS
from ..errors import BadInputError
from ..results import ResultRecord
from ..scoring import bucc as B
from ..textio import MAX_SEED, path, seed
from .base import (MAX_FOLDS, MAX_K, MetricInfo, Settings, Task, TaskReport, check_margin_k, embedder_for, knob,
                   pair_scores_for, sign)
from .retrieval import lang_list, limit_lines

# The metrics the study ranks proxies against (each its own ranking), in table order.
GROUND_TRUTHS = ("mining_f1", "mining_f1_ntrex", "mining_f1_tatoeba", "mining_p_fixed", "mining_f1_fixed")
# The FLORES-200 split the FLORES gold comes from: devtest (the proxies' own split), or dev lines a
# checkpoint held out of training (``xsimpp train distill --hold-out-dev``), apart from every proxy.
FLORES_GOLD_SPLITS = ("devtest", "dev")
# How the NTREX gold lines are taken: the first ones, or a sample drawn with the seed (the same line
# numbers in every language: NTREX-128 is multi-way), so that seeds resample the test side too.
NTREX_SAMPLES = ("first", "seeded")


def head(bt: Bitext, n: int) -> Bitext:
    """The first ``n`` lines (0: all), as ``--limit`` takes them (the split recorded as ``devtest[:500]``)."""
    return limit_lines([bt], n or None)[0]


def _count(value: Any, what: str) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise BadInputError(f"{what} must be 0 or a positive number of lines, got {value!r}")


# The sizes the source knobs are bounded by: FLORES-200 devtest and dev, NTREX-128; near-duplicates
# per gold line up to 100 (500 gold lines x 100 = the default pool's 50 000 lines); distractors up
# to 10 million lines (their e5-small vectors alone take 15 GB).
FLORES_DEVTEST_LINES, FLORES_DEV_LINES, NTREX_LINES = 1012, 997, 1997
MAX_NEAR_DUPLICATES = 100
MAX_DISTRACTORS = 10_000_000

# The pool's whole sources by default, and without FLORES dev when --unpaired-sources takes its source
# lines (their English translations would otherwise be distractors that are in fact the answers).
WHOLE_SOURCES = ("flores200-dev", "ntrex128", "oldi-seed")
WHOLE_SOURCES_UNPAIRED = tuple(s for s in WHOLE_SOURCES if s != "flores200-dev")


@dataclass(frozen=True)
class MiningSource:
    """Which gold, which sources without a translation, which pool."""

    langs: Any = knob(None, "comma-separated source languages (kea,fur or kea_Latn,...)")
    target: str = knob(ENGLISH, "the language every pair translates into, and the pool's (a FLORES-200 code)")
    flores_lines: int = knob(500, "FLORES-200 devtest gold lines per language (0 = all 1012)", type=int, min=0,
                             max=FLORES_DEVTEST_LINES)
    flores_gold_offset: int = knob(0, "the FLORES-200 line the gold starts at (0: the first; the study "
                                   "sets it to flores_lines to keep the gold apart from the lines its proxies score)",
                                   type=int, min=0, max=FLORES_DEVTEST_LINES - 1)
    flores_gold_split: str = knob("devtest", "the FLORES-200 split of the FLORES gold: devtest, or dev (lines from "
                                  "--flores-gold-offset, past the unpaired sources: lines a checkpoint trained with "
                                  "--hold-out-dev never saw, apart from every devtest proxy)",
                                  choices=FLORES_GOLD_SPLITS)
    ntrex_lines: int = knob(500, "NTREX-128 gold lines per language, where NTREX has it (0 = all 1997)", type=int,
                            min=0, max=NTREX_LINES)
    ntrex_sample: str = knob("first", "which NTREX-128 lines: the first --ntrex-lines, or a seeded sample of them "
                             "(the same line numbers in every language)", choices=NTREX_SAMPLES)
    tatoeba_gold: bool = knob(False, "add every Tatoeba v1 pair of the languages that have one as a third gold set "
                              "(`mining_f1_tatoeba`: short everyday sentences, outside FLORES and NTREX)")
    unpaired_sources: int = knob(0, "FLORES-200 dev source lines per language with no translation among the targets",
                                 type=int, min=0, max=FLORES_DEV_LINES)
    whole_sources: tuple[str, ...] | None = knob(None,
                                          f"distractor sources taken whole, in order ({', '.join(pool_sources())}) "
                                          f"(default: {','.join(WHOLE_SOURCES)}; with --unpaired-sources "
                                          f"{','.join(WHOLE_SOURCES_UNPAIRED)})",
                                          type=lambda s: tuple(x for x in s.split(",") if x), metavar="SOURCES")
    fill_sources: tuple[str, ...] = knob(("tatoeba", "tatoeba-challenge"),
                                         "distractor sources sampled (seeded) up to --distractors",
                                         type=lambda s: tuple(x for x in s.split(",") if x), metavar="SOURCES")
    near_duplicates: int = knob(0, "near-duplicates of every gold target line added to the pool (0 = none)", type=int,
                                min=0, max=MAX_NEAR_DUPLICATES)
    near_duplicate_kind: str = knob("deletion", "deletion: the gold line with a run of its words deleted (a partial "
                                    "translation); natural: the distractor sources' lines closest by chrF",
                                    choices=NEAR_DUPLICATE_KINDS)
    data_dir: Any = knob(None, "data root (default: $XSIMPP_DATA_DIR, then the user data dir)", type=path)

    def __post_init__(self) -> None:
        if self.near_duplicate_kind not in NEAR_DUPLICATE_KINDS:
            raise BadInputError(f"near-duplicate kind must be one of {', '.join(NEAR_DUPLICATE_KINDS)}, not "
                                f"{self.near_duplicate_kind!r}")
        for name in ("flores_lines", "flores_gold_offset", "ntrex_lines", "unpaired_sources", "near_duplicates"):
            _count(getattr(self, name), f"--{name.replace('_', '-')}")
        for name, choices in (("flores_gold_split", FLORES_GOLD_SPLITS), ("ntrex_sample", NTREX_SAMPLES)):
            if getattr(self, name) not in choices:
                raise BadInputError(f"--{name.replace('_', '-')} must be one of {', '.join(choices)}, not "
                                    f"{getattr(self, name)!r}")
        if self.flores_gold_split == "dev":
            check_dev_gold(self.flores_lines, self.flores_gold_offset, self.unpaired_sources)
        dev_used = self.unpaired_sources or self.flores_gold_split == "dev"  # FLORES dev lines are sources
        if self.whole_sources is None:  # the default pool, less FLORES dev when its lines are sources
            object.__setattr__(self, "whole_sources", WHOLE_SOURCES_UNPAIRED if dev_used else WHOLE_SOURCES)
        object.__setattr__(self, "whole_sources", tuple(self.whole_sources))
        object.__setattr__(self, "fill_sources", tuple(self.fill_sources))
        named = self.whole_sources + self.fill_sources
        check_sources(named, "--whole-sources/--fill-sources")
        # a source named twice (or both whole and sampled) would sign a pool that no flag spelling means
        twice = sorted({s for s in named if named.count(s) > 1})
        if twice:
            raise BadInputError(f"--whole-sources/--fill-sources: distractor source '{twice[0]}' is named twice; "
                                "name each source once, in one of the two lists")
        for flag, sources in (("--whole-sources", self.whole_sources), ("--fill-sources", self.fill_sources)):
            if dev_used and "flores200-dev" in sources:
                kept = ",".join(s for s in sources if s != "flores200-dev")
                what = "unpaired sources" if self.unpaired_sources else "the FLORES gold"
                raise BadInputError(f"{what} are FLORES dev lines, so 'flores200-dev' cannot also be a "
                                    f"distractor source (it holds their translations); drop it: {flag} '{kept}'")


@dataclass(frozen=True)
class MiningSettings(Settings):
    """How the pool is mined and the threshold set (every knob signs every record)."""

    margin: str = knob(DEFAULT_MARGIN, "margin scoring of the candidates, as LASER", choices=MARGINS)
    k: int = knob(4, "neighbours for the margin", type=int, min=1, max=MAX_K)
    folds: int = knob(5, "cross-validation folds over the source sentences", type=int, min=2, max=MAX_FOLDS)
    seed: int = knob(0, "seed of the folds and of the pool's sample", type=seed, min=0, max=MAX_SEED)
    fixed_threshold: float = knob(1.06, "the threshold fixed in advance (LASER's usual ratio-margin cut)", type=float)
    distractors: int = knob(50000, "distractor lines in the pool", type=int, min=1, max=MAX_DISTRACTORS)

    def __post_init__(self) -> None:
        check_margin_k(self.margin, self.k)
        if self.margin == "absolute" and self.k != MiningSettings.k:
            # the records sign k as given (as they always have), so a k that changes nothing is refused
            raise BadInputError(f"--k {self.k} has no effect under the absolute margin (plain cosine, no "
                                "neighbours); leave --k out or choose --margin ratio or distance")
        if not isinstance(self.folds, (int, np.integer)) or isinstance(self.folds, bool) or self.folds < 2:
            raise BadInputError(f"folds must be at least 2, got {self.folds!r}")
        if not isinstance(self.distractors, (int, np.integer)) or isinstance(self.distractors, bool) \
                or self.distractors < 1:
            raise BadInputError(f"distractors must be a positive number of lines, got {self.distractors!r}")
        if not isinstance(self.fixed_threshold, (int, float)) or not np.isfinite(self.fixed_threshold):
            raise BadInputError(f"the fixed threshold must be a finite number, got {self.fixed_threshold!r}")

    def signed_values(self) -> dict:
        # Gold pairs are told apart by text (a line repeated is one sentence), as xsim's text mode.
        return {"mode": "text"}


def check_dev_gold(lines: int, offset: int, unpaired: int) -> None:
    """FLORES dev gold lies past the unpaired sources (they are dev lines too) and inside dev."""
    if offset < unpaired:
        raise BadInputError(f"FLORES dev gold from line {offset} would share lines with the first {unpaired} dev lines, "
                            f"the unpaired sources; start it at line {unpaired} or later (--flores-gold-offset)")
    end = offset + (lines or FLORES_DEV_LINES - offset)
    if not lines and offset >= FLORES_DEV_LINES or end > FLORES_DEV_LINES:
        raise BadInputError(f"FLORES-200 dev has {FLORES_DEV_LINES} lines, so dev gold lines {offset} to {end} run past "
                            "its end; lower the offset or the number of lines")


@dataclass
class MiningLanguage:
    lang: str  # FLORES-200 code
    flores: Bitext  # devtest (or dev) [offset:offset + flores_lines] -> the target
    ntrex: Bitext | None
    unpaired: list[str] = field(default_factory=list)  # FLORES dev sources without a translation in the pool
    tatoeba_gold: Bitext | None = None  # Tatoeba v1 pairs, a gold set outside FLORES and NTREX

    @property
    def gold_sources(self) -> list[tuple[str, Bitext]]:
        return ([("flores", self.flores)] + ([("ntrex", self.ntrex)] if self.ntrex is not None else [])
                + ([("tatoeba", self.tatoeba_gold)] if self.tatoeba_gold is not None else []))


@dataclass
class MiningData:
    """What the task mines; ``dataset``/``split``/``checksum`` sign its records (a study that
    builds the data itself names it ``study:NAME`` with the checksum of all it scores)."""

    languages: list[MiningLanguage]
    distractors: Distractors
    target: str = ENGLISH
    dataset: str = "mining"
    split: str = "gold+distractors"
    checksum: str = ""
    notes: list[str] = field(default_factory=list)
    source_view: dict[str, Any] = field(default_factory=dict)  # source_view of the source: signed when set

    def __post_init__(self) -> None:
        if not self.checksum:
            h = hashlib.sha256()
            for ld in self.languages:
                for _, bt in ld.gold_sources:
                    h.update(bt.checksum.encode())
                if ld.unpaired:
                    h.update(text_checksum(ld.unpaired).encode())
            h.update(self.distractors.checksum.encode())
            h.update(f"target:{self.target}".encode())
            self.checksum = h.hexdigest()[:12]


def flores_window(bt: Bitext, offset: int, n: int) -> Bitext:
    """Lines ``offset`` to ``offset + n`` of a FLORES bitext (n 0: to the end), the split named
    ``devtest[300:600]`` as ``head`` names ``devtest[:300]``; refused when it runs past the end."""
    if not offset:
        return head(bt, n)
    end = offset + n if n else len(bt)
    if end > len(bt):
        raise BadInputError(f"{bt.dataset} {bt.split} has {len(bt)} lines, so gold lines {offset} to {end} (offset "
                            f"{offset}, {n} lines) run past its end; lower the offset or the number of lines")
    return dataclasses.replace(bt, split=f"{bt.split}[{offset}:{end}]", src=bt.src[offset:end], tgt=bt.tgt[offset:end])


def ntrex_sample_lines(n_lines: int, n: int, seed: int) -> list[int]:
    """The NTREX line numbers a seeded sample takes (sorted; all of them when ``n`` is 0 or too many)."""
    if not n or n >= n_lines:
        return list(range(n_lines))
    return sorted(int(i) for i in np.random.default_rng(seed).choice(n_lines, size=n, replace=False))


def sample_lines(bt: Bitext, lines: list[int], seed: int) -> Bitext:
    """Those lines of a bitext, the sample named in its split (``test[seeded 300 of 1997, seed 1]``)."""
    if len(lines) == len(bt):
        return bt
    return dataclasses.replace(bt, split=f"{bt.split}[seeded {len(lines)} of {len(bt)}, seed {seed}]",
                               src=[bt.src[i] for i in lines], tgt=[bt.tgt[i] for i in lines])


def gold_languages(codes: Sequence[str], target: str, flores_lines: int, ntrex_lines: int, unpaired_sources: int,
                   data_dir=None, flores_offset: int = 0, *, flores_split: str = "devtest", ntrex_sample: str = "first",
                   seed: int = 0, tatoeba_gold: bool = False) -> tuple[list[MiningLanguage], list[str], set[str]]:
    """Each language's gold (FLORES ``flores_split`` from line ``flores_offset``, NTREX where it has
    both sides, the first lines or a seeded sample; Tatoeba v1 where asked and the language has it)
    and unpaired sources, with notes on what is missing, and the target lines no distractor may be
    (normalised)."""
    from ..datasets import Flores200, TatoebaV1
    from ..datasets.languages import resolve_language
    from ..datasets.ntrex import Ntrex128

    flores = Flores200("devtest", data_dir)
    dev = Flores200("dev", data_dir) if unpaired_sources or flores_split == "dev" else None
    gold_split = dev if flores_split == "dev" else flores
    ntrex = Ntrex128("test", data_dir)
    ntrex_langs = set(ntrex.languages()) if ntrex.is_available() else set()
    notes = []
    if not ntrex_langs:
        notes.append("NTREX-128 is not under any data root: the ground truth is FLORES gold only")
    elif target not in ntrex_langs:
        notes.append(f"NTREX-128 has no {target} side: the ground truth is FLORES gold only")
    tatoeba_codes: dict[str, str] = {}
    if tatoeba_gold:
        tatoeba = TatoebaV1("test", data_dir)
        if target != ENGLISH:
            raise BadInputError(f"Tatoeba v1 pairs every language with English, so it has no X-{target} gold; "
                                "leave tatoeba_gold off for this target")
        if not tatoeba.is_available():
            raise BadInputError("tatoeba_gold asks for Tatoeba v1, which is not under any data root; fetch it with "
                                "`xsimpp download tatoeba` or leave tatoeba_gold off")
        for t in tatoeba.languages():
            try:
                tatoeba_codes.setdefault(resolve_language(t), t)
            except Exception:  # a Tatoeba code with no FLORES language (cmn: zho_Hans or zho_Hant)
                continue
    languages = []
    ntrex_rows: list[int] | None = None
    for code in codes:
        fl = flores_window(gold_split.bitext(code, target), flores_offset, flores_lines)
        nt = None
        if code in ntrex_langs and target in ntrex_langs:
            nt = ntrex.bitext(code, target)
            if ntrex_sample == "seeded":
                ntrex_rows = ntrex_rows if ntrex_rows is not None else ntrex_sample_lines(len(nt), ntrex_lines, seed)
                nt = sample_lines(nt, ntrex_rows, seed)
            else:
                nt = head(nt, ntrex_lines)
        unpaired = dev.sentences(code)[:unpaired_sources] if unpaired_sources else []
        tt = tatoeba.bitext(tatoeba_codes[code], "eng") if code in tatoeba_codes else None
        languages.append(MiningLanguage(code, fl, nt, unpaired, tatoeba_gold=tt))
    missing_nt = [ld.lang for ld in languages if ld.ntrex is None]
    if missing_nt and target in ntrex_langs:
        notes.append(f"no NTREX-128 file for {', '.join(missing_nt)}: FLORES gold only there")
    if tatoeba_gold:
        missing_tt = [ld.lang for ld in languages if ld.tatoeba_gold is None]
        if len(missing_tt) == len(languages):
            raise BadInputError(f"tatoeba_gold: Tatoeba v1 has none of {', '.join(codes)}; leave it off")
        if missing_tt:
            notes.append(f"no Tatoeba v1 pairs for {', '.join(missing_tt)}: no Tatoeba gold there")
    # Nothing of any gold set may be a distractor: every target line of FLORES devtest (the xsim
    # targets, used or not), of FLORES dev with unpaired sources or dev gold (their translations),
    # and of the gold.
    exclude = {normalise(t) for t in flores.sentences(target)}
    if dev is not None:
        exclude.update(normalise(t) for t in dev.sentences(target))
    for ld in languages:
        for _, bt in ld.gold_sources:
            exclude.update(normalise(t) for t in bt.tgt)
    return languages, notes, exclude


def with_near_duplicates(source: MiningSource, languages: list[MiningLanguage], pool: Distractors, seed: int,
                         exclude: set[str], target: str) -> Distractors:
    """The pool plus ``source.near_duplicates`` near-duplicates of every gold target line."""
    from ..paths import data_dirs

    gold = [t for ld in languages for _, bt in ld.gold_sources for t in bt.tgt]
    return add_near_duplicates(pool, gold, source.near_duplicates, source.near_duplicate_kind, seed, exclude,
                               data_dirs(source.data_dir), list(source.whole_sources + source.fill_sources), target)


def source_view(source: MiningSource) -> dict[str, Any]:
    """What near-duplicates, a gold offset or split, a seeded NTREX sample and Tatoeba gold add to a
    mining record's signature (nothing at their defaults, so earlier records keep their signatures)."""
    view: dict[str, Any] = {}
    if source.near_duplicates:
        view.update(near_duplicates=source.near_duplicates, near_duplicate_kind=source.near_duplicate_kind)
    if source.flores_gold_offset:
        view["flores_gold_offset"] = source.flores_gold_offset
    if source.flores_gold_split != "devtest":
        view["flores_gold_split"] = source.flores_gold_split
    if source.ntrex_sample != "first":
        view["ntrex_sample"] = source.ntrex_sample
    if source.tatoeba_gold:
        view["tatoeba_gold"] = True
    return view


def source_codes(langs, target: str, what: str = "--langs") -> list[str]:
    """FLORES-200 codes of the source languages, distinct, none the target."""
    from ..datasets.languages import resolve_language

    codes: list[str] = []
    for c in lang_list(langs):
        code = resolve_language(str(c))
        if code == target:
            raise BadInputError(f"{what} lists {c}, the target {target}: every language is mined into the target, so "
                                f"leave it out")
        if code in codes:
            raise BadInputError(f"{what} lists {code} twice")
        codes.append(code)
    if not codes:
        raise BadInputError(f"give {what} (e.g. --langs kea,fur)")
    return codes


@dataclass
class LanguageMining:
    """One language's mined candidates, scored."""

    lang: str
    cv: B.CrossValidation
    cv_ntrex: B.CrossValidation | None
    cv_flores: B.CrossValidation
    fixed: B.PRF
    n_candidates: int
    n_sources: int
    n_targets: int
    n_unpaired: int
    cv_tatoeba: B.CrossValidation | None = None
    # per source sentence: its gold set ("flores", "ntrex", "tatoeba"; "unpaired": none), its number
    # of gold pairs, and per cross-validated F1 the pairs its fold's threshold kept and how many were
    # gold (``source_outcomes``), so that F1 can be resampled over gold sentences (``bootstrap_f1``)
    source_tags: list[str] = field(default_factory=list, repr=False)
    source_gold: np.ndarray | None = field(default=None, repr=False)
    outcomes: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def cells(self) -> dict[str, Any]:
        """The figures as a table row (in %), every metric of ``MiningTask.metrics`` among them."""
        row: dict[str, Any] = {
            "mining_f1": 100.0 * self.cv.pooled.f1, "mining_p_cv": 100.0 * self.cv.pooled.precision,
            "mining_r_cv": 100.0 * self.cv.pooled.recall, "mining_threshold_cv": self.cv.threshold_mean,
            "mining_f1_flores": 100.0 * self.cv_flores.pooled.f1}
        if self.cv_ntrex is not None:
            row["mining_f1_ntrex"] = 100.0 * self.cv_ntrex.pooled.f1
        if self.cv_tatoeba is not None:
            row["mining_f1_tatoeba"] = 100.0 * self.cv_tatoeba.pooled.f1
        row["mining_p_fixed"] = 100.0 * self.fixed.precision
        row["mining_r_fixed"] = 100.0 * self.fixed.recall
        row["mining_f1_fixed"] = 100.0 * self.fixed.f1
        row["n_gold"] = self.cv.pooled.n_gold
        if self.n_unpaired:
            row["n_unpaired"] = self.n_unpaired
        row["n_sources"], row["n_targets"], row["n_candidates"] = self.n_sources, self.n_targets, self.n_candidates
        return row

    def outcome_table(self) -> dict[str, Any]:
        """The per-sentence outcomes as plain lists: ``tags`` and ``gold`` per source sentence, and
        per cross-validated F1 the ``extracted`` and ``correct`` pairs of each source sentence."""
        return {"tags": list(self.source_tags),
                "gold": [] if self.source_gold is None else self.source_gold.tolist(),
                "views": {name: {"extracted": e.tolist(), "correct": c.tolist()}
                          for name, (e, c) in self.outcomes.items()}}


def source_outcomes(cands: B.Candidates, is_gold: np.ndarray, kept: np.ndarray,
                    n_src: int) -> tuple[np.ndarray, np.ndarray]:
    """Per source sentence: the pairs its fold's threshold kept, and how many of them are gold;
    their sums are the cross-validation's pooled counts."""
    e = np.bincount(cands.src[kept], minlength=n_src)
    c = np.bincount(cands.src[kept & is_gold], minlength=n_src)
    return e.astype(np.int64), c.astype(np.int64)


def mine_language(ld: MiningLanguage, target: str, distractors: list[str], settings: MiningSettings, embed,
                  pairs, config=None) -> LanguageMining:
    """Mine one language's gold and unpaired sources against its gold target lines + the pool."""
    st = settings
    src_index: dict[str, int] = {}
    tgt_index: dict[str, int] = {}
    gold_src, gold_tgt, origin = [], [], []
    for tag, bt in ld.gold_sources:
        for s, t in zip(bt.src, bt.tgt):
            gold_src.append(src_index.setdefault(s, len(src_index)))
            gold_tgt.append(tgt_index.setdefault(t, len(tgt_index)))
            origin.append(tag)
    for s in ld.unpaired:  # sources whose translation is not among the targets
        src_index.setdefault(s, len(src_index))
    gold_pairs = dict.fromkeys(zip(gold_src, gold_tgt))  # distinct pairs, in order
    gs = np.array([p[0] for p in gold_pairs], dtype=np.int64)
    gt = np.array([p[1] for p in gold_pairs], dtype=np.int64)
    tags: dict[tuple[int, int], str] = {}
    for pair, tag in zip(zip(gold_src, gold_tgt), origin):
        tags.setdefault(pair, tag)
    tag_arr = np.array([tags[(int(i), int(j))] for i, j in zip(gs, gt)])
    sources, gold_lines = list(src_index), list(tgt_index)
    if embed is not None:
        x = embed(sources, ld.lang)
        y = np.concatenate([embed(gold_lines, target), embed(distractors, target)])
        cands = B.mine_candidates(x, y, margin=st.margin, k=st.k, config=config)
    else:
        sim = pairs(sources, gold_lines, ld.lang, target, distractors)
        cands = B.mine_candidates(similarity=sim, margin=st.margin, k=st.k, config=config)
    n_targets = len(gold_lines) + len(distractors)
    is_gold = B.gold_mask(cands, gs, gt)
    n_src = len(sources)
    cv = B.cross_validate(cands, is_gold, gs, n_src, folds=st.folds, seed=st.seed)
    outcomes = {"mining_f1": source_outcomes(cands, is_gold, cv.kept, n_src)}

    def restricted(tag: str) -> B.CrossValidation | None:
        keep_src = np.zeros(n_src, dtype=bool)
        keep_src[gs[tag_arr == tag]] = True
        if not keep_src.any():
            return None
        # sources of the other gold sets leave the candidates; the pool and kNN stay as mined
        mask = keep_src[cands.src]
        sub = cands.take(mask)
        res = B.cross_validate(sub, is_gold[mask], gs[tag_arr == tag], n_src, folds=st.folds, seed=st.seed)
        outcomes[f"mining_f1_{tag}"] = source_outcomes(sub, is_gold[mask], res.kept, n_src)
        return res

    source_tags = ["unpaired"] * n_src
    for i, tag in zip(gs[::-1], tag_arr[::-1]):  # a sentence in two gold sets: the first one's
        source_tags[int(i)] = str(tag)
    fixed = B.evaluate_threshold(cands.score, is_gold, len(gs), st.fixed_threshold)
    return LanguageMining(ld.lang, cv, restricted("ntrex"), restricted("flores"), fixed, len(cands), n_src, n_targets,
                          len(ld.unpaired), restricted("tatoeba"), source_tags,
                          np.bincount(gs, minlength=n_src).astype(np.int64), outcomes)


@dataclass
class MiningReport(TaskReport):
    target: str
    encoder_id: str
    langs: list[LanguageMining] = field(default_factory=list)
    distractors: int = 0
    notes: list[str] = field(default_factory=list)


class MiningTask(Task):
    name = "mining-f1"
    description = ("mining F1 on general text: FLORES-200 + NTREX-128 gold hidden among real distractors, margin kNN "
                   "both ways, cross-validated and fixed thresholds (the study's ground truth)")
    metrics = {
        "mining_f1": MetricInfo("F1 %", False, "mining F1, FLORES + NTREX gold (threshold cross-validated)"),
        "mining_f1_ntrex": MetricInfo("F1 %", False, "mining F1 on NTREX gold only (sentences no proxy saw)"),
        "mining_f1_flores": MetricInfo("F1 %", False, "mining F1 on FLORES gold only"),
        "mining_f1_tatoeba": MetricInfo("F1 %", False, "mining F1 on Tatoeba v1 gold only (--tatoeba-gold: short "
                                                       "everyday sentences, outside FLORES and NTREX)"),
        "mining_p_fixed": MetricInfo("precision %", False, "mining precision at the fixed threshold"),
        "mining_r_fixed": MetricInfo("recall %", False, "mining recall at the fixed threshold"),
        "mining_f1_fixed": MetricInfo("F1 %", False, "mining F1 at the fixed threshold (set in advance, as a miner "
                                                     "runs it)"),
    }
    Source = MiningSource
    Settings = MiningSettings
    cli = True
    needs_vectors = False

    def load(self, source: MiningSource, settings: MiningSettings) -> MiningData:
        from ..datasets.languages import resolve_language
        from ..paths import data_dirs

        target = resolve_language(str(source.target))
        codes = source_codes(source.langs, target)
        languages, notes, exclude = gold_languages(codes, target, source.flores_lines, source.ntrex_lines,
                                                   source.unpaired_sources, source.data_dir, source.flores_gold_offset,
                                                   flores_split=source.flores_gold_split,
                                                   ntrex_sample=source.ntrex_sample, seed=settings.seed,
                                                   tatoeba_gold=source.tatoeba_gold)
        if settings.folds > min(len(ld.flores) for ld in languages):
            raise BadInputError(f"--folds {settings.folds} is more than the {min(len(ld.flores) for ld in languages)} "
                                "gold lines of a language")
        pool = with_near_duplicates(source, languages, build_distractors(
            list(source.whole_sources), list(source.fill_sources), settings.distractors, settings.seed, exclude,
            data_dirs(source.data_dir), target), settings.seed, exclude, target)
        if source.unpaired_sources and source.whole_sources == WHOLE_SOURCES_UNPAIRED:
            notes.append("with --unpaired-sources the pool leaves out FLORES-200 dev (it holds the unpaired sources' "
                         f"translations): whole sources {', '.join(WHOLE_SOURCES_UNPAIRED)}")
        elif source.flores_gold_split == "dev" and source.whole_sources == WHOLE_SOURCES_UNPAIRED:
            notes.append("with FLORES dev gold the pool leaves out FLORES-200 dev (it holds the gold's translations): "
                         f"whole sources {', '.join(WHOLE_SOURCES_UNPAIRED)}")
        return MiningData(languages, pool, target, notes=notes + pool.notes, source_view=source_view(source))

    def sides(self, data: MiningData, settings: MiningSettings) -> list[tuple[str, Sequence[str]]]:
        out: list[tuple[str, Sequence[str]]] = []
        for ld in data.languages:
            out += [(ld.lang, bt.src) for _, bt in ld.gold_sources] + ([(ld.lang, ld.unpaired)] if ld.unpaired else [])
            out += [(data.target, bt.tgt) for _, bt in ld.gold_sources]
        return out + [(data.target, data.distractors.lines)]

    def evaluate(self, encoder: Encoder, data: MiningData, settings: MiningSettings, ctx) -> MiningReport:
        embed = embedder_for(encoder, ctx.cache, ctx.progress)
        pairs = pair_scores_for(encoder, ctx.cache, ctx.progress)
        report = MiningReport(target=data.target, encoder_id=encoder.id, distractors=len(data.distractors.lines),
                              notes=list(data.notes))
        # a grid's own name for the encoder (the study's label) and the sources without a translation
        # and a non-English target are signed only when present: earlier records keep their signatures
        system = {"system": ctx.run.label} if ctx.run.label else {}
        for ld in data.languages:
            res = mine_language(ld, data.target, data.distractors.lines, settings, embed, pairs, ctx.engine)
            report.langs.append(res)
            row = res.cells()
            view: dict[str, Any] = {**system, **({"unpaired_sources": len(ld.unpaired)} if ld.unpaired else {})}
            if data.target != ENGLISH:
                view["target"] = data.target
            view.update(data.source_view)
            for metric in self.metrics:
                if metric in row:
                    sig = sign(encoder, data.dataset, data.split, data.checksum, metric, settings, **view)
                    report.records.append(ResultRecord(metric, float(row[metric]), int(row["n_gold"]), ld.lang,
                                                       data.target, sig))
        report.count_encoding(embed or pairs)
        return report

    def render(self, report: MiningReport) -> str:
        from tabulate import tabulate

        rows = []
        for r in report.langs:
            c = r.cells()
            rows.append([f"{r.lang}-{report.target}", f"{c['mining_f1']:.2f}", f"{c['mining_p_cv']:.2f}",
                         f"{c['mining_r_cv']:.2f}", f"{c['mining_f1_ntrex']:.2f}" if "mining_f1_ntrex" in c else "-",
                         f"{c['mining_p_fixed']:.2f}", f"{c['mining_r_fixed']:.2f}", f"{c['mining_f1_fixed']:.2f}",
                         c["n_gold"], c.get("n_unpaired", 0)])
        head_row = ["pair", "F1 (CV)", "P (CV)", "R (CV)", "F1 NTREX", "P fixed", "R fixed", "F1 fixed", "gold",
                    "unpaired"]
        out = tabulate(rows, headers=head_row, tablefmt="grid", disable_numparse=True)
        out += f"\n{report.distractors} distractors in {report.target}; fixed threshold and CV as signed below"
        for note in report.notes:
            out += f"\nnote: {note}"
        return out
