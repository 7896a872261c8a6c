"""Does a proxy rank systems the way BLEU does? Pairwise ranking accuracy and its statistics.

Pure functions: arrays in, numbers out, no I/O. One row of the inputs is one *cell*: one system
in one language direction. ``groups`` names each row's direction; pairs are only ever formed
inside a direction, because BLEU is not comparable across directions.

Pairwise ranking accuracy (Kocmi et al. 2021, "To Ship or Not to Ship"), with ties exactly as
mt-metrics-eval's ``Agreement``: a pair agrees when ``sign(Δproxy) == sign(Δgold)``, so
  * both tied            -> agreement (0 == 0),
  * proxy tied only      -> disagreement,
  * gold tied only       -> disagreement.
Accuracy is the micro average: agreements / pairs summed over all directions, so a direction
with more systems weighs more (as in Kocmi et al.), and a direction with one system adds nothing.
Ties are exact float equality, as in the reference: round the inputs first if a tolerance is
wanted (e.g. BLEU to one decimal, as papers print it).

Proxies where lower is better (xsim, xsim++ are error rates) are negated first
(``lower_is_better=True``) so that "higher is better" holds for every score compared.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Hashable, Sequence

import numpy as np

from ..errors import BadInputError

# Keep each (resamples x pairs) block near this many elements: bounded memory for large tables
# without giving up vectorisation for the usual small ones.
_BLOCK_ELEMENTS = 4_000_000


# --------------------------------------------------------------------------------------------
# Input checking and the pairs themselves
# --------------------------------------------------------------------------------------------

def _as_scores(values, name: str, n: int | None = None) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if n is not None and len(a) != n:
        raise BadInputError(f"{name} has {len(a)} values but there are {n} rows")
    if not np.all(np.isfinite(a)):
        bad = np.flatnonzero(~np.isfinite(a))[:5].tolist()
        raise BadInputError(f"{name} has missing or non-finite values (rows {bad}); fill or drop those rows")
    return a


def _group_codes(groups: Sequence[Hashable], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer code per row and the distinct labels (in first-seen order)."""
    labels = list(groups)
    if len(labels) != n:
        raise BadInputError(f"groups has {len(labels)} labels but there are {n} rows")
    index: dict[Hashable, int] = {}
    codes = np.fromiter((index.setdefault(g, len(index)) for g in labels), dtype=np.int64, count=n)
    return codes, np.array(list(index), dtype=object)


