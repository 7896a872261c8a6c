"""Scoring engine speed in one run: (1) vs the LASER-style reference (two faiss searches + Python
loop) on the xsim++ shape, identical nearest neighbours and error counts asserted; (2) share of the
sgemm rate: the engine's effective GFLOP/s (2*n_x*n_y*d / time) for exact top-k both directions
on a large shape, against the best sustained rate of the same BLAS computing the same product into
a preallocated, warm output (no allocation, no page faults: the honest roofline). Also the
selection's own cost (engine time minus that GEMM time) against the budget a GEMM twice as fast
leaves it (25 % of a pass at twice this sgemm rate: what the engine needs to stay at 80 % of an
AVX-512 or GPU GEMM). Prints, and with --json writes, the CPU model, its ISA and the kernels the
libraries chose, so one file per machine kind can be kept (benchmarks/results/roofline/).

    python benchmarks/bench_roofline.py [--repeats 3] [--big 4096x65536] [--json OUT.json]
    OPENBLAS_CORETYPE=SkylakeX|Haswell NUMBA_CPU_NAME=haswell ...   # another BLAS / numba ISA
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # as `import xsimpp` sets it; numpy loads first here

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from machine import cpu_info, git_commit, kernel_info  # noqa: E402

from xsimpp import __version__  # noqa: E402
from xsimpp.engine import EngineConfig, normalize, topk_both  # noqa: E402
from xsimpp.engine.knn import block_rows_for  # noqa: E402
import bounds  # noqa: E402  (benchmarks/bounds.py: the bounds of every number typed here)

try:  # (0.10's per-thread tiles; earlier engines, measured with this script for comparison, have none)
    from xsimpp.engine.knn import tile_plan  # noqa: E402
except ImportError:
    tile_plan = None


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-src", type=bounds.rows, default=1012)
    ap.add_argument("--n-tgt", type=bounds.rows, default=45000)
    ap.add_argument("--dim", type=bounds.dim, default=384)
    ap.add_argument("--big", type=bounds.shape(), default="4096x65536", help="rows x cols of the roofline shape")
    ap.add_argument("--repeats", type=bounds.repeats, default=3)
    ap.add_argument("--skip-reference", action="store_true", help="only part (2)")
    ap.add_argument("--json", help="write the machine and the roofline figures to this file")
    args = ap.parse_args(argv)
    machine = cpu_info()
    print(f"{machine['cpu']} ({machine['isa']}), {machine['cores']} cores, load average {machine['load']:.1f}; "
          f"best of {args.repeats}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(native)')}, "
          f"OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}")
    reference = None
    if not args.skip_reference:  # (bench_scoring needs faiss, for the LASER-style reference)
        from bench_scoring import compare_with_reference, make_data

        x, y = make_data(args.n_src, args.n_tgt, args.dim)
        print(f"(1) xsim++ shape {args.n_src} x {args.n_tgt} x {args.dim}")
        reference = {"shape": f"{args.n_src}x{args.n_tgt}x{args.dim}", **compare_with_reference(x, y, args.repeats)}

    rows, cols = args.big
    rng = np.random.default_rng(1)
    xb = normalize(rng.standard_normal((rows, args.dim), dtype=np.float32))
    yb = normalize(rng.standard_normal((cols, args.dim), dtype=np.float32))
    flops = 2.0 * rows * cols * args.dim
    cfg = EngineConfig()
    blk = block_rows_for(cols, cfg.block_bytes)  # the sgemm lines: the product in the engine's blocks of rows
    if tile_plan is None:
        tiles = f"blocks of {blk} rows (no tiles)"
    else:
        try:
            threads, tile_rows, tile_cols = tile_plan(rows, cols, cfg)
        except TypeError:  # 0.10's tile_plan(n_x, n_y, threads, block_bytes), before the tiles were EngineConfig's
            threads, tile_rows, tile_cols = tile_plan(rows, cols, cfg.n_threads(), cfg.block_bytes)
        tiles = f"{threads} thread(s), each its own tiles of {tile_rows} x {tile_cols}"
    print(f"(2) roofline shape {rows} x {cols} x {args.dim} ({flops / 1e9:.0f} GFLOP per pass; sgemm in blocks of "
          f"{blk} rows, the engine in {tiles})")
    buf = np.empty((min(blk, rows), cols), np.float32)

    def sgemm_prealloc():
        for a in range(0, rows, blk):
            xs = xb[a:a + blk]
            np.matmul(xs, yb.T, out=buf[: len(xs)])

    def sgemm_fresh():
        for a in range(0, rows, blk):
            xb[a:a + blk] @ yb.T

    topk_both(xb[:64], yb[:8192], k_fwd=4, k_bwd=4, unit=True)  # kernel load outside the timings
    sgemm_prealloc()  # warm: the output pages are mapped before any timing
    lines = {"sgemm": sgemm_prealloc, "fresh": sgemm_fresh,
             "engine": lambda: topk_both(xb, yb, k_fwd=4, k_bwd=4, unit=True, config=cfg)}
    times: dict[str, list[float]] = {name: [] for name in lines}
    for _ in range(args.repeats):  # interleaved: a change of load hits every line alike
        for name, fn in lines.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    g = {name: flops / min(t) / 1e9 for name, t in times.items()}
    t_gemm, t_engine = min(times["sgemm"]), min(times["engine"])
    selection = t_engine - t_gemm
    budget = 0.25 * t_gemm / 2  # 25 % of a GEMM pass at twice this rate
    kernels = kernel_info()
    print(f"kernels: {kernels['blas']} sgemm, numba for {kernels['numba_cpu']}")
    print(f"{'sgemm, preallocated warm output (roofline)':46} {t_gemm:7.3f} s  {g['sgemm']:6.1f} GFLOP/s")
    print(f"{'sgemm, fresh output each block':46} {min(times['fresh']):7.3f} s  {g['fresh']:6.1f} GFLOP/s  "
          f"{100 * g['fresh'] / g['sgemm']:5.1f} %")
    print(f"{'engine: exact top-4 both directions':46} {t_engine:7.3f} s  {g['engine']:6.1f} GFLOP/s  "
          f"{100 * g['engine'] / g['sgemm']:5.1f} % of the sgemm rate")
    print(f"{'selection (engine - sgemm)':46} {selection:7.3f} s  = {selection / budget:.2f} x the budget of a GEMM "
          f"twice as fast ({budget:.3f} s)")
    load_end = round(os.getloadavg()[0], 2)
    print(f"(load average {load_end:.1f} at the end)")
    if args.json:
        out = {**machine, "load_end": load_end, **kernels, "xsimpp": __version__, "commit": git_commit(),
               "engine_tiles": tiles, "shape": f"{rows}x{cols}x{args.dim}", "k": 4,
               "repeats": args.repeats, "block_rows": blk, "sgemm_s": round(t_gemm, 4),
               "fresh_s": round(min(times["fresh"]), 4), "engine_s": round(t_engine, 4),
               "sgemm_gflops": round(g["sgemm"], 1), "engine_gflops": round(g["engine"], 1),
               "engine_share_of_sgemm": round(g["engine"] / g["sgemm"], 4), "selection_s": round(selection, 4),
               "selection_budget_at_2x_sgemm_s": round(budget, 4)}
        if reference:
            out["vs_laser_reference"] = reference
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
            f.write("\n")

if __name__ == "__main__":
    main()
