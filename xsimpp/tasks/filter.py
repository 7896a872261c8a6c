"""Filter an aligned corpus with an encoder, Tan & Koehn (2022, section 3.3 and appendix 6.1-6.2):
drop exact duplicates, pairs whose sides overlap by more than 90 % and wrong-language lines, score
every remaining pair by its margin as LASER's ``source/mine_bitexts.py --mode score`` does, rank,
and keep the best pairs up to an English-token budget (WMT 2020's 2/3/5/7 M words).

Margin score (LASER ``--mode score``, ratio by default): for the remaining pairs (x_i, y_i),
score_i = cos(x_i, y_i) / ((mean of x_i's k nearest targets + mean of y_i's k nearest sources) / 2),
the neighbours searched over the remaining corpus itself, both directions, k = min(4, n) as LASER's
``-k 4`` (Tan & Koehn: "its default value k=4"). LASER's default (no ``--unify``) searches over
the lines as given, a repeated side counting as often as it occurs; so does this (exact duplicate
*pairs* are gone by then). The kNN is the toolkit's exact engine (the same neighbours as faiss's
``IndexFlatIP`` up to float32 ties), so scores do not depend on the machine.

Order of the rules (the paper's): duplicates, then overlap, then language; each dropped pair is
counted under the first rule that drops it. The rules run *before* scoring, so dropped pairs are
not in anyone's neighbourhood (the paper pre-processes, then filters).

Language identification: py3langid (``datasets.langid``). ``lid="english"`` is the paper's rule
(the English side must be identified as English); ``"both"`` checks both sides (the paper's
better-working variant for LASER-FILTER); ``"none"`` none. A side whose language the identifier
does not know (Friulian) cannot be checked that way; ``reject_langs`` then drops the side when it
is identified as one of those languages with probability >= ``lid_confidence`` (e.g. Italian in a
Friulian column), and the report names every side left unchecked.

Streaming: the two files are read line by line four times (count and check; rules; encoding;
writing), never held in memory. Per pair only a 128-bit hash, a token count, a status byte and, for scored pairs, a
float64 score stay in memory; the vectors go to .npy files on disk in chunks and the kNN runs over
them with ``engine.mining.mine`` (bounded by ``max_memory``, top-k per row only).

Outputs (one folder, written atomically): ``kept.<src_lang>`` / ``kept.<tgt_lang>`` (the kept pairs,
in corpus order), ``scores.tsv`` (per input line: status, score, rank), ``report.json`` (counts per
rule, budget used, settings, encoder).
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from ..datasets import langid
from ..datasets.languages import resolve_language
from ..engine import DEFAULT_MARGIN, MARGINS
from ..errors import BadInputError
from ..scoring.filtering import OVERLAP_LIMIT, budget_prefix, first_occurrences, rank, token_overlap
from ..textio import atomic_dir, check_input_file, json_text, os_failure, path
from .base import MAX_K, Settings, Task, TaskReport, check_margin_k, knob

KEPT, OVER_BUDGET, DUPLICATE, OVERLAP, LANG_SRC, LANG_TGT = range(6)
SCORED = KEPT  # status of a pair that survived the rules (before the budget cut)
STATUS_NAMES = {KEPT: "kept", OVER_BUDGET: "over-budget", DUPLICATE: "duplicate", OVERLAP: "overlap",
                LANG_SRC: "language-src", LANG_TGT: "language-tgt"}
LID_MODES = ("english", "both", "none")
CHUNK_LINES = 4096
_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}


def parse_budget(text: str | int | None) -> int | None:
    """'2M' -> 2 000 000 (decimal, as WMT's "2 million words"); '500k', '1.5M', a plain count; None: no budget."""
    if text is None or isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)\s*", str(text))
    if not m:
        raise BadInputError(f"--budget takes a token count such as 2M, 500k or 123456, got '{text}'")
    return int(round(float(m.group(1)) * _SUFFIX[m.group(2).lower()]))


