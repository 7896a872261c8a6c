"""``path=openvino-float32`` of ``hf`` and ``onealigner`` (``xsimpp.encoders.backbone.openvino_graph``) on
tiny models built here, and the layer views it and the torch path share.

- a view's hidden states and the whole model's agree whichever ran first (the transformers-5 hook
  bug ``layers._hook_once`` fixes: this test fails without it);
- the OpenVINO path agrees with torch float32, gives the same bits for a sentence whatever its
  batch, order, token budget or the other layers the graph outputs, and the shared pass equals
  each member's own vectors exactly;
- the fingerprint separates the paths; the default follows the weights; bad requests are one sentence.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("openvino")
pytest.importorskip("transformers")

SENTS = ["Una frase di prova.", "A short test sentence, with more words than the first one.", "Short.",
         "Another line of text that is a good deal longer than most of the others here, by design.", "x",
         "Ein Satz.", "Noch ein Satz mit einigen Wörtern mehr."]


@pytest.fixture(scope="module")
def tiny():
    import tiny_models

    return str(tiny_models.cached("xlmr"))


@pytest.mark.parametrize("view_first", [True, False])
def test_a_view_and_the_whole_model_give_the_same_hidden_states_in_either_order(tiny, view_first):
    import torch

    from xsimpp.encoders.backbone.batching import pad_batch, pad_id, tokenize
    from xsimpp.encoders.backbone.layers import drop_blocks_above
    from xsimpp.encoders.backbone.models import load_transformer

    def states(model, tok):
        ids, sp, _ = tokenize(tok, SENTS[:3], max_length=64)
        x, att, _ = pad_batch(ids, sp, pad_id(tok), "cpu")
        with torch.no_grad():
            return model(input_ids=x, attention_mask=att, output_hidden_states=True).hidden_states

    from pathlib import Path

    tok, fresh = load_transformer(Path(tiny), adapter="hf")
    want = states(fresh, tok)  # the whole model alone, in its own object
    tok, model = load_transformer(Path(tiny), adapter="hf")
    view = drop_blocks_above(model, 1)  # made before either has run, as the study's encoders are
    first, second = (view, model) if view_first else (model, view)
    a, b = states(first, tok), states(second, tok)
    whole, part = (b, a) if view_first else (a, b)
    assert len(whole) == len(want) and len(part) == 2
    for k in range(len(want)):
        assert torch.equal(whole[k], want[k]), f"layer {k} of the whole model changed after a view ran"
    assert torch.equal(part[1], want[1])


def test_openvino_agrees_with_torch_and_does_not_depend_on_batch_order_or_other_outputs(tiny):
    from xsimpp.encoders.backbone.layers import layer_vectors
    from xsimpp.encoders.hf import HFEncoder

    torch_enc = HFEncoder(model=tiny, layer=2, path="torch-float32")
    ov = HFEncoder(model=tiny, layer=2, path="openvino-float32")
    assert ov.backend.path == "openvino-float32" and torch_enc.backend.path == "torch-float32"
    want = ov.encode(SENTS)
    np.testing.assert_allclose(want, torch_enc.encode(SENTS), rtol=0, atol=1e-5)
    order = [6, 2, 0, 5, 3, 1, 4]
    for budget, rows in ((4096, 256), (16, 1), (40, 2)):
        ov.max_tokens, ov.batch_size = budget, rows
        again = ov.encode([SENTS[i] for i in order])
        assert np.array_equal(again, want[order]), (budget, rows)
    # layer 1 alone, and inside a graph that also outputs layer 2: the same bits
    one = HFEncoder(model=tiny, layer=1, path="openvino-float32").encode(SENTS)
    both = layer_vectors(ov, SENTS, [(1, "mean"), (2, "mean")])
    assert np.array_equal(both[0], one) and np.array_equal(both[1], want)


def test_the_weights_are_read_once_per_graph_not_once_per_call(tiny, monkeypatch):
    """The backend holds the torch weights weakly (freed once its graph is compiled) and keeps the
    tokenizer and width itself: 0.14.0 asked for the weights on every call and so, with them freed,
    reloaded the model three times per 1 024-sentence chunk of a study (half its encoding time)."""
    import gc

    from xsimpp.encoders.backbone import models
    from xsimpp.encoders.backbone.layers import layer_vectors
    from xsimpp.encoders.hf import HFEncoder

    loads = []
    real = models.load_transformer
    monkeypatch.setattr(models, "load_transformer", lambda *a, **k: loads.append(1) or real(*a, **k))
    ov = HFEncoder(model=tiny, layer=2, path="openvino-float32")
    first = ov.encode(SENTS)
    gc.collect()  # the weights, held by nothing now but the weak table, go
    assert len(loads) == 1
    for _ in range(3):
        assert np.array_equal(ov.encode(SENTS), first)
        layer_vectors(ov, SENTS, [(2, "mean")])
    assert len(loads) == 1, f"the model was loaded {len(loads)} times for one compiled graph"


def test_openvino_vectors_do_not_depend_on_the_thread_count(tiny):
    import subprocess
    import sys

    probe = ("import sys, numpy as np; import openvino as ov; from xsimpp.encoders.hf import HFEncoder; "
             "import xsimpp.encoders.openvino_cpu as oc; "
             "oc.COMPILE_CONFIG['INFERENCE_NUM_THREADS'] = sys.argv[2]; "
             "e = HFEncoder(model=sys.argv[1], path='openvino-float32'); "
             f"sys.stdout.write(e.encode({SENTS!r}).tobytes().hex())")
    outs = {n: subprocess.run([sys.executable, "-c", probe, tiny, n], capture_output=True, text=True, check=True).stdout
            for n in ("1", "2")}
    assert outs["1"] and outs["1"] == outs["2"]


def test_the_study_pass_on_openvino_equals_each_members_own_vectors_exactly(tiny, tmp_path):
    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.encoders.onealigner import OneAligner
    from xsimpp.study.config import EncoderSpec
    from xsimpp.study.encoders import build_encoders

    ov = {"path": "openvino-float32"}
    specs = [EncoderSpec("L1", "hf", {"model": tiny, "layer": 1, **ov}),
             EncoderSpec("L2", "hf", {"model": tiny, "layer": 2, **ov}),
             EncoderSpec("oa", "onealigner", {"model": tiny, "layer": 1, "scoring": "mean", "max_length": 512,
                                              "normalization": "none", **ov}),
             EncoderSpec("L2-torch", "hf", {"model": tiny, "layer": 2, "path": "torch-float32"})]
    encs = build_encoders(specs, cache=tmp_path / "cache")
    assert encs[0].group is encs[1].group is encs[2].group  # one OpenVINO pass for the three
    assert encs[3].group is not encs[0].group  # another path is another pass
    for se, layer in zip(encs[:2], (1, 2)):
        assert np.array_equal(se.vectors(SENTS, "eng_Latn"), HFEncoder(model=tiny, layer=layer, **ov).encode(SENTS))
    oa = OneAligner(model=tiny, layer=1, scoring="mean", normalization="none", max_length=512, **ov)
    own = np.stack([s.astype(np.float64).mean(0) for s in oa.token_states(SENTS)]).astype(np.float32)
    assert np.array_equal(encs[2].vectors(SENTS, "eng_Latn"), own)
    assert encs[1].cache.path.stem == HFEncoder(model=tiny, layer=2, **ov).fingerprint
    assert encs[1].cache.path.stem != encs[3].cache.path.stem


def test_the_path_is_in_the_fingerprint_and_the_default_follows_the_weights(tiny):
    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.encoders.onealigner import OneAligner

    t, o = HFEncoder(model=tiny), HFEncoder(model=tiny, path="openvino-float32")
    assert t.path == "torch-float32"  # no gate was run on other weights: torch unless asked
    assert t.revision == o.revision  # the weights; the path is a setting
    assert t.fingerprint != o.fingerprint
    assert o.config()["path"] == "openvino-float32" and o.config()["numerics"].startswith("openvino-")
    assert "path" not in t.config()  # torch caches keep the fingerprint they had before the knob
    a = OneAligner(model=tiny, layer=1, path="openvino-float32")
    assert a.states_fingerprint != OneAligner(model=tiny, layer=1).states_fingerprint


@pytest.mark.parametrize("kw, message", [
    ({"path": "openvino-int8"}, "option path takes one of torch-float32, openvino-float32"),
    ({"path": "openvino-float32", "autocast": "bf16"}, "need path=torch-float32"),
])
def test_bad_path_requests_are_one_sentence(tiny, kw, message):
    from xsimpp.encoders import create_encoder
    from xsimpp.errors import BadInputError

    with pytest.raises(BadInputError, match=message):
        create_encoder("hf", model=tiny, **kw)


def test_a_model_outside_the_bert_family_is_refused_on_openvino():
    from xsimpp.encoders.backbone.openvino_graph import OpenVINOGraph
    from xsimpp.encoders.backbone.torch_backend import Torch
    from xsimpp.errors import BadInputError

    with pytest.raises(BadInputError, match="BERT-family models .* this one is distilbert"):
        OpenVINOGraph.refuse("openvino-float32", adapter="hf", model_type="distilbert", device="cpu", autocast=None)
    with pytest.raises(BadInputError, match="runs on the CPU"):
        OpenVINOGraph.refuse("openvino-float32", adapter="hf", model_type="bert", device="cuda", autocast=None)
    Torch.refuse("torch-float32", adapter="hf", model_type="distilbert", device="cuda", autocast=None)
