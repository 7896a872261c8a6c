"""`xsimpp rank`: how well does each proxy rank systems the way BLEU does?"""

from __future__ import annotations

import math

from ..textio import finite, path, seed


def register(sub) -> None:
    from ..scoring.significance import MAX_RESAMPLES, MAX_TRIALS, MIN_RESAMPLES, MIN_TRIALS

    p = sub.add_parser(
        "rank", help="pairwise ranking accuracy of proxies (xsim, xsim++, ...) against BLEU",
        description="Pairwise ranking accuracy (Kocmi et al. 2021) of each proxy against BLEU over system pairs "
                    "within each language direction, with a bootstrap CI, the chance level, correlations and "
                    "PERM-BOTH permutation tests between proxies.")
    add_table_options(p)
    p.add_argument("--compare", action="append", metavar="A,B",
                   help="PERM-BOTH test 'A better than B' (one-sided; repeatable; default: the first proxy "
                        "against each other one, two-sided)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the bootstrap and permutations (default: 0)")
    # the bounds of every resampling count (scoring/significance.py says why): a PERM-BOTH sample is a
    # randomisation trial, its p-value (c + 1) / (N + 1)
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help=f"bootstrap resamples, {MIN_RESAMPLES} to {MAX_RESAMPLES} (default: 1000)")
    p.add_argument("--permutations", type=int, default=1000, metavar="N",
                   help=f"PERM-BOTH samples, {MIN_TRIALS} to {MAX_TRIALS} (default: 1000)")
    p.add_argument("--confidence", type=finite, default=0.95, help="CI level, 0.5 to below 1 (default: 0.95)")
    p.add_argument("--scale", choices=("rank", "z", "none"), default="rank",
                   help="put both proxies on one scale per direction before PERM-BOTH swaps (default: rank)")
    p.add_argument("--json", type=path, metavar="FILE", help="also write the full report as JSON ('-' for stdout only)")
    p.set_defaults(func=run)


def add_table_options(p) -> None:
    """The ranking table's source and proxy options (shared with `xsimpp plot scatter`)."""
    p.add_argument("table", nargs="?", metavar="TABLE.csv",
                   help="rows: direction (or src_lang,tgt_lang), system, [family], proxy columns..., bleu "
                        "(or hyp,ref file paths relative to the table)")
    src = p.add_argument_group("build the table from stored results instead")
    src.add_argument("--from-results", action="store_true", help="use the results store (xsim, xsim++ records)")
    src.add_argument("--from-leaderboard", metavar="CSV", help="use a leaderboard CSV (`xsimpp leaderboard --csv`)")
    src.add_argument("--bleu", type=path, metavar="BLEU.csv",
                     help="with --from-results/--from-leaderboard: system (encoder name), direction (or "
                          "src_lang,tgt_lang), bleu (or hyp,ref), [family]")
    src.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    src.add_argument("--dataset", help="results of this dataset only (when the store holds several)")
    src.add_argument("--split", help="results of this split only")
    src.add_argument("--margin", help="results with this margin only")
    p.add_argument("--proxy", action="append", metavar="COLUMN",
                   help="proxy column to evaluate (repeatable; default: every numeric non-reserved column)")
    p.add_argument("--error-types", action="append", metavar="T1,T2",
                   help="add xsim++ counting only these error types (causality, entity, number, misaligned), "
                        "from err_* counts; repeatable")
    p.add_argument("--all-error-subsets", action="store_true",
                   help="add xsim++ restricted to every non-empty combination of error types")
    p.add_argument("--lower-better", action="append", default=[], metavar="COLUMN",
                   help="this proxy is better when lower (default: names starting with xsim or err_)")
    p.add_argument("--higher-better", action="append", default=[], metavar="COLUMN",
                   help="this proxy is better when higher")
    p.add_argument("--tokenize", help="sacrebleu tokenizer when computing BLEU from hyp/ref (default: 13a)")