@dataclass(frozen=True)
class FilterSettings(Settings):
    """Every knob of the filter (the languages name the two files' sides)."""

    src_lang: str = knob(None, "language of --src (fur, fur_Latn, de, ...)", cli=False)
    tgt_lang: str = knob(None, "language of --tgt", cli=False)
    budget: Any = knob(None, "keep the best pairs up to this many whitespace tokens of the English side (2M = "
                             "2,000,000; paper: 2M, 3M, 5M, 7M); default: keep every scored pair")
    budget_side: str | None = knob(None, "side whose tokens the budget counts (default: the English side)",
                                   choices=("src", "tgt"))
    margin: str = knob(DEFAULT_MARGIN, "margin function, as the paper", choices=MARGINS)
    k: int = knob(4, "neighbours per direction (LASER's and the paper's 4)", type=int, min=1, max=MAX_K)
    lid: str = knob("english", "language check: english (the paper's: the English side must be identified as "
                               "English), both sides, or none", choices=LID_MODES)
    reject_langs: tuple[str, ...] = knob((), "with --lid both: for a side whose language the identifier does not "
                                             "know (e.g. fur), drop lines identified as one of these languages "
                                             "(comma-separated, e.g. ita)", cli=False)
    lid_confidence: float = knob(0.9, "probability at or above which --reject-lang drops a line", type=float)
    overlap_limit: float = knob(OVERLAP_LIMIT, "drop pairs whose sides overlap by more than this (the paper's 90%%)",
                                type=float)
    max_memory: str = knob("1GB", "bound on the kNN engine's arrays")
    chunk_lines: int = knob(CHUNK_LINES, "pairs encoded at a time (bounds the memory the vectors take)", type=int,
                            flag="--chunk")

    def __post_init__(self) -> None:
        if not self.src_lang or not self.tgt_lang:
            raise BadInputError("give both languages: --src-lang and --tgt-lang")
        object.__setattr__(self, "budget", parse_budget(self.budget))
        object.__setattr__(self, "reject_langs", tuple(self.reject_langs))
        if self.budget is not None and self.budget < 0:
            raise BadInputError("--budget must be >= 0")
        check_margin_k(self.margin, self.k)
        if not isinstance(self.chunk_lines, int) or self.chunk_lines < 1:
            raise BadInputError(f"--chunk must be >= 1, got {self.chunk_lines}")
        if not 0 <= self.overlap_limit <= 1:
            raise BadInputError(f"the overlap limit must be in [0, 1], got {self.overlap_limit}")
        if not 0 <= self.lid_confidence <= 1:
            raise BadInputError(f"--lid-confidence must be in [0, 1], got {self.lid_confidence}")
        if self.budget_side is not None and self.budget_side not in ("src", "tgt"):
            raise BadInputError(f"--budget-side must be src or tgt, got '{self.budget_side}'")
        if self.lid not in LID_MODES:
            raise BadInputError(f"--lid must be one of {', '.join(LID_MODES)}, got {self.lid!r}")


@dataclass
class FilterReport:
    lines: int
    dropped: dict[str, int]
    scored: int
    kept: int
    budget: int | None
    budget_side: str
    tokens_scored: int
    tokens_kept: int
    lid_checks: dict[str, str]
    out: Path
    seconds: float = 0.0
    settings: dict = field(default_factory=dict)
    encoder: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        d = asdict(self)
        d["out"] = str(self.out)
        return d

    def summary(self) -> str:
        drops = ", ".join(f"{n} {rule}" for rule, n in self.dropped.items())
        budget = "no budget" if self.budget is None else f"budget {self.budget} {self.budget_side} tokens"
        return (f"{self.lines} pairs; dropped {drops}; scored {self.scored}; kept {self.kept} "
                f"({self.tokens_kept} of {self.tokens_scored} {self.budget_side} tokens, {budget})")


def read_aligned(src: str | Path, tgt: str | Path) -> Iterator[tuple[int, str, str]]:
    """(line number, source, target) of two line-aligned UTF-8 files, one line at a time. Broken
    UTF-8, an empty line or a different number of lines is a BadInputError naming file and line."""
    paths = (check_input_file(src, "source file"), check_input_file(tgt, "target file"))
    try:
        fs = [open(p, "rb") for p in paths]
    except OSError as e:
        raise os_failure(e, "read") from None
    try:
        no = 0
        while True:
            raw = [f.readline() for f in fs]
            if not raw[0] and not raw[1]:
                if no == 0:
                    raise BadInputError(f"{paths[0]} is empty")
                return
            no += 1
            if not raw[0] or not raw[1]:
                short, long_ = (paths[0], paths[1]) if not raw[0] else (paths[1], paths[0])
                raise BadInputError(f"{short} has {no - 1} lines but {long_} has more; the two files must be "
                                    "line-aligned")
            texts = []
            for p, r in zip(paths, raw):
                try:
                    t = r.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise BadInputError(f"{p}: line {no} is not valid UTF-8 ({e.reason} at byte {e.start} of the "
                                        "line)") from None
                if no == 1 and t.startswith("\ufeff"):
                    t = t[1:]
                t = t.rstrip("\n").rstrip("\r")
                if not t.strip():
                    raise BadInputError(f"{p}: line {no} is empty; every line must hold a sentence")
                texts.append(t)
            yield no, texts[0], texts[1]
    finally:
        for f in fs:
            f.close()


