"""Exact top-k both ways with the candidate GEMM on a torch device: selection on the CPU (the block
copied back whole) against selection on the device (only candidates copied back), and the numpy
CPU engine, on one machine in one run; outputs asserted identical. Also the CPU engine's share of
the same machine's sustained sgemm rate (issue 39's roofline fraction), with the CPU model and ISA.

    python benchmarks/bench_device_selection.py [--device cuda] [--shape 4096x65536] [--dim 384]
        [--repeats 3] [--out results.json]
"""

from __future__ import annotations

import json
import time

import numpy as np

from machine import cpu_info
from xsimpp.engine import EngineConfig, hold_rows, normalize, topk_both
from xsimpp.engine.knn import block_rows_for

import bounds  # benchmarks/bounds.py: the bounds of every number typed here


def best(fn, repeats: int, sync=None) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--shape", type=bounds.shape(), action="append", default=None, help="rows x cols (repeatable; default 1012x45000 "
                                                                     "and 4096x65536)")
    ap.add_argument("--dim", type=bounds.dim, default=384)
    ap.add_argument("--k", type=bounds.k, default=4)
    ap.add_argument("--repeats", type=bounds.repeats, default=3)
    ap.add_argument("--out")
    ap.add_argument("--profile", help="write a cProfile summary of the device-selection path's last shape here")
    args = ap.parse_args(argv)
    import torch

    info = {**cpu_info(), "torch": torch.__version__, "device": args.device,
            "gpu": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None, "runs": []}
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else None
    print(json.dumps({k: v for k, v in info.items() if k != "runs"}))
    for rows, cols in args.shape or [(1012, 45000), (4096, 65536)]:
        rng = np.random.default_rng(1)
        x = normalize(rng.standard_normal((rows, args.dim), dtype=np.float32))
        y = normalize(rng.standard_normal((cols, args.dim), dtype=np.float32))
        flops = 2.0 * rows * cols * args.dim
        blk = block_rows_for(cols)
        buf = np.empty((min(blk, rows), cols), np.float32)

        def sgemm():
            for a in range(0, rows, blk):
                np.matmul(x[a:a + blk], y.T, out=buf[: len(x[a:a + blk])])

        configs = {"numpy gemm, cpu selection": EngineConfig(),
                   f"torch {args.device} gemm, cpu selection": EngineConfig(gemm="torch", device=args.device,
                                                                            selection="cpu"),
                   f"torch {args.device} gemm, device selection": EngineConfig(gemm="torch", device=args.device,
                                                                               selection="device")}
        run = {"shape": f"{rows}x{cols}x{args.dim}", "k": args.k, "gflop_per_pass": round(flops / 1e9, 1)}
        t_sgemm, _ = best(sgemm, args.repeats)
        run["cpu sgemm alone s"] = round(t_sgemm, 4)
        results = {}
        for name, cfg in configs.items():
            topk_both(x[:8], y, k_fwd=args.k, k_bwd=args.k, unit=True, config=cfg)  # warm: compile, device init
            t, res = best(lambda cfg=cfg: topk_both(x, y, k_fwd=args.k, k_bwd=args.k, unit=True, config=cfg),
                          args.repeats, sync)
            results[name] = res
            run[f"{name} s"] = round(t, 4)
        # the targets held on the device (engine.hold_rows), as xsim holds them across languages: no copy a call
        dev_cfg = configs[f"torch {args.device} gemm, device selection"]
        held = hold_rows(y, dev_cfg)
        t, results["held targets"] = best(lambda: topk_both(x, held, k_fwd=args.k, k_bwd=args.k, unit=True,
                                                            config=dev_cfg), args.repeats, sync)
        run[f"torch {args.device} gemm, device selection, targets held s"] = round(t, 4)
        ref = results["numpy gemm, cpu selection"]
        run["identical"] = all(np.array_equal(getattr(ref, f), getattr(r, f))
                               for r in results.values() for f in ("fwd_sim", "fwd_idx", "bwd_sim", "bwd_idx"))
        run["cpu engine share of cpu sgemm"] = round(t_sgemm / run["numpy gemm, cpu selection s"], 3)
        dev_cpu = run[f"torch {args.device} gemm, cpu selection s"]
        dev_dev = run[f"torch {args.device} gemm, device selection s"]
        run["device selection speed-up over cpu selection"] = round(dev_cpu / dev_dev, 2)
        run["device selection speed-up over numpy engine"] = round(run["numpy gemm, cpu selection s"] / dev_dev, 2)
        print(json.dumps(run))
        info["runs"].append(run)
        if args.profile:
            import cProfile
            import io
            import pstats

            cfg = configs[f"torch {args.device} gemm, device selection"]
            prof = cProfile.Profile()
            prof.runcall(topk_both, x, y, k_fwd=args.k, k_bwd=args.k, unit=True, config=cfg)
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(15)
            with open(args.profile, "a", encoding="utf-8") as f:
                f.write(f"== {run['shape']}\n{text.getvalue()}\n")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
