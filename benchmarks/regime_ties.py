"""The regime study's within-model agreement read three ways (issue 54), from the committed seed
folders alone (benchmarks/results/regime_<regime>/seed<S>/; nothing is re-run):

- *ties as errors*: mt-metrics-eval's rule, the one benchmarks/regime.py's tables use (a pair the
  proxy ties and mining F1 does not counts as a disagreement);
- *ties as 1/2*: over the pairs whose mining F1 differs, a proxy tie scores 1/2;
- *tie-calibrated*: Deutsch et al. 2023 (mt-metrics-eval's ``acc_eq``), epsilon fitted on the pairs.

xsim on 300 lines of a saturated student makes a handful of errors per language, so it ties many
checkpoint pairs; the first rule charges each such tie as a wrong order. For the headline pair
(xsim[ratio] against xsim++[strict]) it also gives the exact sign-flip test over languages (the
unit the checkpoints' pairs are nested in), under the first two rules.

    python benchmarks/regime_ties.py --regime saturated          # the docs' tie table
    python benchmarks/regime_ties.py --regime saturated --json   # every number, as JSON
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bounds  # noqa: E402  (benchmarks/bounds.py: the command line's parser)
import regime as R  # noqa: E402  (benchmarks/regime.py: the regimes, arms, proxies and seed folders)

from xsimpp.scoring import ranking  # noqa: E402

HEADLINE = ("xsim[ratio]", "xsim++[strict]")  # the reading's comparison: LASER's xsim against xsim++
# The gold sets the reading draws on: (key, arm, ground truth, how the table names it)
GOLDS = (("flores", "near0", R.TRUTH, "FLORES + NTREX gold (`mining_f1`, 10 languages)"),
         ("disjoint", "disjoint", R.TRUTH,
          f"FLORES gold apart from the proxies' lines (devtest[{R.FLORES_LINES}:{2 * R.FLORES_LINES}] + NTREX, "
          "`mining_f1`, 10 languages)"),
         ("ntrex", "near0", R.NTREX_TRUTH, "NTREX gold only (`mining_f1_ntrex`, 6 languages)"))
VIEWS = (("with_start", "with the start"), ("without_start", "checkpoints only"))


def _within(frame, proxy: str, truth: str) -> tuple[ranking.PairwiseAccuracy, ranking.TieAwareAccuracy]:
    """The proxy's accuracy under mt-metrics-eval's rule and its tie-aware readings, both over the
    within-model pairs of ``frame``."""
    groups, families = frame["direction"].tolist(), frame["family"].tolist()
    acc = ranking.pairwise_accuracy(frame[proxy], frame[truth], groups, families, lower_is_better=True)
    ties = ranking.tie_aware_accuracy(frame[proxy], frame[truth], groups, lower_is_better=True,
                                      pair_mask=acc.same_family)
    return acc, ties


def tie_view(frame, truth: str) -> dict:
    """Every proxy's within-model pairs under the three rules, and the headline pair's sign-flip
    tests over languages (mean of the per-language differences, xsim++[strict] minus xsim[ratio])."""
    proxies = {}
    for p in R.PROXIES:
        acc, ties = _within(frame, p, truth)
        proxies[p] = {"pairs": ties.pairs, "ties": ties.proxy_ties, "tie_share": ties.tie_share,
                      "as_errors": acc.within_accuracy, "as_half": ties.half_accuracy, "half_pairs": ties.half_pairs,
                      "calibrated": ties.calibrated_accuracy, "epsilon": ties.epsilon}
    per_language = {"as_errors": [], "as_half": []}
    for _, sub in frame.groupby("direction", sort=False):
        (acc_a, ties_a), (acc_b, ties_b) = (_within(sub, p, truth) for p in HEADLINE)
        per_language["as_errors"].append(acc_b.within_accuracy - acc_a.within_accuracy)
        per_language["as_half"].append(ties_b.half_accuracy - ties_a.half_accuracy)
    # a language whose gold ties every pair has no ties-as-1/2 accuracy: it carries no information there
    per_language = {rule: [d for d in diffs if d == d] for rule, diffs in per_language.items()}
    flips = {rule: ranking.sign_flip_test(diffs) for rule, diffs in per_language.items()}
    return {"languages": int(frame["direction"].nunique()), "proxies": proxies,
            "sign_flip": {rule: {"p": t.p_value, "mean_difference": t.delta, "sign_vectors": t.n_permutations,
                                 "languages_ahead": int(sum(d > 0 for d in per_language[rule])),
                                 "languages_behind": int(sum(d < 0 for d in per_language[rule]))}
                          for rule, t in flips.items()}}


def analyse_seed(folder: Path, start: str) -> dict:
    """Each arm and ground truth of one seed, with and without the untrained start's cells."""
    import pandas as pd

    from study_rerank import read_study

    out = {"seed": int(folder.name[4:]), "arms": {}}
    for arm in R.ARMS:
        cells = pd.DataFrame(read_study(folder / arm)[1])
        out["arms"][arm] = {}
        for truth in (R.TRUTH, R.NTREX_TRUTH):
            frame = cells[cells[truth].notna()]
            out["arms"][arm][truth] = {
                "with_start": tie_view(frame.reset_index(drop=True), truth),
                "without_start": tie_view(frame[frame["system"] != start].reset_index(drop=True), truth)}
    return out


