"""`xsimpp compare` / ``xsimpp.compare``: paired tests between two encoders' stored results, and the
refusals (other data, split or settings, results without outcomes, altered outcome files)."""

from __future__ import annotations

import json

import pytest

import xsimpp
from clikit import cli
from xsimpp.errors import BadInputError
from xsimpp.results import ResultStore
from xsimpp.scoring import significance as S

DEMO = ["--dataset", "demo", "--langs", "deu,fra", "--no-progress"]


class ShortGrams:
    """An encoder object of a user's: chargram over 1-2-grams only (a weaker encoder)."""

    def __init__(self):
        from xsimpp.encoders import create_encoder

        self.inner = create_encoder("chargram", ngram_min=1, ngram_max=2)

    def encode(self, sentences):
        return self.inner.encode(sentences)


@pytest.fixture
def two_encoders(isolated_home, capsys):
    """chargram (the baseline) and a user's object stored as short-grams, on the demo corpus."""
    assert cli(capsys, "eval", "--encoder", "chargram", *DEMO)[0] == 0
    xsimpp.evaluate(ShortGrams(), "deu,fra", dataset="demo", save=True, cache=False, encoder_name="short-grams",
                    revision="1")
    return ResultStore(isolated_home / "results")


def test_api_compare_equals_the_statistics_on_the_outcomes(isolated_home):
    a = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False)
    b = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False, options={"ngram_min": 1, "ngram_max": 2})
    cmp = xsimpp.compare(a, b, n_trials=2000)
    assert [r.pair for r in cmp.rows] == ["deu_Latn-eng_Latn", "fra_Latn-eng_Latn", "all (2 pairs)"]
    for row, ra, rb in zip(cmp.rows, a.records, b.records):
        assert row.result.baseline == pytest.approx(ra.value) and row.result.system == pytest.approx(rb.value)
        units = lambda r: S.Units.of("error_rate", r.outcomes.correct, r.outcomes.chosen, r.outcomes.gold)  # noqa
        ref = S.compare([units(ra)], [units(rb)], n_trials=2000)
        assert row.result.p_bootstrap == ref.p_bootstrap and row.result.p_randomization == ref.p_randomization
    overall = cmp.rows[-1].result
    assert overall.baseline == pytest.approx((a.records[0].errors + a.records[1].errors) / 240 * 100)
    assert cmp.rows[0].p_bootstrap_adjusted >= cmp.rows[0].result.p_bootstrap  # Holm never lowers a p-value
    # the same encoder against itself: no difference, p = 1
    same = xsimpp.compare(a, a, n_trials=500)
    assert all(r.result.difference == 0 and r.result.p_randomization == 1.0 for r in same.rows)
    assert "no significant difference" in same.rows[0].verdict


def test_cli_compare(two_encoders, capsys):
    code, out, err = cli(capsys, "compare", "--baseline", "chargram", "--system", "short-grams")
    assert code == 0, err
    assert "xsim on demo/dev (lower is better)" in out and "all (2 pairs)" in out
    assert "corrected across the 2 pair(s) by Holm" in out
    assert "short-grams is worse than chargram (both tests, p < 0.05)" in out
    code, out, _ = cli(capsys, "compare", "--baseline", "chargram", "--system", "short-grams", "--json",
                       "--correction", "bh", "--trials", "500", "--lang", "deu")
    got = json.loads(out)[0]
    assert got["correction"] == "bh" and [r["pair"] for r in got["rows"]] == ["deu_Latn-eng_Latn"]
    assert got["rows"][0]["difference"] > 0


@pytest.mark.parametrize("argv, match", [
    (["--system", "chargram"], "is the baseline itself"),
    (["--system", "nobody"], "no stored result of nobody"),
    (["--system", "short-grams", "--level", "95"], "from 0.5 to below 1"),
    (["--system", "short-grams", "--trials", "0"], "from 100 to 1000000"),
    (["--system", "short-grams", "--setting", "margin"], "KEY=VALUE"),
    (["--system", "short-grams", "--setting", "margin=distance"], "has the setting margin=distance"),
    (["--system", "short-grams", "--correction", "bonferroni"], "invalid choice"),
])
def test_cli_refusals(two_encoders, capsys, argv, match):
    code, out, err = cli(capsys, "compare", "--baseline", "chargram", *argv)
    assert code == 2 and match in err and "Traceback" not in err and not out


def test_outcomes_missing_or_altered(two_encoders, capsys):
    recs = [r for r in two_encoders.records() if r.signature.encoder == "chargram"]
    path = two_encoders.outcomes_path(recs[0])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    code, _, err = cli(capsys, "compare", "--baseline", "chargram", "--system", "short-grams")
    assert code == 2 and "unreadable" in err and "re-run" in err
    from xsimpp.results import Outcomes

    o = Outcomes.from_bytes(data)
    flipped = Outcomes(o.statistic, ~o.correct, o.chosen, o.gold, o.chosen_score, o.gold_score, o.error_type,
                       o.unit, o.error_types)
    path.write_bytes(flipped.to_bytes())
    code, _, err = cli(capsys, "compare", "--baseline", "chargram", "--system", "short-grams")
    assert code == 2 and "does not match its record" in err
    path.unlink()
    code, _, err = cli(capsys, "compare", "--baseline", "chargram", "--system", "short-grams")
    assert code == 2 and "are missing" in err
    # a record stored before outcomes existed (no digest): told to re-run
    rec_path = two_encoders.path(recs[0])
    d = json.loads(rec_path.read_text())
    del d["outcomes_digest"]
    rec_path.write_text(json.dumps(d))
    code, _, err = cli(capsys, "compare", "--baseline", "chargram", "--system", "short-grams")
    assert code == 2 and "has no per-sentence outcomes" in err and "re-run it" in err


def test_refusals(isolated_home, capsys):
    a = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False)
    b = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False, margin="distance",
                        options={"ngram_min": 1})
    with pytest.raises(BadInputError, match=r"differ in margin \('ratio' vs 'distance'\)"):
        xsimpp.compare(a, b)
    c = xsimpp.evaluate("chargram", "deu", dataset="demo", cache=False, options={"ngram_min": 1})
    with pytest.raises(BadInputError, match="different language pairs"):
        xsimpp.compare(a, c)
    d = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", cache=False, limit=60, options={"ngram_min": 1})
    with pytest.raises(BadInputError, match=r"differ in split \('dev' vs 'dev\[:60\]'\)"):
        xsimpp.compare(a, d)


def test_cli_refuses_results_on_other_data(two_encoders, capsys):
    rec = next(r for r in two_encoders.records() if r.signature.encoder == "py:short-grams")
    path = two_encoders.path(rec)
    d = json.loads(path.read_text())
    d["signature"]["data_checksum"] = "f" * 64  # measured on other sentences under the same name
    path.write_text(json.dumps(d))
    code, out, err = cli(capsys, "compare", "--baseline", "chargram", "--system", "short-grams")
    assert code == 2 and "differ in data_checksum" in err and not out


def test_bucc_results_are_not_paired(isolated_home):
    from test_bucc import TableEncoder, _split
    from xsimpp.tasks.bucc import evaluate_bucc

    table: dict = {}
    data = _split("c", 10, 10, 1, table)
    a = evaluate_bucc(TableEncoder(table), data, data).records
    with pytest.raises(BadInputError, match="does not pair BUCC results"):
        xsimpp.compare(a, a)
