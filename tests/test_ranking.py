"""Pairwise ranking accuracy and its statistics (xsimpp.scoring.ranking): hand-computed cases,
an independent loop re-implementation of mt-metrics-eval's Agreement, and exact enumeration of
the PERM-BOTH null on a small table."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr

from xsimpp.errors import BadInputError
from xsimpp.scoring.ranking import (
    bootstrap_ci,
    chance_accuracy,
    correlations,
    pairwise_accuracy,
    perm_both_test,
    sign_test,
    within_group_pairs,
)

# Three directions: "a" has 3 systems (one disagreeing pair), "b" has 2 systems tied on both
# proxy and gold (an agreement), "c" has a single system (no pair at all).
GROUPS = ["a", "a", "a", "b", "b", "c"]
PROXY = [1.0, 2.0, 3.0, 5.0, 5.0, 1.0]
GOLD = [10.0, 20.0, 15.0, 3.0, 3.0, 7.0]
FAMILIES = ["x", "x", "y", "x", "y", "x"]


# ------------------------------------------------------------------ hand-computed accuracies

def test_hand_computed_accuracy_with_ties_and_single_system_direction():
    # a: (0,1) Δp=-1 Δg=-10 agree; (0,2) Δp=-2 Δg=-5 agree; (1,2) Δp=-1 Δg=+5 disagree -> 2/3
    # b: (3,4) both tied -> agree -> 1/1;  c: one system -> no pair.  Total 3/4.
    r = pairwise_accuracy(PROXY, GOLD, GROUPS, FAMILIES)
    assert (r.agreements, r.pairs) == (3, 4)
    assert r.accuracy == pytest.approx(0.75)
    assert r.per_direction == {"a": (2, 3), "b": (1, 1), "c": (0, 0)}
    # within family: only (0,1) [x,x] -> agree 1/1; across: (0,2) ok, (1,2) no, (3,4) ok -> 2/3
    assert (r.within_agreements, r.within_pairs) == (1, 1)
    assert (r.across_agreements, r.across_pairs) == (2, 3)
    assert r.within_accuracy == 1.0 and r.across_accuracy == pytest.approx(2 / 3)
    assert r.agreement_vector.tolist() == [True, True, False, True]


@pytest.mark.parametrize(
    "proxy, gold, expected",
    [
        ([1, 1], [5, 5], 1),  # both tied: agreement
        ([1, 1], [5, 6], 0),  # proxy tied only: disagreement
        ([1, 2], [5, 5], 0),  # gold tied only: disagreement
        ([1, 2], [5, 6], 1),  # same order
        ([2, 1], [5, 6], 0),  # opposite order
    ],
)
def test_tie_rules_match_mt_metrics_eval(proxy, gold, expected):
    assert pairwise_accuracy(proxy, gold, ["d", "d"]).agreements == expected


def test_error_rates_are_negated():
    # xsim 2 % < 5 % means the first system is better; BLEU agrees (30 > 20).
    assert pairwise_accuracy([2.0, 5.0], [30.0, 20.0], ["d", "d"], lower_is_better=True).accuracy == 1.0
    assert pairwise_accuracy([2.0, 5.0], [30.0, 20.0], ["d", "d"]).accuracy == 0.0


def test_pairs_never_cross_directions():
    # The same two systems in two directions: 2 pairs, not C(4,2)=6.
    i, j = within_group_pairs(["x", "y", "x", "y"])
    assert sorted(zip(i.tolist(), j.tolist())) == [(0, 2), (1, 3)]


def test_only_single_system_directions_give_nan_not_a_crash():
    r = pairwise_accuracy([1.0, 2.0], [3.0, 4.0], ["a", "b"])
    assert r.pairs == 0 and np.isnan(r.accuracy)
    assert np.isnan(chance_accuracy([3.0, 4.0], ["a", "b"]))


def test_bad_inputs_are_reported():
    with pytest.raises(BadInputError, match="non-finite"):
        pairwise_accuracy([1.0, float("nan")], [1.0, 2.0], ["d", "d"])
    with pytest.raises(BadInputError, match="rows"):
        pairwise_accuracy([1.0, 2.0, 3.0], [1.0, 2.0], ["d", "d"])
    with pytest.raises(BadInputError, match="labels"):
        pairwise_accuracy([1.0, 2.0], [1.0, 2.0], ["d"])


# ------------------------------------------------- independent re-implementation (Agreement)

def _cmp(a: float, b: float) -> int:
    return (a > b) - (a < b)


def agreement_reference(proxy_by_dir: dict, gold_by_dir: dict, lower_is_better: bool):
    """mt-metrics-eval's Agreement, per direction, written from its definition with loops:
    for every unordered pair of systems, agreement iff cmp(proxy) == cmp(gold); sum over
    directions of (agreements, pairs)."""
    agree = pairs = 0
    for d in proxy_by_dir:
        systems = list(proxy_by_dir[d])
        for s1, s2 in itertools.combinations(systems, 2):
            p1, p2 = proxy_by_dir[d][s1], proxy_by_dir[d][s2]
            if lower_is_better:
                p1, p2 = p2, p1  # the lower score is the better one
            if _cmp(p1, p2) == _cmp(gold_by_dir[d][s1], gold_by_dir[d][s2]):
                agree += 1
            pairs += 1
    return agree, pairs


@pytest.mark.parametrize("seed", range(25))
def test_matches_loop_reference_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    n_dirs = int(rng.integers(1, 6))
    proxy_by_dir, gold_by_dir, rows = {}, {}, []
    for d in range(n_dirs):
        n_sys = int(rng.integers(1, 7))  # includes single-system directions
        systems = rng.choice(10, size=n_sys, replace=False)
        proxy_by_dir[d], gold_by_dir[d] = {}, {}
        for s in systems:
            # Small integer ranges make ties on both sides frequent.
            p, g = float(rng.integers(0, 4)), float(rng.integers(0, 4))
            proxy_by_dir[d][int(s)], gold_by_dir[d][int(s)] = p, g
            rows.append((d, int(s), p, g))
    rng.shuffle(rows)  # row order must not matter
    groups = [r[0] for r in rows]
    for lib in (False, True):
        got = pairwise_accuracy([r[2] for r in rows], [r[3] for r in rows], groups, lower_is_better=lib)
        assert (got.agreements, got.pairs) == agreement_reference(proxy_by_dir, gold_by_dir, lib)


# ---------------------------------------------------------------------------------- chance

def test_chance_is_half_without_ties_and_less_with_gold_ties():
    assert chance_accuracy([1.0, 2.0, 3.0], ["d"] * 3) == 0.5
    # GOLD: dir a untied (3 pairs), dir b tied (1 pair): 0.5 * 3 / 4
    assert chance_accuracy(GOLD, GROUPS) == pytest.approx(0.375)
    # with PROXY's ties kept: a has no proxy ties -> 3 * 1/2; b proxy tied (t=1), gold tied -> 1
    assert chance_accuracy(GOLD, GROUPS, PROXY) == pytest.approx(2.5 / 4)


def test_chance_given_ties_matches_monte_carlo():
    rng = np.random.default_rng(7)
    groups = np.repeat(np.arange(4), 5)
    proxy = rng.integers(0, 3, size=20).astype(float)
    gold = rng.integers(0, 3, size=20).astype(float)
    sims = []
    for _ in range(4000):
        shuffled = proxy.copy()
        for g in range(4):
            rows = np.flatnonzero(groups == g)
            shuffled[rows] = rng.permutation(proxy[rows])
        sims.append(pairwise_accuracy(shuffled, gold, groups).accuracy)
    assert chance_accuracy(gold, groups, proxy) == pytest.approx(np.mean(sims), abs=0.01)


# --------------------------------------------------------------------------- bootstrap CI

def test_bootstrap_is_seeded_and_brackets_the_accuracy():
    agree = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 3, dtype=bool)
    lo, hi = bootstrap_ci(agree, n_resamples=2000, seed=3)
    assert (lo, hi) == bootstrap_ci(agree, n_resamples=2000, seed=3)
    assert lo < agree.mean() < hi and 0.4 < lo and hi < 0.95
    assert bootstrap_ci(np.ones(4, bool)) == (1.0, 1.0)  # all pairs agree: a degenerate interval
    assert all(np.isnan(bootstrap_ci([])))


def test_bootstrap_bad_arguments():
    with pytest.raises(BadInputError):
        bootstrap_ci([1, 0], confidence=1.5)
    with pytest.raises(BadInputError):
        bootstrap_ci([1, 0], n_resamples=0)


# ------------------------------------------------------------------------------ PERM-BOTH

def test_perm_both_matches_exact_enumeration_of_the_swaps():
    # 2 directions x 4 systems = 8 cells: all 2^8 swap patterns can be enumerated exactly.
    groups = ["d1"] * 4 + ["d2"] * 4
    gold = np.array([10, 20, 30, 40, 5, 15, 25, 35], float)
    a = np.array([1, 2, 4, 3, 1, 2, 3, 4], float)  # 11/12 pairs agree
    b = np.array([4, 1, 2, 3, 2, 1, 4, 3], float)  # a poor proxy
    acc = lambda x: pairwise_accuracy(x, gold, groups).agreements  # noqa: E731
    observed = acc(a) - acc(b)
    exact = []
    for mask in itertools.product([False, True], repeat=8):
        m = np.array(mask)
        exact.append(acc(np.where(m, b, a)) - acc(np.where(m, a, b)))
    exact = np.array(exact)
    p_exact = np.mean(exact >= observed)
    res = perm_both_test(a, b, gold, groups, n_permutations=20000, seed=1, scale="none")
    assert res.delta == pytest.approx(observed / 12)
    assert res.p_value == pytest.approx(p_exact, abs=0.01)
    # The null of swapping cells is symmetric around 0.
    assert res.null_deltas.mean() == pytest.approx(0, abs=0.01)


def test_perm_both_is_seeded_and_identical_proxies_are_not_different():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(6), 5)
    gold = rng.normal(size=30)
    a = gold + rng.normal(scale=0.3, size=30)
    r1 = perm_both_test(a, a, gold, groups, n_permutations=300, seed=5)
    assert r1.delta == 0 and r1.p_value == 1.0
    b = rng.normal(size=30)
    r2 = perm_both_test(a, b, gold, groups, n_permutations=500, seed=5)
    assert r2 == perm_both_test(a, b, gold, groups, n_permutations=500, seed=5)
    assert r2.delta >= 0.3 and r2.p_value < 0.01
    # b better than a? no.
    assert perm_both_test(b, a, gold, groups, n_permutations=500, seed=5).p_value > 0.9


def test_perm_both_rank_scale_makes_error_rates_of_different_size_exchangeable():
    # xsim ~ 1 %, xsim++ ~ 10 %: the same ordering, very different scales. Ranking first keeps
    # each proxy's accuracy and gives an (almost) untouched null: Δ = 0, p = 1.
    rng = np.random.default_rng(2)
    groups = np.repeat(np.arange(5), 4)
    quality = rng.normal(size=20)
    gold = 30 + 5 * quality
    xs, xpp = 1 - 0.2 * quality, 10 - 2 * quality
    ranked = perm_both_test(xs, xpp, gold, groups, lower_is_better_a=True, lower_is_better_b=True, seed=0,
                            n_permutations=200)
    assert ranked.delta == 0 and ranked.p_value == 1.0
    assert np.all(ranked.null_deltas == 0)
    raw = perm_both_test(xs, xpp, gold, groups, lower_is_better_a=True, lower_is_better_b=True, seed=0,
                         n_permutations=200, scale="none")
    assert np.any(raw.null_deltas != 0)  # raw swaps scramble the order: a wide, meaningless null


def test_perm_both_bad_arguments():
    with pytest.raises(BadInputError):
        perm_both_test([1, 2], [2, 1], [1, 2], ["d", "d"], scale="minmax")
    with pytest.raises(BadInputError):
        perm_both_test([1, 2], [2, 1], [1, 2], ["d", "d"], alternative="less")


# ------------------------------------------------------------------- correlations, sign test

def test_correlations_pooled_and_within():
    rng = np.random.default_rng(11)
    groups = np.repeat(["x", "y", "z"], 4)
    gold = rng.normal(size=12)
    proxy = rng.normal(size=12)
    c = correlations(proxy, gold, groups, lower_is_better=True)
    assert c["pearson"] == pytest.approx(pearsonr(-proxy, gold)[0])
    assert c["spearman"] == pytest.approx(spearmanr(-proxy, gold)[0])
    assert c["kendall"] == pytest.approx(kendalltau(-proxy, gold)[0])
    per = [kendalltau(-proxy[groups == g], gold[groups == g])[0] for g in "xyz"]
    assert c["kendall_within"] == pytest.approx(np.mean(per))
    # two systems per direction: within-direction coefficients are undefined, pooled are not
    two = correlations([1, 2, 3, 5], [2, 1, 3, 4], ["a", "a", "b", "b"])
    assert np.isnan(two["pearson_within"]) and np.isfinite(two["pearson"])


def test_sign_test_sonar_shape():
    # four directions, two systems each, all agreeing: P(X >= 4 | Bin(4, 1/2)) = 1/16
    groups = ["fra", "fra", "spa", "spa", "swh", "swh", "rus", "rus"]
    xpp = [4.8, 7.6, 7.9, 12.6, 7.1, 15.2, 6.5, 12.4]
    bleu = [46.1, 40.4, 34.5, 29.6, 42.4, 27.2, 37.1, 29.7]
    assert sign_test(xpp, bleu, groups, lower_is_better=True) == pytest.approx(1 / 16)
    assert sign_test(xpp, bleu, groups) == pytest.approx(1.0)


def test_within_and_across_model_pairs_by_hand():
    import pandas as pd

    from xsimpp.tasks.ranking import RankingTable, evaluate_table

    # one direction, systems s0, s1 of family A and s2 of family B: pairs (0,1) within, (0,2), (1,2) across.
    # Proxy a orders all three as the gold does; b swaps s0 and s1 (wrong on the within pair only).
    gold, a, b, fam = [3.0, 2.0, 1.0], [3.0, 2.0, 1.0], [2.0, 3.0, 1.0], ["A", "A", "B"]
    acc = pairwise_accuracy(b, gold, ["d"] * 3, fam)
    assert acc.same_family.tolist() == [True, False, False] and acc.agreement_vector.tolist() == [False, True, True]
    within = perm_both_test(a, b, gold, ["d"] * 3, pair_mask=acc.same_family, n_permutations=50)
    across = perm_both_test(a, b, gold, ["d"] * 3, pair_mask=~acc.same_family, n_permutations=50)
    assert within.delta == 1.0 and across.delta == 0.0
    assert perm_both_test(a, b, gold, ["d"] * 3, pair_mask=np.ones(3, bool), seed=1).p_value == \
        perm_both_test(a, b, gold, ["d"] * 3, seed=1).p_value  # every pair = no mask
    with pytest.raises(BadInputError, match="pair_mask"):
        perm_both_test(a, b, gold, ["d"] * 3, pair_mask=[True])
    # the report: within / across CIs (all within pairs agree for a: CI [1, 1]) and tests over each kind
    frame = pd.DataFrame({"direction": ["d"] * 3, "system": ["s0", "s1", "s2"], "family": fam, "bleu": gold,
                          "a": a, "b": b})
    rep = evaluate_table(RankingTable(frame, ["a", "b"], {"a": False, "b": False}), n_bootstrap=50, n_permutations=50)
    pa, pb = rep.proxies
    assert pa.within_ci == (1.0, 1.0) and pb.within_ci == (0.0, 0.0) and pb.across_ci == (1.0, 1.0)
    assert [(x, y, r.delta) for x, y, r in rep.within_comparisons] == [("a", "b", 1.0)]
    assert [(x, y, r.delta) for x, y, r in rep.across_comparisons] == [("a", "b", 0.0)]
    js = rep.to_json()
    assert js["proxies"][1]["within_ci_high"] == 0.0 and js["within_comparisons"][0]["delta"] == 1.0
    # a table without families has no within pairs: no split tests, NaN split CIs
    flat = evaluate_table(RankingTable(frame.drop(columns="family").assign(family=frame["system"]), ["a", "b"],
                                       {"a": False, "b": False}), n_bootstrap=20, n_permutations=20)
    assert flat.within_comparisons == [] and np.isnan(flat.proxies[0].within_ci[0])


def test_the_reference_column_is_named_by_the_table():
    """A study ranks against its ground truth under its own name (mining_f1): no column has to be
    called "bleu", and the report is the one a "bleu" column gives (`xsimpp rank`'s default)."""
    import pandas as pd

    from xsimpp.tasks.ranking import RankingTable, evaluate_table

    frame = pd.DataFrame({"direction": ["d"] * 3 + ["e"] * 3, "system": ["s0", "s1", "s2"] * 2, "family": "f",
                          "mining_f1": [3.0, 2.0, 1.0, 1.0, 2.0, 3.0], "a": [3.0, 1.0, 2.0, 1.0, 2.0, 3.0]})
    kw = dict(n_bootstrap=30, n_permutations=30)
    mine = evaluate_table(RankingTable(frame, ["a"], {"a": False}, reference="mining_f1"), **kw).to_json()
    bleu = evaluate_table(RankingTable(frame.rename(columns={"mining_f1": "bleu"}), ["a"], {"a": False}), **kw)
    assert mine == bleu.to_json() and mine["proxies"][0]["agreements"] == 5
