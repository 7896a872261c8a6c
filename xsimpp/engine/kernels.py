"""Compiled selection (numba): candidates from a GEMM block, exact top-k after rescoring.

One read of each GEMM value. A row keeps the k largest GEMM values seen so far (their k-th, minus
the band, is the row's candidate threshold); every column keeps the same across the block's rows.
A vectorised test over W values at a time skips those below both thresholds — after the first
rows, almost all of them — and a bit mask visits only the hits. Rows buffer their candidates;
columns append theirs to one list. When the block is done, the candidates still above their
line's final threshold are rescored with the exact similarity (``exact.lane_dot``, same lanes,
same order) and enter exact top-k lists in the total order (exact value desc, index asc).

Since what enters is decided by exact values and a total order, the result does not depend on the
order of visits: threads may split columns any way (each thread's row partials are merged by the
same order), blocks and shards may be cut anywhere, and the GEMM that produced the block may be
any. Column state persists across blocks of rows, and row state across blocks of columns (the
GEMM tiles of ``knn``), as *exact* top-k lists; a list's k-th value, minus the error bound, is a
floor below which a later entry cannot enter.

Importing this module imports numba (~0.3 s); the first call loads the kernels from numba's disk
cache (~0.5 s) or compiles them (a few seconds, once per machine).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# Values tested per step: a branch-free count over 64 values vectorises (~10x faster per value
# than 16-value steps with a bit mask, measured); a chunk with a hit is then walked value by value.
W = 64
# The rows per neighbour a block needs before seeding pays, and the row groups per neighbour (the
# columns seeded per pass are ``EngineConfig.seed_tile``).
SEED_MIN_ROWS = 16
SEED_GROUPS_PER_K = 8
# A thread's share of a block: fewer values, or (column split) fewer columns than this cost more
# in start-up and merging than they save.
MIN_VALUES_PER_THREAD = 2**20
MIN_COLS_PER_THREAD = 256
# Candidates a row buffers before compacting; a row that still overflows is rescanned instead.
ROW_BUFFER = 256
# The same for a column, per neighbour (+ 8): ~26 values per column pass the running threshold on
# a 1012 x 45000 block with k = 4, of which ~4 survive each compaction.
COLUMN_BUFFER_PER_K = 4

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _thread_pool() -> ThreadPoolExecutor:
    """One pool for the process, created once and never replaced: concurrent callers share it."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(default_threads(), thread_name_prefix="xsimpp-engine")
        return _pool


@numba.njit(inline="always")
def _lower32(t):
    # A float32 <= t (within 2^-22 relative of it): thresholds are compared in float32 and must
    # never round up. Scaling away from zero by 2^-22 outweighs float32 rounding (2^-24 relative),
    # and 2^-140 outweighs it for subnormals; cheaper than nextafter in the hot path.
    if t > 0:
        return np.float32(t * (1 - 2.0**-22) - 2.0**-140)
    return np.float32(t * (1 + 2.0**-22) - 2.0**-140)


def _lane_sums_codegen(context, builder, signature, args):
    # For each pair (a, b): for c in range(n): acc += float64(a[8c:8c+8]) * float64(b[8c:8c+8]), acc
    # an explicit vector of 8 float64 lanes: one vector multiply and add per 8 products instead of 8
    # scalar ones. Lane l still adds its products t = l, l+8, ... in turn from +0.0 (IEEE, no
    # reassociation), so the sums are the contract's bit for bit, on any ISA (LLVM splits the
    # vector to what the CPU has). Two pairs in one loop are two independent add chains.
    f32x8, f64x8 = ir.VectorType(ir.FloatType(), 8), ir.VectorType(ir.DoubleType(), 8)
    rows = [builder.bitcast(context.make_array(t)(context, builder, v).data, f32x8.as_pointer())
            for t, v in zip(signature.args[:-1], args[:-1])]
    accs = [cgutils.alloca_once_value(builder, ir.Constant(f64x8, None)) for _ in rows[::2]]
    with cgutils.for_range(builder, args[-1]) as loop:
        for acc, a, b in zip(accs, rows[::2], rows[1::2]):
            va = builder.fpext(builder.load(builder.gep(a, [loop.index]), align=4), f64x8)
            vb = builder.fpext(builder.load(builder.gep(b, [loop.index]), align=4), f64x8)
            builder.store(builder.fadd(builder.load(acc), builder.fmul(va, vb)), acc)
    lanes = [builder.load(acc) for acc in accs]
    return context.make_tuple(builder, signature.return_type, [builder.extract_element(v, ir.Constant(ir.IntType(32), i))
                                                               for v in lanes for i in range(8)])


