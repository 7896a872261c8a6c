"""Selection on the GEMM's device (``engine.device``) equals the CPU kernels and the contract's
reference, tie for tie: on torch's CPU device everywhere, and on CUDA where a GPU is present (the
device string is the only difference). Needs no conftest fixture, so it also runs alone
(``pytest --noconftest``) on a machine with a GPU and no data."""

from __future__ import annotations

import numpy as np
import pytest

from xsimpp.engine import EngineConfig, margin_knn, normalize, topk_both
from xsimpp.engine.exact import reference_topk

torch = pytest.importorskip("torch")

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
FIELDS = ("fwd_sim", "fwd_idx", "bwd_sim", "bwd_idx", "bwd_cols")


def data(seed=0, n_x=300, n_y=450, d=32):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_x, d)).astype(np.float32)
    y = rng.standard_normal((n_y, d)).astype(np.float32)
    y[50:60] = y[4]  # exact ties among targets and among sources
    x[9] = x[10]
    y[100] = x[3]  # a target equal to a source: similarity 1
    return normalize(x), normalize(y)


def same(a, b):
    for f in FIELDS:
        va, vb = getattr(a, f), getattr(b, f)
        assert (va is None) == (vb is None), f
        if va is not None:
            assert np.array_equal(va, vb), f


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rows", [None, 64, 7, 2])  # one block; several; blocks with fewer rows than k
@pytest.mark.parametrize("k_fwd, k_bwd", [(4, 4), (1, 1), (10, 3), (4, None), (2, 5)])
def test_equals_the_cpu_kernels_and_the_reference(device, rows, k_fwd, k_bwd):
    x, y = data()
    block = (rows or 65536) * len(y) * 4
    cpu = topk_both(x, y, k_fwd=k_fwd, k_bwd=k_bwd, unit=True, config=EngineConfig(block_bytes=block))
    dev = topk_both(x, y, k_fwd=k_fwd, k_bwd=k_bwd, unit=True,
                    config=EngineConfig(block_bytes=block, gemm="torch", device=device, selection="device"))
    same(cpu, dev)
    fs, fi, bs, bi = reference_topk(x, y, k_fwd, k_bwd)
    assert np.array_equal(dev.fwd_sim, fs) and np.array_equal(dev.fwd_idx, fi)
    if k_bwd:
        assert np.array_equal(dev.bwd_sim, bs) and np.array_equal(dev.bwd_idx, bi)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
def test_margins_and_forward_scope_equal(device, margin):
    x, y = data(1, 200, 900)
    cfg = EngineConfig(block_bytes=50 * 900 * 4, gemm="torch", device=device, selection="device")
    for backward in (False, True):
        a = margin_knn(x, y, margin=margin, k=4, backward=backward, unit=True)
        b = margin_knn(x, y, margin=margin, k=4, backward=backward, unit=True, config=cfg)
        for f in ("fwd_idx", "fwd_score", "bwd_idx", "bwd_score", "avg_x"):
            va, vb = getattr(a, f), getattr(b, f)
            assert (va is None and vb is None) or np.array_equal(va, vb), f
        assert (a.avg_y is None and b.avg_y is None) or np.array_equal(a.avg_y, b.avg_y, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shard_rows, tile_cols", [(None, None), (64, 100), (3, 450)])
def test_sharded_mining_selects_on_the_device_with_the_same_bytes(tmp_path, device, shard_rows, tile_cols):
    """``xsimpp mine`` with device selection: every shard x tile block stays on the device, and the
    mined arrays are the CPU kernels' (shards with fewer rows than k included)."""
    from xsimpp.engine.mining import mine

    x, y = data(2, 250, 450)
    layout = {"mining_shard_rows": shard_rows, "mining_tile_cols": tile_cols}
    cpu = mine(x, y, tmp_path / "cpu", k=4, config=EngineConfig(**layout))
    dev = mine(x, y, tmp_path / "dev", k=4, config=EngineConfig(gemm="torch", device=device, selection="device", **layout))
    for f in ("fwd_idx", "fwd_sim", "fwd_score", "bwd_idx", "bwd_sim", "bwd_score"):
        assert np.array_equal(getattr(cpu.knn, f), getattr(dev.knn, f)), f
    arrays = sorted(p.name for p in (tmp_path / "cpu").glob("*.npy"))
    assert arrays and arrays == sorted(p.name for p in (tmp_path / "dev").glob("*.npy"))
    assert all((tmp_path / "cpu" / n).read_bytes() == (tmp_path / "dev" / n).read_bytes() for n in arrays)


@pytest.mark.parametrize("device", DEVICES)
def test_mining_planned_by_the_devices_memory_gives_the_same_bytes(tmp_path, device, monkeypatch):
    """The plan a GPU's memory gives (``mining.device_block_values``; forced here, small): larger
    blocks than the host budget allows, the same mined arrays."""
    from xsimpp.engine import mining

    x, y = data(3, 250, 450)
    monkeypatch.setattr(mining, "device_block_values", lambda cfg: 60 * 450 if cfg.selects_on_device() else None)
    cpu = mining.mine(x, y, tmp_path / "cpu", k=4, max_memory="64MB")
    dev = mining.mine(x, y, tmp_path / "dev", k=4, max_memory="64MB",
                      config=EngineConfig(gemm="torch", device=device, selection="device"))
    assert (dev.plan.shard_rows, dev.plan.tile_cols) == (250, 108)  # 60 x 450 values: all rows, 108 columns
    for f in ("fwd_idx", "fwd_sim", "fwd_score", "bwd_idx", "bwd_sim", "bwd_score"):
        assert np.array_equal(getattr(cpu.knn, f), getattr(dev.knn, f)), f


def test_auto_selects_on_the_device_only_off_the_cpu():
    assert not EngineConfig().selects_on_device()
    assert not EngineConfig(gemm="torch").selects_on_device()
    assert EngineConfig(gemm="torch", device="cuda").selects_on_device()
    assert not EngineConfig(gemm="torch", device="cuda", selection="cpu").selects_on_device()
    from xsimpp.errors import BadInputError

    with pytest.raises(BadInputError, match="needs gemm='torch'"):
        EngineConfig(selection="device")
    with pytest.raises(BadInputError, match="selection must be one of"):
        EngineConfig(selection="gpu")


def test_compiled_pair_similarities_equal_the_contract():
    from xsimpp.engine.exact import pair_similarity
    from xsimpp.engine.kernels import pair_similarities

    x, y = data(2, 50, 120, d=37)  # a dimension that is not a multiple of the 8 lanes
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 50, 20000), rng.integers(0, 120, 20000)
    assert np.array_equal(pair_similarities(x, y, rows, cols, threads=2), pair_similarity(x, y, rows, cols))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("d", [384, 37, 5])  # whole lanes; a tail; fewer dimensions than lanes
