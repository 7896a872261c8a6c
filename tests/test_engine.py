"""The exactness contract (xsimpp.engine.exact): every fast path returns exactly what the plain
definition returns — the whole exact similarity matrix and a stable sort — whatever the block
size, thread split, backward scope, candidate GEMM or ties; and the compiled routines equal their
plain numpy definitions."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from vectors import tie_heavy
from xsimpp.engine import EngineConfig, kernels, margin_knn, normalize, pair_similarity as compiled_pair_similarity, topk_both
from xsimpp.engine.exact import (exact_similarity, gemm_error, lane_dot, max_norm, pair_similarity, reference_normalize,
                                 reference_topk)
from xsimpp.engine.knn import margin_scores, tile_plan
from xsimpp.errors import BadInputError


def assert_reference(top, x, y, k_fwd, k_bwd, similarity=None):
    """``top`` equals the contract's definition, array for array (values and dtypes included)."""
    fs, fi, bs, bi = reference_topk(x, y, k_fwd, k_bwd, similarity)
    assert top.fwd_sim.dtype == np.float64 and top.fwd_idx.dtype == np.int64
    assert np.array_equal(top.fwd_sim, fs) and np.array_equal(top.fwd_idx, fi), "forward"
    if k_bwd is None:
        assert top.bwd_sim is None
        return
    cols = slice(None) if top.bwd_cols is None else top.bwd_cols
    assert np.array_equal(top.bwd_sim, bs[cols]) and np.array_equal(top.bwd_idx, bi[cols]), "backward"


@pytest.fixture
def many_threads(monkeypatch):
    """Split even small blocks between threads, so partial merges and shared state are exercised."""
    monkeypatch.setattr(kernels, "MIN_COLS_PER_THREAD", 7)
    monkeypatch.setattr(kernels, "MIN_VALUES_PER_THREAD", 16)


# --- the plain routines and their compiled twins ---------------------------------------------------


@pytest.mark.parametrize("d", [1, 3, 8, 9, 17, 384, 1023])
def test_compiled_routines_equal_their_definitions(d):
    rng = np.random.default_rng(d)
    a = (rng.standard_normal((300, d)) * rng.choice([1e-20, 1, 1e20], size=(300, 1))).astype(np.float32)
    a[7] = a[3]  # equal rows give equal unit rows
    unit = normalize(a)
    assert np.array_equal(unit, reference_normalize(a)) and unit.dtype == np.float32 and unit.flags.c_contiguous
    assert np.array_equal(unit[7], unit[3])
    b = normalize(rng.standard_normal((50, d)).astype(np.float32))
    # the kernels' exact similarity (through the engine) equals lane_dot of the same rows
    top = topk_both(unit, b, k_fwd=min(5, len(b)), k_bwd=None, unit=True)
    rows = np.repeat(np.arange(len(unit)), top.fwd_idx.shape[1])
    assert np.array_equal(top.fwd_sim.reshape(-1), pair_similarity(unit, b, rows, top.fwd_idx.reshape(-1)))
    assert np.array_equal(lane_dot(unit[:5], unit[:5]), pair_similarity(unit, unit, np.arange(5), np.arange(5)))
    assert np.array_equal(kernels.similarity_matrix(unit[:40], b), exact_similarity(unit[:40], b))


def test_normalization_survives_float32_overflow_and_underflow_of_squares():
    """1e25 squared overflows float32 and 1e-25 squared underflows it: neither is NaN or zero."""
    a = np.array([[1e25, 1e25], [1e-25, -1e-25], [3.0, 4.0]], dtype=np.float32)
    expected = np.array([[0.70710677, 0.70710677], [0.70710677, -0.70710677], [0.6, 0.8]], dtype=np.float32)
    np.testing.assert_array_equal(normalize(a), expected)
    with pytest.raises(BadInputError, match=r"1 row\(s\) with NaN or infinite values \(row 1\)"):
        normalize(np.array([[1.0, 2.0], [np.inf, 1.0]]))
    with pytest.raises(BadInputError, match=r"1 all-zero vector\(s\) \(row 0\)"):
        normalize(np.array([[0.0, 0.0], [1e-30, 0.0]]))


