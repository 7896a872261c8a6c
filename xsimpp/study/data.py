"""The study's data, read and checked before any model loads: per language the FLORES-200 devtest
bitext (xsim, xsim++, gold), the NTREX-128 bitext (gold), the Tatoeba v1 bitext (proxy); the
augmented target lines of each xsim++ style; and the distractor pool that hides the gold.

The mining task is BUCC's, built from real text: a language's gold pairs (FLORES devtest lines
and NTREX lines, as sources and their translation in the target) are mined against their target
lines *plus* the distractor pool, one pool shared by every language. The pool holds distinct
target-language lines of the sources the configuration names, never a line of any gold target side
(whitespace-normalised comparison), nor any FLORES devtest line of the target (the xsim targets).

The target is English unless ``[study] target`` names another FLORES-200 language T: then the gold
is FLORES devtest X->T (multi-way: the same ids) and NTREX-128 X->T where NTREX has both; the xsim++
negatives are T's strict ones (``xsimpp augment flores200 --lang T``, built if missing); the pool
holds the T side of the sources that have one (``config.TARGET_SIDES``: NTREX, FLORES dev, Tatoeba's
T side of its T-English pairs; OLDI seed only for fur/ita) -- never English in its place: a pool
smaller than ``[mining] distractors`` is said in a note; and the Tatoeba proxy (X-English pairs) is
off. With English everything (data, checksums) is as before targets existed.

With ``[mining] unpaired_sources = N`` a language also mines its first N FLORES *dev* source lines,
whose translations are nowhere in the pool (every FLORES dev line of the target is kept out of it),
as a miner's sources mostly have no translation on the other side: any pair they form is a false one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
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
from .target_negatives import augment_flores_target
from .config import DISTRACTOR_SOURCES, ENGLISH, TARGET_SIDES, StudyConfig, check_target


def _norm(line: str) -> str:
    return " ".join(line.split())


@dataclass
class LanguageData:
    lang: str  # FLORES-200 code
    flores: Bitext  # devtest[:flores_lines] -> the target (eng_Latn unless [study] target says otherwise)
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
    notes: list[str] = field(default_factory=list)  # a non-English target's missing sides and shortfall

    @property
    def checksum(self) -> str:
        return text_checksum(self.lines)


@dataclass
class StudyData:
    languages: list[LanguageData]
    augmented: dict[str, AugmentedTargets]  # style -> negatives of the FLORES devtest target lines used
    distractors: Distractors
    notes: list[str] = field(default_factory=list)
    target: str = ENGLISH  # the language every gold pair translates into; the distractors' language

    def target_sides(self) -> list[str]:
        """Every target-language line the study encodes (gold sides, negatives, Tatoeba, distractors)."""
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
        if self.target != ENGLISH:  # only then: English studies' checksums stay as they were
            h.update(f"target:{self.target}".encode())
        return h.hexdigest()[:12]


def _head(bt: Bitext, n: int) -> Bitext:
    if not n or len(bt) <= n:
        return bt
    return dataclasses.replace(bt, split=f"{bt.split}[:{n}]", src=bt.src[:n], tgt=bt.tgt[:n])


def _source_files(name: str, root: Path, target: str) -> list[Path]:
    """The files of one distractor source under ``root`` holding ``target`` lines."""
    if target == ENGLISH:
        return sorted(f for pat in DISTRACTOR_SOURCES[name] for f in root.glob(pat) if f.is_file())
    from ..datasets.languages import resolve_language

    files = set()
    for pat in TARGET_SIDES[name]:
        # "{code}" once as a named group, then as a back-reference: "fra-eng/*.fra", never "fra-eng/*.eng"
        parts = pat.split("{code}")
        regex = (re.escape(parts[0]) + "(?P<code>[^/]+)" + re.escape(parts[1])
                 + "".join("(?P=code)" + re.escape(x) for x in parts[2:]))
        regex = re.compile(regex.replace(re.escape("*"), "[^/]*"))
        for f in root.glob(pat.replace("{code}", "*")):
            m = regex.fullmatch(f.relative_to(root).as_posix())
            if not m or not f.is_file():
                continue
            try:
                if resolve_language(m.group("code")) == target:
                    files.add(f)
            except BadInputError:  # a code with no (or no single) FLORES language, e.g. Tatoeba's cmn
                continue
    return sorted(files)


def read_source(name: str, roots: list[Path], target: str = ENGLISH) -> list[str] | None:
    """Distinct whitespace-normalised ``target`` lines of one distractor source, from the first data
    root that has them; None when the source is there but has no ``target`` side (never English)."""
    for root in roots:
        files = _source_files(name, root, target)
        if files:
            seen: dict[str, None] = {}
            for f in files:
                for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
                    line = _norm(line)
                    if line:
                        seen.setdefault(line, None)
            return list(seen)
    if target != ENGLISH and any(_source_files(name, root, ENGLISH) for root in roots):
        return None
    raise MissingResourceError(f"distractor source '{name}' ({', '.join(DISTRACTOR_SOURCES[name])}) is not under any "
                               f"data root ({', '.join(map(str, roots)) or 'none'}); set XSIMPP_DATA_DIR or drop it")


def build_distractors(cfg: StudyConfig, exclude: set[str], roots: list[Path], target: str = ENGLISH) -> Distractors:
    """The pool: every line of ``whole_sources``, then a seeded sample of ``fill_sources`` up to
    ``cfg.distractors`` lines; no line in ``exclude`` (normalised), no line twice. All lines are in
    ``target``: a source without its side adds none, and a non-English pool that falls short of
    ``cfg.distractors`` takes every line there is, with a note (English: an error, as before)."""
    taken: dict[str, None] = {}
    per_source: dict[str, int] = {}
    available: dict[str, int] = {}
    notes: list[str] = []

    def lines_of(name: str) -> list[str]:
        lines = read_source(name, roots, target)
        if lines is None:
            notes.append(f"distractor source '{name}' has no {target} side: it adds no line to the {target} pool")
            return []
        return [ln for ln in lines if ln not in exclude and ln not in taken]

    for name in cfg.whole_sources:
        lines = lines_of(name)
        available[name] = len(lines)
        lines = lines[: max(0, cfg.distractors - len(taken))]
        taken.update(dict.fromkeys(lines))
        per_source[name] = len(lines)
    pool: list[tuple[str, str]] = []
    for name in cfg.fill_sources:
        lines = lines_of(name)
        available[name] = len(lines)
        pool += [(name, ln) for ln in lines]
    # dedupe across fill sources, keeping the first source's claim
    seen: set[str] = set()
    pool = [(s, ln) for s, ln in pool if not (ln in seen or seen.add(ln))]
    need = cfg.distractors - len(taken)
    if need > len(pool):
        offer = f"the distractor sources offer {len(taken) + len(pool)} distinct lines without the gold"
        if target == ENGLISH:
            raise BadInputError(f"{offer}, fewer than [mining] distractors = {cfg.distractors}; add sources or lower it")
        notes.append(f"{offer} in {target}, fewer than [mining] distractors = {cfg.distractors}: the pool holds "
                     f"all {len(taken) + len(pool)} (no English line stands in for a missing {target} one)")
        need = len(pool)
    pick = np.sort(np.random.default_rng(cfg.seed).choice(len(pool), size=max(need, 0), replace=False))
    for i in pick:
        s, ln = pool[int(i)]
        taken[ln] = None
        per_source[s] = per_source.get(s, 0) + 1
    return Distractors(list(taken), per_source, available, notes)


def load_study_data(cfg: StudyConfig, data_dir=None) -> StudyData:
    """Every text the study needs, read and checked (unknown languages, missing files, too few
    distractors fail here, before any model is loaded)."""
    from .. import augment
    from ..tasks.xsim import find_augmented  # the negatives `xsimpp eval --augmented auto --style` finds

    target = check_target(cfg)
    codes = []
    for c in cfg.languages:
        code = resolve_language(str(c))
        if code == target:  # only English gets here: check_target refused another target among the languages
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
    notes = []
    if cfg.tatoeba and target != ENGLISH:
        notes.append(f"the Tatoeba proxy is off: Tatoeba v1 pairs every language with English, so it has no "
                     f"X-{target} pairs")
    elif cfg.tatoeba and tatoeba.is_available():
        for t in tatoeba.languages():
            try:
                tatoeba_langs.setdefault(resolve_language(t), t)
            except Exception:  # a Tatoeba code with no FLORES language
                continue
    if not ntrex_langs:
        notes.append("NTREX-128 is not under any data root: the ground truth is FLORES gold only")
    elif target not in ntrex_langs:
        notes.append(f"NTREX-128 has no {target} side: the ground truth is FLORES gold only")
    languages = []
    for code in codes:
        fl = _head(flores.bitext(code, target), cfg.flores_lines)
        nt = (_head(ntrex.bitext(code, target), cfg.ntrex_lines) if code in ntrex_langs and target in ntrex_langs
              else None)
        tt = None
        if code in tatoeba_langs:
            tt = _head(tatoeba.bitext(tatoeba_langs[code], "eng"), cfg.tatoeba_lines)
        unpaired = dev.sentences(code)[: cfg.unpaired_sources] if dev is not None else []
        languages.append(LanguageData(code, fl, nt, tt, unpaired))
    no_tat = [ld.lang for ld in languages if ld.tatoeba is None]
    if cfg.tatoeba and no_tat and target == ENGLISH:
        notes.append(f"no Tatoeba v1 pairs for {', '.join(no_tat)} (Tatoeba's 'cmn' is left out: it could be "
                     "zho_Hans or zho_Hant); the Tatoeba proxy is ranked on the other languages only")
    missing_nt = [ld.lang for ld in languages if ld.ntrex is None]
    if missing_nt and target in ntrex_langs:
        notes.append(f"no NTREX-128 file for {', '.join(missing_nt)}: FLORES gold only there")
    gold_lines = "the FLORES devtest English" if target == ENGLISH else f"the FLORES devtest {target} lines"
    augmented = {}
    for style in cfg.xsimpp_styles:
        try:
            aug = find_augmented("auto", flores, target, (), style)
        except MissingResourceError:
            # A style the config asks for is built, not left out: a cold run measures what a warm one
            # does. The same build as `xsimpp augment flores200 --split devtest --style S` (seed 0;
            # `--lang T` for another target), in the folder `--augmented auto` reads, so `xsimpp eval`
            # reuses it.
            t0 = time.perf_counter()
            if target == ENGLISH:
                print(f"building the {style}-style xsim++ negatives of FLORES devtest English (once; "
                      f"= xsimpp augment flores200 --split devtest --style {style}) ...", file=sys.stderr, flush=True)
                built, where = augment.augment_flores_english(flores.sentences(ENGLISH), "devtest", style=style,
                                                              progress=sys.stderr.isatty())
            else:
                print(f"building the strict-style xsim++ negatives of FLORES devtest {target} (once; "
                      f"= xsimpp augment flores200 --split devtest --lang {target}) ...", file=sys.stderr, flush=True)
                built, where = augment_flores_target(target, "devtest", data_dir=data_dir,
                                                             progress=sys.stderr.isatty())
            notes.append(f"built the {style}-style xsim++ negatives of FLORES devtest"
                         f"{'' if target == ENGLISH else ' ' + target} ({len(built.variants)} lines, "
                         f"{time.perf_counter() - t0:.0f} s) in {where}")
            aug = find_augmented("auto", flores, target, (), style)
        # as `xsimpp eval --limit`: only the negatives of the gold targets kept
        kept = {t.strip() for t in languages[0].flores.tgt}
        lines = [ln for ln in aug.lines if aug.errtypes[ln.strip()]["src"].strip() in kept]
        aug = dataclasses.replace(aug, split=languages[0].flores.split, lines=lines,
                                  errtypes={ln.strip(): aug.errtypes[ln.strip()] for ln in lines})
        aug.check_sources(languages[0].flores.tgt, gold_lines)
        augmented[style] = aug
    # Nothing of any gold set may be a distractor: every target line of FLORES devtest (the xsim
    # targets, used or not) and of the gold sides used here.
    exclude = {_norm(t) for t in flores.sentences(target)}
    if dev is not None:  # the unpaired sources' translations
        exclude.update(_norm(t) for t in dev.sentences(target))
    for ld in languages:
        for _, bt in ld.gold_sources:
            exclude.update(_norm(t) for t in bt.tgt)
    distractors = build_distractors(cfg, exclude, data_dirs(data_dir), target)
    return StudyData(languages, augmented, distractors, notes + distractors.notes, target)
