"""The exactness contract of the kNN engine, and the plain routines that define it.

Every number the toolkit reports about neighbours — which neighbour, its similarity, margin
averages and margin scores — is a function of the input vectors alone: the same on every CPU, BLAS
kernel, thread count, block size, shard layout and candidate GEMM. How:

1. **Normalisation** (``normalize``): squared norms summed in float64 in the same fixed order,
   a correctly rounded square root and division, one rounding to float32. Equal input rows give
   equal unit rows, so duplicate sentences tie exactly.
2. **The exact similarity** of a pair is ``lane_dot`` of the two float32 unit rows: every
   float32 x float32 product is exact in float64 (48 significant bits), and the products are
   summed in float64 in a fixed order — 8 lanes, lane ``l`` adding the products ``t = l, l+8,
   l+16, ...`` in turn from +0.0, then ``((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7))``. No step depends on
   the machine (fused multiply-add gives the same result, since the product is exact).
3. **Candidates, not answers, come from fast GEMMs.** A float32 GEMM (any BLAS, any kernel, any
   tiling, on any device, without TF32) errs by at most ``gemm_error`` per value (Higham,
   Accuracy and Stability, Thm 3.1: |fl(x.y) - x.y| <= gamma_d |x|.|y| for any summation order).
   If the k-th largest GEMM value of a line is t, the exact k-th is >= t - e, so every pair of the
   exact top-k has a GEMM value >= t - 2e (e bounds GEMM error + exact-dot error). All pairs
   above that band are rescored with the exact similarity, and the top-k is taken in the total
   order (exact similarity desc, index asc). Equal similarities go to the lower index, so
   identical vectors tie exactly and the first of them wins.
4. **Margins** (``engine.knn.margin_scores``) are float64 arithmetic on exact values.

A pair scorer's similarity matrix (OneAligner) is exact by definition: its values are the
scores, compared as they are (no band).

``exact_similarity`` and ``reference_topk`` compute the contract the slow, obvious way (the whole
matrix, a stable sort): the tests hold every fast path to them.
"""

from __future__ import annotations

import numpy as np

from ..errors import BadInputError

LANES = 8
# float32 unit roundoff for any faithful rounding (round-to-nearest would be 2^-24): a BLAS that
# rounds differently still stays inside the bound.
U32 = 2.0**-23
U64 = 2.0**-52
# Flush-to-zero / denormals-are-zero in a GEMM loses at most this per product or partial sum.
TINY = 2.0**-120


def lane_sum(products: np.ndarray, zeros=np.zeros) -> np.ndarray:
    """Rows of float64 ``products`` (n, d) summed in the contract's fixed order (see module doc).
    Only slicing and elementwise adds, so a torch tensor on any device goes through the same code
    (``zeros``: its allocator) and rounds the same."""
    n, d = products.shape
    acc = zeros((n, LANES))
    full = d // LANES
    for c in range(full):
        acc += products[:, c * LANES : (c + 1) * LANES]
    tail = d - full * LANES
    if tail:
        acc[:, :tail] += products[:, full * LANES :]
    return ((acc[:, 0] + acc[:, 1]) + (acc[:, 2] + acc[:, 3])) + ((acc[:, 4] + acc[:, 5]) + (acc[:, 6] + acc[:, 7]))


