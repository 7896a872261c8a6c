"""Tie-aware pairwise accuracy (issue 54): ties as 1/2 and tie calibration (Deutsch et al. 2023,
mt-metrics-eval's ``acc_eq``) beside the mt-metrics-eval rule, which stays as it is."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clikit import cli
from xsimpp.scoring.ranking import pairwise_accuracy, tie_aware_accuracy, tie_calibration, within_group_pairs
from xsimpp.tasks import registry
from xsimpp.tasks.ranking import RankingTable, evaluate_table

SONAR = Path(__file__).resolve().parent.parent / "xsimpp" / "data" / "examples" / "sonar_flores200_devtest.csv"

# Worked by hand (proxy higher is better; quarters, so every difference is exact):
#   A: gold 10 20 20 30, proxy 1 2 2.25 3 -> pairs (|Δproxy|): 01 agree (1), 02 agree (1.25),
#      03 agree (2), 12 gold tie only (.25), 13 agree (1), 23 agree (.75)
#   B: gold 1 2 3, proxy 5 5 4 -> 01 proxy tie only (0), 02 disagree (1), 12 disagree (1)
HAND_GOLD = [10, 20, 20, 30, 1, 2, 3]
HAND_PROXY = [1.0, 2.0, 2.25, 3.0, 5.0, 5.0, 4.0]
HAND_GROUPS = ["A"] * 4 + ["B"] * 3


def test_hand_worked_example():
    t = tie_aware_accuracy(HAND_PROXY, HAND_GOLD, HAND_GROUPS)
    # the mt-metrics-eval rule: 5 agreements of 9 pairs (A's gold tie and B's proxy tie are errors)
    assert pairwise_accuracy(HAND_PROXY, HAND_GOLD, HAND_GROUPS).agreements == 5
    assert (t.pairs, t.proxy_ties, t.tie_share) == (9, 1, pytest.approx(1 / 9))
    # ties as 1/2: A's gold-tied pair left out -> 8 pairs, 5 agreements + 1/2 for B's proxy tie
    assert (t.half_pairs, t.half_agreements, t.half_proxy_ties) == (8, 5, 1)
    assert t.half_accuracy == pytest.approx(5.5 / 8)
    # tie calibration: eps 0 -> 5/9, .25 -> 6/9 (A's 12 becomes a right tie), .75 -> 5/9, 1 -> 3/9, ...
    assert (t.calibrated_correct, t.epsilon, t.calibrated_ties) == (6, 0.25, 2)
    assert t.calibrated_accuracy == pytest.approx(6 / 9) and t.calibrated_tie_share == pytest.approx(2 / 9)


def test_orientation_does_not_move_epsilon_or_any_count():
    up = tie_aware_accuracy(HAND_PROXY, HAND_GOLD, HAND_GROUPS)
    down = tie_aware_accuracy([-x for x in HAND_PROXY], HAND_GOLD, HAND_GROUPS, lower_is_better=True)
    assert up == down


def test_equally_good_epsilons_keep_the_smallest():
    # 0 -> 5/6 (gold tie 12 wrong), .25 -> 5/6 (12 right, 23 now a wrong tie): 0 wins
    correct, epsilon, ties = tie_calibration(np.array([1.0, 2.0, 2.25, 2.5]), np.array([10.0, 20, 20, 30]),
                                             *within_group_pairs(["d"] * 4))
    assert (correct, epsilon, ties) == (5, 0.0, 0)


def test_a_proxy_that_ties_everything_is_at_chance_under_the_half_rule():
    t = tie_aware_accuracy([3.0] * 4, [1.0, 2.0, 3.0, 4.0], ["d"] * 4)
    assert (t.half_accuracy, t.tie_share) == (0.5, 1.0)
    assert (t.calibrated_correct, t.epsilon) == (0, 0.0)  # every candidate is 0; no gold tie to get right


def test_no_pairs_gives_nan_not_an_error():
    t = tie_aware_accuracy([1.0, 2.0], [1.0, 2.0], ["a", "b"])
    assert t.pairs == 0 and np.isnan(t.half_accuracy) and np.isnan(t.calibrated_accuracy) and np.isnan(t.epsilon)


# --- against the reference's documented behaviour, re-derived by brute force ------------------
# mt-metrics-eval (tau_optimization.py, stats.KendallWithTiesOpt with variant 'acc23'): every pair
# within a row counts, gold ties included; a pair is right when metric and gold order it alike or
# both tie, the metric tying when |Δmetric| <= epsilon; the candidates are 0 and every pair's
# |Δmetric|, tried in increasing order, the first best kept; the accuracy is averaged over rows.

def reference_acc_eq(proxy, gold, groups, average_rows: bool) -> tuple[Fraction, float]:
    rows: dict = {}
    for g, m, h in zip(groups, proxy, gold):
        rows.setdefault(g, []).append((m, h))
    pairs = {g: list(itertools.combinations(v, 2)) for g, v in rows.items() if len(v) > 1}
    candidates = sorted({0.0} | {abs(a[0] - b[0]) for ps in pairs.values() for a, b in ps})

    def right(a, b, eps):
        metric_tie, gold_tie = abs(a[0] - b[0]) <= eps, a[1] == b[1]
        if metric_tie or gold_tie:
            return metric_tie and gold_tie
        return (a[0] > b[0]) == (a[1] > b[1])

    best = None
    for eps in candidates:
        per_row = [(sum(right(a, b, eps) for a, b in ps), len(ps)) for ps in pairs.values()]
        acc = (sum(Fraction(r, n) for r, n in per_row) / len(per_row) if average_rows
               else Fraction(sum(r for r, _ in per_row), sum(n for _, n in per_row)))
        if best is None or acc > best[0]:
            best = (acc, eps)
    return best


def reference_half(proxy, gold, groups) -> Fraction:
    credit, pairs = Fraction(0), 0
    for (g1, m1, h1), (g2, m2, h2) in itertools.combinations(zip(groups, proxy, gold), 2):
        if g1 != g2 or h1 == h2:
            continue
        pairs += 1
        credit += Fraction(1, 2) if m1 == m2 else int((m1 > m2) == (h1 > h2))
    return credit / pairs


def _random_table(rng, sizes):
    groups = [f"g{k}" for k, n in enumerate(sizes) for _ in range(n)]
    gold = rng.integers(0, 6, len(groups)).astype(float)  # coarse: many gold ties
    proxy = rng.integers(0, 12, len(groups)) / 4.0  # quarters: ties and exact differences
    return proxy, gold, groups


@pytest.mark.parametrize("seed", range(8))
def test_matches_the_reference_definition_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    # equal directions: the reference's row average is the pooled accuracy
    proxy, gold, groups = _random_table(rng, [5] * int(rng.integers(1, 5)))
    t = tie_aware_accuracy(proxy, gold, groups)
    acc, eps = reference_acc_eq(proxy.tolist(), gold.tolist(), groups, average_rows=True)
    assert Fraction(t.calibrated_correct, t.pairs) == acc and t.epsilon == eps
    assert t.calibrated_ties == sum(abs(proxy[i] - proxy[j]) <= eps for i, j in zip(*within_group_pairs(groups)))
    assert Fraction(t.half_agreements) + Fraction(t.half_proxy_ties, 2) == reference_half(proxy, gold, groups) * t.half_pairs


@pytest.mark.parametrize("seed", range(4))
def test_unequal_directions_pool_pairs_as_the_main_accuracy_does(seed):
    proxy, gold, groups = _random_table(np.random.default_rng(100 + seed), [2, 3, 6])
    t = tie_aware_accuracy(proxy, gold, groups)
    acc, eps = reference_acc_eq(proxy.tolist(), gold.tolist(), groups, average_rows=False)
    assert (Fraction(t.calibrated_correct, t.pairs), t.epsilon) == (acc, eps)


def test_calibration_never_does_worse_than_exact_ties():
    # epsilon 0 is always a candidate, and at 0 the rule is the mt-metrics-eval one
    for seed in range(20):
        proxy, gold, groups = _random_table(np.random.default_rng(seed), [4, 4, 4])
        t = tie_aware_accuracy(proxy, gold, groups)
        assert t.calibrated_correct >= pairwise_accuracy(proxy, gold, groups).agreements


# --- where ranking accuracy is reported ---------------------------------------------------------

def test_the_new_rules_are_registered_metrics_of_the_ranking():
    for name in ("pairwise_accuracy", "pairwise_accuracy_ties_half", "pairwise_accuracy_tie_calibrated"):
        assert registry.METRICS[name].producer == "rank" and not registry.METRICS[name].lower_is_better


def _hand_report(families=None):
    frame = pd.DataFrame({"direction": HAND_GROUPS, "system": [f"s{k}" for k in range(7)],
                          "family": families or [f"s{k}" for k in range(7)], "bleu": HAND_GOLD, "score": HAND_PROXY})
    return evaluate_table(RankingTable(frame, ["score"], {"score": False}), n_bootstrap=50, n_permutations=50)


def test_within_and_across_family_pairs_get_their_own_tie_aware_numbers():
    # A's systems 0 and 1 share a family: the one within pair agrees (|Δ| 1); the other 8 are across
    row = _hand_report(["f", "f", "a", "b", "c", "d", "e"]).to_json()["proxies"][0]
    assert (row["within_accuracy_ties_half"], row["within_pairs_ties_half"], row["within_tie_epsilon"]) == (1.0, 1, 0.0)
    assert (row["across_accuracy_ties_half"], row["across_pairs_ties_half"]) == (pytest.approx(4.5 / 7), 7)
    # across: eps .25 turns A's gold-tied 12 right -> 5 of 8
    assert (row["across_accuracy_tie_calibrated"], row["across_tie_epsilon"]) == (pytest.approx(5 / 8), 0.25)
    assert (row["within_proxy_ties"], row["across_proxy_ties"]) == (0, 1)
    alone = _hand_report().to_json()["proxies"][0]  # no two systems of one family: no within pair
    assert (alone["within_pairs_ties_half"], alone["within_accuracy_ties_half"], alone["within_tie_epsilon"]) == (0, None, None)


def test_report_json_adds_the_tie_aware_fields_beside_the_old_ones():
    row = _hand_report().to_json()["proxies"][0]
    assert (row["accuracy"], row["agreements"], row["pairs"]) == (pytest.approx(5 / 9), 5, 9)
    assert row["proxy_ties"] == 1 and row["proxy_tie_share"] == pytest.approx(1 / 9)
    assert (row["accuracy_ties_half"], row["pairs_ties_half"]) == (pytest.approx(5.5 / 8), 8)
    assert (row["accuracy_tie_calibrated"], row["tie_epsilon"], row["tie_calibrated_ties"]) == (pytest.approx(6 / 9), 0.25, 2)


def test_study_text_and_html_tables_show_them():
    from types import SimpleNamespace

    from xsimpp.report.study import _ranking_table
    from xsimpp.study.output import ranking_text

    rep = _hand_report()
    text = ranking_text(SimpleNamespace(rankings={"mining_f1": rep}, data_summary={}), "mining_f1")
    header, row = text.splitlines()[1:3]
    assert header.split()[-3:] == ["ties%", "ties½%", "tiecal%"] and row.split()[-3:] == ["11.1", "68.8", "66.7"]
    page = _ranking_table(rep, "t", "mining F1")
    assert "ties as ½ % (pairs)" in page and ">68.8 (8)<" in page and ">66.7 (ε 0.25)<" in page


def test_rank_cli_prints_and_writes_them(capsys, tmp_path):
    code, out, _ = cli(capsys, "rank", SONAR, "--json", tmp_path / "r.json")
    assert code == 0
    lines = out.splitlines()
    head = lines.index("tie-aware agreement (above, a proxy tie is a disagreement, as in mt-metrics-eval):")
    assert lines[head + 1].split()[:4] == ["proxy", "proxy", "ties", "ties"]
    assert lines[head + 3].split() == ["xsim++", "0/4", "0.00", "100.00", "4", "100.00", "0", "0.00"]
    row = json.loads((tmp_path / "r.json").read_text())["proxies"][0]
    assert (row["accuracy_ties_half"], row["accuracy_tie_calibrated"], row["tie_epsilon"]) == (1.0, 1.0, 0.0)


# --- sign-flip test over languages (issue 54, item 3) ----------------------------------------------

def test_sign_flip_hand_worked():
    from xsimpp.scoring.ranking import sign_flip_test

    # 3 languages, all ahead: of the 8 sign vectors only the observed one reaches mean 0.2 (and,
    # two-sided, its mirror)
    r = sign_flip_test([0.1, 0.2, 0.3], alternative="greater")
    assert (r.delta, r.p_value, r.n_permutations) == (pytest.approx(0.2), 1 / 8, 8)
    assert sign_flip_test([0.1, 0.2, 0.3]).p_value == 2 / 8
    # sums of ±.1 ±.1 ±.2 that reach the observed .2: +++, +-+, -++ (float round-off must not drop one)
    assert sign_flip_test([0.1, -0.1, 0.2], alternative="greater").p_value == 3 / 8
    # a language without a difference adds nothing either way
    assert sign_flip_test([0.5, 0.0], alternative="greater").p_value == 2 / 4


@pytest.mark.parametrize("seed", range(5))
def test_sign_flip_exact_matches_enumeration(seed):
    from xsimpp.scoring.ranking import sign_flip_test

    d = np.random.default_rng(seed).integers(-5, 6, 6).astype(float)
    sums = [sum(s * x for s, x in zip(signs, d)) for signs in itertools.product((-1, 1), repeat=len(d))]
    assert sign_flip_test(d, alternative="greater").p_value == sum(s >= d.sum() for s in sums) / 64
    assert sign_flip_test(d).p_value == sum(abs(s) >= abs(d.sum()) for s in sums) / 64


def test_sign_flip_monte_carlo_beyond_the_exact_limit():
    from xsimpp.scoring.ranking import sign_flip_test

    d = np.random.default_rng(7).normal(0.05, 0.1, 18)
    exact = sign_flip_test(d, exact_up_to=18)
    mc = sign_flip_test(d, exact_up_to=10, n_flips=20_000, seed=3)
    assert (exact.n_permutations, mc.n_permutations) == (2 ** 18, 20_000)
    assert mc.p_value == sign_flip_test(d, exact_up_to=10, n_flips=20_000, seed=3).p_value  # seeded
    assert abs(mc.p_value - exact.p_value) < 0.015 and 0 < mc.p_value <= 1


def test_sign_flip_refuses_bad_input():
    from xsimpp.errors import BadInputError
    from xsimpp.scoring.ranking import sign_flip_test

    for kwargs in ({"alternative": "less"}, {"n_flips": 0}):
        with pytest.raises(BadInputError):
            sign_flip_test([0.1, 0.2], **kwargs)
    with pytest.raises(BadInputError, match="non-finite"):
        sign_flip_test([0.1, float("nan")])
    assert np.isnan(sign_flip_test([]).p_value)
