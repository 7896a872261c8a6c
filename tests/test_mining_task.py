"""`xsimpp mining-f1`: the study's ground truth as a task of its own, run through the runner, the
API and the CLI, equal to the study's mining cells for the same settings."""

from __future__ import annotations

import json
import re

import numpy as np

import pytest

import xsimpp
from xsimpp.api import study as run_study
from xsimpp.cli import main
from xsimpp.errors import BadInputError
from xsimpp.tasks import METRICS, TASKS

SETTINGS = dict(flores_lines=60, ntrex_lines=60, unpaired_sources=20, whole_sources=("ntrex128",),
                fill_sources=("oldi-seed",), distractors=1500, seed=3, fixed_threshold=1.1)


def _chargram_study(name: str, *, study: str = "", proxies: str = "", mining: str = ""):
    """A study of two character n-gram encoders on fao and swh (60 FLORES + 60 NTREX lines, 1 500
    distractors, no xsim++ or Tatoeba), with ``study``/``proxies``/``mining`` lines added to the tables."""
    from xsimpp.study.config import parse_config

    return parse_config(f"""[study]
name = "{name}"
languages = ["fao", "swh"]
flores_lines = 60
ntrex_lines = 60
{study}[proxies]
xsimpp_styles = []
error_type_subsets = false
tatoeba = false
{proxies}[mining]
distractors = 1500
whole_sources = ["ntrex128"]
fill_sources = ["oldi-seed"]
{mining}[[encoders]]
label = "cg"
name = "chargram"
[[encoders]]
label = "cg-2"
name = "chargram"
options = {{ ngram_max = 2 }}
""")


def test_the_task_is_registered_with_its_metrics():
    task = TASKS["mining-f1"]
    assert task.cli and {m for m, info in METRICS.items() if info.producer == "mining-f1"} == set(task.metrics)
    assert all(not METRICS[m].lower_is_better for m in task.metrics)


def test_mining_f1_equals_the_study_cells(real_data, tmp_path):
    """The same languages, gold, unpaired sources, pool and settings: the standalone task's numbers
    are the study's mining cells (the study runs this very task on its own vectors)."""
    res = xsimpp.mining_f1("chargram", "fao,swh", cache=False, data_dir=real_data, **SETTINGS)
    alone = {(r.src_lang, r.metric): r.value for r in res.records}
    # NTREX has fao and swa: every metric but the Tatoeba gold's, which is asked for by name
    assert {m for _, m in alone} == set(TASKS["mining-f1"].metrics) - {"mining_f1_tatoeba"}
    assert res.records[0].signature.dataset == "mining"
    assert res.records[0].signature.params["unpaired_sources"] == 20 and "system" not in res.records[0].signature.params

    cfg = _chargram_study("same", study="seed = 3\n",
                          mining="fixed_threshold = 1.1\nunpaired_sources = 20\n")
    study = run_study(cfg, data_dir=real_data, cache=False)
    cells = {(c["lang"], m): c[m] for c in study.cells if c["system"] == "cg" for m in TASKS["mining-f1"].metrics
             if m in c}
    assert cells == alone
    truth = next(r for r in study.records if r.metric == "mining_f1").signature
    assert truth.dataset == "study:same" and truth.params["system"] == "cg"
    # the settings sign both alike (the study's data and label aside)
    assert {k: v for k, v in truth.params.items() if k != "system"} == res.records[0].signature.params


def test_cli_mining_f1(real_data, capsys):
    code = main(["mining-f1", "--encoder", "chargram", "--langs", "fao", "--flores-lines", "40", "--ntrex-lines", "0",
                 "--whole-sources", "ntrex128", "--fill-sources", "oldi-seed", "--distractors", "1000", "--data-dir",
                 str(real_data), "--tatoeba-gold", "--no-progress", "--json"])
    out = capsys.readouterr().out
    recs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert code == 0 and {r["metric"] for r in recs} == set(TASKS["mining-f1"].metrics)
    from xsimpp.datasets import TatoebaV1

    tatoeba = TatoebaV1("test", real_data).bitext("fao", "eng")
    # 40 FLORES + every NTREX line (ntrex_lines 0 = all) + Tatoeba v1's distinct fao pairs
    assert {r["n"] for r in recs} == {40 + 1997 + len(set(zip(tatoeba.src, tatoeba.tgt)))}


