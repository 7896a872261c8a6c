"""Per-sentence outcomes: every record that keeps them gives back its own number from them (so a
resample of them is that number on the resample), they are stored with the record, and --ci turns
them into intervals that contain the number."""

from __future__ import annotations

import json

import numpy as np
import pytest

import xsimpp
from xsimpp.cli import main
from xsimpp.errors import BadInputError
from xsimpp.results import ResultStore
from xsimpp.scoring.significance import Units
from xsimpp.tasks.intervals import units_of


def check_outcomes_give_the_value(records):
    for r in records:
        o = r.outcomes
        assert o is not None, r.metric
        assert len(o) == r.n
        assert units_of(r).value() == pytest.approx(r.value, abs=1e-9), (r.metric, r.src_lang)
        if r.errors is not None and o.statistic != "weighted_f1":
            assert int((~o.correct).sum()) == r.errors
        if r.error_types:  # xsim++: the error types of the wrong choices are the record's counts
            names = [t for t in o.type_names() if t]
            assert {t: names.count(t) for t in set(names)} == r.error_types


def test_xsim_and_xsimpp_outcomes(isolated_home):
    res = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", augmented="auto", cache=False)
    assert {r.metric for r in res} == {"xsim", "xsim++"}
    check_outcomes_give_the_value(res.records)
    pp = next(r for r in res if r.metric == "xsim++")
    o = pp.outcomes
    hit = o.chosen == o.gold  # the gold chosen: its score is the chosen one, exactly
    assert hit.any() and np.array_equal(o.chosen_score[hit], o.gold_score[hit])
    # a wrong choice outscored the gold whenever the gold was among its k candidates (LASER rescores
    # only those, so a gold outside them may score higher and still lose)
    assert (o.chosen_score[~o.correct] >= o.gold_score[~o.correct]).mean() > 0.5


def test_pxsim_outcomes(isolated_home):
    res = xsimpp.evaluate("chargram", "deu", dataset="demo", rerank="chargram", alpha=0.3, cache=False)
    check_outcomes_give_the_value(res.records)


@pytest.mark.parametrize("margin", ["absolute", "ratio"])
def test_tatoeba_outcomes(tmp_path, margin):
    from xsimpp.datasets.base import Bitext
    from xsimpp.encoders import create_encoder
    from xsimpp.tasks.tatoeba import TatoebaSettings, evaluate_tatoeba

    src = ["Das Haus ist rot.", "Ich trinke Wasser.", "Der Hund schläft.", "Wir gehen heim.", "Es regnet."]
    tgt = ["The house is red.", "I drink water.", "The dog sleeps.", "We go home.", "The dog sleeps."]
    bt = Bitext("tatoeba", "test", "deu", "eng", src, tgt)
    report = evaluate_tatoeba(create_encoder("chargram"), [bt], TatoebaSettings(margin=margin, k=2))
    check_outcomes_give_the_value(report.records)
    mean = next(r for r in report.records if r.metric == "tatoeba_acc_mean")
    assert len(mean.outcomes) == 10 and len(units_of(mean)) == 5  # a pair's two queries: one unit


def test_mteb_outcomes(isolated_home):
    res = xsimpp.run("mteb-bitext", "chargram", dataset="demo", langs="deu,fra", cache=False)
    check_outcomes_give_the_value(res.records)
    assert res.records[0].outcomes.statistic == "weighted_f1"


def test_ci_on_the_cli_is_stored_and_signed(isolated_home, capsys):
    code = main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra", "--ci",
                 "--no-progress", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    recs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for r in recs:
        assert r["extra"]["ci_low"] <= r["value"] <= r["extra"]["ci_high"]
        assert r["signature"]["params"]["ci"] == "bootstrap-percentile:0.95:1000:seed12345"
        assert len(r["outcomes_digest"]) == 64
    store = ResultStore(isolated_home / "results")
    stored = store.records()
    assert {r.key for r in stored} == {r["key"] for r in recs}
    for r in stored:  # the outcomes beside each record, read back and checked
        o = store.outcomes(r)
        assert Units.of(o.statistic, o.correct, o.chosen, o.gold).value() == pytest.approx(r.value)
    # the same run without --ci replaces the records (same key), no duplicate rows
    assert main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra", "--no-progress"]) == 0
    assert len(store.records()) == len(stored)
    text = capsys.readouterr().out
    assert "confidence intervals" not in text
    assert main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra", "--ci", "0.9",
                 "--ci-resamples", "200", "--ci-seed", "3", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "90% confidence intervals (percentile bootstrap, 200 resamples" in text and "average (2)" in text


