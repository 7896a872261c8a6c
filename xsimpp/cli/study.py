"""`xsimpp study`: which proxy predicts mining? A grid of encoders x languages, proxies against
mining F1 on gold hidden among real distractors of the target language (English by default; see
xsimpp.study)."""

from __future__ import annotations

from ..textio import path


def register(sub) -> None:
    p = sub.add_parser(
        "study", help="which proxy predicts mining? proxies vs mining F1 over a grid of encoders x languages",
        description="Runs every encoder of a study configuration (TOML) on every language: the proxies (xsim, "
                    "xsim++ per style and error type, Tatoeba accuracy) and the ground truth (mining F1 on the "
                    "language's gold pairs hidden among real distractors in the target language: English unless "
                    "[study] target names another), then ranks the proxies by pairwise accuracy against mining (the "
                    "statistics of `xsimpp rank`) and writes a report folder.")
    p.add_argument("config", nargs="?", metavar="CONFIG.toml", help="the study configuration")
    p.add_argument("--preset", choices=("small", "large", "checkpoints"), help="a built-in configuration instead of a file")
    p.add_argument("--print-config", action="store_true", help="print the configuration (e.g. a preset's) and exit")
    p.add_argument("--out", type=path, help="report folder (default: study-<name>); written atomically")
    p.add_argument("--overwrite", action="store_true", help="replace an existing, non-empty --out folder")
    p.add_argument("--data-dir", type=path, help="data root (default: $XSIMPP_DATA_DIR, then the user data dir)")
    p.add_argument("--cache-dir", type=path, help="embedding cache folder (default: user cache)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from ..api import study
    from ..study.config import load_config
    from ..study.output import check_out_dir, ranking_text
    from .common import check_outputs

    cfg = load_config(args.config, args.preset)
    if args.print_config:
        print(cfg.text, end="")
        return 0
    out = args.out = args.out or f"study-{cfg.name}"
    check_outputs(args, replaced={"out": "--out"}, inputs={"config": "CONFIG.toml"})
    check_out_dir(out, args.overwrite)
    result = study(cfg, data_dir=args.data_dir, cache=args.cache_dir or True, out=out, overwrite=args.overwrite,
                   progress=not args.no_progress)
    print("encoding cost per encoder (sentences encoded now / asked for; seconds):")
    seen = set()
    for c in result.costs:
        shared = ""
        if c["shared_pass"] and c["shared_pass"] not in seen:
            seen.add(c["shared_pass"])
            shared = (f"  [one forward pass for {c['shared_pass']}: {c['shared_pass_encoded']} sentences, "
                      f"{c['shared_pass_seconds']} s]")
        elif c["shared_pass"]:
            shared = "  [from the shared pass above]"
        print(f"  {c['encoder']:<20} {c['encoded']:>7} / {c['requested']:<7} encode {c['encode_seconds']:>8.1f} s  "
              f"score {c['score_seconds']:>6.1f} s{shared}")
    for gt in result.rankings:
        print()
        print(ranking_text(result, gt, top=12))
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"\nreport: {out}/report.html ({result.seconds:.0f} s)")
    return 0
