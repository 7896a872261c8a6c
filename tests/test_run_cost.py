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