@pytest.mark.parametrize("knobs, message", [
    (dict(langs="fao", whole_sources=("nope",)), "distractor source 'nope' is unknown"),
    (dict(langs="fao,eng"), "the target eng_Latn"),
    (dict(langs="fao,fao_Latn"), "twice"),
    (dict(langs="fao", folds=1), "folds must be at least 2"),
    (dict(langs="fao", distractors=0), "positive number of lines"),
    (dict(langs="fao", unpaired_sources=5, whole_sources=("flores200-dev",)), "cannot also be a distractor source"),
    (dict(langs="fao", flores_lines=-1), "--flores-lines must be 0 or a positive"),
    (dict(langs=None), "give --langs"),
])
def test_bad_input_is_one_sentence_before_any_model(knobs, message):
    with pytest.raises(BadInputError, match=message):
        xsimpp.mining_f1("no-such-encoder-is-loaded-first", cache=False, **knobs)


def test_a_study_proxy_is_a_registered_metric_named_in_the_config(real_data):
    """Adding a proxy touches no file: a [[proxies.task]] table names a registered task and metric;
    its cells equal the task run alone, its records are the task's own, and the ranking orients
    it as the metric registry says (MTEB's F1: higher is better)."""
    cfg = _chargram_study("extra", proxies="""[[proxies.task]]
task = "mteb-bitext"
metric = "mteb_bitext_f1"
column = "mteb"
[[proxies.task]]
task = "xsim"
metric = "xsim"
column = "xsim-k8"
options = { k = 8 }
""")
    study = run_study(cfg, data_dir=real_data, cache=False)
    assert study.proxies[-2:] == ["mteb", "xsim-k8"] and study.lower_is_better["mteb"] is False
    alone = xsimpp.run("mteb-bitext", "chargram", langs="fao,swh", limit=60, data_dir=real_data, cache=False)
    k8 = xsimpp.evaluate("chargram", "fao,swh", limit=60, k=8, data_dir=real_data, cache=False)
    for lang in ("fao_Latn", "swh_Latn"):
        cell = next(c for c in study.cells if c["system"] == "cg" and c["lang"] == lang)
        assert cell["mteb"] == next(r.value for r in alone.records if r.src_lang == lang)
        assert cell["xsim-k8"] == next(r.value for r in k8.records if r.src_lang == lang)
    mine = [r for r in study.records if r.metric == "mteb_bitext_f1"]
    assert len(mine) == 4 and {r.signature.format() for r in mine} >= {r.signature.format() for r in alone.records}
    assert "mteb" in {p.proxy for p in study.rankings["mining_f1"].proxies}


@pytest.mark.parametrize("entry, message", [
    ('task = "nope"\nmetric = "x"', "unknown task 'nope'"),
    ('task = "xsim"\nmetric = "bleu"', "task xsim has no metric 'bleu'"),
    ('task = "mining-f1"\nmetric = "mining_f1"', "does not score a language's bitext"),
    ('task = "xsim"\nmetric = "xsim"\noptions = { langs = "deu" }', "the study sets 'langs' itself"),
    ('task = "xsim"\nmetric = "xsim"\noptions = { kk = 3 }', "task xsim has no option 'kk'"),
    ('task = "xsim"\nmetric = "xsim"\ncolumn = "xsim[ratio]"', "column name 'xsim[ratio]' is taken"),
])
def test_a_bad_task_proxy_is_one_sentence(entry, message):
    from xsimpp.study.config import PRESETS, parse_config

    with pytest.raises(BadInputError, match=re.escape(message)):
        parse_config(PRESETS["small"].replace("[mining]", f"[[proxies.task]]\n{entry}\n\n[mining]"))


GOLD_APART = dict(flores_lines=40, flores_gold_split="dev", flores_gold_offset=20, ntrex_lines=60,
                  ntrex_sample="seeded", tatoeba_gold=True, unpaired_sources=20, whole_sources=("ntrex128",),
                  fill_sources=("oldi-seed",), distractors=1500, seed=3, fixed_threshold=1.1)


