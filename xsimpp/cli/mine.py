"""`xsimpp mine`: exact margin kNN both ways over large embedding files, sharded and resumable."""

from __future__ import annotations

import sys

from ..textio import finite, path


def register(sub) -> None:
    from ..engine import DEFAULT_MARGIN, MARGINS
    from ..scoring.bucc import RETRIEVALS
    from .common import add_engine_options, add_ray_option

    p = sub.add_parser("mine", help="margin kNN both ways over large .npy embedding sets (sharded, resumable)",
                       description="Exact margin kNN of --src-emb over --tgt-emb and back, in shards under --out. "
                                   "A killed run resumes from its complete shards and gives identical results.")
    p.add_argument("--src-emb", required=True, type=path, help="source embeddings (.npy, float, sentences x dim)")
    p.add_argument("--tgt-emb", required=True, type=path, help="target embeddings (.npy)")
    p.add_argument("--out", type=path, required=True, help="folder for shards and results (fwd_idx.npy, fwd_score.npy, ...)")
    p.add_argument("--margin", choices=MARGINS, default=DEFAULT_MARGIN, help=f"margin scoring (default: {DEFAULT_MARGIN})")
    p.add_argument("--k", type=int, default=4, help="neighbours for the margin (default 4)")
    p.add_argument("--max-memory", default="4GB", help="bound on the engine's arrays, e.g. 4GB, 512MB (default 4GB)")
    p.add_argument("--pairs-tsv", type=path, help="also write the mined pairs as LASER's mine_bitexts does: "
                   "score<TAB>source<TAB>target, best first (needs --src-text and --tgt-text)")
    p.add_argument("--src-text", type=path, help="source sentences, one per row of --src-emb (for --pairs-tsv)")
    p.add_argument("--tgt-text", type=path, help="target sentences, one per row of --tgt-emb (for --pairs-tsv)")
    p.add_argument("--retrieval", choices=RETRIEVALS, default="max",
                   help="which pairs --pairs-tsv keeps, as LASER's --retrieval: max (forward and backward bests, "
                        "one-to-one, best first; the default), fwd, bwd or intersect")
    p.add_argument("--threshold", type=finite, default=0.0,
                   help="--pairs-tsv keeps pairs scoring above this margin (default 0, as LASER)")
    p.add_argument("--delete-shards", action="store_true", help="remove shard files once the result is written")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    add_engine_options(p, blocks=False)
    add_ray_option(p, "run the shards as Ray tasks (same manifest, markers and resume rules; --out must be on "
                      "storage every node sees)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..api import mine
    from .common import check_outputs, engine_config

    check_outputs(args, files={"pairs_tsv": "--pairs-tsv"}, dirs={"out": "--out"})
    def progress(done: int, total: int) -> None:
        if not args.no_progress:
            print(f"\rshards {done}/{total}", end="\n" if done == total else "", file=sys.stderr, flush=True)

    res = mine(args.src_emb, args.tgt_emb, args.out, margin=args.margin, k=args.k, max_memory=args.max_memory,
               keep_shards=not args.delete_shards, progress=progress, engine=engine_config(args),
               ray=getattr(args, "ray", None), pairs_tsv=getattr(args, "pairs_tsv", None),
               src_text=getattr(args, "src_text", None), tgt_text=getattr(args, "tgt_text", None),
               retrieval=getattr(args, "retrieval", "max"), threshold=getattr(args, "threshold", 0.0))
    p = res.plan
    print(f"{p.n_src} x {p.n_tgt} (d={p.dim}, k={p.k}, {args.margin}): {p.n_shards} shard(s) of {p.shard_rows} rows, "
          f"{res.shards_computed} computed, {res.shards_reused} reused; engine memory <= {p.est_peak_bytes / 2**20:.0f} MiB")
    print(f"results in {args.out}: fwd_idx.npy fwd_score.npy bwd_idx.npy bwd_score.npy (+ fwd_sim.npy bwd_sim.npy)")
    if getattr(args, "pairs_tsv", None):
        with open(args.pairs_tsv, "rb") as f:
            n_pairs = sum(1 for _ in f)
        print(f"{n_pairs} mined pairs ({args.retrieval}, margin > {args.threshold:g}) in {args.pairs_tsv}")
    return 0