@pytest.mark.parametrize("argv, match", [
    (["--ci", "95"], "from 0.5 to below 1"),
    (["--ci-resamples", "0"], "from 100 to 100000"),
    (["--ci-seed", "-1"], "seed"),
])
def test_bad_ci_options(isolated_home, capsys, argv, match):
    try:
        code = main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu", "--no-progress", *argv])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and match in err and "Traceback" not in err


def test_sample_draws_the_same_lines_in_every_language_and_signs_them(isolated_home):
    full = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False)
    a = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False, sample=50, sample_seed=7)
    b = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False, sample=50, sample_seed=7)
    c = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False, sample=50, sample_seed=8)
    assert all(r.signature.split == "dev[sample=50,seed=7]" and r.n == 50 for r in a)
    assert [r.value for r in a] == [r.value for r in b]  # a seed draws one sample
    assert a.records[0].signature.data_checksum != c.records[0].signature.data_checksum
    deu, fra = a.report.pairs[0].xsim, a.report.pairs[1].xsim
    assert len(deu.nn) == len(fra.nn) == 50
    # the whole set as a "sample" scores as the whole set (its lines kept in corpus order)
    whole = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False, sample=120)
    assert [r.value for r in whole] == [r.value for r in full]
    with pytest.raises(BadInputError, match="more than the 120 lines"):
        xsimpp.evaluate("chargram", "deu", dataset="demo", cache=False, sample=121)
    with pytest.raises(BadInputError, match="give one of the two"):
        xsimpp.evaluate("chargram", "deu", dataset="demo", cache=False, sample=10, limit=10)


def test_a_degenerate_interval_says_what_the_data_allows():
    from xsimpp.tasks.intervals import Interval, exact_bounds, render_intervals

    lo, hi = exact_bounds(0.0, 1012, 0.95)
    assert lo == 0.0 and hi == pytest.approx(100 * (1 - 0.025 ** (1 / 1012)))  # the exact upper bound for 0 of n
    text = render_intervals([Interval("xsim", "", "deu_Latn-eng_Latn", 0.0, lo, hi, 1012, exact=True)], 0.95, 1000, 1)
    assert f"[0.00, {hi:.2f}] *" in text and "exact (Clopper-Pearson)" in text


def test_leaderboard_shows_intervals_in_the_same_tables(isolated_home, capsys, tmp_path):
    import pandas as pd

    assert main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra", "--ci",
                 "--no-progress"]) == 0
    # the same settings without --ci, another encoder options set: one table for both
    assert main(["eval", "--encoder", "chargram", "--encoder-opt", "ngram_min=2", "--dataset", "demo", "--langs", "deu,fra",
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--html", str(tmp_path / "lb.html"), "--csv", str(tmp_path / "lb.csv")]) == 0
    page = (tmp_path / "lb.html").read_text(encoding="utf-8")
    assert page.count("<table") == 1 and page.count('<small class="ci"') == 2
    df = pd.read_csv(tmp_path / "lb.csv")
    with_ci = df.dropna(subset=["x_ci_low"])
    assert len(with_ci) == 2 and (with_ci.x_ci_low <= with_ci.value).all() and (with_ci.value <= with_ci.x_ci_high).all()


def test_cli_sample_larger_than_the_set_writes_nothing(isolated_home, capsys):
    code = main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu", "--sample", "500",
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--sample 500 is more than the 120 lines" in err and "Traceback" not in err
    assert not (isolated_home / "results").exists() and not (isolated_home / "cache").exists()
