"""The cost line every encoding run prints before its first forward pass (issue 55): what it will
encode, the cached share, and the time at this machine's measured rate (xsimpp/tasks/cost.py)."""

from __future__ import annotations

import json
import re
import time

import numpy as np

import xsimpp
from xsimpp.encoders.pyobject import PyObjectEncoder
from xsimpp.tasks.cost import EncodeRate, cost_line, rates_path, read_rate


class SlowModel:
    """A model that takes a known time per sentence, so the measured rate can be checked."""

    seconds_per_sentence = 0.01  # 240 sentences: 2.4 s, above the 1 s a measurement needs

    def encode(self, sentences):
        time.sleep(self.seconds_per_sentence * len(sentences))
        rng = np.random.default_rng(len(sentences))
        return rng.standard_normal((len(sentences), 8)).astype(np.float32)


def _run(capsys, cache, **kw) -> str:
    enc = PyObjectEncoder(SlowModel(), name="slow", revision="1", batch_size=8)
    xsimpp.evaluate(enc, "deu", dataset="demo", progress=True, cache=cache, **kw)
    return capsys.readouterr().err


def test_first_run_says_no_rate_then_measures_it_and_the_next_run_estimates(capsys, tmp_path):
    err = _run(capsys, False)
    assert "cost: 240 sentences to encode with py:slow" in err  # no cache: nothing cached to count
    assert "no encoding rate measured for this encoder on this machine yet" in err
    rate = read_rate("py:slow")
    assert rate is not None and list(json.loads(rates_path().read_text())) == ["py:slow"]
    # 10 ms a sentence: at most 100 sentences/s, and the overhead only slows it
    assert 20 < rate.sentences_per_second <= 1 / SlowModel.seconds_per_sentence * 1.05

    err = _run(capsys, tmp_path / "cache")  # cached now: the line counts what the cache holds
    line = next(x for x in err.splitlines() if x.startswith("cost:"))
    assert re.search(r"240 sentences for py:slow, 0 in the cache \(0 %\), 240 to encode: about \d+ s at the", line)
    err = _run(capsys, tmp_path / "cache")
    line = next(x for x in err.splitlines() if x.startswith("cost:"))
    assert "240 in the cache (100 %), 0 to encode" in line and "about" not in line


def test_no_progress_no_line_and_a_damaged_record_is_no_estimate(capsys):
    enc = PyObjectEncoder(SlowModel(), name="slow", revision="1", batch_size=8)
    xsimpp.evaluate(enc, "deu", dataset="demo", progress=False, cache=False, limit=10)
    assert "cost:" not in capsys.readouterr().err
    rates_path().parent.mkdir(parents=True, exist_ok=True)
    rates_path().write_text("{not json")
    assert read_rate("py:slow") is None
    rates_path().write_text(json.dumps({"x": {"sentences_per_second": "nan", "startup_seconds": 1, "measured": "d"}}))
    assert read_rate("x") is None


def test_the_estimate_adds_the_start_up_to_the_encoding_time():
    rate = EncodeRate(sentences_per_second=10.0, startup_seconds=30.0, measured="2026-01-01")
    line = cost_line("e5-small", 1000, 400, rate)
    assert line == ("cost: 1000 sentences for e5-small, 400 in the cache (40 %), 600 to encode: about 2 min at the "
                    "10 sentences/s and 30 s start-up measured here on 2026-01-01")
    assert "about 2.8 h" in cost_line("e5-small", 100_030, 0, rate)


def test_study_says_each_members_pass_before_it_encodes(capsys):
    """`xsimpp study`'s encoding pass (outside the runner) says its cost line per member: the
    distinct sentences it looks up and what the cache holds, before the member's first forward pass."""
    from test_study import WRONG, _config, _data, _encoder

    from xsimpp.cache import MemoryCache
    from xsimpp.study.config import EncoderSpec
    from xsimpp.study.encoders import StudyEncoder
    from xsimpp.study.run import run_study

    said, events = [], []

    def opener(desc, total, *, rate_key, cost):
        said.append((desc, rate_key, cost))
        return lambda n: events.append((desc, n))

    cache = MemoryCache()
    encoders = [StudyEncoder(EncoderSpec(n, "lookup", family=n), _encoder(WRONG[n]), cache if n == "A" else None)
                for n in "ABC"]
    run_study(_config(), _data(), encoders, progress=opener)
    assert [d for d, _, _ in said] == ["encoding (A)", "encoding (B)", "encoding (C)"]
    desc, key, line = said[0]
    assert key == encoders[0].encoder.id
    n = int(re.match(r"cost: (\d+) sentences for A, 0 in the cache \(0 %\), (\d+) to encode; no encoding rate", line)
            .group(1))
    assert n > 0 and f"{n} to encode" in line
    assert said[1][2].startswith(f"cost: {n} sentences to encode with B")  # no cache to ask
    # A's pass filled its cache: the same member again needs no forward pass
    assert encoders[0].lookups([]) == (0, 0) and encoders[1].lookups([]) == (0, None)
    again = StudyEncoder(EncoderSpec("A", "lookup", family="A"), _encoder(WRONG["A"]), cache)
    said.clear()
    run_study(_config(), _data(), [again, *encoders[1:]], progress=opener)
    assert said[0][2] == f"cost: {n} sentences for A, {n} in the cache (100 %), 0 to encode"


def test_training_says_steps_and_the_estimate_once_measured():
    """The trainers' one shared line (train onealigner, mnr, distill): the steps, the passes over the
    examples, and the time at the rate the last run under the same key measured."""
    from xsimpp.tasks.cost import record_training, training_cost, training_key

    key = training_key("train mnr", "m", 8, 64, "cpu")
    assert training_cost(key, 30, 8, 120) == ("training: 30 steps of 8 pairs (2.00 passes over 120 pairs): no "
                                              "training rate measured here yet for this model, batch size and "
                                              "device (this run measures it)")
    record_training(key, 20, 10.0)  # 2 steps/s
    assert training_cost(key, 300, 8, 120, "examples").endswith("about 2 min at the 2 steps/s measured here on "
                                                                 f"{__import__('datetime').date.today()}")
    assert "no training rate" in training_cost(training_key("train mnr", "m", 16, 64, "cpu"), 30, 16, 120)


def test_rank_from_results_checks_values_and_its_counts_before_work(isolated_home, tmp_path, capsys):
    """`rank --from-results` reads the store as the other readers do (a value edited by hand is
    refused), and its resampling counts and level have both bounds, checked before any table is read."""
    from xsimpp.cli import main
    from xsimpp.results import ResultStore

    assert main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu", "--no-progress"]) == 0
    store = ResultStore(isolated_home / "results")
    path = store.path(store.records()[0])
    d = json.loads(path.read_text())
    path.write_text(json.dumps({**d, "value": d["value"] + 1.0}))
    bleu = tmp_path / "bleu.csv"
    bleu.write_text("system,direction,bleu\nchargram,deu-eng,30\n")
    capsys.readouterr()
    assert main(["rank", "--from-results", "--bleu", str(bleu)]) == 2
    assert "edited by hand" in capsys.readouterr().err
    for flags, says in ((["--bootstrap", "1"], "--bootstrap resamples is an integer from 100 to 100000, not 1"),
                        (["--permutations", "100000000"], "--permutations samples is an integer from 100 to 1000000"),
                        (["--confidence", "0.1"], "a confidence level is a fraction from 0.5")):
        assert main(["rank", str(tmp_path / "absent.csv"), *flags]) == 2  # the bound, not the missing table
        err = capsys.readouterr().err
        assert says in err and len(err.strip().splitlines()) == 1, err