def _float32_rows(*rows) -> bool:
    return all(isinstance(v, types.Array) and v.ndim == 1 and v.layout == "C" and v.dtype == types.float32 for v in rows)


@intrinsic
def _lane_sums(typingctx, a, b, n_chunks):
    """The 8 lane sums over the first ``n_chunks`` * 8 values of two C-contiguous float32 vectors."""
    if _float32_rows(a, b):
        return types.UniTuple(types.float64, 8)(a, b, n_chunks), _lane_sums_codegen


@intrinsic
def _lane_sums2(typingctx, a0, b0, a1, b1, n_chunks):
    """``_lane_sums`` of two pairs (16 sums), computed side by side."""
    if _float32_rows(a0, b0, a1, b1):
        return types.UniTuple(types.float64, 16)(a0, b0, a1, b1, n_chunks), _lane_sums_codegen


def _hit_mask_codegen(context, builder, signature, args):
    # One vector compare of W values against both thresholds, its W lane bits as one integer.
    row_t, ct_t = signature.args[:2]
    f32xw = ir.VectorType(ir.FloatType(), W)
    row, ct = (builder.gep(context.make_array(t)(context, builder, v).data, [args[2]]) for t, v in zip((row_t, ct_t), args))
    v = builder.load(builder.bitcast(row, f32xw.as_pointer()), align=4)
    c = builder.load(builder.bitcast(ct, f32xw.as_pointer()), align=4)
    rt = builder.insert_element(ir.Constant(f32xw, None), args[3], ir.Constant(ir.IntType(32), 0))
    rt = builder.shuffle_vector(rt, rt, ir.Constant(ir.VectorType(ir.IntType(32), W), None))
    hit = builder.or_(builder.fcmp_ordered(">=", v, rt), builder.fcmp_ordered(">=", v, c))
    return builder.bitcast(hit, ir.IntType(W))


@intrinsic
def _hit_mask(typingctx, row, ct, j, rt):
    """Bit t set where row[j + t] >= rt or row[j + t] >= ct[j + t], t < W (both C-contiguous float32)."""
    if _float32_rows(row, ct):
        return types.uint64(row, ct, types.intp, types.float32), _hit_mask_codegen


@intrinsic
def _lowest_bit(typingctx, m):
    """Index of the lowest set bit of a non-zero uint64."""
    def codegen(context, builder, signature, args):
        return builder.zext(builder.cttz(args[0], ir.Constant(ir.IntType(1), 1)), ir.IntType(64))
    return types.intp(types.uint64), codegen


@numba.njit(inline="always")
def _lane_total(s0, s1, s2, s3, s4, s5, s6, s7, a, b, full):
    # The contract's exact similarity (exact.lane_sum) from the lane sums of the first full * 8
    # values: the tail's products go to lanes 0.., then the fixed pairwise order.
    j = full * 8
    rem = a.shape[0] - j
    if rem > 0:
        s0 += np.float64(a[j]) * np.float64(b[j])
    if rem > 1:
        s1 += np.float64(a[j + 1]) * np.float64(b[j + 1])
    if rem > 2:
        s2 += np.float64(a[j + 2]) * np.float64(b[j + 2])
    if rem > 3:
        s3 += np.float64(a[j + 3]) * np.float64(b[j + 3])
    if rem > 4:
        s4 += np.float64(a[j + 4]) * np.float64(b[j + 4])
    if rem > 5:
        s5 += np.float64(a[j + 5]) * np.float64(b[j + 5])
    if rem > 6:
        s6 += np.float64(a[j + 6]) * np.float64(b[j + 6])
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@numba.njit(inline="always")
def _lane_dot(a, b):
    # The contract's exact similarity: 8 float64 lanes from +0.0, fixed order.
    full = a.shape[0] // 8
    s0, s1, s2, s3, s4, s5, s6, s7 = _lane_sums(a, b, full)
    return _lane_total(s0, s1, s2, s3, s4, s5, s6, s7, a, b, full)