def lane_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact similarity of row pairs: ``a[i] . b[i]`` for float32 rows (n, d), as float64 (n,)."""
    return lane_sum(np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64))


def pair_similarity(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                    chunk: int = 16384) -> np.ndarray:
    """Exact similarity of the pairs (x[rows[n]], y[cols[n]]), float64, in chunks (bounded memory)."""
    rows, cols = np.asarray(rows, np.int64).reshape(-1), np.asarray(cols, np.int64).reshape(-1)
    out = np.empty(len(rows), np.float64)
    for a in range(0, len(rows), chunk):
        out[a : a + chunk] = lane_dot(x[rows[a : a + chunk]], y[cols[a : a + chunk]])
    return out


def _few(rows: np.ndarray) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:5])
    return shown + (" …" if len(rows) > 5 else "")


def _check_2d(a: np.ndarray, name: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 2:
        raise BadInputError(f"{name} must be a 2-D array (sentences x dimensions), got shape {a.shape}")
    if a.shape[0] == 0:
        raise BadInputError(f"{name} is empty (0 sentences)")
    if a.shape[1] == 0:
        raise BadInputError(f"{name} has 0 dimensions")
    return np.ascontiguousarray(a, dtype=np.float32)


def _check_norms(sq: np.ndarray, name: str) -> None:
    # float32 squares cannot overflow float64: a non-finite sum means NaN/inf in the row.
    bad = np.flatnonzero(~np.isfinite(sq))
    if bad.size:
        raise BadInputError(f"{name} has {len(bad)} row(s) with NaN or infinite values (row {_few(bad)})")
    zero = np.flatnonzero(sq == 0)
    if zero.size:
        raise BadInputError(f"{name} has {len(zero)} all-zero vector(s) (row {_few(zero)}); cosine is undefined")


def normalize(a: np.ndarray, name: str = "embeddings", threads: int | None = None) -> np.ndarray:
    """float32, C-contiguous unit rows, computed the same way on every machine (compiled; equal to
    ``reference_normalize``).

    NaN/inf or all-zero rows are errors, naming the rows: a zero vector has no direction, so its
    cosine with anything is undefined (LASER/faiss would silently rank it last).
    """
    from . import kernels

    a = _check_2d(a, name)
    out, sq = kernels.normalize_rows(a, threads)
    _check_norms(sq, name)
    return out


def reference_normalize(a: np.ndarray, name: str = "embeddings") -> np.ndarray:
    """``normalize`` in plain numpy: squared norms by ``lane_sum``, float64 division, float32."""
    a = _check_2d(a, name)
    sq = squared_norms(a)
    _check_norms(sq, name)
    out = np.empty(a.shape, np.float32)
    for s in range(0, len(a), CHUNK_ROWS):  # float64 temporaries in chunks: bounded memory
        e = s + CHUNK_ROWS
        out[s:e] = a[s:e].astype(np.float64) / np.sqrt(sq[s:e])[:, None]
    return out


CHUNK_ROWS = 16384


def squared_norms(a: np.ndarray) -> np.ndarray:
    """Rows' squared norms in float64, summed in the fixed lane order."""
    out = np.empty(len(a), np.float64)
    for s in range(0, len(a), CHUNK_ROWS):
        a64 = np.asarray(a[s : s + CHUNK_ROWS], dtype=np.float64)
        out[s : s + CHUNK_ROWS] = lane_sum(a64 * a64)
    return out


def max_norm(a: np.ndarray) -> float:
    """An upper bound on the rows' Euclidean norms (float64 sums, inflated past their rounding)."""
    return float(np.sqrt(squared_norms(a).max()) * (1 + 1e-12))


def gemm_error(d: int, norm_x: float, norm_y: float) -> float:
    """Bound on |GEMM value - exact similarity| for rows of dimension d and norms <= norm_x, norm_y.

    GEMM: gamma_d(u32) |x|.|y| <= gamma_d ||x|| ||y|| in any order (+ d TINY for flushed
    subnormals); the exact similarity's own float64 rounding: gamma_(d/8 + 3)(u64) ||x|| ||y||.
    """
    n32, n64 = d * U32, (-(-d // LANES) + 3) * U64
    if n32 >= 0.5:
        raise BadInputError(f"dimension {d} is too large for a float32 error bound")
    scale = norm_x * norm_y
    return (n32 / (1 - n32) + n64 / (1 - n64)) * scale + 2 * d * TINY


def exact_similarity(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The whole (n_x, n_y) matrix of exact similarities: the contract, for small inputs and tests."""
    rows = np.repeat(np.arange(len(x)), len(y))
    cols = np.tile(np.arange(len(y)), len(x))
    return pair_similarity(x, y, rows, cols).reshape(len(x), len(y))


def sorted_topk(sim: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of every row of a float64 matrix in the total order (value desc, index asc)."""
    idx = np.argsort(-sim, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(sim, idx, axis=1), idx.astype(np.int64)


def reference_topk(x: np.ndarray | None, y: np.ndarray | None, k_fwd: int, k_bwd: int | None,
                   similarity: np.ndarray | None = None):
    """(fwd_sim, fwd_idx, bwd_sim, bwd_idx) by the contract's definition, the slow obvious way."""
    s = np.asarray(similarity, np.float64) if similarity is not None else exact_similarity(x, y)
    fwd = sorted_topk(s, k_fwd)
    bwd = sorted_topk(np.ascontiguousarray(s.T), k_bwd) if k_bwd else (None, None)
    return fwd[0], fwd[1], bwd[0], bwd[1]
