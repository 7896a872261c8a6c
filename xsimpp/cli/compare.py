"""`xsimpp compare`: is a system better than the baseline? Paired tests over stored results."""

from __future__ import annotations

import json
import sys

from ..errors import BadInputError
from ..textio import path, seed
from .leaderboard import add_selection_options


def register(sub) -> None:
    from ..scoring.significance import (AR_TRIALS, BOOTSTRAP_P, BOOTSTRAP_RESAMPLES, CORRECTIONS, DEFAULT_SEED,
                                        MAX_RESAMPLES, MAX_TRIALS, MIN_RESAMPLES, MIN_TRIALS)

    p = sub.add_parser("compare", help="paired significance of one encoder against another on stored results",
                       description="Stored results of --system against --baseline on the same sentences: per "
                                   "language pair and over all of them the difference, its confidence interval, "
                                   "the paired bootstrap and paired approximate randomisation p-values (sacrebleu's "
                                   "defaults), corrected across the pairs, and a verdict. Both encoders must have "
                                   "been evaluated with the same data and settings (e.g. `xsimpp eval --encoder "
                                   "A --langs kea,fur` and the same with B).")
    p.add_argument("--baseline", required=True, metavar="ENCODER",
                   help="the baseline encoder: the name it ran with (e5-small, sbert), its id or its signed enc: part")
    p.add_argument("--system", required=True, action="append", metavar="ENCODER",
                   help="an encoder compared with the baseline (repeatable)")
    add_selection_options(p)
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="correction of the p-values across language pairs: holm (family-wise, the default) or bh "
                        "(Benjamini-Hochberg, false discovery rate)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level of the intervals; 1 - level is the "
                                                             "significance threshold (default 0.95)")
    p.add_argument("--resamples", type=int, default=BOOTSTRAP_RESAMPLES,
                   help=f"paired bootstrap resamples, {MIN_RESAMPLES} to {MAX_RESAMPLES} (default "
                        f"{BOOTSTRAP_RESAMPLES}, sacrebleu's)")
    p.add_argument("--trials", type=int, default=AR_TRIALS,
                   help=f"approximate randomisation trials, {MIN_TRIALS} to {MAX_TRIALS} (default {AR_TRIALS}, "
                        "sacrebleu's)")
    p.add_argument("--seed", type=seed, default=DEFAULT_SEED, help=f"seed of both (default {DEFAULT_SEED}, sacrebleu's)")
    p.add_argument("--bootstrap-p", choices=BOOTSTRAP_P, default="shift",
                   help="the paired bootstrap p-value: shift (the default; holds its size) or sacrebleu (its "
                        "--paired-bs statistic, which rejects equal systems about twice as often as it should)")
    p.add_argument("--json", action="store_true", help="print the comparisons as JSON")
    p.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..report.compare import compare_records, render
    from ..report.select import Selection, checked, of_encoder, partnered
    from ..results import ResultStore
    from ..scoring.significance import check_level, check_resamples, check_trials

    check_level(args.level)
    check_resamples(args.resamples, "--resamples")
    check_trials(args.trials, "--trials")
    if args.baseline in args.system:
        raise BadInputError(f"--system {args.baseline} is the baseline itself")
    store = ResultStore(args.results_dir)
    records = Selection.of(args).apply(store.records())
    base = of_encoder(records, args.baseline, "--baseline")
    results = []
    for system in args.system:
        base_records, sys_records, note = partnered(base, of_encoder(records, system, "--system"),
                                                    (args.baseline, system))
        if note:
            print(f"note: {note}", file=sys.stderr)
        base_records, sys_records = checked(store, base_records), checked(store, sys_records)
        results.append(compare_records(base_records, sys_records, store.outcomes, correction=args.correction,
                                       level=args.level, n_resamples=args.resamples, n_trials=args.trials,
                                       seed=args.seed, bootstrap_method=args.bootstrap_p))
    if args.json:
        print(json.dumps([c.to_json() for c in results], indent=2))
    else:
        print("\n\n".join(render(c) for c in results))
    return 0