def test_gemm_error_bound_holds_and_is_not_vacuous():
    rng = np.random.default_rng(1)
    x, y = normalize(rng.standard_normal((400, 384))), normalize(rng.standard_normal((500, 384)))
    err = np.abs((x @ y.T).astype(np.float64) - exact_similarity(x, y)).max()
    bound = gemm_error(384, max_norm(x), max_norm(y))
    assert 0 < err <= bound  # float32 GEMMs do err, and never beyond the bound
    assert bound < 1e-4  # tight enough to leave few candidates


# --- the engine against the definition --------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 4, 9])
@pytest.mark.parametrize("shape", [(5, 9), (60, 90), (300, 1100), (1100, 40)])
def test_equals_definition_with_ties(k, shape, many_threads):
    rng = np.random.default_rng(sum(shape) + k)
    x, y = tie_heavy(rng, *shape, 5)
    if k > min(shape):
        return
    for block_bytes in (None, 4 * shape[1], 4 * shape[1] * 33):  # one block, one row per block, 33 rows
        for threads in (1, 3):
            cfg = EngineConfig(block_bytes=block_bytes or EngineConfig.block_bytes, threads=threads)
            assert_reference(topk_both(x, y, k_fwd=k, k_bwd=k, config=cfg), x, y, k, k)
            assert_reference(topk_both(x, y, k_fwd=k, k_bwd=None, config=cfg), x, y, k, None)
            assert_reference(topk_both(x, y, k_fwd=k, k_bwd=k, bwd_scope="forward", config=cfg), x, y, k, k)


def test_random_vectors_duplicates_and_thread_splits(many_threads):
    rng = np.random.default_rng(0)
    x = normalize(rng.standard_normal((700, 64)))
    y = normalize(rng.standard_normal((9000, 64)))
    y[100:140] = y[7]  # 41 identical targets: ties far beyond k
    x[50:60] = x[3]
    for threads in (1, 2, 4):
        cfg = EngineConfig(threads=threads, block_bytes=2**20)  # several blocks
        assert_reference(topk_both(x, y, k_fwd=4, k_bwd=4, config=cfg), x, y, 4, 4)


def test_duplicate_targets_return_the_lower_index():
    """Identical vectors have identical exact similarities; the first of them wins everywhere."""
    rng = np.random.default_rng(2)
    d = 1024
    x = normalize(rng.standard_normal((1012, d)))
    y = normalize(rng.standard_normal((1012, d)))
    y[500] = y[0]
    x[0] = y[0] + 0  # source 0's nearest targets are 0 and 500, exactly tied
    top = topk_both(x, y, k_fwd=2, k_bwd=2)
    assert top.fwd_idx[0].tolist() == [0, 500] and top.fwd_sim[0, 0] == top.fwd_sim[0, 1]
    assert np.array_equal(top.bwd_sim[0], top.bwd_sim[500]) and np.array_equal(top.bwd_idx[0], top.bwd_idx[500])
    knn = margin_knn(x, y, k=4)
    assert knn.forward_best()[0][0] == 0
    # every source's similarity to targets 0 and 500 is the same number (a float32 GEMM's are not)
    s = exact_similarity(x, y[[0, 500]])
    assert np.array_equal(s[:, 0], s[:, 1])


