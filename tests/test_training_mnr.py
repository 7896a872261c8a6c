"""`xsimpp train mnr` (Tan & Koehn 2022): negatives, loss, masks, CLI and checkpoint (tiny random models)."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
import torch

from xsimpp.cli import main
from xsimpp.training.mnr import MNRConfig, batch_targets, documents_from_ids, mnr_loss, negatives_for


@pytest.fixture(scope="module")
def xlmr():
    import tiny_models

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield tiny_models.cached("xlmr")
    torch.set_num_threads(old)


def test_documents_from_ids():
    assert documents_from_ids(["a", "a", "b", "b", "b", "a"]) == [0, 0, 1, 1, 1, 2]


def test_window_negatives_stay_in_the_document():
    docs = [0, 0, 0, 0, 1, 1, 1]
    cfg = MNRConfig(window=2, random_negatives=0)
    rng = random.Random(0)
    assert negatives_for(3, docs, cfg, rng) == [1, 2]  # 4 and 5 are in the next document
    assert negatives_for(4, docs, cfg, rng) == [5, 6]
    assert negatives_for(0, docs, cfg, rng) == [1, 2]


def test_random_negatives_are_outside_the_window_and_distinct():
    docs = [0] * 30
    cfg = MNRConfig(window=1, random_negatives=6)
    rng = random.Random(1)
    for i in range(30):
        neg = negatives_for(i, docs, cfg, rng)
        window = [j for j in (i - 1, i + 1) if 0 <= j < 30]
        assert neg[: len(window)] == window
        rand = neg[len(window):]
        assert len(rand) == 6 == len(set(rand)) and all(abs(j - i) > 1 for j in rand)
    # a corpus too small for R: every target outside the window, no more
    assert sorted(negatives_for(0, [0] * 4, MNRConfig(window=1, random_negatives=6), rng)) == [1, 2, 3]


def test_mnr_loss_by_hand():
    src = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    tgt = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    allowed = torch.tensor([[True, True, False], [True, True, True]])
    scale = 2.0
    # anchor 0: cos to t0, t1 = 1, 0 -> -log(e^2 / (e^2 + e^0)); anchor 1 (positive t1): cos 0, 1, 1/sqrt2
    l0 = -math.log(math.exp(2) / (math.exp(2) + 1))
    l1 = -math.log(math.exp(2) / (1 + math.exp(2) + math.exp(2 / math.sqrt(2))))
    got = mnr_loss(src, tgt, torch.tensor([0, 1]), allowed, scale)
    assert float(got) == pytest.approx((l0 + l1) / 2, rel=1e-6)


def test_batch_targets_own_and_in_batch_masks():
    pairs = [(f"s{i}", f"t{i}") for i in range(6)]
    pairs[4] = ("s4", "t1")  # the same target text as pair 1: never a negative of anchor 1
    docs = [0] * 6
    cfg = MNRConfig(window=1, random_negatives=0)
    targets, pos, allowed = batch_targets([1, 3], pairs, docs, cfg, random.Random(0))
    assert targets == [1, 0, 2, 3, 4] and pos == [0, 3]
    assert allowed == [[True, True, True, False, False], [False, False, True, True, True]]
    cfg = MNRConfig(window=1, random_negatives=0, negatives="in-batch")
    targets, pos, allowed = batch_targets([1, 3], pairs, docs, cfg, random.Random(0))
    assert allowed == [[True, True, True, True, False], [True, True, True, True, True]]


def _seed_files(tmp_path, n):
    from tiny_models import seed_files

    return seed_files(tmp_path, n)


def test_train_mnr_cli_with_documents_loads_with_hf(xlmr, tmp_path, capsys):
    from safetensors.torch import load_file

    from xsimpp.encoders.hf import HFEncoder

    src, tgt = _seed_files(tmp_path, 48)
    docs = tmp_path / "meta.tsv"
    docs.write_text("URL\tother\n" + "".join(f"http://doc/{i // 10}\tx\n" for i in range(48)), encoding="utf-8")
    out = tmp_path / "mnr"
    code = main(["train", "mnr", "--src", str(src), "--tgt", str(tgt), "--docs", str(docs), "--docs-column", "URL",
                 "--model", str(xlmr), "--out", str(out), "--batch-size", "8", "--steps", "4", "--window", "2",
                 "--random", "2", "--lr", "1e-3", "--prompt", "query: ", "--log-every", "0",
                 "--data-dir", str(tmp_path / "no-data")])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert "trained 4 steps on 48 pairs" in cap.out and "steps/s" in cap.out
    meta = json.loads((out / "xsimpp_training.json").read_text())
    assert meta["steps"] == 4 and meta["data"]["documents"] == 5 and meta["data"]["pairs"] == 48
    assert meta["hyperparameters"]["window"] == 2 and meta["hyperparameters"]["random_negatives"] == 2
    assert meta["hyperparameters"]["scale"] == 20 and meta["hyperparameters"]["negatives"] == "own"
    assert meta["use"] == {"prompt": "query: "} and 8 < meta["targets_per_step"] <= 8 * 5
    assert set(meta["data"]["file_sha256"]) == {"src", "tgt"} and meta["data"]["files"]["docs"] == str(docs)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    before, after = load_file(str(xlmr / "model.safetensors")), load_file(str(out / "model.safetensors"))
    assert any(not torch.equal(before[k], after[k]) for k in before if "layer.1." in k)  # the last layer trained
    enc = HFEncoder(model=str(out))
    assert enc.prompt == "query: " and enc.encode(["Il cjan al duar."]).shape == (1, 32)


def test_mnr_finetuning_lowers_the_loss(xlmr, tmp_path):
    from xsimpp.training.mnr import train_mnr
    from xsimpp.training.onealigner import read_parallel

    src, tgt = _seed_files(tmp_path, 300)
    pairs = read_parallel(src, tgt)
    res = train_mnr(pairs, str(xlmr), tmp_path / "out", MNRConfig(window=1, random_negatives=3, batch_size=8,
                                                                  steps=60, lr=5e-4, warmup=0.0, max_length=48,
                                                                  device="cpu"))
    first, last = np.mean(res.losses[:15]), np.mean(res.losses[-15:])
    assert last < first - 0.05, (first, last)


@pytest.mark.parametrize("extra, message", [
    (["--docs", "D"], "has 3 rows after its header but there are 2 pairs"),
    (["--docs", "D", "--docs-column", "nope"], "has no column 'nope'"),
    (["--window", "0", "--random", "0"], "no negatives"),
    (["--negatives", "own", "--batch-size", "4"], "fewer than one batch of 4"),
])
def test_train_mnr_bad_input(xlmr, tmp_path, capsys, extra, message):
    p = tmp_path / "p.tsv"
    p.write_text("one two three\tuno due tre\nfour five\tquattro cinque\n", encoding="utf-8")
    d = tmp_path / "d.tsv"
    d.write_text("URL\na\nb\nc\n", encoding="utf-8")
    extra = [str(d) if a == "D" else a for a in extra]
    code = main(["train", "mnr", "--pairs", str(p), "--model", str(xlmr), "--out", str(tmp_path / "o"),
                 "--keep-test-overlap", "--batch-size", "2", *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()
