"""Scoring speed: xsimpp's one-pass engine vs the LASER-style reference, identical counts asserted.

Shape of xsim++ on FLORES-200 devtest: 1012 sources x (1012 gold + ~44k augmented) targets, d=384
(multilingual-e5-small). Synthetic vectors with a planted gold neighbour and hard distractors.

    python benchmarks/bench_scoring.py [--n-src 1012 --n-tgt 45000 --dim 384 --repeats 3]
"""

from __future__ import annotations

import argparse
import time

import faiss
import numpy as np

from xsimpp.scoring import xsim


def reference_nn(x: np.ndarray, y: np.ndarray, margin: str, k: int) -> np.ndarray:
    """LASER source/xsim.py's algorithm: normalise, two faiss searches, a Python loop over candidates."""
    x, y = x.copy(), y.copy()
    faiss.normalize_L2(x)
    faiss.normalize_L2(y)
    ix, iy = faiss.IndexFlatIP(x.shape[1]), faiss.IndexFlatIP(y.shape[1])
    ix.add(x)
    iy.add(y)
    if margin == "absolute":
        return iy.search(x, 1)[1][:, 0]
    cos_xy, idx_xy = iy.search(x, k)
    cos_yx, _ = ix.search(y, k)
    ax, ay = cos_xy.mean(axis=1), cos_yx.mean(axis=1)
    scores = np.zeros((len(x), k))
    for i in range(len(x)):
        for j in range(k):
            b = (ax[i] + ay[idx_xy[i, j]]) / 2
            scores[i, j] = cos_xy[i, j] / b if margin == "ratio" else cos_xy[i, j] - b
    return idx_xy[np.arange(len(x)), scores.argmax(axis=1)]


def make_data(n_src: int, n_tgt: int, dim: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    gold = rng.standard_normal((n_src, dim)).astype(np.float32)
    x = gold + 0.8 * rng.standard_normal((n_src, dim)).astype(np.float32)
    # Distractors: perturbed copies of gold sentences (like xsim++ hard negatives), then random ones.
    parents = rng.integers(0, n_src, n_tgt - n_src)
    distract = gold[parents] + 1.0 * rng.standard_normal((n_tgt - n_src, dim)).astype(np.float32)
    return x, np.concatenate([gold, distract])


def best_of(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-src", type=int, default=1012)
    ap.add_argument("--n-tgt", type=int, default=45000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    x, y = make_data(args.n_src, args.n_tgt, args.dim)
    print(f"shape: {args.n_src} x {args.n_tgt} x {args.dim}; faiss threads {faiss.omp_get_max_threads()}; best of {args.repeats}")
    print(f"{'margin':9} {'reference s':>12} {'xsimpp s':>10} {'speed-up':>9} {'errors':>7}")
    for margin in ("ratio", "distance", "absolute"):
        t_ref, nn_ref = best_of(lambda: reference_nn(x, y, margin, 4), args.repeats)
        t_ours, res = best_of(lambda: xsim(x, y, margin=margin, k=4, mode="index", errtypes={}), args.repeats)
        assert (res.nn == nn_ref).all(), f"{margin}: engine and reference disagree"
        ref_errors = int((nn_ref != np.arange(len(x))).sum())
        assert res.errors == ref_errors
        print(f"{margin:9} {t_ref:12.3f} {t_ours:10.3f} {t_ref / t_ours:8.2f}x {res.errors:7d}")


if __name__ == "__main__":
    main()
