"""Scoring engine speed in one run: (1) vs the LASER-style reference (two faiss searches + Python
loop) on the xsim++ shape, identical nearest neighbours and error counts asserted; (2) % of the
sgemm roofline: the engine's effective GFLOP/s (2*n_x*n_y*d / time) on large blocks against the
BLAS sgemm rate measured in the same run, on the same shape.

    python benchmarks/bench_roofline.py [--repeats 3] [--big 4096x65536]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench_scoring import best_of, compare_with_reference, make_data  # noqa: E402

from xsimpp.scoring.knn import l2_normalize, topk_both  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-src", type=int, default=1012)
    ap.add_argument("--n-tgt", type=int, default=45000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--big", default="4096x65536", help="rows x cols of the roofline shape")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; best of {args.repeats}")
    x, y = make_data(args.n_src, args.n_tgt, args.dim)
    print(f"(1) xsim++ shape {args.n_src} x {args.n_tgt} x {args.dim}")
    compare_with_reference(x, y, args.repeats)

    rows, cols = map(int, args.big.split("x"))
    rng = np.random.default_rng(1)
    xb = l2_normalize(rng.standard_normal((rows, args.dim), dtype=np.float32))
    yb = l2_normalize(rng.standard_normal((cols, args.dim), dtype=np.float32))
    flops = 2.0 * rows * cols * args.dim
    print(f"(2) roofline shape {rows} x {cols} x {args.dim} ({flops / 1e9:.0f} GFLOP per pass)")
    blk = 1024  # the engine's block rows below: same GEMM shape for every line
    topk_both(xb[:64], yb[:8192], select="jit")  # numba import + kernel load outside the timings
    lines = {
        "gemm": lambda: [xb[a:a + blk] @ yb.T for a in range(0, rows, blk)],
        "jit": lambda: topk_both(xb, yb, k_fwd=4, k_bwd=4, block_rows=blk, select="jit"),
        "filter": lambda: topk_both(xb, yb, k_fwd=4, k_bwd=4, block_rows=blk, select="filter"),
    }
    times: dict[str, list[float]] = {name: [] for name in lines}
    outs: dict[str, object] = {}
    for _ in range(args.repeats):  # interleaved: a change of load hits every line alike
        for name, fn in lines.items():
            t, outs[name] = best_of(fn, 1)
            times[name].append(t)
    t_sort, plain = best_of(lambda: topk_both(xb, yb, k_fwd=4, k_bwd=4, block_rows=blk, select="sort"), 1)
    for name in ("jit", "filter"):
        for f in ("fwd_sim", "fwd_idx", "bwd_sim", "bwd_idx"):
            assert np.array_equal(getattr(outs[name], f), getattr(plain, f)), f"{name} differs from the plain path: {f}"
    t_gemm = min(times["gemm"])
    g_gemm, g_sort = flops / t_gemm / 1e9, flops / t_sort / 1e9
    print(f"{'sgemm alone (numpy BLAS)':44} {t_gemm:7.3f} s  {g_gemm:6.1f} GFLOP/s  (the roofline)")
    for name, label in (("jit", "compiled kernel (numba)"), ("filter", "numpy filter")):
        t = min(times[name])
        g = flops / t / 1e9
        print(f"{'engine, both directions, ' + label:44} {t:7.3f} s  {g:6.1f} GFLOP/s  {100 * g / g_gemm:5.1f} % of "
              "roofline (identical arrays)")
    print(f"{'engine, both directions, plain sort':44} {t_sort:7.3f} s  {g_sort:6.1f} GFLOP/s  "
          f"{100 * g_sort / g_gemm:5.1f} % (1 run)")
    from xsimpp.scoring.lowp import fast_bf16

    if fast_bf16():
        import torch

        xt, yt = torch.from_numpy(xb).bfloat16(), torch.from_numpy(yb).bfloat16()
        t_bgemm, _ = best_of(lambda: [yt @ xt[a:a + blk].T for a in range(0, rows, blk)], args.repeats)
        t_lp, lp = best_of(lambda: topk_both(xb, yb, k_fwd=4, k_bwd=4, block_rows=blk, precision="bf16"), args.repeats)
        for f in ("fwd_sim", "fwd_idx", "bwd_sim", "bwd_idx"):
            assert np.array_equal(getattr(lp, f), getattr(plain, f)), f"bf16 path differs from the plain path: {f}"
        g_b, g_lp = flops / t_bgemm / 1e9, flops / t_lp / 1e9
        print(f"{'bf16 GEMM alone (torch)':44} {t_bgemm:7.3f} s  {g_b:6.1f} GFLOP/s  (the bf16 roofline)")
        print(f"{'engine, bf16 candidates + rescore':44} {t_lp:7.3f} s  {g_lp:6.1f} GFLOP/s  {100 * g_lp / g_gemm:5.1f} % of "
              f"sgemm, {100 * g_lp / g_b:5.1f} % of bf16; identical arrays; {lp.lowp}")


if __name__ == "__main__":
    main()
