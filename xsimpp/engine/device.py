"""Candidate selection on the GEMM's device (``EngineConfig(gemm="torch", device="cuda")``): the
block stays where torch computed it, only candidate pairs come back for exact rescoring.

The CPU path copies every float32 block to the host and selects there (numba kernels); at a GPU's
GEMM rate that copy and that selection are the bottleneck. Here, per block of rows:

- forward: ``torch.topk`` gives each row's k-th largest GEMM value t; every pair of the row with
  a GEMM value >= t - beta is a candidate (beta = 2 bounds, ``engine.exact`` point 3);
- backward: each column's k-th largest GEMM value within the block, t_c (all of the column's
  entries when the block has fewer rows than k), gives the candidates >= t_c - beta; the column's
  exact k-th so far, minus one bound, is a floor below which no entry of a later block can enter;
- the candidates' exact similarities are computed on the device too (``lane_dot``: float64
  products, exact, summed in the contract's fixed lane order by elementwise adds, so the bits are
  the host kernels'), and the rows' exact top-k and the columns' (merged with what earlier blocks
  found) are taken there, in the contract's total order (similarity desc, index asc), which three
  stable sorts give. Nothing but the final top-k lists crosses back to the host.

The candidate sets are supersets of the exact top-k by the same argument as the CPU kernels', so
the answers equal the CPU path's by construction: ``tests/test_engine_device.py`` checks it
through this very code on torch's CPU device (the device string is the only difference) and, where
one is lent, on a GPU.
"""

from __future__ import annotations

import numpy as np

from .exact import lane_sum

# Candidate pairs rescored at a time: bounds the float64 products' memory on the device (~200 MB at d=384).
RESCORE_CHUNK = 65536


class DeviceRows:
    """Unit rows held on a device across searches: normalised once on the host (``exact.normalize``,
    the bits every search would compute itself), copied to the device once, then passed as ``y`` to
    ``topk_both``, ``margin_knn`` or ``xsim`` with selection on that device as often as wanted, with
    no further copy (the copies to the device took 9 of the xsim++ shape's 26 ms on an H100). The
    host keeps a read-only copy for the exact work done there (the gold pairs' similarities), so a
    later write to the array the rows came from changes neither: an explicit handle, where a cache
    keyed by an array's identity could serve stale rows after an in-place write. Build it with
    ``knn.hold_rows``, which checks the engine's configuration."""

    def __init__(self, rows: np.ndarray, device, *, name: str = "target embeddings", threads: int | None = None):
        import torch

        from .exact import normalize

        host = normalize(rows, name, threads)  # a new array: nothing else writes to it
        self.device = torch.device(device)
        self.tensor = torch.from_numpy(host).to(self.device)
        host.setflags(write=False)
        self.host = host

    def __len__(self) -> int:
        return len(self.host)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.host.shape


def lane_dot(torch, a, b):
    """Exact similarity of row pairs ``a[i] . b[i]`` (float32 (n, d) tensors) as float64 (n,), on
    their device, bit for bit ``exact.lane_dot``: each float32 x float32 product is exact in float64,
    and ``exact.lane_sum`` itself sums them in the contract's fixed order with elementwise adds,
    which round the same on every device. A reduction kernel (``sum``, ``matmul``) would pick its
    own order, so none is used."""
    prod = a.to(torch.float64) * b.to(torch.float64)
    return lane_sum(prod, lambda shape: torch.zeros(shape, dtype=torch.float64, device=prod.device))


def _pair_similarities(torch, xb, y, rows, cols):
    """``lane_dot`` of the pairs (xb[rows[n]], y[cols[n]]), in chunks of ``RESCORE_CHUNK``."""
    out = torch.empty(len(rows), dtype=torch.float64, device=xb.device)
    for a in range(0, len(rows), RESCORE_CHUNK):
        out[a : a + RESCORE_CHUNK] = lane_dot(torch, xb[rows[a : a + RESCORE_CHUNK]], y[cols[a : a + RESCORE_CHUNK]])
    return out


