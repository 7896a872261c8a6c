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
from .lowp import BLOCK_BYTES_PER_VALUE as LOWP_BYTES_PER_VALUE
from .lowp import LowpStats, lowp_topk, resolve_precision
from .selection import (BACKENDS, SELECTS, ColumnTopK, gemm_nt, resolve_backend, resolve_select,
                        select_block)

MARGINS = ("ratio", "distance", "absolute")

# Default budget for one similarity block and its selection temporaries, in bytes. 512 MiB holds the
# xsim++ shape (1012 x 45k) in one block (fewer, more selective passes) and stays far from the
# 24 GB machine limit.
DEFAULT_BLOCK_BYTES = 512 * 2**20


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
    a = np.ascontiguousarray(a, dtype=np.float32)
    # One fused pass for the squared norms (np.linalg.norm materialises a*a: 4x slower here).
    norms = np.sqrt(np.einsum("ij,ij->i", a, a))
    odd = ~np.isfinite(norms) | (norms == 0)  # NaN/inf, or float32 over/underflow of the squares
    if odd.any():
        rows = np.flatnonzero(odd)
        bad = rows[~np.isfinite(a[rows]).all(axis=1)]
        if bad.size:
            raise BadInputError(f"{name} has {len(bad)} row(s) with NaN or infinite values (row {_few(bad)})")
        norms[rows] = np.linalg.norm(a[rows].astype(np.float64), axis=1)
        zero = rows[norms[rows] == 0]
        if zero.size:
            raise BadInputError(f"{name} has {len(zero)} all-zero vector(s) (row {_few(zero)}); cosine is undefined")
    return a / norms[:, None]


def _few(rows: np.ndarray) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:5])
    return shown + (" …" if len(rows) > 5 else "")


def check_similarity_shape(sim: np.ndarray) -> None:
    if sim.ndim != 2 or 0 in sim.shape:
        raise BadInputError(f"similarity matrix must be 2-D and non-empty, got shape {sim.shape}")


def check_k(k: int, n_candidates: int, what: str) -> None:
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise BadInputError(f"k must be a positive integer, got {k!r}")
    if k > n_candidates:
        raise BadInputError(
            f"k={k} is larger than the {what} ({n_candidates} sentence(s)); use k <= {n_candidates}"
        )


BWD_SCOPES = ("all", "forward")


@dataclass(frozen=True)
class TopK:
    """Forward (rows of x over y) and backward (rows of y over x) nearest neighbours."""

    fwd_sim: np.ndarray  # (n_x, k_fwd) float32, sorted descending
    fwd_idx: np.ndarray  # (n_x, k_fwd) int64 indices into y
    bwd_sim: np.ndarray | None  # (n_y, k_bwd), or (len(bwd_cols), k_bwd); None when not requested
    bwd_idx: np.ndarray | None
    bwd_cols: np.ndarray | None = None  # columns the backward rows belong to; None = all of y, in order
    lowp: LowpStats | None = None  # what the bf16 candidate path did, when it ran


def _row_blocks_from_vectors(x: np.ndarray, y: np.ndarray, block_rows: int) -> Iterator[tuple[int, np.ndarray]]:
    for start in range(0, x.shape[0], block_rows):
        yield start, gemm_nt(x[start : start + block_rows], y)


def _row_blocks_from_similarity(sim: np.ndarray, block_rows: int) -> Iterator[tuple[int, np.ndarray]]:
    for start in range(0, sim.shape[0], block_rows):
        yield start, np.asarray(sim[start : start + block_rows], dtype=np.float32)


# Bytes per similarity value that one block costs at its peak: the float32 block itself (4) plus
# the filter's chunked gathers (<= ~2 even when every value ties) and slack; measured peak extra
# allocation stays under block_bytes (tests/test_fastpaths.py checks it with tracemalloc).
BLOCK_BYTES_PER_VALUE = 7