def _pct(x: float) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{100 * x:.2f}"


def _split(acc: float, ci: tuple[float, float]) -> str:
    """A within- or across-family accuracy with its CI ('-' without such pairs)."""
    return _pct(acc) if ci[0] != ci[0] else f"{_pct(acc)} [{_pct(ci[0])}, {_pct(ci[1])}]"


def _p(x: float) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.4f}"


def _num(x: float) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.3f}"


def _num_g(x: float) -> str:
    """A proxy-unit value such as epsilon, at the precision its scale needs."""
    return "-" if x is None or not math.isfinite(x) else f"{x:.4g}"


def build_table(args):
    from ..errors import BadInputError
    from ..tasks.ranking import read_table, table_from_leaderboard
    from ..tasks.xsim import all_error_type_subsets

    sets = [s.split(",") for s in (args.error_types or [])]
    if args.all_error_subsets:
        sets += [list(s) for s in all_error_type_subsets()]
    if args.from_results or args.from_leaderboard:
        if args.table:
            raise BadInputError("give either TABLE.csv or --from-results/--from-leaderboard, not both")
        if not args.bleu:
            raise BadInputError("--from-results and --from-leaderboard need --bleu BLEU.csv")
        if args.from_leaderboard:
            import pandas as pd

            try:
                lb = pd.read_csv(args.from_leaderboard)
            except FileNotFoundError:
                raise BadInputError(f"File not found: {args.from_leaderboard}") from None
        else:
            from ..report.select import checked
            from ..results import ResultStore, leaderboard_frame

            store = ResultStore(args.results_dir)
            # each value checked against its outcomes, as every other reader of the store does
            lb = leaderboard_frame(checked(store, store.records(), keep_outcomes=False))
        return table_from_leaderboard(lb, args.bleu, dataset=args.dataset, split=args.split, margin=args.margin,
                                      error_type_sets=sets, tokenize=args.tokenize)
    if not args.table:
        raise BadInputError("give a TABLE.csv, or --from-results --bleu BLEU.csv")
    return read_table(args.table, proxies=args.proxy, error_type_sets=sets, lower_better=args.lower_better,
                      higher_better=args.higher_better, tokenize=args.tokenize)