def test_near_ties_the_float32_gemm_gets_wrong():
    """Targets closer together than float32 rounding: the GEMM's own order is noise, the engine's
    order is the exact one."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal(256)
    y = normalize((base + 1e-7 * rng.standard_normal((3000, 256))).astype(np.float32))
    x = normalize((base + 1e-3 * rng.standard_normal((40, 256))).astype(np.float32))
    gemm_order = np.argsort(-(x @ y.T), axis=1, kind="stable")[:, :4]
    top = topk_both(x, y, k_fwd=4, k_bwd=4)
    assert not np.array_equal(gemm_order, top.fwd_idx)  # the float32 GEMM alone would disagree
    assert_reference(top, x, y, 4, 4)


def test_seeded_first_block_keeps_near_tied_rows():
    """A first block with many rows lifts its columns' thresholds from its row groups' maxima before
    the candidate pass (``kernels._seed_columns``): sources closer together than float32 rounding, so
    every column's top-k among them is decided by the exact values, not the GEMM's noise."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal(256)
    x = normalize((base + 1e-7 * rng.standard_normal((900, 256))).astype(np.float32))
    y = normalize((base + 1e-3 * rng.standard_normal((2000, 256))).astype(np.float32))
    assert len(x) > kernels.SEED_MIN_ROWS * 9 and len(x) > 2 * kernels.SEED_GROUPS_PER_K * 9  # seeded, groups of rows
    for k in (1, 4, 9):
        for threads in (1, 2):
            cfg = EngineConfig(threads=threads)
            assert_reference(topk_both(x, y, k_fwd=k, k_bwd=k, config=cfg), x, y, k, k)


def test_torch_gemm_gives_the_same_arrays():
    rng = np.random.default_rng(4)
    x, y = tie_heavy(rng, 200, 3000, 7)
    cfg = EngineConfig(gemm="torch", block_bytes=4 * 3000 * 50)
    assert_reference(topk_both(x, y, k_fwd=4, k_bwd=4, config=cfg), x, y, 4, 4)
    assert_reference(topk_both(x, y, k_fwd=4, k_bwd=4, bwd_scope="forward", config=cfg), x, y, 4, 4)


def test_similarity_matrix_input_constant_rows_and_signed_zeros(many_threads):
    """A given matrix is exact as it is; a constant matrix makes every value a candidate (the row
    buffers overflow into rescans, the column list grows) and the lowest indices must still win."""
    s = np.zeros((40, 3000), np.float32)
    s[::2, ::3] = -0.0  # -0.0 == 0.0: a tie, not an order
    for threads in (1, 3):
        cfg = EngineConfig(threads=threads, block_bytes=4 * 3000 * 7)
        top = topk_both(similarity=s, k_fwd=3, k_bwd=3, config=cfg)
        assert_reference(top, None, None, 3, 3, similarity=s)
        assert (top.fwd_idx == [0, 1, 2]).all() and (top.bwd_idx == [0, 1, 2]).all()
    rng = np.random.default_rng(5)
    s = rng.integers(0, 5, size=(33, 2100)).astype(np.float32)  # many ties
    assert_reference(topk_both(similarity=s, k_fwd=3, k_bwd=4, config=EngineConfig(block_bytes=4 * 2100)),
                     None, None, 3, 4, similarity=s)


def test_k_equal_to_the_set():
    rng = np.random.default_rng(6)
    x, y = tie_heavy(rng, 9, 5, 3)
    assert_reference(topk_both(x, y, k_fwd=5, k_bwd=9), x, y, 5, 9)


