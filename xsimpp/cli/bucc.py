"""`xsimpp bucc`: BUCC 2018 mining F1 with a threshold tuned on one split and applied to another."""

from __future__ import annotations

from ..errors import BadInputError
from ..tasks.registry import task
from ..textio import finite, path
from .common import add_encoder_options, add_engine_options, add_run_options, check_outputs, run_and_print
from .knobs import add_knobs, given

TASK = task("bucc")


def register(sub) -> None:
    p = sub.add_parser("bucc", help="BUCC 2018 bitext mining precision / recall / F1",
                       description="--protocol laser (default, LASER/XTREME): margin kNN both ways; candidates = "
                                   "forward best per source ∪ backward best per target (max score per pair); "
                                   "threshold = best F1 on the --tune split's gold, applied unchanged to --apply (or "
                                   "set by --keep-fraction); filters, if any, before the threshold. --protocol keung "
                                   "(Keung et al. 2020): each source with its nearest target by the ratio margin "
                                   "(forward only, k=4), keep the best 2% of the source sentences, then the ASCII "
                                   "digit filter and the 50% edit-distance filter.")
    add_encoder_options(p)
    add_knobs(p, TASK.Source)
    add_knobs(p, TASK.Settings)
    # Hand-written spellings of two settings (digits, max_edit_similarity) and a removed flag.
    p.add_argument("--digit-filter", action="store_true", help="= --digits unicode (the rule of earlier versions)")
    p.add_argument("--edit-filter", nargs="?", type=finite, const=0.5, metavar="MAX_SIM",
                   help="drop near-copies: pairs with Levenshtein similarity >= MAX_SIM (default 0.5; on under "
                        "--protocol keung)")
    p.add_argument("--no-edit-filter", action="store_true", help="no edit-distance filter (also under --protocol keung)")
    p.add_argument("--keung", action="store_true",
                   help="removed: it meant the two filters under the LASER protocol, not Keung et al.'s protocol; "
                        "use --protocol keung, or --digit-filter --edit-filter for the filters alone")
    p.add_argument("--dump", type=path, metavar="FILE", help="write TP/FP/FN pairs of --apply (.jsonl for JSON lines, else TSV)")
    add_engine_options(p)
    add_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..tasks.bucc import BUCC_DUMP_FIELDS, bucc_rows
    from ..textio import write_rows

    check_outputs(args, files={"dump": "--dump"})  # every output path before any work
    if args.no_edit_filter and args.edit_filter is not None:
        raise BadInputError("give --edit-filter or --no-edit-filter, not both")
    settings = given(args, TASK.Settings)
    settings.update(keung=args.keung, digit_filter=args.digit_filter,
                    edit_filter=False if args.no_edit_filter else args.edit_filter)
    res = run_and_print(args, TASK, settings, given(args, TASK.Source))
    if args.dump:
        rows = bucc_rows(res.report)
        fmt = write_rows(args.dump, rows, BUCC_DUMP_FIELDS)
        if not args.json:
            print(f"\n{len(rows)} TP/FP/FN pairs written to {args.dump} ({fmt})")
    return 0
