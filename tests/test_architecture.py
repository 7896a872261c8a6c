"""docs/architecture.md is true: its table of layers is the import map `tests/test_layering.py`
enforces, and each recipe works as written -- a throwaway task, metric, dataset and encoder are
added by touching only what the page says (here: the registries those files fill)."""

from __future__ import annotations

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
    import xsimpp.api as api
    import xsimpp.tasks as tasks

    monkeypatch.setattr(api, "TASKS", registry.TASKS)
    monkeypatch.setattr(tasks, "TASKS", registry.TASKS)
    monkeypatch.setattr(tasks, "METRICS", registry.METRICS)
    return registry


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


def test_recipe_a_dataset_and_an_encoder(registries, tmp_path, monkeypatch):
    import xsimpp.datasets as ds_pkg
    from xsimpp.api import evaluate
    from xsimpp.datasets.base import Dataset
    from xsimpp.encoders import VectorEncoder, create_encoder

    (tmp_path / "tiny").mkdir()
    for lang, words in (("eng_Latn", "one two three four five six"), ("deu_Latn", "eins zwei drei vier funf sechs")):
        (tmp_path / "tiny" / f"{lang}.test").write_text("\n".join(words.split()) + "\n", encoding="utf-8")

    class Tiny(Dataset):
        name, title, description = "tiny", "Tiny", "throwaway"
        splits, default_target, folders = ("test",), "eng_Latn", ("tiny",)

        def holds_data(self, folder):
            return any(folder.glob("*.test"))

        def languages(self):
            return sorted(p.stem for p in self.root().glob("*.test"))

        def file(self, code, partner=None):
            return self.root() / f"{code}.test"

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
    res = evaluate("onehot", "deu", dataset="tiny", data_dir=tmp_path, cache=False)
    rec = res.records[0]
    assert (rec.metric, rec.value, rec.signature.dataset, rec.signature.encoder) == ("xsim", 0.0, "tiny", "onehot")
