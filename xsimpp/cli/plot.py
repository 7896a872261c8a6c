"""`xsimpp plot`: PNG charts of stored results and of proxy-vs-BLEU tables."""

from __future__ import annotations

from ..textio import finite, path, seed


def register(sub) -> None:
    from .rank import add_table_options

    p = sub.add_parser("plot", help="PNG charts: error types, xsim vs xsim++, proxy vs BLEU")
    kinds = p.add_subparsers(dest="plot_kind", metavar="KIND", required=True)

    e = kinds.add_parser("errors", help="one encoder's xsim++ errors per language, stacked by error type")
    e.add_argument("--encoder", required=True,
                   help="the encoder: the name it ran with (e5-small, sbert), its id or its signed enc: part")
    _store_options(e)

    x = kinds.add_parser("xsim", help="xsim and xsim++ per language for several encoders")
    x.add_argument("--encoders", help="comma-separated encoders, each as --encoder takes it (default: all in the store)")
    _store_options(x)

    s = kinds.add_parser("scatter", help="a proxy against BLEU, with the pairwise ranking accuracy in the title")
    add_table_options(s)
    s.add_argument("--out", type=path, required=True, metavar="FILE.png", help="PNG file to write")
    s.add_argument("--seed", type=seed, default=0, help="seed of the bootstrap CI in the title (default: 0)")
    s.add_argument("--confidence", type=finite, default=0.95, help="CI level (default: 0.95)")
    for q in (e, x, s):
        q.set_defaults(func=run)


def _store_options(p) -> None:
    from .leaderboard import add_selection_options

    p.add_argument("--out", type=path, required=True, metavar="FILE.png", help="PNG file to write")
    p.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    add_selection_options(p, ("dataset", "split", "lang"))


def run(args) -> int:
    from ..errors import BadInputError
    from ..report import plots
    from .common import check_outputs

    check_outputs(args, files={"out": "--out"}, inputs={"table": "TABLE.csv", "bleu": "--bleu"})
    if args.plot_kind in ("errors", "xsim"):
        from ..report.select import Selection, checked, of_encoder, one_data, one_table, split_names
        from ..results import ResultStore, leaderboard_frame

        store = ResultStore(args.results_dir)
        records = Selection.of(args).apply(store.records())
        if not records:
            raise BadInputError("no results to plot yet; run `xsimpp eval` first")
        if args.plot_kind == "errors":
            mine = [r for r in of_encoder(records, args.encoder, "--encoder") if r.metric == "xsim++"]
            if not mine:
                raise BadInputError(f"{args.encoder} has no xsim++ results here; run `xsimpp eval --encoder "
                                    f"{args.encoder} --augmented auto` first")
            mine = one_table(mine, f"the stored xsim++ results of {args.encoder}")
            frame = leaderboard_frame(checked(store, mine, keep_outcomes=False))
            path = plots.plot_error_types(frame, mine[0].signature.encoder, args.out)
        else:
            names = split_names(args.encoders, "encoders") if args.encoders else None
            shown = [r for r in records if r.metric in ("xsim", "xsim++")]
            if names:
                ids = {r.signature.encoder for name in names for r in of_encoder(shown, name, "--encoders")}
                shown = [r for r in shown if r.signature.encoder in ids]
            shown = one_data(shown, "the stored xsim and xsim++ results")
            groups: dict[tuple, list] = {}
            for r in shown:
                groups.setdefault((r.signature.encoder, r.metric), []).append(r)
            chosen = [r for (encoder, metric), recs in groups.items()
                      for r in one_table(recs, f"the stored {metric} results of {encoder}", "--encoders")]
            encoders = list(dict.fromkeys(r.signature.encoder for r in chosen))
            frame = leaderboard_frame(checked(store, chosen, keep_outcomes=False))
            path = plots.plot_xsim_vs_xsimpp(frame, encoders, args.out)
    else:
        from ..scoring.ranking import bootstrap_ci, pairwise_accuracy
        from .rank import build_table

        table = build_table(args)
        if args.proxy and len(args.proxy) > 1:
            raise BadInputError("the scatter plot shows one proxy: give --proxy once")
        proxy = args.proxy[0] if args.proxy else (table.proxies[0] if len(table.proxies) == 1 else None)
        if proxy not in table.proxies:
            raise BadInputError(f"pick the proxy to plot with --proxy (have: {', '.join(table.proxies)})")
        f = table.frame
        acc = pairwise_accuracy(f[proxy].to_numpy(float), f["bleu"].to_numpy(float), f["direction"].tolist(),
                                f["family"].tolist(), lower_is_better=table.lower_is_better[proxy])
        if acc.pairs == 0:
            raise BadInputError("no language direction has two systems, so there is no pair to rank")
        ci = bootstrap_ci(acc.agreement_vector, confidence=args.confidence, seed=args.seed)
        path = plots.plot_proxy_vs_bleu(f, proxy, args.out, lower_is_better=table.lower_is_better[proxy],
                                        accuracy=acc, ci=ci, confidence=args.confidence)
    print(f"wrote {path}")
    return 0
