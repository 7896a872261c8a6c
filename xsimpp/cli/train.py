"""`xsimpp train onealigner`: finetune a transformer with OneAligner's contrastive objective."""

from __future__ import annotations

import sys


def register(sub) -> None:
    from ..training.onealigner import DEFAULT_LAYER, DEFAULT_MODEL, MIN_TOKENS

    p = sub.add_parser("train", help="finetune an encoder (OneAligner objective)")
    tsub = p.add_subparsers(dest="what", metavar="MODEL")
    o = tsub.add_parser("onealigner", help="OneAligner: in-batch-normalised BERTScore-F, global in-batch negatives",
                        description="Finetune a Hugging Face encoder on parallel pairs with OneAligner's objective "
                                    "and data recipe; the result loads with --encoder onealigner --model OUT "
                                    "(and --encoder hf --model OUT).")
    o.add_argument("--pairs", help="training pairs: one 'source<TAB>target' per line")
    o.add_argument("--src", help="with --tgt: two line-aligned files instead of --pairs (e.g. the OLDI seed)")
    o.add_argument("--tgt", help="the other side of --src")
    o.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"starting model: folder, hub name or e5-small (default: {DEFAULT_MODEL})")
    o.add_argument("--out", required=True, help="output folder (written atomically; replaced if it exists)")
    o.add_argument("--layer", type=int, default=DEFAULT_LAYER,
                   help=f"token-state layer BERTScore uses (default {DEFAULT_LAYER} of e5-small's 12; "
                        "paper: 8 of 12 for base models, 17 of 24 for xlm-roberta-large)")
    o.add_argument("--prompt", help="text put before every sentence, its tokens left out of BERTScore "
                                    "(default: e5's 'query: ' for e5-small, else none; '' for none)")
    o.add_argument("--lr", type=float, default=3e-6, help="AdamW learning rate (paper: 3e-6)")
    o.add_argument("--temperature", type=float, default=5.0, help="softmax temperature: logits / T (paper: 5)")
    o.add_argument("--batch-size", type=int, default=64, help="pairs per batch: N, N^2-N negatives (paper: 64)")
    o.add_argument("--max-length", type=int, default=100, help="max tokens per sentence (paper: 100)")
    o.add_argument("--steps", type=int, default=0, help="optimizer steps (default: --epochs passes)")
    o.add_argument("--epochs", type=int, default=3, help="passes over the pairs (paper: 3)")
    o.add_argument("--min-tokens", type=int, default=MIN_TOKENS,
                   help=f"drop pairs with fewer tokens on either side (paper: {MIN_TOKENS}; 0: keep all)")
    o.add_argument("--keep-test-overlap", action="store_true",
                   help="do not drop pairs that contain a FLORES-200 or Tatoeba test sentence")
    o.add_argument("--data-dir", help="data root searched for FLORES-200 and Tatoeba (default: $XSIMPP_DATA_DIR, "
                                      "then the user data dir)")
    o.add_argument("--seed", type=int, default=0)
    o.add_argument("--device", default="auto", help="cpu, cuda, ... (default: cuda if available)")
    o.add_argument("--log-every", type=int, default=50, help="print the loss every N steps (0: never)")
    o.set_defaults(func=run)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


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


def run(args) -> int:
    from ..datasets.heldout import evaluation_sentences
    from ..training.onealigner import TrainConfig, filter_pairs, load_base, token_counts, train
    from .common import check_outputs

    check_outputs(args, dirs={"out": "--out"})
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

    def log(step: int, loss: float) -> None:
        if args.log_every and step % args.log_every == 0:
            print(f"step {step}: loss {loss:.4f}", file=sys.stderr, flush=True)

    res = train(kept, args.model, args.out, cfg, log=log, data_info=data_info, base=base)
    k = max(1, min(20, len(res.losses) // 5))
    first = sum(res.losses[:k]) / k
    last = sum(res.losses[-k:]) / k
    print(f"trained {res.steps} steps on {len(kept)} pairs in {res.seconds:.1f}s ({res.steps_per_second:.3f} steps/s); "
          f"loss {first:.4f} -> {last:.4f} (mean of first/last {k}); model in {res.out}")
    return 0