def test_unnormalised_vectors_use_their_measured_norms():
    """Dot products of vectors that are not unit length: the bound scales with their norms."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((100, 48)) * 30).astype(np.float32)
    y = (rng.standard_normal((800, 48)) * 30).astype(np.float32)
    y[10:20] = y[3]
    assert_reference(topk_both(x, y, k_fwd=4, k_bwd=4), x, y, 4, 4)


def test_concurrent_callers_with_mixed_thread_counts(many_threads):
    rng = np.random.default_rng(8)
    pairs = [tie_heavy(rng, 300, 2000, 6) for _ in range(6)]
    configs = [EngineConfig(threads=t, block_bytes=4 * 2000 * 64) for t in (1, 2, 3, 8, 2, 5)]
    with ThreadPoolExecutor(6) as callers:
        got = list(callers.map(lambda pc: topk_both(*pc[0], k_fwd=3, k_bwd=3, config=pc[1]), zip(pairs, configs)))
    for (x, y), top in zip(pairs, got):
        assert_reference(top, x, y, 3, 3)
    assert kernels._thread_pool() is kernels._thread_pool()  # one pool, never replaced


# GEMM tiles of 16 columns and 37 rows: many tiles a thread and many blocks of rows, so rows' lists
# carry over from tile to tile and columns' from block to block.
SMALL_TILES = {"tile_cols_per_thread": 16, "tile_bytes_per_thread": 4 * 16 * 37}


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_tiles_carry_both_directions_exactly(threads, many_threads):
    rng = np.random.default_rng(11)
    x, y = tie_heavy(rng, 150, 700, 5)  # exact ties everywhere, duplicate targets in several tiles
    y[600:620] = y[2]
    cfg = EngineConfig(threads=threads, **SMALL_TILES)
    assert tile_plan(len(x), len(y), cfg) == (threads, 37, 16)
    for k in (1, 4, 9):
        assert_reference(topk_both(x, y, k_fwd=k, k_bwd=k, config=cfg), x, y, k, k)
        for seed_tile in (1, 7):  # the seeding pass in tiles of any width gives the same lists
            seeded = EngineConfig(threads=threads, seed_tile=seed_tile)
            assert_reference(topk_both(x, y, k_fwd=k, k_bwd=k, config=seeded), x, y, k, k)
    # Targets closer together than float32 rounding in every tile: a row's floor carried from earlier
    # tiles must keep the GEMM's error band, or the exact order is lost.
    base = rng.standard_normal(256)
    y = normalize((base + 1e-7 * rng.standard_normal((900, 256))).astype(np.float32))
    x = normalize((base + 1e-3 * rng.standard_normal((80, 256))).astype(np.float32))
    assert_reference(topk_both(x, y, k_fwd=4, k_bwd=4, config=cfg), x, y, 4, 4)


def _gemm_threads():
    """Thread counts of the BLAS libraries whose count is process-wide (numpy's OpenBLAS; an OpenMP
    build, such as faiss's, reports the calling thread's own count, which no caller can set for others)."""
    from threadpoolctl import threadpool_info

    counts = [lib["num_threads"] for lib in threadpool_info()
              if lib["user_api"] == "blas" and lib.get("threading_layer") != "openmp"]
    assert counts, "no process-wide BLAS thread count to check"
    return counts


@pytest.mark.parametrize("gemm", ["numpy", "torch"])
def test_threads_own_their_gemms_and_the_libraries_get_their_threads_back(gemm, many_threads, monkeypatch):
    """While threads run their own GEMM tiles, each GEMM runs on one thread (two BLAS threads each
    would oversubscribe the cores); afterwards, and after a failure, the libraries' thread counts
    are what they were."""
    import torch

    rng = np.random.default_rng(12)
    x, y = tie_heavy(rng, 60, 300, 5)
    before = (_gemm_threads(), torch.get_num_threads())
    seen = []
    update = kernels.both_update

    def watched(*args, **kwargs):
        seen.append((_gemm_threads(), torch.get_num_threads()))
        return update(*args, **kwargs)

    monkeypatch.setattr(kernels, "both_update", watched)
    cfg = EngineConfig(threads=2, gemm=gemm, **SMALL_TILES)
    assert_reference(topk_both(x, y, k_fwd=3, k_bwd=3, config=cfg), x, y, 3, 3)
    during = {(tuple(b), t) for b, t in seen}
    assert during == {((1,) * len(before[0]), 1 if gemm == "torch" else before[1])}
    assert (_gemm_threads(), torch.get_num_threads()) == before

    def failing(*args, **kwargs):
        raise RuntimeError("a worker failed")

    monkeypatch.setattr(kernels, "both_update", failing)
    with pytest.raises(RuntimeError, match="a worker failed"):
        topk_both(x, y, k_fwd=3, k_bwd=3, config=cfg)
    assert (_gemm_threads(), torch.get_num_threads()) == before


def test_compiled_pair_similarity_equals_the_definition_and_checks_its_indices():
    rng = np.random.default_rng(13)
    x, y = normalize(rng.standard_normal((30, 19))), normalize(rng.standard_normal((50, 19)))
    rows, cols = rng.integers(0, 30, 400), rng.integers(0, 50, 400)
    assert np.array_equal(compiled_pair_similarity(x, y, rows, cols), pair_similarity(x, y, rows, cols))
    with pytest.raises(BadInputError, match=r"column indices must lie in \[0, 50\)"):
        compiled_pair_similarity(x, y, rows, cols + 1)
    with pytest.raises(BadInputError, match=r"row indices must lie in \[0, 30\)"):
        compiled_pair_similarity(x, y, rows - 1, cols)


# --- margins ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
def test_margins_from_the_definition(margin):
    rng = np.random.default_rng(9)
    x, y = tie_heavy(rng, 60, 90, 6)
    knn = margin_knn(x, y, margin=margin, k=4, backward=True, unit=True)
    s = exact_similarity(x, y)
    k = 1 if margin == "absolute" else 4
    fi = np.argsort(-s, axis=1, kind="stable")[:, :k]
    bi = np.argsort(-s.T, axis=1, kind="stable")[:, :k]
    fs, bs = np.take_along_axis(s, fi, 1), np.take_along_axis(s.T, bi, 1)
    if margin == "absolute":
        exp_f, exp_b = fs, bs
    else:
        ax, ay = fs.mean(1), bs.mean(1)
        f = (lambda c, a, b: c / ((a + b) / 2)) if margin == "ratio" else (lambda c, a, b: c - (a + b) / 2)
        exp_f, exp_b = f(fs, ax[:, None], ay[fi]), f(bs, ay[:, None], ax[bi])
    assert np.array_equal(knn.fwd_score, exp_f) and np.array_equal(knn.bwd_score, exp_b)
    # forward-only scoring (what xsim uses) gives the same forward scores
    fwd_only = margin_knn(x, y, margin=margin, k=4, unit=True)
    assert np.array_equal(fwd_only.fwd_score, knn.fwd_score) and np.array_equal(fwd_only.fwd_idx, knn.fwd_idx)


def test_hand_computed_ratio_margin():
    # 2 sources x 3 targets, k = 2. Similarities chosen by hand.
    s = np.array([[0.9, 0.8, 0.1], [0.85, 0.3, 0.2]], dtype=np.float32)
    knn = margin_knn(similarity=s, margin="ratio", k=2, backward=True)
    # A_x = [0.85, 0.575]; A_y (top-2 over sources): [0.875, 0.55, 0.15]
    # source 0: target 0 -> 0.9/((0.85+0.875)/2) = 1.04348; target 1 -> 0.8/((0.85+0.55)/2) = 1.14286 -> wins
    assert knn.forward_best()[0].tolist() == [1, 0]
    assert knn.fwd_score[0, 1] == pytest.approx(0.8 / 0.7, rel=1e-6)
    assert knn.fwd_score[1, 0] == pytest.approx(0.85 / ((0.575 + 0.875) / 2), rel=1e-6)
    # Backward: target 0 -> source 1 (0.85/0.725 beats 0.9/0.8625); target 2 -> source 1.
    idx, score = knn.backward_best()
    assert idx.tolist() == [1, 0, 1]
    assert score[0] == pytest.approx(0.85 / 0.725, rel=1e-6)
    assert score[2] == pytest.approx(0.2 / ((0.575 + 0.15) / 2), rel=1e-6)
    gold = knn.pair_scores(s[[0, 1], [0, 1]], np.array([0, 1]), np.array([0, 1]))  # the given values, exactly
    assert gold[0] == knn.fwd_score[0, 0] and gold[1] == pytest.approx(0.3 / ((0.575 + 0.55) / 2), rel=1e-6)


def test_margin_scores_need_the_backward_side():
    top = topk_both(similarity=np.eye(3, dtype=np.float32), k_fwd=2, k_bwd=None)
    with pytest.raises(BadInputError, match="backward"):
        margin_scores(top, "ratio")


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["nan", "inf", "zero"])
def test_bad_vectors_are_refused(bad):
    x = np.ones((3, 4), dtype=np.float32)
    x[1] = {"nan": np.nan, "inf": np.inf, "zero": 0.0}[bad]
    with pytest.raises(BadInputError, match="row 1"):
        margin_knn(x, np.ones((3, 4)), k=2)


def test_bad_shapes_k_and_settings():
    x, y = np.eye(3, 5), np.eye(3, 5)
    with pytest.raises(BadInputError, match=r"k=4 is larger than the target set \(3"):
        margin_knn(x, y, k=4)
    assert margin_knn(x, y, margin="absolute", k=4).forward_best()[0].tolist() == [0, 1, 2]  # k unused there
    with pytest.raises(BadInputError, match="empty"):
        margin_knn(np.zeros((0, 4)), np.ones((2, 4)), k=1)
    with pytest.raises(BadInputError, match="dimension"):
        margin_knn(np.ones((2, 4)), np.ones((2, 5)), k=1)
    with pytest.raises(BadInputError, match="margin"):
        margin_knn(np.ones((2, 4)), np.ones((2, 4)), margin="cosine", k=1)
    with pytest.raises(BadInputError, match="k must be a positive integer"):
        topk_both(x, y, k_fwd=0)
    with pytest.raises(BadInputError, match="NaN"):
        topk_both(similarity=np.array([[np.nan, 1.0]]), k_fwd=1, k_bwd=None)
    for bad in ({"block_bytes": 0}, {"threads": 0}, {"gemm": "faiss"}, {"device": "cuda"}, {"tile_cols_per_thread": 0},
                {"tile_bytes_per_thread": 3}, {"seed_tile": 2**17}, {"seed_tile": True}, {"mining_shard_rows": 0},
                {"mining_tile_cols": 1.5}):
        with pytest.raises(BadInputError):
            EngineConfig(**bad)
    with pytest.raises(BadInputError, match="cannot use device"):
        topk_both(x, y, k_fwd=1, k_bwd=None, config=EngineConfig(gemm="torch", device="nosuchdevice"))


def test_a_ratio_margin_over_zero_is_refused_not_ranked():
    """A source orthogonal to every target whose neighbours are orthogonal to it too: cos / 0 would
    be NaN and rank arbitrarily; it is one sentence naming the row, and the distance margin works."""
    from xsimpp.engine import margin_knn
    from xsimpp.errors import BadInputError

    x = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]], dtype=np.float32)
    y = np.array([[0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0]], dtype=np.float32)
    with pytest.raises(BadInputError, match="ratio margin is undefined for row 1"):
        margin_knn(x, y, k=1, margin="ratio")
    assert margin_knn(x, y, k=1, margin="distance").fwd_idx[1, 0] == 1


def test_the_docs_quote_every_committed_roofline_run():
    """docs/performance.md's roofline table has one row per benchmarks/results/roofline/*.json, with
    that file's figures, and docs/scaling.md's summary of the Xeon runs is their range."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "performance.md").read_text(encoding="utf-8")
    runs = {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in sorted((root / "benchmarks" / "results"
                                                                               / "roofline").glob("*.json"))}
    assert len(runs) >= 3
    for name, r in runs.items():
        # (files without a version predate the field; they were measured with 0.4.1's engine)
        row = (f"| {name} | {r.get('xsimpp', '0.4.1')} | {r['cpu']} ({r['isa']}) | {r['cores']} | {r['blas']} | "
               f"{r['numba_cpu']} | "
               f"{r['load']:.1f}–{r['load_end']:.1f} | {r['sgemm_gflops']:.0f} | {r['engine_gflops']:.0f} | "
               f"{100 * r['engine_share_of_sgemm']:.1f} % | {r['selection_s']:.3f} s | "
               f"{r['selection_s'] / r['selection_budget_at_2x_sgemm_s']:.2f} |")
        assert row in page, name
        assert r["shape"] == "4096x65536x384" and r["k"] == 4
        assert abs(r["engine_share_of_sgemm"] - r["sgemm_s"] / r["engine_s"]) < 2e-3  # rates of one pass
    share = [100 * r["engine_share_of_sgemm"] for n, r in runs.items() if n.startswith("intel-xeon-2cores-avx512")]
    scaling = (root / "docs" / "scaling.md").read_text(encoding="utf-8")
    assert f"{min(share):.0f}–{max(share):.0f} % on 2 of them" in scaling
    assert f"{100 * runs['intel-xeon-16cores-avx512']['engine_share_of_sgemm']:.1f} % of the sgemm rate" in scaling
    assert f"at {min(share):.0f}–{max(share):.0f} % on 2 Xeon cores" in page
    # The LASER comparison's speed-ups, per engine version and GEMM kernel: their range over the runs.
    vs_laser: dict[tuple, list] = {}
    for r in runs.values():
        for margin, m in r.get("vs_laser_reference", {}).items():
            if margin != "shape":
                vs_laser.setdefault((r["xsimpp"], r["blas"], margin), []).append(m["speedup"])
    assert vs_laser, "no committed run compares with LASER's reference"
    for (version, blas, margin), ups in vs_laser.items():
        assert f"| {version} | {blas} | {margin} | {min(ups):.2f}–{max(ups):.2f}× | {len(ups)} |" in page, (version, margin)
    # The before/after paragraph: the same ranges, from the same files.
    amd = [r for n, r in runs.items() if n.startswith("amd-epyc") and "xsimpp" in r]

    def span(values, fmt):
        return f"{fmt.format(min(values))}–{fmt.format(max(values))}"

    for version in ("0.9.0", "0.10.0"):
        for blas in ("openblas SkylakeX", "openblas Haswell"):
            group = [r for r in amd if r["xsimpp"] == version and r["blas"] == blas
                     and (blas.endswith("SkylakeX") or r["numba_cpu"] != "haswell")]
            assert f"{span([100 * r['engine_share_of_sgemm'] for r in group], '{:.1f}')} %" in page, (version, blas)
            assert f"{span(vs_laser[(version, blas, 'ratio')], '{:.2f}')}×" in page, (version, blas)
    changelog = " ".join((root / "CHANGELOG.md").read_text(encoding="utf-8").split())
    share = {v: [100 * r["engine_share_of_sgemm"] for r in amd if r["xsimpp"] == v and r["blas"] == "openblas SkylakeX"]
             for v in ("0.9.0", "0.10.0")}
    assert f"{span(share['0.9.0'], '{:.1f}')} % → {span(share['0.10.0'], '{:.1f}')} %" in changelog
    for blas in ("openblas SkylakeX", "openblas Haswell"):
        before, after = vs_laser[("0.9.0", blas, "ratio")], vs_laser[("0.10.0", blas, "ratio")]
        assert f"{span(before, '{:.2f}')}× → {span(after, '{:.2f}')}×" in changelog, blas
    fast = [r for r in amd if r["xsimpp"] == "0.10.0"]
    for blas in ("openblas SkylakeX", "openblas Haswell"):  # the selection against a 2x GEMM's budget
        ratios = [r["selection_s"] / r["selection_budget_at_2x_sgemm_s"] for r in fast if r["blas"] == blas]
        assert f"{span(ratios, '{:.1f}')}×" in page, blas


