"""`xsimpp filter`: score an aligned corpus with an encoder, drop noise, keep the best pairs up to a budget."""

from __future__ import annotations


def register(sub) -> None:
    from ..engine import MARGINS
    from ..scoring.filtering import OVERLAP_LIMIT
    from ..tasks.filter import LID_MODES
    from .common import add_encoder_options, add_engine_options

    p = sub.add_parser(
        "filter", help="filter an aligned corpus: duplicates, overlap, language, margin score, token budget",
        description="Tan & Koehn (2022)'s filtering of a sentence-aligned corpus: drop exact duplicate pairs, "
                    "pairs whose sides overlap by more than 90% (casefolded whitespace tokens, |A∩B|/max(|A|,|B|)) "
                    "and wrong-language lines (py3langid), score the rest with LASER's mine_bitexts.py --mode score "
                    "(ratio margin, k=4 neighbours both ways over the corpus itself), rank, and keep the best pairs "
                    "up to an English-token budget (WMT 2020: 2M, 3M, 5M, 7M). Streams: the corpus is never held "
                    "in memory. Writes OUT/kept.<src>, OUT/kept.<tgt> (corpus order), OUT/scores.tsv and "
                    "OUT/report.json, atomically.")
    p.add_argument("--src", required=True, help="source side, one sentence a line")
    p.add_argument("--tgt", required=True, help="target side, line-aligned with --src")
    p.add_argument("--src-lang", required=True, help="language of --src (fur, fur_Latn, de, ...)")
    p.add_argument("--tgt-lang", required=True, help="language of --tgt")
    p.add_argument("--out", required=True, help="output folder (written atomically; replaced if it exists)")
    p.add_argument("--budget", help="keep the best pairs up to this many whitespace tokens of the English side "
                                    "(2M = 2,000,000; paper: 2M, 3M, 5M, 7M); default: keep every scored pair")
    p.add_argument("--budget-side", choices=("src", "tgt"), help="side whose tokens the budget counts "
                                                                "(default: the English side)")
    p.add_argument("--margin", choices=MARGINS, default="ratio", help="margin function (default ratio, as the paper)")
    p.add_argument("--k", type=int, default=4, help="neighbours per direction (default 4, LASER's and the paper's)")
    p.add_argument("--lid", choices=LID_MODES, default="english",
                   help="language check: english (default, the paper's: the English side must be identified as "
                        "English), both sides, or none")
    p.add_argument("--reject-lang", default="",
                   help="with --lid both: for a side whose language the identifier does not know (e.g. fur), drop "
                        "lines identified as one of these languages (comma-separated, e.g. ita)")
    p.add_argument("--lid-confidence", type=float, default=0.9,
                   help="probability at or above which --reject-lang drops a line (default 0.9)")
    p.add_argument("--overlap-limit", type=float, default=OVERLAP_LIMIT,
                   help=f"drop pairs whose sides overlap by more than this (default {OVERLAP_LIMIT}, the paper's 90%%)")
    p.add_argument("--max-memory", default="1GB", help="bound on the kNN engine's arrays (default 1GB)")
    p.add_argument("--chunk", type=int, default=4096,
                   help="pairs encoded at a time (bounds the memory the vectors take; default 4096)")
    p.add_argument("--cache-dir", help="embedding cache folder (default: user cache)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    add_encoder_options(p)
    add_engine_options(p, blocks=False)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..api import filter_corpus
    from .common import cache_arg, check_outputs, encoder_options, engine_config

    check_outputs(args, dirs={"out": "--out"})
    reject = tuple(c.strip() for c in args.reject_lang.split(",") if c.strip())
    rep = filter_corpus(args.src, args.tgt, args.out, args.encoder, src_lang=args.src_lang, tgt_lang=args.tgt_lang,
                        budget=args.budget, options=encoder_options(args), cache=cache_arg(args),
                        engine=engine_config(args), progress=not args.no_progress, budget_side=args.budget_side,
                        margin=args.margin, k=args.k, lid=args.lid, reject_langs=reject,
                        lid_confidence=args.lid_confidence, overlap_limit=args.overlap_limit,
                        max_memory=args.max_memory, chunk_lines=args.chunk)
    print(rep.summary())
    for lang, check in rep.lid_checks.items():
        print(f"language check {lang}: {check}")
    print(f"written: {rep.out}/kept.* scores.tsv report.json ({rep.seconds:.1f}s)")
    return 0