def block_rows_for(n_cols: int, block_bytes: int = DEFAULT_BLOCK_BYTES, bytes_per_value: int = 4) -> int:
    return max(1, min(65536, block_bytes // max(1, bytes_per_value * n_cols)))


def topk_both(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    k_fwd: int = 4,
    k_bwd: int | None = 4,
    block_rows: int | None = None,
    backend: str = "auto",
    select: str = "auto",
    block_bytes: int | None = None,
    bwd_scope: str = "all",
    precision: str = "fp32",
    device: str = "cpu",
) -> TopK:
    """Top-k neighbours both ways from one pass over the similarity matrix.

    Give normalised vectors ``x`` (n_x, d) and ``y`` (n_y, d), or a precomputed ``similarity``
    (n_x, n_y). ``k_bwd=None`` skips the backward direction (absolute margin needs none).
    ``bwd_scope="forward"`` computes the backward top-k only for the columns that occur in the
    forward top-k (``TopK.bwd_cols``): all that the margins of the forward candidates need, and on
    the xsim++ shape (45k targets, ~4k of them candidates) it skips ~90 % of the backward work.

    ``select``: ``jit`` reads each value once in a compiled kernel (``scoring.jit``, numba);
    ``filter`` gathers only the groups that can hold a top-k value (numpy, ``selection``); ``sort``
    is the plain per-line selection with ``backend`` (numpy or torch.topk); ``auto`` takes ``jit``
    where its load cost pays off, else ``filter``. All return identical arrays. ``block_bytes``
    bounds one block and its selection temporaries (default 512 MiB); ``block_rows`` overrides it.

    ``precision="bf16"`` generates candidates with a bf16 GEMM on ``device`` and rescores them
    exactly (``lowp``): identical arrays, faster where bf16 is native. ``auto`` takes it for large
    forward-only products (``bwd_scope="forward"`` or no backward) on such hardware, or whenever a
    non-CPU ``device`` is named. Vectors only.
    """
    if select not in SELECTS:
        raise BadInputError(f"select must be one of {', '.join(SELECTS)}, got '{select}'")
    if similarity is not None:
        sim = np.asarray(similarity)
        check_similarity_shape(sim)
        if not np.isfinite(sim).all():
            raise BadInputError("similarity matrix has NaN or infinite values")
        n_x, n_y = sim.shape
        rows = block_rows or block_rows_for(n_y, block_bytes or DEFAULT_BLOCK_BYTES, BLOCK_BYTES_PER_VALUE)
        blocks = _row_blocks_from_similarity(sim, rows)
    else:
        assert x is not None and y is not None
        if x.shape[1] != y.shape[1]:
            raise BadInputError(f"source and target embeddings differ in dimension ({x.shape[1]} vs {y.shape[1]})")
        n_x, n_y = x.shape[0], y.shape[0]
        rows = block_rows or block_rows_for(n_y, block_bytes or DEFAULT_BLOCK_BYTES, BLOCK_BYTES_PER_VALUE)
        blocks = _row_blocks_from_vectors(x, y, rows)
    check_k(k_fwd, n_y, "target set")
    if k_bwd is not None:
        check_k(k_bwd, n_x, "source set")
    if bwd_scope not in BWD_SCOPES:
        raise BadInputError(f"bwd_scope must be one of {', '.join(BWD_SCOPES)}, got '{bwd_scope}'")
    later_bwd = k_bwd is not None and bwd_scope == "forward"
    full_bwd = k_bwd is not None and not later_bwd
    if select == "sort":
        backend = resolve_backend(backend)
    elif backend not in BACKENDS:  # jit and filter are numpy only: do not pay torch's import for nothing
        raise BadInputError(f"backend must be one of {', '.join(BACKENDS)}, got '{backend}'")
    plain = select == "sort"
    # An explicit method is checked now; "auto" is resolved only if the float32 loop runs (the bf16
    # path needs no selection method, and resolving may import numba).
    method = select if select == "auto" else resolve_select(select, n_x * n_y, max(k_fwd, k_bwd or 0))

    if similarity is not None or plain:  # a given matrix, or the plain reference path
        if precision == "bf16" or device != "cpu":
            raise BadInputError("bf16 candidates (and a scoring device) need vectors and select='auto', 'jit' or 'filter'")
        precision = "fp32"
    else:
        if precision == "auto" and device != "cpu":
            precision = "bf16"
        elif precision == "auto" and full_bwd:
            # Measured: with the full backward direction the bf16 band costs more than it saves
            # (bench_roofline.py), so auto keeps float32 there; bf16 stays available on request.
            precision = "fp32"
        precision = resolve_precision(precision, 2.0 * n_x * n_y * x.shape[1], device)
    stats = None
    fwd_sim = np.empty((n_x, k_fwd), dtype=np.float32)
    fwd_idx = np.empty((n_x, k_fwd), dtype=np.int64)
    whole = None  # the block, when one block holds every row: the later backward pass reuses it
    if precision == "bf16":
        assert x is not None and y is not None
        lp_rows = block_rows or block_rows_for(n_y, block_bytes or DEFAULT_BLOCK_BYTES, LOWP_BYTES_PER_VALUE)
        lp = lowp_topk(x, y, k_fwd=k_fwd, k_bwd=k_bwd if full_bwd else None, block_rows=lp_rows, device=device)
        stats = lp.stats
        if stats.fallback is None:  # else the float32 loop below computes the same arrays
            assert lp.fwd_sim is not None and lp.fwd_idx is not None
            if not later_bwd:
                return TopK(lp.fwd_sim, lp.fwd_idx, lp.bwd_sim, lp.bwd_idx, None, stats)
            fwd_sim, fwd_idx = lp.fwd_sim, lp.fwd_idx
            blocks = iter(())
    if method == "auto":
        method = resolve_select(select, n_x * n_y, max(k_fwd, k_bwd or 0), backward=full_bwd)
    columns = ColumnTopK(n_y, k_bwd) if full_bwd else None
    for start, block in blocks:
        stop = start + block.shape[0]
        fwd_sim[start:stop], fwd_idx[start:stop] = select_block(block, k_fwd, columns, start, method, backend)
        if later_bwd:
            whole = block if start == 0 and stop == n_x else None
    if not later_bwd:
        return TopK(fwd_sim, fwd_idx, columns.sim if columns else None, columns.idx if columns else None, None, stats)
    assert k_bwd is not None
    cols = np.unique(fwd_idx)
    if whole is not None:
        sub_blocks: Iterator[tuple[int, np.ndarray]] = iter([(0, np.take(whole, cols, axis=1))])
    elif similarity is not None:
        sub_blocks = ((a, np.asarray(sim[a : a + rows][:, cols], dtype=np.float32)) for a in range(0, n_x, rows))
    else:
        y_cols = y[cols]
        sub_blocks = ((a, gemm_nt(x[a : a + rows], y_cols)) for a in range(0, n_x, rows))
    # The sub-blocks are small (|cols| columns): their selection method is chosen for their size.
    sub_method = method if plain else resolve_select(select, n_x * len(cols), k_bwd)
    columns = ColumnTopK(len(cols), k_bwd)
    for start, block in sub_blocks:
        select_block(block, 0, columns, start, sub_method, backend)
    return TopK(fwd_sim, fwd_idx, columns.sim, columns.idx, cols, stats)


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


def check_margin(margin: str) -> None:
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
    select: str = "auto",
    block_bytes: int | None = None,
    precision: str = "fp32",
    device: str = "cpu",
) -> MarginKNN:
    """Margin-based kNN (Artetxe & Schwenk 2019) of x over y, and optionally of y over x.

    Vectors are L2-normalised first (cosine), unless ``normalize=False`` (already unit length)
    or a ``similarity`` matrix is given. With ``margin='absolute'`` candidates are the top-1 by
    cosine (LASER searches k=1 there).
    """
    check_margin(margin)
    if similarity is None:
        if x is None or y is None:
            raise BadInputError("give either x and y, or a similarity matrix")
        if normalize:
            x = l2_normalize(x, "source embeddings")
            y = l2_normalize(y, "target embeddings")
    if margin == "absolute":
        top = topk_both(x, y, similarity=similarity, k_fwd=1, k_bwd=1 if backward else None, block_rows=block_rows,
                         backend=backend, select=select, block_bytes=block_bytes, precision=precision, device=device)
        return MarginKNN(margin, 1, top.fwd_idx, top.fwd_sim, top.bwd_idx, top.bwd_sim)
    # Without backward results only the forward candidates' target averages are needed.
    top = topk_both(x, y, similarity=similarity, k_fwd=k, k_bwd=k, block_rows=block_rows, backend=backend,
                    select=select, block_bytes=block_bytes, bwd_scope="all" if backward else "forward",
                    precision=precision, device=device)
    avg_x = top.fwd_sim.mean(axis=1)
    if top.bwd_cols is None:
        avg_y = top.bwd_sim.mean(axis=1)
    else:  # NaN marks targets no forward candidate refers to: never read by margin_scores below
        avg_y = np.full(top.fwd_idx.max() + 1, np.nan, dtype=np.float32)
        avg_y[top.bwd_cols] = top.bwd_sim.mean(axis=1)
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
    select: str = "auto",
    block_bytes: int | None = None,
    precision: str = "fp32",
    device: str = "cpu",
) -> np.ndarray:
    """Index into y of the best margin-scored neighbour of every row of x."""
    knn = margin_knn(x, y, similarity=similarity, margin=margin, k=k, block_rows=block_rows, backend=backend,
                     select=select, block_bytes=block_bytes, precision=precision, device=device)
    return knn.forward_best()[0]
