"""`xsimpp augment`: build xsim++ hard negatives for FLORES-200 English or any English corpus, and
(``--lang``) for any FLORES-200 target language through its English."""

from __future__ import annotations

import random
from pathlib import Path

from ..errors import BadInputError
from ..textio import path, seed


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "augment",
        help="build xsim++ hard negatives (causality, entity, number) for English sentences or a FLORES-200 target",
        description="Write LASER-format <lang>_augmented.<split> and <lang>_errtype.<split>.json "
        "for FLORES-200 English, a one-sentence-per-line English file, or (--lang) another FLORES-200 "
        "language, and print the paper's Table 2.",
    )
    p.add_argument("corpus", help="'flores200' or a path to a UTF-8 file with one English sentence per line")
    p.add_argument("--lang", default="eng_Latn",
                   help="FLORES-200 target language whose sentences get the negatives (default eng_Latn); another "
                        "language is augmented through the English line of the same FLORES id (strict style; "
                        "causality only where curated rules exist)")
    p.add_argument("--split", default=None, help="FLORES split (dev or devtest; default devtest, as eval); for FILE, the name used in output files (default dev)")
    p.add_argument("--out", type=path, default=None, help="output folder (required for FILE; default for flores200: <user data>/augmented/flores200/<split>_augmented/<style>)")
    p.add_argument("--style", choices=("strict", "paper"), default="strict",
                   help="strict (default): typed, fluent, true negatives; paper: the xSIM++ paper's method as its text describes it")
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--max-per-category", type=int, default=100, metavar="N", help="cap on variants per category per sentence (default 100)")
    p.add_argument("--categories", default=None,
                   help="comma-separated subset of causality,entity,number (default: all that the target language has)")
    p.add_argument("--entity-pool", action="append", default=[], type=path, metavar="FILE",
                   help="your own entity candidates instead of the shipped pool: English text (one sentence a line) "
                        "or a pool file as xsimpp/data/entity_pool/build_pool.py writes (repeatable)")
    p.add_argument("--audit", type=int, default=0, metavar="N", help="print N random (original, variant) pairs per category to judge by hand")
    p.add_argument("--data-dir", type=path, default=None, help="data root holding flores200/ (default: $XSIMPP_DATA_DIR)")
    p.add_argument("--allow-reduced-rules", action="store_true",
                   help="build causality negatives without WordNet (NLTK data) with the reduced rule set: different "
                        "negatives, recorded in the sidecar (default: missing WordNet is an error)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..textio import read_lines
    from .. import augment as A

    categories = ([c.strip() for c in args.categories.split(",") if c.strip()] if args.categories is not None
                  else None)
    if args.audit < 0:
        raise BadInputError(f"--audit prints N pairs per category to judge; N must be 0 or more, got {args.audit}")
    # before any model, pool or file is read: a typo costs nothing
    A.check_categories(categories if categories is not None else A.CATEGORIES, args.max_per_category)
    lang = _target_language(args)
    if lang != "eng_Latn":
        return _run_target(args, lang, categories)
    categories = categories if categories is not None else list(A.CATEGORIES)
    if args.corpus == "flores200":
        from ..datasets.flores import flores_file

        split = _flores_split(args)
        src = flores_file("eng_Latn", split, data_dir=args.data_dir)
        out_dir = Path(args.out) if args.out else A.flores_augmented_dir(split, args.style)
        exclude = [f"flores200/{split}"]  # the shipped pool without the entities of the split itself
    else:
        if not args.out:
            raise BadInputError("--out DIR is required when augmenting a file (only flores200 has a default output folder)")
        split = args.split or "dev"
        src, out_dir = Path(args.corpus), Path(args.out)
        exclude = []
    if not split or "/" in split or split.startswith("."):
        raise BadInputError(f"--split {split!r} cannot be used in a file name")
    from .common import check_outputs

    args.out = out_dir
    check_outputs(args, dirs={"out": "--out"})
    _check_apart(src, args.entity_pool, (*A.output_paths(out_dir, split), A.meta_path(out_dir, split)))

    sentences = read_lines(src)
    pool, pool_info = (A.load_entity_pool(args.entity_pool, exclude) if "entity" in categories else (None, None))
    aug = A.build_augmented(
        sentences,
        style=args.style,
        seed=args.seed,
        categories=categories,
        max_per_category=args.max_per_category,
        entity_pool=pool,
        pool_info=pool_info,
        progress=not args.no_progress,
        reduced_rules=args.allow_reduced_rules,
    )
    text_path, json_path = A.write_laser_format(aug, out_dir, split)
    _report(args, aug, src, split if args.corpus == "flores200" else None, (text_path, json_path, A.meta_path(out_dir, split)))
    return 0


def _flores_split(args) -> str:
    split = args.split or "devtest"  # the split `xsimpp eval` scores by default
    if split not in ("dev", "devtest"):
        raise BadInputError(f"FLORES-200 has splits dev and devtest, not {split!r}")
    return split


def _target_language(args) -> str:
    """The FLORES-200 code of --lang (``fra`` -> ``fra_Latn``); one sentence for an unknown code."""
    from ..datasets.languages import FLORES200_CODES, resolve_language

    return resolve_language(args.lang, list(FLORES200_CODES))


def _run_target(args, lang: str, categories) -> int:
    """`--lang L` for L other than English: L's FLORES sentences, analysed through their English."""
    from ..datasets.flores import flores_file
    from .. import augment as A
    from .common import check_outputs

    if args.corpus != "flores200":
        raise BadInputError(f"--lang {lang} augments FLORES-200 through the English line of each id; "
                            "a file has no aligned English (use flores200)")
    if args.style != "strict":
        raise BadInputError(f"--style {args.style} follows the xSIM++ paper's English method; a {lang} target is "
                            "built in the strict style only")
    if args.entity_pool:
        raise BadInputError(f"--entity-pool gives English candidates; the {lang} pool is projected from FLORES and "
                            "NTREX through their English")
    split = _flores_split(args)
    src = flores_file(lang, split, data_dir=args.data_dir)
    args.out = Path(args.out) if args.out else A.flores_augmented_dir(split, args.style)
    check_outputs(args, dirs={"out": "--out"})
    _check_apart(src, [], (*A.output_paths(args.out, split, lang), A.meta_path(args.out, split, lang)))
    from ..study.target_negatives import augment_flores_target

    aug, _ = augment_flores_target(lang, split, data_dir=args.data_dir, seed=args.seed, categories=categories,
                                     max_per_category=args.max_per_category, out_dir=args.out,
                                     progress=not args.no_progress)
    _report(args, aug, src, None, (*A.output_paths(args.out, split, lang), A.meta_path(args.out, split, lang)))
    return 0


def _check_apart(corpus, pools, written) -> None:
    """The files written under --out are none of the files read (an --out that holds the corpus
    under the output's name would replace it)."""
    from ..textio import check_paths_apart

    check_paths_apart(inputs={"the corpus": corpus, "--entity-pool": list(pools)}, files={"--out": list(written)})


def _report(args, aug, src, paper_split, paths) -> None:
    """The Table 2 of the run, the files written and, with --audit, pairs to judge by hand."""
    from .. import augment as A

    print(f"source: {src}")
    print(A.format_stats(aug, paper_split))
    for written in paths:
        print(f"wrote {written}")
    if args.audit > 0:
        rng = random.Random(args.seed)
        for cat in aug.info["categories"]:
            pairs = aug.by_category(cat)
            print(f"\n== audit: {cat} ({min(args.audit, len(pairs))} of {len(pairs)}) ==")
            for orig, var in rng.sample(pairs, min(args.audit, len(pairs))):
                print(f"- {orig}\n+ {var}")
