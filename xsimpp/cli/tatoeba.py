"""`xsimpp tatoeba`: retrieval accuracy xx->eng and eng->xx on Tatoeba (LASER v1 or the Challenge)."""

from __future__ import annotations

from ..tasks.registry import task
from ..textio import path
from .common import add_encoder_options, add_engine_options, add_run_options, check_outputs, run_and_print
from .knobs import add_knobs, given

TASK = task("tatoeba")


def register(sub) -> None:
    p = sub.add_parser("tatoeba", help="Tatoeba retrieval accuracy, both directions, text and index mode",
                       description="Cosine (or --margin) nearest-neighbour accuracy xx->eng and eng->xx and their "
                                   "mean, in text mode (a duplicate of the gold sentence counts as correct) and "
                                   "index mode. Averages over languages are macro (XTREME).")
    add_encoder_options(p)
    add_knobs(p, TASK.Source)
    add_knobs(p, TASK.Settings)
    p.add_argument("--dump", type=path, metavar="FILE", help="write every retrieval error (.jsonl for JSON lines, else TSV)")
    add_engine_options(p)
    add_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..tasks.tatoeba import DUMP_FIELDS, tatoeba_error_rows
    from ..textio import write_rows

    check_outputs(args, files={"dump": "--dump"})  # every output path before any work
    res = run_and_print(args, TASK, given(args, TASK.Settings), given(args, TASK.Source))
    if args.dump:
        rows = tatoeba_error_rows(res.report)
        fmt = write_rows(args.dump, rows, DUMP_FIELDS)
        if not args.json:
            print(f"\n{len(rows)} index-mode errors written to {args.dump} ({fmt}; text_correct marks duplicates)")
    return 0