def test_device_rescoring_gives_the_contracts_bits(device, d):
    """The device's exact similarities (float64 products summed in the fixed lane order) are
    ``exact.pair_similarity``'s bit for bit, signed zeros included, and so the host kernels'."""
    from xsimpp.engine.device import RESCORE_CHUNK, _pair_similarities
    from xsimpp.engine.exact import pair_similarity

    rng = np.random.default_rng(d)
    x = rng.standard_normal((60, d)).astype(np.float32)
    y = rng.standard_normal((80, d)).astype(np.float32)
    x[0] = -0.0  # products of -0.0: the sum must come out +0.0 as the host's does
    y[1] = np.float32(1e-30)  # products below float32's range, exact in float64
    rows, cols = rng.integers(0, 60, RESCORE_CHUNK + 500), rng.integers(0, 80, RESCORE_CHUNK + 500)  # two chunks
    rows[:3], cols[:3] = 0, (0, 1, 2)
    got = _pair_similarities(torch, torch.from_numpy(x).to(device), torch.from_numpy(y).to(device),
                             torch.from_numpy(rows).to(device), torch.from_numpy(cols).to(device)).cpu().numpy()
    want = pair_similarity(x, y, rows, cols)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
    assert not np.signbit(got[:3]).any()


def test_the_scaling_page_quotes_the_committed_gpu_run():
    """docs/scaling.md's GPU table and ratios are benchmarks/results/device_selection_h200.json's."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "scaling.md").read_text(encoding="utf-8")
    run = json.loads((root / "benchmarks" / "results" / "device_selection_h200.json").read_text(encoding="utf-8"))
    rows = {r["shape"]: r for r in run["runs"]}
    for shape, label in (("1012x45000x384", "1012 x 45000 (xsim++)"), ("4096x65536x384", "4096 x 65536")):
        r = rows[shape]
        assert r["identical"]
        assert (f"| {label} | {r['numpy gemm, cpu selection s']:.3f} s | {r['torch cuda gemm, cpu selection s']:.3f} s "
                f"| {r['torch cuda gemm, device selection s']:.3f} s |") in page
    a, b = rows["1012x45000x384"], rows["4096x65536x384"]
    assert f"{a['device selection speed-up over cpu selection']}x and {b['device selection speed-up over cpu selection']}x" in page
    assert (f"{a['device selection speed-up over numpy engine']}x and {b['device selection speed-up over numpy engine']}x "
            "faster than the 16-core CPU engine") in page
    assert (f"at {100 * a['cpu engine share of cpu sgemm']:.0f} % and {100 * b['cpu engine share of cpu sgemm']:.0f} % "
            "of the machine's") in page
    assert f"load {run['load']}" in page and run["gpu"] == "NVIDIA H200" and run["isa"] == "AVX-512"


def test_the_scaling_page_quotes_the_committed_gpu_mining_runs():
    """docs/scaling.md's mining figures on the H200 are benchmarks/results/mine_device_h200*.json's."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = " ".join((root / "docs" / "scaling.md").read_text(encoding="utf-8").split())
    both = json.loads((root / "benchmarks" / "results" / "mine_device_h200.json").read_text(encoding="utf-8"))
    big = json.loads((root / "benchmarks" / "results" / "mine_device_h200_1m.json").read_text(encoding="utf-8"))
    assert both["identical"] and both["gpu"] == big["gpu"] == "NVIDIA H200" and big["n"] == 1_000_000
    assert (f"{both['n'] // 1000}k x {both['n'] // 1000}k in {both['cpu_s']} s on the {both['cores']}-core CPU engine "
            f"and {both['device_s']} s with the H200 ({both['speed_up']}x, every mined array identical)") in page
    assert (f"1M x 1M in {big['device_s']} s** ({big['shards']} shards, peak RSS "
            f"{big['peak_rss_bytes'] / 2**30:.2f} GiB, of which {2 * big['n'] * big['dim'] * 4 / 2**30:.2f} GiB") in page