def _chunks(rows: Iterator, size: int) -> Iterator[list]:
    buf: list = []
    for r in rows:
        buf.append(r)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


def _pair_hash(s: str, t: str) -> tuple[int, int]:
    d = hashlib.blake2b(s.encode("utf-8") + b"\0" + t.encode("utf-8"), digest_size=16).digest()
    return int.from_bytes(d[:8], "little"), int.from_bytes(d[8:], "little")


@dataclass
class _SideCheck:
    language: str  # ISO 639-3 base
    mode: str  # "identify" (must be identified as the language) | "reject" (must not be one of reject) | "off"
    reject: frozenset[str] = frozenset()

    def describe(self, confidence: float) -> str:
        if self.mode == "identify":
            return f"identified as {self.language} by {langid.identifier_version()} (top label)"
        if self.mode == "reject":
            return (f"{self.language} unknown to {langid.IDENTIFIER}: dropped when identified as "
                    f"{'/'.join(sorted(self.reject))} with probability >= {confidence}")
        return "not checked"

    def bad(self, results: list[tuple[str, float]], confidence: float) -> list[bool]:
        if self.mode == "identify":
            return [lab != self.language for lab, _ in results]
        if self.mode == "reject":
            return [lab in self.reject and p >= confidence for lab, p in results]
        return [False] * len(results)


def _side_checks(cfg: FilterSettings, src_base: str, tgt_base: str) -> tuple[_SideCheck, _SideCheck]:
    if cfg.lid not in LID_MODES:
        raise BadInputError(f"--lid must be one of {', '.join(LID_MODES)}, got '{cfg.lid}'")
    if not 0 < cfg.lid_confidence <= 1:
        raise BadInputError(f"--lid-confidence must be in (0, 1], got {cfg.lid_confidence}")
    reject = frozenset(langid.language_of(c) for c in cfg.reject_langs)
    if reject and cfg.lid != "both":
        raise BadInputError("--reject-lang applies to a side the identifier does not know; it needs --lid both")
    checks = []
    for base in (src_base, tgt_base):
        on = cfg.lid == "both" or (cfg.lid == "english" and base == "eng")
        if on and langid.knows(base):
            checks.append(_SideCheck(base, "identify"))
        elif on and reject:
            checks.append(_SideCheck(base, "reject", reject - {base}))
        else:
            checks.append(_SideCheck(base, "off"))
    return checks[0], checks[1]


def _rules(src, tgt, cfg: FilterSettings, checks, budget_side: int, progress) -> tuple[np.ndarray, np.ndarray]:
    """Pass 1: (status per pair, budget-side token count per pair)."""
    status = bytearray()
    counts = array("q")
    hashes = array("Q")
    for chunk in _chunks(read_aligned(src, tgt), cfg.chunk_lines):
        lid = [c.bad(langid.identify([row[1 + side] for row in chunk]), cfg.lid_confidence) if c.mode != "off"
               else [False] * len(chunk) for side, c in enumerate(checks)]
        for j, (_, s, t) in enumerate(chunk):
            hashes.extend(_pair_hash(s, t))
            counts.append(len((s, t)[budget_side].split()))
            if token_overlap(s, t) > cfg.overlap_limit:
                status.append(OVERLAP)
            elif lid[0][j]:
                status.append(LANG_SRC)
            elif lid[1][j]:
                status.append(LANG_TGT)
            else:
                status.append(SCORED)
        if progress:
            progress(len(chunk))
    st = np.frombuffer(bytes(status), np.uint8).copy()
    first = first_occurrences(np.frombuffer(hashes, np.uint64).reshape(-1, 2))
    st[~first] = DUPLICATE  # the first rule: a repeated pair is a duplicate whatever else it is
    return st, np.frombuffer(counts, np.int64).copy()


