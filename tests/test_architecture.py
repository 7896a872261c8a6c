"""docs/architecture.md is true: its table of layers is the import map `tests/test_layering.py`
enforces, and each recipe works as written -- a throwaway task, metric, dataset, encoder and numeric
backend are added by touching only what the page says (here: the registries those files fill)."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _table() -> dict[str, set[str]]:
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|$", PAGE, re.M)
    return {pkg: {x.strip() for x in deps.split(",")} - {"—"} for pkg, deps in rows}


def test_the_layer_table_is_the_enforced_import_map():
    sys.path.insert(0, str(ROOT / "tests"))
    from test_layering import ALLOWED, BASE

    table = _table()
    for pkg, allowed in ALLOWED.items():
        if pkg in ("(root)", "__main__"):
            continue
        assert pkg in table, f"docs/architecture.md has no row for {pkg}"
        if allowed is None:
            assert table[pkg] == {"anything"}
            continue
        shown = set(table[pkg])
        if "base" in shown:
            shown = (shown - {"base"}) | BASE
        assert shown == allowed, f"{pkg}: the page says {sorted(shown)}, the test enforces {sorted(allowed)}"
    assert set(table) == {p for p in ALLOWED if p not in ("(root)", "__main__")}


@pytest.fixture
def registries(monkeypatch):
    """The registries as the recipes' one line fills them, restored after the test."""
    from xsimpp import datasets, encoders
    from xsimpp.tasks import registry

    monkeypatch.setattr(registry, "TASKS", dict(registry.TASKS))
    monkeypatch.setattr(registry, "METRICS", dict(registry.METRICS))
    monkeypatch.setattr(datasets, "DATASETS", dict(datasets.DATASETS))
    monkeypatch.setattr(encoders, "BUILTIN", dict(encoders.BUILTIN))
    return registry  # the registries' one binding: nothing else holds them by name


def test_recipe_a_task_and_its_metric(registries, capsys):
    from xsimpp.api import run
    from xsimpp.cli import main
    from xsimpp.tasks.base import MetricInfo, Settings, Task, TaskReport, knob, sign
    from xsimpp.results import ResultRecord

    @dataclass(frozen=True)
    class CountSource:
        words: str = knob("a b c", "the sentences, space-separated")

    @dataclass(frozen=True)
    class CountSettings(Settings):
        scale: float = knob(1.0, "multiplier", type=float)

    class CountTask(Task):
        name = "count-dims"
        description = "throwaway: the encoder's dimension"
        metrics = {"dims": MetricInfo("dims", False, "vector size")}
        Source, Settings, cli = CountSource, CountSettings, True

        def load(self, source, settings):
            return source.words.split()

        def evaluate(self, encoder, data, settings, ctx):
            vecs = encoder.encode(data)
            rep = TaskReport()
            rep.records.append(ResultRecord("dims", settings.scale * vecs.shape[1], len(data), "x", "x",
                                            sign(encoder, "words", "all", "0", "dims", settings)))
            return rep

        def render(self, report):
            return f"dims {report.records[0].value:g}"

    registries.register(CountTask())  # the one line in xsimpp/tasks/__init__.py
    assert registries.METRICS["dims"].producer == "count-dims"
    res = run("count-dims", "chargram", scale=2.0, cache=False, options={"n_features": 64})
    assert res.records[0].value == 128 and res.records[0].signature.params == {"scale": 2.0}
    assert main(["count-dims", "--encoder", "chargram", "--encoder-opt", "n_features=32", "--no-save", "--no-cache",
                 "--no-progress"]) == 0
    assert "dims 32" in capsys.readouterr().out

    registries.register_metrics("some-command", {"agreement": MetricInfo("%", False)})  # a metric without a task
    from xsimpp.tasks.ranking import _lower_is_better

    assert registries.METRICS["agreement"].producer == "some-command" and not _lower_is_better("agreement")