def _first_k(torch, group, sim, idx, n_groups: int, k: int):
    """The first ``k`` of each group in the order (similarity desc, index asc), on the tensors'
    device: three stable sorts make that lexicographic order (group asc first); (n_groups, k)
    tensors, (-inf, -1) padding a group with fewer entries."""
    for which, descending in ((2, False), (1, True), (0, False)):  # least significant key first
        order = torch.sort((group, sim, idx)[which], stable=True, descending=descending).indices
        group, sim, idx = group[order], sim[order], idx[order]
    start = torch.searchsorted(group, torch.arange(n_groups, device=group.device))
    rank = torch.arange(len(group), device=group.device) - start[group]
    keep = rank < k
    out_sim = torch.full((n_groups, k), -float("inf"), dtype=torch.float64, device=group.device)
    out_idx = torch.full((n_groups, k), -1, dtype=torch.int64, device=group.device)
    out_sim[group[keep], rank[keep]] = sim[keep]
    out_idx[group[keep], rank[keep]] = idx[keep]
    return out_sim, out_idx


def device_topk_both(x: np.ndarray, y: np.ndarray, k_fwd: int, k_bwd: int | None, bound: float, rows: int,
                     device: str):
    """(fwd_sim, fwd_idx, bwd_sim, bwd_idx) of unit rows ``x`` over ``y`` (each an array, or a tensor
    on ``device`` already: ``DeviceRows.tensor``, a mining shard's rows), exact, selected on ``device`` block by block (``rows``
    rows of x per block); ``k_bwd=None`` skips the backward top-k."""
    import torch

    beta = 2 * bound
    dev = torch.device(device)
    n_x, n_y = len(x), len(y)
    y_dev = y if torch.is_tensor(y) else torch.from_numpy(y).to(dev)
    fwd_sim = np.empty((n_x, k_fwd))
    fwd_idx = np.empty((n_x, k_fwd), np.int64)
    col_sim = col_idx = None  # the columns' exact top-k so far, kept on the device
    if k_bwd is not None:
        col_sim = torch.full((n_y, k_bwd), -float("inf"), dtype=torch.float64, device=dev)
        col_idx = torch.full((n_y, k_bwd), -1, dtype=torch.int64, device=dev)
    for a in range(0, n_x, rows):
        b = min(n_x, a + rows)
        xb = x[a:b] if torch.is_tensor(x) else torch.from_numpy(x[a:b]).to(dev)
        block = xb @ y_dev.T
        t = torch.topk(block, k_fwd, dim=1).values[:, -1]
        r, c = (block >= (t - beta)[:, None]).nonzero(as_tuple=True)
        sim = _pair_similarities(torch, xb, y_dev, r, c)
        top_sim, top_idx = _first_k(torch, r, sim, c, b - a, k_fwd)
        fwd_sim[a:b], fwd_idx[a:b] = top_sim.cpu().numpy(), top_idx.cpu().numpy()
        if k_bwd is None:
            continue
        kb = min(k_bwd, b - a)
        t_col = torch.topk(block, kb, dim=0).values[-1, :]
        # an entry below the column's exact k-th so far (minus the GEMM's error) cannot enter it
        floor = (col_sim[:, -1] - bound).to(torch.float32)
        cr, cc = (block >= torch.maximum(t_col - beta, floor)[None, :]).nonzero(as_tuple=True)
        csim = _pair_similarities(torch, xb, y_dev, cr, cc)
        # merge on the device, only the columns that got candidates (after the first block, fewer)
        touched = torch.unique(cc)
        held_sim, held_idx = col_sim[touched], col_idx[touched]
        held = held_idx >= 0
        group = torch.cat([held.nonzero(as_tuple=True)[0], torch.searchsorted(touched, cc)])
        col_sim[touched], col_idx[touched] = _first_k(torch, group, torch.cat([held_sim[held], csim]),
                                                      torch.cat([held_idx[held], a + cr]), len(touched), k_bwd)
    if k_bwd is not None:
        col_sim, col_idx = col_sim.cpu().numpy(), col_idx.cpu().numpy()
    return fwd_sim, fwd_idx, col_sim, col_idx
