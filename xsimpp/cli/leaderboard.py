"""`xsimpp leaderboard`: export stored results (one row per encoder x language x metric)."""

from __future__ import annotations

from ..textio import path


def register(sub) -> None:
    p = sub.add_parser("leaderboard", help="the results store as a table, a CSV file or an HTML page",
                       description="The results store as a table (one row per encoder x dataset x pair x metric x "
                                   "settings), a CSV file (--csv) or a self-contained HTML page (--html) with one "
                                   "sortable table per dataset, metric and settings.")
    p.add_argument("--csv", type=path, metavar="FILE", help="write the leaderboard to FILE (CSV)")
    p.add_argument("--html", type=path, metavar="FILE",
                   help="write a self-contained HTML page (sortable tables, error types; opens without a server)")
    p.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    add_selection_options(p, tuple(FILTERS), "filters (each takes a comma-separated list; a record is kept when it "
                                             "matches every filter given)")
    p.set_defaults(func=run)


# flag -> what it names (their help texts; report.select matches them)
FILTERS = {"dataset": "datasets (flores200, tatoeba, bucc2018, ...)",
           "encoder": "encoders (the name run: sbert; its id: sbert:sentence-transformers/...; or its signed enc: part)",
           "metric": "metrics (xsim, xsim++, tatoeba_acc_mean, bucc_f1, ...)",
           "split": "splits (devtest, dev[:50], devtest[sample=200,seed=3], ...)",
           "lang": "source languages (FLORES codes as stored: kea_Latn, ...; or their first part: kea)"}


def add_selection_options(p, flags=("metric", "dataset", "split", "lang"),
                          title="which results (comma-separated lists; needed where the store holds several)") -> None:
    """Which stored results a command reads (``report.select``): the leaderboard filters all, `compare`,
    `explain` and `plot` all but the encoder (each names its encoders itself); and ``--setting``."""
    g = p.add_argument_group(title)
    for flag in flags:
        g.add_argument(f"--{flag}", metavar="NAMES", help=f"only results of these {FILTERS[flag]}")
    g.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                   help="only results signed with this setting (e.g. margin=ratio, mode=index; KEY= for results "
                        "without KEY; repeatable)")


def run(args) -> int:
    from ..report.select import Selection, checked
    from ..results import ResultStore, leaderboard_frame, write_leaderboard_csv
    from .common import check_outputs

    check_outputs(args, files={"csv": "--csv", "html": "--html"})
    store = ResultStore(args.results_dir)
    records = checked(store, Selection.of(args, encoder=True).apply(store.records()), keep_outcomes=False)
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
