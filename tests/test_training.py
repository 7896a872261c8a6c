"""`xsimpp train onealigner`: the loss (hand-checked), the cancellation of the constant term, the
data recipe on hand-written pairs, and a few real steps on a tiny model through the CLI."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import torch

from xsimpp.cli import main
from xsimpp.errors import BadInputError
from xsimpp.training.onealigner import (ALPHA, DEFAULT_LAYER, FilterReport, filter_pairs, global_contrastive_loss,
                                        normalised_logits, normalise_ws, onealigner_loss, read_pairs, read_parallel)


@pytest.fixture(scope="module")
def xlmr():
    import tiny_models

    old = torch.get_num_threads()  # tiny models: per-op overhead dominates, extra threads only spin
    torch.set_num_threads(1)
    yield tiny_models.cached("xlmr")
    torch.set_num_threads(old)


# -- the loss --------------------------------------------------------------------------------------

F2 = [[1.0, 0.0], [2.0, 4.0]]
# row means 0.5, 3; column means 1.5, 2; total 1.75; alpha 0.75 -> (2 alpha - 1) = 0.5
# S_00 = 1 - .75 (0.5 + 1.5) + .5 * 1.75 = 0.375 ; S_01 = 0 - .75 (0.5 + 2) + .875 = -1.0
# S_10 = 2 - .75 (3 + 1.5) + .875 = -0.5        ; S_11 = 4 - .75 (3 + 2) + .875 = 1.125
S2 = [[0.375, -1.0], [-0.5, 1.125]]


def test_alpha_is_the_scorers():
    from xsimpp.encoders.onealigner import ALPHA as scorer_alpha

    assert ALPHA == scorer_alpha == 0.75


def test_normalised_logits_hand_computed_and_centred():
    s = normalised_logits(torch.tensor(F2, dtype=torch.float64))
    np.testing.assert_allclose(s.numpy(), S2, atol=1e-12)
    assert abs(float(s.mean())) < 1e-12  # the (2 alpha - 1) term centres the batch exactly
    from xsimpp.encoders.onealigner import in_batch_normalize  # the scorer's numpy formula agrees

    f = np.random.default_rng(0).normal(size=(5, 5)) * 10
    np.testing.assert_allclose(normalised_logits(torch.tensor(f)).numpy(), in_batch_normalize(f, ALPHA, 0), atol=1e-4)
    # a constant added to every f changes no S (rows, columns and total all move by it)
    np.testing.assert_allclose(normalised_logits(torch.tensor(f + 7.0)).numpy(),
                               normalised_logits(torch.tensor(f)).numpy(), atol=1e-12)


def test_loss_value_by_hand():
    # positives 0.375 and 1.125, negatives -1 and -0.5: each positive against both negatives (not
    # against the other positive), logits / tau
    for tau in (1.0, 5.0):
        neg = math.exp(-1.0 / tau) + math.exp(-0.5 / tau)
        l0 = -0.375 / tau + math.log(math.exp(0.375 / tau) + neg)
        l1 = -1.125 / tau + math.log(math.exp(1.125 / tau) + neg)
        got = float(onealigner_loss(torch.tensor(F2, dtype=torch.float64), temperature=tau))
        assert got == pytest.approx((l0 + l1) / 2, abs=1e-12)


def test_loss_against_numpy_on_a_random_batch():
    rng = np.random.default_rng(1)
    f = rng.normal(size=(6, 6)) * 20 + 40
    r, c, mu = f.mean(1, keepdims=True), f.mean(0, keepdims=True), f.mean()
    z = (f - ALPHA * (r + c) + (2 * ALPHA - 1) * mu) / 5.0
    off = z[~np.eye(6, dtype=bool)]
    want = np.mean([-z[i, i] + np.log(np.exp(z[i, i]) + np.exp(off).sum()) for i in range(6)])
    assert float(onealigner_loss(torch.tensor(f), 5.0)) == pytest.approx(want, abs=1e-10)


def _row_softmax_loss(s):
    return torch.nn.functional.cross_entropy(s, torch.arange(s.shape[0]))


def test_the_constant_term_cancels_the_row_and_column_terms_do_not():
    f = (torch.randn(8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(2)) * 5).requires_grad_()
    loss = lambda s: float(global_contrastive_loss(s, 5.0).detach())  # noqa: E731
    a = ALPHA
    row, col, mu = f.mean(1, keepdim=True), f.mean(0, keepdim=True), f.mean()
    with_c = f - a * (row + col) + (2 * a - 1) * mu
    without_c = f - a * (row + col)
    # global in-batch negatives (the paper's loss): the constant cancels, value and gradient
    l1, l2 = global_contrastive_loss(with_c, 5.0), global_contrastive_loss(without_c, 5.0)
    g1, = torch.autograd.grad(l1, f)
    g2, = torch.autograd.grad(l2, f)
    assert float(l1.detach()) == pytest.approx(float(l2.detach()), abs=1e-12)
    torch.testing.assert_close(g1, g2, atol=1e-12, rtol=0)
    # ... but the row and column terms change it
    assert abs(loss(f - a * col) - loss(without_c)) > 1e-3
    assert abs(loss(f - a * row) - loss(without_c)) > 1e-3
    # a row-wise softmax (standard InfoNCE) would cancel the row term and keep the column term
    row_loss = lambda s: float(_row_softmax_loss(s).detach())  # noqa: E731
    assert row_loss(f - a * col) == pytest.approx(row_loss(without_c), abs=1e-12)
    assert abs(row_loss(f - a * row) - row_loss(without_c)) > 1e-3


# -- the data recipe -------------------------------------------------------------------------------

def _words(xs):
    return [len(x.split()) for x in xs]


PAIRS = [
    ("one two three four five", "uno due tre quattro cinque"),        # kept
    ("too short", "troppo corto ma lungo abbastanza"),                 # short source
    ("a held out  flores\tsentence here", "una frase tenuta fuori qui"),  # FLORES, after whitespace normalisation
    ("A held out flores sentence here", "una frase tenuta fuori qui"),    # case differs: no match, kept
    ("sei sette otto nove dieci", "tatoeba target sentence of five"),  # Tatoeba (target side)
    ("short", "short"),                                                # short, and also in FLORES: counted once
]


def test_filter_pairs_rules_and_counts():
    held = {"FLORES": ["a held out flores sentence here", "short"], "Tatoeba": [" tatoeba target sentence of five "],
            "Missing": None}
    kept, rep = filter_pairs(PAIRS, counts=_words, min_tokens=5, held_out=held)
    assert kept == [PAIRS[0], PAIRS[3]]
    assert rep.dropped == {"under 5 tokens": 2, "in FLORES": 1, "in Tatoeba": 1}
    assert (rep.total, rep.kept, rep.not_checked) == (6, 2, ["Missing"])
    assert "kept 2" in rep.summary() and "not found: Missing" in rep.summary()
    # min_tokens 0 / no counter: the length rule is off; "short" is then dropped as FLORES overlap
    kept, rep = filter_pairs(PAIRS, counts=None, held_out=held)
    assert rep.dropped == {"in FLORES": 2, "in Tatoeba": 1} and len(kept) == 3
    assert normalise_ws(" a\u00a0b\t\tc \n") == "a b c"
    assert isinstance(rep, FilterReport)


def test_token_counts_use_the_model_tokenizer_without_specials(xlmr):
    from transformers import AutoTokenizer

    from xsimpp.training.onealigner import token_counts

    tok = AutoTokenizer.from_pretrained(str(xlmr))
    n = token_counts(tok, ["a", "The dog sleeps in the garden."])
    assert n[0] == len(tok("a")["input_ids"]) - 2 and n[1] >= 5


def test_evaluation_sentences_from_a_data_root(tmp_path):
    from xsimpp.datasets.heldout import evaluation_sentences

    (tmp_path / "flores200" / "dev").mkdir(parents=True)
    (tmp_path / "flores200" / "devtest").mkdir(parents=True)
    (tmp_path / "flores200" / "dev" / "fur_Latn.dev").write_text("dev one\ndev two\n", encoding="utf-8")
    (tmp_path / "flores200" / "devtest" / "eng_Latn.devtest").write_text("devtest one\n", encoding="utf-8")
    (tmp_path / "tatoeba" / "v1").mkdir(parents=True)
    (tmp_path / "tatoeba" / "v1" / "tatoeba.fra-eng.fra").write_text("Bonjour.\n", encoding="utf-8")
    (tmp_path / "tatoeba" / "v1" / "tatoeba.fra-eng.eng").write_text("Hello.\n", encoding="utf-8")
    got = evaluation_sentences(tmp_path)
    assert sorted(got["FLORES-200 dev+devtest"]) == ["dev one", "dev two", "devtest one"]
    assert sorted(got["Tatoeba v1 test"]) == ["Bonjour.", "Hello."]
    assert got["Tatoeba Challenge test"] is None  # not here: reported as not checked


def test_readers(tmp_path):
    (tmp_path / "p.tsv").write_text("a b\tc d\n\ne f\tg h\n", encoding="utf-8")
    assert read_pairs(tmp_path / "p.tsv") == [("a b", "c d"), ("e f", "g h")]
    (tmp_path / "bad.tsv").write_text("a\tb\tc\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="bad.tsv:1"):
        read_pairs(tmp_path / "bad.tsv")
    (tmp_path / "s").write_text("x\ny\n", encoding="utf-8")
    (tmp_path / "t").write_text("X\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="line-aligned"):
        read_parallel(tmp_path / "s", tmp_path / "t")


# -- real steps on a tiny model ----------------------------------------------------------------------

def test_length_sorted_forward_equals_one_padded_call_and_masks_the_prompt(xlmr):
    from xsimpp.encoders.backbone.layers import token_states
    from xsimpp.encoders.backbone.models import load_transformer
    from xsimpp.training.onealigner import token_states_by_length

    tok, model = load_transformer(xlmr, adapter="t")
    sents = ["A dog.", "The cat sleeps on the warm mat all day long.", "Yes", "Birds fly south in the winter."]
    with torch.no_grad():
        a = token_states(model, tok, sents, layer=2, max_length=100, device="cpu", prompt="query: ")
        b = token_states_by_length(model, tok, sents, layer=2, max_length=100, device="cpu", prompt="query: ", chunk=2)
    assert torch.equal(a[1], b[1]) and torch.equal(a[2], b[2])
    m = a[1].bool()
    torch.testing.assert_close(a[0][m], b[0][m], atol=1e-5, rtol=1e-5)
    assert int(a[2][0].sum()) > 2  # <s>, </s> and the prompt's tokens are out of BERTScore


def _seed_files(tmp_path, n):
    from tiny_models import seed_files

    return seed_files(tmp_path, n)


def test_train_cli_on_line_aligned_files_loads_everywhere(xlmr, tmp_path, capsys):
    from safetensors.torch import load_file

    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.encoders.onealigner import OneAligner

    src, tgt = _seed_files(tmp_path, 64)
    out = tmp_path / "oa"
    code = main(["train", "onealigner", "--src", str(src), "--tgt", str(tgt), "--model", str(xlmr), "--out", str(out),
                 "--layer", "1", "--batch-size", "8", "--steps", "6", "--lr", "1e-3", "--prompt", "query: ",
                 "--log-every", "0", "--data-dir", str(tmp_path / "no-data")])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert "trained 6 steps on 64 pairs" in cap.out and "steps/s" in cap.out
    assert "64 pairs, kept 64; dropped: 0 under 5 tokens" in cap.err
    meta = json.loads((out / "xsimpp_training.json").read_text())
    assert meta["steps"] == 6 and meta["steps_per_second"] > 0 and meta["data"]["pairs"] == 64
    assert meta["hyperparameters"]["layer"] == 1 and meta["use"] == {"layer": 1, "prompt": "query: "}
    assert meta["base_model"]["revision"] and len(meta["data"]["sha256"]) == 64
    assert set(meta["data"]["file_sha256"]) == {"src", "tgt"} and meta["data"]["filter"]["kept"] == 64
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folder left behind
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~mask  # as mkdir makes it, not mkdtemp's 0700
    assert (out / "model.safetensors").stat().st_mode & 0o777 == 0o666 & ~mask
    before, after = load_file(str(xlmr / "model.safetensors")), load_file(str(out / "model.safetensors"))
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert any("layer.0." in k for k in changed) and not any("layer.1." in k for k in changed)  # above: untouched
    sents = ["Il cjan al duar.", "The dog sleeps."]
    assert HFEncoder(model=str(out), layer=1).encode(sents).shape == (2, 32)
    assert OneAligner(model=str(out), layer=1, batch_size=0).similarity(sents, sents).shape == (2, 2)
    # with no flags a checkpoint is read as it was trained: its layer and prompt (the manifest's "use")
    oa = OneAligner(model=str(out), batch_size=0)
    assert oa.layer == 1 and oa.prompt == "query: " and "the layer it was trained on" in oa.note
    assert HFEncoder(model=str(out)).prompt == "query: " and HFEncoder(model=str(out), prompt="").prompt == ""


def test_training_layer_default_is_the_scorers():
    from xsimpp.encoders.onealigner import DEFAULT_LAYER as SCORER_LAYER
    from xsimpp.training.onealigner import DEFAULT_LAYER, DEFAULT_MODEL

    assert DEFAULT_LAYER == SCORER_LAYER[DEFAULT_MODEL]


def test_finetuning_lowers_the_loss(xlmr, tmp_path):
    from xsimpp.training.onealigner import TrainConfig, train

    src, tgt = _seed_files(tmp_path, 400)
    pairs = read_parallel(src, tgt)
    res = train(pairs, str(xlmr), tmp_path / "out", TrainConfig(layer=2, lr=3e-4, batch_size=16, steps=60,
                                                                max_length=48, device="cpu"))
    first, last = np.mean(res.losses[:15]), np.mean(res.losses[-15:])
    assert last < first - 0.05, (first, last)


@pytest.mark.parametrize("argv, message", [
    (["--pairs", "P", "--src", "P", "--tgt", "P"], "either --pairs or --src/--tgt"),
    ([], "give the training pairs"),
    (["--src", "P"], "give the training pairs"),
])
def test_train_cli_bad_input(tmp_path, capsys, argv, message):
    p = tmp_path / "p.tsv"
    p.write_text("a\tb\n", encoding="utf-8")
    argv = [str(p) if a == "P" else a for a in argv]
    assert main(["train", "onealigner", *argv, "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err


def test_train_fewer_pairs_than_a_batch(xlmr, tmp_path, capsys):
    p = tmp_path / "p.tsv"
    p.write_text("one two three four five\tsix seven eight nine ten\n" * 3, encoding="utf-8")
    assert main(["train", "onealigner", "--pairs", str(p), "--model", str(xlmr), "--out", str(tmp_path / "o"),
                 "--keep-test-overlap"]) == 2
    assert "fewer than one batch of 64" in capsys.readouterr().err