def _encode(src, tgt, status: np.ndarray, encoder, cache, langs, work: Path, cfg, progress) -> tuple[Path, Path]:
    """Pass 2: vectors of the scored pairs, side by side, into two .npy files on disk."""
    from ..cache import encode_cached

    n = int((status == SCORED).sum())
    paths = (work / "src.npy", work / "tgt.npy")
    files = [open(p, "wb") for p in paths]  # plain writes, not a memmap: written pages do not stay resident
    try:
        dims = [None, None]
        rows = ((s, t) for no, s, t in read_aligned(src, tgt) if status[no - 1] == SCORED)
        for chunk in _chunks(rows, cfg.chunk_lines):
            for side in (0, 1):
                vecs, _ = encode_cached(encoder, [p[side] for p in chunk], cache=cache, lang=langs[side])
                if dims[side] is None:
                    dims[side] = vecs.shape[1]
                    np.lib.format.write_array_header_1_0(files[side], {"descr": np.lib.format.dtype_to_descr(
                        np.dtype(np.float32)), "fortran_order": False, "shape": (n, dims[side])})
                files[side].write(np.ascontiguousarray(vecs, dtype=np.float32).tobytes())
            if progress:
                progress(len(chunk))
    except OSError as e:
        raise os_failure(e, "write", work) from None
    finally:
        for f in files:
            f.close()
    return paths


def _scores(paths: tuple[Path, Path], cfg: FilterSettings, work: Path, engine) -> np.ndarray:
    """LASER's ``--mode score``: margin of each given pair against both sides' kNN neighbourhoods."""
    from ..engine.exact import lane_dot
    from ..engine.mining import RowSource, mine

    x, y = RowSource(paths[0], "source embeddings"), RowSource(paths[1], "target embeddings")
    if x.shape[1] != y.shape[1]:
        raise BadInputError(f"the encoder gave {x.shape[1]}-dimensional source and {y.shape[1]}-dimensional "
                            "target vectors")
    n = len(x)
    res = mine(paths[0], paths[1], work / "knn", margin=cfg.margin, k=min(cfg.k, n), max_memory=cfg.max_memory,
               keep_shards=False, config=engine)
    cos = np.empty(n)
    for a in range(0, n, cfg.chunk_lines):
        b = min(n, a + cfg.chunk_lines)
        cos[a:b] = lane_dot(x.normalized(a, b), y.normalized(a, b))
    idx = np.arange(n)
    return res.knn.pair_scores(cos, idx, idx)


def _write(src, tgt, tmp: Path, langs, status: np.ndarray, score_of: np.ndarray, rank_of: np.ndarray) -> None:
    """Pass 3: the kept pairs (corpus order) and one scores line per input line."""
    try:
        with open(tmp / f"kept.{langs[0]}", "w", encoding="utf-8") as fs, \
                open(tmp / f"kept.{langs[1]}", "w", encoding="utf-8") as ft, \
                open(tmp / "scores.tsv", "w", encoding="utf-8") as fsc:
            fsc.write("line\tstatus\tscore\trank\n")
            for no, s, t in read_aligned(src, tgt):
                st = int(status[no - 1])
                r = int(rank_of[no - 1])
                fsc.write(f"{no}\t{STATUS_NAMES[st]}\t{repr(float(score_of[no - 1])) if r else ''}\t"
                          f"{r or ''}\n")
                if st == KEPT:
                    fs.write(s + "\n")
                    ft.write(t + "\n")
    except OSError as e:
        raise os_failure(e, "write", tmp.parent) from None


