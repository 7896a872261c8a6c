"""`xsimpp train distill` (Reimers & Gurevych 2020): loss, steps, checkpoints and manifest on tiny
random models; the CLI's errors; the FLORES dev pairs on real data."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from xsimpp.cli import main
from xsimpp.encoders import create_encoder
from xsimpp.errors import BadInputError
from xsimpp.training.distill import DistillConfig, distill, distill_loss, examples, planned_steps, save_steps

WORDS = ("the house is big", "a small dog runs", "we eat bread today", "the river was cold", "music plays loud",
         "she reads a book", "children sing songs", "the market opens early")
PAIRS = [(f"src {i} {w[::-1]}", f"{w} {i}") for i, w in enumerate(WORDS * 3)]  # 24 pairs, 24 English lines


@pytest.fixture(scope="module")
def tiny():
    import tiny_models

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield {k: tiny_models.cached(k) for k in ("bert", "sbert", "xlmr")}
    torch.set_num_threads(old)


def _teacher(folder, calls: list):
    teacher = create_encoder("hf", model=str(folder), device="cpu")
    encode = teacher.encode

    def counted(sentences, **kw):
        calls.append(list(sentences))
        return encode(sentences, **kw)

    teacher.encode = counted
    return teacher


def test_loss_by_hand():
    s = torch.tensor([[3.0, 0.0], [0.0, 1.0]])
    t = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    # row 0: same direction -> 0; row 1: (0, 1) vs (1, 1)/sqrt2 -> 2 - 2 cos(45 deg) = 2 - sqrt2
    assert math.isclose(float(distill_loss(s, t)), (0 + 2 - math.sqrt(2)) / 2, rel_tol=1e-6)
    # the paper's raw MSE: row 0 (3,0)-(1,0) -> 4, row 1 (0,1)-(1,1) -> 1; mean over 4 entries = 5/4
    assert math.isclose(float(distill_loss(s, t, "mse")), 5 / 4, rel_tol=1e-6)
    with pytest.raises(BadInputError, match="--loss"):
        DistillConfig(loss="cosine").check()


def test_examples_steps_and_checkpoint_schedule():
    pairs = [("a", "A"), ("b", "B"), ("c", "A")]
    assert examples(pairs, ["A", "B"], True) == [("a", 0), ("b", 1), ("c", 0), ("A", 0), ("B", 1)]
    assert examples(pairs, ["A", "B"], False) == [("a", 0), ("b", 1), ("c", 0)]
    assert planned_steps(DistillConfig(batch_size=2, epochs=2), pairs) == 6  # 5 examples -> 3 batches a pass
    assert planned_steps(DistillConfig(batch_size=2, epochs=2, english=False), pairs) == 4
    assert save_steps(10, 3) == [3, 6, 9, 10]
    assert save_steps(10, 0) == [10]


def test_distill_sbert_student_learns_writes_loadable_checkpoints_and_encodes_english_once(tiny, tmp_path):
    calls: list = []
    teacher = _teacher(tiny["bert"], calls)
    cfg = DistillConfig(batch_size=8, lr=1e-3, warmup=0.0, steps=20, save_every=7, seed=3, device="cpu")
    out = tmp_path / "ckpt"
    results = distill(PAIRS, teacher, out, cfg, student=str(tiny["sbert"]), data_info={"note": "test"})
    # the teacher saw the 24 English lines once, before the first step, never a source
    assert sum(len(c) for c in calls) == 24 and {s for c in calls for s in c} == {e for _, e in PAIRS}
    assert [r.steps for r in results] == [7, 14, 20]  # every 7th step and the last
    assert sorted(p.name for p in out.iterdir()) == ["step-00007", "step-00014", "step-00020"]
    losses = results[-1].losses
    # It learns: the last steps' loss well under the first steps' (0.50x of it with transformers 5.24 /
    # sentence-transformers 6.2, so a 0.5x line sat on the edge of the libraries' initialisation).
    assert len(losses) == 20 and np.mean(losses[-5:]) < 0.6 * np.mean(losses[:5])
    meta = json.loads((out / "step-00014" / "xsimpp_training.json").read_text())
    assert meta["step"] == 14 and meta["seed"] == 3 and meta["loss"]["last"] == losses[13]
    assert meta["teacher"]["id"] == teacher.id and meta["teacher"]["revision"] == teacher.revision
    assert meta["base_model"]["name"] == str(tiny["sbert"]) and meta["data"]["pairs"] == 24
    assert len(meta["data"]["sha256"]) == 64 and meta["data"]["note"] == "test"
    assert meta["checkpoints"] == {"steps": [7, 14, 20], "of": 20}
    # each checkpoint is an sbert encoder; the last is closer to the teacher's English than the start
    t = teacher.encode([e for _, e in PAIRS])
    t /= np.linalg.norm(t, axis=1, keepdims=True)

    def gap(folder):
        v = create_encoder("sbert", model=str(folder), device="cpu").encode([s for s, _ in PAIRS])
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return float(((v - t) ** 2).sum(1).mean())

    assert gap(out / "step-00020") < 0.5 * gap(tiny["sbert"])
    # deterministic with the seed
    again = distill(PAIRS, teacher, tmp_path / "again", cfg, student=str(tiny["sbert"]))
    assert again[-1].losses == losses


def test_distill_hf_student_loads_with_hf(tiny, tmp_path):
    teacher = _teacher(tiny["bert"], [])
    cfg = DistillConfig(batch_size=8, steps=4, english=False, device="cpu")
    res = distill(PAIRS, teacher, tmp_path / "hf", cfg, student=str(tiny["xlmr"]))
    enc = create_encoder("hf", model=str(res[-1].out), device="cpu")
    assert enc.encode(["src 1 x"]).shape == (1, 32)
    meta = json.loads((res[-1].out / "xsimpp_training.json").read_text())
    assert meta["hyperparameters"]["student_kind"] == "hf" and meta["steps"] == 4


def test_distill_errors_are_one_sentence(tiny, tmp_path):
    teacher = _teacher(tiny["bert"], [])
    with pytest.raises(BadInputError, match="fewer than one batch"):
        distill(PAIRS[:2], teacher, tmp_path / "x", DistillConfig(batch_size=8))
    with pytest.raises(BadInputError, match="--save-every must be >= 0"):
        distill(PAIRS, teacher, tmp_path / "x", DistillConfig(save_every=-1))
    with pytest.raises(BadInputError, match="takes no --prompt"):
        distill(PAIRS, teacher, tmp_path / "x", DistillConfig(batch_size=8, prompt="query: "), student=str(tiny["sbert"]))
    assert not (tmp_path / "x").exists()


def test_cli_errors_exit_2(tmp_path, capsys):
    assert main(["train", "distill", "--langs", "xx_Nope", "--out", str(tmp_path / "o")]) == 2
    assert "xx_Nope" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["train", "distill", "--out", str(blocker / "sub")]) == 2
    assert main(["train", "distill", "--batch-size", "0", "--out", str(tmp_path / "o")]) == 2


def test_flores_dev_pairs_and_oldi_seed_on_real_data(real_data):
    from xsimpp.cli.train import distill_pairs

    pairs, info = distill_pairs(["kea_Latn", "fur_Latn"], real_data, oldi_seed=True)
    assert info["sources"]["flores200-dev:kea_Latn"] == 997 == info["sources"]["flores200-dev:fur_Latn"]
    assert info["sources"]["oldi-seed:fur_Latn"] == 6193
    assert len(pairs) == info["filter"]["kept"] <= 997 * 2 + 6193
    devtest = set((real_data / "flores200" / "devtest" / "eng_Latn.devtest").read_text().splitlines())
    assert not devtest & {e for _, e in pairs}


def test_center_teacher_trains_onto_the_centred_english(tiny, tmp_path):
    teacher = _teacher(tiny["bert"], [])
    t = teacher.encode([e for _, e in PAIRS])  # the 24 English lines are all distinct: their mean is subtracted
    targets = {"raw": t, "centred": t - t.mean(0)}
    targets = {k: v / np.linalg.norm(v, axis=1, keepdims=True) for k, v in targets.items()}
    gaps = {}
    for center in (False, True):
        cfg = DistillConfig(batch_size=8, lr=1e-3, warmup=0.0, steps=20, seed=3, device="cpu", center_teacher=center)
        res = distill(PAIRS, teacher, tmp_path / str(center), cfg, student=str(tiny["sbert"]))
        meta = json.loads((res[-1].out / "xsimpp_training.json").read_text())
        assert meta["hyperparameters"]["center_teacher"] is center
        v = create_encoder("sbert", model=str(res[-1].out), device="cpu").encode([s for s, _ in PAIRS])
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        gaps[center] = {k: float(((v - u) ** 2).sum(1).mean()) for k, u in targets.items()}
    # each run went nearer its own targets than the other run did
    assert gaps[True]["centred"] < gaps[False]["centred"] and gaps[False]["raw"] < gaps[True]["raw"]


def test_hold_out_dev_leaves_the_first_lines_out_on_real_data(real_data):
    from xsimpp.cli.train import distill_pairs

    pairs, info = distill_pairs(["kea_Latn"], real_data, hold_out_dev=300)
    dev = real_data / "flores200" / "dev"
    kea = (dev / "kea_Latn.dev").read_text(encoding="utf-8").splitlines()
    eng = (dev / "eng_Latn.dev").read_text(encoding="utf-8").splitlines()
    assert info["hold_out_dev"] == 300 and info["filter"]["dropped"]["in the first 300 FLORES-200 dev lines"] == 300
    assert pairs == list(zip(kea[300:], eng[300:]))
    with pytest.raises(BadInputError, match="hold-out-dev"):
        distill_pairs(["kea_Latn"], real_data, hold_out_dev=-1)
