"""`xsimpp filter`: score an aligned corpus with an encoder, drop noise, keep the best pairs up to a budget."""

from __future__ import annotations

from ..tasks.registry import task
from .common import add_cache_options, add_encoder_options, add_engine_options, check_outputs, run_and_print
from .knobs import add_knobs, given

TASK = task("filter")


def register(sub) -> None:
    p = sub.add_parser(
        "filter", help="filter an aligned corpus: duplicates, overlap, language, margin score, token budget",
        description="Tan & Koehn (2022)'s filtering of a sentence-aligned corpus: drop exact duplicate pairs, "
                    "pairs whose sides overlap by more than 90% (casefolded whitespace tokens, |A∩B|/max(|A|,|B|)) "
                    "and wrong-language lines (py3langid), score the rest with LASER's mine_bitexts.py --mode score "
                    "(ratio margin, k=4 neighbours both ways over the corpus itself), rank, and keep the best pairs "
                    "up to an English-token budget (WMT 2020: 2M, 3M, 5M, 7M). Streams: the corpus is never held "
                    "in memory. Writes OUT/kept.<src>, OUT/kept.<tgt> (corpus order), OUT/scores.tsv and "
                    "OUT/report.json, atomically.")
    add_knobs(p, TASK.Source)
    p.add_argument("--src-lang", help="language of --src (fur, fur_Latn, de, ...)")
    p.add_argument("--tgt-lang", help="language of --tgt")
    add_knobs(p, TASK.Settings)
    p.add_argument("--reject-lang", default="",
                   help="with --lid both: for a side whose language the identifier does not know (e.g. fur), drop "
                        "lines identified as one of these languages (comma-separated, e.g. ita)")
    add_cache_options(p)
    add_encoder_options(p)
    add_engine_options(p, blocks=False)
    p.set_defaults(func=run)


def run(args) -> int:
    check_outputs(args, replaced={"out": "--out"}, inputs={"src": "--src", "tgt": "--tgt"})
    settings = given(args, TASK.Settings)
    settings.update(src_lang=args.src_lang, tgt_lang=args.tgt_lang,
                    reject_langs=tuple(c.strip() for c in args.reject_lang.split(",") if c.strip()))
    run_and_print(args, TASK, settings, given(args, TASK.Source))
    return 0
