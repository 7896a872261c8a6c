"""Exact top-k selection primitives over similarity blocks, and the float32 GEMM they read.

Shared by the in-memory engine (``knn``), the low-precision candidate path (``lowp``) and the
out-of-core miner (``xsimpp.mining``). Pure functions over arrays.

Ties are broken deterministically: among equal similarities the lower index ranks first (a stable
order), so results never depend on block size or on the order of candidates inside a block.
"""

from __future__ import annotations

import numpy as np

from ..errors import BadInputError


# OpenBLAS/MKL compute every element of a large sgemm as one fused multiply-add chain over the
# dimension, in order, whatever the output shape; but 1-row/1-column products go to gemv and tiny
# ones to "small matrix" kernels, which sum in another order (last-bit differences). Padding such
# products to a size that takes the main kernel makes every element's value independent of how
# the matrix was tiled, so block sizes, shards and fast paths all see the same float32 bits
# (tests/test_fastpaths.py checks this against the full product).
_MIN_GEMM_SIDE = 128
_MIN_GEMM_MNK = 2_000_000


def gemm_nt(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b.T`` in float32 with tiling-independent element values (see above)."""
    m, n, d = a.shape[0], b.shape[0], a.shape[1]
    side = max(_MIN_GEMM_SIDE, int(np.ceil(np.sqrt(_MIN_GEMM_MNK / max(1, d)))))
    if min(m, n) >= side or (m * n * d >= _MIN_GEMM_MNK and min(m, n) >= 2):
        return a @ b.T  # a transposed view: BLAS reads it as is, no copy
    pa = a if m >= side else np.concatenate([a, np.zeros((side - m, d), a.dtype)])
    pb = b if n >= side else np.concatenate([b, np.zeros((side - n, d), b.dtype)])
    return np.ascontiguousarray((pa @ pb.T)[:m, :n])


def torch_or_none():
    try:
        import torch

        return torch
    except ImportError:  # torch is optional for scoring: numpy gives the same answers, slower
        return None


BACKENDS = ("auto", "torch", "numpy")
SELECTS = ("auto", "jit", "filter", "sort")


def resolve_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise BadInputError(f"backend must be one of {', '.join(BACKENDS)}, got '{backend}'")
    if backend == "auto":
        return "torch" if torch_or_none() is not None else "numpy"
    if backend == "torch" and torch_or_none() is None:
        raise BadInputError("the torch scoring backend needs torch: pip install torch")
    return backend


def sorted_topk(block: np.ndarray, k: int, offset: int, axis: int = 1,
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
        torch = torch_or_none()
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


def merge_topk(
    vals_a: np.ndarray, idx_a: np.ndarray, vals_b: np.ndarray, idx_b: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    vals = np.concatenate([vals_a, vals_b], axis=1)
    idx = np.concatenate([idx_a, idx_b], axis=1)
    order = np.lexsort((idx, -vals), axis=1)[:, :k]
    return np.take_along_axis(vals, order, axis=1), np.take_along_axis(idx, order, axis=1)


# --- filtered exact selection ------------------------------------------------------------------
#
# torch.topk / argpartition over every row *and* every column of a 1012 x 45000 block cost more
# than the GEMM that made it. Most of that work is wasted: only ~k values per line matter. So:
#   1. split each line into G disjoint groups (members q, q+G, q+2G, ...: a strided split, so the
#      reduction runs over a leading/middle axis with a contiguous inner axis and vectorises);
#   2. the k-th largest of the G group maxima, tau, is a LOWER bound on the line's k-th largest
#      value (k distinct groups each hold an element >= tau);
#   3. every element >= tau lies in a group whose maximum is >= tau, so only those groups are
#      gathered; a stable exact sort of the gathered (line, -value, index) triples then yields
#      the top-k. Every value tied with the k-th is >= tau and so is gathered: ties resolve to the
#      lowest index exactly as the plain stable sort does, with no repair step.
# Values are the block's own float32 values, so results equal the plain path bit for bit.


def group_count(n: int, k: int, group: int) -> int:
    """Number of groups: ~n/group, but at least k (tau needs k groups) and at most n."""
    return max(min(n, k), min(n, max(1, n // group)))


def group_max(block: np.ndarray, axis: int, n_groups: int) -> np.ndarray:
    """Maxima of the strided groups (index mod n_groups) along ``axis``; (R, G) or (G, N)."""
    n = block.shape[axis]
    full = n // n_groups  # members every group has; the first n % n_groups groups have one more
    tail = n - full * n_groups
    if axis == 1:
        r = block.shape[0]
        gm = block[:, : full * n_groups].reshape(r, full, n_groups).max(axis=1)
        if tail:
            np.maximum(gm[:, :tail], block[:, full * n_groups :], out=gm[:, :tail])
    else:
        c = block.shape[1]
        gm = block[: full * n_groups].reshape(full, n_groups, c).max(axis=0)
        if tail:
            np.maximum(gm[:tail], block[full * n_groups :], out=gm[:tail])
    return gm


def kth_largest(a: np.ndarray, k: int, axis: int) -> np.ndarray:
    n = a.shape[axis]
    if k == n:
        return a.min(axis=axis)
    if axis == 0 and a.ndim == 2:  # numpy partitions a strided axis ~10x slower than a contiguous one
        return np.partition(np.ascontiguousarray(a.T), n - k, axis=1)[:, n - k]
    return np.take(np.partition(a, n - k, axis=axis), n - k, axis=axis)


def first_k_per_line(line: np.ndarray, other: np.ndarray, vals: np.ndarray, n_lines: int, k: int):
    """(n_lines, k) top-k by (value desc, index asc) from triples; every line has >= k triples."""
    order = np.lexsort((other, -vals, line))
    line, other, vals = line[order], other[order], vals[order]
    counts = np.bincount(line, minlength=n_lines)
    starts = np.cumsum(counts) - counts
    keep = (np.arange(len(line)) - starts[line]) < k
    return vals[keep].reshape(n_lines, k), other[keep].reshape(n_lines, k).astype(np.int64, copy=False)


def gather_groups(block: np.ndarray, axis: int, n_groups: int, gm: np.ndarray, tau: np.ndarray):
    """(line, other index, value) of every element >= tau[line] along ``axis`` (line = row for
    axis=1, column for axis=0), visiting only groups whose maximum reaches tau."""
    n = block.shape[axis]
    members = -(-n // n_groups)
    if axis == 1:
        lines, groups = np.nonzero(gm >= tau[:, None])
    else:
        groups, lines = np.nonzero(gm >= tau[None, :])
    idx = groups[:, None] + n_groups * np.arange(members)[None, :]
    lines = np.broadcast_to(lines[:, None], idx.shape)
    ok = idx < n
    idx, lines = idx[ok], lines[ok]
    vals = block[lines, idx] if axis == 1 else block[idx, lines]
    hit = vals >= tau[lines]
    return lines[hit], idx[hit], vals[hit]


FWD_GROUP, BWD_GROUP = 32, 8


# Lines are processed in chunks of about block.size / CHUNK_DIVISOR values: the gather's index
# arrays cost ~60 bytes per gathered value, and with massive ties (all values equal) every value
# is gathered; chunking keeps that worst case near 2 bytes per block value (BLOCK_BYTES_PER_VALUE).
CHUNK_DIVISOR = 32


def filtered_topk(block: np.ndarray, k: int, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact stable top-k of every line along ``axis`` (same contract as sorted_topk)."""
    n_lines, n = block.shape[1 - axis], block.shape[axis]
    k = min(k, n)
    g = group_count(n, k, FWD_GROUP if axis == 1 else BWD_GROUP)
    step = max(1, block.size // CHUNK_DIVISOR // max(1, n), 4096 // max(1, n))
    vals = np.empty((n_lines, k), np.float32)
    idx = np.empty((n_lines, k), np.int64)
    for a in range(0, n_lines, step):
        b = min(n_lines, a + step)
        part = block[a:b] if axis == 1 else block[:, a:b]
        gm = group_max(part, axis, g)
        tau = kth_largest(gm, k, axis)
        lines, other, v = gather_groups(part, axis, g, gm, tau)
        vals[a:b], idx[a:b] = first_k_per_line(lines, other, v, b - a, k)
    return vals, idx


# --- one block, both directions, by any method ---------------------------------------------------


_jit_module = None


def jit_or_none():
    global _jit_module
    if _jit_module is None:
        try:
            from . import jit
        except ImportError:  # numba missing or unusable: the numpy filter gives the same arrays, slower
            return None
        _jit_module = jit
    return _jit_module


# When "auto" takes the compiled kernel. Measured on the 2-core EPYC (benchmarks/bench_roofline.py):
# it saves ~3.7 ns per similarity value over the numpy filter with both directions (1012 x 45000:
# 0.058 vs 0.226 s) but only ~0.5 ns forward-only (0.019 vs 0.040 s), and its first use in a
# process costs ~0.65 s (numba import + kernels from numba's disk cache; ~2 s the first time on a
# machine). So: cold, only where the saving clearly exceeds the load; once loaded, from moderate
# sizes. Large k makes the kernel's insertion sort slow.
JIT_MIN_VALUES_COLD = {True: 2**28, False: 2**31}  # by "backward direction needed"
JIT_MIN_VALUES_WARM = {True: 2**20, False: 2**22}
JIT_MAX_K = 64


def resolve_select(select: str, n_values: int, k_max: int, backward: bool = True) -> str:
    """``auto`` -> ``jit`` where it pays off (see above), else ``filter``; explicit choices checked."""
    if select not in SELECTS:
        raise BadInputError(f"select must be one of {', '.join(SELECTS)}, got '{select}'")
    if select == "jit":
        if jit_or_none() is None:
            raise BadInputError("select='jit' needs numba: pip install numba")
        return "jit"
    if select != "auto":
        return select
    if k_max > JIT_MAX_K:
        return "filter"
    warm = _jit_module is not None and _jit_module.ready()
    need = (JIT_MIN_VALUES_WARM if warm else JIT_MIN_VALUES_COLD)[backward]
    return "jit" if n_values >= need and jit_or_none() is not None else "filter"


class ColumnTopK:
    """Running top-k of every column over row blocks fed in ascending row order.

    ``sim``/``idx`` (n_cols, k) are sorted (value desc, index asc), -inf / -1 where empty; they may
    be views into larger arrays (the miner's per-tile slices) and are updated in place.
    """

    def __init__(self, n_cols: int, k: int, sim: np.ndarray | None = None, idx: np.ndarray | None = None):
        self.sim = np.empty((n_cols, k), np.float32) if sim is None else sim
        self.idx = np.empty((n_cols, k), np.int64) if idx is None else idx
        self.sim.fill(-np.inf)
        self.idx.fill(-1)
        self._empty = True

    @property
    def k(self) -> int:
        return self.sim.shape[1]

    def merge(self, vals: np.ndarray, idx: np.ndarray) -> None:
        """Merge a block's sorted partial top-k (later rows than any merged before)."""
        if self._empty and vals.shape[1] == self.k:  # nothing to merge with: skip the temporaries
            self.sim[...], self.idx[...] = vals, idx
        else:
            self.sim[...], self.idx[...] = merge_topk(self.sim, self.idx, vals, idx, self.k)
        self._empty = False


def select_block(
    block: np.ndarray,
    k_fwd: int,
    columns: ColumnTopK | None = None,
    row_offset: int = 0,
    select: str = "filter",
    backend: str = "numpy",
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of every row of ``block`` over its columns ((n_rows, k_fwd) values, column indices;
    k_fwd may be 0), and ``columns`` updated with the block's rows (numbered from ``row_offset``).
    ``select`` is a resolved method: ``jit``, ``filter`` or ``sort`` (with ``backend``); all three
    give identical arrays."""
    if select == "jit":
        jit = jit_or_none()
        assert jit is not None
        if columns is None:
            return jit.block_topk(block, k_fwd, None, None, row_offset)
        return jit.block_topk(block, k_fwd, columns.sim, columns.idx, row_offset)

    def line_topk(k: int, axis: int) -> tuple[np.ndarray, np.ndarray]:
        if select == "filter":
            return filtered_topk(block, k, axis=axis)
        return sorted_topk(block, k, 0, axis=axis, backend=backend)

    if k_fwd:
        fwd = line_topk(k_fwd, 1)
    else:
        fwd = (np.empty((block.shape[0], 0), np.float32), np.empty((block.shape[0], 0), np.int64))
    if columns is not None:
        vals, idx = line_topk(min(columns.k, block.shape[0]), 0)
        idx += row_offset  # in place: a shifted copy would raise the peak by a third of a merge
        columns.merge(vals, idx)
    return fwd
