"""`xsimpp explain`: the wrong decisions of stored results, most confident first."""

from __future__ import annotations

from ..errors import BadInputError
from ..textio import path
from .leaderboard import add_selection_options


def register(sub) -> None:
    p = sub.add_parser("explain", help="the wrong decisions of stored results (source, gold, chosen, both margins)",
                       description="The wrong decisions of an encoder's stored xsim, xsim++, P-xSIM, Tatoeba or MTEB bitext "
                                   "results: each source whose chosen target is not its gold, with both sentences, "
                                   "both scores (margin, cosine or P-xSIM's blend) and the xsim++ error type; the "
                                   "most confident mistakes (chosen score most above the gold's) first. The "
                                   "sentences are read again from the data and checked against the record's "
                                   "checksum.")
    p.add_argument("--encoder", required=True,
                   help="the encoder: the name it ran with (e5-small, sbert), its id or its signed enc: part")
    add_selection_options(p)
    p.add_argument("--top", type=int, default=10, help="decisions shown per result (default 10)")
    p.add_argument("--html", type=path, metavar="FILE", help="also write every wrong decision as a sortable HTML page")
    p.add_argument("--tsv", type=path, metavar="FILE", help="also write every wrong decision as TSV (JSONL for .jsonl)")
    p.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    p.add_argument("--data-dir", type=path, default=None, help="data root (default: $XSIMPP_DATA_DIR)")
    p.add_argument("--augmented", type=path, metavar="DIR",
                   help="folder of the xsim++ negatives the results used (default: where `eval --augmented auto` looks)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..report.explain import render, write_dump, write_page
    from ..report.select import Selection, checked, of_encoder, one_table
    from ..results import ResultStore
    from ..tasks.explain import explain_record
    from .common import check_outputs

    check_outputs(args, files={"html": "--html", "tsv": "--tsv"})
    if args.top < 0:
        raise BadInputError(f"--top must be 0 or more, not {args.top}")
    store = ResultStore(args.results_dir)
    records = one_table(of_encoder(Selection.of(args).apply(store.records()), args.encoder, "--encoder"),
                        f"the stored results of {args.encoder}")
    records = checked(store, records)
    explained = [(r, explain_record(r, store.outcomes(r), args.data_dir, args.augmented)) for r in records]
    print("\n\n".join(render(r, d, args.top) for r, d in explained))
    if args.tsv:
        print(f"\n{write_dump(args.tsv, explained)} wrong decisions in {args.tsv}")
    if args.html:
        write_page(args.html, explained)
        print(f"page: {args.html}")
    return 0
