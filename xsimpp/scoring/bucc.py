"""BUCC 2018 bitext mining (Zweigenbaum et al. 2018) scored as LASER/XTREME do, and the pieces of
Keung et al. (2020)'s protocol. Arrays and strings in, numbers out; no I/O.

Pipeline: ``mine_candidates`` (margin kNN both ways; candidates = forward best per source ∪
backward best per target, the max score kept per pair; ``forward_only``: each source's best alone,
Keung et al.'s retrieval) -> optional ``one_to_one`` (the LASER /
XTREME scripts' greedy selection) -> optional ``expand_duplicates`` (mining
ran over unique texts) -> optional filters -> a threshold, chosen on gold (``tune_threshold``),
by a prior proportion (``keep_fraction_threshold``) or by cross-validation
(``cross_validate``) -> ``evaluate_threshold`` (precision, recall, F1 over (source, target) pairs).

Candidates are held as parallel arrays ``src``, ``tgt``, ``score`` sorted by score descending,
then source, then target index: a deterministic order that the sweep relies on.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..errors import BadInputError, MissingResourceError
from ..engine import DEFAULT_MARGIN, EngineConfig, check_margin, check_vectors_or_similarity, margin_knn
from ..engine.knn import MarginKNN


@dataclass(frozen=True)
class Candidates:
    src: np.ndarray  # (m,) int64 source index
    tgt: np.ndarray  # (m,) int64 target index
    score: np.ndarray  # (m,) float64 margin score (the engine's exact values), non-increasing
    k_fwd: int = 0  # neighbourhood sizes actually used (k clipped to the set sizes, as LASER does)
    k_bwd: int = 0

    def __len__(self) -> int:
        return int(len(self.score))

    def take(self, mask_or_idx: np.ndarray) -> "Candidates":
        return Candidates(self.src[mask_or_idx], self.tgt[mask_or_idx], self.score[mask_or_idx], self.k_fwd,
                          self.k_bwd)


def _sorted(src: np.ndarray, tgt: np.ndarray, score: np.ndarray, k_fwd: int, k_bwd: int) -> Candidates:
    order = np.lexsort((tgt, src, -score.astype(np.float64)))
    return Candidates(src[order].astype(np.int64), tgt[order].astype(np.int64), score[order].astype(np.float64),
                      k_fwd, k_bwd)


def unify_pairs(src: np.ndarray, tgt: np.ndarray, score: np.ndarray, k_fwd: int = 0, k_bwd: int = 0) -> Candidates:
    """One row per (src, tgt) pair with its highest score, sorted (score desc, src, tgt)."""
    src, tgt, score = np.asarray(src, np.int64), np.asarray(tgt, np.int64), np.asarray(score, np.float64)
    if not len(score):
        return _sorted(src, tgt, score, k_fwd, k_bwd)
    order = np.lexsort((-score.astype(np.float64), tgt, src))  # group by pair, best score first
    s, t, v = src[order], tgt[order], score[order]
    first = np.ones(len(s), dtype=bool)
    first[1:] = (s[1:] != s[:-1]) | (t[1:] != t[:-1])
    return _sorted(s[first], t[first], v[first], k_fwd, k_bwd)


def mine_candidates(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    margin: str = DEFAULT_MARGIN,
    k: int = 4,
    config: EngineConfig | None = None,
    forward_only: bool = False,
) -> Candidates:
    """Margin-scored candidate pairs, both directions (LASER mine_bitexts ``--retrieval max``
    without its one-to-one pass; XTREME's BUCC candidates).

    ``forward_only``: each source paired with its best target only (Keung et al. 2020, section 2:
    "each source sentence is paired with its nearest neighbor in the target language based on
    this score"); the margin still averages both sides' k-NN similarities, as their Eq. 1 does.

    Each direction uses ``min(k, size of the other side)`` neighbours, as LASER's mine_bitexts
    does, so a set smaller than k is scored instead of failing. The forward best of source i and
    the backward best of target j become candidates; a pair found both ways appears once, with
    the larger of its two scores (equal here, as the margin is symmetric in x and y; the max is
    the rule all the same, so a directional scorer would be handled).
    """
    check_margin(margin)
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise BadInputError(f"k must be a positive integer, got {k!r}")
    similarity = check_vectors_or_similarity(x, y, similarity)
    n_x, n_y = (len(x), len(y)) if similarity is None else similarity.shape
    k_fwd, k_bwd = (1, 1) if margin == "absolute" else (min(k, n_y), min(k, n_x))
    knn = margin_knn(x, y, similarity=similarity, margin=margin, k=k_fwd, k_bwd=k_bwd, backward=True, config=config)
    # Best per line: the first maximum among candidates ordered (similarity desc, index asc), so a
    # tie in margin score goes to the higher similarity, then to the lower index.
    fwd_tgt, fwd_score = knn.forward_best()
    rows_x, rows_y = np.arange(n_x), np.arange(n_y)
    if forward_only:
        return unify_pairs(rows_x, fwd_tgt, fwd_score, k_fwd, k_bwd)
    bwd_src, bwd_score = knn.backward_best()
    src = np.concatenate([rows_x, bwd_src])
    tgt = np.concatenate([fwd_tgt, rows_y])
    score = np.concatenate([fwd_score, bwd_score])
    return unify_pairs(src, tgt, score, k_fwd, k_bwd)


def one_to_one(cands: Candidates) -> Candidates:
    """Greedy one-to-one selection: walk the candidates best first and keep a pair only when
    neither its source nor its target was kept before (what LASER's mine_bitexts ``--retrieval
    max`` and XTREME's BUCC script do before thresholding). Our order is (score desc, source,
    target), so ties resolve deterministically where the references' unstable argsort does not."""
    seen_src: set[int] = set()
    seen_tgt: set[int] = set()
    keep = np.zeros(len(cands), dtype=bool)
    for n, (s, t) in enumerate(zip(cands.src.tolist(), cands.tgt.tolist())):
        if s not in seen_src and t not in seen_tgt:
            seen_src.add(s)
            seen_tgt.add(t)
            keep[n] = True
    return cands.take(keep)


RETRIEVALS = ("max", "fwd", "bwd", "intersect")  # LASER mine_bitexts' --retrieval choices


def check_selection(retrieval: str, threshold: float) -> None:
    """A known retrieval and a finite threshold, or one sentence."""
    if retrieval not in RETRIEVALS:
        raise BadInputError(f"unknown retrieval {retrieval!r}; choose one of {', '.join(RETRIEVALS)}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating)) \
            or not math.isfinite(threshold):
        raise BadInputError(f"the threshold must be a finite number, got {threshold!r}")


def select_pairs(knn: MarginKNN, retrieval: str = "max", threshold: float = 0.0) -> Candidates:
    """The pairs LASER's ``mine_bitexts --mode mine`` writes, from margin kNN both ways.

    ``fwd``: each source with its best target; ``bwd``: each target with its best source;
    ``intersect``: the forward pairs whose target's best source is that source; ``max`` (LASER's
    default): forward and backward bests together, walked best first with the one-to-one rule
    (``one_to_one``). Pairs scoring above ``threshold`` (strictly, as LASER) are kept, sorted by
    score descending. Two differences from LASER, both about order and filtering of its other
    modes: LASER applies the threshold and sorts only under ``max`` (its ``fwd``/``bwd``/
    ``intersect`` files come in input order, and users pipe them through ``sort -rn``); here every
    mode is thresholded and sorted the same way. Ties go to the lower source, then target index.
    """
    check_selection(retrieval, threshold)
    fwd_tgt, fwd_score = knn.forward_best()
    n_x = len(fwd_tgt)
    if retrieval == "fwd":
        cands = unify_pairs(np.arange(n_x), fwd_tgt, fwd_score)
    else:
        bwd_src, bwd_score = knn.backward_best()
        n_y = len(bwd_src)
        if retrieval == "bwd":
            cands = unify_pairs(bwd_src, np.arange(n_y), bwd_score)
        elif retrieval == "intersect":
            mutual = bwd_src[fwd_tgt] == np.arange(n_x)
            cands = unify_pairs(np.flatnonzero(mutual), fwd_tgt[mutual], fwd_score[mutual])
        else:
            cands = one_to_one(unify_pairs(np.concatenate([np.arange(n_x), bwd_src]),
                                           np.concatenate([fwd_tgt, np.arange(n_y)]),
                                           np.concatenate([fwd_score, bwd_score])))
    return cands.take(cands.score > threshold)


def pairs_tsv(cands: Candidates, src_texts: Sequence[str], tgt_texts: Sequence[str]) -> str:
    """``score<TAB>source<TAB>target`` lines, one per candidate in its order (LASER's mining output;
    the score is the exact float64 margin, printed in full)."""
    return "".join(f"{float(v)!r}\t{src_texts[s]}\t{tgt_texts[t]}\n"
                   for s, t, v in zip(cands.src.tolist(), cands.tgt.tolist(), cands.score.tolist()))


def unique_texts(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Distinct texts (first-occurrence order) and, per line, the index of its text."""
    index: dict[str, int] = {}
    inverse = np.fromiter((index.setdefault(t, len(index)) for t in texts), dtype=np.int64, count=len(texts))
    return list(index), inverse


def expand_duplicates(cands: Candidates, src_inverse: np.ndarray, tgt_inverse: np.ndarray) -> Candidates:
    """Map candidates mined over unique texts back to every line that carries those texts.

    Lines with the same text have the same vector, so no scorer can tell them apart: a text pair
    stands for all its line pairs, each with the text pair's score. LASER instead drops sentences
    that occur more than once, which loses their gold pairs; here none is lost.
    """
    src_lines = _groups(src_inverse)
    tgt_lines = _groups(tgt_inverse)
    if all(len(g) == 1 for g in src_lines) and all(len(g) == 1 for g in tgt_lines):
        flat_s = np.array([g[0] for g in src_lines], dtype=np.int64)
        flat_t = np.array([g[0] for g in tgt_lines], dtype=np.int64)
        return _sorted(flat_s[cands.src], flat_t[cands.tgt], cands.score, cands.k_fwd, cands.k_bwd)
    s_out, t_out, v_out = [], [], []
    for s, t, v in zip(cands.src, cands.tgt, cands.score):
        for a in src_lines[s]:
            for b in tgt_lines[t]:
                s_out.append(a)
                t_out.append(b)
                v_out.append(v)
    return _sorted(np.array(s_out, np.int64), np.array(t_out, np.int64), np.array(v_out, np.float64), cands.k_fwd,
                   cands.k_bwd)


def _groups(inverse: np.ndarray) -> list[list[int]]:
    inverse = np.asarray(inverse, dtype=np.int64)
    n = int(inverse.max()) + 1 if len(inverse) else 0
    groups: list[list[int]] = [[] for _ in range(n)]
    for line, u in enumerate(inverse):
        groups[u].append(line)
    return groups


# ----------------------------------------------------------------------------------------------
# gold, thresholds, precision / recall / F1


def gold_mask(cands: Candidates, gold_src: np.ndarray, gold_tgt: np.ndarray) -> np.ndarray:
    """Whether each candidate is a gold (source, target) pair."""
    gold = set(zip(np.asarray(gold_src).tolist(), np.asarray(gold_tgt).tolist()))
    return np.fromiter(((s, t) in gold for s, t in zip(cands.src.tolist(), cands.tgt.tolist())), dtype=bool,
                       count=len(cands))


@dataclass(frozen=True)
class PRF:
    threshold: float
    n_extracted: int
    n_correct: int
    n_gold: int

    @property
    def precision(self) -> float:
        return self.n_correct / self.n_extracted if self.n_extracted else 0.0

    @property
    def recall(self) -> float:
        return self.n_correct / self.n_gold if self.n_gold else 0.0

    @property
    def f1(self) -> float:
        # 2PR/(P+R) = 2c/(e+g): one exact-integer division, so equal F1s compare equal.
        return 2 * self.n_correct / (self.n_extracted + self.n_gold) if self.n_correct else 0.0


def _check_sorted(score: np.ndarray, is_gold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    score = np.asarray(score, dtype=np.float64)
    is_gold = np.asarray(is_gold, dtype=bool)
    if score.shape != is_gold.shape:
        raise BadInputError(f"{len(score)} scores but {len(is_gold)} gold flags")
    if len(score) > 1 and (np.diff(score) > 0).any():
        raise BadInputError("candidate scores must be sorted in descending order")
    return score, is_gold


def above_all(score: np.ndarray) -> float:
    """A threshold that extracts nothing: just above the best candidate (finite, unlike inf, so it
    survives JSON)."""
    return float(np.nextafter(np.float64(score[0]), np.inf)) if len(score) else 0.0


def tune_threshold(score: np.ndarray, is_gold: np.ndarray, n_gold: int) -> PRF:
    """The F1-optimal threshold on a split with gold (LASER/XTREME ``bucc_optimize``).

    Sweep the candidates in descending score order; after each one, extraction = everything so
    far. Where the best F1 is reached the threshold is the midpoint to the next candidate's score,
    and pairs with ``score >= threshold`` are extracted. Two corrections to the reference:
    - a cut can only fall between *different* scores, so F1 is evaluated at the end of each run of
      tied scores (the reference evaluates inside ties, at cuts that no threshold can realise);
    - when the best cut is the last candidate there is no next score (IndexError in the
      reference): the threshold is the last score itself, which keeps every candidate.
    The first (highest-threshold) cut wins ties in F1, as in the reference. With no gold pair
    among the candidates every F1 is 0 and the threshold extracts nothing.
    """
    score, is_gold = _check_sorted(score, is_gold)
    if n_gold < int(is_gold.sum()):
        raise BadInputError(f"{int(is_gold.sum())} candidates are gold but the gold set has only {n_gold} pairs")
    if not len(score) or not is_gold.any() or n_gold == 0:
        return PRF(above_all(score), 0, 0, n_gold)
    extracted = np.arange(1, len(score) + 1)
    correct = np.cumsum(is_gold)
    f1 = 2.0 * correct / (extracted + n_gold)  # = 2PR/(P+R) with P = c/e, R = c/g
    cut_ok = np.ones(len(score), dtype=bool)
    cut_ok[:-1] = score[1:] != score[:-1]  # last of a run of equal scores
    f1 = np.where(cut_ok, f1, -1.0)
    best = int(np.argmax(f1))  # first maximum
    threshold = float(score[best]) if best == len(score) - 1 else float((score[best] + score[best + 1]) / 2)
    return PRF(threshold, int(extracted[best]), int(correct[best]), n_gold)


def evaluate_threshold(score: np.ndarray, is_gold: np.ndarray, n_gold: int, threshold: float) -> PRF:
    """Precision, recall and F1 when the pairs with ``score >= threshold`` are extracted."""
    score = np.asarray(score, dtype=np.float64)
    keep = score >= threshold
    is_gold = np.asarray(is_gold, dtype=bool)
    return PRF(float(threshold), int(keep.sum()), int((keep & is_gold).sum()), n_gold)


def keep_fraction_threshold(score: np.ndarray, fraction: float, n_sentences: int) -> float:
    """Threshold by a prior proportion (Keung et al. 2020): extract the best
    ``round(fraction * n_sentences)`` candidates, with ``n_sentences`` the size of the source side.

    The threshold is the midpoint between the last kept and the first dropped score, so it can be
    reported and applied like a tuned one; when those two scores tie, the whole tie is kept (no
    threshold can split it), so slightly more than the target count may be extracted.
    """
    score, _ = _check_sorted(score, np.zeros(len(score), dtype=bool))
    if not 0 < fraction <= 1:
        raise BadInputError(f"keep fraction must be in (0, 1], got {fraction}")
    m = int(round(fraction * n_sentences))
    if m <= 0 or not len(score):
        return above_all(score)
    if m >= len(score):
        return float(score[-1])
    if score[m] == score[m - 1]:
        return float(score[m - 1])
    return float((score[m - 1] + score[m]) / 2)


@dataclass(frozen=True)
class CrossValidation:
    """Pooled P/R/F1 over folds (sums of extracted / correct / gold) and each fold's threshold."""

    folds: int
    seed: int
    thresholds: tuple[float, ...]
    pooled: PRF
    kept: np.ndarray | None = field(default=None, compare=False, repr=False)  # extracted by its fold's threshold

    @property
    def threshold_mean(self) -> float:
        return float(np.mean(self.thresholds))


def cross_validate(cands: Candidates, is_gold: np.ndarray, gold_src: np.ndarray, n_src: int, *, folds: int = 5,
                   seed: int = 0) -> CrossValidation:
    """k-fold cross-validated thresholds when only one split has gold.

    Source sentences are split into ``folds`` groups by a seeded permutation; for each fold the
    threshold is tuned on the candidates (and gold pairs) whose source lies outside it and applied
    to the candidates whose source lies inside. Counts are pooled over folds, so every candidate
    and gold pair is scored exactly once, by a threshold that never saw it.
    """
    if not isinstance(folds, (int, np.integer)) or folds < 2:
        raise BadInputError(f"cross-validation needs at least 2 folds, got {folds!r}")
    if folds > n_src:
        raise BadInputError(f"{folds} folds for only {n_src} source sentences")
    perm = np.random.default_rng(seed).permutation(n_src)
    fold_of = np.empty(n_src, dtype=np.int64)
    fold_of[perm] = np.arange(n_src) % folds
    cand_fold = fold_of[cands.src]
    gold_fold = fold_of[np.asarray(gold_src, dtype=np.int64)]
    thresholds, extracted, correct = [], 0, 0
    kept = np.zeros(len(cands), dtype=bool)
    for f in range(folds):
        train, test = cand_fold != f, cand_fold == f
        tuned = tune_threshold(cands.score[train], is_gold[train], int((gold_fold != f).sum()))
        res = evaluate_threshold(cands.score[test], is_gold[test], int((gold_fold == f).sum()), tuned.threshold)
        thresholds.append(tuned.threshold)
        extracted += res.n_extracted
        correct += res.n_correct
        kept[test] = cands.score[test] >= tuned.threshold
    return CrossValidation(folds, seed, tuple(thresholds), PRF(float(np.mean(thresholds)), extracted, correct,
                                                               len(gold_fold)), kept)


def bootstrap_f1(extracted: np.ndarray, correct: np.ndarray, gold: np.ndarray, n_boot: int = 1000,
                 seed: int = 0) -> np.ndarray:
    """F1 over resamples of the source sentences (each sentence the unit, drawn with replacement),
    paired across systems: ``extracted`` and ``correct`` are (systems, sentences) counts of the pairs
    each sentence's threshold kept and of the gold ones among them (``tasks.mining.source_outcomes``),
    ``gold`` its number of gold pairs (0: a source without a translation). Returns (n_boot, systems);
    every system sees the same resample, so a difference's spread is the gold's own uncertainty.
    The thresholds stay as the cross-validation set them (conditional on the mined candidates)."""
    e = np.atleast_2d(np.asarray(extracted, dtype=np.float64))
    c = np.atleast_2d(np.asarray(correct, dtype=np.float64))
    g = np.asarray(gold, dtype=np.float64)
    if e.shape != c.shape or e.shape[1] != g.shape[0]:
        raise BadInputError(f"bootstrap_f1: extracted {e.shape}, correct {c.shape} and gold {g.shape} do not match")
    if (c > e).any() or (c < 0).any():
        raise BadInputError("bootstrap_f1: a sentence has more correct pairs than extracted ones, or fewer than none")
    n = g.shape[0]
    if n == 0 or n_boot < 1:
        raise BadInputError("bootstrap_f1 needs at least one sentence and one resample")
    weights = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)
    num = 2.0 * weights @ c.T
    den = weights @ e.T + (weights @ g)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


# ----------------------------------------------------------------------------------------------
# Keung et al. (2020) filters


_DIGITS = re.compile(r"\d+")
_ASCII_DIGITS = re.compile("[0-9]+")
DIGIT_RULES = ("ascii", "unicode")


def digit_sequences(text: str) -> frozenset[str]:
    """Maximal digit runs, written in ASCII: NFKC folds full-width digits (common in Chinese text)
    and other scripts' decimal digits map to their values, so ``２００８`` and ``2008`` match.
    A deviation from Keung et al. (``ascii_digit_sequences``), offered as ``digits="unicode"``."""
    text = unicodedata.normalize("NFKC", text)
    return frozenset("".join(str(unicodedata.decimal(c)) for c in run) for run in _DIGITS.findall(text))


def ascii_digit_sequences(text: str) -> frozenset[str]:
    """Keung et al. (2020)'s rule as published (their footnote 2):
    ``set(re.findall("[0-9]+", s))``: ASCII digit runs of the raw text, so ``２００８年`` holds none
    and does not match ``2008``."""
    return frozenset(_ASCII_DIGITS.findall(text))


def digit_filter(src_texts: Sequence[str], tgt_texts: Sequence[str], cands: Candidates,
                 digits: str = "unicode") -> np.ndarray:
    """Keep a candidate only when both sentences contain the same set of digit sequences
    (``digits``: "ascii", Keung et al.'s ``[0-9]+``, or "unicode", any decimal digit after NFKC)."""
    if digits not in DIGIT_RULES:
        raise BadInputError(f"digit rule must be one of {', '.join(DIGIT_RULES)}, not {digits!r}")
    runs = ascii_digit_sequences if digits == "ascii" else digit_sequences
    src_sets: dict[int, frozenset[str]] = {}
    tgt_sets: dict[int, frozenset[str]] = {}
    keep = np.empty(len(cands), dtype=bool)
    for n, (s, t) in enumerate(zip(cands.src.tolist(), cands.tgt.tolist())):
        a = src_sets.get(s)
        if a is None:
            a = src_sets[s] = runs(src_texts[s])
        b = tgt_sets.get(t)
        if b is None:
            b = tgt_sets[t] = runs(tgt_texts[t])
        keep[n] = a == b
    return keep


def edit_similarity_fn() -> Callable[[str, str], float]:
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:
        raise MissingResourceError("the edit-distance filter needs rapidfuzz: pip install rapidfuzz") from None
    return Levenshtein.normalized_similarity


def edit_filter(src_texts: Sequence[str], tgt_texts: Sequence[str], cands: Candidates,
                max_similarity: float = 0.5) -> np.ndarray:
    """Drop near-copies: keep a candidate only when the character Levenshtein similarity of the
    two sentences, 1 - distance / max(len), is below ``max_similarity`` (an untranslated or
    copied sentence is not a translation pair). Compared after NFKC and case folding."""
    if not 0 < max_similarity <= 1:
        raise BadInputError(f"edit similarity cut must be in (0, 1], got {max_similarity}")
    sim = edit_similarity_fn()

    def norm(t: str) -> str:
        return unicodedata.normalize("NFKC", t).casefold()

    return np.fromiter((sim(norm(src_texts[s]), norm(tgt_texts[t])) < max_similarity
                        for s, t in zip(cands.src.tolist(), cands.tgt.tolist())), dtype=bool, count=len(cands))


def apply_filters(src_texts: Sequence[str], tgt_texts: Sequence[str], cands: Candidates, *,
                  digits: str | None = None, max_edit_similarity: float | None = None
                  ) -> tuple[Candidates, dict[str, int]]:
    """Keung et al.'s filters in their order (digits, then edit distance), each optional; returns
    the kept candidates and how many each filter dropped (only the filters that ran)."""
    dropped: dict[str, int] = {}
    if digits:
        keep = digit_filter(src_texts, tgt_texts, cands, digits)
        dropped["digits"] = int((~keep).sum())
        cands = cands.take(keep)
    if max_edit_similarity is not None:
        keep = edit_filter(src_texts, tgt_texts, cands, max_edit_similarity)
        dropped["edit"] = int((~keep).sum())
        cands = cands.take(keep)
    return cands, dropped
