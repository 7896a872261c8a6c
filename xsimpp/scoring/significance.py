"""Is a number precise, and is a difference real? Confidence intervals and paired tests over the
per-item outcomes of a record (arrays in, numbers out; no I/O).

The unit of resampling is the gold sentence: an xsim source, a Tatoeba sentence pair (the two
queries of the ``mean`` record move together), an MTEB source. A ratio metric (an error rate, an
accuracy) is carried by each unit's sufficient statistics -- (items wrong or right, items) -- and a
resample's value is 100 * their sums' ratio, exactly as sacrebleu recomputes a corpus score from
per-sentence statistics. MTEB's weighted F1 is recomputed from the resampled (gold, chosen) pairs
(``weighted_f1``, equal to scikit-learn's ``f1_score(average="weighted")``); BUCC's F1 over pairs is
a ratio too, resampled by source sentence at the record's threshold(s). Several languages are
resampled each within itself (stratified) and combined as the task averages them: LASER's micro
average for error rates, the mean over languages for accuracies (XTREME) and F1 (MTEB).

- ``confidence_interval``: scipy's percentile bootstrap (``scipy.stats.bootstrap``).
- ``paired_bootstrap_samples`` / ``paired_bootstrap_p``: paired bootstrap resampling (Koehn 2004)
  on sacrebleu's resamples (the same ``default_rng(seed).choice`` indices). Two p-values:
  ``shift`` (the default: how often a resampled difference lies at least |d| from the observed
  one d, i.e. the bootstrap distribution shifted to the null, Efron & Tibshirani 1993, ch. 16) and
  ``sacrebleu`` (its ``--paired-bs``, the Moses script's: the centred |resampled difference|
  against |d|), equal to sacrebleu's own function on the same statistics
  (tests/test_significance.py) except on results equal on every resample, where it is 1 rather
  than the smallest p-value its centred statistic gives. The sacrebleu statistic compares a
  spread around E|d*| with |d|, which rejects too often: on two equally good systems (5 % errors on 1 012 items, 10 % on 400)
  it gave p < 0.05 in 9.6 % and 10.2 % of 2 000 repetitions, the shift p-value in 4.9 % and 4.3 %
  (benchmarks/results/significance_calibration.json), hence the default.
- ``paired_randomization``: sacrebleu's ``--paired-ar`` (Riezler & Maxwell 2005), the two-sided
  paired approximate randomisation test, run by ``scipy.stats.permutation_test`` (each unit's two
  outcomes swapped at random); its p-value is scipy's ``(c + 1) / (N + 1)`` estimate.
- ``mcnemar``: the exact McNemar test on the discordant items of two paired binary outcomes
  (``scipy.stats.binomtest`` on the b items only the second system gets wrong among the b + c
  discordant ones), one- or two-sided; ``mcnemar_detectable_loss``: the smallest net loss it finds
  with a given power beside a background of discordant items that cancel out; ``paired_difference_interval``: the Wald
  interval of a paired difference of proportions (Agresti 2013, 10.1.3) from the same counts.
- ``holm`` / ``benjamini_hochberg``: corrections across languages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import BadInputError

# How the several languages of a comparison combine, per statistic (as each task averages them).
OVERALL = {"error_rate": "micro", "accuracy": "macro", "weighted_f1": "macro", "pair_f1": "macro"}
CORRECTIONS = ("holm", "bh")
BOOTSTRAP_P = ("shift", "sacrebleu")
DEFAULT_SEED = 12345  # sacrebleu's SACREBLEU_SEED default
BOOTSTRAP_RESAMPLES = 1000  # sacrebleu's --paired-bs default
AR_TRIALS = 10000  # sacrebleu's --paired-ar default
MAX_SEED = 2**63 - 1  # what numpy's default_rng takes (textio.MAX_SEED, which scoring does not import)
# Bounds of the resamples and trials. A 95 % percentile interval is the 2.5th and 97.5th percentile
# of the resamples: below 100 its tails hold one or two resamples each (1 resample gave an interval
# that excluded its own estimate); a p-value (c + 1) / (N + 1) from fewer than 100 trials cannot
# fall below 0.01. Above 100 000 resamples (1 000 000 trials) the Monte-Carlo error of a bound (a
# p-value) is far below the sampling error it measures, while the time and the resample indices
# (8 bytes per unit per resample) keep growing.
MIN_RESAMPLES, MAX_RESAMPLES = 100, 100_000
MIN_TRIALS, MAX_TRIALS = 100, 1_000_000
# Resample indices held at once (int64): 2**28 = 2 GiB. Percentile intervals draw in batches past
# it; the paired bootstrap draws sacrebleu's resamples in one piece, so more is refused.
MAX_INDICES = 2**28


def weighted_f1(gold: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """scikit-learn's ``f1_score(gold, chosen, average="weighted", zero_division=0)`` in percent, for
    each row of (resamples, items) label arrays at once: per gold label L with support s_L, true
    positives t_L and p_L predictions, F1_L = 2 t_L / (s_L + p_L); weighted by s_L."""
    gold, chosen = np.atleast_2d(gold), np.atleast_2d(chosen)
    rows, n = gold.shape
    size = int(max(gold.max(), chosen.max())) + 1
    offset = (np.arange(rows) * size)[:, None]
    support = np.bincount((gold + offset).ravel(), minlength=rows * size).reshape(rows, size)
    predicted = np.bincount((chosen + offset).ravel(), minlength=rows * size).reshape(rows, size)
    hits = np.bincount((gold + offset)[gold == chosen], minlength=rows * size).reshape(rows, size)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(support > 0, 2.0 * hits / (support + predicted), 0.0)
    return 100.0 * (support * f1).sum(axis=1) / n


@dataclass(frozen=True)
class Units:
    """One language's items grouped into resampling units. For a ratio statistic ``num``/``den``
    hold each unit's items counted (wrong for an error rate, right for an accuracy) and all its
    items; for ``weighted_f1`` each item is a unit with its ``gold`` and ``chosen`` labels."""

    statistic: str
    num: np.ndarray | None = None
    den: np.ndarray | None = None
    gold: np.ndarray | None = None
    chosen: np.ndarray | None = None

    @classmethod
    def of(cls, statistic: str, correct: np.ndarray, chosen: np.ndarray, gold: np.ndarray,
           unit: np.ndarray | None = None) -> "Units":
        """Items (``correct``, ``chosen``, ``gold`` per item) grouped by ``unit`` (default: ``gold``).
        ``pair_f1`` items are BUCC's extracted pairs (correct: gold) and its gold pairs left out:
        F1 = 2 correct / (extracted + gold) = sum(2 c) / sum(1 + c)."""
        if statistic not in OVERALL:
            raise BadInputError(f"no resampling rule for the statistic {statistic!r}")
        correct, gold = np.asarray(correct, bool), np.asarray(gold, np.int64)
        if not len(correct):
            raise BadInputError("no items to resample")
        if statistic == "weighted_f1":
            return cls(statistic, gold=gold, chosen=np.asarray(chosen, np.int64))
        _, group = np.unique(gold if unit is None else np.asarray(unit, np.int64), return_inverse=True)
        if statistic == "pair_f1":
            num, den = 2.0 * correct, 1.0 + correct
        else:
            num, den = (~correct if statistic == "error_rate" else correct).astype(float), np.ones(len(correct))
        return cls(statistic, np.bincount(group, weights=num), np.bincount(group, weights=den))

    def __len__(self) -> int:
        return len(self.num) if self.num is not None else len(self.gold)

    def parts(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For resampled unit indices (resamples, units): what the overall value combines -- the
        summed counts (ratio) or the value itself with weight 1 (F1)."""
        if self.statistic == "weighted_f1":
            return weighted_f1(self.gold[idx], self.chosen[idx]), np.ones(idx.shape[0])
        return self.num[idx].sum(axis=1), self.den[idx].sum(axis=1)

    def value(self) -> float:
        return value([self])


