"""bf16 candidates + exact float32 rescoring return exactly the plain float32 path's arrays."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the bf16 candidate path needs torch")

from xsimpp.errors import BadInputError  # noqa: E402
from xsimpp.scoring import lowp  # noqa: E402
from xsimpp.scoring.knn import l2_normalize, margin_knn, topk_both  # noqa: E402
from xsimpp.scoring.selection import gemm_nt  # noqa: E402

FIELDS = ("fwd_sim", "fwd_idx", "bwd_sim", "bwd_idx")


def assert_same(a, b):
    for f in FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


def clustered(rng, n_x, n_y, d, noise=0.3):
    """Targets = noisy copies of a few centres (dense near-ties, like xsim++ hard negatives)."""
    centres = rng.standard_normal((max(2, n_x // 10), d))
    x = centres[rng.integers(0, len(centres), n_x)] + noise * rng.standard_normal((n_x, d))
    y = centres[rng.integers(0, len(centres), n_y)] + noise * rng.standard_normal((n_y, d))
    y[5:25] = y[4]  # exact duplicates: ties far beyond k
    return l2_normalize(x), l2_normalize(y)


@pytest.mark.parametrize("k", [1, 4, 9])
@pytest.mark.parametrize("block_rows", [None, 200, 333])  # blocks of ~50 rows bound the backward band too loosely: fallback
def test_bf16_equals_plain_path_both_directions(k, block_rows):
    rng = np.random.default_rng(k)
    x, y = clustered(rng, 600, 3000, 48)
    plain = topk_both(x, y, k_fwd=k, k_bwd=k, select="sort", backend="numpy")
    fast = topk_both(x, y, k_fwd=k, k_bwd=k, precision="bf16", block_rows=block_rows)
    assert fast.lowp is not None and fast.lowp.fallback is None, fast.lowp
    assert fast.lowp.fwd_candidates >= 600 * k
    assert_same(fast, plain)


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
def test_bf16_margins_equal_plain_on_xsimpp_shape(margin):
    rng = np.random.default_rng(7)
    x, y = clustered(rng, 300, 6000, 64, noise=0.5)
    plain = margin_knn(x, y, margin=margin, k=4, select="sort", backend="numpy")
    fast = margin_knn(x, y, margin=margin, k=4, precision="bf16")
    assert np.array_equal(fast.fwd_idx, plain.fwd_idx)
    assert np.array_equal(fast.fwd_score, plain.fwd_score)


def test_bf16_with_odd_dimension_and_unnormalised_scale():
    """An odd depth takes one padding column; vectors of norm 3 widen the bound, not the answer."""
    rng = np.random.default_rng(8)
    x, y = clustered(rng, 200, 2500, 37)
    x, y = 3 * x, 3 * y
    plain = topk_both(x, y, k_fwd=4, k_bwd=4, select="sort", backend="numpy")
    assert_same(topk_both(x, y, k_fwd=4, k_bwd=4, precision="bf16"), plain)


def test_the_bound_holds_entrywise():
    """|(s - c) - S| <= E_row + w'|S| on every entry, with the module's own terms (can fail)."""
    rng = np.random.default_rng(9)
    x, y = clustered(rng, 300, 4000, 64)
    x_t, y_t = torch.from_numpy(x), torch.from_numpy(y)
    ya, nty, ndy = lowp._to_bf16_padded(y_t, 2, 1.0, False, torch)
    xa, ntx, ndx = lowp._to_bf16_padded(x_t, 2, 0.0, True, torch)
    c = 0.5
    xa[:, 64] = -c
    s_lp = (ya @ xa.T).float().numpy().T.astype(np.float64)  # (n_x, n_y)
    exact = gemm_nt(x, y).astype(np.float64) - c
    nx, ny = lowp._sq_norm_upper(x), lowp._sq_norm_upper(y)
    err = (ndx * ny.max() + ntx * ndy.max() + lowp._gamma(64) * nx * ny.max()
           + lowp._gamma(66) * (ntx * nty.max() + c))
    slack = err[:, None] + lowp._W * np.abs(s_lp) - np.abs(exact - s_lp)
    assert slack.min() > 0
    # and the bound is not vacuous: it is within ~10x of the worst error actually seen
    assert (err[:, None] + lowp._W * np.abs(s_lp)).max() < 10 * np.abs(exact - s_lp).max() + 1e-3


def test_wide_band_falls_back_to_the_same_results():
    rng = np.random.default_rng(10)
    base = l2_normalize(rng.standard_normal((1, 32)))
    x = l2_normalize(base + 1e-4 * rng.standard_normal((200, 32)))  # everything within bf16 noise
    y = l2_normalize(base + 1e-4 * rng.standard_normal((3000, 32)))
    fast = topk_both(x, y, k_fwd=4, k_bwd=4, precision="bf16")
    assert fast.lowp is not None and fast.lowp.fallback and "too wide" in fast.lowp.fallback
    assert_same(fast, topk_both(x, y, k_fwd=4, k_bwd=4, select="sort", backend="numpy"))


def test_real_embeddings(real_data):
    from xsimpp.datasets import Flores200
    from xsimpp.encoders import create_encoder

    bt = Flores200("devtest", data_dir=real_data).bitext("fur_Latn", "eng_Latn")
    enc = create_encoder("chargram")
    x = l2_normalize(enc.encode(bt.src[:300]))
    y = l2_normalize(enc.encode(bt.tgt[:300] + bt.src[300:1012]))
    plain = topk_both(x, y, k_fwd=4, k_bwd=4, select="sort", backend="numpy")
    fast = topk_both(x, y, k_fwd=4, k_bwd=4, precision="bf16")
    assert fast.lowp is not None and fast.lowp.fallback is None
    assert_same(fast, plain)
    fwd = topk_both(x, y, k_fwd=4, k_bwd=4, precision="bf16", bwd_scope="forward")
    assert np.array_equal(fwd.bwd_idx, plain.bwd_idx[fwd.bwd_cols])


def test_precision_and_device_errors():
    x = l2_normalize(np.eye(4, 8))
    with pytest.raises(BadInputError, match="precision must be one of auto, fp32, bf16"):
        topk_both(x, x, k_fwd=1, k_bwd=1, precision="fp8")
    with pytest.raises(BadInputError, match="need vectors"):
        topk_both(similarity=x @ x.T, k_fwd=1, k_bwd=1, precision="bf16")
    with pytest.raises(BadInputError, match="scoring device 'nosuchdevice' is not available"):
        topk_both(x, x, k_fwd=1, k_bwd=1, precision="bf16", device="nosuchdevice")
    assert lowp.resolve_precision("auto", 1e6) == "fp32"  # small products stay on float32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here: the GPU candidate path is not exercised")
def test_cuda_candidates_equal_cpu_plain_path():
    rng = np.random.default_rng(11)
    x, y = clustered(rng, 500, 5000, 64)
    plain = topk_both(x, y, k_fwd=4, k_bwd=4, select="sort", backend="numpy")
    fast = topk_both(x, y, k_fwd=4, k_bwd=4, precision="bf16", device="cuda")
    assert fast.lowp.device.startswith("cuda") and fast.lowp.fallback is None
    assert_same(fast, plain)


def test_auto_precision_choices(monkeypatch):
    """auto: bf16 only for large forward-only products on native-bf16 hardware with torch loaded."""
    monkeypatch.setattr(lowp, "fast_bf16", lambda device="cpu": True)
    monkeypatch.setattr(lowp, "AUTO_MIN_FLOP", 0)
    rng = np.random.default_rng(12)
    x, y = clustered(rng, 100, 900, 16)
    assert topk_both(x, y, k_fwd=4, k_bwd=4, precision="auto", bwd_scope="forward").lowp is not None
    assert topk_both(x, y, k_fwd=4, k_bwd=None, precision="auto").lowp is not None
    assert topk_both(x, y, k_fwd=4, k_bwd=4, precision="auto").lowp is None  # full backward: float32
    monkeypatch.setattr(lowp, "fast_bf16", lambda device="cpu": False)
    assert topk_both(x, y, k_fwd=4, k_bwd=None, precision="auto").lowp is None
