"""`xsimpp plot`: PNG charts of stored results and of proxy-vs-BLEU tables."""

from __future__ import annotations

from ..textio import finite, path, seed


def register(sub) -> None:
    from .rank import add_table_options

    p = sub.add_parser("plot", help="PNG charts: error types, xsim vs xsim++, proxy vs BLEU")
    kinds = p.add_subparsers(dest="plot_kind", metavar="KIND", required=True)

    e = kinds.add_parser("errors", help="one encoder's xsim++ errors per language, stacked by error type")
    e.add_argument("--encoder", required=True, help="encoder name as stored (see `xsimpp leaderboard`)")
    _store_options(e)

    x = kinds.add_parser("xsim", help="xsim and xsim++ per language for several encoders")
    x.add_argument("--encoders", help="comma-separated encoder names (default: all in the store)")
    _store_options(x)

    s = kinds.add_parser("scatter", help="a proxy against BLEU, with the pairwise ranking accuracy in the title")
    add_table_options(s)
    s.add_argument("--out", type=path, required=True, metavar="FILE.png", help="PNG file to write")
    s.add_argument("--seed", type=seed, default=0, help="seed of the bootstrap CI in the title (default: 0)")
    s.add_argument("--confidence", type=finite, default=0.95, help="CI level (default: 0.95)")
    for q in (e, x, s):
        q.set_defaults(func=run)


def _store_options(p) -> None:
    p.add_argument("--out", type=path, required=True, metavar="FILE.png", help="PNG file to write")
    p.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    p.add_argument("--dataset", help="results of this dataset (when the store holds several)")
    p.add_argument("--split", help="results of this split (when the store holds several)")


def run(args) -> int:
    from ..errors import BadInputError
    from ..report import plots
    from .common import check_outputs

    check_outputs(args, files={"out": "--out"})
    if args.plot_kind in ("errors", "xsim"):
        from ..results import ResultStore, leaderboard_frame

        df = leaderboard_frame(ResultStore(args.results_dir).records())
        if df.empty:
            raise BadInputError("no results to plot yet; run `xsimpp eval` first")
        if args.plot_kind == "errors":
            path = plots.plot_error_types(df, args.encoder, args.out, dataset=args.dataset, split=args.split)
        else:
            encoders = [e.strip() for e in args.encoders.split(",") if e.strip()] if args.encoders else None
            path = plots.plot_xsim_vs_xsimpp(df, encoders, args.out, dataset=args.dataset, split=args.split)
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
