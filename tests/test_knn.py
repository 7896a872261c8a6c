"""The one-pass margin kNN engine against brute force, hand-computed margins, and bad input."""

import numpy as np
import pytest

from xsimpp.errors import BadInputError
from xsimpp.scoring import l2_normalize, margin_knn, nearest_neighbors, topk_both


def brute_nn(x, y, k, margin):
    """Plain definition: full similarity matrix, full sorts (stable: lower index first on ties)."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    s = (x.astype(np.float64) @ y.T.astype(np.float64)).astype(np.float32)
    if margin == "absolute":
        return np.array([np.argsort(-row, kind="stable")[0] for row in s])
    fwd = np.argsort(-s, axis=1, kind="stable")[:, :k]
    bwd = np.argsort(-s.T, axis=1, kind="stable")[:, :k]
    ax = np.take_along_axis(s, fwd, 1).mean(1)
    ay = np.take_along_axis(s.T, bwd, 1).mean(1)
    out = []
    for i in range(len(x)):
        best, best_j = -np.inf, -1
        for j in fwd[i]:
            b = (ax[i] + ay[j]) / np.float32(2)
            score = s[i, j] / b if margin == "ratio" else s[i, j] - b
            if score > best:
                best, best_j = score, j
        out.append(best_j)
    return np.array(out)


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
@pytest.mark.parametrize("block_rows", [None, 1, 7, 64])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_matches_brute_force_with_ties(margin, block_rows, backend):
    if backend == "torch":
        pytest.importorskip("torch", reason="torch backend not installed")
    rng = np.random.default_rng(3)
    # Small integer vectors make exact ties common (duplicates and equal dot products).
    x = rng.integers(-2, 3, size=(60, 6)).astype(np.float32)
    y = np.concatenate([x[:40] + rng.integers(-1, 2, size=(40, 6)), rng.integers(-2, 3, size=(50, 6))]).astype(np.float32)
    x[(np.abs(x).sum(1) == 0)] = 1
    y[(np.abs(y).sum(1) == 0)] = 1
    y[5] = y[6]  # duplicate targets: identical similarities
    # Compare on the engine's own normalised inputs so float32 similarities are bit-identical.
    xn, yn = l2_normalize(x), l2_normalize(y)
    s = xn @ yn.T
    got = nearest_neighbors(similarity=s, margin=margin, k=4, block_rows=block_rows, backend=backend)
    fwd = np.argsort(-s, axis=1, kind="stable")
    if margin == "absolute":
        assert (got == fwd[:, 0]).all()
        return
    ax = np.take_along_axis(s, fwd[:, :4], 1).mean(1)
    bwd = np.argsort(-s.T, axis=1, kind="stable")[:, :4]
    ay = np.take_along_axis(s.T, bwd, 1).mean(1)
    exp = []
    for i in range(len(s)):
        scores = [(s[i, j] / ((ax[i] + ay[j]) / np.float32(2))) if margin == "ratio" else (s[i, j] - (ax[i] + ay[j]) / np.float32(2)) for j in fwd[i, :4]]
        exp.append(fwd[i, int(np.argmax(scores))])
    assert (got == np.array(exp)).all()


def test_vectors_and_similarity_paths_agree():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((50, 16)), rng.standard_normal((70, 16))
    a = nearest_neighbors(x, y, margin="ratio", k=3, block_rows=9)
    s = l2_normalize(x) @ l2_normalize(y).T
    b = nearest_neighbors(similarity=s, margin="ratio", k=3)
    assert (a == b).all()
    assert (a == brute_nn(x, y, 3, "ratio")).all()


def test_hand_computed_ratio_margin():
    # 2 sources x 3 targets, k = 2. Similarities chosen by hand.
    s = np.array([[0.9, 0.8, 0.1], [0.85, 0.3, 0.2]], dtype=np.float32)
    knn = margin_knn(similarity=s, margin="ratio", k=2, backward=True)
    # A_x = [0.85, 0.575]; A_y (top-2 over sources): [0.875, 0.55, 0.15]
    # source 0: target 0 -> 0.9/((0.85+0.875)/2) = 1.04348; target 1 -> 0.8/((0.85+0.55)/2) = 1.14286 -> wins
    assert knn.forward_best()[0].tolist() == [1, 0]
    assert knn.fwd_score[0, 1] == pytest.approx(0.8 / 0.7, rel=1e-6)
    assert knn.fwd_score[1, 0] == pytest.approx(0.85 / ((0.575 + 0.875) / 2), rel=1e-6)
    # Backward: target 0 -> source 0: 0.9/((0.875+0.85)/2) = 1.0435, source 1: 0.85/((0.875+0.575)/2) = 1.1724
    # (source 1 wins: it is a less "hubby" neighbour); target 1's best is source 0 with 0.8/0.7;
    # target 2's best is source 1: 0.2/((0.575+0.15)/2).
    idx, score = knn.backward_best()
    assert idx.tolist() == [1, 0, 1]
    assert score[0] == pytest.approx(0.85 / 0.725, rel=1e-6)
    assert score[2] == pytest.approx(0.2 / ((0.575 + 0.15) / 2), rel=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_backward_topk_blockwise_equals_full(backend):
    if backend == "torch":
        pytest.importorskip("torch", reason="torch backend not installed")
    rng = np.random.default_rng(1)
    s = rng.integers(0, 5, size=(33, 21)).astype(np.float32)  # many ties
    full = topk_both(similarity=s, k_fwd=3, k_bwd=4, block_rows=1000, backend=backend)
    assert (full.fwd_idx == np.argsort(-s, axis=1, kind="stable")[:, :3]).all()
    for br in (1, 2, 5, 32):
        part = topk_both(similarity=s, k_fwd=3, k_bwd=4, block_rows=br, backend=backend)
        assert (part.bwd_idx == full.bwd_idx).all() and (part.bwd_sim == full.bwd_sim).all()
        assert (part.fwd_idx == full.fwd_idx).all()
    exp = np.argsort(-s.T, axis=1, kind="stable")[:, :4]
    assert (full.bwd_idx == exp).all()


@pytest.mark.parametrize("bad", ["nan", "inf", "zero"])
def test_bad_vectors_are_refused(bad):
    x = np.ones((3, 4), dtype=np.float32)
    x[1] = {"nan": np.nan, "inf": np.inf, "zero": 0.0}[bad]
    with pytest.raises(BadInputError, match="row 1"):
        nearest_neighbors(x, np.ones((3, 4)), k=2)


def test_k_larger_than_candidate_set():
    x, y = np.eye(3, 5), np.eye(3, 5)
    with pytest.raises(BadInputError, match=r"k=4 is larger than the target set \(3"):
        nearest_neighbors(x, y, k=4)
    # Absolute margin needs only 1 neighbour, so k is irrelevant there.
    assert nearest_neighbors(x, y, margin="absolute", k=4).tolist() == [0, 1, 2]


def test_empty_and_mismatched_dims():
    with pytest.raises(BadInputError, match="empty"):
        nearest_neighbors(np.zeros((0, 4)), np.ones((2, 4)), k=1)
    with pytest.raises(BadInputError, match="dimension"):
        nearest_neighbors(np.ones((2, 4)), np.ones((2, 5)), k=1)
    with pytest.raises(BadInputError, match="margin"):
        nearest_neighbors(np.ones((2, 4)), np.ones((2, 4)), margin="cosine", k=1)


def test_backends_identical_on_random_embeddings():
    pytest.importorskip("torch", reason="torch backend not installed")
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((300, 32)), rng.standard_normal((900, 32))
    y[10:20] = y[0]  # a block of duplicate targets: exact ties
    a = margin_knn(x, y, k=4, backward=True, backend="numpy", block_rows=50)
    b = margin_knn(x, y, k=4, backward=True, backend="torch")
    for f in ("fwd_idx", "fwd_score", "bwd_idx", "bwd_score"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


def test_l2_normalize_survives_float32_overflow_and_underflow_of_squares():
    """1e25 squared overflows float32 and 1e-25 squared underflows to 0: neither is NaN or zero."""
    a = np.array([[1e25, 1e25], [1e-25, -1e-25], [3.0, 4.0]], dtype=np.float32)
    out = l2_normalize(a)
    expected = np.array([[0.70710677, 0.70710677], [0.70710677, -0.70710677], [0.6, 0.8]], dtype=np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert out.dtype == np.float32 and out.flags.c_contiguous
    with pytest.raises(BadInputError, match=r"1 row\(s\) with NaN or infinite values \(row 1\)"):
        l2_normalize(np.array([[1.0, 2.0], [np.inf, 1.0]]))
    with pytest.raises(BadInputError, match=r"1 all-zero vector\(s\) \(row 0\)"):
        l2_normalize(np.array([[0.0, 0.0], [1e-30, 0.0]]))
