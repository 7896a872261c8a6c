"""The compiled selection (numba) returns exactly what the plain sort returns, ties included, in
every way the engine and the miner call it; and ``auto`` picks it only where it pays off."""

import numpy as np
import pytest

pytest.importorskip("numba", reason="numba not installed: the compiled selection is not exercised")

from xsimpp.errors import BadInputError  # noqa: E402
from xsimpp.mining import mine  # noqa: E402
from xsimpp.scoring import jit, selection  # noqa: E402
from xsimpp.scoring.knn import l2_normalize, margin_knn, topk_both  # noqa: E402
from xsimpp.scoring.selection import ColumnTopK, resolve_select, sorted_topk  # noqa: E402
from vectors import same_topk as same  # noqa: E402
from vectors import tie_heavy  # noqa: E402


@pytest.fixture
def many_threads(monkeypatch):
    """Split even small blocks between 3 threads, so partial merges and shared state are tested."""
    monkeypatch.setattr(jit, "MIN_COLS_PER_THREAD", 7)
    monkeypatch.setattr(jit, "default_threads", lambda: 3)


@pytest.mark.parametrize("k", [1, 4, 9])
@pytest.mark.parametrize("shape", [(5, 9), (60, 90), (300, 1100), (1100, 40)])
def test_kernel_equals_sort_with_ties(k, shape, many_threads):
    rng = np.random.default_rng(sum(shape) + k)
    x, y = tie_heavy(rng, *shape, 5)
    if k > min(shape):
        return
    plain = topk_both(x, y, k_fwd=k, k_bwd=k, select="sort", backend="numpy")
    for br in (None, 1, 4, 33):  # one block, blocks smaller than k, several blocks
        same(topk_both(x, y, k_fwd=k, k_bwd=k, select="jit", block_rows=br), plain)
    fwd_only = topk_both(x, y, k_fwd=k, k_bwd=None, select="jit")
    assert fwd_only.bwd_sim is None
    assert np.array_equal(fwd_only.fwd_idx, plain.fwd_idx)
    scoped = topk_both(x, y, k_fwd=k, k_bwd=k, bwd_scope="forward", select="jit", block_rows=7)
    same(scoped, topk_both(x, y, k_fwd=k, k_bwd=k, bwd_scope="forward", select="sort", backend="numpy"))


def test_kernel_on_random_vectors_and_threads():
    rng = np.random.default_rng(0)
    x = l2_normalize(rng.standard_normal((700, 64)))
    y = l2_normalize(rng.standard_normal((9000, 64)))
    y[100:140] = y[7]  # 41 identical targets: ties far beyond k
    x[50:60] = x[3]
    plain = topk_both(x, y, k_fwd=4, k_bwd=4, select="sort", backend="numpy")
    for threads in (1, 2, 4):  # 9000 columns: 1, 2 and 4 column ranges
        block = x @ y.T
        cols = ColumnTopK(9000, 4)
        fv, fi = jit.block_topk(block, 4, cols.sim, cols.idx, 0, threads=threads)
        assert np.array_equal(fv, plain.fwd_sim) and np.array_equal(fi, plain.fwd_idx)
        assert np.array_equal(cols.sim, plain.bwd_sim) and np.array_equal(cols.idx, plain.bwd_idx)
    same(topk_both(x, y, k_fwd=4, k_bwd=4, select="jit", block_bytes=2**20), plain)  # many blocks


def test_signed_zeros_and_constant_matrix(many_threads):
    s = np.zeros((40, 300), np.float32)  # everything tied: lowest indices win both ways
    s[::2, ::3] = -0.0  # -0.0 == 0.0: a tie, not an order
    s[5] = 1.0
    top = topk_both(similarity=s, k_fwd=3, k_bwd=3, select="jit")
    assert (top.fwd_idx == [0, 1, 2]).all()
    assert (top.bwd_idx == [5, 0, 1]).all()
    same(top, topk_both(similarity=s, k_fwd=3, k_bwd=3, select="sort", backend="numpy"))


def test_k_equal_to_the_set_and_large_k(many_threads):
    rng = np.random.default_rng(5)
    x, y = tie_heavy(rng, 12, 70, 5)
    for k_fwd, k_bwd in ((70, 12), (33, 7)):
        same(topk_both(x, y, k_fwd=k_fwd, k_bwd=k_bwd, select="jit", block_rows=5),
             topk_both(x, y, k_fwd=k_fwd, k_bwd=k_bwd, select="sort", backend="numpy"))


def test_block_topk_contract():
    rng = np.random.default_rng(6)
    block = np.round(rng.standard_normal((50, 3000)).astype(np.float32), 1)
    fv, fi = jit.block_topk(block, 5, None, None)  # rows only
    pv, pi = sorted_topk(block, 5, 0, axis=1)
    assert np.array_equal(fv, pv) and np.array_equal(fi, pi)
    cols = ColumnTopK(3000, 6)
    fv, _ = jit.block_topk(block[:20], 0, cols.sim, cols.idx, 0)  # columns only, then a later block
    assert fv.shape == (20, 0)
    jit.block_topk(np.asfortranarray(block[20:]), 0, cols.sim, cols.idx, 20)  # any layout is accepted
    qv, qi = sorted_topk(block, 6, 0, axis=0)
    assert np.array_equal(cols.sim, qv) and np.array_equal(cols.idx, qi)
    assert jit.ready()


