"""Sharded mining equals the in-memory engine bit for bit, resumes after a kill, honours --max-memory."""

import os
import subprocess
import sys

import numpy as np
import pytest

from xsimpp.errors import BadInputError
from xsimpp.engine import EngineConfig, margin_knn
from xsimpp.engine.mining import mine, parse_memory, plan_mining

FIELDS = ("fwd_idx", "fwd_sim", "fwd_score", "bwd_idx", "bwd_sim", "bwd_score")


def data(seed=0, n_x=300, n_y=450, d=16):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_x, d)).astype(np.float32)
    y = rng.standard_normal((n_y, d)).astype(np.float32)
    y[50:60] = y[4]  # duplicate targets and sources: exact ties
    x[9] = x[10]
    return x, y


def layout(shard_rows=None, tile_cols=None):
    """The miner's layout, as every engine setting, in an EngineConfig."""
    return EngineConfig(mining_shard_rows=shard_rows, mining_tile_cols=tile_cols)


def same(a, b):
    for f in FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
@pytest.mark.parametrize("shard_rows,tile_cols", [(None, None), (64, 100), (7, 450), (300, 3)])
def test_equals_in_memory_engine(tmp_path, margin, shard_rows, tile_cols):
    x, y = data()
    ref = margin_knn(x, y, margin=margin, k=4, backward=True)
    res = mine(x, y, tmp_path, margin=margin, config=layout(shard_rows, tile_cols))
    same(res.knn, ref)
    assert np.array_equal(np.load(tmp_path / "bwd_idx.npy"), ref.bwd_idx)


def test_files_and_resume_after_kill(tmp_path):
    x, y = data(1)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y.astype(np.float16).astype(np.float32))
    y = np.load(tmp_path / "y.npy")
    out = tmp_path / "run"
    ref = margin_knn(x, y, k=4, backward=True)
    assert mine(tmp_path / "x.npy", tmp_path / "y.npy", out, config=layout(50), max_shards=2) is None  # "killed"
    # a kill during a write leaves at most a temp file and shard arrays without their done marker
    (out / "shards" / ".shard-00002.fwd_sim.npy.123.tmp").write_bytes(b"partial")
    np.save(out / "shards" / "shard-00002.fwd_sim.npy", np.zeros((50, 4), np.float32))
    res = mine(tmp_path / "x.npy", tmp_path / "y.npy", out, max_memory="1GB", config=layout(70))  # plan is kept
    assert (res.shards_reused, res.shards_computed) == (2, 4)
    assert res.plan.shard_rows == 50
    same(res.knn, ref)
    again = mine(tmp_path / "x.npy", tmp_path / "y.npy", out)
    assert again.shards_computed == 0
    same(again.knn, ref)


def test_other_inputs_in_same_folder_are_refused(tmp_path):
    x, y = data(2)
    mine(x, y, tmp_path, config=layout(100))
    y[0, 0] += 1
    with pytest.raises(BadInputError, match="other inputs"):
        mine(x, y, tmp_path)


def test_memory_plan_and_flag():
    assert parse_memory("4GB") == 4 * 2**30 and parse_memory("512 MiB") == 512 * 2**20 and parse_memory(10) == 10
    with pytest.raises(BadInputError):
        parse_memory("lots")
    p = plan_mining(1_000_000, 1_000_000, 384, 4, "4GB")
    assert p.est_peak_bytes <= 4 * 2**30 and p.shard_rows > 1000
    small = plan_mining(1_000_000, 1_000_000, 384, 4, "1GB")
    assert small.est_peak_bytes <= 2**30 and small.shard_rows < p.shard_rows
    with pytest.raises(BadInputError, match="too small"):
        plan_mining(1_000_000, 1_000_000, 384, 4, "100MB")