def test_the_docs_quote_the_mining_runs_before_and_after_tiles():
    """docs/performance.md's before/after mining figures (50k² whole, 1M² from one shard) are the
    ranges of benchmarks/results/mining_50k/ and mining_1m_shard/, and the CHANGELOG's too."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = " ".join((root / "docs" / "performance.md").read_text(encoding="utf-8").split())
    changelog = " ".join((root / "CHANGELOG.md").read_text(encoding="utf-8").split())
    for folder, n, measured in (("mining_50k", 50000, True), ("mining_1m_shard", 1000000, False)):
        runs = [json.loads(f.read_text(encoding="utf-8")) for f in sorted((root / "benchmarks" / "results"
                                                                           / folder).glob("*.json"))]
        assert {r["xsimpp"] for r in runs} == {"0.9.0", "0.10.0"}, folder
        loads = [x for r in runs for x in (r["load"], r["runs"][0]["load_after"])]
        assert f"{folder}/`, load {min(loads):.1f}–{max(loads):.1f})" in page, folder
        spans = {}
        for version in ("0.10.0", "0.9.0"):
            rows = [r["runs"][0] for r in runs if r["xsimpp"] == version]
            assert all(x["n"] == n and x["measured"] == measured for x in rows)
            assert len({x["shard_rows"] for x in rows}) == 1
            secs = [x["seconds"] for x in rows]
            rss = {f"{x['peak_rss_bytes'] / 2**30:.2f}" for x in rows}
            spans[version] = f"{min(secs)}–{max(secs)} s"
            assert len(rss) == 1 and f"{version} {spans[version]} and {rss.pop()} GiB" in page, (folder, version)
        if measured:
            assert f"({-(-n // rows[0]['shard_rows'])} shards of {rows[0]['shard_rows']} rows)" in page
        else:
            assert f"one shard of {rows[0]['shard_rows']} rows against all the targets" in page
        assert f"{spans['0.9.0']} → {spans['0.10.0']}" in changelog, folder


def test_the_docs_quote_the_measured_million_square_mining_run():
    """docs/performance.md's 1M x 1M figures are benchmarks/results/mining_1m_amd_2cores.json's."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = " ".join((root / "docs" / "performance.md").read_text(encoding="utf-8").split())
    run = json.loads((root / "benchmarks" / "results" / "mining_1m_amd_2cores.json").read_text(encoding="utf-8"))
    (r,) = run["runs"]
    assert r["n"] == 1_000_000 and r["measured"] and run["dim"] == 384 and run["max_memory"] == "4GB"
    assert f"**{r['seconds']} s** ({r['seconds'] / 60:.0f} min, " in page
    assert f"{-(-r['n'] // r['shard_rows'])} shards of {r['shard_rows']} rows" in page
    assert (f"peak RSS {r['peak_rss_bytes'] / 2**30:.2f} GiB under the engine's bound of "
            f"{r['engine_bound_bytes'] / 2**30:.2f} GiB") in page
    assert f"768 TFLOP in that time is {2 * r['n'] ** 2 * run['dim'] / r['seconds'] / 1e9:.0f} GFLOP/s" in page
    assert run["blas"] == "openblas SkylakeX" and run["cores"] == 2


def test_import_xsimpp_sets_the_blas_thread_timeout_before_numpy_loads():
    """OpenBLAS reads OPENBLAS_THREAD_TIMEOUT once, when numpy loads it: ``import xsimpp`` sets it
    first, so the API runs at the CLI's speed (a user's own value wins)."""
    import os
    import subprocess
    import sys

    probe = ("import os, sys; import xsimpp; loaded = 'numpy' in sys.modules; import xsimpp.engine; "
             "print(loaded, os.environ.get('OPENBLAS_THREAD_TIMEOUT'))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["False", "4"]
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={**env, "OPENBLAS_THREAD_TIMEOUT": "100"}).stdout
    assert out.split() == ["False", "100"]
