"""Sharded mining (`xsimpp mine`, xsimpp.engine.mining.mine) with the candidate GEMM and selection
on a torch device against the CPU engine, on one machine in one run: n x n synthetic unit vectors,
d = 384, k = 4, ratio margin both ways; the mined arrays are asserted byte-identical.

    python benchmarks/bench_mine_device.py [--n 200000] [--device cuda] [--max-memory 4GB] [--out r.json]
        [--only device]   # one path alone (nothing to compare; e.g. a size the CPU would take hours on)
"""

from __future__ import annotations

import json
import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from machine import cpu_info, kernel_info
from xsimpp.engine import EngineConfig
from xsimpp.engine.mining import mine

import bounds  # benchmarks/bounds.py: the bounds of every number typed here


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=bounds.rows, default=200000)
    ap.add_argument("--dim", type=bounds.dim, default=384)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--max-memory", type=bounds.memory, default="4GB")
    ap.add_argument("--out")
    ap.add_argument("--only", choices=("cpu", "device"))
    args = ap.parse_args(argv)
    import torch

    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.n, args.dim), dtype=np.float32)
    y = rng.standard_normal((args.n, args.dim), dtype=np.float32)
    mine(x[:2000], y[:3000], tempfile.mkdtemp(), config=EngineConfig(gemm="torch", device=args.device))  # warm-up
    result = {**cpu_info(), **kernel_info(), "gpu": torch.cuda.get_device_name(0) if args.device.startswith("cuda")
              else args.device, "n": args.n, "dim": args.dim, "max_memory": args.max_memory}
    times, arrays = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {"cpu": EngineConfig(), "device": EngineConfig(gemm="torch", device=args.device)}
        for name, cfg in paths.items():
            if args.only not in (None, name):
                continue
            t = time.perf_counter()
            res = mine(x, y, Path(tmp) / name, max_memory=args.max_memory, config=cfg)
            times[name] = time.perf_counter() - t
            arrays[name] = {f: (Path(tmp) / name / f"{f}.npy").read_bytes() for f in ("fwd_idx", "fwd_sim", "fwd_score",
                                                                                     "bwd_idx", "bwd_sim", "bwd_score")}
            result["shards"] = res.plan.n_shards
            print(f"{name:7} {times[name]:8.1f} s  ({res.plan.n_shards} shards of {res.plan.shard_rows} rows)", flush=True)
    result.update({f"{name}_s": round(t, 1) for name, t in times.items()})
    result.update({"peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                   "load_end": round(os.getloadavg()[0], 2)})
    if len(times) == 2:
        result.update({"speed_up": round(times["cpu"] / times["device"], 2),
                       "identical": arrays["cpu"] == arrays["device"]})
    print(json.dumps(result))
    assert result.get("identical", True), "device and CPU mining disagree"
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
