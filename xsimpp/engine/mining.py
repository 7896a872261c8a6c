"""Sharded, resumable, memory-bounded exact margin kNN over large sets (BUCC-style mining at scale).

The in-memory engine (``engine.knn.topk_both``) keeps both inputs and the backward top-k in
memory. At millions of sentences a run takes hours, so it must survive being killed, and its
memory must be set by the user rather than by the input size. This module:

- splits the sources into *shards* of ``shard_rows`` rows (``EngineConfig.mining_shard_rows``, or
  planned from the memory budget); a shard is an independent task: its forward top-k (its rows
  over all targets) and its backward partial (all targets over its rows);
- streams the targets in tiles of ``tile_cols`` rows (``EngineConfig.mining_tile_cols``, or
  planned), read from .npy files with positioned reads (no mmap, so resident memory holds only
  the tile in use, not every page ever touched);
- writes each shard's four arrays atomically (``textio.atomic_save_npy``) and then a ``done``
  marker holding their sha256, so a killed run leaves only whole shards; a rerun with the same
  inputs reuses a shard only when its files still match those checksums (a truncated or altered
  shard is recomputed, never trusted);
- reads and checks every input row (NaN, inf, all-zero) before it writes anything, so an input
  error leaves no manifest behind to block the corrected run;
- merges the backward partials (an associative, order-independent merge on (value desc, index
  asc)), computes the margins and writes the result atomically.

Results equal ``margin_knn(x, y, backward=True)`` bit for bit, whatever the shard and tile sizes:
both follow the exactness contract (``engine.exact``) — exact similarities in a total order, so
the exact top-k of a shard's tile merged with the exact top-k of the others is the exact top-k of
the whole. Shards being independent is what makes the path to a cluster short: each shard is one
Ray/Dask task writing its own files (docs/scaling.md).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import BadInputError
from ..textio import atomic_save_npy, atomic_write_json, check_input_file, file_sha256
from .exact import gemm_error, normalize
from .knn import (DEFAULT_MARGIN, BLOCK_BYTES_PER_VALUE, COLUMN_BYTES_PER_K, UNIT_NORM, CandidateGemm, EngineConfig, MarginKNN, TopK,
                  both_tiled_update, check_k, check_margin, margin_scores)

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: exact float64 similarities and scores (the exactness contract)
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "kib": 2**10, "m": 2**20, "mb": 2**20, "mib": 2**20,
          "g": 2**30, "gb": 2**30, "gib": 2**30, "t": 2**40, "tb": 2**40, "tib": 2**40}


def parse_memory(text: str | int) -> int:
    """'4GB', '512MiB', '1.5G', or a byte count. Binary units: a '4GB' budget is 4 GiB."""
    if isinstance(text, (int, np.integer)):
        value = int(text)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
        if not m or m.group(2).lower() not in _UNITS:
            raise BadInputError(f"cannot read memory size {text!r}; use e.g. 4GB, 512MB or a byte count")
        value = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if value <= 0:
        raise BadInputError(f"memory size {text!r} must be more than 0 bytes; use e.g. 4GB or 512MB")
    return value


def format_bytes(n: float) -> str:
    """A size in the largest binary unit that keeps it >= 1 (1.5 KiB, 12 MiB, 4.0 GiB)."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


