"""Small vector sets shared by the exactness tests of the kNN engine's fast paths."""

import numpy as np

from xsimpp.scoring.knn import l2_normalize


def tie_heavy(rng: np.random.Generator, n_x: int, n_y: int, d: int):
    """Small-integer vectors: duplicate rows and equal dot products everywhere."""
    x = rng.integers(-2, 3, size=(n_x, d)).astype(np.float32)
    y = rng.integers(-2, 3, size=(n_y, d)).astype(np.float32)
    x[np.abs(x).sum(1) == 0] = 1
    y[np.abs(y).sum(1) == 0] = 1
    y[3:9] = y[2]
    return l2_normalize(x), l2_normalize(y)


TOPK_FIELDS = ("fwd_sim", "fwd_idx", "bwd_sim", "bwd_idx", "bwd_cols")


def same_topk(a, b) -> None:
    """Two ``TopK`` results are identical arrays (dtypes included), field by field."""
    for f in TOPK_FIELDS:
        va, vb = getattr(a, f), getattr(b, f)
        assert (va is None) == (vb is None), f
        if va is not None:
            assert va.dtype == vb.dtype, f
            assert np.array_equal(va, vb), f