def within_group_pairs(groups: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Row indices ``(i, j)``, ``i < j``, of every pair of rows that share a group (direction)."""
    codes, _ = _group_codes(groups, len(groups))
    ii, jj = [], []
    for g in range(codes.max() + 1 if len(codes) else 0):
        rows = np.flatnonzero(codes == g)
        a, b = np.triu_indices(len(rows), k=1)
        ii.append(rows[a])
        jj.append(rows[b])
    if not ii:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(ii), np.concatenate(jj)


def _masked_pairs(i: np.ndarray, j: np.ndarray, pair_mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``pair_mask`` keeps (one bool per pair, in ``within_group_pairs``' order); all without it."""
    if pair_mask is None:
        return i, j
    pair_mask = np.asarray(pair_mask, dtype=bool)
    if pair_mask.shape != i.shape:
        raise BadInputError(f"pair_mask has {pair_mask.size} entries but there are {len(i)} system pairs")
    return i[pair_mask], j[pair_mask]


def oriented(proxy, lower_is_better: bool) -> np.ndarray:
    """The proxy with "higher is better" (negated error rates)."""
    a = np.asarray(proxy, dtype=np.float64)
    return -a if lower_is_better else a


def pair_agreements(proxy: np.ndarray, gold: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Boolean per pair: ``sign(proxy_i - proxy_j) == sign(gold_i - gold_j)`` (mt-metrics-eval ties).

    ``proxy`` may be 2-D (resamples x rows): the comparison broadcasts over the leading axis.
    """
    return np.sign(proxy[..., i] - proxy[..., j]) == np.sign(gold[i] - gold[j])


# --------------------------------------------------------------------------------------------
# Accuracy
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairwiseAccuracy:
    agreements: int
    pairs: int
    within_agreements: int = 0
    within_pairs: int = 0
    across_agreements: int = 0
    across_pairs: int = 0
    per_direction: dict[Hashable, tuple[int, int]] = field(default_factory=dict)  # group -> (agree, pairs)
    agreement_vector: np.ndarray = field(default_factory=lambda: np.zeros(0, bool), repr=False, compare=False)
    # per pair (aligned with agreement_vector): both systems of one family (a within-model pair)
    same_family: np.ndarray = field(default_factory=lambda: np.zeros(0, bool), repr=False, compare=False)

    @staticmethod
    def _ratio(a: int, p: int) -> float:
        return a / p if p else float("nan")

    @property
    def accuracy(self) -> float:
        """Agreements / pairs over all directions (NaN when no direction has two systems)."""
        return self._ratio(self.agreements, self.pairs)

    @property
    def within_accuracy(self) -> float:
        """Over pairs of systems of the same model family (paper Table 8)."""
        return self._ratio(self.within_agreements, self.within_pairs)

    @property
    def across_accuracy(self) -> float:
        """Over pairs of systems of different model families."""
        return self._ratio(self.across_agreements, self.across_pairs)


def pairwise_accuracy(
    proxy,
    gold,
    groups: Sequence[Hashable],
    families: Sequence[Hashable] | None = None,
    *,
    lower_is_better: bool = False,
) -> PairwiseAccuracy:
    """Pairwise ranking accuracy of ``proxy`` against ``gold`` (BLEU) within each group.

    ``families`` (optional, one label per row) splits the pairs into within-family and
    across-family ones; without it every pair counts as across-family.
    """
    gold = _as_scores(gold, "gold")
    n = len(gold)
    p = oriented(_as_scores(proxy, "proxy", n), lower_is_better)
    codes, labels = _group_codes(groups, n)
    i, j = within_group_pairs(codes)
    agree = pair_agreements(p, gold, i, j)
    if families is None:
        same = np.zeros(len(i), bool)
    else:
        fam = np.asarray(list(families), dtype=object)
        if len(fam) != n:
            raise BadInputError(f"families has {len(fam)} labels but there are {n} rows")
        same = fam[i] == fam[j]
    per_dir_agree = np.bincount(codes[i], weights=agree, minlength=len(labels)).astype(int)
    per_dir_pairs = np.bincount(codes[i], minlength=len(labels)).astype(int)
    return PairwiseAccuracy(
        agreements=int(agree.sum()), pairs=int(len(agree)),
        within_agreements=int(agree[same].sum()), within_pairs=int(same.sum()),
        across_agreements=int(agree[~same].sum()), across_pairs=int((~same).sum()),
        per_direction={labels[g]: (int(per_dir_agree[g]), int(per_dir_pairs[g])) for g in range(len(labels))},
        agreement_vector=agree, same_family=same,
    )


def chance_accuracy(gold, groups: Sequence[Hashable], proxy=None) -> float:
    """Expected accuracy of a proxy that carries no information about the systems.

    Without ``proxy``: a random proxy with continuous scores (never tied). It agrees with
    probability 1/2 on each pair whose gold differs and never on a gold-tied pair (proxy tied only
    is impossible, gold tied only is a disagreement), so the expectation is 0.5 x untied / pairs:
    exactly 0.5 when BLEU has no ties.

    With ``proxy``: the proxy's own values dealt to the systems of each direction by a uniformly
    random permutation, which keeps its ties. A pair then draws a uniformly random pair of
    distinct values of its direction, tied with probability t (the share of tied value pairs in
    that direction), so it agrees with probability (1 - t) / 2 when gold differs and t when gold
    is tied. Orientation does not matter here (the permutation null is symmetric).
    """
    gold = _as_scores(gold, "gold")
    codes, labels = _group_codes(groups, len(gold))
    i, j = within_group_pairs(codes)
    if len(i) == 0:
        return float("nan")
    gold_tied = gold[i] == gold[j]
    if proxy is None:
        return float(0.5 * np.count_nonzero(~gold_tied) / len(i))
    p = _as_scores(proxy, "proxy", len(gold))
    # t per direction: tied pairs of values among all pairs of that direction.
    proxy_tied = p[i] == p[j]
    g = codes[i]
    pairs_per = np.bincount(g, minlength=len(labels))
    t = np.bincount(g, weights=proxy_tied, minlength=len(labels)) / np.maximum(pairs_per, 1)
    expected = np.where(gold_tied, t[g], (1.0 - t[g]) / 2.0).sum()
    return float(expected / len(i))


# --------------------------------------------------------------------------------------------
# Tie-aware accuracy (beside the rule above, which stays as it is)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TieAwareAccuracy:
    """Two readings of a proxy's pairs that do not count its ties as plain errors.

    *Ties as 1/2*: over the pairs whose gold differs (a gold-tied pair has no order to find, so it
    is left out here -- unlike the mt-metrics-eval rule, which keeps it), an agreement scores 1, a
    proxy tie 1/2 (the expectation of breaking it by a coin), a disagreement 0; a proxy that ties
    every pair scores 0.5, the chance level.

    *Tie calibration* (Deutsch et al. 2023, "Ties Matter"; mt-metrics-eval's ``acc_eq``, its
    ``acc23`` optimised by ``tau_optimization``): over every pair, gold ties included, a pair is
    right when proxy and gold order it the same way or both tie, where the proxy ties a pair when
    ``|Δproxy| <= epsilon``; epsilon is the candidate (0 or any pair's ``|Δproxy|``) that
    maximises the accuracy, the smallest one on a tie. Epsilon is fitted on the very pairs it
    scores, so this accuracy is optimistic by construction.
    """

    pairs: int  # every within-direction pair (as PairwiseAccuracy.pairs)
    proxy_ties: int  # pairs whose two proxy values are equal
    half_pairs: int  # pairs whose gold differs: the pairs of the 1/2 rule
    half_agreements: int  # among those: proxy and gold agree
    half_proxy_ties: int  # among those: the proxy ties (each scores 1/2)
    calibrated_correct: int  # pairs right under tie calibration at ``epsilon``
    epsilon: float  # proxy ties are |Δproxy| <= epsilon, in the proxy's own units (NaN without pairs)
    calibrated_ties: int  # pairs the proxy ties at ``epsilon``

    @property
    def tie_share(self) -> float:
        """Share of all pairs the proxy ties exactly."""
        return PairwiseAccuracy._ratio(self.proxy_ties, self.pairs)

    @property
    def half_accuracy(self) -> float:
        return PairwiseAccuracy._ratio(self.half_agreements + 0.5 * self.half_proxy_ties, self.half_pairs)

    @property
    def calibrated_accuracy(self) -> float:
        return PairwiseAccuracy._ratio(self.calibrated_correct, self.pairs)

    @property
    def calibrated_tie_share(self) -> float:
        """Share of all pairs the proxy ties at the calibrated epsilon."""
        return PairwiseAccuracy._ratio(self.calibrated_ties, self.pairs)


def tie_calibration(proxy: np.ndarray, gold: np.ndarray, i: np.ndarray, j: np.ndarray) -> tuple[int, float, int]:
    """``(right pairs, epsilon, pairs tied at epsilon)`` of the tie-calibrated rule over pairs ``(i, j)``.

    ``proxy`` oriented higher-is-better. Every candidate epsilon is scored in one pass: with the
    pairs sorted by ``|Δproxy|``, those up to a candidate are ties (right when gold ties too), the
    rest keep their sign (right when it agrees with gold's). Counts are integers, so no float
    round-off picks the winner; ``argmax`` keeps the first, smallest, best epsilon.
    """
    if len(i) == 0:
        return 0, float("nan"), 0
    diff = np.abs(proxy[i] - proxy[j])
    order = np.argsort(diff, kind="stable")
    diff = diff[order]
    right_if_tied = np.concatenate([[0], np.cumsum((gold[i] == gold[j])[order])])
    right_if_kept = np.concatenate([[0], np.cumsum(pair_agreements(proxy, gold, i, j)[order])])
    candidates = np.unique(np.concatenate([[0.0], diff]))
    tied = np.searchsorted(diff, candidates, side="right")  # pairs with |Δproxy| <= each candidate
    right = right_if_tied[tied] + right_if_kept[-1] - right_if_kept[tied]
    best = int(np.argmax(right))
    return int(right[best]), float(candidates[best]), int(tied[best])


def tie_aware_accuracy(proxy, gold, groups: Sequence[Hashable], *, lower_is_better: bool = False,
                       pair_mask: np.ndarray | None = None) -> TieAwareAccuracy:
    """Ties as 1/2 and tie-calibrated accuracy (see :class:`TieAwareAccuracy`) within each group.

    Pooled over groups as ``pairwise_accuracy`` pools its agreements (micro average), with one
    epsilon for all groups. mt-metrics-eval also fits one epsilon but averages the accuracy per
    row (here: per direction); the two agree when every direction has the same number of systems.
    ``pair_mask`` keeps only some pairs, as in ``perm_both_test`` (epsilon is then fitted on them).
    """
    gold = _as_scores(gold, "gold")
    p = oriented(_as_scores(proxy, "proxy", len(gold)), lower_is_better)
    i, j = _masked_pairs(*within_group_pairs(_group_codes(groups, len(gold))[0]), pair_mask)
    proxy_tied = p[i] == p[j]
    gold_differs = gold[i] != gold[j]
    agree = pair_agreements(p, gold, i, j)
    correct, epsilon, ties = tie_calibration(p, gold, i, j)
    return TieAwareAccuracy(
        pairs=int(len(i)), proxy_ties=int(proxy_tied.sum()), half_pairs=int(gold_differs.sum()),
        half_agreements=int((agree & gold_differs).sum()), half_proxy_ties=int((proxy_tied & gold_differs).sum()),
        calibrated_correct=correct, epsilon=epsilon, calibrated_ties=ties,
    )


# --------------------------------------------------------------------------------------------
# Uncertainty
# --------------------------------------------------------------------------------------------

def sign_test(proxy, gold, groups: Sequence[Hashable], *, lower_is_better: bool = False) -> float:
    """One-sided p-value that the proxy agrees with gold more often than a random proxy does.

    Counts the agreements among pairs whose gold differs (a random continuous proxy agrees with
    each such pair with probability 1/2, and never with a gold-tied one) and takes the binomial
    tail P(X >= k), X ~ Bin(untied pairs, 1/2). Treats pairs as independent, which holds when
    each direction has two systems (the SONAR example: 4/4 agreements give p = 1/16) and is an
    approximation otherwise. Complements the bootstrap CI, which collapses when all pairs agree.
    """
    from scipy.stats import binomtest

    gold = _as_scores(gold, "gold")
    p = oriented(_as_scores(proxy, "proxy", len(gold)), lower_is_better)
    i, j = within_group_pairs(list(groups))
    untied = gold[i] != gold[j]
    n = int(untied.sum())
    if n == 0:
        return float("nan")
    k = int(pair_agreements(p, gold, i[untied], j[untied]).sum())
    return float(binomtest(k, n, 0.5, alternative="greater").pvalue)


def bootstrap_ci(
    values,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of ``values`` (one value per system pair).

    Pass a pair's agreement (0/1) for the CI of an accuracy, or the difference of two proxies'
    agreements on the same pairs (-1/0/1) for a paired CI of their accuracy difference.
    Resampling pairs treats them as independent; pairs that share a system are not, so the
    interval is somewhat narrow when directions have many systems. With all pairs agreeing the
    interval collapses to one point: a few pairs cannot show their uncertainty this way.
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if not 0 < confidence < 1:
        raise BadInputError(f"confidence must be between 0 and 1, got {confidence}")
    if n_resamples < 1:
        raise BadInputError(f"n_resamples must be at least 1, got {n_resamples}")
    if len(v) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    block = max(1, _BLOCK_ELEMENTS // len(v))
    for start in range(0, n_resamples, block):
        stop = min(start + block, n_resamples)
        means[start:stop] = v[rng.integers(0, len(v), size=(stop - start, len(v)))].mean(axis=1)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


@dataclass(frozen=True)
class PermutationResult:
    delta: float  # accuracy(a) - accuracy(b), as a fraction
    p_value: float
    n_permutations: int
    alternative: str
    null_deltas: np.ndarray = field(repr=False, compare=False, default_factory=lambda: np.zeros(0))


def _within_group_ranks(x: np.ndarray, codes: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    out = np.empty_like(x)
    for g in np.unique(codes):
        rows = codes == g
        out[rows] = rankdata(x[rows], method="average")
    return out


def _within_group_z(x: np.ndarray, codes: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for g in np.unique(codes):
        rows = codes == g
        sd = x[rows].std()
        out[rows] = (x[rows] - x[rows].mean()) / sd if sd > 0 else 0.0
    return out


def perm_both_test(
    proxy_a,
    proxy_b,
    gold,
    groups: Sequence[Hashable],
    *,
    lower_is_better_a: bool = False,
    lower_is_better_b: bool = False,
    n_permutations: int = 1000,
    seed: int = 0,
    scale: str = "rank",
    alternative: str = "greater",
    pair_mask: np.ndarray | None = None,
) -> PermutationResult:
    """PERM-BOTH permutation test: is proxy a's pairwise accuracy higher than proxy b's?

    Deutsch et al. (2021, "A Statistical Analysis of Summarization Evaluation Metrics using
    Resampling Methods") test the difference of two metrics' correlations with gold scores by
    swapping the two metrics' scores. The scores form a matrix (systems x inputs; here the inputs
    are the language directions) and the swap unit names the test: PERM-SYS swaps a whole system
    row, PERM-INPUTS a whole input column, PERM-BOTH every single cell independently. So here:
    for each direction independently and for each system in it, the two proxies' scores of that
    (direction, system) cell are exchanged with probability 1/2; the accuracy difference is
    recomputed on the permuted scores; repeating this gives the distribution of the difference
    under H0 "the two proxies are exchangeable" (mt-metrics-eval uses the same test for its
    metric comparisons).

    Exchanging scores only makes sense on one scale: xsim (~1 %) and xsim++ (~10 %) swapped raw
    would rank a direction's systems by which proxy each drew, not by quality. ``scale="rank"``
    (default) first replaces each proxy, per direction, by its ranks (ties averaged): pairwise
    accuracy only depends on the order within a direction, so each proxy's accuracy is exactly
    unchanged, ties included, and both live on 1..m. ``"z"`` z-scores per direction (as Deutsch
    et al. standardise); ``"none"`` swaps the raw oriented scores.

    ``pair_mask`` (one bool per system pair, in ``pairwise_accuracy``'s order, e.g. its
    ``same_family``) counts only those pairs: the test over within-model or across-model pairs.
    The cells are still swapped as a whole, so a swap moves every pair the cell is in.

    The p-value is (1 + #{null >= observed}) / (1 + n_permutations) for ``alternative="greater"``
    (|null| >= |observed| for ``"two-sided"``), which never reports an impossible p of 0.
    Comparisons use integer agreement counts (both proxies have the same pairs), so no float
    round-off decides a borderline sample.
    """
    if scale not in ("rank", "z", "none"):
        raise BadInputError(f"scale must be 'rank', 'z' or 'none', got '{scale}'")
    if alternative not in ("greater", "two-sided"):
        raise BadInputError(f"alternative must be 'greater' or 'two-sided', got '{alternative}'")
    if n_permutations < 1:
        raise BadInputError(f"n_permutations must be at least 1, got {n_permutations}")
    gold = _as_scores(gold, "gold")
    n = len(gold)
    a = oriented(_as_scores(proxy_a, "proxy_a", n), lower_is_better_a)
    b = oriented(_as_scores(proxy_b, "proxy_b", n), lower_is_better_b)
    codes, _ = _group_codes(groups, n)
    if scale == "rank":
        a, b = _within_group_ranks(a, codes), _within_group_ranks(b, codes)
    elif scale == "z":
        a, b = _within_group_z(a, codes), _within_group_z(b, codes)
    i, j = _masked_pairs(*within_group_pairs(codes), pair_mask)
    n_pairs = len(i)
    if n_pairs == 0:
        return PermutationResult(float("nan"), float("nan"), n_permutations, alternative)
    observed = int(pair_agreements(a, gold, i, j).sum()) - int(pair_agreements(b, gold, i, j).sum())
    rng = np.random.default_rng(seed)
    null = np.empty(n_permutations, dtype=np.int64)
    block = max(1, _BLOCK_ELEMENTS // max(n_pairs, n))
    for start in range(0, n_permutations, block):
        stop = min(start + block, n_permutations)
        swap = rng.random((stop - start, n)) < 0.5  # one coin per (direction, system) cell
        pa, pb = np.where(swap, b, a), np.where(swap, a, b)
        null[start:stop] = pair_agreements(pa, gold, i, j).sum(axis=1) - pair_agreements(pb, gold, i, j).sum(axis=1)
    if alternative == "greater":
        extreme = np.count_nonzero(null >= observed)
    else:
        extreme = np.count_nonzero(np.abs(null) >= abs(observed))
    p = (1 + extreme) / (1 + n_permutations)
    return PermutationResult(observed / n_pairs, float(p), n_permutations, alternative, null / n_pairs)


def sign_flip_test(
    differences,
    *,
    n_flips: int = 10_000,
    seed: int = 0,
    exact_up_to: int = 16,
    alternative: str = "two-sided",
) -> PermutationResult:
    """Sign-flip test over languages: is the mean per-language accuracy difference of two proxies 0?

    ``differences`` holds one value per language (direction), e.g. accuracy(a) - accuracy(b) over
    that language's pairs. Languages, not pairs or cells, are the unit: under H0 each language's
    difference is as likely positive as negative, so flipping any set of signs gives an equally
    likely sample, and pairs (or cells) within a language are never treated as independent.

    With at most ``exact_up_to`` languages every one of the 2^L sign vectors is tried (exact: the
    p-value is the share of them at least as extreme, the observed one included, and
    ``n_permutations`` is 2^L); beyond that ``n_flips`` random sign vectors (``seed``) give
    (1 + #{at least as extreme}) / (1 + n_flips). ``"two-sided"`` compares |mean|, ``"greater"``
    tests mean > 0. Means equal up to float round-off count as equally extreme (a flipped sum of
    the same values may differ from the observed one in the last bit).
    """
    if alternative not in ("greater", "two-sided"):
        raise BadInputError(f"alternative must be 'greater' or 'two-sided', got '{alternative}'")
    if n_flips < 1:
        raise BadInputError(f"n_flips must be at least 1, got {n_flips}")
    d = _as_scores(differences, "differences")
    n = len(d)
    if n == 0:
        return PermutationResult(float("nan"), float("nan"), 0, alternative)
    observed = float(d.mean())
    if n <= exact_up_to:
        signs = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0  # every sign vector, once
        null = signs @ d / n
    else:
        rng = np.random.default_rng(seed)
        null = np.empty(n_flips)
        block = max(1, _BLOCK_ELEMENTS // n)
        for start in range(0, n_flips, block):
            stop = min(start + block, n_flips)
            null[start:stop] = rng.choice((-1.0, 1.0), size=(stop - start, n)) @ d / n
    tolerance = 1e-12 * max(1.0, float(np.abs(d).max()))
    if alternative == "greater":
        extreme = np.count_nonzero(null >= observed - tolerance)
    else:
        extreme = np.count_nonzero(np.abs(null) >= abs(observed) - tolerance)
    p = extreme / len(null) if n <= exact_up_to else (1 + extreme) / (1 + n_flips)
    return PermutationResult(observed, float(p), len(null), alternative, null)


# --------------------------------------------------------------------------------------------
# Correlations (extra columns)
# --------------------------------------------------------------------------------------------

def _corr(fn, x: np.ndarray, y: np.ndarray) -> float:
    # Fewer than 3 points or a constant side: a correlation is undefined or trivially +-1.
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(fn(x, y)[0])


def correlations(proxy, gold, groups: Sequence[Hashable], *, lower_is_better: bool = False) -> dict[str, float]:
    """Pearson, Spearman and Kendall (tau-b) between the oriented proxy and gold.

    ``pooled``: over all rows at once (mixes directions, whose BLEU levels differ; the only option
    when each direction has two systems). ``within``: the mean over directions with at least 3
    systems of the per-direction coefficient (NaN when no direction has 3).
    """
    from scipy.stats import kendalltau, pearsonr, spearmanr

    gold = _as_scores(gold, "gold")
    p = oriented(_as_scores(proxy, "proxy", len(gold)), lower_is_better)
    codes, _ = _group_codes(groups, len(gold))
    out: dict[str, float] = {}
    for name, fn in (("pearson", pearsonr), ("spearman", spearmanr), ("kendall", kendalltau)):
        out[name] = _corr(fn, p, gold)
        per = [_corr(fn, p[codes == g], gold[codes == g]) for g in np.unique(codes)]
        per = [c for c in per if np.isfinite(c)]
        out[f"{name}_within"] = float(np.mean(per)) if per else float("nan")
    return out