# -- rows held on the device across searches (DeviceRows) -------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_held_rows_give_the_searches_and_xsim_of_the_arrays(device):
    from xsimpp.engine import DeviceRows, hold_rows
    from xsimpp.scoring import xsim

    rng = np.random.default_rng(3)
    x_raw = rng.standard_normal((120, 24)).astype(np.float32)
    y_raw = rng.standard_normal((400, 24)).astype(np.float32)
    y_raw[:120] = x_raw + 0.3 * rng.standard_normal((120, 24)).astype(np.float32)  # gold first
    y_raw[200:205] = y_raw[7]  # ties
    cfg = EngineConfig(block_bytes=40 * 400 * 4, gemm="torch", device=device, selection="device")
    held = hold_rows(y_raw, cfg)
    assert isinstance(held, DeviceRows) and len(held) == 400
    x, y = normalize(x_raw), normalize(y_raw)
    cpu = topk_both(x, y, k_fwd=4, k_bwd=4, unit=True)
    for xs, unit in ((x, True), (x_raw, False)):  # raw sources are normalised, as margin_knn would
        same(topk_both(xs, held, k_fwd=4, k_bwd=4, unit=unit, config=cfg), cpu)
    for margin in ("ratio", "distance", "absolute"):
        a = margin_knn(x_raw, y_raw, margin=margin, k=4, backward=True)
        b = margin_knn(x_raw, held, margin=margin, k=4, backward=True, config=cfg)
        for f in ("fwd_sim", "fwd_idx", "fwd_score", "bwd_idx", "bwd_score", "avg_x"):
            assert np.array_equal(getattr(a, f), getattr(b, f)), (margin, f)
        assert (a.avg_y is None and b.avg_y is None) or np.array_equal(a.avg_y, b.avg_y, equal_nan=True)
    errtypes = {str(j): "negative" for j in range(120, 400)}
    texts = [f"t{j}" for j in range(400)]
    want = xsim(x_raw, y_raw, k=4, tgt_text=texts, errtypes={"0": errtypes})
    got = xsim(x_raw, held, k=4, tgt_text=texts, errtypes={"0": errtypes}, config=cfg)
    assert (got.errors, got.n, got.error_types) == (want.errors, want.n, want.error_types)
    # the rows were copied: writing to the array they came from changes nothing, and the host copy is read-only
    y_raw[:] = 0
    same(topk_both(x, held, k_fwd=4, k_bwd=4, unit=True, config=cfg), cpu)
    with pytest.raises(ValueError):
        held.host[0, 0] = 1


def test_held_rows_are_refused_where_they_cannot_be_searched():
    from xsimpp.engine import DeviceRows, hold_rows
    from xsimpp.errors import BadInputError

    x, y = data(2, 20, 130)
    assert hold_rows(y, EngineConfig()) is y  # the CPU engine: nothing to hold
    held = DeviceRows(y, "cpu")
    with pytest.raises(BadInputError, match="need selection on that device"):
        topk_both(x, held, k_fwd=2, unit=True)
    with pytest.raises(BadInputError, match="not with a similarity matrix"):
        topk_both(x, held, similarity=x @ y.T, k_fwd=2, config=EngineConfig(gemm="torch", device="cpu",
                                                                           selection="device"))
    with pytest.raises(BadInputError, match="but the engine selects on"):
        topk_both(x, DeviceRows(y, "meta"), k_fwd=2, unit=True,
                  config=EngineConfig(gemm="torch", device="cpu", selection="device"))
    with pytest.raises(BadInputError, match="normalize_vectors=False"):
        margin_knn(x, held, k=2, normalize_vectors=False, config=EngineConfig(gemm="torch", device="cpu",
                                                                          selection="device"))