def run(args) -> int:
    import json

    from tabulate import tabulate

    from ..errors import BadInputError
    from ..scoring.significance import check_level, check_resamples, check_trials
    from ..tasks.ranking import evaluate_table
    from .common import check_outputs

    # before any table is read or BLEU computed
    check_level(args.confidence)
    check_resamples(args.bootstrap, "--bootstrap resamples")
    check_trials(args.permutations, "--permutations samples")
    check_outputs(args, files={"json": "--json"}, inputs={"table": "TABLE.csv", "bleu": "--bleu"})
    table = build_table(args)
    compare = None
    if args.compare:
        compare = []
        for spec in args.compare:
            parts = [s.strip() for s in spec.split(",")]
            if len(parts) != 2 or not all(parts):
                raise BadInputError(f"--compare takes two proxy names A,B, got {spec!r}")
            compare.append((parts[0], parts[1]))
    rep = evaluate_table(table, compare=compare, n_bootstrap=args.bootstrap, n_permutations=args.permutations,
                         confidence=args.confidence, seed=args.seed, scale=args.scale)
    if args.json == "-":
        print(json.dumps(rep.to_json(), indent=1))
        return 0
    if rep.pairs == 0:
        raise BadInputError("no language direction has two systems, so there is no pair to rank")

    print(f"pairwise ranking accuracy (Kocmi et al. 2021): {rep.n_directions} direction(s), {rep.n_systems} "
          f"system(s), {rep.n_rows} rows -> {rep.pairs} system pairs ({rep.within_pairs} within a model family, "
          f"{rep.across_pairs} across)")
    level = f"{round(100 * args.confidence)}% CI"
    headers = ["proxy", "better", "accuracy", "agree/pairs", level, "within fam.", "across fam.", "chance|ties",
               "p(>chance)", "pearson", "spearman", "kendall"]
    body = []
    for p in rep.proxies:
        a = p.accuracy
        body.append([p.proxy, "lower" if p.lower_is_better else "higher", _pct(a.accuracy), f"{a.agreements}/{a.pairs}",
                     f"[{_pct(p.ci[0])}, {_pct(p.ci[1])}]", _split(a.within_accuracy, p.within_ci),
                     _split(a.across_accuracy, p.across_ci),
                     _pct(p.chance), _p(p.p_chance), _num(p.correlations["pearson"]), _num(p.correlations["spearman"]),
                     _num(p.correlations["kendall"])])
    print(tabulate(body, headers=headers, tablefmt="simple", disable_numparse=True))
    print(f"chance (a random proxy): {_pct(rep.chance)}% (0.5 when BLEU has no ties); 'chance|ties' deals each "
          f"proxy's own values at random, keeping its ties; "
          f"'p(>chance)': one-sided sign test over the pairs whose BLEU differs")
    print(f"correlations: pooled over all rows with the proxy oriented higher-is-better; CI: percentile bootstrap "
          f"over system pairs ({args.bootstrap} resamples, seed {args.seed})")
    print("\ntie-aware agreement (above, a proxy tie is a disagreement, as in mt-metrics-eval):")
    body = [[p.proxy, f"{p.ties.proxy_ties}/{p.ties.pairs}", _pct(p.ties.tie_share), _pct(p.ties.half_accuracy),
             str(p.ties.half_pairs), _pct(p.ties.calibrated_accuracy), _num_g(p.ties.epsilon),
             _pct(p.ties.calibrated_tie_share)] for p in rep.proxies]
    print(tabulate(body, headers=["proxy", "proxy ties", "ties %", "ties as 1/2", "pairs (BLEU differs)",
                                  "tie-calibrated", "epsilon", "ties at epsilon %"],
                   tablefmt="simple", disable_numparse=True))
    print("ties as 1/2: over the pairs whose BLEU differs, a proxy tie scores 1/2; tie-calibrated (Deutsch et al. "
          "2023, mt-metrics-eval's acc_eq): over all pairs, |Δproxy| <= epsilon is a tie, right when BLEU ties "
          "too, epsilon fitted to maximise it (optimistic)")
    if rep.pairs < 20:
        print(f"note: only {rep.pairs} pair(s): the bootstrap CI cannot show the real uncertainty of so few pairs")
    if rep.comparisons:
        print(f"\nPERM-BOTH permutation tests ({args.permutations} samples, seed {args.seed}, scale {args.scale}, "
              f"{rep.settings['alternative']}):")
        split = {kind: {(a, b): r for a, b, r in tests} for kind, tests in
                 (("within", rep.within_comparisons), ("across", rep.across_comparisons))}
        headers = ["proxy A", "proxy B", "Δ accuracy (A-B)", "p"]
        if rep.within_comparisons:
            headers += ["Δ within fam.", "p within", "Δ across fam.", "p across"]
        body = []
        for a, b, r in rep.comparisons:
            row = [a, b, f"{100 * r.delta:+.2f}", f"{r.p_value:.4f}"]
            if rep.within_comparisons:
                for kind in ("within", "across"):
                    x = split[kind][(a, b)]
                    row += ["-" if x.delta != x.delta else f"{100 * x.delta:+.2f}",
                            "-" if x.p_value != x.p_value else f"{x.p_value:.4f}"]
            body.append(row)
        print(tabulate(body, headers=headers, tablefmt="simple", disable_numparse=True))
    if rep.bleu_signature:
        print(f"\nBLEU computed with sacrebleu: {rep.bleu_signature}")
    for note in rep.notes:
        print(f"note: {note}")
    if args.json:
        from ..textio import atomic_write_json

        atomic_write_json(args.json, rep.to_json())
        print(f"wrote {args.json}")
    return 0