THROWAWAY_DATASET = '''
from xsimpp.datasets.base import Dataset


class Tiny(Dataset):
    name, title, description = "tiny", "Tiny", "throwaway: six words in English and German"
    splits, default_target, folders = ("test",), "eng_Latn", ("tiny",)
    download_hint = "write it yourself"

    def holds_data(self, folder):
        return any(folder.glob("*.test"))

    def languages(self):
        return sorted(p.stem for p in self.root().glob("*.test"))

    def file(self, code, partner=None):
        return self.root() / f"{code}.test"
'''
REGISTER_AND_RUN = """import sys
import xsimpp.datasets as datasets
from throwaway_dataset import Tiny

datasets.DATASETS[Tiny.name] = Tiny  # the one line in xsimpp/datasets/__init__.py
from xsimpp.cli import main

sys.exit(main(sys.argv[1:]))
"""


def throwaway_dataset(tmp_path, monkeypatch):
    """The dataset recipe's one module, written to ``tmp_path`` and imported, and its data root."""
    (tmp_path / "throwaway_dataset.py").write_text(THROWAWAY_DATASET, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "throwaway_dataset", raising=False)
    data = tmp_path / "data"
    (data / "tiny").mkdir(parents=True)
    for lang, words in (("eng_Latn", "one two three four five six"), ("deu_Latn", "eins zwei drei vier funf sechs")):
        (data / "tiny" / f"{lang}.test").write_text("\n".join(words.split()) + "\n", encoding="utf-8")
    from throwaway_dataset import Tiny

    return Tiny, data


def test_recipe_a_dataset_and_an_encoder(registries, tmp_path, monkeypatch):
    import xsimpp.datasets as ds_pkg
    from xsimpp.api import evaluate
    from xsimpp.encoders import VectorEncoder, create_encoder

    Tiny, data = throwaway_dataset(tmp_path, monkeypatch)

    class Onehot(VectorEncoder):  # the same position in each file, the same vector
        name = "onehot"

        @property
        def revision(self):
            return "v1"

        def encode(self, sentences, *, lang=None, progress=None):
            table = {w: i for i, w in enumerate("one two three four five six".split())}
            table.update({w: i for i, w in enumerate("eins zwei drei vier funf sechs".split())})
            return np.eye(6, dtype=np.float32)[[table[s] for s in sentences]]

    ds_pkg.DATASETS[Tiny.name] = Tiny  # the one line in xsimpp/datasets/__init__.py
    module = type(sys)("throwaway_encoder")
    module.Onehot = Onehot
    monkeypatch.setitem(sys.modules, "throwaway_encoder", module)
    import xsimpp.encoders as enc_pkg

    enc_pkg.BUILTIN["onehot"] = "throwaway_encoder:Onehot"  # the one line in xsimpp/encoders/__init__.py
    assert isinstance(create_encoder("onehot"), Onehot)
    res = evaluate("onehot", "deu", dataset="tiny", data_dir=data, cache=False)
    rec = res.records[0]
    assert (rec.metric, rec.value, rec.signature.dataset, rec.signature.encoder) == ("xsim", 0.0, "tiny", "onehot")


def test_the_task_registries_have_one_binding():
    """``TASKS`` and ``METRICS`` are bound in ``xsimpp/tasks/registry.py`` only: every other module
    looks them up there at call time (``registry.task(name)``), so swapping them in one place swaps
    them for the API, the CLI, the study and the integrations alike (the fixture above relies on it)."""
    binds = re.compile(r"^\s*from\s+[\w.]+\s+import\s+[^#\n]*\b(TASKS|METRICS)\b", re.M)
    offenders = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "xsimpp").rglob("*.py"))
                 if p.name != "registry.py" and binds.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


THROWAWAY_BACKEND = '''
from xsimpp.encoders.backbone.backend import Identity
from xsimpp.encoders.backbone.torch_backend import Torch


class Float16Rounded(Torch):
    """torch vectors rounded to float16, as a half-precision path would give them"""

    identity_fields = ("path", "numerics")

    def identity(self):
        return Identity(self.path, {"path": self.path, "numerics": "torch-float16-rounded"})

    def pooled(self, h, att, pooling):
        return super().pooled(h, att, pooling).astype("float16").astype("float32")


class Forgetful(Float16Rounded):
    def identity(self):  # leaves out a field it declares
        return Identity(self.path, {"path": self.path})


class Anonymous(Float16Rounded):
    identity_fields = ()
'''


