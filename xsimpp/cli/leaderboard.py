"""`xsimpp leaderboard`: export stored results (one row per encoder x language x metric)."""

from __future__ import annotations

from ..textio import path


def register(sub) -> None:
    p = sub.add_parser("leaderboard", help="export the results store as a CSV leaderboard",
                       description="The results store as a table (one row per encoder x dataset x pair x metric x "
                                   "settings), a CSV file (--csv) or a self-contained HTML page (--html) with one "
                                   "sortable table per dataset, metric and settings.")
    p.add_argument("--csv", type=path, metavar="FILE", help="write the leaderboard to FILE (CSV)")
    p.add_argument("--html", type=path, metavar="FILE",
                   help="write a self-contained HTML page (sortable tables, error types; opens without a server)")
    p.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..results import ResultStore, leaderboard_frame, write_leaderboard_csv
    from .common import check_outputs

    check_outputs(args, files={"csv": "--csv", "html": "--html"})
    records = ResultStore(args.results_dir).records()
    if args.csv or args.html:
        if args.csv:
            n = write_leaderboard_csv(records, args.csv)
            print(f"wrote {n} rows to {args.csv}")
        if args.html:
            from ..report import write_leaderboard_html

            n = write_leaderboard_html(records, args.html)
            print(f"wrote {n} results to {args.html}")
        return 0
    df = leaderboard_frame(records)
    if df.empty:
        print("no results yet; run `xsimpp eval` first")
        return 0
    from tabulate import tabulate

    cols = ["encoder", "dataset", "split", "src_lang", "tgt_lang", "metric", "value", "n", "margin", "k", "mode"]
    # Settings a metric does not have (BUCC has no mode) show as '-', not nan.
    import pandas as pd

    body = [["-" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v for v in row]
            for row in df[cols].astype(object).values.tolist()]
    print(tabulate(body, headers=cols, tablefmt="simple", floatfmt=".2f"))
    return 0
