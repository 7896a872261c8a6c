"""Low-precision (bf16) candidates, rescored exactly in float32: the same results, faster.

A bf16 GEMM runs at 2-4x the float32 rate (AMX / AVX512-BF16 on CPU, tensor cores on GPU), but
its values are approximate. Here they only rule out pairs that provably cannot be among the exact
top-k; every pair that might be is rescored with ``selection.gemm_nt``, whose float32 values equal
the plain path's bit for bit (tiling independence). Results are identical to the float32 engine's
whatever the device, so the GPU (``device="cuda"``) only generates candidates.

The bound. x~ = bf16(x), dx = x - x~ (exact in float32), likewise y. The bf16 product is taken on
shifted operands [x~, -c] . [y~, 1] = x~.y~ - c (c: a bf16 shift near the typical k-th similarity,
so the values that matter are small and the output rounding on them is small), accumulated in
float32 in any order and rounded to bf16: S = (x~.y~ - c)(1 + e) + a with |e| <= w = 2^-7 (any
faithful rounding) and |a| <= g'(||x~|| ||y~|| + |c|). The plain value s = fl32(x.y) differs from
x.y by at most g ||x|| ||y||, and |x.y - x~.y~| <= ||dx|| ||y|| + ||x~|| ||dy||. Hence
|(s - c) - S| <= E_ij + w'|S| with w' = w/(1-w) and E_ij the sum of those terms (g = g_d, g' =
g_{d+e}: gamma_n = n u/(1 - n u), u = 2^-23 for any faithful float32 rounding). For a line (row
or column) take E = max over the other side. If t is a lower bound on the line's k-th largest S
(the k-th largest of its group maxima), k entries have S >= t, so the exact k-th largest s - c is
>= L = f(t) - E with f(v) = v - w'|v| (increasing). An entry can be in the exact top-k (ties
included) only if S + w'|S| + E >= L, i.e. S >= g^-1(L - E): a threshold per line. Everything at
or above it is rescored exactly; at least the k entries that defined t are, so the exact top-k is
found among them. Thresholds are computed in float64 with E inflated by 1e-6 and rounded down to
float32 before comparing.

If a line's band is wide (massive near-ties, say), rescoring would cost more than it saves: above
``MAX_CANDIDATE_FRACTION`` of a block the call reports a fallback and the caller runs float32.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ..errors import BadInputError, MissingResourceError
from .selection import (BWD_GROUP, CHUNK_DIVISOR, FWD_GROUP, first_k_per_line, gather_groups, gemm_nt, group_count,
                        group_max, kth_largest, torch_or_none)

_U32 = 2.0**-23  # float32 unit roundoff for any faithful rounding (round-to-nearest would be 2^-24)
_W_BF16 = 2.0**-7  # bf16 output rounding, any faithful rounding (round-to-nearest would be 2^-8)
_W = _W_BF16 / (1 - _W_BF16)
_SAFETY = 1e-6  # relative inflation of E against float64 rounding in the norms and thresholds
_TINY = 1e-15  # flushed or underflowed squares and products (d * 2^-126 terms) are far below this

# Above this fraction of a block's entries in the band, the float32 path is cheaper.
MAX_CANDIDATE_FRACTION = 0.05
# Lines per exact rescoring GEMM: their candidates' union is the other side of the product.
RESCORE_TILE = 128
# Rows sampled to pick the shift c.
_SHIFT_SAMPLE = 32
# A side gets exact rounding-error norms when the other side has at least this many lines.
_EXACT_NORMS_FROM = 2048
# Bytes per block entry on this path: bf16 result (2) + a float32 copy for the backward band (4)
# + gathers (~2).
BLOCK_BYTES_PER_VALUE = 8

PRECISIONS = ("auto", "fp32", "bf16")
# "auto" takes bf16 from this many flops up when torch is loaded already, and from the second
# figure when it would have to be imported for this.
AUTO_MIN_FLOP = 1e10
AUTO_IMPORT_FLOP = 1e12


@dataclass
class LowpStats:
    """What the bf16 path did: honest accounting for benchmarks and logs."""

    device: str
    shift: float = 0.0
    fwd_candidates: int = 0
    bwd_candidates: int = 0
    fallback: str | None = None  # why the float32 path ran instead (results are the same)


@dataclass
class LowpResult:
    stats: LowpStats
    fwd_sim: np.ndarray | None = None
    fwd_idx: np.ndarray | None = None
    bwd_sim: np.ndarray | None = None
    bwd_idx: np.ndarray | None = None


class _Fallback(Exception):
    pass


def _torch():
    torch = torch_or_none()
    if torch is None:
        raise MissingResourceError("bf16 scoring needs torch, which is not installed: pip install torch")
    return torch


def fast_bf16(device: str = "cpu") -> bool:
    """Whether ``device`` multiplies bf16 natively (otherwise bf16 is emulated and slower than fp32)."""
    torch = torch_or_none()
    if torch is None:
        return False
    if device.startswith("cuda"):
        return bool(torch.cuda.is_available())
    if device != "cpu":
        return False
    try:  # private helpers, present in torch >= 2.3; absent means we cannot tell: say no
        return bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())
    except AttributeError:
        return False


def resolve_precision(precision: str, flop: float, device: str = "cpu") -> str:
    if precision not in PRECISIONS:
        raise BadInputError(f"precision must be one of {', '.join(PRECISIONS)}, got '{precision}'")
    if precision == "auto":
        # Importing torch (~1-2 s) is not repaid below ~1e12 multiply-adds unless it is loaded already.
        worth = flop >= AUTO_MIN_FLOP and ("torch" in sys.modules or flop >= AUTO_IMPORT_FLOP)
        return "bf16" if worth and fast_bf16(device) else "fp32"
    return precision


def _gamma(n: int) -> float:
    return n * _U32 / (1 - n * _U32)


def _sq_norm_upper(a: np.ndarray) -> np.ndarray:
    """Upper bounds (float64) on the row norms of float32 ``a``: float32 sums of squares are within
    gamma_d of the truth whatever the order, so inflating by (1 + 2 gamma_d) covers them."""
    sq = np.einsum("ij,ij->i", a, a).astype(np.float64)
    return np.sqrt(sq * (1 + 2 * _gamma(a.shape[1]))) * (1 + 2 * _U32)


def _to_bf16_padded(a_t, extra: int, last: float, exact_norms: bool, torch):
    """[bf16(a), last, 0...] (n, d + extra) and upper bounds on the row norms of bf16(a) and of
    the rounding error a - bf16(a). torch converts to bf16 rounding to nearest even, so
    |a - bf16(a)| <= 2^-8 |a| elementwise: with ``exact_norms=False`` the bounds come from that
    (no extra pass over a; used for the side whose cost the GEMM would not amortise)."""
    n, d = a_t.shape
    out = torch.empty((n, d + extra), dtype=torch.bfloat16)
    out[:, :d] = a_t
    out[:, d] = last
    out[:, d + 1 :] = 0
    if not exact_norms:
        na = _sq_norm_upper(a_t.numpy())
        return out, na * (1 + 2.0**-8), na * 2.0**-8
    n_lo = np.empty(n, np.float64)
    n_err = np.empty(n, np.float64)
    for s in range(0, n, 4096):  # chunks stay in cache: one pass over a, not three
        lo = out[s : s + 4096, :d].float()
        n_lo[s : s + 4096] = _sq_norm_upper(lo.numpy())
        n_err[s : s + 4096] = _sq_norm_upper((a_t[s : s + 4096] - lo).numpy())
    return out, n_lo, n_err


def _lower_bound(tau: np.ndarray, err: np.ndarray) -> np.ndarray:
    tau = tau.astype(np.float64)
    return tau - _W * np.abs(tau) - err


def _threshold_from_bound(low: np.ndarray, err: np.ndarray) -> np.ndarray:
    u = low - err
    thr = np.where(u >= 0, u / (1 + _W), u / (1 - _W))
    thr32 = thr.astype(np.float32)
    return np.where(thr32 > thr, np.nextafter(thr32, np.float32(-np.inf)), thr32)


def exact_pair_values(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray, by: str = "row",
                      tile: int = RESCORE_TILE) -> np.ndarray:
    """float32 ``x[rows[i]] . y[cols[i]]`` equal bit for bit to ``gemm_nt(x, y)[rows[i], cols[i]]``.

    Pairs are grouped by ``by`` (row or col) in tiles of ``tile`` lines; each tile is one GEMM of
    its lines against the union of their partners (x always the left operand, so every value is
    the same product element the full matrix holds).
    """
    key, other = (rows, cols) if by == "row" else (cols, rows)
    out = np.empty(len(key), np.float32)
    if len(key) == 0:
        return out
    order = np.argsort(key, kind="stable")
    ks, os_ = key[order], other[order]
    uk = np.unique(ks)
    for t in range(0, len(uk), tile):
        tk = uk[t : t + tile]
        p, q = np.searchsorted(ks, tk[0], "left"), np.searchsorted(ks, tk[-1], "right")
        uo, inv_o = np.unique(os_[p:q], return_inverse=True)
        pos_k = np.searchsorted(tk, ks[p:q])
        if by == "row":
            out[order[p:q]] = gemm_nt(x[tk], y[uo])[pos_k, inv_o]
        else:
            out[order[p:q]] = gemm_nt(x[uo], y[tk])[inv_o, pos_k]
    return out


def _group_max_rows(block, n_groups: int):
    """torch: maxima of the strided row groups (row index mod n_groups) of every column, (G, L).
    A reduction over the leading axis: fast on bf16, unlike one over the inner axis."""
    n, width = block.shape
    full = n // n_groups
    gm = block[: full * n_groups].view(full, n_groups, width).amax(0)
    tail = n - full * n_groups
    if tail:
        gm[:tail] = gm[:tail].maximum(block[full * n_groups :])
    return gm


def _band_columns(block, n_groups: int, gm: np.ndarray, thr: np.ndarray, budget: int, torch):
    """(column, row, value) of every entry of torch ``block`` >= thr[column], visiting only the row
    groups whose maximum reaches it, a chunk of columns at a time; _Fallback past ``budget``."""
    n, n_lines = block.shape
    members = -(-n // n_groups)
    step = max(1, block.numel() // CHUNK_DIVISOR // max(1, n))
    parts, total = [], 0
    for a in range(0, n_lines, step):
        b = min(n_lines, a + step)
        groups, lines = np.nonzero(gm[:, a:b] >= thr[None, a:b])
        lines += a
        idx = groups[:, None] + n_groups * np.arange(members)[None, :]
        lines = np.broadcast_to(lines[:, None], idx.shape)
        ok = idx < n
        idx, lines = idx[ok], lines[ok]
        vals = block[torch.from_numpy(idx), torch.from_numpy(lines)].float().numpy()
        hit = vals >= thr[lines]
        total += int(hit.sum())
        if total > budget:
            raise _Fallback(f"more than {budget} candidates in a block: the band is too wide to pay off")
        parts.append((lines[hit], idx[hit], vals[hit]))
    return tuple(np.concatenate(z) for z in zip(*parts))


def _band_rows(block: np.ndarray, n_groups: int, gm: np.ndarray, thr: np.ndarray, budget: int):
    """numpy float32 ``block``: (row, column, value) of every entry >= thr[row], in chunks of rows."""
    n_lines, n = block.shape
    step = max(1, block.size // CHUNK_DIVISOR // max(1, n), 4096 // max(1, n))
    parts, total = [], 0
    for a in range(0, n_lines, step):
        b = min(n_lines, a + step)
        lines, other, vals = gather_groups(block[a:b], 1, n_groups, gm[a:b], thr[a:b])
        total += len(lines)
        if total > budget:
            raise _Fallback(f"more than {budget} candidates in a block: the band is too wide to pay off")
        parts.append((lines + a, other, vals))
    return tuple(np.concatenate(z) for z in zip(*parts))


def lowp_topk(x: np.ndarray, y: np.ndarray, *, k_fwd: int, k_bwd: int | None, block_rows: int,
              device: str = "cpu") -> LowpResult:
    """Exact forward top-k (and backward top-k over all columns when ``k_bwd``) of unit vectors
    via bf16 candidates; same contract and bits as ``knn.topk_both``'s float32 path. On a wide band
    the result carries ``stats.fallback`` and no arrays: the caller then runs float32."""
    torch = _torch()
    try:
        dev = torch.device(device)
        torch.empty(0, device=dev)
    except (RuntimeError, AssertionError) as exc:  # unknown device, or CUDA absent
        raise BadInputError(f"scoring device '{device}' is not available here ({str(exc).splitlines()[0]})")
    stats = LowpStats(device=str(dev))
    n_x, d = x.shape
    n_y = y.shape[0]
    extra = 2 if d % 2 == 0 else 1  # the shift column, padded to an even depth (bf16 pairs)
    x_t, y_t = torch.from_numpy(x), torch.from_numpy(y)
    # Exact error norms for a side cost one pass over it: worth it when the GEMM is much larger.
    ya, nty, ndy = _to_bf16_padded(y_t, extra, 1.0, n_x >= _EXACT_NORMS_FROM, torch)
    xa, ntx, ndx = _to_bf16_padded(x_t, extra, 0.0, n_y >= _EXACT_NORMS_FROM, torch)  # shift set below
    nx, ny = _sq_norm_upper(x), _sq_norm_upper(y)
    ya, xa = ya.to(dev), xa.to(dev)
    ctx = _reduced_precision_reduction_off(torch, dev)

    # Shift c: median k-th similarity of a row sample, rounded to bf16 (the shift column is 0 now).
    with ctx:
        sample = torch.from_numpy(np.unique(np.linspace(0, n_x - 1, min(n_x, _SHIFT_SAMPLE)).astype(np.int64)))
        s0 = (ya @ xa[sample.to(dev)].T).float().cpu().numpy()
    c = float(torch.tensor(float(np.median(kth_largest(s0, k_fwd, 0)))).to(torch.bfloat16).float())
    del s0
    xa[:, d] = -c
    stats.shift = c
    g_f, g_l = _gamma(d), _gamma(d + extra)
    err_row = (ndx * ny.max() + ntx * ndy.max() + g_f * nx * ny.max() + g_l * (ntx * nty.max() + abs(c))
               + _TINY) * (1 + _SAFETY)
    err_col = (ndx.max() * ny + ntx.max() * ndy + g_f * nx.max() * ny + g_l * (ntx.max() * nty + abs(c))
               + _TINY) * (1 + _SAFETY)

    fwd_sim = np.empty((n_x, k_fwd), np.float32)
    fwd_idx = np.empty((n_x, k_fwd), np.int64)
    kb = k_bwd
    if kb is not None:
        bwd_low = np.full(n_y, -np.inf)
        bwd_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        bwd_left = int(MAX_CANDIDATE_FRACTION * n_x * n_y) + n_y * kb
    rows = max(block_rows, k_fwd, kb or 1)
    g = group_count(n_y, k_fwd, FWD_GROUP)
    try:
        for a in range(0, n_x, rows):
            b = min(n_x, a + rows)
            with ctx:  # targets x sources: the forward groups then reduce over the leading axis
                s_t = ya @ xa[a:b].T
            budget = int(MAX_CANDIDATE_FRACTION * s_t.numel()) + (b - a) * k_fwd
            gm = _group_max_rows(s_t, g).float().cpu().numpy()
            tau = kth_largest(gm, k_fwd, 0)
            thr = _threshold_from_bound(_lower_bound(tau, err_row[a:b]), err_row[a:b])
            lines, cols, _ = _band_columns(s_t, g, gm, thr, budget, torch)
            stats.fwd_candidates += len(lines)
            vals = exact_pair_values(x, y, lines + a, cols, by="row")
            fwd_sim[a:b], fwd_idx[a:b] = first_k_per_line(lines, cols, vals, b - a, k_fwd)
            if kb is not None:
                s = s_t.float().cpu().numpy()  # (n_y, b - a): the backward lines are its rows
                g0 = group_count(b - a, min(kb, b - a), BWD_GROUP)
                gm0 = group_max(s, 1, g0)
                if b - a >= kb:  # else a short last block: gather against the running bound
                    np.maximum(bwd_low, _lower_bound(kth_largest(gm0, kb, 1), err_col), out=bwd_low)
                thr0 = _threshold_from_bound(bwd_low, err_col)
                lines0, rows0, vals0 = _band_rows(s, g0, gm0, thr0, bwd_left)
                bwd_left -= len(lines0)
                bwd_parts.append((lines0, rows0 + a, vals0))
                del s
            del s_t
    except _Fallback as exc:
        stats.fallback = str(exc)
        return LowpResult(stats)
    result = LowpResult(stats, fwd_sim, fwd_idx)
    if kb is not None:
        cols0, rows0, vals0 = (np.concatenate(z) for z in zip(*bwd_parts))
        # Earlier blocks were gathered against lower running bounds: keep what the final one allows.
        keep = vals0 >= _threshold_from_bound(bwd_low, err_col)[cols0]
        cols0, rows0 = cols0[keep], rows0[keep]
        stats.bwd_candidates = len(cols0)
        exact = exact_pair_values(x, y, rows0, cols0, by="col")
        result.bwd_sim, result.bwd_idx = first_k_per_line(cols0, rows0, exact, n_y, kb)
    return result


class _reduced_precision_reduction_off:
    """cuBLAS may reduce bf16 products in bf16 (torch allows it by default); the bound above needs
    float32 accumulation, so it is switched off for our products and restored after."""

    def __init__(self, torch, dev):
        self.flag = torch.backends.cuda.matmul if dev.type == "cuda" else None
        self.saved = None

    def __enter__(self):
        if self.flag is not None:
            self.saved = self.flag.allow_bf16_reduced_precision_reduction
            self.flag.allow_bf16_reduced_precision_reduction = False
        return self

    def __exit__(self, *exc):
        if self.flag is not None:
            self.flag.allow_bf16_reduced_precision_reduction = self.saved
        return False