class RowSource:
    """Rows of an in-memory array or of a .npy file (float16/float32/float64, C order)."""

    def __init__(self, data: np.ndarray | str | os.PathLike, name: str):
        self.name = name
        self.path: Path | None = None
        if isinstance(data, (str, os.PathLike)):
            self.path = check_input_file(data, f"{name} file")
            try:
                mm = np.load(self.path, mmap_mode="r", allow_pickle=False)
            except (ValueError, EOFError) as e:  # EOFError: an empty (0-byte) file
                raise BadInputError(f"{name}: {self.path} is not a readable .npy file "
                                    f"({e or 'it is empty'})") from None
            if mm.ndim != 2 or not mm.flags.c_contiguous or mm.dtype.kind != "f":
                raise BadInputError(f"{name}: {self.path} must hold a C-order 2-D float array, got {mm.dtype} {mm.shape}")
            self.shape, self.dtype, self._offset = mm.shape, mm.dtype, mm.offset
            del mm  # header only: rows are read with positioned reads
            self._array = None
        else:
            a = np.asarray(data)
            if a.ndim != 2:
                raise BadInputError(f"{name} must be a 2-D array (sentences x dimensions), got shape {a.shape}")
            self.shape, self.dtype, self._array = a.shape, a.dtype, a
        if self.shape[0] == 0:
            raise BadInputError(f"{name} is empty (0 sentences)")

    def __len__(self) -> int:
        return self.shape[0]

    def raw(self, start: int, stop: int) -> np.ndarray:
        if self._array is not None:
            return self._array[start:stop]
        row = self.shape[1] * self.dtype.itemsize
        out = np.empty((stop - start, self.shape[1]), dtype=self.dtype)
        with open(self.path, "rb") as f:
            f.seek(self._offset + start * row)
            if f.readinto(memoryview(out).cast("B")) != out.nbytes:
                raise BadInputError(f"{self.name}: {self.path} is shorter than its header says")
        return out

    def normalized(self, start: int, stop: int) -> np.ndarray:
        """float32 unit rows; normalisation works row by row, so a slice equals the whole's slice."""
        a = self.raw(start, stop)
        try:
            return normalize(a, self.name)
        except BadInputError:
            a = np.asarray(a, dtype=np.float64)
            bad = np.flatnonzero(~np.isfinite(a).all(axis=1) | ~(np.abs(a).sum(axis=1) > 0))
            raise BadInputError(f"{self.name} row {start + int(bad[0])} is all-zero or has NaN/inf values; "
                                "cosine is undefined") from None

    def fingerprint(self, chunk_bytes: int = 64 << 20) -> str:
        """sha256 of shape, dtype and every value: a resumed run must see the very same input.
        Every row is checked on the way (NaN/inf, all-zero), so bad input fails before any write.
        Rows are read ``chunk_bytes`` at a time (the hash is the same for any chunking)."""
        h = hashlib.sha256(f"{self.shape}|{self.dtype.str}".encode())
        chunk_rows = max(1, min(65536, chunk_bytes // max(1, self.shape[1] * self.dtype.itemsize)))
        for start in range(0, len(self), chunk_rows):
            a = np.ascontiguousarray(self.raw(start, min(len(self), start + chunk_rows)))
            bad = ~np.isfinite(a).all(axis=1) | ~(a != 0).any(axis=1)
            if bad.any():
                raise BadInputError(f"{self.name} row {start + int(np.flatnonzero(bad)[0])} is all-zero or has "
                                    f"NaN/inf values ({int(bad.sum())} such row(s) here); cosine is undefined")
            h.update(a.tobytes())
        return h.hexdigest()[:32]


@dataclass(frozen=True)
class MiningPlan:
    n_src: int
    n_tgt: int
    dim: int
    k: int
    shard_rows: int
    tile_cols: int
    max_memory: int
    est_peak_bytes: int  # the engine's own arrays at their peak; the interpreter comes on top

    @property
    def n_shards(self) -> int:
        return -(-self.n_src // self.shard_rows)


def _fixed_bytes(n_src: int, n_tgt: int, k: int) -> int:
    # Final top-k both ways (float64 + int64), the margin scores, and the merge temporaries
    # (concatenation + lexsort of two (n, k) partials), plus one shard's backward partial.
    per = k * (8 + 8)
    return 3 * (n_src + n_tgt) * per + 3 * n_tgt * per


def _work_bytes(shard_rows: int, tile_cols: int, dim: int, k: int) -> int:
    # raw (up to float64) + normalised copies of a shard and a tile, the GEMM block (since 0.10 an
    # upper bound: the threads' GEMM tiles of ``knn.both_tiled`` hold at most a shard x tile block),
    # the selection's per-column scratch for a tile, and the shard's forward merge state.
    return (12 * (shard_rows + tile_cols) * dim + BLOCK_BYTES_PER_VALUE * shard_rows * tile_cols
            + COLUMN_BYTES_PER_K * k * tile_cols + 4 * shard_rows * k * 16)


# Selection on a GPU: the shard x tile block and what the selection makes of it live on the device:
# the float32 block, a bool mask per comparison and topk's copy of the block along its columns.
DEVICE_BYTES_PER_VALUE = 12
DEVICE_MEMORY_SHARE = 0.5  # of the device memory free when the run is planned
MAX_SHARD_ROWS = 65536


def device_block_values(cfg: EngineConfig) -> int | None:
    """How many GEMM values a shard x tile block may hold on the engine's GPU, from its free memory;
    None when the block is host memory (the CPU engine, or selection through torch's CPU device),
    counted in ``--max-memory``."""
    if not cfg.selects_on_device():
        return None
    device = CandidateGemm(cfg).device
    if device.type != "cuda":
        return None
    import torch

    free, _ = torch.cuda.mem_get_info(device)
    return int(free * DEVICE_MEMORY_SHARE) // DEVICE_BYTES_PER_VALUE


def _host_bytes_on_device(shard_rows: int, tile_cols: int, dim: int, k: int) -> int:
    # what a shard still holds on the host when its blocks live on the device: raw and normalised
    # copies of the shard and the tile, the forward merge state and its concatenation per tile
    return 12 * (shard_rows + tile_cols) * dim + 3 * shard_rows * k * 16 + tile_cols * k * 16


def _plan_on_device(n_src: int, n_tgt: int, dim: int, k: int, budget: int, fixed: int, device_values: int,
                    shard_rows: int | None, tile_cols: int | None) -> tuple[int, int, int]:
    """(shard rows, tile columns, host bytes) when the blocks live on a GPU holding ``device_values``
    of them: the largest shard (up to ``MAX_SHARD_ROWS``), then the widest tile the device holds, both
    halved while the host's part does not fit ``budget``."""
    rows = shard_rows or min(n_src, MAX_SHARD_ROWS)
    while not tile_cols and rows > 256 and device_values // rows < min(256, n_tgt):
        rows //= 2
    tile = tile_cols or max(1, min(n_tgt, device_values // rows))
    while fixed + _host_bytes_on_device(rows, tile, dim, k) > budget and (not tile_cols and tile > 256
                                                                          or not shard_rows and rows > 256):
        if not tile_cols and tile > 256:
            tile //= 2
        else:
            rows //= 2
    return rows, tile, fixed + _host_bytes_on_device(rows, tile, dim, k)


def plan_mining(n_src: int, n_tgt: int, dim: int, k: int, max_memory: int | str,
                shard_rows: int | None = None, tile_cols: int | None = None,
                device_values: int | None = None) -> MiningPlan:
    """Largest shard and tile that keep the engine's arrays under ``max_memory``; with
    ``device_values`` (``device_block_values``: selection on a GPU) the block is the GPU's, sized by
    its memory, and ``max_memory`` bounds what stays on the host."""
    budget = parse_memory(max_memory)
    fixed = _fixed_bytes(n_src, n_tgt, k)
    if device_values is not None:
        rows, tile, need = _plan_on_device(n_src, n_tgt, dim, k, budget, fixed, device_values, shard_rows, tile_cols)
        if need > budget:
            raise BadInputError(f"--max-memory {format_bytes(budget)} is too small for {n_src} x {n_tgt} sentences "
                                f"(d={dim}, k={k}) even with the blocks on the GPU: the top-k results alone need "
                                f"{format_bytes(fixed)}; give at least {format_bytes(need * 1.25)}")
        return MiningPlan(n_src, n_tgt, dim, k, int(rows), int(tile), budget, int(need))
    work = budget - fixed
    tile = tile_cols or min(n_tgt, 32768)
    if shard_rows is None:
        # Largest shard for this tile; shrink the tile when even 256 rows do not fit.
        while True:
            rows = ((work - 12 * tile * dim - COLUMN_BYTES_PER_K * k * tile)
                    // (BLOCK_BYTES_PER_VALUE * tile + 12 * dim + 64 * k))
            if rows >= min(256, n_src) or tile <= 256 or tile_cols:
                break
            tile //= 2
        shard_rows = int(min(n_src, rows, MAX_SHARD_ROWS))
    need = fixed + _work_bytes(max(1, shard_rows), tile, dim, k)
    if shard_rows < 1 or need > budget:
        least = fixed + _work_bytes(1, min(tile, 256), dim, k)
        raise BadInputError(f"--max-memory {format_bytes(budget)} is too small for {n_src} x {n_tgt} sentences "
                            f"(d={dim}, k={k}): the top-k results alone need {format_bytes(fixed)}; "
                            f"give at least {format_bytes(least * 1.25)}")
    return MiningPlan(n_src, n_tgt, dim, k, int(shard_rows), int(tile), budget, int(need))


@dataclass(frozen=True)
class MiningResult:
    knn: MarginKNN
    plan: MiningPlan
    shards_computed: int  # this run
    shards_reused: int  # found complete on disk (resumed)


RESULT_ARRAYS = ("fwd_sim", "fwd_idx", "fwd_score", "bwd_sim", "bwd_idx", "bwd_score")  # <out>/<name>.npy


def result_paths(out: str | os.PathLike) -> list[Path]:
    """The files a run writes directly in ``out`` (its arrays and manifest; the shards under ``shards/``)."""
    return [Path(out) / f"{name}.npy" for name in RESULT_ARRAYS] + [Path(out) / "manifest.json"]


def _shard_paths(out: Path, i: int) -> dict[str, Path]:
    stem = out / "shards" / f"shard-{i:05d}"
    return {key: Path(f"{stem}.{key}.npy") for key in ("fwd_sim", "fwd_idx", "bwd_sim", "bwd_idx")} | {
        "done": Path(f"{stem}.done.json")}


def _shard_rows(plan: MiningPlan, i: int) -> list[int]:
    return [i * plan.shard_rows, min(plan.n_src, (i + 1) * plan.shard_rows)]


def shard_is_valid(out: Path, plan: MiningPlan, i: int) -> bool:
    """Whether shard i is complete on disk: a marker for these rows and four files whose sha256
    match the marker. Anything else (no marker, an old marker without checksums, a truncated or
    altered file) means the shard is computed again."""
    paths = _shard_paths(out, i)
    if not paths["done"].is_file():
        return False
    try:
        marker = json.loads(paths["done"].read_text(encoding="utf-8"))
        sums = marker["sha256"]
        ok = marker.get("rows") == _shard_rows(plan, i) and all(
            file_sha256(paths[key]) == sums[key] for key in ("fwd_sim", "fwd_idx", "bwd_sim", "bwd_idx"))
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        ok = False
    if not ok:
        log.warning("%s: shard %d is incomplete or does not match its checksums; computing it again", out, i)
    return ok


def compute_shard(src: RowSource, tgt: RowSource, plan: MiningPlan, i: int,
                  config: EngineConfig | None = None) -> dict[str, np.ndarray]:
    """Exact forward top-k of shard i's rows over all targets, and all targets' exact top-k over
    shard i's rows."""
    from . import kernels

    cfg = config or EngineConfig()
    threads = cfg.n_threads()
    a, b = _shard_rows(plan, i)
    xs = src.normalized(a, b)
    kf, kb = plan.k, min(plan.k, b - a)
    bound = gemm_error(plan.dim, UNIT_NORM, UNIT_NORM)
    fwd_sim = fwd_idx = None
    bwd_sim = np.full((plan.n_tgt, kb), -np.inf)
    bwd_idx = np.full((plan.n_tgt, kb), -1, np.int64)
    on_device = cfg.selects_on_device()
    lists = None if on_device else kernels.row_lists(b - a, kf, threads)
    if on_device:
        import torch

        from .device import device_topk_both

        device = CandidateGemm(cfg).device  # (its checks of torch's float32 products hold for device selection too)
        xs_on_device = torch.from_numpy(xs).to(device)  # once a shard, not once a tile
    for c in range(0, plan.n_tgt, plan.tile_cols):
        d = min(plan.n_tgt, c + plan.tile_cols)
        yt = tgt.normalized(c, d)
        # The tile's columns start empty in this shard: their top-k is over the shard's rows only.
        if not on_device:  # the in-memory engine's per-thread GEMM tiles (within the block the memory model
            # counts); the rows' lists carry over from target tile to target tile
            both_tiled_update(xs, yt, 2 * bound, bound, lists, bwd_sim[c:d], bwd_idx[c:d], cfg, col_offset=c)
        else:  # the shard x tile block stays on the device; only candidates come back
            vals, idx, bwd_sim[c:d], bwd_idx[c:d] = device_topk_both(xs_on_device, yt, kf, kb, bound, b - a, device)
            idx[idx >= 0] += c
            if fwd_sim is None:
                fwd_sim, fwd_idx = vals, idx
            else:  # exact values in a total order: the merge does not depend on how targets were tiled
                fwd_sim, fwd_idx = kernels.merge_topk(np.concatenate([fwd_sim, vals], 1),
                                                      np.concatenate([fwd_idx, idx], 1), kf)
    if lists is not None:
        fwd_sim, fwd_idx = kernels.merge_row_lists(lists)
    bwd_idx += a
    return {"fwd_sim": np.ascontiguousarray(fwd_sim), "fwd_idx": np.ascontiguousarray(fwd_idx),
            "bwd_sim": bwd_sim, "bwd_idx": bwd_idx}


def run_shard(src: RowSource, tgt: RowSource, plan: MiningPlan, out: Path, config: EngineConfig | None,
              i: int) -> int:
    """Compute shard i and write it: its four arrays atomically, then its ``done`` marker with their
    sha256. A pure function of its arguments (picklable), so a shard can run in another process
    or on another node that sees ``out``."""
    paths = _shard_paths(out, i)
    paths["done"].unlink(missing_ok=True)
    arrays = compute_shard(src, tgt, plan, i, config)
    for key, arr in arrays.items():
        atomic_save_npy(paths[key], arr)
    atomic_write_json(paths["done"], {"shard": i, "rows": _shard_rows(plan, i),
                                      "sha256": {key: file_sha256(paths[key]) for key in arrays}})
    return i


def mine(
    src: np.ndarray | str | os.PathLike,
    tgt: np.ndarray | str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    margin: str = DEFAULT_MARGIN,
    k: int = 4,
    max_memory: int | str = "4GB",
    max_shards: int | None = None,
    keep_shards: bool = True,
    progress: Callable[[int, int], None] | None = None,
    config: EngineConfig | None = None,
    executor=None,
) -> MiningResult | None:
    """Exact margin kNN of src over tgt and tgt over src, sharded on disk under ``out_dir``.

    Rerunning with the same inputs and k resumes: complete shards are reused (their layout comes
    from the first run's manifest, whatever ``max_memory`` and ``config`` say now). ``max_shards``
    computes at most that many new shards and returns None when work is left (benchmarks,
    time-boxed jobs). ``config`` (threads, candidate GEMM, the layout: ``mining_shard_rows``,
    ``mining_tile_cols``, else the largest that fit ``max_memory``) changes only the speed.
    ``executor`` (anything with
    ``map(fn, items)`` in order, e.g. ``xsimpp.distributed.ray_backend.RayExecutor`` or a
    ``ProcessPoolExecutor``) runs the shards that are not complete as independent tasks (``run_shard``);
    the manifest, the markers and the final merge stay here, so resume rules and outputs are the
    same. Result files: ``fwd_idx.npy``, ``fwd_score.npy``,
    ``bwd_idx.npy``, ``bwd_score.npy`` (+ the cosines ``fwd_sim.npy``/``bwd_sim.npy``), float64
    scores and similarities, int64 indices.
    """
    check_margin(margin)
    s, t = RowSource(src, "source embeddings"), RowSource(tgt, "target embeddings")
    if s.shape[1] != t.shape[1]:
        raise BadInputError(f"source and target embeddings differ in dimension ({s.shape[1]} vs {t.shape[1]})")
    kk = 1 if margin == "absolute" else k
    check_k(kk, len(t), "target set")
    check_k(kk, len(s), "source set")
    out = Path(out_dir)
    # Every input row is read and checked here (fingerprint), before anything is written.
    ident = {"format": FORMAT_VERSION, "src": s.fingerprint(), "tgt": t.fingerprint(), "k": kk,
             "n_src": len(s), "n_tgt": len(t), "dim": s.shape[1]}
    plan = _resume_or_plan(out, ident, max_memory, config or EngineConfig())
    computed = reused = 0
    todo = []
    for i in range(plan.n_shards):
        if shard_is_valid(out, plan, i):
            reused += 1
        elif executor is not None:
            todo.append(i)
            continue
        else:
            if max_shards is not None and computed >= max_shards:
                return None
            run_shard(s, t, plan, out, config, i)
            computed += 1
        if progress:
            progress(reused + computed, plan.n_shards)
    if todo:
        run = todo if max_shards is None else todo[:max_shards]
        for _ in executor.map(functools.partial(run_shard, s, t, plan, out, config), run):
            computed += 1
            if progress:
                progress(reused + computed, plan.n_shards)
        if len(run) < len(todo):
            return None
    knn = _finish(out, plan, margin)
    if not keep_shards:
        for i in range(plan.n_shards):
            for p in _shard_paths(out, i).values():
                p.unlink(missing_ok=True)
    return MiningResult(knn, plan, computed, reused)


def _resume_or_plan(out: Path, ident: dict, max_memory: int | str, cfg: EngineConfig) -> MiningPlan:
    """The layout of a run under ``out``: the first run's (its manifest), so that a resumed run
    reuses its shards whatever it is given now; else a new plan, written to the manifest before
    any shard. A manifest of other inputs or settings is refused."""
    manifest_path = out / "manifest.json"
    if manifest_path.is_file():
        try:
            old = json.loads(manifest_path.read_text(encoding="utf-8"))
            old_ident, old_plan = old["ident"], MiningPlan(**old["plan"])
        except (ValueError, KeyError, TypeError, RecursionError) as e:
            log.warning("%s: unreadable manifest (%s); starting afresh (shards are reused only where they verify)",
                        out, e)
        else:
            if old_ident != ident:
                raise BadInputError(f"{out} holds a mining run of other inputs or settings; use a new --out folder "
                                    "or delete it")
            _check_plan(manifest_path, old_plan, ident)
            log.info("resuming %s: %d-row shards", out, old_plan.shard_rows)
            return old_plan
    n_src, n_tgt, dim, k = ident["n_src"], ident["n_tgt"], ident["dim"], ident["k"]
    plan = plan_mining(n_src, n_tgt, dim, k, max_memory, cfg.mining_shard_rows, cfg.mining_tile_cols,
                       device_block_values(cfg))
    atomic_write_json(manifest_path, {"ident": ident, "plan": asdict(plan)})
    return plan


def _check_plan(manifest_path: Path, plan: MiningPlan, ident: dict) -> None:
    """A resumed run's layout as its manifest states it, checked against the inputs before any
    shard is read: an edited manifest (shard_rows 0 or -7, k 2 for a k-4 run) is one sentence, not
    a ZeroDivisionError or a broadcast error deep inside the merge."""
    for name, value in asdict(plan).items():
        least = 0 if name == "est_peak_bytes" else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise BadInputError(f"{manifest_path} says {name} = {value!r}, which no mining run writes (it was edited "
                                "or damaged); delete it to start afresh (shards are reused where they verify)")
    for name in ("n_src", "n_tgt", "dim", "k"):
        if getattr(plan, name) != ident[name]:
            raise BadInputError(f"{manifest_path} says {name} = {getattr(plan, name)} in its plan but {ident[name]} "
                                "for its inputs (it was edited or damaged); delete it to start afresh (shards are "
                                "reused where they verify)")


def _finish(out: Path, plan: MiningPlan, margin: str) -> MarginKNN:
    from .kernels import merge_topk

    fwd_sim = np.empty((plan.n_src, plan.k))
    fwd_idx = np.empty((plan.n_src, plan.k), np.int64)
    bwd_sim = bwd_idx = None
    for i in range(plan.n_shards):
        p = _shard_paths(out, i)
        a, b = _shard_rows(plan, i)
        fwd_sim[a:b], fwd_idx[a:b] = np.load(p["fwd_sim"]), np.load(p["fwd_idx"])
        vs, vi = np.load(p["bwd_sim"]), np.load(p["bwd_idx"])
        # The merge orders by (exact value desc, index asc): shards may arrive in any order.
        if bwd_sim is None:
            bwd_sim, bwd_idx = vs, vi
        else:
            bwd_sim, bwd_idx = merge_topk(np.concatenate([bwd_sim, vs], 1), np.concatenate([bwd_idx, vi], 1), plan.k)
    knn = margin_scores(TopK(fwd_sim, fwd_idx, bwd_sim, bwd_idx), margin)
    for name in RESULT_ARRAYS:
        atomic_save_npy(out / f"{name}.npy", np.ascontiguousarray(getattr(knn, name)))
    return knn
