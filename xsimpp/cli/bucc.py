"""`xsimpp bucc`: BUCC 2018 mining F1 with a threshold tuned on one split and applied to another."""

from __future__ import annotations


from tabulate import tabulate

from ..engine import MARGINS
from ..errors import BadInputError
from .common import (add_data_dir_option, add_encoder_options, add_engine_options, add_run_options, cache_arg,
                     check_outputs, encoder_options, engine_config, print_report, save_and_sign, save_arg)


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
    p.add_argument("--pair", default="zh-en", help="language pair as in the file names, source first (default zh-en)")
    p.add_argument("--tune", default="sample", help="split whose gold sets the threshold (default: sample)")
    p.add_argument("--apply", help="split the threshold is applied to (default: test when present, else --tune)")
    p.add_argument("--protocol", choices=("laser", "keung"), default="laser",
                   help="laser (default): LASER's/XTREME's; keung: Keung et al. 2020 (forward retrieval, "
                        "--keep-fraction 0.02 counted before the filters, then --digits ascii and --edit-filter 0.5)")
    p.add_argument("--margin", choices=MARGINS, default="ratio", help="margin scoring (default: ratio, as LASER)")
    p.add_argument("--k", type=int, default=4, help="neighbours for the margin (default 4; clipped to set sizes)")
    p.add_argument("--one-to-one", action="store_true",
                   help="greedy one-to-one selection before thresholding, as LASER's/XTREME's BUCC scripts")
    p.add_argument("--keep-fraction", type=float, metavar="F",
                   help="threshold by prior proportion (Keung et al. 2020): extract the best F x #source sentences "
                        "(--protocol keung: default 0.02, counted before the filters)")
    p.add_argument("--digits", choices=("ascii", "unicode", "none"),
                   help="digit filter: keep pairs whose digit runs match as sets. ascii: Keung et al.'s [0-9]+ on the "
                        "raw text (default under --protocol keung); unicode: any decimal digit after NFKC, so "
                        "full-width '２００８' matches '2008' (a deviation from the paper); none: no digit filter")
    p.add_argument("--digit-filter", action="store_true", help="= --digits unicode (the rule of earlier versions)")
    p.add_argument("--edit-filter", nargs="?", type=float, const=0.5, metavar="MAX_SIM",
                   help="drop near-copies: pairs with Levenshtein similarity >= MAX_SIM (default 0.5; on under "
                        "--protocol keung)")
    p.add_argument("--no-edit-filter", action="store_true", help="no edit-distance filter (also under --protocol keung)")
    p.add_argument("--keung", action="store_true",
                   help="removed: it meant the two filters under the LASER protocol, not Keung et al.'s protocol; "
                        "use --protocol keung, or --digit-filter --edit-filter for the filters alone")
    p.add_argument("--cv", type=int, metavar="FOLDS", help="also report FOLDS-fold cross-validated thresholds")
    p.add_argument("--seed", type=int, default=0, help="seed for --cv folds and --sample (default 0)")
    p.add_argument("--sample", metavar="NSRCxNTGT",
                   help="score a subset: every gold-pair sentence + seeded random others, e.g. 1000x1500")
    p.add_argument("--head", type=int, metavar="N", help="use only the first N lines of each side (quick looks)")
    p.add_argument("--dump", metavar="FILE", help="write TP/FP/FN pairs of --apply (.jsonl for JSON lines, else TSV)")
    add_engine_options(p)
    add_data_dir_option(p)
    add_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..api import bucc
    from ..tasks.bucc import BUCC_DUMP_FIELDS, bucc_rows
    from ..textio import write_rows

    check_outputs(args, files={"dump": "--dump"})  # every output path before any work
    if args.no_edit_filter and args.edit_filter is not None:
        raise BadInputError("give --edit-filter or --no-edit-filter, not both")
    res = bucc(args.encoder, args.pair, tune=args.tune, apply=args.apply, margin=args.margin, k=args.k,
               one_to_one=args.one_to_one, keep_fraction=args.keep_fraction, digit_filter=args.digit_filter,
               edit_filter=False if args.no_edit_filter else args.edit_filter, keung=args.keung, cv=args.cv,
               seed=args.seed, sample=args.sample, protocol=args.protocol, digits=args.digits,
               head=args.head, data_dir=args.data_dir, cache=cache_arg(args), save=save_arg(args),
               progress=not args.no_progress, engine=engine_config(args), options=encoder_options(args))
    report = res.report
    print_report(args, report.records, render(report))
    if args.dump:
        rows = bucc_rows(report)
        fmt = write_rows(args.dump, rows, BUCC_DUMP_FIELDS)
        if not args.json:
            print(f"\n{len(rows)} TP/FP/FN pairs written to {args.dump} ({fmt})")
    save_and_sign(args, report)
    return 0


def render(report) -> str:
    m = report.mined[report.apply_split]
    d = m.data
    lines = [f"BUCC 2018 {report.pair} {report.apply_split}"
             + (f" ({d.subset})" if d.subset else "")
             + f": {len(d.src)} {d.src_lang} x {len(d.tgt)} {d.tgt_lang} sentences "
             + f"({m.n_unique[0]} x {m.n_unique[1]} distinct), {m.n_gold} gold pairs; "
             + f"protocol {report.params['protocol']}"
             + (" (forward retrieval; the kept share counted before the filters)"
                if report.params["protocol"] == "keung" else "")
             + f"; margin {report.params['margin']}, k={report.k_used}"
             + ("; greedy one-to-one" if report.params.get("retrieval") == "max-1to1" else "")
             + f"; filters: {report.params['filters']}"
             + (f" (dropped {', '.join(f'{k} {v}' for k, v in m.dropped.items())} of {m.n_mined} candidates)"
                if m.dropped else f" ({m.n_mined} candidates)")]
    rows = []
    r = report.result
    if report.method == "keep-fraction":
        how = "keep fraction (prior)"
    else:
        how = f"best F1 on {report.tune_split}" + (" (OPTIMISTIC: tuned on this split's gold)" if report.optimistic
                                                   else "")
    rows.append([how, f"{100 * r.precision:.2f}", f"{100 * r.recall:.2f}", f"{100 * r.f1:.2f}", f"{r.threshold:.6f}",
                 r.n_extracted, r.n_correct])
    if report.cv is not None:
        c = report.cv.pooled
        rows.append([f"{report.cv.folds}-fold CV (seed {report.cv.seed}), pooled", f"{100 * c.precision:.2f}",
                     f"{100 * c.recall:.2f}", f"{100 * c.f1:.2f}", f"{report.cv.threshold_mean:.6f} (mean)",
                     c.n_extracted, c.n_correct])
    lines.append(tabulate(rows, headers=["threshold", "P %", "R %", "F1 %", "threshold value", "extracted", "correct"],
                          tablefmt="psql", disable_numparse=True))
    if report.params["protocol"] == "keung" and "above_threshold_before_filters" in report.records[0].extra:
        lines.append(f"{report.records[0].extra['above_threshold_before_filters']} pairs above the first row's threshold before the "
                     f"filters, {r.n_extracted} after")
    if report.tuned is not None and not report.optimistic:
        t = report.tuned
        lines.append(f"on {report.tune_split} at its optimum: P {100 * t.precision:.2f}, R {100 * t.recall:.2f}, "
                     f"F1 {100 * t.f1:.2f}")
    if report.cv is not None:
        lines.append("fold thresholds: " + ", ".join(f"{v:.6f}" for v in report.cv.thresholds))
    return "\n".join(lines)