@numba.njit(inline="always")
def _lane_dot2(a0, b0, a1, b1):
    # _lane_dot of two pairs of one dimension, as two independent add chains.
    full = a0.shape[0] // 8
    s = _lane_sums2(a0, b0, a1, b1, full)
    return (_lane_total(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], a0, b0, full),
            _lane_total(s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], a1, b1, full))


@numba.njit(inline="always")
def _exact(block, xb, y, vec, r, c):
    # Exact similarity of block entry (r, c): from the vectors, or the given matrix's own value.
    if not vec:
        return np.float64(block[r, c])
    return _lane_dot(xb[r], y[c])


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _normalize(a, r0, r1, out, sq):  # pragma: no cover - compiled
    """Rows [r0, r1): squared norms (lane order) into sq, unit rows (float64 division, one
    float32 rounding) into out. Non-finite or zero sq marks a bad row (the caller reports it)."""
    for r in range(r0, r1):
        row = a[r]
        s = _lane_dot(row, row)
        sq[r] = s
        if s > 0 and s < np.inf:
            n = np.sqrt(s)
            o = out[r]
            for t in range(row.shape[0]):
                o[t] = np.float32(np.float64(row[t]) / n)


@numba.njit(inline="always")
def _push_value(h, v):
    # h holds GEMM values descending and v > h[-1]: insert v, dropping the last.
    p = h.shape[0] - 1
    while p > 0 and h[p - 1] < v:
        h[p] = h[p - 1]
        p -= 1
    h[p] = v


@numba.njit(inline="always")
def _push_exact(hv, hi, v, i):
    # hv/hi sorted by (value desc, index asc), empty slots (-inf, -1) last. Insert (v, i) if it
    # beats the last entry; the order is total, so the outcome does not depend on arrival order.
    p = hv.shape[0] - 1
    if not (v > hv[p] or (v == hv[p] and i < hi[p])):
        return
    while p > 0 and (hv[p - 1] < v or (hv[p - 1] == v and hi[p - 1] > i)):
        hv[p] = hv[p - 1]
        hi[p] = hi[p - 1]
        p -= 1
    hv[p] = v
    hi[p] = i


@numba.njit(inline="always")
def _clear(hv, hi):
    for p in range(hv.shape[0]):
        hv[p] = -np.inf
        hi[p] = -1


@numba.njit(inline="always")
def _finish_row(block, xb, y, vec, r, c0, col_offset, row, rt, over, nb, bv, bc, ev, ei):
    # The row's candidates (the buffer, or after an overflow a rescan) into its exact top-k list
    # ev/ei, which may hold earlier columns' entries; column c of the block is col_offset + c.
    if over:
        for t in range(row.shape[0]):
            if row[t] >= rt:
                _push_exact(ev, ei, _exact(block, xb, y, vec, r, c0 + t), col_offset + c0 + t)
    else:
        for b in range(nb):
            if bv[b] >= rt:
                c = c0 + bc[b]
                _push_exact(ev, ei, _exact(block, xb, y, vec, r, c), col_offset + c)


@numba.njit(inline="always")
def _buffer(bv, bc, nb, v, t, rt):
    # Append a row candidate; when full, drop those under the risen threshold; -1: overflowed.
    if nb == bv.shape[0]:
        m = 0
        for b in range(nb):
            if bv[b] >= rt:
                bv[m] = bv[b]
                bc[m] = bc[b]
                m += 1
        if m > nb // 2:
            return -1
        nb = m
    bv[nb] = v
    bc[nb] = t
    return nb + 1


