"""P-xSIM against a re-statement of LASER's source/pxsim.py (faiss search, score_margin's ratio,
sklearn-style cosine of the auxiliary vectors, argmax of the blend)."""

from __future__ import annotations

import numpy as np
import pytest

from xsimpp.errors import BadInputError
from xsimpp.scoring.pxsim import pxsim, pxsim_candidates

faiss = pytest.importorskip("faiss")


def _laser_pxsim(x, y, xa, ya, alpha, k, margin="ratio"):
    from test_reference_equivalence import faiss_neighbours

    cos_xy, idx_xy, cos_yx = faiss_neighbours(x.astype(np.float32), y.astype(np.float32), k)
    if margin == "absolute":
        scores = cos_xy
    else:
        avg_xy, avg_yx = cos_xy.mean(1), cos_yx.mean(1)
        scores = cos_xy / ((avg_xy[:, None] + avg_yx[idx_xy]) / 2)
    preds = []
    for i in range(len(x)):
        nb = idx_xy[i]
        a = xa[i] / np.linalg.norm(xa[i])
        b = ya[nb] / np.linalg.norm(ya[nb], axis=1, keepdims=True)
        blended = alpha * scores[i] + (1 - alpha) * (b @ a)
        preds.append(nb[blended.argmax()])
    return np.array(preds)


def _data(seed=0, n=300, d=24):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, d)).astype(np.float32)
    x = base + 0.9 * rng.normal(size=(n, d)).astype(np.float32)  # noisy primary: some errors
    y = base + 0.9 * rng.normal(size=(n, d)).astype(np.float32)
    aux_base = rng.normal(size=(n, 16)).astype(np.float32)
    xa = aux_base + 0.7 * rng.normal(size=(n, 16)).astype(np.float32)
    ya = aux_base + 0.7 * rng.normal(size=(n, 16)).astype(np.float32)
    return x, y, xa, ya


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.5, 0.8, 1.0])
@pytest.mark.parametrize("margin", ["ratio", "absolute"])
def test_predictions_equal_lasers_formula(alpha, margin):
    x, y, xa, ya = _data()
    want = _laser_pxsim(x, y, xa, ya, alpha, 16, margin)
    res = pxsim(x, y, x_aux=xa, y_aux=ya, alpha=alpha, k=16, margin=margin, mode="index")
    assert np.array_equal(res.nn, want)
    assert res.errors == int((want != np.arange(len(x))).sum())


def test_blending_helps_and_the_extremes_are_the_two_encoders():
    x, y, xa, ya = _data(1)
    only_margin = pxsim(x, y, x_aux=xa, y_aux=ya, alpha=1.0, k=16, mode="index")
    only_aux = pxsim(x, y, x_aux=xa, y_aux=ya, alpha=0.0, k=16, mode="index")
    blend = pxsim(x, y, x_aux=xa, y_aux=ya, alpha=0.5, k=16, mode="index")
    from xsimpp.scoring import xsim

    assert only_margin.errors == xsim(x, y, margin="ratio", k=16, mode="index").errors
    assert blend.errors < min(only_margin.errors, only_aux.errors)  # two independent noisy views
    # an auxiliary similarity matrix gives the same as the auxiliary vectors' cosines
    a = xa / np.linalg.norm(xa, axis=1, keepdims=True)
    b = ya / np.linalg.norm(ya, axis=1, keepdims=True)
    same = pxsim(x, y, aux_similarity=a.astype(np.float64) @ b.T.astype(np.float64), alpha=0.5, k=16, mode="index")
    assert np.array_equal(same.nn, blend.nn)


def test_bad_input_is_one_sentence():
    x, y, xa, ya = _data(2, n=20)
    with pytest.raises(BadInputError, match="auxiliary"):
        pxsim(x, y, alpha=0.5, k=4)
    with pytest.raises(BadInputError, match="alpha"):
        pxsim(x, y, x_aux=xa, y_aux=ya, alpha=1.5, k=4)
    with pytest.raises(BadInputError, match="auxiliary vectors cover"):
        pxsim(x, y, x_aux=xa[:5], y_aux=ya, alpha=0.5, k=4)
    with pytest.raises(BadInputError):
        pxsim(x, y, x_aux=xa, y_aux=ya, alpha=0.5, k=40)  # k larger than the targets
    c = pxsim_candidates(x, y, x_aux=xa, y_aux=ya, k=4)
    assert c.idx.shape == c.margin.shape == c.aux.shape == (20, 4)


def test_margin_neighbourhood_apart_from_the_candidates():
    """k_margin = 4 averages (xsimpp's default --k) with 16 candidates: the margin of each candidate
    equals the plain margin kNN's score of that pair."""
    from xsimpp.scoring import margin_knn

    x, y, xa, ya = _data(3, n=120)
    c = pxsim_candidates(x, y, x_aux=xa, y_aux=ya, k=16, k_margin=4)
    knn = margin_knn(x, y, margin="ratio", k=4)
    # the 4 best by similarity are the margin kNN's candidates, with the same scores
    np.testing.assert_array_equal(c.idx[:, :4], knn.fwd_idx)
    np.testing.assert_allclose(c.margin[:, :4], knn.fwd_score, rtol=0, atol=1e-15)
    assert not np.array_equal(c.margin, pxsim_candidates(x, y, x_aux=xa, y_aux=ya, k=16).margin)


def test_eval_rerank_writes_p_xsim_records_signed_with_the_auxiliary_encoder(capsys, isolated_home):
    """`xsimpp eval --rerank`: the records are p-xsim / p-xsim++ (never mixed with plain xsim), signed
    with the auxiliary encoder, alpha and the candidate count; alpha 1 is the margin alone."""
    import json

    from xsimpp.cli import main

    base = ["eval", "--encoder", "chargram", "--encoder-opt", "n_features=256", "--dataset", "demo", "--langs", "deu",
            "--augmented", "auto", "--no-progress", "--json"]
    assert main(base) == 0
    plain = {r["metric"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert main(base + ["--rerank", "chargram", "--rerank-opt", "ngram_min=3", "--alpha", "0.4", "--pxsim-k", "8"]) == 0
    recs = {r["metric"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(recs) == {"p-xsim", "p-xsim++"} and set(plain) == {"xsim", "xsim++"}
    params = recs["p-xsim"]["signature"]["params"]
    assert params["alpha"] == 0.4 and params["rerank_k"] == 8 and params["rerank"].startswith("chargram@")
    assert recs["p-xsim++"]["signature"]["params"]["negatives"] == "hand-written"
    assert main(base + ["--rerank", "chargram", "--alpha", "1", "--k", "4", "--pxsim-k", "4"]) == 0
    margin_only = {r["metric"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert margin_only["p-xsim"]["errors"] == plain["xsim"]["errors"]
    assert margin_only["p-xsim++"]["errors"] == plain["xsim++"]["errors"]
    assert main(base + ["--rerank-opt", "layer=2"]) == 2
    assert "give --rerank too" in capsys.readouterr().err
