"""Wall time of `--ray` with 1 and 2 local workers (and without Ray) for the two distributed paths:
encoding (`xsimpp eval --no-cache`, FLORES-200 devtest) and sharded mining (`xsimpp mine`).
Every Ray run's records / output files are checked equal to the single-process run's.

    python benchmarks/bench_ray.py --encoder sbert --langs fra,deu --mine-n 16384

Each configuration runs in a fresh process (a local Ray instance with --num-cpus N workers), so
model loading per worker and Ray's start-up are part of the wall time, as a user sees them.
Needs the `ray` extra and $XSIMPP_DATA_DIR (FLORES-200).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bounds  # benchmarks/bounds.py: the bounds of every number typed here

CHILD = r"""
import json, sys, time
cfg = json.loads(sys.argv[1])
if cfg["workers"]:
    import ray
    ray.init(num_cpus=cfg["workers"], include_dashboard=False, log_to_driver=False, logging_level="error",
             object_store_memory=300 * 2**20)
import xsimpp
t = time.perf_counter()
if cfg["what"] == "eval":
    res = xsimpp.evaluate(cfg["encoder"], cfg["langs"], split="devtest", cache=False,
                          ray="auto" if cfg["workers"] else None)
    out = [r.to_json() for r in res.records]
    for r in out:
        r.pop("created")
else:
    import numpy as np
    from xsimpp.engine import EngineConfig
    res = xsimpp.mine(cfg["src"], cfg["tgt"], cfg["out"], shard_rows=cfg["shard_rows"],
                      engine=EngineConfig(threads=1 if cfg["workers"] else None),
                      ray="auto" if cfg["workers"] else None)
    out = {n: __import__("hashlib").sha256(open(f"{cfg['out']}/{n}.npy", "rb").read()).hexdigest()
           for n in ("fwd_idx", "fwd_score", "bwd_idx", "bwd_score", "fwd_sim", "bwd_sim")}
print(json.dumps({"seconds": time.perf_counter() - t, "result": out}))
"""


def load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def run(cfg: dict) -> dict:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cfg)], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if proc.returncode:
        sys.exit(proc.stderr[-3000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall"] = wall
    return out


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoder", default="sbert")
    ap.add_argument("--langs", default="fra,deu")
    ap.add_argument("--mine-n", type=bounds.rows, default=16384, help="sources = targets = N random 384-d vectors")
    ap.add_argument("--shard-rows", type=bounds.rows, default=2048)
    ap.add_argument("--workers", type=bounds.counts(0, bounds.MAX_THREADS), default="0,1,2", help="0 = no Ray (single process)")
    ap.add_argument("--skip", choices=("eval", "mine"), action="append", default=[])
    args = ap.parse_args(argv)
    workers = args.workers
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if "mine" not in args.skip:
            import numpy as np

            rng = np.random.default_rng(0)
            for name in ("src", "tgt"):
                np.save(Path(tmp) / f"{name}.npy", rng.standard_normal((args.mine_n, 384)).astype(np.float32))
        for what in ("eval", "mine"):
            if what in args.skip:
                continue
            ref = None
            for w in workers:
                cfg = {"what": what, "workers": w, "encoder": args.encoder, "langs": args.langs,
                       "src": f"{tmp}/src.npy", "tgt": f"{tmp}/tgt.npy", "out": f"{tmp}/out-{w}",
                       "shard_rows": args.shard_rows}
                before = load()
                out = run(cfg)
                same = ref is None or out["result"] == ref
                ref = ref or out["result"]
                rows.append((what, w, out["seconds"], out["process_wall"], before, load(), same))
                print(f"{what:5s} workers={w or 'none':>4}: {out['seconds']:7.1f} s in the call "
                      f"({out['process_wall']:.1f} s with start-up), load {before} -> {load()}, "
                      f"identical to the first run: {same}", flush=True)
                if not same:
                    sys.exit("results differ")


if __name__ == "__main__":
    main()