@pytest.mark.parametrize("margin", ["ratio", "absolute"])
def test_real_embeddings(real_data, margin):
    from xsimpp.datasets.flores import Flores200
    from xsimpp.encoders import create_encoder

    bt = Flores200("devtest", data_dir=real_data).bitext("fra_Latn", "eng_Latn")
    enc = create_encoder("chargram")
    x, y = enc.encode(bt.src[:400]), enc.encode(bt.tgt[:400] + bt.src[400:800])
    plain = margin_knn(x, y, margin=margin, k=4, backward=True, select="sort", backend="numpy")
    fast = margin_knn(x, y, margin=margin, k=4, backward=True, select="jit", block_rows=150)
    for f in ("fwd_idx", "fwd_score", "bwd_idx", "bwd_score"):
        assert np.array_equal(getattr(fast, f), getattr(plain, f)), f


def test_miner_with_kernel_equals_filter(tmp_path, many_threads):
    rng = np.random.default_rng(7)
    x, y = tie_heavy(rng, 230, 410, d=8)
    args = dict(margin="ratio", k=3, shard_rows=64, tile_cols=100)
    a = mine(x, y, tmp_path / "jit", select="jit", **args)
    b = mine(x, y, tmp_path / "filter", select="filter", **args)
    for f in ("fwd_idx", "fwd_score", "bwd_idx", "bwd_score"):
        assert np.array_equal(getattr(a.knn, f), getattr(b.knn, f)), f


def test_auto_takes_the_kernel_only_where_it_pays(monkeypatch):
    monkeypatch.setattr(selection, "_jit_module", None)
    monkeypatch.setattr(jit, "_ready", False)  # as in a new process
    assert resolve_select("auto", 1000 * 1000, 4) == "filter"  # cold: load cost not worth it
    assert resolve_select("auto", 2**28, 4) == "jit"
    assert resolve_select("auto", 2**28, 4, backward=False) == "filter"  # less to save forward-only
    jit.block_topk(np.zeros((2, 3), np.float32), 1, None, None)  # now loaded in this process
    assert resolve_select("auto", 2**20, 4) == "jit"
    assert resolve_select("auto", 2**20, 4, backward=False) == "filter"
    assert resolve_select("auto", 2**22, 4, backward=False) == "jit"
    assert resolve_select("auto", 2**30, 100) == "filter"  # insertion cost grows with k
    assert resolve_select("sort", 2**30, 4) == "sort"
    with pytest.raises(BadInputError, match="select must be one of"):
        resolve_select("fast", 10, 4)


def test_without_numba(monkeypatch):
    monkeypatch.setattr(selection, "jit_or_none", lambda: None)
    assert resolve_select("auto", 2**30, 4) == "filter"  # same arrays, slower: not a change of result
    with pytest.raises(BadInputError, match="select='jit' needs numba: pip install numba"):
        topk_both(np.eye(3, dtype=np.float32), np.eye(3, dtype=np.float32), k_fwd=1, k_bwd=1, select="jit")


def test_block_bytes_bounds_peak_allocation():
    import tracemalloc

    rng = np.random.default_rng(4)
    x, y = l2_normalize(rng.standard_normal((1500, 32))), l2_normalize(rng.standard_normal((20000, 32)))
    jit.block_topk(np.zeros((2, 3), np.float32), 1, None, None)  # kernel load outside the measurement
    budget = 8 * 2**20
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    top = topk_both(x, y, k_fwd=4, k_bwd=4, block_bytes=budget, select="jit")
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    results = (1500 + 20000) * 4 * 12 * 3  # top-k outputs, the columns' state and its threshold copy
    assert peak <= budget + results, (peak, budget)
    assert peak < 1500 * 20000 * 4 / 4  # the full matrix (114 MiB) was never held
    same(top, topk_both(x, y, k_fwd=4, k_bwd=4, select="sort", backend="numpy"))


def test_concurrent_callers_share_the_thread_pool_safely(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(jit, "MIN_COLS_PER_THREAD", 64)
    rng = np.random.default_rng(8)
    pairs = [tie_heavy(rng, 300, 2000, 6) for _ in range(4)]
    plain = [topk_both(x, y, k_fwd=3, k_bwd=3, select="sort", backend="numpy") for x, y in pairs]
    with ThreadPoolExecutor(4) as callers:
        fast = list(callers.map(lambda p: topk_both(*p, k_fwd=3, k_bwd=3, select="jit", block_rows=64), pairs))
    for a, b in zip(fast, plain):
        same(a, b)