def test_with_the_blocks_on_a_gpu_the_plan_is_sized_by_its_memory():
    """Selection on a GPU: the shard x tile block is the device's (``device_values`` of them), so a
    shard is as large as allowed and a tile as wide as the device holds; ``--max-memory`` bounds only
    what stays on the host (the 1M x 1M run of 39 shards x 31 tiles at 4GB becomes 16 x 20 on a GPU
    with 75 GiB free)."""
    from xsimpp.engine.mining import DEVICE_BYTES_PER_VALUE, MAX_SHARD_ROWS

    values = int(75 * 2**30 * 0.5) // DEVICE_BYTES_PER_VALUE
    host = plan_mining(1_000_000, 1_000_000, 384, 4, "4GB")
    gpu = plan_mining(1_000_000, 1_000_000, 384, 4, "4GB", device_values=values)
    assert gpu.shard_rows == MAX_SHARD_ROWS and gpu.shard_rows * gpu.tile_cols <= values
    calls = lambda p: p.n_shards * -(-p.n_tgt // p.tile_cols)
    assert (host.n_shards, calls(host)) == (39, 39 * 31) and (gpu.n_shards, calls(gpu)) == (16, 16 * 20)
    assert gpu.est_peak_bytes <= 4 * 2**30
    # the host's part still bounds it: a small budget narrows the tile, not the device's block alone
    tight = plan_mining(1_000_000, 1_000_000, 384, 4, "900MB", device_values=values)
    assert tight.est_peak_bytes <= 900 * 2**20 and tight.tile_cols < gpu.tile_cols
    # a small device: shards shrink until a tile of 256 columns fits
    small = plan_mining(100_000, 100_000, 384, 4, "4GB", device_values=256 * 1000)
    assert small.shard_rows * small.tile_cols <= 256 * 1000 and small.tile_cols >= 256
    with pytest.raises(BadInputError, match="even with the blocks on the GPU"):
        plan_mining(1_000_000, 1_000_000, 384, 4, "100MB", device_values=values)


PEAK_PROBE = """
import sys, numpy as np
from pathlib import Path
from xsimpp.engine import EngineConfig
from xsimpp.engine.mining import mine
tmp = Path(sys.argv[1])
mine(np.ones((8, 32), np.float32), np.ones((9, 32), np.float32), tmp / "warm")  # numba kernels loaded first
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")  # reset the peak resident set to the current one
before = rss("VmRSS:")
tile = int(sys.argv[3]) or None
res = mine(tmp / "x.npy", tmp / "y.npy", tmp / "out", max_memory=int(sys.argv[2]),
           config=EngineConfig(mining_tile_cols=tile))
print(res.plan.n_shards, rss("VmHWM:") - before)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's /proc peak-RSS reset")
@pytest.mark.parametrize("tile_cols", [0, 3000])  # one tile; tiles of 3000 + a narrower last one
def test_peak_memory_under_flag(tmp_path, tile_cols):
    """The process's peak resident memory while mining (numpy and the compiled kernels' scratch
    alike) stays under --max-memory, although the full similarity matrix would be 4x that.

    glibc's malloc keeps memory freed in a worker thread's arena resident (its mmap threshold
    grows after the first free): a fixed threshold makes the resident set track what the engine
    holds, which is what --max-memory bounds; the allocator's retention (~10 MiB here) is not."""
    rng = np.random.default_rng(5)
    np.save(tmp_path / "x.npy", rng.standard_normal((3000, 32)).astype(np.float32))
    np.save(tmp_path / "y.npy", rng.standard_normal((8000, 32)).astype(np.float32))
    budget = 24 * 2**20  # the full 3000 x 8000 block alone would be 92 MiB
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}
    done = subprocess.run([sys.executable, "-c", PEAK_PROBE, str(tmp_path), str(budget), str(tile_cols)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    n_shards, peak = (int(v) for v in done.stdout.split())
    assert n_shards > 1
    assert peak <= budget, (peak, budget)


def test_outputs_are_byte_identical_for_any_memory_budget(tmp_path):
    from xsimpp.cli import main

    x, y = data(6, n_x=2000, n_y=3000, d=64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    outs = []
    for budget in ("4MB", "64MB", "4GB"):
        out = tmp_path / f"out-{budget}"
        assert main(["mine", "--src-emb", str(tmp_path / "x.npy"), "--tgt-emb", str(tmp_path / "y.npy"), "--out",
                     str(out), "--max-memory", budget, "--no-progress"]) == 0
        outs.append(out)
    assert len(list((outs[0] / "shards").glob("*.done.json"))) > 1  # the small budget did shard the work
    for name in ("fwd_idx.npy", "fwd_score.npy", "fwd_sim.npy", "bwd_idx.npy", "bwd_score.npy", "bwd_sim.npy"):
        blobs = {(o / name).read_bytes() for o in outs}
        assert len(blobs) == 1, name


def test_bad_rows_named_with_global_index(tmp_path):
    x, y = data(3)
    y[333] = 0
    with pytest.raises(BadInputError, match="row 333"):
        mine(x, y, tmp_path, config=layout(100, 100))


def test_cli(tmp_path, capsys):
    from xsimpp.cli import main

    x, y = data(4)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    assert main(["mine", "--src-emb", str(tmp_path / "x.npy"), "--tgt-emb", str(tmp_path / "y.npy"), "--out",
                 str(tmp_path / "o"), "--max-memory", "64MB", "--delete-shards", "--no-progress"]) == 0
    assert "computed" in capsys.readouterr().out
    assert np.array_equal(np.load(tmp_path / "o" / "fwd_idx.npy"), margin_knn(x, y, k=4).fwd_idx)
    assert not list((tmp_path / "o" / "shards").glob("*.npy"))


def test_layout_knobs_reach_the_engine_and_are_checked(tmp_path, capsys):
    """--shard-rows / --tile-cols (the API's shard_rows / tile_cols) are the engine's layout; one given
    twice, differently, or out of range is one sentence."""
    import xsimpp
    from xsimpp.cli import main

    x, y = data(5)
    res = xsimpp.mine(x, y, tmp_path / "api", shard_rows=64, tile_cols=100)
    assert (res.plan.shard_rows, res.plan.tile_cols, res.shards_computed) == (64, 100, 5)
    same(res.knn, mine(x, y, tmp_path / "engine", config=layout(64, 100)).knn)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    assert main(["mine", "--src-emb", str(tmp_path / "x.npy"), "--tgt-emb", str(tmp_path / "y.npy"), "--out",
                 str(tmp_path / "cli"), "--shard-rows", "64", "--tile-cols", "100", "--no-progress"]) == 0
    assert "5 shard(s) of 64 rows" in capsys.readouterr().out
    with pytest.raises(BadInputError, match="mining_shard_rows is 10 but the run asks for 64"):
        xsimpp.mine(x, y, tmp_path / "twice", shard_rows=64, engine=layout(10))
    with pytest.raises(BadInputError, match="--tile-cols must be a positive integer, got 0"):
        xsimpp.mine(x, y, tmp_path / "zero", tile_cols=0)
    with pytest.raises(BadInputError, match="mine reads embeddings, not an encoder: save"):
        xsimpp.mine(x, y, tmp_path / "save", save=True)
    with pytest.raises(BadInputError, match="mining_tile_cols must be an integer from 1"):
        EngineConfig(mining_tile_cols=0)
