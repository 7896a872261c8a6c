"""OneAligner: normalisation formula, BERTScore-F, batch-size dependence, two-stage, finetuning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers  # noqa: F401  hard dependency: a broken install fails, never skips
from conftest import missing
from tiny_models import SEED

from xsimpp.encoders.onealigner import OneAligner, bertscore_f, in_batch_normalize


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Tiny models are dominated by per-op overhead; on a shared 2-core machine extra threads only
    # spin (measured: 0.4 s -> 0.015 s per forward pass with one thread).
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def xlmr():
    import tiny_models

    return tiny_models.cached("xlmr")


def test_normalisation_matches_hand_computed_matrix():
    f = np.array([[1.0, 0.0], [2.0, 4.0]])
    # row means 0.5, 3; column means 1.5, 2; overall 1.75; alpha 0.75 -> (2a-1) = 0.5
    # S_00 = 1 - .75*(0.5+1.5) + .5*1.75 = 0.375 ; S_01 = 0 - .75*(0.5+2) + .875 = -1.0
    # S_10 = 2 - .75*(3+1.5) + .875 = -0.5      ; S_11 = 4 - .75*(3+2) + .875 = 1.125
    expected = np.array([[0.375, -1.0], [-0.5, 1.125]])
    np.testing.assert_allclose(in_batch_normalize(f, 0.75, 0), expected, atol=1e-6)


def test_tiles_normalise_independently_and_large_batch_equals_full():
    rng = np.random.default_rng(0)
    f = rng.normal(size=(5, 7))
    full = in_batch_normalize(f, 0.75, 0)
    np.testing.assert_allclose(in_batch_normalize(f, 0.75, 7), full, atol=1e-6)  # B >= n, m: one tile
    tiled = in_batch_normalize(f, 0.75, 3)
    assert not np.allclose(tiled, full)  # batch-size dependence is real
    np.testing.assert_allclose(tiled[3:5, 3:6], in_batch_normalize(f[3:5, 3:6], 0.75, 0), atol=1e-6)
    np.testing.assert_allclose(tiled[0:3, 6:7], in_batch_normalize(f[0:3, 6:7], 0.75, 0), atol=1e-6)


def test_full_matrix_mode_is_permutation_equivariant_tiles_are_not():
    rng = np.random.default_rng(1)
    f = rng.normal(size=(6, 6))
    p = rng.permutation(6)
    np.testing.assert_allclose(in_batch_normalize(f[p], 0.75, 0), in_batch_normalize(f, 0.75, 0)[p], atol=1e-6)
    assert not np.allclose(in_batch_normalize(f[p], 0.75, 2), in_batch_normalize(f, 0.75, 2)[p])


def test_bertscore_f_against_loops():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(3, 5, 4, generator=g), torch.randn(2, 6, 4, generator=g)
    am = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], dtype=torch.bool)
    bm = torch.tensor([[1, 1, 0, 0, 0, 0], [1] * 6], dtype=torch.bool)
    got = bertscore_f(a, am, b, bm)
    for i in range(3):
        for j in range(2):
            s = a[i][am[i]] @ b[j][bm[j]].T
            p, r = s.max(1).values.mean(), s.max(0).values.mean()
            assert abs(got[i, j] - 2 * p * r / (p + r)) < 1e-5


def _lines(lang, start, n):
    path = SEED / lang
    if not path.is_file():
        missing(f"OLDI seed data not found: no {path} (set XSIMPP_DATA_DIR to the shared data folder, "
                "../shared/data)", data=True)
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[start : start + n]


def test_pair_scorer_on_tiny_model(xlmr):
    src, tgt = _lines("fur_Latn", 0, 40), _lines("eng_Latn", 0, 40)
    enc = OneAligner(model=str(xlmr), layer=2, batch_size=0, device="cpu")
    s = enc.similarity(src, tgt)
    assert s.shape == (40, 40) and s.dtype == np.float32 and np.isfinite(s).all()
    # identical sentences score best: BERTScore-F of a sentence with itself is 1 (normalised tokens)
    f = enc.raw_scores(enc.token_embeddings(tgt), enc.token_embeddings(tgt))
    np.testing.assert_allclose(np.diag(f), 1.0, atol=1e-5)
    # tiles of 16 change scores but the API stays the same; B >= n equals the full matrix
    np.testing.assert_allclose(OneAligner(model=str(xlmr), layer=2, batch_size=64).similarity(src, tgt), s, atol=1e-5)
    assert not np.allclose(OneAligner(model=str(xlmr), layer=2, batch_size=16).similarity(src, tgt), s)
    assert enc.config()["special_tokens"] == "excluded"


def test_two_stage_keeps_candidates_and_agrees_when_k_is_large(xlmr):
    src, tgt = _lines("eng_Latn", 100, 30), _lines("eng_Latn", 100, 30)
    exact = OneAligner(model=str(xlmr), layer=2, batch_size=0).similarity(src, tgt)
    two = OneAligner(model=str(xlmr), layer=2, batch_size=0, rerank_k=5).similarity(src, tgt)
    # identity pairs: the mean-pooled retrieval always keeps the sentence itself among 5 candidates
    assert (two.argmax(1) == np.arange(30)).all() and (exact.argmax(1) == np.arange(30)).all()
    assert ((two > two.min()).sum(1) <= 5).all()


def test_finetuning_lowers_loss_and_xsim(xlmr, tmp_path):
    """A tiny random model trained 200 steps on eng-fur. lr 3e-4 instead of the paper's 3e-6:
    the paper finetunes an already-aligned 560M-parameter model; a random 32-d model needs
    ~100x larger steps to move in 200 updates (1e-3 diverged here: unnormalised dot products
    make the F scores explode)."""
    from xsimpp.scoring import xsim
    from xsimpp.training.onealigner import TrainConfig, train

    eng, fur = _lines("eng_Latn", 0, 3000), _lines("fur_Latn", 0, 3000)
    held_eng, held_fur = _lines("eng_Latn", 5000, 150), _lines("fur_Latn", 5000, 150)
    cfg = TrainConfig(layer=2, lr=3e-4, batch_size=16, steps=200, max_length=48, device="cpu")
    res = train(list(zip(fur, eng)), str(xlmr), tmp_path / "out", cfg)
    assert (tmp_path / "out" / "model.safetensors").is_file() and (tmp_path / "out" / "xsimpp_training.json").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folders left behind
    first, last = np.mean(res.losses[:25]), np.mean(res.losses[-25:])
    assert last < first - 0.2, (first, last)

    def err(model):
        sim = OneAligner(model=str(model), layer=2, batch_size=0).similarity(held_fur, held_eng)
        return xsim(similarity=sim, margin="ratio", k=4, tgt_text=held_eng).error_rate

    before, after = err(xlmr), err(tmp_path / "out")
    assert after < before, (before, after)


def test_token_states_are_cached_and_scoring_knobs_reuse_them(xlmr, tmp_path, capsys):
    """`eval --encoder onealigner` twice: the second run computes no token state; a new alpha or the
    mean-pooling cell reuses the same states (they depend on model, layer and prompt only); the
    cached states give the same numbers as fresh ones; a scorer's states never depend on the batch."""
    import json

    from xsimpp.cli import main

    src, tgt = tmp_path / "fur.txt", tmp_path / "eng.txt"
    src.write_text("\n".join(_lines("fur_Latn", 0, 40)) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(_lines("eng_Latn", 0, 40)) + "\n", encoding="utf-8")
    base = ["eval", "--encoder", "onealigner", "--model", str(xlmr), "--layer", "2", "--src-file", str(src),
            "--tgt-file", str(tgt), "--langs", "fur", "--target", "eng", "--no-progress"]
    assert main(base) == 0
    first = capsys.readouterr().out
    assert "sentences encoded: 80, reused from cache: 0" in first
    assert main(base) == 0
    second = capsys.readouterr().out
    assert "sentences encoded: 0, reused from cache: 80" in second
    assert first.split("signature")[0] == second.split("signature")[0]
    default = OneAligner(model=str(xlmr), layer=2, device="cpu").similarity(_lines("fur_Latn", 0, 40),
                                                                           _lines("eng_Latn", 0, 40))
    for extra, knobs in ((["--encoder-opt", "alpha=0.5"], {"alpha": 0.5}),
                         (["--encoder-opt", "scoring=mean", "--encoder-opt", "normalization=none"],
                          {"scoring": "mean", "normalization": "none"})):
        assert main(base + extra) == 0
        out = capsys.readouterr().out
        assert "sentences encoded: 0, reused from cache: 80" in out  # same states
        assert out.split("signature")[1] != first.split("signature")[1]  # signed as another scorer
        # other scores (compared as scores: the tiny model's error count may coincide)
        other = OneAligner(model=str(xlmr), layer=2, device="cpu", **knobs)
        assert not np.allclose(other.similarity(_lines("fur_Latn", 0, 40), _lines("eng_Latn", 0, 40)), default)
    assert main(base + ["--json", "--encoder-opt", "scoring=mean"]) == 0
    rec = json.loads(capsys.readouterr().out.splitlines()[0])
    assert rec["signature"]["encoder_revision"] and rec["metric"] == "xsim"
    # the mean-pooling cell had no path before: it differs from BERTScore and from raw cosine
    enc = OneAligner(model=str(xlmr), layer=2, batch_size=0, device="cpu")
    states = enc.token_states(_lines("eng_Latn", 0, 12))
    enc.max_tokens = 30  # other batches, same states
    again = enc.token_states(_lines("eng_Latn", 0, 12))
    assert all(np.array_equal(a, b) for a, b in zip(states, again))
    enc.scoring = "mean"
    mean_cell = enc.score_states(states, states)
    enc.scoring = "bertscore"
    assert not np.allclose(mean_cell, enc.score_states(states, states))