@numba.njit(nogil=True, boundscheck=False)
def _row_candidate(v, t, rt, hk, heap, bv, bc, nb, over, beta):
    # A row value at or above the row's threshold: buffer it (unless overflowed), and if it is
    # among the k largest GEMM values so far, raise the threshold to (new k-th) - band.
    if not over:
        nb = _buffer(bv, bc, nb, v, t, rt)
        over = nb < 0
    if v > hk:
        _push_value(heap, v)
        hk = heap[heap.shape[0] - 1]
        if hk > -np.inf:
            rt = max(rt, _lower32(np.float64(hk) - beta))
    return rt, hk, nb, over


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _rows(block, xb, y, vec, r0, r1, beta, rfloor, ov, oi):  # pragma: no cover - compiled
    """Exact top-k of rows [r0, r1) of ``block`` over all its columns into ov/oi."""
    kf = ov.shape[1]
    n = block.shape[1]
    nfull = n // W
    heap = np.empty(kf, np.float32)
    bv = np.empty(ROW_BUFFER, np.float32)
    bc = np.empty(ROW_BUFFER, np.int64)
    for r in range(r0, r1):
        row = block[r]
        for p in range(kf):
            heap[p] = -np.inf
        hk = np.float32(-np.inf)
        rt = rfloor[r]
        nb = 0
        over = False
        for q in range(nfull + 1):
            j = q * W
            e = min(j + W, n)
            if e - j == W:  # a count over W values vectorises; most chunks have none
                c = 0
                for t in range(W):
                    c += row[j + t] >= rt
                if c == 0:
                    continue
            for t in range(j, e):
                v = row[t]
                if v >= rt:
                    rt, hk, nb, over = _row_candidate(v, t, rt, hk, heap, bv, bc, nb, over, beta)
        _clear(ov[r], oi[r])
        _finish_row(block, xb, y, vec, r, 0, 0, row, rt, over, nb, bv, bc, ov[r], oi[r])