def test_recipe_a_numeric_backend(tmp_path, monkeypatch):
    """One file and one line in BACKENDS: `path=` runs it, its identity is in every fingerprint, and a
    backend that declares no identity, or leaves a declared field out, is refused."""
    import tiny_models

    from xsimpp.encoders.backbone import backend
    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.encoders.onealigner import OneAligner

    (tmp_path / "throwaway_backend.py").write_text(THROWAWAY_BACKEND, encoding="utf-8")  # the one file
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(backend, "BACKENDS", dict(backend.BACKENDS))
    backend.BACKENDS["torch-float16-rounded"] = "throwaway_backend:Float16Rounded"  # the one line
    model = str(tiny_models.cached("bert"))
    new = HFEncoder(model=model, path="torch-float16-rounded")
    others = [HFEncoder(model=model, path=p) for p in backend.backend_paths("hf") if p != "torch-float16-rounded"]
    others.append(HFEncoder(model=model, path="torch-float32", autocast="bf16"))
    assert len(others) >= 3 and new.fingerprint not in {e.fingerprint for e in others}
    assert new.config()["numerics"] == "torch-float16-rounded"
    vectors = new.encode(["one sentence", "and another one"])
    assert vectors.dtype == np.float32 and np.array_equal(vectors, vectors.astype(np.float16).astype(np.float32))
    assert "torch-float16-rounded" in OneAligner(model=model, layer=1, path="torch-float16-rounded").states_config().values()
    for name, message in (("Forgetful", "must give a label and exactly the fields path, numerics"),
                          ("Anonymous", "declares no identity_fields")):
        backend.BACKENDS["torch-forgetful"] = f"throwaway_backend:{name}"
        with pytest.raises(TypeError, match=message):
            HFEncoder(model=model, path="torch-forgetful")


def test_recipe_a_dataset_is_an_eval_dataset_and_a_distractor_source(registries, tmp_path, monkeypatch, capsys):
    """One module and one line in DATASETS: `--dataset tiny` (its help and the API), a row of
    `xsimpp datasets`, and the distractor source "tiny" of mining-f1 and the study."""
    import subprocess

    import xsimpp.datasets as ds_pkg
    from xsimpp.api import evaluate
    from xsimpp.cli import main
    from xsimpp.datasets.pool import build_distractors, check_sources, read_source

    recipe = PAGE.split("### A dataset")[1].split("###")[0]
    assert "`DATASETS`" in recipe and "`xsimpp datasets`" in recipe and "distractor" in recipe
    Tiny, data = throwaway_dataset(tmp_path, monkeypatch)  # the one module
    # the help is read off the registry when the CLI is imported: a fresh process, the line run first
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "XSIMPP_HOME": str(tmp_path / "home")}
    helps = {command: subprocess.run([sys.executable, "-c", REGISTER_AND_RUN, command, "--help"], text=True,
                                     capture_output=True, check=True, env=env).stdout
             for command in ("eval", "mining-f1")}
    assert re.search(r"--dataset DATASET +flores200, .*, demo, tiny ", " ".join(helps["eval"].split()))
    assert re.search(r"taken whole, in order \(flores200-dev, [^)]*, tiny\)", " ".join(helps["mining-f1"].split()))

    ds_pkg.DATASETS[Tiny.name] = Tiny  # the one line, in this process
    res = evaluate("chargram", "deu", dataset="tiny", data_dir=data, cache=False)
    assert (res.records[0].signature.dataset, res.records[0].n) == ("tiny", 6)
    assert main(["datasets", "--data-dir", str(data)]) == 0
    assert re.search(r"^tiny +test +found +- +tiny +throwaway", capsys.readouterr().out, re.M)
    check_sources(["tiny"], "--whole-sources")
    assert read_source("tiny", [data], "deu_Latn") == "eins zwei drei vier funf sechs".split()
    pool = build_distractors(["tiny"], [], 4, 0, {"one", "two"}, [data])
    assert pool.lines == ["three", "four", "five", "six"] and pool.per_source == {"tiny": 4}
