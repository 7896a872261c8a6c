"""`xsimpp tatoeba`: retrieval accuracy xx->eng and eng->xx on Tatoeba (LASER v1 or the Challenge)."""

from __future__ import annotations

from tabulate import tabulate

from ..engine import MARGINS
from .common import (add_data_dir_option, add_encoder_options, add_engine_options, add_run_options, cache_arg,
                     check_outputs, encoder_options, engine_config, print_report, save_and_sign, save_arg)


def register(sub) -> None:
    p = sub.add_parser("tatoeba", help="Tatoeba retrieval accuracy, both directions, text and index mode",
                       description="Cosine (or --margin) nearest-neighbour accuracy xx->eng and eng->xx and their "
                                   "mean, in text mode (a duplicate of the gold sentence counts as correct) and "
                                   "index mode. Averages over languages are macro (XTREME).")
    add_encoder_options(p)
    p.add_argument("--source", choices=("v1", "challenge"), default="v1",
                   help="LASER Tatoeba v1 (default) or the Tatoeba Translation Challenge test sets")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--langs", help="comma-separated languages (deu,fra or de,fr)")
    which.add_argument("--set", choices=("tatoeba36", "all"),
                       help="tatoeba36: the 36 XTREME languages (Hu et al. 2020); all: every language of --source")
    p.add_argument("--margin", choices=MARGINS, default="absolute",
                   help="absolute = cosine nearest neighbour (default, as XTREME/LASER); ratio/distance = margin")
    p.add_argument("--k", type=int, default=4, help="neighbours for the margin averages (default: 4)")
    p.add_argument("--limit", type=int, help="use only the first N lines of each language (quick looks)")
    p.add_argument("--dump", metavar="FILE", help="write every retrieval error (.jsonl for JSON lines, else TSV)")
    add_engine_options(p)
    add_data_dir_option(p)
    add_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..api import tatoeba
    from ..tasks.tatoeba import DUMP_FIELDS, tatoeba_error_rows
    from ..textio import write_rows

    check_outputs(args, files={"dump": "--dump"})  # every output path before any work
    res = tatoeba(args.encoder, args.langs, set=args.set, source=args.source, margin=args.margin, k=args.k,
                  limit=args.limit, data_dir=args.data_dir, cache=cache_arg(args), save=save_arg(args),
                  progress=not args.no_progress, engine=engine_config(args), options=encoder_options(args))
    report = res.report
    print_report(args, report.records, render(report))
    if args.dump:
        rows = tatoeba_error_rows(report)
        fmt = write_rows(args.dump, rows, DUMP_FIELDS)
        if not args.json:
            print(f"\n{len(rows)} index-mode errors written to {args.dump} ({fmt}; text_correct marks duplicates)")
    save_and_sign(args, report)
    return 0


def render(report) -> str:
    how = "cosine" if report.margin == "absolute" else f"{report.margin} margin, k={report.k}"
    headers = ["lang", "xx->eng (text)", "eng->xx (text)", "mean (text)", "xx->eng (index)", "eng->xx (index)",
               "mean (index)", "n"]
    body = []
    for tl in report.langs:
        r = tl.result
        body.append([tl.lang] + [f"{v:.2f}" for v in (r.fwd.accuracy("text"), r.bwd.accuracy("text"), r.mean("text"),
                                                     r.fwd.accuracy("index"), r.bwd.accuracy("index"),
                                                     r.mean("index"))] + [r.fwd.n])
    if len(report.langs) > 1:
        body.append(["average"] + [f"{report.average(d, m):.2f}" for m in ("text", "index")
                                   for d in ("fwd", "bwd", "mean")] + [sum(tl.result.fwd.n for tl in report.langs)])
    table = tabulate(body, headers=headers, tablefmt="psql", disable_numparse=True)
    return (f"{report.dataset} accuracy % ({how}); text: a duplicate of the gold sentence counts as correct; "
            f"index: only the gold line does; average = macro over languages\n{table}")
