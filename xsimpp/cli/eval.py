"""`xsimpp eval`: xsim / xsim++ of an encoder on FLORES-200, Tatoeba, the demo corpus or your files."""

from __future__ import annotations

import argparse

from tabulate import tabulate

from .common import (add_data_dir_option, add_encoder_options, add_engine_options, add_ray_option, add_run_options,
                     add_scoring_options, cache_arg, check_outputs, encoder_options, engine_config, errtype_table,
                     print_report, save_and_sign, save_arg, xsim_table)


def register(sub) -> None:
    p = sub.add_parser("eval", help="xsim / xsim++ error rates of an encoder",
                       description="Encode (with cache) and score xsim, and xsim++ with --augmented.")
    add_encoder_options(p)
    p.add_argument("--dataset", default="flores200", help="flores200 (default), flores_plus, tatoeba, demo")
    p.add_argument("--split", help="dataset split (flores200: dev or devtest; default devtest)")
    p.add_argument("--langs", help="comma-separated source languages (kea,fur or kea_Latn,...)")
    p.add_argument("--target", help="target language (default: English of the dataset)")
    p.add_argument("--src-file", help="line-aligned source file (instead of --dataset; --langs/--target name the sides)")
    p.add_argument("--tgt-file", help="line-aligned target file (instead of --dataset)")
    p.add_argument("--name", help="with --src-file/--tgt-file: the corpus name its results are stored under "
                                  "(default: 'parallel', told apart by the files' checksum)")
    p.add_argument("--augmented", metavar="DIR|auto",
                   help="xsim++: folder with <target>_augmented.<split> + errtype JSON, or 'auto'")
    p.add_argument("--style", choices=("strict", "paper"),
                   help="which build of `xsimpp augment` --augmented uses: strict or paper negatives "
                        "(default: strict where both exist; paper under --protocol xsimpp-paper)")
    p.add_argument("--protocol", choices=("laser", "xsimpp-paper"), default="laser",
                   help="laser (default): LASER's xsim.py, --margin as given (ratio); xsimpp-paper: the xSIM++ "
                        "paper's absolute margin with paper-style negatives")
    p.add_argument("--allow-errtype", action="append", default=[], metavar="NAME",
                   help="accept this error type name in the errtype JSON besides causality, entity, number (repeatable)")
    p.add_argument("--rerank", metavar="ENCODER",
                   help="P-xSIM: rescore each source's --rerank-k margin candidates with this encoder (cosine, or "
                        "its pair scores) and blend alpha * margin + (1 - alpha) * aux (LASER's pxsim.py)")
    p.add_argument("--alpha", type=float, default=0.5, help="P-xSIM blend weight of the margin (default 0.5)")
    p.add_argument("--rerank-opt", action="append", metavar="KEY=VALUE",
                   help="an option of the --rerank encoder (repeatable), e.g. layer=8")
    p.add_argument("--both-directions", action="store_true", help="also score target -> source")
    p.add_argument("--nway", action="store_true", help="error matrix over every ordered pair of --langs")
    add_scoring_options(p)
    add_engine_options(p)
    add_data_dir_option(p)
    add_run_options(p)
    add_ray_option(p, "encode on a Ray cluster: one task per encoder x language x chunk of 256 sentences, gathered "
                      "into the same cache and results")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..api import evaluate

    check_outputs(args)  # every output path before any work
    style = _protocol(args)
    res = evaluate(args.encoder, args.langs, dataset=args.dataset, split=args.split, target=args.target,
                   src_file=args.src_file, tgt_file=args.tgt_file, name=args.name, augmented=args.augmented,
                   allow_errtypes=args.allow_errtype, both_directions=args.both_directions, nway=args.nway,
                   margin=args.margin, k=args.k, mode=args.mode, data_dir=args.data_dir, cache=cache_arg(args),
                   save=save_arg(args), progress=not args.no_progress, engine=engine_config(args),
                   ray=getattr(args, "ray", None), options=encoder_options(args), style=style,
                   rerank=args.rerank, rerank_options=encoder_options(argparse.Namespace(encoder_opt=args.rerank_opt)),
                   alpha=args.alpha, rerank_k=args.rerank_k or 16)
    report = res.report
    if args.nway:
        print_report(args, report.records, render_nway(report))
    else:
        print_report(args, report.records, render_report(report, any(p.xsimpp is not None for p in report.pairs)))
    save_and_sign(args, report)
    return 0


def _protocol(args) -> str | None:
    """Apply --protocol to the margin; the negatives' style --augmented must find (None: any)."""
    from ..errors import BadInputError
    from ..tasks.xsim import PAPER_PROTOCOL

    if args.protocol != "xsimpp-paper":
        return args.style
    if args.margin not in ("ratio", PAPER_PROTOCOL["margin"]):  # ratio is --margin's default
        raise BadInputError(f"--protocol xsimpp-paper scores with the absolute margin; drop --margin {args.margin}")
    if args.style not in (None, PAPER_PROTOCOL["style"]):
        raise BadInputError("--protocol xsimpp-paper uses paper-style negatives; drop --style strict "
                            "(or score strict negatives with --margin absolute)")
    args.margin = PAPER_PROTOCOL["margin"]
    return PAPER_PROTOCOL["style"]


def render_report(report, with_pp: bool) -> str:
    rows = [(f"{p.src_lang}-{p.tgt_lang}", p.xsim.error_rate, p.xsim.n,
             p.xsimpp.error_rate if p.xsimpp is not None else None) for p in report.pairs]
    avg = report.average("xsim")
    avg_pp = report.average("xsim++").error_rate if with_pp else None
    label = report.records[0].metric  # xsim, or p-xsim with --rerank
    out = xsim_table(report.dataset, rows, (avg.error_rate, avg.n, avg_pp), with_pp, label)
    if with_pp:
        per_pair = {f"{p.src_lang}-{p.tgt_lang}": p.xsimpp.error_types for p in report.pairs if p.xsimpp is not None}
        out += f"\n\nAbsolute error under augmented transformations for: {report.pairs[0].tgt_lang}\n"
        out += errtype_table(per_pair)
        pp = next(r.signature.params for r in report.records if r.metric.endswith("xsim++"))
        out += f"\nxsim++ negatives: {pp['negatives']}; protocol: {pp['protocol']} (margin {pp['margin']})"
    return out


def render_nway(report) -> str:
    langs = list(dict.fromkeys([p.src_lang for p in report.pairs] + [p.tgt_lang for p in report.pairs]))
    cell = {(p.src_lang, p.tgt_lang): p.xsim.error_rate for p in report.pairs}
    body = [[s] + [("-" if s == t else f"{cell[(s, t)]:.2f}") for t in langs] for s in langs]
    col_avg = [sum(cell[(s, t)] for s in langs if s != t) / (len(langs) - 1) for t in langs]
    body.append(["avg"] + [f"{v:.2f}" for v in col_avg])
    table = tabulate(body, headers=["src \\ tgt"] + langs, tablefmt="grid", disable_numparse=True)
    return f"{table}\nGlobal average: {sum(col_avg) / len(col_avg):.2f}"