def _combine(parts: Sequence[tuple[np.ndarray, np.ndarray]], statistic: str) -> np.ndarray:
    """Languages' resampled parts -> the overall value per resample (micro: pooled ratio; macro:
    mean of the languages' values)."""
    if statistic == "weighted_f1":
        return np.mean([p for p, _ in parts], axis=0)
    if OVERALL[statistic] == "micro":
        return 100.0 * np.sum([p for p, _ in parts], axis=0) / np.sum([d for _, d in parts], axis=0)
    return np.mean([100.0 * p / d for p, d in parts], axis=0)


def _over_resamples(fn, samples, axis: int) -> np.ndarray:
    """A scipy ``vectorized`` statistic: each of ``samples`` with its resample axis ``axis`` last
    and the leading axes flattened into rows, ``fn`` of those 2-D arrays, reshaped back."""
    samples = [np.moveaxis(np.asarray(s), axis, -1) for s in samples]
    shape = samples[0].shape[:-1]
    return fn(*[s.reshape(-1, s.shape[-1]) for s in samples]).reshape(shape)


def _check(groups: Sequence[Units]) -> str:
    if not groups:
        raise BadInputError("no languages to resample")
    kinds = {g.statistic for g in groups}
    if len(kinds) != 1:
        raise BadInputError(f"cannot combine outcomes of different statistics ({', '.join(sorted(kinds))})")
    return kinds.pop()


