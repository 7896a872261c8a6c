"""Digests of what the engine reports, for comparing processes that run on other BLAS kernels.

Run as a script (``python tests/portability_probe.py OUT_DIR``): prints one JSON object mapping a
computation's name to the sha256 of its output arrays (or files). ``test_portability.py`` runs it
under several ``OPENBLAS_CORETYPE`` settings and thread counts and requires identical digests.
``raw_gemm`` is the digest of a plain float32 GEMM: it may differ between kernels (that is the
point), and says whether the comparison exercised two different kernels at all; ``numba_target``
says what numba compiled the selection for.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def files_digest(folder: Path, names) -> str:
    h = hashlib.sha256()
    for n in names:
        h.update((folder / n).read_bytes())
    return h.hexdigest()[:16]


def knn_digest(knn) -> str:
    return digest(knn.fwd_idx, knn.fwd_sim, knn.fwd_score, knn.bwd_idx, knn.bwd_sim, knn.bwd_score)


def probe(out: Path) -> dict[str, str]:
    from vectors import tie_heavy
    from xsimpp.engine import EngineConfig, margin_knn, normalize
    from xsimpp.engine.mining import mine

    threads = int(os.environ.get("PROBE_THREADS", "0")) or None
    cfg = EngineConfig(threads=threads)
    res = {}
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1000, 1024)).astype(np.float32)
    y = rng.standard_normal((1500, 1024)).astype(np.float32)
    y[500] = y[0]
    x[0] = y[0]
    res["raw_gemm"] = digest(normalize(x) @ normalize(y).T)
    import numba

    res["numba_target"] = f"{numba.config.CPU_NAME or 'host'} {numba.config.CPU_FEATURES or ''}".strip()
    for margin in ("ratio", "distance", "absolute"):
        res[f"random_{margin}"] = knn_digest(margin_knn(x, y, margin=margin, k=4, backward=True, config=cfg))
    xs, ys = tie_heavy(np.random.default_rng(1), 300, 2000, 7)
    res["tie_heavy"] = knn_digest(margin_knn(xs, ys, k=4, backward=True, config=cfg))
    base = rng.standard_normal(256)
    yn = (base + 1e-7 * rng.standard_normal((3000, 256))).astype(np.float32)
    xn = (base + 1e-3 * rng.standard_normal((40, 256))).astype(np.float32)
    res["near_ties"] = knn_digest(margin_knn(xn, yn, k=4, backward=True, config=cfg))
    names = ["fwd_idx.npy", "fwd_score.npy", "fwd_sim.npy", "bwd_idx.npy", "bwd_score.npy", "bwd_sim.npy"]
    for budget in ("64MB", "4GB"):
        mine(x, y, out / f"mine-{budget}", max_memory=budget, config=cfg)
        res[f"mine_{budget}"] = files_digest(out / f"mine-{budget}", names)
    data = os.environ.get("XSIMPP_DATA_DIR")
    if data and (Path(data) / "flores200").is_dir():
        from xsimpp.datasets import Flores200
        from xsimpp.encoders import create_encoder

        bt = Flores200("devtest", data_dir=data).bitext("kea_Latn", "eng_Latn")
        enc = create_encoder("chargram")
        xr, yr = enc.encode(bt.src[:500]), enc.encode(bt.tgt)
        res["flores_chargram"] = knn_digest(margin_knn(xr, yr, k=4, backward=True, config=cfg))
    return res


if __name__ == "__main__":
    print(json.dumps(probe(Path(sys.argv[1]))))
