"""benchmarks/studies.py (issue 36): the proxy studies the docs quote are committed as small files,
each ran the configuration the driver writes, its rankings recompute from its cells.csv, and the
docs' tables are exactly what those files give."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import assert_section_is

ROOT = Path(__file__).resolve().parent.parent
STUDIES = runpy.run_path(str(ROOT / "benchmarks" / "studies.py"))
# each table, the page that quotes it and the studies it reads
PAGES = {"small": ("docs/performance.md", ["small"]),
         "targets": ("docs/guides/negatives.md", ["target-eng", "target-fra"])}


@pytest.mark.parametrize("name", sorted(STUDIES["STUDIES"]))
def test_each_configuration_is_a_valid_study(name):
    from xsimpp.study.config import check_config, parse_config

    cfg = parse_config(STUDIES["STUDIES"][name]())
    check_config(cfg)
    assert cfg.name == name and len(cfg.encoders) == 8
    if name.startswith("target-"):
        assert "fra" not in cfg.languages and (cfg.flores_lines, cfg.distractors, cfg.tatoeba) == (300, 10000, False)
        assert cfg.target == {"target-eng": "eng_Latn", "target-fra": "fra_Latn"}[name]


@pytest.mark.parametrize("name", sorted(STUDIES["STUDIES"]))
def test_each_committed_study_ran_its_configuration_and_its_rankings_recompute_from_its_cells(name):
    folder = STUDIES["folder"](name)
    assert (folder / "config.toml").read_text(encoding="utf-8") == STUDIES["STUDIES"][name](), \
        f"{folder} ran another configuration than the driver writes"
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from study_rerank import orientation, read_study
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from xsimpp.study.run import _rank_all

    meta, cells = read_study(folder)
    again = _rank_all(cells, list(meta["proxies"]), orientation(meta), SimpleNamespace(**meta["config"]), [])
    for truth, report in again.items():
        committed = json.loads((folder / f"ranking_{truth}.json").read_text(encoding="utf-8"))
        fresh = json.loads(json.dumps(report.to_json()))
        assert [p["proxy"] for p in fresh["proxies"]] == [p["proxy"] for p in committed["proxies"]]
        for a, b in zip(fresh["proxies"], committed["proxies"]):
            assert (a["accuracy"], a["ci_low"], a["ci_high"]) == pytest.approx((b["accuracy"], b["ci_low"], b["ci_high"]),
                                                                             abs=1e-12), (truth, a["proxy"])
        assert [c["p_value"] for c in fresh["comparisons"]] == pytest.approx([c["p_value"] for c in committed["comparisons"]])


@pytest.mark.parametrize("table", sorted(PAGES))
def test_the_docs_quote_what_the_committed_folders_give(table):
    page, names = PAGES[table]
    for name in names:
        assert (STUDIES["folder"](name) / "config.toml").is_file(), f"{name} is not committed: the docs' table has no source"
    text = (ROOT / page).read_text(encoding="utf-8")
    assert_section_is(text, f"<!-- study:{table} -->", "<!-- /study -->", STUDIES["TABLES"][table]())


def test_a_cell_is_the_rankings_accuracy_ci_and_p_against_the_best():
    rank = {"proxies": [{"proxy": "a", "accuracy": 0.9, "ci_low": 0.85, "ci_high": 0.95},
                        {"proxy": "b", "accuracy": 0.8, "ci_low": 0.751, "ci_high": 0.849}],
            "comparisons": [{"a": "a", "b": "b", "p_value": 0.0123}]}
    assert STUDIES["_cell"](rank, "a") == "90.0 [85.0, 95.0] best"
    assert STUDIES["_cell"](rank, "b") == "80.0 [75.1, 84.9] p 0.012"
    assert STUDIES["_cell"](rank, "c") == "-"