def value(groups: Sequence[Units]) -> float:
    """The overall value of the languages, as the task averages them."""
    statistic = _check(groups)
    return float(_combine([g.parts(np.arange(len(g))[None, :]) for g in groups], statistic)[0])


def check_level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.5 <= level < 1.0:
        raise BadInputError(f"a confidence level is a fraction from 0.5 to below 1 (e.g. 0.95), not {level!r}")
    return float(level)


def check_count(n: int, what: str, low: int, high: int) -> int:
    """``n`` resamples or trials, an integer from ``low`` to ``high`` (see MIN_RESAMPLES)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not low <= n <= high:
        raise BadInputError(f"the number of {what} is an integer from {low} to {high}, not {n!r}")
    return int(n)


def check_resamples(n: int, what: str = "resamples") -> int:
    return check_count(n, what, MIN_RESAMPLES, MAX_RESAMPLES)


def check_trials(n: int, what: str = "randomisation trials") -> int:
    return check_count(n, what, MIN_TRIALS, MAX_TRIALS)


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise BadInputError(f"a seed is an integer from 0 to {MAX_SEED}, not {seed!r}")
    return int(seed)


def confidence_interval(groups: Sequence[Units], *, level: float = 0.95, n_resamples: int = BOOTSTRAP_RESAMPLES,
                        seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the overall value, each language resampled within itself
    (``scipy.stats.bootstrap`` over unit indices, one sample per language)."""
    from scipy.stats import bootstrap

    statistic = _check(groups)
    level, n_resamples, seed = check_level(level), check_resamples(n_resamples), check_seed(seed)
    units = sum(len(g) for g in groups)
    # scipy draws every resample's indices at once unless batched: past the budget, batches (a
    # batched draw is another draw, so the intervals within the budget stay those stored so far)
    batch = None if n_resamples * units <= MAX_INDICES else max(1, MAX_INDICES // units)

    def stat(*idx, axis=-1):
        return _over_resamples(lambda *rows: _combine([g.parts(i) for g, i in zip(groups, rows)], statistic), idx,
                               axis)

    res = bootstrap([np.arange(len(g)) for g in groups], stat, n_resamples=n_resamples, confidence_level=level,
                    method="percentile", vectorized=True, batch=batch, random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


@dataclass(frozen=True)
class PairedResult:
    """System minus baseline: the difference of the values, its percentile interval from the
    paired resamples, and the two paired tests' p-values (two-sided; ``bootstrap_method`` names
    the bootstrap p-value's statistic)."""

    baseline: float
    system: float
    ci_low: float
    ci_high: float
    p_bootstrap: float
    p_randomization: float
    n_units: int
    bootstrap_method: str = "shift"

    @property
    def difference(self) -> float:
        return self.system - self.baseline


def _paired(base: Sequence[Units], system: Sequence[Units]) -> str:
    statistic = _check(list(base) + list(system))
    if len(base) != len(system) or any(len(a) != len(b) for a, b in zip(base, system)):
        raise BadInputError("the two results are not on the same items (their languages or sizes differ)")
    for a, b in zip(base, system):
        if statistic == "weighted_f1":
            same = np.array_equal(a.gold, b.gold)
        else:
            same = np.array_equal(a.den, b.den)
        if not same:
            raise BadInputError("the two results are not on the same items (their gold sentences differ)")
    return statistic


def paired_bootstrap_samples(base: Sequence[Units], system: Sequence[Units], n_resamples: int,
                             seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The baseline's and the system's overall value on each of sacrebleu's paired resamples:
    ``default_rng(seed).choice(n, size=(n_resamples, n))`` per language, in order."""
    statistic = _paired(base, system)
    units = sum(len(g) for g in base)
    if n_resamples * units > MAX_INDICES:
        raise BadInputError(f"{n_resamples} paired resamples of {units} sentences would hold "
                            f"{8 * n_resamples * units / 2**30:.0f} GiB of indices at once; use at most "
                            f"{MAX_INDICES // units} resamples (--resamples) or fewer languages")
    rng = np.random.default_rng(seed)
    idx = [rng.choice(len(g), size=(n_resamples, len(g)), replace=True) for g in base]
    return (_combine([g.parts(i) for g, i in zip(base, idx)], statistic),
            _combine([g.parts(i) for g, i in zip(system, idx)], statistic))


def paired_bootstrap_p(scores_base: np.ndarray, scores_sys: np.ndarray, real_difference: float,
                       method: str = "shift") -> float:
    """Two-sided paired bootstrap p-value with the +1 correction. ``shift``: resampled differences
    at least |d| away from the observed d (the null distribution is the bootstrap one shifted to
    0); ``sacrebleu``: its centred |resampled difference| exceeding |d| (see the module doc)."""
    if method not in BOOTSTRAP_P:
        raise BadInputError(f"unknown paired bootstrap p-value {method!r}; choose shift or sacrebleu")
    diffs = scores_sys - scores_base
    if method == "shift":
        count = int(np.sum(np.abs(diffs - real_difference) >= abs(real_difference)))
    elif real_difference == 0 and not diffs.any():
        # the two systems agree on every resample: no evidence of a difference at all (the centred
        # statistic is then 0 everywhere and would give the smallest p-value)
        return 1.0
    else:
        sample = np.abs(diffs)
        count = int(np.sum(sample - sample.mean() > abs(real_difference)))
    return (count + 1) / (len(diffs) + 1)


def paired_randomization(base: Sequence[Units], system: Sequence[Units], *, n_trials: int = AR_TRIALS,
                         seed: int = DEFAULT_SEED) -> float:
    """Two-sided paired approximate randomisation: each unit's baseline and system outcome swapped
    at random (``scipy.stats.permutation_test``, ``permutation_type="samples"``)."""
    from scipy.stats import permutation_test

    statistic = _paired(base, system)
    n_trials, seed = check_trials(n_trials), check_seed(seed)
    # One index space per language: i is the baseline's unit i, n + i the system's; scipy pairs
    # the two samples it is given, so several languages are one flat pairing of every unit.
    both = [_stack(a, b) for a, b in zip(base, system)]
    sizes = [len(a) for a in base]
    offsets = np.cumsum([0] + [2 * n for n in sizes])
    flat = _Flat(both, sizes, offsets, statistic)
    first = np.concatenate([offsets[i] + np.arange(n) for i, n in enumerate(sizes)])
    second = np.concatenate([offsets[i] + n + np.arange(n) for i, n in enumerate(sizes)])
    res = permutation_test([first, second], flat.diff, permutation_type="samples", n_resamples=n_trials,
                           vectorized=True, alternative="two-sided", batch=500, random_state=np.random.default_rng(seed))
    return float(res.pvalue)


def _stack(a: Units, b: Units) -> Units:
    """The baseline's units then the system's, one index space (0..n-1, n..2n-1)."""
    if a.statistic == "weighted_f1":
        return Units(a.statistic, gold=np.concatenate([a.gold, b.gold]), chosen=np.concatenate([a.chosen, b.chosen]))
    return Units(a.statistic, np.concatenate([a.num, b.num]), np.concatenate([a.den, b.den]))


@dataclass(frozen=True)
class _Flat:
    """Several languages' stacked units behind one flat index (for one scipy pairing)."""

    groups: list
    sizes: list
    offsets: np.ndarray
    statistic: str

    def overall(self, idx: np.ndarray) -> np.ndarray:
        idx = np.atleast_2d(idx)
        parts = []
        start = 0
        for g, n, off in zip(self.groups, self.sizes, self.offsets):
            # the flat pairing keeps each language's units in their block of columns
            parts.append(g.parts(idx[:, start:start + n] - off))
            start += n
        return _combine(parts, self.statistic)

    def diff(self, first, second, axis=-1):
        return _over_resamples(lambda a, b: self.overall(b) - self.overall(a), (first, second), axis)


def compare(base: Sequence[Units], system: Sequence[Units], *, level: float = 0.95,
            n_resamples: int = BOOTSTRAP_RESAMPLES, n_trials: int = AR_TRIALS, seed: int = DEFAULT_SEED,
            bootstrap_method: str = "shift") -> PairedResult:
    """System against baseline on the same items: the difference, its paired-bootstrap interval
    and both paired tests (sacrebleu's defaults: 1 000 resamples, 10 000 trials, seed 12345)."""
    level, seed = check_level(level), check_seed(seed)
    n_resamples, n_trials = check_resamples(n_resamples), check_trials(n_trials)
    b_scores, s_scores = paired_bootstrap_samples(base, system, n_resamples, seed)
    b_value, s_value = value(base), value(system)
    diffs = s_scores - b_scores
    alpha = (1.0 - level) / 2
    low, high = np.quantile(diffs, [alpha, 1.0 - alpha])
    return PairedResult(b_value, s_value, float(low), float(high),
                        paired_bootstrap_p(b_scores, s_scores, s_value - b_value, bootstrap_method),
                        paired_randomization(base, system, n_trials=n_trials, seed=seed), sum(len(g) for g in base),
                        bootstrap_method)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error), in the input order."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate): ``scipy.stats.false_discovery_control``."""
    from scipy.stats import false_discovery_control

    return np.asarray(false_discovery_control(np.asarray(p_values, dtype=float), method="bh"))


def correct(p_values: Sequence[float], method: str) -> np.ndarray:
    if method not in CORRECTIONS:
        raise BadInputError(f"unknown correction {method!r}; choose holm or bh (Benjamini-Hochberg)")
    if not len(p_values):
        return np.zeros(0)
    return holm(p_values) if method == "holm" else benjamini_hochberg(p_values)


def mcnemar(b: int, c: int, alternative: str = "two-sided") -> float:
    """Exact McNemar p-value: of the ``b + c`` items where two paired binary outcomes differ, ``b``
    went the second system's way wrong (first right, second wrong), ``c`` the other way. Under the
    null each discordant item is either with probability 1/2 (``scipy.stats.binomtest``);
    ``alternative="greater"`` asks whether the second system is worse (b too large)."""
    from scipy.stats import binomtest

    b, c = check_count(b, "b", 0, 2**62), check_count(c, "c", 0, 2**62)
    if alternative not in ("two-sided", "greater", "less"):
        raise BadInputError(f"alternative must be two-sided, greater or less, not {alternative!r}")
    return 1.0 if b + c == 0 else float(binomtest(b, b + c, 0.5, alternative=alternative).pvalue)


def mcnemar_detectable_loss(background: float, alpha: float, power: float = 0.8, max_loss: int = 100_000) -> int | None:
    """The smallest expected net loss ``L`` (items) that the one-sided exact McNemar test at
    ``alpha`` finds with at least ``power``, when the two systems also disagree on ``background``
    items that cancel out: the items only the second gets wrong b ~ Poisson(background / 2 + L), the
    others c ~ Poisson(background / 2). None when no loss up to ``max_loss`` reaches the power."""
    from scipy.stats import binom, poisson

    if isinstance(background, bool) or not background >= 0 or not 0 < alpha < 1 or not 0 < power < 1:
        raise BadInputError("background must be >= 0 and alpha, power strictly between 0 and 1")
    half = background / 2
    c = np.arange(int(poisson.isf(1e-12, half)) + 2 if half > 0 else 1)
    pc = poisson.pmf(c, half) if half > 0 else np.ones(1)

    def k_min(ci: int) -> int:  # the fewest b that reject with c = ci: P(Binomial(b + ci, 1/2) >= b) <= alpha
        b = 0
        while binom.sf(b - 1, b + ci, 0.5) > alpha:
            b += 1
        return b

    ks = np.array([k_min(int(ci)) for ci in c])
    for loss in range(1, max_loss + 1):
        if float((pc * poisson.sf(ks - 1, half + loss)).sum()) >= power:
            return loss
    return None


def paired_difference_interval(b: int, c: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wald interval, in points, of the difference of two paired error rates (second - first):
    (b - c) / n +- z * sqrt(b + c - (b - c)^2 / n) / n, the items as the unit."""
    from scipy.stats import norm

    n = check_count(n, "items", 1, 2**62)
    if b < 0 or c < 0 or b + c > n:
        raise BadInputError(f"discordant counts b={b}, c={c} do not fit in {n} items")
    level = check_level(level)
    d = (b - c) / n
    half = norm.ppf(0.5 + level / 2) * np.sqrt(max(b + c - (b - c) ** 2 / n, 0.0)) / n
    return float(100 * (d - half)), float(100 * (d + half))
