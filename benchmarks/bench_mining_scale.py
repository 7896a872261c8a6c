"""Mining scale curve: sharded exact margin kNN both ways (xsimpp.engine.mining) from 10k x 10k up to
1M x 1M, d=384, synthetic unit vectors, time and peak RSS per point, under --max-memory.

Points up to --measure-max are run whole, each in a fresh subprocess (peak RSS = that process's
ru_maxrss). Larger points run one shard of the real plan (or --partial-rows source rows) against
the FULL target set (the real streaming and backward-state memory) and their time is extrapolated
linearly in source rows (the work is n_src x n_tgt GEMM + selection, shards are independent; a
smaller slice overstates the per-shard cost of streaming the targets); such rows say "extrapolated".

    python benchmarks/bench_mining_scale.py [--sizes 10000,20000,50000,1000000] [--measure-max 50000]
        [--json OUT.json]   # the rows, with the machine they ran on
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import bounds  # benchmarks/bounds.py: the bounds of every number typed here


def make(path: str, n: int, dim: int, seed: int) -> None:
    """Write n x dim float32 rows in chunks (never the whole array twice in memory)."""
    rng = np.random.default_rng(seed)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, dim))
    for a in range(0, n, 65536):
        out[a:a + 65536] = rng.standard_normal((min(n, a + 65536) - a, dim), dtype=np.float32)
    out.flush()
    del out


def child(args) -> None:
    from xsimpp.engine.mining import mine, plan_mining

    t = time.perf_counter()
    n_src = np.load(args.src, mmap_mode="r").shape[0]
    n_tgt = np.load(args.tgt, mmap_mode="r").shape[0]
    if args.rows and args.rows < n_src:  # partial: first shard(s) of the real plan, shrunk to --rows
        plan = plan_mining(n_src, n_tgt, 384, 4, args.max_memory)
        from xsimpp.engine.mining import RowSource

        f = time.perf_counter()  # input hashing is once per run, not per row: kept out of the scaling
        RowSource(args.src, "s").fingerprint(), RowSource(args.tgt, "t").fingerprint()
        setup = time.perf_counter() - f
        t = time.perf_counter()
        from xsimpp.engine import EngineConfig

        res = mine(args.src, args.tgt, args.out, max_memory=args.max_memory, max_shards=1,
                   config=EngineConfig(mining_shard_rows=args.rows))
        assert res is None
        dt = time.perf_counter() - t - setup
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(json.dumps({"seconds": dt, "setup": setup, "rss": rss, "shard_rows": plan.shard_rows,
                          "est": plan.est_peak_bytes}))
        return
    res = mine(args.src, args.tgt, args.out, max_memory=args.max_memory)
    shard_rows, est = res.plan.shard_rows, res.plan.est_peak_bytes
    dt = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": dt, "rss": rss, "shard_rows": shard_rows, "est": est}))


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=bounds.counts(1, bounds.MAX_ROWS), default="10000,20000,50000,100000,1000000")
    ap.add_argument("--measure-max", type=bounds.rows, default=50000, help="largest n run whole")
    ap.add_argument("--partial-rows", type=bounds.count(0, bounds.MAX_ROWS), default=0, help="rows measured for larger points (0: one shard)")
    ap.add_argument("--max-memory", type=bounds.memory, default="4GB")
    ap.add_argument("--dim", type=bounds.dim, default=384)
    ap.add_argument("--tmp", default=tempfile.gettempdir())
    ap.add_argument("--json", help="also write the rows and the machine to this file")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--src"), ap.add_argument("--tgt"), ap.add_argument("--out"), ap.add_argument("--rows", type=bounds.rows)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    from machine import cpu_info, git_commit, kernel_info

    from xsimpp import __version__
    from xsimpp.engine.mining import plan_mining

    machine, results = cpu_info(), []
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; --max-memory {args.max_memory}; "
          f"d={args.dim}")
    print(f"{'n_src x n_tgt':>19} {'time':>12} {'peak RSS':>9} {'engine bound':>12} {'shard rows':>10}  how")
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        for n in args.sizes:
            src, tgt = os.path.join(tmp, f"s{n}.npy"), os.path.join(tmp, f"t{n}.npy")
            make(src, n, args.dim, 1)
            make(tgt, n, args.dim, 2)
            partial = n > args.measure_max
            rows = args.partial_rows or plan_mining(n, n, args.dim, 4, args.max_memory).shard_rows
            cmd = [sys.executable, __file__, "--child", "--src", src, "--tgt", tgt, "--out", os.path.join(tmp, f"o{n}"),
                   "--max-memory", args.max_memory] + (["--rows", str(rows)] if partial else [])
            r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
            secs = r["seconds"] * (n / rows) + r["setup"] if partial else r["seconds"]
            how = f"extrapolated from {rows} x {n} measured ({r['seconds']:.1f} s)" if partial else "measured"
            t = f"{secs:.1f} s" if secs < 3600 else f"{secs / 3600:.1f} h"
            print(f"{n:>9} x {n:<9} {t:>12} {r['rss'] / 2**30:7.2f} GiB {r['est'] / 2**30:9.2f} GiB {r['shard_rows']:>10}  {how}",
                  flush=True)
            results.append({"n": n, "seconds": round(secs, 1), "measured": not partial, "peak_rss_bytes": r["rss"],
                            "engine_bound_bytes": r["est"], "shard_rows": r["shard_rows"],
                            "load_after": round(os.getloadavg()[0], 2)})
            for p in (src, tgt):
                os.unlink(p)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({**machine, **kernel_info(), "xsimpp": __version__, "commit": git_commit(), "dim": args.dim,
                       "k": 4, "max_memory": args.max_memory, "runs": results}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
