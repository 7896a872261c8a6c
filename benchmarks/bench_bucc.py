"""Time BUCC mining and threshold tuning at BUCC-sample scale (8624 x 13589, 384-d by default).

Random unit vectors with planted pairs stand in for embeddings, so the timing needs no encoder:
    python benchmarks/bench_bucc.py                 # BUCC zh-en sample size
    python benchmarks/bench_bucc.py --n-src 2000 --n-tgt 3000 --threads 1
Encoding dominates real runs (e5-small: ~5-10 sentences/s on 2 shared cores); this measures the
part xsimpp owns: one kNN pass both ways, margins, candidate union, sweep and cross-validation.
"""

from __future__ import annotations

import time

import numpy as np

from xsimpp.engine import EngineConfig
from xsimpp.scoring.bucc import cross_validate, gold_mask, mine_candidates, tune_threshold

import bounds  # benchmarks/bounds.py: the bounds of every number typed here


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-src", type=bounds.rows, default=8624)
    ap.add_argument("--n-tgt", type=bounds.rows, default=13589)
    ap.add_argument("--n-gold", type=bounds.rows, default=257)
    ap.add_argument("--dim", type=bounds.dim, default=384)
    ap.add_argument("--threads", type=bounds.threads, help="engine threads (default: all CPUs): same results")
    ap.add_argument("--seed", type=bounds.seed, default=0)
    a = ap.parse_args(argv)
    if a.n_gold > min(a.n_src, a.n_tgt):  # gold pairs are drawn from both sides without replacement
        ap.error(f"--n-gold {a.n_gold} is more than --n-src or --n-tgt")

    rng = np.random.default_rng(a.seed)
    x = rng.normal(size=(a.n_src, a.dim)).astype(np.float32)
    y = rng.normal(size=(a.n_tgt, a.dim)).astype(np.float32)
    gs = rng.choice(a.n_src, a.n_gold, replace=False)
    gt = rng.choice(a.n_tgt, a.n_gold, replace=False)
    y[gt] = x[gs] + 0.8 * rng.normal(size=(a.n_gold, a.dim)).astype(np.float32)

    mine_candidates(x[:50], y[:60], margin="ratio", k=4)  # kernel load (numba cache) outside the timing
    t = time.perf_counter()
    c = mine_candidates(x, y, margin="ratio", k=4, config=EngineConfig(threads=a.threads))
    t_mine = time.perf_counter() - t
    t = time.perf_counter()
    flags = gold_mask(c, gs, gt)
    best = tune_threshold(c.score, flags, a.n_gold)
    t_tune = time.perf_counter() - t
    t = time.perf_counter()
    cv = cross_validate(c, flags, gs, a.n_src, folds=5, seed=0)
    t_cv = time.perf_counter() - t
    print(f"{a.n_src} x {a.n_tgt} x {a.dim}, threads {a.threads or 'all'}: mining {t_mine:.2f} s ({len(c)} candidates), "
          f"gold+tune {t_tune * 1000:.1f} ms, 5-fold CV {t_cv * 1000:.1f} ms")
    print(f"planted-pair F1 {100 * best.f1:.2f} (tuned, optimistic), {100 * cv.pooled.f1:.2f} (5-fold CV)")


if __name__ == "__main__":
    main()