def filter_corpus(src: str | Path, tgt: str | Path, out: str | Path, encoder, cfg: FilterSettings, *, cache=None,
                  engine=None, progress: Callable[[int, str], Callable[[int], None]] | None = None) -> FilterReport:
    """Run the filter (module docstring) and write ``out`` atomically. ``progress(total, desc)``
    returns an update callable (or None for none)."""
    import contextlib
    import shutil

    t0 = time.perf_counter()
    langs = (resolve_language(cfg.src_lang), resolve_language(cfg.tgt_lang))
    bases = tuple(c.split("_")[0] for c in langs)
    side = {"src": 0, "tgt": 1}.get(cfg.budget_side) if cfg.budget_side else None
    if side is None:
        if "eng" not in bases:
            raise BadInputError("neither side is English; say which side's tokens the budget counts (--budget-side)")
        side = bases.index("eng")
    if langs[0] == langs[1]:
        raise BadInputError(f"source and target language are both {langs[0]}")
    checks = _side_checks(cfg, *bases)
    bar = progress or (lambda total, desc: None)

    n_lines = sum(1 for _ in read_aligned(src, tgt))  # validates both files before any work
    status, counts = _rules(src, tgt, cfg, checks, side, bar(n_lines, "rules"))
    scored_lines = np.flatnonzero(status == SCORED)
    n = len(scored_lines)
    with atomic_dir(out, "--out") as tmp:
        work = tmp / "_work"
        work.mkdir()
        scores = np.empty(0)
        if n:
            paths = _encode(src, tgt, status, encoder, cache, langs, work, cfg, bar(n, "encode"))
            scores = _scores(paths, cfg, work, engine)
        shutil.rmtree(work)
        order = rank(scores)
        n_keep = n if cfg.budget is None else budget_prefix(order, counts[scored_lines], cfg.budget)
        kept_lines = scored_lines[order[n_keep:]]
        status[kept_lines] = OVER_BUDGET
        score_of = np.full(n_lines, np.nan)  # per input line: 8 + 8 bytes, no Python object per pair
        score_of[scored_lines] = scores
        rank_of = np.zeros(n_lines, np.int64)  # 0: not ranked
        rank_of[scored_lines[order]] = np.arange(1, n + 1)
        _write(src, tgt, tmp, langs, status, score_of, rank_of)
        del score_of, rank_of
        rule_names = {DUPLICATE: "duplicate", OVERLAP: f"overlap > {cfg.overlap_limit:g}",
                      LANG_SRC: f"wrong language ({langs[0]} side)", LANG_TGT: f"wrong language ({langs[1]} side)",
                      OVER_BUDGET: "over budget"}
        report = FilterReport(
            lines=n_lines, dropped={name: int((status == code).sum()) for code, name in rule_names.items()},
            scored=n, kept=int((status == KEPT).sum()), budget=cfg.budget, budget_side=langs[side],
            tokens_scored=int(counts[scored_lines].sum()), tokens_kept=int(counts[status == KEPT].sum()),
            lid_checks={langs[i]: checks[i].describe(cfg.lid_confidence) for i in (0, 1)}, out=Path(out),
            settings={**asdict(cfg), "k_used": min(cfg.k, n) if n else 0,
                      "overlap": "|A ∩ B| / max(|A|, |B|), casefolded whitespace-token multisets",
                      "budget_rule": "longest prefix of the ranking within the budget",
                      "score": f"LASER mine_bitexts.py --mode score, margin {cfg.margin}"},
            encoder={"id": encoder.id, "revision": encoder.revision, "fingerprint": encoder.fingerprint},
        )
        report.seconds = round(time.perf_counter() - t0, 3)
        with contextlib.suppress(Exception):
            report.settings["identifier"] = langid.identifier_version()
        (tmp / "report.json").write_text(json_text(report.to_json()), encoding="utf-8")
    return report


@dataclass(frozen=True)
class FilterSource:
    """The two line-aligned files and the output folder."""

    src: Any = knob(None, "source side, one sentence a line", type=path)
    tgt: Any = knob(None, "target side, line-aligned with --src", type=path)
    out: Any = knob(None, "output folder (written atomically; replaced if it exists)", type=path)


class FilterTask(Task):
    """`xsimpp filter`: no records (its output is the filtered corpus); its own progress bars."""

    name = "filter"
    description = "Tan & Koehn (2022)'s corpus filter: rules, LASER margin score, token budget"
    metrics: dict = {}
    Source = FilterSource
    Settings = FilterSettings
    needs_vectors = True
    own_progress = True

    def load(self, source: FilterSource, settings: FilterSettings) -> FilterSource:
        for flag in ("src", "tgt", "out"):
            if getattr(source, flag) is None:
                raise BadInputError(f"give --{flag}")
        return source

    def evaluate(self, encoder, data: FilterSource, settings: FilterSettings, ctx) -> "FilterRun":
        bars = []

        def bar(total: int, desc: str):
            if not ctx.run.progress:
                return None
            from tqdm import tqdm

            bars.append(tqdm(total=total, desc=desc, unit="pair", file=sys.stderr, dynamic_ncols=True,
                             mininterval=0.5))
            return bars[-1].update

        try:
            return FilterRun(filter_corpus(data.src, data.tgt, data.out, encoder, settings, cache=ctx.cache,
                                           engine=ctx.engine, progress=bar))
        finally:
            for b in bars:
                b.close()

    def render(self, run: "FilterRun") -> str:
        rep = run.filtered
        lines = [rep.summary()] + [f"language check {lang}: {check}" for lang, check in rep.lid_checks.items()]
        lines.append(f"written: {rep.out}/kept.* scores.tsv report.json ({rep.seconds:.1f}s)")
        return "\n".join(lines)


@dataclass
class FilterRun(TaskReport):
    """The runner's report of a filter run: the filter's own report, no records."""

    filtered: FilterReport = None
