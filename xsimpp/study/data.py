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
import sys
import time
from dataclasses import dataclass, field

from ..datasets import Flores200, TatoebaV1
from ..datasets.base import AugmentedTargets, Bitext, text_checksum
from ..datasets.languages import resolve_language
from ..datasets.pool import ENGLISH, Distractors, build_distractors
from ..errors import BadInputError, MissingResourceError
from ..paths import data_dirs
from ..tasks.mining import MiningData, MiningLanguage, gold_languages, head, source_view, with_near_duplicates
from .target_negatives import augment_flores_target
from .config import StudyConfig, check_target, gold_flores_lines, mining_knobs, proxies_apart


@dataclass
class LanguageData(MiningLanguage):
    """A language's mining gold and unpaired sources (``MiningLanguage``), its Tatoeba v1 pairs,
    and the FLORES lines its xsim and xsim++ proxies score: ``proxy``, or the FLORES gold itself
    when None (the default: a gold offset of 0)."""

    tatoeba: Bitext | None = None
    proxy: Bitext | None = None

    @property
    def proxy_lines(self) -> Bitext:
        return self.proxy if self.proxy is not None else self.flores


@dataclass
class StudyData:
    languages: list[LanguageData]
    augmented: dict[str, AugmentedTargets]  # style -> negatives of the FLORES devtest target lines used
    distractors: Distractors
    notes: list[str] = field(default_factory=list)
    target: str = ENGLISH  # the language every gold pair translates into; the distractors' language
    # (task proxy column, language) -> (data, settings) its task loaded and checked ([[proxies.task]])
    task_proxies: dict[tuple[str, str], tuple] = field(default_factory=dict)
    source_view: dict = field(default_factory=dict)  # the mining records' signature view (tasks.mining.source_view)

    def mining_data(self, name: str, lang: LanguageData) -> MiningData:
        """The mining-f1 task's data for one language, signed as every study record is: the study's
        name, split ``gold+distractors`` and the checksum of all the study scores."""
        return MiningData([lang], self.distractors, self.target, dataset=f"study:{name}",
                          split="gold+distractors", checksum=self.checksum, source_view=self.source_view)

    def target_sides(self) -> list[str]:
        """Every target-language line the study encodes (gold sides, negatives, Tatoeba, distractors)."""
        out: list[str] = []
        for ld in self.languages:
            for _, bt in ld.gold_sources:
                out += bt.tgt
            if ld.proxy is not None:
                out += ld.proxy.tgt
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
            if ld.proxy is not None:  # likewise: the proxies' own lines, apart from the gold
                h.update(f"proxy:{ld.proxy.checksum}".encode())
        for style in sorted(self.augmented):
            h.update(self.augmented[style].checksum.encode())
        h.update(self.distractors.checksum.encode())
        if self.target != ENGLISH:  # only then: English studies' checksums stay as they were
            h.update(f"target:{self.target}".encode())
        return h.hexdigest()[:12]


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
    gold, notes, exclude = gold_languages(codes, target, gold_flores_lines(cfg), cfg.ntrex_lines, cfg.unpaired_sources,
                                          data_dir, cfg.flores_gold_offset, flores_split=cfg.flores_gold_split,
                                          ntrex_sample=cfg.ntrex_sample, seed=cfg.seed, tatoeba_gold=cfg.tatoeba_gold)
    tatoeba = TatoebaV1("test", data_dir)
    tatoeba_langs = {}
    if cfg.tatoeba and target != ENGLISH:
        notes.insert(0, f"the Tatoeba proxy is off: Tatoeba v1 pairs every language with English, so it has no "
                        f"X-{target} pairs")
    elif cfg.tatoeba and tatoeba.is_available():
        for t in tatoeba.languages():
            try:
                tatoeba_langs.setdefault(resolve_language(t), t)
            except Exception:  # a Tatoeba code with no FLORES language
                continue
    languages = []
    for g in gold:
        tt = head(tatoeba.bitext(tatoeba_langs[g.lang], "eng"), cfg.tatoeba_lines) if g.lang in tatoeba_langs else None
        # with a gold offset (or dev gold) the proxies keep the first flores_lines lines, the gold lies elsewhere
        proxy = head(flores.bitext(g.lang, target), cfg.flores_lines) if proxies_apart(cfg) else None
        languages.append(LanguageData(g.lang, g.flores, g.ntrex, g.unpaired, tatoeba_gold=g.tatoeba_gold, tatoeba=tt,
                                      proxy=proxy))
    no_tat = [ld.lang for ld in languages if ld.tatoeba is None]
    if cfg.tatoeba and no_tat and target == ENGLISH:  # before the gold's per-language NTREX note, as always
        per_language = [n for n in notes if n.startswith("no NTREX-128 file for")]
        notes = [n for n in notes if n not in per_language] + [
            f"no Tatoeba v1 pairs for {', '.join(no_tat)} (Tatoeba's 'cmn' is left out: it could be "
            "zho_Hans or zho_Hant); the Tatoeba proxy is ranked on the other languages only"] + per_language
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
        # as `xsimpp eval --limit`: only the negatives of the target lines the proxies score kept
        kept = {t.strip() for t in languages[0].proxy_lines.tgt}
        lines = [ln for ln in aug.lines if aug.errtypes[ln.strip()]["src"].strip() in kept]
        aug = dataclasses.replace(aug, split=languages[0].proxy_lines.split, lines=lines,
                                  errtypes={ln.strip(): aug.errtypes[ln.strip()] for ln in lines})
        aug.check_sources(languages[0].proxy_lines.tgt, gold_lines)
        augmented[style] = aug
    source = dataclasses.replace(mining_knobs(cfg)[0], data_dir=data_dir)  # `natural` reads the study's data roots
    distractors = with_near_duplicates(source, languages, build_distractors(
        list(cfg.whole_sources), list(cfg.fill_sources), cfg.distractors, cfg.seed, exclude, data_dirs(data_dir), target),
        cfg.seed, exclude, target)
    proxies = load_task_proxies(cfg, languages, target, data_dir)
    return StudyData(languages, augmented, distractors, notes + distractors.notes, target, proxies, source_view(source))


def load_task_proxies(cfg: StudyConfig, languages: list[LanguageData], target: str, data_dir) -> dict:
    """Each ``[[proxies.task]]`` task's data and settings per language, loaded and checked by the
    task itself (``prepare``) on the language's FLORES-200 devtest lines into the target."""
    from ..tasks import registry
    from ..tasks.base import knob_names
    from ..tasks.runner import prepare

    out = {}
    for tp in cfg.task_proxies:
        task = registry.task(tp.task)
        accepted = set(knob_names(task.Source))
        for ld in languages:
            knobs = dict(dataset="flores200", split="devtest", langs=ld.lang, target=target, data_dir=data_dir,
                         limit=cfg.flores_lines or None)
            knobs = {k: v for k, v in knobs.items() if k in accepted}
            try:
                data, settings, _ = prepare(task, **knobs, **tp.options)
            except BadInputError as e:
                raise BadInputError(f"[[proxies.task]] {tp.column}: {e}") from None
            out[(tp.column, ld.lang)] = (data, settings)
    return out