def analyse(regime: R.Regime) -> dict:
    seeds = [analyse_seed(f, regime.start_label) for f in R.seed_folders(regime)]
    if not seeds:
        raise SystemExit(f"regime_ties: no seed folders under {regime.results}; run `python benchmarks/regime.py run "
                         f"--regime {regime.name}` first")
    res = {"regime": regime.name, "seeds": seeds}
    add_bh(res)
    return res


def table_flips(res: dict) -> list[dict]:
    """Every sign-flip test the docs' tie table reports (gold sets x seeds x views x rules): the
    family its Benjamini-Hochberg correction runs over."""
    return [view_of(s, gold, view)["sign_flip"][rule] for gold, *_ in GOLDS for s in res["seeds"]
            for view, _ in VIEWS for rule in ("as_errors", "as_half")]


def add_bh(res: dict) -> None:
    """Each table p-value's Benjamini-Hochberg adjustment over the whole table (``p_bh``), so a
    reading that picks its comparisons from the table is corrected for all it could have picked."""
    from scipy.stats import false_discovery_control

    flips = table_flips(res)
    for f, adj in zip(flips, false_discovery_control([f["p"] for f in flips], method="bh")):
        f["p_bh"] = float(adj)


def view_of(seed: dict, gold: str, view: str) -> dict:
    """One seed's tie view of a gold set the reading draws on (a key of GOLDS)."""
    _, arm, truth, _ = next(g for g in GOLDS if g[0] == gold)
    return seed["arms"][arm][truth][view]


def per_seed(res: dict, gold: str, view: str, proxy: str, rule: str) -> str:
    """A proxy's accuracy (or tie share) under one rule, seed by seed: "59.7 / 62.2 / 59.2"."""
    return " / ".join(R._pct(view_of(s, gold, view)["proxies"][proxy][rule]) for s in res["seeds"])


def _p(x: float) -> str:
    return f"{x:.3f}"


def _both(a: dict, b: dict, key: str) -> str:
    """One column of the headline pair: "xsim[ratio]'s / xsim++[strict]'s", in %."""
    return f"{R._pct(a[key])} / {R._pct(b[key])}"


def markdown(res: dict) -> list[str]:
    """The docs' tie table: per gold set, seed and kind of within-model pair, the headline pair's tie
    shares, its accuracies under the three rules and the sign-flip p over languages."""
    a, b = HEADLINE
    rows = [f"Within the model, {a} against {b} with ties read three ways (% of within-model pairs; ties as errors "
            "is mt-metrics-eval's rule, the tables' above; ties as ½ is over the pairs whose mining F1 differs; "
            "tie-calibrated fits ε, in xsim points, on the very pairs it scores; p: exact two-sided sign-flip test "
            f"over languages of the per-language difference, {b} minus {a}, all 2^L sign vectors; in brackets "
            f"Benjamini-Hochberg adjusted over all {len(table_flips(res))} p-values of this table):"]
    for gold, _, _, title in GOLDS:
        rows += ["", f"{title}:", "",
                 f"| seed | pairs | pairs tied, {a} / {b} | ties as errors | ties as ½ (pairs) | tie-calibrated (ε) | "
                 "p over languages, ties as errors / as ½ |", "|---|---|---|---|---|---|---|"]
        for s in res["seeds"]:
            for view, label in VIEWS:
                v = view_of(s, gold, view)
                pa, pb = v["proxies"][a], v["proxies"][b]
                flip = v["sign_flip"]
                cells = [_both(pa, pb, "tie_share"), _both(pa, pb, "as_errors"),
                         f"{_both(pa, pb, 'as_half')} ({pa['half_pairs']})",
                         f"{_both(pa, pb, 'calibrated')} ({pa['epsilon']:g}, {pb['epsilon']:g})",
                         f"{_p(flip['as_errors']['p'])} / {_p(flip['as_half']['p'])} "
                         f"({_p(flip['as_errors']['p_bh'])} / {_p(flip['as_half']['p_bh'])})"]
                rows.append(f"| {s['seed']} | {label}, {pa['pairs']} | " + " | ".join(cells) + " |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--regime", choices=sorted(R.REGIMES), default="saturated",
                    help="saturated: e5-small onto itself (the paper's regime, default); minilm: a weak student")
    ap.add_argument("--json", action="store_true", help="print every number as JSON instead of the docs' table")
    args = ap.parse_args(argv)
    res = analyse(R.REGIMES[args.regime])
    print(json.dumps(res, indent=1, sort_keys=True) if args.json else "\n".join(markdown(res)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
