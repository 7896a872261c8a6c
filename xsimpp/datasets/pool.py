"""The distractor pool of mining ground truths: real target-language lines that hide the gold
pairs (``xsimpp mining-f1``, ``xsimpp study``'s ground truth).

A source is a split of a registered dataset (``xsimpp.datasets.pool_sources``: "flores200-dev" is
FLORES-200's dev split, "ntrex128" NTREX-128's test split), and its lines are the files that split's
``Dataset.pool_files`` names: the layout is the dataset's own, declared once. NTREX and FLORES dev
are news/wiki text like the gold, OLDI seed is Wikipedia; Tatoeba is short everyday sentences. The
pool holds distinct whitespace-normalised lines, never one of ``exclude`` (the gold target sides),
never one twice: every line of the ``whole`` sources first, then a seeded sample of the ``fill``
sources up to the size asked for.

With a non-English target T every source offers its T side (the files of the dataset's codes that
``resolve_language`` maps to T: NTREX "swa", Tatoeba "fra"); a source without T's side adds no
line (OLDI seed has eng/fur/ita only), with a note, and never English in its place.

Near-duplicates (``add_near_duplicates``): a pool of unrelated lines cannot make a miner pay for
confusing a translation with an almost-identical sentence, which web-scale mining meets constantly.
N lines per gold target line are added on top of the pool, of one kind:
- ``natural``: the N lines of the distractor sources closest to the gold line by chrF (sacrebleu)
  that are not already in the pool or gold: real text, but in these corpora mostly a sentence on the
  same topic rather than a copy;
- ``deletion``: the gold line with one contiguous run of a quarter to a half of its words deleted (a
  partial translation, what margin mining is known to pick up). Not xsim++'s generator (no causality,
  entity or number edit), so a proxy is not scored by its own negatives; what it shares with xsim++
  is only that a model must see that something is missing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import BadInputError, MissingResourceError
from . import pool_sources
from .base import ENGLISH, Dataset, text_checksum


def normalise(line: str) -> str:
    """The form a pool line is compared in (runs of whitespace as one space)."""
    return " ".join(line.split())


@dataclass
class Distractors:
    lines: list[str]
    per_source: dict[str, int]  # lines taken from each source
    available: dict[str, int]  # distinct lines each source offered (after removing gold)
    notes: list[str] = field(default_factory=list)  # a non-English target's missing sides and shortfall

    @property
    def checksum(self) -> str:
        return text_checksum(self.lines)


def check_sources(names, where: str) -> None:
    known = pool_sources()
    for s in names:
        if s not in known:
            raise BadInputError(f"{where}: distractor source '{s}' is unknown (known: {', '.join(known)})")


def _split_under(name: str, root: Path) -> Dataset:
    """The dataset split that distractor source ``name`` is, searched for under ``root`` alone."""
    cls, split = pool_sources()[name]
    return cls(split, roots=[root])


def read_source(name: str, roots: list[Path], target: str = ENGLISH) -> list[str] | None:
    """Distinct whitespace-normalised ``target`` lines of one distractor source, from the first data
    root that has them; None when the source is there but has no ``target`` side (never English)."""
    for root in roots:
        files = _split_under(name, root).pool_files(target)
        if files:
            seen: dict[str, None] = {}
            for f in files:
                for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
                    line = normalise(line)
                    if line:
                        seen.setdefault(line, None)
            return list(seen)
    if target != ENGLISH and any(_split_under(name, root).pool_files(ENGLISH) for root in roots):
        return None
    cls, split = pool_sources()[name]
    raise MissingResourceError(f"distractor source '{name}' ({cls.title} {split}) is not under any data root "
                               f"({', '.join(map(str, roots)) or 'none'}); {cls.download_hint}, or drop the source")


def build_distractors(whole: list[str], fill: list[str], size: int, seed: int, exclude: set[str], roots: list[Path],
                      target: str = ENGLISH) -> Distractors:
    """The pool: every line of ``whole``, then a seeded sample of ``fill`` up to ``size`` lines; no
    line in ``exclude`` (normalised), no line twice. All lines are in ``target``: a source without
    its side adds none, and a non-English pool that falls short of ``size`` takes every line there
    is, with a note (English: an error)."""
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

    for name in whole:
        lines = lines_of(name)
        available[name] = len(lines)
        lines = lines[: max(0, size - len(taken))]
        taken.update(dict.fromkeys(lines))
        per_source[name] = len(lines)
    pool: list[tuple[str, str]] = []
    for name in fill:
        lines = lines_of(name)
        available[name] = len(lines)
        pool += [(name, ln) for ln in lines]
    # dedupe across fill sources, keeping the first source's claim
    seen: set[str] = set()
    pool = [(s, ln) for s, ln in pool if not (ln in seen or seen.add(ln))]
    need = size - len(taken)
    if need > len(pool):
        offer = f"the distractor sources offer {len(taken) + len(pool)} distinct lines without the gold"
        if target == ENGLISH:
            raise BadInputError(f"{offer}, fewer than the {size} distractors asked for; add sources or lower it")
        notes.append(f"{offer} in {target}, fewer than the {size} distractors asked for: the pool holds "
                     f"all {len(taken) + len(pool)} (no English line stands in for a missing {target} one)")
        need = len(pool)
    pick = np.sort(np.random.default_rng(seed).choice(len(pool), size=max(need, 0), replace=False))
    for i in pick:
        s, ln = pool[int(i)]
        taken[ln] = None
        per_source[s] = per_source.get(s, 0) + 1
    return Distractors(list(taken), per_source, available, notes)


NEAR_DUPLICATE_KINDS = ("deletion", "natural")
_NATURAL_SHORTLIST = 50  # chrF is computed on the char n-gram TF-IDF nearest candidates only


def deletion_variants(line: str, n: int, rng: random.Random) -> list[str]:
    """Up to ``n`` distinct copies of ``line`` with one contiguous run of 1/4 to 1/2 of its words
    deleted (lines of fewer than 4 words give none)."""
    words = line.split()
    if len(words) < 4:
        return []
    spans = [(start, length) for length in range(max(1, round(len(words) / 4)), len(words) // 2 + 1)
             for start in range(len(words) - length + 1)]
    rng.shuffle(spans)
    out: dict[str, None] = {}
    for start, length in spans:
        if len(out) == n:
            break
        out.setdefault(" ".join(words[:start] + words[start + length:]), None)
    return list(out)


def natural_neighbours(gold: list[str], candidates: list[str], n: int) -> list[list[str]]:
    """For each gold line the ``n`` candidates with the highest sentence chrF to it (sacrebleu),
    among the TF-IDF (character 3-5-grams, scikit-learn) nearest ``_NATURAL_SHORTLIST``."""
    from sacrebleu.metrics import CHRF
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not candidates or not gold:
        return [[] for _ in gold]
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), min_df=1, sublinear_tf=True)
    cand = vec.fit_transform(candidates)
    sims = (vec.transform(gold) @ cand.T).toarray()
    chrf = CHRF()
    out = []
    for i, line in enumerate(gold):
        short = np.argsort(-sims[i], kind="stable")[: max(n, _NATURAL_SHORTLIST)]
        score = {int(j): chrf.sentence_score(candidates[j], [line]).score for j in short}
        out.append([candidates[j] for j in sorted(score, key=lambda j: (-score[j], j))[:n]])  # ties: corpus order
    return out


def add_near_duplicates(pool: Distractors, gold: list[str], n: int, kind: str, seed: int, exclude: set[str],
                        roots: list[Path], sources: list[str], target: str = ENGLISH) -> Distractors:
    """``pool`` plus ``n`` near-duplicates of every distinct gold target line (see the module
    docstring), none a gold line, an excluded line or a pool line; appended after the pool, so the
    pool itself is the same at every density."""
    if kind not in NEAR_DUPLICATE_KINDS:
        raise BadInputError(f"near-duplicate kind '{kind}' is not one of {', '.join(NEAR_DUPLICATE_KINDS)}")
    if n <= 0:
        return pool
    gold = list(dict.fromkeys(normalise(g) for g in gold))
    taken = set(pool.lines) | exclude | set(gold)
    if kind == "deletion":
        per_gold = [deletion_variants(g, n + 4, random.Random(f"{seed}:{g}")) for g in gold]
    else:
        cands: dict[str, None] = {}
        for name in sources:
            for ln in read_source(name, roots, target) or []:
                if ln not in taken:
                    cands.setdefault(ln, None)
        per_gold = natural_neighbours(gold, list(cands), n + 4)
    added: dict[str, None] = {}
    short = 0
    for variants in per_gold:
        fresh = [v for v in variants if v not in taken and v not in added][:n]
        short += n - len(fresh)
        added.update(dict.fromkeys(fresh))
    notes = list(pool.notes)
    if short:
        notes.append(f"{short} of the {n * len(gold)} near-duplicates ({kind}) asked for could not be made (short "
                     f"or repeated gold lines): the pool has {len(added)}")
    key = f"near-duplicates:{kind}"
    return Distractors(pool.lines + list(added), {**pool.per_source, key: len(added)},
                       {**pool.available, key: len(added)}, notes)
