"""Every fast path of the kNN engine returns exactly what the plain path returns (ties included),
and the memory knob bounds what one block allocates."""

import tracemalloc

import numpy as np
import pytest

from xsimpp.errors import BadInputError
from xsimpp.scoring.knn import l2_normalize, margin_knn, topk_both
from xsimpp.scoring.selection import gemm_nt
from vectors import same_topk as same
from vectors import tie_heavy


@pytest.mark.parametrize("k", [1, 4, 9])
@pytest.mark.parametrize("shape", [(5, 7), (60, 90), (300, 1100), (1100, 40)])
def test_filter_equals_sort_with_ties(k, shape):
    rng = np.random.default_rng(sum(shape) + k)
    x, y = tie_heavy(rng, *shape, 6)
    if k > min(shape):  # both selections refuse k larger than a side, with the same clear error
        for select in ("sort", "filter"):
            with pytest.raises(BadInputError, match=f"k={k} is larger than the"):
                topk_both(x, y, k_fwd=k, k_bwd=k, select=select, backend="numpy")
        return
    plain = topk_both(x, y, k_fwd=k, k_bwd=k, select="sort", backend="numpy")
    for br in ((None, 1, 33) if max(shape) <= 300 else (None, 33)):
        same(topk_both(x, y, k_fwd=k, k_bwd=k, select="filter", block_rows=br), plain)


def test_filter_equals_sort_and_torch_on_random_vectors():
    pytest.importorskip("torch", reason="torch backend not installed")
    rng = np.random.default_rng(0)
    x = l2_normalize(rng.standard_normal((700, 64)))
    y = l2_normalize(rng.standard_normal((5000, 64)))
    y[100:140] = y[7]  # 41 identical targets: ties far beyond k
    plain = topk_both(x, y, k_fwd=4, k_bwd=4, select="sort", backend="numpy")
    same(topk_both(x, y, k_fwd=4, k_bwd=4, select="sort", backend="torch"), plain)
    same(topk_both(x, y, k_fwd=4, k_bwd=4), plain)
    same(topk_both(x, y, k_fwd=4, k_bwd=4, block_bytes=2**20), plain)  # many small blocks


def test_similarity_matrix_input_with_constant_rows():
    s = np.zeros((40, 300), np.float32)  # everything tied: lowest indices win both ways
    s[5] = 1.0
    top = topk_both(similarity=s, k_fwd=3, k_bwd=3)
    assert (top.fwd_idx == [0, 1, 2]).all()
    assert (top.bwd_idx == [5, 0, 1]).all()
    same(top, topk_both(similarity=s, k_fwd=3, k_bwd=3, select="sort", backend="numpy"))


def test_gemm_values_do_not_depend_on_tiling():
    """The basis of block/shard identity: every element's bits equal the full product's."""
    rng = np.random.default_rng(2)
    for d in (6, 384):
        x = rng.standard_normal((400, d)).astype(np.float32)
        y = rng.standard_normal((900, d)).astype(np.float32)
        full = gemm_nt(x, y)
        for m, n in ((1, 1), (1, 900), (400, 1), (3, 5), (17, 250), (256, 900)):
            r, c = rng.choice(400, m, replace=False), rng.choice(900, n, replace=False)
            assert np.array_equal(gemm_nt(x[r], y[c]), full[np.ix_(r, c)]), (d, m, n)


def test_block_size_never_changes_values():
    rng = np.random.default_rng(3)
    x, y = l2_normalize(rng.standard_normal((130, 384))), l2_normalize(rng.standard_normal((2000, 384)))
    full = topk_both(x, y, block_rows=1000)
    for br in (1, 2, 129):
        same(topk_both(x, y, block_rows=br), full)


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
def test_real_embeddings(real_data, margin):
    from xsimpp.datasets import Flores200
    from xsimpp.encoders import create_encoder

    bt = Flores200("devtest", data_dir=real_data).bitext("fra_Latn", "eng_Latn")
    enc = create_encoder("chargram")
    x, y = enc.encode(bt.src[:400]), enc.encode(bt.tgt[:400] + bt.src[400:800])
    plain = margin_knn(x, y, margin=margin, k=4, backward=True, select="sort", backend="numpy")
    fast = margin_knn(x, y, margin=margin, k=4, backward=True)
    for f in ("fwd_idx", "fwd_score", "bwd_idx", "bwd_score"):
        assert np.array_equal(getattr(fast, f), getattr(plain, f)), f


def test_block_bytes_bounds_peak_allocation():
    rng = np.random.default_rng(4)
    x, y = l2_normalize(rng.standard_normal((1500, 32))), l2_normalize(rng.standard_normal((20000, 32)))
    budget = 8 * 2**20
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    topk_both(x, y, k_fwd=4, k_bwd=4, block_bytes=budget)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    results = (1500 + 20000) * 4 * 12 * 3  # top-k outputs and the backward merge temporaries
    assert peak <= budget + results, (peak, budget)
    # and the block really is smaller than the full matrix would be (1500 x 20000 x 4 = 114 MiB)
    assert peak < 1500 * 20000 * 4 / 4


@pytest.mark.parametrize("inputs", ["vectors", "similarity"])
@pytest.mark.parametrize("block_rows", [None, 7, 64])
def test_backward_scope_forward_equals_all(inputs, block_rows):
    """bwd_scope='forward' (what xsim uses) gives the full backward rows of the forward candidates,
    and margin scores equal to the full computation, ties and several blocks included."""
    rng = np.random.default_rng(5)
    x, y = tie_heavy(rng, 150, 900, 6)
    args = {"similarity": gemm_nt(x, y)} if inputs == "similarity" else {"x": x, "y": y}
    full = topk_both(**args, k_fwd=4, k_bwd=4, select="sort", backend="numpy")
    part = topk_both(**args, k_fwd=4, k_bwd=4, block_rows=block_rows, bwd_scope="forward")
    assert np.array_equal(part.bwd_cols, np.unique(full.fwd_idx))
    assert np.array_equal(part.fwd_idx, full.fwd_idx) and np.array_equal(part.fwd_sim, full.fwd_sim)
    assert np.array_equal(part.bwd_idx, full.bwd_idx[part.bwd_cols])
    assert np.array_equal(part.bwd_sim, full.bwd_sim[part.bwd_cols])
    for margin in ("ratio", "distance"):
        both = margin_knn(**args, margin=margin, backward=True, select="sort", backend="numpy")
        fwd_only = margin_knn(**args, margin=margin, backward=False, block_rows=block_rows)
        assert np.array_equal(fwd_only.fwd_idx, both.fwd_idx)
        assert np.array_equal(fwd_only.fwd_score, both.fwd_score)
