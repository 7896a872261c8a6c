"""Exact k-nearest neighbours in both directions and margin scoring, in one pass.

The reference (LASER source/xsim.py, mining.py) runs two faiss searches (x->y and y->x) and then a
Python loop over candidates. Here one blockwise pass over the similarity matrix yields the forward
top-k of every row and the backward top-k of every column, so the matrix is computed once and
memory stays O(block_rows x n_y). Pair scorers (OneAligner) hand in a similarity matrix instead of
vectors; the same code scores both.

Ties are broken deterministically: among equal similarities the lower index ranks first (a stable
order), so results never depend on block size or on the order of candidates inside a block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..errors import BadInputError

MARGINS = ("ratio", "distance", "absolute")

# Default budget for one similarity block (float32), in bytes. 256 MiB keeps the pass well inside
# the cache-unfriendly regime where GEMM dominates, and far from the 24 GB machine limit.
DEFAULT_BLOCK_BYTES = 256 * 2**20


def l2_normalize(a: np.ndarray, name: str = "embeddings") -> np.ndarray:
    """Return a float32, C-contiguous, row-normalised copy; NaN/inf or all-zero rows are errors.

    A zero vector has no direction, so its cosine with anything is undefined; LASER/faiss would
    silently leave it at zero and let it rank last. We refuse instead, naming the rows.
    """
    a = np.asarray(a)
    if a.ndim != 2:
        raise BadInputError(f"{name} must be a 2-D array (sentences x dimensions), got shape {a.shape}")
    if a.shape[0] == 0:
        raise BadInputError(f"{name} is empty (0 sentences)")
    a = np.array(a, dtype=np.float32, order="C", copy=True)
    bad = ~np.isfinite(a).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise BadInputError(f"{name} has {len(rows)} row(s) with NaN or infinite values (row {_few(rows)})")
    norms = np.linalg.norm(a, axis=1)
    zero = norms == 0
    if zero.any():
        rows = np.flatnonzero(zero)
        raise BadInputError(f"{name} has {len(rows)} all-zero vector(s) (row {_few(rows)}); cosine is undefined")
    a /= norms[:, None]
    return a


def _few(rows: np.ndarray) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:5])
    return shown + (" …" if len(rows) > 5 else "")


def check_k(k: int, n_candidates: int, what: str) -> None:
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise BadInputError(f"k must be a positive integer, got {k!r}")
    if k > n_candidates:
        raise BadInputError(
            f"k={k} is larger than the {what} ({n_candidates} sentence(s)); use k <= {n_candidates}"
        )


def _torch():
    try:
        import torch

        return torch
    except ImportError:  # torch is optional for scoring: numpy gives the same answers, slower
        return None


BACKENDS = ("auto", "torch", "numpy")


def _resolve_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise BadInputError(f"backend must be one of {', '.join(BACKENDS)}, got '{backend}'")
    if backend == "auto":
        return "torch" if _torch() is not None else "numpy"
    if backend == "torch" and _torch() is None:
        raise BadInputError("the torch scoring backend needs torch: pip install torch")
    return backend


def _sorted_topk(block: np.ndarray, k: int, offset: int, axis: int = 1,
                 backend: str = "numpy") -> tuple[np.ndarray, np.ndarray]:
    """Top-k along ``axis`` of ``block``, as (n_lines, k) arrays sorted by (similarity desc, index asc).

    ``axis=1``: for every row, over columns; ``axis=0``: for every column, over rows (no transpose
    copy needed). k+1 values are selected so that a tie between the k-th and (k+1)-th value is
    visible; which tied index a partial selection keeps is unspecified, so those lines (rare:
    duplicate vectors) are redone with a stable sort that keeps the lowest indices. Every backend
    therefore returns exactly the same indices.
    """
    n = block.shape[axis]
    kk = min(k + 1, n)
    if backend == "torch":
        torch = _torch()
        vals_t, idx_t = torch.topk(torch.from_numpy(block), kk, dim=axis, largest=True, sorted=True)
        vals, idx = vals_t.numpy(), idx_t.numpy()
        if axis == 0:
            vals, idx = vals.T, idx.T
    else:
        lines = block if axis == 1 else block.T
        if kk >= n:
            idx = np.argsort(-lines, axis=1, kind="stable")[:, :kk]
        else:
            part = np.argpartition(-lines, kk - 1, axis=1)[:, :kk]
            order = np.argsort(-np.take_along_axis(lines, part, axis=1), axis=1, kind="stable")
            idx = np.take_along_axis(part, order, axis=1)
        vals = np.take_along_axis(lines, idx, axis=1)
    if kk > k:
        tied = np.flatnonzero(vals[:, k - 1] == vals[:, k])
        vals, idx = vals[:, :k], idx[:, :k]
        if tied.size:
            lines = block[tied] if axis == 1 else block[:, tied].T
            fix = np.argsort(-lines, axis=1, kind="stable")[:, :k]
            idx = idx.copy()
            vals = vals.copy()
            idx[tied] = fix
            vals[tied] = np.take_along_axis(lines, fix, axis=1)
    idx = idx.astype(np.int64, copy=False)
    order = np.lexsort((idx, -vals), axis=1)
    idx = np.take_along_axis(idx, order, axis=1)
    vals = np.take_along_axis(vals, order, axis=1)
    return np.ascontiguousarray(vals, dtype=np.float32), idx + offset


def _merge_topk(
    vals_a: np.ndarray, idx_a: np.ndarray, vals_b: np.ndarray, idx_b: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    vals = np.concatenate([vals_a, vals_b], axis=1)
    idx = np.concatenate([idx_a, idx_b], axis=1)
    order = np.lexsort((idx, -vals), axis=1)[:, :k]
    return np.take_along_axis(vals, order, axis=1), np.take_along_axis(idx, order, axis=1)


@dataclass(frozen=True)
class TopK:
    """Forward (rows of x over y) and backward (rows of y over x) nearest neighbours."""

    fwd_sim: np.ndarray  # (n_x, k_fwd) float32, sorted descending
    fwd_idx: np.ndarray  # (n_x, k_fwd) int64 indices into y
    bwd_sim: np.ndarray | None  # (n_y, k_bwd) or None when not requested
    bwd_idx: np.ndarray | None


def _row_blocks_from_vectors(x: np.ndarray, y: np.ndarray, block_rows: int) -> Iterator[tuple[int, np.ndarray]]:
    yt = y.T  # a transposed view: BLAS reads it as is, no 70 MB copy
    for start in range(0, x.shape[0], block_rows):
        yield start, x[start : start + block_rows] @ yt


def _row_blocks_from_similarity(sim: np.ndarray, block_rows: int) -> Iterator[tuple[int, np.ndarray]]:
    for start in range(0, sim.shape[0], block_rows):
        yield start, np.asarray(sim[start : start + block_rows], dtype=np.float32)


def block_rows_for(n_cols: int, block_bytes: int = DEFAULT_BLOCK_BYTES) -> int:
    return max(1, min(65536, block_bytes // max(1, 4 * n_cols)))


def topk_both(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    k_fwd: int = 4,
    k_bwd: int | None = 4,
    block_rows: int | None = None,
    backend: str = "auto",
) -> TopK:
    """Top-k neighbours both ways from one pass over the similarity matrix.

    Give normalised vectors ``x`` (n_x, d) and ``y`` (n_y, d), or a precomputed ``similarity``
    (n_x, n_y). ``k_bwd=None`` skips the backward direction (absolute margin needs none).
    """
    if similarity is not None:
        sim = np.asarray(similarity)
        if sim.ndim != 2 or 0 in sim.shape:
            raise BadInputError(f"similarity matrix must be 2-D and non-empty, got shape {sim.shape}")
        if not np.isfinite(sim).all():
            raise BadInputError("similarity matrix has NaN or infinite values")
        n_x, n_y = sim.shape
        rows = block_rows or block_rows_for(n_y)
        blocks = _row_blocks_from_similarity(sim, rows)
    else:
        assert x is not None and y is not None
        if x.shape[1] != y.shape[1]:
            raise BadInputError(f"source and target embeddings differ in dimension ({x.shape[1]} vs {y.shape[1]})")
        n_x, n_y = x.shape[0], y.shape[0]
        rows = block_rows or block_rows_for(n_y)
        blocks = _row_blocks_from_vectors(x, y, rows)
    check_k(k_fwd, n_y, "target set")
    if k_bwd is not None:
        check_k(k_bwd, n_x, "source set")
    backend = _resolve_backend(backend)

    fwd_sim = np.empty((n_x, k_fwd), dtype=np.float32)
    fwd_idx = np.empty((n_x, k_fwd), dtype=np.int64)
    bwd_sim = bwd_idx = None
    for start, block in blocks:
        stop = start + block.shape[0]
        fwd_sim[start:stop], fwd_idx[start:stop] = _sorted_topk(block, k_fwd, 0, axis=1, backend=backend)
        if k_bwd is not None:
            kb = min(k_bwd, block.shape[0])
            vals, idx = _sorted_topk(block, kb, start, axis=0, backend=backend)
            if bwd_sim is None:
                bwd_sim, bwd_idx = vals, idx
            else:
                bwd_sim, bwd_idx = _merge_topk(bwd_sim, bwd_idx, vals, idx, k_bwd)
    return TopK(fwd_sim, fwd_idx, bwd_sim, bwd_idx)


def margin_scores(
    cand_sim: np.ndarray, cand_idx: np.ndarray, avg_self: np.ndarray, avg_other: np.ndarray, margin: str
) -> np.ndarray:
    """Margin score of each candidate: cos / ((A_self + A_other)/2) or cos - (A_self + A_other)/2.

    float32 throughout, in the same operation order as LASER, so scores match it bit for bit.
    """
    denom = (avg_self[:, None] + avg_other[cand_idx]) / np.float32(2)
    if margin == "ratio":
        return cand_sim / denom
    if margin == "distance":
        return cand_sim - denom
    raise BadInputError(f"margin must be one of {', '.join(MARGINS)}, got '{margin}'")


@dataclass(frozen=True)
class MarginKNN:
    """Margin-scored candidates both ways. ``*_score`` equals ``*_sim`` for the absolute margin."""

    margin: str
    k: int
    fwd_idx: np.ndarray
    fwd_score: np.ndarray
    bwd_idx: np.ndarray | None
    bwd_score: np.ndarray | None

    def forward_best(self) -> tuple[np.ndarray, np.ndarray]:
        """Best target per source (first maximum among candidates, as numpy/LASER argmax)."""
        best = self.fwd_score.argmax(axis=1)
        rows = np.arange(len(best))
        return self.fwd_idx[rows, best], self.fwd_score[rows, best]

    def backward_best(self) -> tuple[np.ndarray, np.ndarray]:
        if self.bwd_idx is None:
            raise ValueError("backward neighbours were not computed")
        best = self.bwd_score.argmax(axis=1)
        rows = np.arange(len(best))
        return self.bwd_idx[rows, best], self.bwd_score[rows, best]


def _validate_margin(margin: str) -> None:
    if margin not in MARGINS:
        raise BadInputError(f"margin must be one of {', '.join(MARGINS)}, got '{margin}'")


def margin_knn(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    margin: str = "ratio",
    k: int = 4,
    backward: bool = False,
    block_rows: int | None = None,
    normalize: bool = True,
    backend: str = "auto",
) -> MarginKNN:
    """Margin-based kNN (Artetxe & Schwenk 2019) of x over y, and optionally of y over x.

    Vectors are L2-normalised first (cosine), unless ``normalize=False`` (already unit length)
    or a ``similarity`` matrix is given. With ``margin='absolute'`` candidates are the top-1 by
    cosine (LASER searches k=1 there).
    """
    _validate_margin(margin)
    if similarity is None:
        if x is None or y is None:
            raise BadInputError("give either x and y, or a similarity matrix")
        if normalize:
            x = l2_normalize(x, "source embeddings")
            y = l2_normalize(y, "target embeddings")
    if margin == "absolute":
        top = topk_both(x, y, similarity=similarity, k_fwd=1, k_bwd=1 if backward else None, block_rows=block_rows,
                         backend=backend)
        return MarginKNN(margin, 1, top.fwd_idx, top.fwd_sim, top.bwd_idx, top.bwd_sim)
    top = topk_both(x, y, similarity=similarity, k_fwd=k, k_bwd=k, block_rows=block_rows, backend=backend)
    avg_x = top.fwd_sim.mean(axis=1)
    avg_y = top.bwd_sim.mean(axis=1)
    fwd_score = margin_scores(top.fwd_sim, top.fwd_idx, avg_x, avg_y, margin)
    bwd_idx = bwd_score = None
    if backward:
        bwd_idx = top.bwd_idx
        bwd_score = margin_scores(top.bwd_sim, top.bwd_idx, avg_y, avg_x, margin)
    return MarginKNN(margin, k, top.fwd_idx, fwd_score, bwd_idx, bwd_score)


def nearest_neighbors(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    margin: str = "ratio",
    k: int = 4,
    block_rows: int | None = None,
    backend: str = "auto",
) -> np.ndarray:
    """Index into y of the best margin-scored neighbour of every row of x."""
    knn = margin_knn(x, y, similarity=similarity, margin=margin, k=k, block_rows=block_rows, backend=backend)
    return knn.forward_best()[0]