@numba.njit(inline="always")
def _seed_columns(block, c0, c1, beta, ct, kb, seed_tile):
    # Lifts the column thresholds near their final value before the candidate pass: with no floor
    # yet (a first block) they would otherwise start at -inf and admit ~k ln(rows) candidates a
    # column. The rows fall into SEED_GROUPS_PER_K * k groups; each column's largest value in each
    # group (one vector max per value, over seed_tile columns that stay in L1), and the k-th largest
    # of those maxima, is reached by k distinct rows, so the column's k-th GEMM value is at least it.
    n_rows = block.shape[0]
    groups = min(n_rows, SEED_GROUPS_PER_K * kb)
    size = -(-n_rows // groups)
    gmax = np.empty((groups, seed_tile), np.float32)
    heaps = np.empty((kb, seed_tile), np.float32)
    v = np.empty(seed_tile, np.float32)
    for a in range(0, c1 - c0, seed_tile):
        n = min(seed_tile, c1 - c0 - a)
        for g in range(groups):
            m = gmax[g]
            for t in range(n):
                m[t] = -np.inf
            for r in range(g * size, min(n_rows, (g + 1) * size)):
                row = block[r, c0 + a : c0 + a + n]
                for t in range(n):
                    m[t] = max(m[t], row[t])
        for q in range(kb):
            for t in range(n):
                heaps[q, t] = -np.inf
        for g in range(groups):  # the k largest group maxima, by a branch-free insertion into k lanes
            m = gmax[g]
            for t in range(n):
                v[t] = m[t]
            for q in range(kb):
                h = heaps[q]
                for t in range(n):
                    x = v[t]
                    y = h[t]
                    h[t] = x if x > y else y
                    v[t] = y if x > y else x
        for t in range(n):
            kth = heaps[kb - 1, t]
            if kth > -np.inf:
                ct[a + t] = max(ct[a + t], _lower32(np.float64(kth) - beta))


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _both(block, xb, y, vec, c0, c1, row_offset, col_offset, beta, bound, ov, oi, cv, ci, cheap, ct, cb,
          cn, seed_tile):  # pragma: no cover - compiled
    """Columns [c0, c1) of ``block`` (at most 2^24 rows): each row's exact top-k list ov/oi (k may be 0;
    column indices + col_offset) and every column's (cv/ci, row indices + row_offset) updated with
    the block's entries. Rows and columns alike start from their lists' floors: a list's exact k-th
    minus the bound is a GEMM value below which no later entry can enter."""
    kf = ov.shape[1]
    kb = cv.shape[1]
    nc = c1 - c0
    nfull = nc // W
    # Columns: a GEMM-value heap for this block's rows, and the threshold, floored by the exact
    # k-th of earlier blocks (a later row must beat it: GEMM value > exact k-th - bound).
    # (cheap, ct, cb, cn: this thread's columns of the caller's scratch, reused block after block, so
    # its pages are faulted in once per pass, not once per block.)
    for t in range(nc):
        for p in range(kb):
            cheap[t, p] = -np.inf
        cn[t] = 0
    unfloored = 0
    for t in range(nc):
        kth = cv[c0 + t, kb - 1]
        ct[t] = _lower32(kth - bound) if kth > -np.inf else np.float32(-np.inf)
        unfloored += kth == -np.inf
    if unfloored * 2 > nc and block.shape[0] > SEED_MIN_ROWS * kb:
        _seed_columns(block, c0, c1, beta, ct, kb, seed_tile)
    # Column candidates: a small buffer per column (row, value), compacted against the risen
    # threshold when full; a column that still overflows is rescanned at the end.
    cap = cb.shape[1] // 2  # cb: (value, row) pairs, cn: how many (-1: overflowed)
    heap = np.empty(max(kf, 1), np.float32)
    bv = np.empty(ROW_BUFFER, np.float32)
    bc = np.empty(ROW_BUFFER, np.int64)
    for r in range(block.shape[0]):
        row = block[r, c0:c1]
        for p in range(kf):
            heap[p] = -np.inf
        hk = np.float32(-np.inf)
        rt = np.float32(np.inf)
        if kf > 0:
            kth = ov[r, kf - 1]
            rt = _lower32(kth - bound) if kth > -np.inf else np.float32(-np.inf)
        nb = 0
        over = False
        for q in range(nfull + 1):
            j = q * W
            if j + W <= nc:  # most chunks have no hit (a vectorised count says so fastest); a hit chunk's
                c = 0        # bit mask (one vector compare) visits only its hits
                for t in range(W):
                    c += row[j + t] >= min(rt, ct[j + t])  # = (v >= rt) | (v >= ct): vectorises better
                if c == 0:
                    continue
                hits = _hit_mask(row, ct, j, np.float32(rt))
            else:  # the last, partial chunk, bit by bit
                hits = np.uint64(0)
                for t in range(j, nc):
                    if row[t] >= rt or row[t] >= ct[t]:
                        hits |= np.uint64(1) << np.uint64(t - j)
            while hits != 0:  # (rt may rise while the hits are visited: each is tested again)
                t = j + _lowest_bit(hits)
                hits &= hits - np.uint64(1)
                v = row[t]
                if v >= rt:
                    rt, hk, nb, over = _row_candidate(v, t, rt, hk, heap, bv, bc, nb, over, beta)
                if v >= ct[t]:  # inline: as a function call this step measured ~30 % slower
                    n = cn[t]
                    if n == cap:
                        m = 0
                        for h in range(n):
                            if cb[t, 2 * h] >= ct[t]:
                                cb[t, 2 * m] = cb[t, 2 * h]
                                cb[t, 2 * m + 1] = cb[t, 2 * h + 1]
                                m += 1
                        n = m if m <= cap // 2 else -1
                    if n >= 0:
                        cb[t, 2 * n] = v
                        cb[t, 2 * n + 1] = r
                        n += 1
                    cn[t] = n
                    if v > cheap[t, kb - 1]:
                        _push_value(cheap[t], v)
                        kth = cheap[t, kb - 1]
                        if kth > -np.inf:
                            ct[t] = max(ct[t], _lower32(np.float64(kth) - beta))
        if kf > 0:
            _finish_row(block, xb, y, vec, r, c0, col_offset, row, rt, over, nb, bv, bc, ov[r], oi[r])
    # Column by column, so each target vector is read once for all its candidates.
    live = np.empty(cap, np.int64)
    for t in range(nc):
        c = c0 + t
        if cn[t] >= 0:
            m = 0
            for h in range(cn[t]):
                if cb[t, 2 * h] >= ct[t]:
                    live[m] = np.int64(cb[t, 2 * h + 1])
                    m += 1
            h = 0
            if vec:  # two candidates at a time: two independent add chains
                while h + 2 <= m:
                    r0, r1 = live[h], live[h + 1]
                    e0, e1 = _lane_dot2(xb[r0], y[c], xb[r1], y[c])
                    _push_exact(cv[c], ci[c], e0, r0 + row_offset)
                    _push_exact(cv[c], ci[c], e1, r1 + row_offset)
                    h += 2
            for u in range(h, m):
                r = live[u]
                _push_exact(cv[c], ci[c], _exact(block, xb, y, vec, r, c), r + row_offset)
        else:
            for r in range(block.shape[0]):
                if block[r, c] >= ct[t]:
                    _push_exact(cv[c], ci[c], _exact(block, xb, y, vec, r, c), r + row_offset)


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _gather(block, cols, r0, r1, out):  # pragma: no cover - compiled
    for r in range(r0, r1):
        row = block[r]
        o = out[r]
        for i in range(cols.shape[0]):
            o[i] = row[cols[i]]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _matrix(x, y, r0, r1, out):  # pragma: no cover - compiled
    for r in range(r0, r1):
        for c in range(y.shape[0]):
            out[r, c] = _lane_dot(x[r], y[c])


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _pair_sims(x, y, rows, cols, lo, hi, out):  # pragma: no cover - compiled
    for n in range(lo, hi):
        out[n] = _lane_dot(x[rows[n]], y[cols[n]])


def run_in_pool(kernel, arg_lists: list[tuple]) -> None:
    """kernel(*args) for each args: on the engine's threads, or on the caller's when there is one."""
    if len(arg_lists) == 1:
        kernel(*arg_lists[0])
        return
    pool = _thread_pool()
    for done in [pool.submit(kernel, *a) for a in arg_lists]:
        done.result()


_EMPTY = np.empty((0, 0), np.float32)


def normalize_rows(a: np.ndarray, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(unit rows, squared norms) of a C-contiguous float32 array, as ``exact.reference_normalize``."""
    out = np.zeros(a.shape, np.float32)
    sq = np.empty(a.shape[0], np.float64)
    nt = max(1, min(threads or default_threads(), a.size // (1 << 18)))
    bounds = np.linspace(0, a.shape[0], nt + 1).astype(np.int64)
    run_in_pool(_normalize, [(a, int(bounds[t]), int(bounds[t + 1]), out, sq) for t in range(nt)])
    return out, sq


def rows_topk(block: np.ndarray, k: int, x: np.ndarray | None, y: np.ndarray | None, beta: float,
              row_floor: np.ndarray | None = None, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of every row of a GEMM ``block`` (rows x[i], columns y[j]); without vectors the
    block's own values are exact (beta = 0). ``row_floor``: GEMM values below it cannot matter."""
    n_rows = block.shape[0]
    vec = x is not None
    xb, yy = (x, y) if vec else (_EMPTY, _EMPTY)
    floor = np.full(n_rows, -np.inf, np.float32) if row_floor is None else row_floor
    ov = np.empty((n_rows, k), np.float64)
    oi = np.empty((n_rows, k), np.int64)
    nt = max(1, min(threads, n_rows * block.shape[1] // MIN_VALUES_PER_THREAD))
    bounds = np.linspace(0, n_rows, nt + 1).astype(np.int64)
    run_in_pool(_rows, [(block, xb, yy, vec, int(bounds[t]), int(bounds[t + 1]), float(beta), floor, ov, oi)
                 for t in range(nt)])
    return ov, oi


def both_topk(block: np.ndarray, k_fwd: int, x: np.ndarray | None, y: np.ndarray | None, beta: float, bound: float,
              col_sim: np.ndarray, col_idx: np.ndarray, row_offset: int = 0, threads: int = 1,
              scratch: tuple | None = None, *, seed_tile: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of every row of ``block`` (k_fwd may be 0), and the columns' exact top-k lists
    ``col_sim``/``col_idx`` (n_cols, k_bwd; float64 / int64, (-inf, -1) where empty) updated in
    place with the block's rows, numbered from ``row_offset``. ``scratch``: a ``column_scratch``
    of at least n_cols columns to reuse across calls (its content does not carry over); ``seed_tile``:
    ``EngineConfig.seed_tile``."""
    rows = row_lists(block.shape[0], k_fwd, _column_split(block, threads))
    both_update(block, x, y, beta, bound, rows, col_sim, col_idx, row_offset, 0, threads, scratch, seed_tile=seed_tile)
    return merge_row_lists(rows)


def _column_split(block: np.ndarray, threads: int) -> int:
    # Threads a block's columns are split between: each gets enough values and columns to pay.
    return max(1, min(threads, block.shape[1] // MIN_COLS_PER_THREAD, block.size // MIN_VALUES_PER_THREAD))


def row_lists(n_rows: int, k: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty exact top-k lists of n_rows rows, one set per thread of ``both_update``
    ((threads, n_rows, k) values -inf, indices -1)."""
    return np.full((threads, n_rows, k), -np.inf), np.full((threads, n_rows, k), -1, np.int64)


def merge_row_lists(rows: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's exact top-k over the threads' lists (``row_lists``)."""
    ov, oi = rows
    if ov.shape[0] == 1 or ov.shape[2] == 0:
        return ov[0], oi[0]
    n_rows = ov.shape[1]
    return merge_topk(ov.transpose(1, 0, 2).reshape(n_rows, -1), oi.transpose(1, 0, 2).reshape(n_rows, -1), ov.shape[2])


def both_update(block: np.ndarray, x: np.ndarray | None, y: np.ndarray | None, beta: float, bound: float,
                rows: tuple[np.ndarray, np.ndarray], col_sim: np.ndarray, col_idx: np.ndarray, row_offset: int = 0,
                col_offset: int = 0, threads: int = 1, scratch: tuple | None = None, *, seed_tile: int) -> None:
    """Both directions' exact top-k lists updated in place with a GEMM ``block`` (rows x[i], columns
    y[j]): the rows' (``row_lists``; column indices + col_offset; threads split the columns, each
    keeping its own list, so a row's lists carry over from one block of columns to the next) and
    the columns' (``col_sim``/``col_idx``; row indices + row_offset). ``scratch``: as in
    ``both_topk``. Without vectors the block's own values are exact (beta = bound = 0). ``seed_tile``:
    ``EngineConfig.seed_tile`` (any value gives the same lists)."""
    n_rows, n_cols = block.shape
    vec = x is not None
    xb, yy = (x, y) if vec else (_EMPTY, _EMPTY)
    ov, oi = rows
    nt = min(ov.shape[0], _column_split(block, threads))
    bounds = np.linspace(0, n_cols, nt + 1).astype(np.int64)
    cheap, ct, cb, cn = scratch or column_scratch(n_cols, col_sim.shape[1])
    run_in_pool(_both, [(block, xb, yy, vec, c0, c1, int(row_offset), int(col_offset), float(beta), float(bound), ov[t], oi[t],
                  col_sim, col_idx, cheap[c0:c1], ct[c0:c1], cb[c0:c1], cn[c0:c1], int(seed_tile))
                 for t, (c0, c1) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist()))])


def column_scratch(n_cols: int, k_bwd: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Working memory of ``both_topk`` for n_cols columns: their block heaps, thresholds and
    candidate buffers ((value, row) pairs) with their counts."""
    cap = COLUMN_BUFFER_PER_K * k_bwd + 8
    return (np.empty((n_cols, k_bwd), np.float32), np.empty(n_cols, np.float32),
            np.empty((n_cols, 2 * cap), np.float32), np.empty(n_cols, np.int32))


def gather_columns(block: np.ndarray, cols: np.ndarray, threads: int = 1) -> np.ndarray:
    """``block[:, cols]`` as a C-contiguous array, rows split between threads."""
    out = np.empty((block.shape[0], len(cols)), block.dtype)
    nt = max(1, min(threads, out.size // MIN_VALUES_PER_THREAD))
    bounds = np.linspace(0, block.shape[0], nt + 1).astype(np.int64)
    run_in_pool(_gather, [(block, cols, int(bounds[t]), int(bounds[t + 1]), out) for t in range(nt)])
    return out


def pair_similarities(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                      threads: int | None = None) -> np.ndarray:
    """Exact similarity of the pairs (x[rows[n]], y[cols[n]]) (``exact.pair_similarity``, compiled)."""
    rows, cols = np.ascontiguousarray(rows, np.int64), np.ascontiguousarray(cols, np.int64)
    out = np.empty(len(rows))
    nt = max(1, min(threads or default_threads(), len(rows) // 4096))
    bounds = np.linspace(0, len(rows), nt + 1).astype(np.int64)
    run_in_pool(_pair_sims, [(x, y, rows, cols, int(bounds[t]), int(bounds[t + 1]), out) for t in range(nt)])
    return out


def similarity_matrix(x: np.ndarray, y: np.ndarray, threads: int | None = None) -> np.ndarray:
    """Every exact similarity (``exact.exact_similarity``, compiled): for references over real data."""
    out = np.empty((len(x), len(y)))
    nt = max(1, min(threads or default_threads(), len(x)))
    bounds = np.linspace(0, len(x), nt + 1).astype(np.int64)
    run_in_pool(_matrix, [(x, y, int(bounds[t]), int(bounds[t + 1]), out) for t in range(nt)])
    return out


def merge_topk(vals: np.ndarray, idx: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first k of each row of (value, index) lists in the total order (value desc, index asc)."""
    order = np.lexsort((idx, -vals), axis=1)[:, :k]
    return np.take_along_axis(vals, order, axis=1), np.take_along_axis(idx, order, axis=1)
