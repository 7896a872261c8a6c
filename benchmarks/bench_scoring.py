"""Backbone speed, in one run: (1) scoring with xsimpp's one-pass engine vs the LASER-style
reference (identical nearest neighbours asserted), (2) cold vs warm `eval` of a multi-language
run (the warm run must encode nothing).

(1) Shape of xsim++ on FLORES-200 devtest: 1012 sources x (1012 gold + ~44k augmented) targets,
d=384 (multilingual-e5-small). Synthetic vectors with a planted gold neighbour and hard distractors.
(2) FLORES-200 devtest (5 languages -> English) when $XSIMPP_DATA_DIR has it, else the demo corpus.

    python benchmarks/bench_scoring.py [--n-src 1012 --n-tgt 45000 --dim 384 --repeats 3]
                                       [--encoder chargram|e5-small|use-m3]
"""

from __future__ import annotations

import os
import time

import faiss
import numpy as np

from xsimpp.scoring import xsim

import bounds  # benchmarks/bounds.py: the bounds of every number typed here


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
    # Noise level chosen so that a few % of sources miss their gold (errors make the check real).
    x = gold + 3.0 * rng.standard_normal((n_src, dim)).astype(np.float32)
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


def compare_with_reference(x: np.ndarray, y: np.ndarray, repeats: int) -> dict:
    """xsimpp vs the LASER-style reference for the three margins, identical neighbours and counts
    asserted. Runs are interleaved so that a change of machine load hits every line alike. Returns
    {margin: {reference_s, xsimpp_s, speedup, errors}} (best times)."""
    xsim(x[:300], y[:300], k=4, mode="index")  # warm-up: numba kernels and thread pool outside the timings
    print(f"{'margin':9} {'reference s':>12} {'xsimpp s':>9} {'speed-up':>9} {'errors':>7}")
    out = {}
    for margin in ("ratio", "distance", "absolute"):
        t_ref, t_ours = [], []
        for _ in range(repeats):
            t, nn_ref = best_of(lambda: reference_nn(x, y, margin, 4), 1)
            t_ref.append(t)
            t, res = best_of(lambda: xsim(x, y, margin=margin, k=4, mode="index", errtypes={}), 1)
            t_ours.append(t)
            # float32 faiss and exact similarities can only disagree on near-ties, which these
            # synthetic sets do not have: any disagreement here is a bug.
            assert (res.nn == nn_ref).all(), f"{margin}: engine and reference disagree"
            assert res.errors == int((nn_ref != np.arange(len(x))).sum())
        print(f"{margin:9} {min(t_ref):12.3f} {min(t_ours):9.3f} {min(t_ref) / min(t_ours):8.2f}x {res.errors:7d}")
        out[margin] = {"reference_s": round(min(t_ref), 4), "xsimpp_s": round(min(t_ours), 4),
                       "speedup": round(min(t_ref) / min(t_ours), 3), "errors": int(res.errors)}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-src", type=bounds.rows, default=1012)
    ap.add_argument("--n-tgt", type=bounds.rows, default=45000)
    ap.add_argument("--dim", type=bounds.dim, default=384)
    ap.add_argument("--repeats", type=bounds.repeats, default=3)
    ap.add_argument("--encoder", default="chargram", help="encoder for the cold/warm eval part")
    ap.add_argument("--langs", default="kea,fur,swh,ibo,zul")
    args = ap.parse_args(argv)
    x, y = make_data(args.n_src, args.n_tgt, args.dim)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; faiss threads "
          f"{faiss.omp_get_max_threads()}; best of {args.repeats}")
    print(f"xsim++ shape {args.n_src} x {args.n_tgt} x {args.dim}")
    compare_with_reference(x, y, args.repeats)
    cold_warm(args.encoder, args.langs)


def cold_warm(encoder_name: str, langs: str) -> None:
    import tempfile

    from xsimpp.cache import EmbeddingCache
    from xsimpp.datasets import Demo, Flores200
    from xsimpp.encoders import create_encoder
    from xsimpp.errors import MissingResourceError
    from xsimpp.tasks.xsim import evaluate_bitexts

    try:
        ds = Flores200("devtest")
        bitexts = [ds.bitext(lang, "eng_Latn") for lang in langs.split(",")]
    except MissingResourceError:
        ds = Demo()
        bitexts = [ds.bitext(lang, "eng_Latn") for lang in ("deu", "fra", "spa")]
    encoder = create_encoder(encoder_name)
    n_sent = sum(2 * len(b) for b in bitexts)
    with tempfile.TemporaryDirectory() as tmp:
        times = []
        for run in ("cold", "warm"):
            cache = EmbeddingCache(encoder.id, encoder.fingerprint, tmp)
            t = time.perf_counter()
            rep = evaluate_bitexts(encoder, bitexts, cache=cache)
            times.append(time.perf_counter() - t)
            cache.close()
            print(f"eval {run}: {times[-1]:7.2f} s  encoded {rep.n_encoded:6d}  reused {rep.n_cached:6d}  "
                  f"({ds.name} {ds.split}, {len(bitexts)} pairs, {encoder.id}, {n_sent} sentence slots)")
            if run == "warm":
                assert rep.n_encoded == 0, "warm run re-encoded sentences"
        print(f"warm/cold time ratio: {times[1] / times[0]:.3f} (cold/warm speed-up {times[0] / times[1]:.1f}x)")


if __name__ == "__main__":
    main()
