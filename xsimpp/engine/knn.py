"""Exact k-nearest neighbours in both directions, and margin scoring, in one pass.

The reference (LASER source/xsim.py, mining.py) runs two faiss searches (x->y and y->x) and then a
Python loop over candidates. Here one blockwise pass over the GEMM yields the forward top-k of
every row and the backward top-k of every column, so the product is computed once and memory stays
O(block rows x n_y). The answers follow the exactness contract of ``engine.exact``: GEMM values
only propose candidates; similarities, averages and margins are exact float64 values that do not
depend on the machine, the BLAS, the thread count or the block size. Pair scorers (OneAligner) hand
in a similarity matrix instead of vectors; the same code scores both.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from ..errors import BadInputError
from .device import DeviceRows
from .exact import gemm_error, max_norm, normalize

MARGINS = ("ratio", "distance", "absolute")
DEFAULT_MARGIN = "ratio"  # LASER's xsim.py and mine_bitexts.py; every default margin reads it
GEMMS = ("numpy", "torch")
SELECTIONS = ("auto", "cpu", "device")
BWD_SCOPES = ("all", "forward")

# Default budget for one GEMM block, in bytes. 256 MiB holds the xsim++ shape (1012 x 45k) in one
# block; larger blocks measured slower (bench_roofline: 1024-row blocks of a 65536-wide product
# beat 2048-row ones, which pay for faulting in twice the fresh pages).
DEFAULT_BLOCK_BYTES = 256 * 2**20
# Bytes per GEMM value a block costs: the float32 block (the kernels' scratch is per column).
BLOCK_BYTES_PER_VALUE = 4
# Bounds of EngineConfig's block budget and threads: a budget below one GEMM value (4 bytes) holds
# nothing, so no block could keep to it ("--block-memory 1B"; tests use blocks of a few values to
# cut tiny products into many); 1 TiB is past any machine's memory. Each thread keeps its own
# tiles and selection scratch, so threads beyond 1024 (far past any CPU count) only multiply them.
MIN_BLOCK_BYTES, MAX_BLOCK_BYTES = BLOCK_BYTES_PER_VALUE, 2**40
MAX_THREADS = 1024
# EngineConfig's tile and layout sizes: (field, least, most, None allowed). The upper bounds catch a
# size given in the wrong unit (bytes for columns) before anything is allocated.
MAX_MINING_LAYOUT = 2**40  # rows a mining shard / columns a mining tile (`mine --shard-rows/--tile-cols`)
_TUNING_BOUNDS = (("tile_cols_per_thread", 1, 2**24, False),
                  ("tile_bytes_per_thread", BLOCK_BYTES_PER_VALUE, 2**40, False), ("seed_tile", 1, 2**16, False),
                  ("mining_shard_rows", 1, MAX_MINING_LAYOUT, True), ("mining_tile_cols", 1, MAX_MINING_LAYOUT, True))
# Bytes per column and per neighbour the selection keeps beside the block: the exact top-k (8 + 8),
# the block's GEMM heap (4) and the candidate buffer (8 per entry, 4 per neighbour + 8: <= 80).
COLUMN_BYTES_PER_K = 100
# Norm bound of rows that come out of ``normalize``: each component is rounded once to float32.
UNIT_NORM = 1 + 2.0**-22


@dataclass(frozen=True)
class EngineConfig:
    """How the engine computes, never what: every setting gives the same arrays, so none enters a
    signature, a fingerprint or a cache key (the exactness contract, ``engine.exact``).

    ``block_bytes`` bounds the GEMM values held at once (one block, or every thread's tile);
    ``threads`` splits the work (default: every CPU this process may use; a both-direction pass
    over vectors gives each thread its own columns, GEMM included); ``gemm`` picks who proposes
    candidates: numpy's BLAS, or torch on ``device`` (e.g. ``cuda``; float32 without TF32, so the
    error bound holds); ``selection`` where candidates are chosen: on the CPU by the compiled
    kernels, or on the torch device (``engine.device``: only candidates leave it); ``auto`` selects
    on the device when the GEMM runs on one that is not the CPU.

    Tile sizes: a thread's GEMM tile has ``tile_cols_per_thread`` columns and as many rows as
    ``tile_bytes_per_thread`` holds, so it is selected while it is in its core's cache and its
    columns' scratch (~220 bytes a column at k = 4) in the core's L2 (chosen with bench_roofline on
    the 2-core AMD VM: tiles of 256-1024 columns and 2-8 MiB measured alike, all faster than 256 MiB
    blocks selected by both threads after a shared GEMM; docs/performance.md); ``seed_tile``: the
    columns the compiled selection seeds per pass (their group maxima and k lanes, ~70 KB at k = 4,
    stay in L1/L2). The sharded miner's layout (``engine.mining``): ``mining_shard_rows`` source
    rows a shard, ``mining_tile_cols`` target rows a tile; None: the largest that fit its memory
    budget.
    """

    block_bytes: int = DEFAULT_BLOCK_BYTES
    threads: int | None = None
    gemm: str = "numpy"
    device: str = "cpu"
    selection: str = "auto"
    tile_cols_per_thread: int = 512
    tile_bytes_per_thread: int = 8 * 2**20
    seed_tile: int = 512
    mining_shard_rows: int | None = None
    mining_tile_cols: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.block_bytes, (int, np.integer)) or isinstance(self.block_bytes, bool) \
                or not MIN_BLOCK_BYTES <= self.block_bytes <= MAX_BLOCK_BYTES:
            raise BadInputError(f"the block memory (block_bytes) is from {MIN_BLOCK_BYTES} bytes (one value) to 1TB "
                                f"({MAX_BLOCK_BYTES} bytes), got {self.block_bytes!r}")
        if self.threads is not None and (not isinstance(self.threads, (int, np.integer))
                                         or isinstance(self.threads, bool) or not 1 <= self.threads <= MAX_THREADS):
            raise BadInputError(f"threads must be a positive integer up to {MAX_THREADS}, got {self.threads!r}")
        for name, least, most, none_ok in _TUNING_BOUNDS:
            value = getattr(self, name)
            if value is None and none_ok:
                continue
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not least <= value <= most:
                raise BadInputError(f"{name} must be an integer from {least} to {most}, got {value!r}")
        if self.gemm not in GEMMS:
            raise BadInputError(f"gemm must be one of {', '.join(GEMMS)}, got '{self.gemm}'")
        if self.gemm == "numpy" and self.device != "cpu":
            raise BadInputError(f"device '{self.device}' needs gemm='torch' (numpy's BLAS runs on the CPU)")
        if self.selection not in SELECTIONS:
            raise BadInputError(f"selection must be one of {', '.join(SELECTIONS)}, got '{self.selection}'")
        if self.selection == "device" and self.gemm != "torch":
            raise BadInputError("selection on the device needs gemm='torch' (the block must be a torch tensor)")

    def selects_on_device(self) -> bool:
        return self.selection == "device" or (self.selection == "auto" and self.gemm == "torch"
                                              and str(self.device) != "cpu")

    def n_threads(self) -> int:
        from .kernels import default_threads

        return self.threads or default_threads()


def check_margin(margin: str) -> None:
    if margin not in MARGINS:
        raise BadInputError(f"margin must be one of {', '.join(MARGINS)}, got '{margin}'")


def check_vectors_or_similarity(x: np.ndarray | None, y: np.ndarray | None,
                                similarity: np.ndarray | None) -> np.ndarray | None:
    """The one check of what every scorer takes: vectors ``x`` and ``y`` (a vector encoder's), or a
    ``similarity`` matrix (a pair scorer's). Returns the matrix as float32 (its values are the
    scores, compared as float32), 2-D and non-empty; None when vectors are given."""
    if similarity is None:
        if x is None or y is None:
            raise BadInputError("give either x and y, or a similarity matrix")
        return None
    sim = np.asarray(similarity, dtype=np.float32)
    if sim.ndim != 2 or 0 in sim.shape:
        raise BadInputError(f"similarity matrix must be 2-D and non-empty, got shape {sim.shape}")
    return sim


def check_k(k: int, n_candidates: int, what: str) -> None:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise BadInputError(f"k must be a positive integer, got {k!r}")
    if k > n_candidates:
        raise BadInputError(
            f"k={k} is larger than the {what} ({n_candidates} sentence(s)); use k <= {n_candidates}"
        )


@dataclass(frozen=True)
class TopK:
    """Exact nearest neighbours: forward (rows of x over y) and backward (rows of y over x).

    Similarities are float64 exact values, each line sorted by (similarity desc, index asc).
    """

    fwd_sim: np.ndarray  # (n_x, k_fwd) float64
    fwd_idx: np.ndarray  # (n_x, k_fwd) int64 indices into y
    bwd_sim: np.ndarray | None  # (n_y, k_bwd), or (len(bwd_cols), k_bwd); None when not requested
    bwd_idx: np.ndarray | None
    bwd_cols: np.ndarray | None = None  # columns the backward rows belong to; None = all of y, in order


def block_rows_for(n_cols: int, block_bytes: int = DEFAULT_BLOCK_BYTES) -> int:
    return max(1, min(65536, block_bytes // max(1, BLOCK_BYTES_PER_VALUE * n_cols)))


# How many passes run GEMMs on several threads at once, and how to restore the BLAS's thread count
# when the last one ends (passes may run concurrently: the limit is set once, restored once).
_ONE_THREAD_LOCK = threading.Lock()
_one_thread_passes = 0
_restore_blas_threads: Callable[[], None] | None = None


class CandidateGemm:
    """``xb @ y.T`` in float32 into a given buffer, by numpy's BLAS or by torch on a device.

    Its values only propose candidates, so any correct float32 GEMM will do; what is refused is a
    GEMM that rounds below float32 (TF32, lowered matmul precision), which would break the bound.
    """

    def __init__(self, config: EngineConfig):
        self.torch = None
        self._y = self._y_dev = None
        if config.gemm == "torch":
            import torch

            if torch.get_float32_matmul_precision() != "highest":
                raise BadInputError("torch's float32 matmul precision is lowered (set_float32_matmul_precision); "
                                    "the engine's error bound needs 'highest'")
            if str(config.device).startswith("cuda") and torch.backends.cuda.matmul.allow_tf32:
                raise BadInputError("torch.backends.cuda.matmul.allow_tf32 is on; the engine's error bound needs "
                                    "float32 products (set it to False)")
            self.torch = torch
            try:
                self.device = torch.device(config.device)
                torch.empty(1, device=self.device)
            except (RuntimeError, AssertionError) as e:
                raise BadInputError(f"torch cannot use device '{config.device}' ({str(e).splitlines()[0]})") from None

    @contextmanager
    def one_thread_per_call(self) -> Iterator[None]:
        """While several threads each run their own GEMMs: the BLAS computes each call on its
        caller's thread (its own threads would oversubscribe the cores). Process-wide; see
        ``on_this_thread`` for torch, whose thread count is the calling thread's."""
        global _one_thread_passes, _restore_blas_threads
        from threadpoolctl import threadpool_limits

        with _ONE_THREAD_LOCK:
            if _one_thread_passes == 0:
                _restore_blas_threads = threadpool_limits(limits=1, user_api="blas").restore_original_limits
            _one_thread_passes += 1
        try:
            yield
        finally:
            with _ONE_THREAD_LOCK:
                _one_thread_passes -= 1
                if _one_thread_passes == 0:
                    _restore_blas_threads()

    @contextmanager
    def on_this_thread(self) -> Iterator[None]:
        """Within one of those threads: torch's GEMMs on this thread alone (torch keeps a thread
        count per calling thread), restored after."""
        if self.torch is None:
            yield
            return
        before = self.torch.get_num_threads()
        self.torch.set_num_threads(1)
        try:
            yield
        finally:
            self.torch.set_num_threads(before)

    def __call__(self, xb: np.ndarray, y: np.ndarray, out: np.ndarray, c0: int = 0, c1: int | None = None) -> np.ndarray:
        """``xb @ y[c0:c1].T`` into ``out``."""
        if self.torch is None:
            return np.matmul(xb, y[c0:c1].T, out=out)
        t = self.torch
        if self._y is not y:  # targets move to the device once, not per block
            self._y, self._y_dev = y, t.from_numpy(y).to(self.device)
        out[...] = (t.from_numpy(xb).to(self.device) @ self._y_dev[c0:c1].T).cpu().numpy()
        return out


def _blocks(x, y, sim, rows: int, config: EngineConfig) -> Iterator[tuple[int, np.ndarray]]:
    if sim is not None:
        for a in range(0, sim.shape[0], rows):
            yield a, np.ascontiguousarray(sim[a : a + rows], dtype=np.float32)
        return
    gemm = CandidateGemm(config)
    buf = np.empty((min(rows, len(x)), len(y)), np.float32)  # one buffer for every block
    for a in range(0, len(x), rows):
        xb = x[a : a + rows]
        yield a, gemm(xb, y, buf[: len(xb)])


def tile_plan(n_x: int, n_y: int, cfg: EngineConfig) -> tuple[int, int, int]:
    """(threads, tile rows, tile columns) of a both-direction pass over vectors: the columns split
    into one range a thread, each walked in tiles of ``cfg.tile_cols_per_thread`` columns and as
    many rows as ``cfg.tile_bytes_per_thread`` holds; all threads' tiles together within
    ``cfg.block_bytes``."""
    from .kernels import MIN_COLS_PER_THREAD, MIN_VALUES_PER_THREAD

    nt = max(1, min(cfg.n_threads(), n_y // MIN_COLS_PER_THREAD, n_x * n_y // MIN_VALUES_PER_THREAD))
    budget = max(BLOCK_BYTES_PER_VALUE, min(cfg.tile_bytes_per_thread, cfg.block_bytes // nt))
    cols = max(1, min(-(-n_y // nt), cfg.tile_cols_per_thread, budget // BLOCK_BYTES_PER_VALUE))
    rows = max(1, min(n_x, 65536, budget // (BLOCK_BYTES_PER_VALUE * cols)))
    return nt, rows, cols


def both_tiled(x: np.ndarray, y: np.ndarray, k_fwd: int, beta: float, bound: float, col_sim: np.ndarray,
               col_idx: np.ndarray, cfg: EngineConfig) -> tuple[np.ndarray, np.ndarray]:
    """Both directions over GEMM tiles (``both_tiled_update``): the columns' lists updated in place,
    the rows' exact top-k returned."""
    from . import kernels

    lists = kernels.row_lists(len(x), k_fwd, cfg.n_threads())
    both_tiled_update(x, y, beta, bound, lists, col_sim, col_idx, cfg)
    return kernels.merge_row_lists(lists)


def both_tiled_update(x: np.ndarray, y: np.ndarray, beta: float, bound: float, lists: tuple[np.ndarray, np.ndarray],
                      col_sim: np.ndarray, col_idx: np.ndarray, cfg: EngineConfig, col_offset: int = 0) -> None:
    """Both directions' exact top-k lists updated with every x[i] . y[j]. Each thread owns a range of
    columns and walks it tile by tile, computing a tile's GEMM on its own core (one BLAS thread
    each) into its own buffer and selecting it while it is still in that core's cache. The rows'
    lists (``kernels.row_lists`` with at least cfg.n_threads() sets; column indices + col_offset)
    carry over from tile to tile, and from call to call (a mining shard's target tiles); the
    columns' (row indices from 0) from one block of rows to the next."""
    from . import kernels

    nt, rows, cols = tile_plan(len(x), len(y), cfg)
    gemm = CandidateGemm(cfg)
    ov, oi = lists
    bounds = np.linspace(0, len(y), nt + 1).astype(np.int64).tolist()

    def columns(t: int) -> None:
        buf = np.empty(rows * cols, np.float32)  # every tile; a narrower one is a C-contiguous view of its start
        scratch = kernels.column_scratch(cols, col_sim.shape[1])
        for a in range(0, len(x), rows):
            xb = x[a : a + rows]
            part = (ov[t : t + 1, a : a + len(xb)], oi[t : t + 1, a : a + len(xb)])
            for c in range(bounds[t], bounds[t + 1], cols):
                d = min(bounds[t + 1], c + cols)
                tile = gemm(xb, y, buf[: len(xb) * (d - c)].reshape(len(xb), d - c), c, d)
                kernels.both_update(tile, xb, y[c:d], beta, bound, part, col_sim[c:d], col_idx[c:d], a,
                                    col_offset + c, 1, scratch, seed_tile=cfg.seed_tile)

    if nt == 1:  # one thread: the GEMM keeps every BLAS thread
        columns(0)
    else:
        def columns_beside_others(t: int) -> None:
            with gemm.on_this_thread():
                columns(t)

        with gemm.one_thread_per_call():
            kernels.run_in_pool(columns_beside_others, [(t,) for t in range(nt)])


def _rows_in(a: np.ndarray, name: str, checked: bool) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 2 or 0 in a.shape:
        raise BadInputError(f"{name} must be a non-empty 2-D array, got shape {a.shape}")
    a = np.ascontiguousarray(a, dtype=np.float32)
    if not checked and not np.isfinite(a).all():
        raise BadInputError(f"{name} has NaN or infinite values")
    return a


def hold_rows(rows: np.ndarray, config: EngineConfig | None, name: str = "target embeddings"):
    """``rows`` as ``DeviceRows`` on the configuration's device when it selects there (so repeated
    searches against them copy nothing), else the rows unchanged."""
    cfg = config or EngineConfig()
    if not cfg.selects_on_device():
        return rows
    return DeviceRows(rows, CandidateGemm(cfg).device, name=name, threads=cfg.threads)


def _check_held(held: DeviceRows, cfg: EngineConfig, similarity) -> None:
    import torch

    if similarity is not None:
        raise BadInputError("give rows held on a device (DeviceRows) as y with vectors x, not with a similarity matrix")
    if not cfg.selects_on_device():
        raise BadInputError(f"rows held on {held.device} (DeviceRows) need selection on that device: "
                            f"EngineConfig(gemm='torch', device='{held.device}', selection='device')")
    dev = torch.device(CandidateGemm(cfg).device)
    if (dev.type, dev.index or 0) != (held.device.type, held.device.index or 0):
        raise BadInputError(f"rows held on {held.device} (DeviceRows), but the engine selects on {dev}")


def topk_both(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    k_fwd: int = 4,
    k_bwd: int | None = 4,
    bwd_scope: str = "all",
    unit: bool = False,
    config: EngineConfig | None = None,
) -> TopK:
    """Exact top-k neighbours both ways from one pass over the GEMM (see ``engine.exact``).

    Give vectors ``x`` (n_x, d) and ``y`` (n_y, d) — cosine needs them unit-normalised
    (``exact.normalize``; ``unit=True`` says they came from it, which saves measuring their norms)
    — or a ``similarity`` matrix (n_x, n_y), whose float32 values are the scores. ``k_bwd=None``
    skips the backward direction. ``bwd_scope="forward"`` computes the backward top-k only for the
    columns that occur in the forward top-k (``TopK.bwd_cols``): all the margins of forward
    candidates need; on the xsim++ shape (45k targets, ~4k of them candidates) it skips ~90 % of
    the backward work.
    """
    from . import kernels

    cfg = config or EngineConfig()
    if bwd_scope not in BWD_SCOPES:
        raise BadInputError(f"bwd_scope must be one of {', '.join(BWD_SCOPES)}, got '{bwd_scope}'")
    held = y if isinstance(y, DeviceRows) else None
    if held is not None:  # unit rows on the device already: cosine, selected there
        _check_held(held, cfg, similarity)
        x = x if unit else normalize(x, "source embeddings", cfg.threads)
        y, unit = held.host, True
    sim = check_vectors_or_similarity(x, y, similarity)
    if sim is not None:
        if not np.isfinite(sim).all():
            raise BadInputError("similarity matrix has NaN or infinite values")
        n_x, n_y = sim.shape
        x = y = None
        bound = 0.0  # the given values are the scores: nothing to rescore, no band
    else:
        x, y = _rows_in(x, "source embeddings", unit), _rows_in(y, "target embeddings", unit)
        if x.shape[1] != y.shape[1]:
            raise BadInputError(f"source and target embeddings differ in dimension ({x.shape[1]} vs {y.shape[1]})")
        n_x, n_y = len(x), len(y)
        norms = (UNIT_NORM, UNIT_NORM) if unit else (max_norm(x), max_norm(y))
        bound = gemm_error(x.shape[1], *norms)
    check_k(k_fwd, n_y, "target set")
    if k_bwd is not None:
        check_k(k_bwd, n_x, "source set")
    beta = 2 * bound  # a top-k pair's GEMM value is within 2 bounds of the line's k-th GEMM value
    threads = cfg.n_threads()
    rows = block_rows_for(n_y, cfg.block_bytes)
    if sim is None and cfg.selects_on_device():
        from .device import device_topk_both

        device = CandidateGemm(cfg).device  # the same checks of torch's float32 products
        fwd_sim, fwd_idx, col_sim, col_idx = device_topk_both(x, held.tensor if held is not None else y, k_fwd, k_bwd,
                                                              bound, rows, device)
        if k_bwd is None or bwd_scope == "all":
            return TopK(fwd_sim, fwd_idx, col_sim, col_idx)
        cols = np.unique(fwd_idx)
        return TopK(fwd_sim, fwd_idx, col_sim[cols], col_idx[cols], cols)

    if k_bwd is not None and bwd_scope == "all":
        col_sim = np.full((n_y, k_bwd), -np.inf)
        col_idx = np.full((n_y, k_bwd), -1, np.int64)
        if sim is None:
            fwd_sim, fwd_idx = both_tiled(x, y, k_fwd, beta, bound, col_sim, col_idx, cfg)
            return TopK(fwd_sim, fwd_idx, col_sim, col_idx)
        fwd_sim = np.empty((n_x, k_fwd))
        fwd_idx = np.empty((n_x, k_fwd), np.int64)
        scratch = kernels.column_scratch(n_y, k_bwd)
        for a, block in _blocks(x, y, sim, rows, cfg):
            b = a + len(block)
            fwd_sim[a:b], fwd_idx[a:b] = kernels.both_topk(block, k_fwd, None if x is None else x[a:b], y, beta, bound,
                                                           col_sim, col_idx, a, threads, scratch,
                                                           seed_tile=cfg.seed_tile)
        return TopK(fwd_sim, fwd_idx, col_sim, col_idx)

    return _forward_then_columns(x, y, sim, k_fwd, k_bwd, beta, bound, rows, cfg)


def _forward_then_columns(x, y, sim, k_fwd: int, k_bwd: int | None, beta: float, bound: float, rows: int,
                          cfg: EngineConfig) -> TopK:
    """``topk_both`` without the backward top-k of every column: the rows' top-k in blocks, then
    (``k_bwd`` given) the backward top-k of only the columns that occur in it (``TopK.bwd_cols``)."""
    from . import kernels

    threads = cfg.n_threads()
    n_x = len(x) if sim is None else sim.shape[0]
    fwd_sim = np.empty((n_x, k_fwd))
    fwd_idx = np.empty((n_x, k_fwd), np.int64)
    whole = None  # the block, when one block holds every row: the backward pass reuses it
    for a, block in _blocks(x, y, sim, rows, cfg):
        b = a + len(block)
        fwd_sim[a:b], fwd_idx[a:b] = kernels.rows_topk(block, k_fwd, None if x is None else x[a:b], y, beta,
                                                       threads=threads)
        whole = block if a == 0 and b == n_x else None
    if k_bwd is None:
        return TopK(fwd_sim, fwd_idx, None, None)
    cols = np.unique(fwd_idx)
    y_cols = None if y is None else np.ascontiguousarray(y[cols])
    col_sim = np.full((len(cols), k_bwd), -np.inf)
    col_idx = np.full((len(cols), k_bwd), -1, np.int64)
    if whole is not None:
        sub = [(0, kernels.gather_columns(whole, cols, threads))]
    else:
        sub = _blocks(x, y_cols, None if sim is None else sim[:, cols], block_rows_for(len(cols), cfg.block_bytes), cfg)
    scratch = kernels.column_scratch(len(cols), k_bwd)
    for a, block in sub:
        b = a + len(block)
        kernels.both_topk(block, 0, None if x is None else x[a:b], y_cols, beta, bound, col_sim, col_idx, a, threads,
                          scratch, seed_tile=cfg.seed_tile)
    return TopK(fwd_sim, fwd_idx, col_sim, col_idx, cols)


def pair_similarity(x: np.ndarray, y: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                    threads: int | None = None) -> np.ndarray:
    """Exact similarity of the pairs (x[rows[n]], y[cols[n]]): ``exact.pair_similarity``'s values
    (float64, the contract's order), compiled (~40x faster on a thousand gold pairs)."""
    from .kernels import pair_similarities

    rows, cols = np.asarray(rows, np.int64).reshape(-1), np.asarray(cols, np.int64).reshape(-1)
    for idx, n, name in ((rows, len(x), "row"), (cols, len(y), "column")):
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise BadInputError(f"pair {name} indices must lie in [0, {n}), got {idx.min()}..{idx.max()}")
    return pair_similarities(np.ascontiguousarray(x, np.float32), np.ascontiguousarray(y, np.float32), rows, cols, threads)


# ----------------------------------------------------------------------------------------------
# margins


@dataclass(frozen=True)
class MarginKNN:
    """Margin-scored neighbours both ways (Artetxe & Schwenk 2019). For the absolute margin the
    scores are the similarities and k is 1. ``avg_x``/``avg_y`` are the mean similarity of each
    sentence's k nearest neighbours (NaN for targets whose average was not needed)."""

    margin: str
    k: int
    fwd_sim: np.ndarray
    fwd_idx: np.ndarray
    fwd_score: np.ndarray
    bwd_sim: np.ndarray | None
    bwd_idx: np.ndarray | None
    bwd_score: np.ndarray | None
    avg_x: np.ndarray | None = None
    avg_y: np.ndarray | None = None

    def forward_best(self) -> tuple[np.ndarray, np.ndarray]:
        """Best target per source: the first maximum among the candidates, which are ordered by
        (similarity desc, index asc), so a tie in score goes to the higher similarity, then the
        lower index."""
        return _best(self.fwd_idx, self.fwd_score)

    def backward_best(self) -> tuple[np.ndarray, np.ndarray]:
        if self.bwd_idx is None:
            raise ValueError("backward neighbours were not computed")
        return _best(self.bwd_idx, self.bwd_score)

    def pair_scores(self, sim: np.ndarray, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        """Margin scores of arbitrary pairs (e.g. gold pairs) given their exact similarities."""
        sim = np.asarray(sim, np.float64)
        if self.margin == "absolute":
            return sim
        return _margin(sim, self.avg_x[src], self.avg_y[tgt], self.margin)


def _best(idx: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    best = score.argmax(axis=1)
    rows = np.arange(len(best))
    return idx[rows, best], score[rows, best]


def _margin(sim: np.ndarray, avg_a: np.ndarray, avg_b: np.ndarray, margin: str) -> np.ndarray:
    denom = (avg_a + avg_b) / 2
    if margin != "ratio":
        return sim - denom
    zero = np.broadcast_to(denom == 0, np.broadcast_shapes(np.shape(sim), np.shape(denom)))
    if zero.any():
        # cos / 0: a pair of sentences whose neighbours average a cosine of 0 on both sides (a sentence
        # the encoder puts orthogonal to all the others). NaN or inf would rank it arbitrarily.
        row = int(np.argwhere(zero)[0][0])
        raise BadInputError(f"the ratio margin is undefined for row {row + 1} (and {int(zero.sum()) - 1} more pair(s)): "
                            "its nearest neighbours and its candidate's average a cosine of exactly 0 (the encoder puts "
                            "a sentence orthogonal to every other); use --margin distance or absolute")
    return sim / denom


def margin_scores(top: TopK, margin: str) -> MarginKNN:
    """The one place that turns neighbours into margin scores (xsim, Tatoeba, BUCC, mining): average
    of each line's k similarities, then cos / ((A_x + A_y)/2) (ratio) or cos - (A_x + A_y)/2
    (distance), all in float64 on exact values."""
    check_margin(margin)
    k = top.fwd_sim.shape[1]
    if margin == "absolute":
        return MarginKNN(margin, k, top.fwd_sim, top.fwd_idx, top.fwd_sim, top.bwd_sim, top.bwd_idx, top.bwd_sim)
    if top.bwd_sim is None:
        raise BadInputError("margin scores need the backward neighbours (targets' averages)")
    avg_x = top.fwd_sim.mean(axis=1)
    if top.bwd_cols is None:
        avg_y = top.bwd_sim.mean(axis=1)
    else:  # NaN marks targets no forward candidate refers to
        avg_y = np.full(int(top.fwd_idx.max()) + 1, np.nan)
        avg_y[top.bwd_cols] = top.bwd_sim.mean(axis=1)
    fwd_score = _margin(top.fwd_sim, avg_x[:, None], avg_y[top.fwd_idx], margin)
    bwd_score = None
    if top.bwd_cols is None:
        bwd_score = _margin(top.bwd_sim, avg_y[:, None], avg_x[top.bwd_idx], margin)
    return MarginKNN(margin, k, top.fwd_sim, top.fwd_idx, fwd_score, top.bwd_sim if top.bwd_cols is None else None,
                     top.bwd_idx if top.bwd_cols is None else None, bwd_score, avg_x, avg_y)


def margin_knn(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    margin: str = DEFAULT_MARGIN,
    k: int = 4,
    k_bwd: int | None = None,
    backward: bool = False,
    normalize_vectors: bool = True,
    unit: bool = False,
    config: EngineConfig | None = None,
) -> MarginKNN:
    """Margin-based kNN of x over y, and of y over x with ``backward=True``.

    Vectors are L2-normalised first (cosine), unless ``unit=True`` (they come from
    ``engine.normalize`` already) or ``normalize_vectors=False`` (their dot products are the
    scores), or a ``similarity`` matrix is given. ``k_bwd`` (default k) sets the
    targets' neighbourhood size separately (BUCC clips each side to the other's size). With
    ``margin='absolute'`` the candidates are the top-1 by similarity (LASER searches k=1 there).
    """
    check_margin(margin)
    similarity = check_vectors_or_similarity(x, y, similarity)
    if similarity is None:
        if isinstance(y, DeviceRows) and not normalize_vectors:
            raise BadInputError("rows held on a device (DeviceRows) are unit rows: their scores are cosines, so "
                                "normalize_vectors=False does not apply to them")
        if normalize_vectors and not unit:
            threads = (config or EngineConfig()).threads
            x = normalize(x, "source embeddings", threads)
            y = y if isinstance(y, DeviceRows) else normalize(y, "target embeddings", threads)
            unit = True
    if margin == "absolute":
        top = topk_both(x, y, similarity=similarity, k_fwd=1, k_bwd=1 if backward else None, unit=unit, config=config)
    else:
        top = topk_both(x, y, similarity=similarity, k_fwd=k, k_bwd=k if k_bwd is None else k_bwd, unit=unit,
                        bwd_scope="all" if backward else "forward", config=config)
    return margin_scores(top, margin)


def nearest_neighbors(x: np.ndarray | None = None, y: np.ndarray | None = None, *,
                      similarity: np.ndarray | None = None, margin: str = DEFAULT_MARGIN, k: int = 4,
                      config: EngineConfig | None = None) -> np.ndarray:
    """Index into y of the best margin-scored neighbour of every row of x."""
    return margin_knn(x, y, similarity=similarity, margin=margin, k=k, config=config).forward_best()[0]
