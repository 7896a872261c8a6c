"""What fixed shapes cost on a GPU, counted (no timing, no GPU): the tokens e5-small's torch path
runs for every FLORES-200 devtest file (the sides of `xsimpp eval --langs all`) when each batch is
filled up to its width's full rows (``torch_backend.fixed_shapes``), encoded side by side (one
1 024-sentence chunk per language, as ``encode_cached`` gives them) or pooled across the sides
(``tasks.base.prefill_local``: one pool of chunks sorted by length, what the runner does since 0.16.0
for an encoder that ``pools_sides``; at its chunk size and two smaller ones), against the tokens the
sentences need at their bucket widths.

    python benchmarks/fixed_shape_padding.py [--max-tokens 4096] [--json OUT]
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bounds  # noqa: E402  (benchmarks/bounds.py: the bounds of every number typed here)
from machine import git_commit  # noqa: E402


def run_tokens(widths: list[int], max_tokens: int) -> int:
    """Tokens the forward passes of one encoder call run at fixed shapes: each width's sentences in
    full batches of ``batch_rows`` rows, the last one filled up."""
    from xsimpp.encoders.backbone.batching import batch_rows

    total = 0
    for width, n in Counter(widths).items():
        rows = batch_rows(width, max_tokens)
        total += -(-n // rows) * rows * width
    return total


def count(data: Path, max_tokens: int) -> dict:
    from xsimpp.cache import CHUNK_SIZE, pending_chunks, sentence_key
    from xsimpp.encoders import create_encoder
    from xsimpp.encoders.backbone.batching import bucket_width
    from xsimpp.tasks.base import POOL_CHUNK_SIZE

    enc = create_encoder("e5-small", path="torch-float32")
    files = sorted((data / "flores200" / "devtest").glob("*.devtest"))
    sides = [f.read_text(encoding="utf-8").splitlines() for f in files]
    everything = [s for side in sides for s in side]
    ids, _, _ = enc.tokens(everything)
    width = dict(zip(everything, (bucket_width(len(x)) for x in ids)))
    needed = sum(width[s] for s in dict.fromkeys(everything))
    side_by_side, planned = 0, set()
    for side in sides:
        for chunk in pending_chunks([sentence_key(s) for s in side], side, set(), CHUNK_SIZE, planned):
            side_by_side += run_tokens([width[s] for _, s in chunk], max_tokens)
    keys = [sentence_key(s) for s in everything]
    pooled = {size: sum(run_tokens([width[s] for _, s in chunk], max_tokens)
                        for chunk in pending_chunks(keys, everything, set(), size))
              for size in sorted({CHUNK_SIZE, 4 * CHUNK_SIZE, POOL_CHUNK_SIZE})}
    return {"files": len(files), "sentences": len(everything), "distinct": len(width), "max_tokens": max_tokens,
            "chunk_size": CHUNK_SIZE, "pool_chunk_size": POOL_CHUNK_SIZE, "needed_tokens": needed,
            "side_by_side_tokens": side_by_side, "pooled_tokens_by_chunk": {str(k): v for k, v in pooled.items()},
            "commit": git_commit()}


def line(r: dict) -> str:
    """docs/scaling.md's sentence, from a ``--json`` file."""
    need = r["needed_tokens"]
    by = r["pooled_tokens_by_chunk"]
    others = ", ".join(f"{int(k):,} {v / need:.2f}×" for k, v in by.items() if int(k) != r["pool_chunk_size"])
    return (f"Counted on the {r['files']} FLORES-200 devtest files ({r['distinct']:,} distinct sentences, "
            f"{need:,} tokens at their bucket widths; `python benchmarks/fixed_shape_padding.py`): at "
            f"{r['max_tokens']:,} tokens a batch, fixed shapes run {r['side_by_side_tokens'] / need:.2f}× those tokens "
            f"encoded language by language ({r['chunk_size']:,}-sentence chunks) and "
            f"**{by[str(r['pool_chunk_size'])] / need:.2f}×** pooled in chunks of {r['pool_chunk_size']:,} "
            f"(chunks of {others}: a chunk is sorted by characters, not tokens, so a small one spans many widths).")


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-tokens", type=bounds.count(8, 1 << 20), default=4096, help="tokens per batch")
    ap.add_argument("--json", help="write the counts to this file")
    ap.add_argument("--line", metavar="JSON", help="print the docs' sentence of a --json file and stop")
    args = ap.parse_args(argv)
    if args.line:
        print(line(json.loads(Path(args.line).read_text(encoding="utf-8"))))
        return 0
    data = os.environ.get("XSIMPP_DATA_DIR")
    if not data or not (Path(data) / "flores200").is_dir():
        sys.exit("set XSIMPP_DATA_DIR to the evaluation data (FLORES-200)")
    result = count(Path(data), args.max_tokens)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(line(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
