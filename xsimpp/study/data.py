"""The study's data, read and checked before any model loads: per language the FLORES-200 devtest
bitext (xsim, xsim++, gold), the NTREX-128 bitext (gold), the Tatoeba v1 bitext (proxy); the
augmented English of each xsim++ style; and the English distractor pool that hides the gold.

The mining task is BUCC's, built from real text: a language's gold pairs (FLORES devtest lines
and NTREX lines, as sources and their English) are mined against their English *plus* the
distractor pool, one pool shared by every language. The pool holds distinct English lines of the
sources the configuration names, never a line of any gold English side (whitespace-normalised
comparison), nor any FLORES devtest English line (the xsim targets).

With ``[mining] unpaired_sources = N`` a language also mines its first N FLORES *dev* source lines,
whose translations are nowhere in the pool (every FLORES dev English line is kept out of it), as a
miner's sources mostly have no translation on the other side: any pair they form is a false one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..datasets import Flores200, TatoebaV1
from ..datasets.base import AugmentedTargets, Bitext, text_checksum
from ..datasets.languages import resolve_language
from ..datasets.ntrex import Ntrex128
from ..errors import BadInputError, MissingResourceError
from ..paths import data_dirs
from .config import DISTRACTOR_SOURCES, StudyConfig

ENGLISH = "eng_Latn"


def _norm(line: str) -> str:
    return " ".join(line.split())


@dataclass
class LanguageData:
    lang: str  # FLORES-200 code
    flores: Bitext  # devtest[:flores_lines] -> eng_Latn
    ntrex: Bitext | None
    tatoeba: Bitext | None
    unpaired: list[str] = field(default_factory=list)  # FLORES dev sources without a translation in the pool

    @property
    def gold_sources(self) -> list[tuple[str, Bitext]]:
        return [("flores", self.flores)] + ([("ntrex", self.ntrex)] if self.ntrex is not None else [])


@dataclass
class Distractors:
    lines: list[str]
    per_source: dict[str, int]  # lines taken from each source
    available: dict[str, int]  # distinct lines each source offered (after removing gold)

    @property
    def checksum(self) -> str:
        return text_checksum(self.lines)


@dataclass
class StudyData:
    languages: list[LanguageData]
    augmented: dict[str, AugmentedTargets]  # style -> negatives of the FLORES devtest English used
    distractors: Distractors
    notes: list[str] = field(default_factory=list)

    def english_sides(self) -> list[str]:
        """Every English line the study encodes (gold sides, negatives, Tatoeba, distractors)."""
        out: list[str] = []
        for ld in self.languages:
            for _, bt in ld.gold_sources:
                out += bt.tgt
            if ld.tatoeba is not None:
                out += ld.tatoeba.tgt
        for aug in self.augmented.values():
            out += aug.lines
        return out + self.distractors.lines

    @property
    def checksum(self) -> str:
        """One digest of all the text a study scores (the data part of its records' signatures)."""
        h = hashlib.sha256()
        for ld in self.languages:
            for _, bt in ld.gold_sources:
                h.update(bt.checksum.encode())
            if ld.tatoeba is not None:
                h.update(ld.tatoeba.checksum.encode())
            if ld.unpaired:  # only then: the checksums of studies without them stay as they were
                h.update(text_checksum(ld.unpaired).encode())
        for style in sorted(self.augmented):
            h.update(self.augmented[style].checksum.encode())
        h.update(self.distractors.checksum.encode())
        return h.hexdigest()[:12]


def _head(bt: Bitext, n: int) -> Bitext:
    if not n or len(bt) <= n:
        return bt
    return dataclasses.replace(bt, split=f"{bt.split}[:{n}]", src=bt.src[:n], tgt=bt.tgt[:n])


def read_source(name: str, roots: list[Path]) -> list[str]:
    """Distinct whitespace-normalised lines of one distractor source, from the first data root that has it."""
    for root in roots:
        files = sorted(f for pat in DISTRACTOR_SOURCES[name] for f in root.glob(pat) if f.is_file())
        if files:
            seen: dict[str, None] = {}
            for f in files:
                for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
                    line = _norm(line)
                    if line:
                        seen.setdefault(line, None)
            return list(seen)
    raise MissingResourceError(f"distractor source '{name}' ({', '.join(DISTRACTOR_SOURCES[name])}) is not under any "
                               f"data root ({', '.join(map(str, roots)) or 'none'}); set XSIMPP_DATA_DIR or drop it")


def build_distractors(cfg: StudyConfig, exclude: set[str], roots: list[Path]) -> Distractors:
    """The pool: every line of ``whole_sources``, then a seeded sample of ``fill_sources`` up to
    ``cfg.distractors`` lines; no line in ``exclude`` (normalised), no line twice."""
    taken: dict[str, None] = {}
    per_source: dict[str, int] = {}
    available: dict[str, int] = {}
    for name in cfg.whole_sources:
        lines = [ln for ln in read_source(name, roots) if ln not in exclude and ln not in taken]
        available[name] = len(lines)
        lines = lines[: max(0, cfg.distractors - len(taken))]
        taken.update(dict.fromkeys(lines))
        per_source[name] = len(lines)
    pool: list[tuple[str, str]] = []
    for name in cfg.fill_sources:
        lines = [ln for ln in read_source(name, roots) if ln not in exclude and ln not in taken]
        available[name] = len(lines)
        pool += [(name, ln) for ln in lines]
    # dedupe across fill sources, keeping the first source's claim
    seen: set[str] = set()
    pool = [(s, ln) for s, ln in pool if not (ln in seen or seen.add(ln))]
    need = cfg.distractors - len(taken)
    if need > len(pool):
        raise BadInputError(f"the distractor sources offer {len(taken) + len(pool)} distinct lines without the gold, "
                            f"fewer than [mining] distractors = {cfg.distractors}; add sources or lower it")
    pick = np.sort(np.random.default_rng(cfg.seed).choice(len(pool), size=max(need, 0), replace=False))
    for i in pick:
        s, ln = pool[int(i)]
        taken[ln] = None
        per_source[s] = per_source.get(s, 0) + 1
    return Distractors(list(taken), per_source, available)


def load_study_data(cfg: StudyConfig, data_dir=None) -> StudyData:
    """Every text the study needs, read and checked (unknown languages, missing files, too few
    distractors fail here, before any model is loaded)."""
    from .. import augment
    from ..tasks.xsim import find_augmented  # the negatives `xsimpp eval --augmented auto --style` finds

    codes = []
    for c in cfg.languages:
        code = resolve_language(str(c))
        if code == ENGLISH:
            raise BadInputError("English is the pivot of every pair; leave it out of [study] languages")
        if code in codes:
            raise BadInputError(f"[study] languages lists {code} twice")
        codes.append(code)
    flores = Flores200("devtest", data_dir)
    dev = Flores200("dev", data_dir) if cfg.unpaired_sources else None
    ntrex = Ntrex128("test", data_dir)
    ntrex_langs = set(ntrex.languages()) if ntrex.is_available() else set()
    tatoeba = TatoebaV1("test", data_dir)
    tatoeba_langs = {}
    if cfg.tatoeba and tatoeba.is_available():
        for t in tatoeba.languages():
            try:
                tatoeba_langs.setdefault(resolve_language(t), t)
            except Exception:  # a Tatoeba code with no FLORES language
                continue
    notes = []
    if not ntrex_langs:
        notes.append("NTREX-128 is not under any data root: the ground truth is FLORES gold only")
    languages = []
    for code in codes:
        fl = _head(flores.bitext(code, ENGLISH), cfg.flores_lines)
        nt = _head(ntrex.bitext(code, ENGLISH), cfg.ntrex_lines) if code in ntrex_langs else None
        tt = None
        if code in tatoeba_langs:
            tt = _head(tatoeba.bitext(tatoeba_langs[code], "eng"), cfg.tatoeba_lines)
        unpaired = dev.sentences(code)[: cfg.unpaired_sources] if dev is not None else []
        languages.append(LanguageData(code, fl, nt, tt, unpaired))
    no_tat = [ld.lang for ld in languages if ld.tatoeba is None]
    if cfg.tatoeba and no_tat:
        notes.append(f"no Tatoeba v1 pairs for {', '.join(no_tat)} (Tatoeba's 'cmn' is left out: it could be "
                     "zho_Hans or zho_Hant); the Tatoeba proxy is ranked on the other languages only")
    missing_nt = [ld.lang for ld in languages if ld.ntrex is None]
    if missing_nt and ntrex_langs:
        notes.append(f"no NTREX-128 file for {', '.join(missing_nt)}: FLORES gold only there")
    augmented = {}
    for style in cfg.xsimpp_styles:
        try:
            aug = find_augmented("auto", flores, ENGLISH, (), style)
        except MissingResourceError:
            # A style the config asks for is built, not left out: a cold run measures what a warm one
            # does. The same build as `xsimpp augment flores200 --split devtest --style S` (seed 0),
            # in the folder `--augmented auto` reads, so `xsimpp eval` reuses it.
            t0 = time.perf_counter()
            print(f"building the {style}-style xsim++ negatives of FLORES devtest English (once; "
                  f"= xsimpp augment flores200 --split devtest --style {style}) ...", file=sys.stderr, flush=True)
            built, where = augment.augment_flores_english(flores.sentences(ENGLISH), "devtest", style=style,
                                                  progress=sys.stderr.isatty())
            notes.append(f"built the {style}-style xsim++ negatives of FLORES devtest ({len(built.variants)} lines, "
                         f"{time.perf_counter() - t0:.0f} s) in {where}")
            aug = find_augmented("auto", flores, ENGLISH, (), style)
        # as `xsimpp eval --limit`: only the negatives of the gold targets kept
        kept = {t.strip() for t in languages[0].flores.tgt}
        lines = [ln for ln in aug.lines if aug.errtypes[ln.strip()]["src"].strip() in kept]
        aug = dataclasses.replace(aug, split=languages[0].flores.split, lines=lines,
                                  errtypes={ln.strip(): aug.errtypes[ln.strip()] for ln in lines})
        aug.check_sources(languages[0].flores.tgt, "the FLORES devtest English")
        augmented[style] = aug
    # Nothing of any gold set may be a distractor: every English line of FLORES devtest (the xsim
    # targets, used or not) and of the gold sides used here.
    exclude = {_norm(t) for t in flores.sentences(ENGLISH)}
    if dev is not None:  # the unpaired sources' translations
        exclude.update(_norm(t) for t in dev.sentences(ENGLISH))
    for ld in languages:
        for _, bt in ld.gold_sources:
            exclude.update(_norm(t) for t in bt.tgt)
    distractors = build_distractors(cfg, exclude, data_dirs(data_dir))
    return StudyData(languages, augmented, distractors, notes)