def test_gold_apart_from_the_proxies_equals_the_study_cells(real_data):
    """FLORES gold from dev lines past the unpaired sources, a seeded NTREX sample and Tatoeba v1 as a
    third gold set: the standalone task signs each option and equals the study's cells, whose
    proxies keep FLORES devtest's first lines; the per-sentence outcomes add up to every F1."""
    from xsimpp.datasets import Flores200, TatoebaV1
    from xsimpp.datasets.ntrex import Ntrex128
    from xsimpp.datasets.pool import normalise
    from xsimpp.tasks.mining import gold_languages, ntrex_sample_lines
    from xsimpp.tasks.runner import prepare

    res = xsimpp.mining_f1("chargram", "fao,swh", cache=False, data_dir=real_data, **GOLD_APART)
    alone = {(r.src_lang, r.metric): r.value for r in res.records}
    assert {m for _, m in alone} == set(TASKS["mining-f1"].metrics)  # Tatoeba v1 and NTREX have fao and swh
    params = res.records[0].signature.params
    assert (params["flores_gold_split"], params["ntrex_sample"], params["tatoeba_gold"]) == ("dev", "seeded", True)

    cfg = _chargram_study("apart", study="seed = 3\nflores_gold_lines = 40\n",
                          mining="fixed_threshold = 1.1\nunpaired_sources = 20\nflores_gold_split = \"dev\"\n"
                                 "flores_gold_offset = 20\nntrex_sample = \"seeded\"\ntatoeba_gold = true\n")
    study = run_study(cfg, data_dir=real_data, cache=False)
    cells = {(c["lang"], m): c[m] for c in study.cells if c["system"] == "cg" for m in TASKS["mining-f1"].metrics}
    assert cells == alone
    summary = {d["lang"]: d for d in study.data_summary["languages"]}
    assert summary["fao_Latn"]["flores_split"] == "dev[20:60]" and summary["fao_Latn"]["proxy_split"] == "devtest[:60]"
    assert summary["swh_Latn"]["tatoeba_gold"] == len(TatoebaV1("test", real_data).bitext("swh", "eng"))

    # the gold is what the options say: dev[20:60], NTREX's seeded lines (the same in every language)
    langs, _, _ = gold_languages(["fao_Latn", "swh_Latn"], "eng_Latn", 40, 60, 20, real_data, 20,
                                 flores_split="dev", ntrex_sample="seeded", seed=3, tatoeba_gold=True)
    dev = Flores200("dev", real_data)
    assert langs[0].flores.src == dev.sentences("fao_Latn")[20:60] and langs[0].unpaired == dev.sentences("fao_Latn")[:20]
    rows = ntrex_sample_lines(1997, 60, 3)
    assert rows != list(range(60)) and rows != ntrex_sample_lines(1997, 60, 4) and len(set(rows)) == 60
    nt = Ntrex128("test", real_data)
    for ld in langs:
        assert ld.ntrex.src == [nt.bitext(ld.lang, "eng_Latn").src[i] for i in rows]
        assert ld.ntrex.tgt == [nt.bitext(ld.lang, "eng_Latn").tgt[i] for i in rows]
        assert ld.tatoeba_gold is not None and ld.ntrex.split.endswith("[seeded 60 of 1997, seed 3]")
    # no gold target line of any set is a distractor
    data, _, _ = prepare(TASKS["mining-f1"], langs="fao,swh", data_dir=real_data, **GOLD_APART)
    gold_targets = {normalise(t) for ld in data.languages for _, bt in ld.gold_sources for t in bt.tgt}
    assert len(gold_targets) > 300 and not gold_targets & {normalise(t) for t in data.distractors.lines}

    # per-sentence outcomes: their sums are each cross-validated F1's counts
    for table in study.outcomes:
        cell = next(c for c in study.cells if c["system"] == table["system"] and c["lang"] == table["lang"])
        gold = np.array(table["gold"])
        tags = np.array(table["tags"])
        assert len(gold) == cell["n_sources"] and (tags == "unpaired").sum() == cell["n_unpaired"]
        for view, counts in table["views"].items():
            e, c = np.array(counts["extracted"]), np.array(counts["correct"])
            g = gold if view == "mining_f1" else np.where(tags == view.rsplit("_", 1)[1], gold, 0)
            assert 200 * c.sum() / (e.sum() + g.sum()) == pytest.approx(cell[view], abs=1e-9), view


def test_gold_options_are_checked():
    with pytest.raises(BadInputError, match="share lines with the first 20 dev lines"):
        xsimpp.mining_f1("chargram", "fao", flores_gold_split="dev", flores_gold_offset=10, unpaired_sources=20,
                         flores_lines=30)
    with pytest.raises(BadInputError, match="997 lines"):
        xsimpp.mining_f1("chargram", "fao", flores_gold_split="dev", flores_gold_offset=900, flores_lines=200)
    with pytest.raises(BadInputError, match="cannot also be a distractor source"):
        xsimpp.mining_f1("chargram", "fao", flores_gold_split="dev", whole_sources=("flores200-dev",))
    with pytest.raises(BadInputError, match="ntrex-sample must be one of first, seeded"):
        xsimpp.mining_f1("chargram", "fao", ntrex_sample="random")
