"""An encoder whose vectors cannot depend on their companions and that runs best on many sentences
at once (``pools_sides``: the torch path at fixed shapes on a GPU) has every side of a task encoded in
one pool of length-sorted chunks before the task runs (``tasks.base.prefill_local``): the same
records and counts as side by side, each sentence encoded once, chunks mixing the sides."""

from __future__ import annotations

import pytest

import xsimpp
from xsimpp.encoders.chargram import CharGram


def _run(monkeypatch, home, pooled: bool, cache):
    monkeypatch.setenv("XSIMPP_HOME", str(home))
    monkeypatch.setattr(CharGram, "pools_sides", pooled, raising=False)
    calls = []
    encode = CharGram.encode

    def recorded(self, sentences, **kwargs):
        calls.append(list(sentences))
        return encode(self, sentences, **kwargs)

    monkeypatch.setattr(CharGram, "encode", recorded)
    res = xsimpp.evaluate("chargram", ["deu", "fra", "spa"], dataset="demo", augmented="auto", cache=cache,
                          save=False)
    return res, calls


@pytest.mark.parametrize("cache", [True, None])
def test_pooled_sides_give_the_side_by_side_records_and_counts(monkeypatch, tmp_path, cache):
    want, side = _run(monkeypatch, tmp_path / "side", False, cache)
    got, pooled = _run(monkeypatch, tmp_path / "pooled", True, cache)
    assert same_records(got.records, want.records)
    assert (got.report.n_encoded, got.report.n_cached) == (want.report.n_encoded, want.report.n_cached)
    flat = [s for call in pooled for s in call]
    assert len(flat) == len(set(flat)) == len({s for call in side for s in call})  # each sentence once
    # side by side every call holds one side's sentences; pooled, some call holds several sides'
    sides = [set(call) for call in side]
    assert any(sum(bool(set(call) & s) for s in sides) > 1 for call in pooled)


def test_a_pooled_run_with_everything_cached_encodes_nothing(monkeypatch, tmp_path):
    _run(monkeypatch, tmp_path / "home", True, True)
    again, calls = _run(monkeypatch, tmp_path / "home", True, True)
    assert calls == [] and again.report.n_encoded == 0


def same_records(a, b) -> bool:
    """Equal records but for the time each was made."""
    strip = lambda recs: [{k: v for k, v in r.to_json().items() if k != "created"} for r in recs]
    return strip(a) == strip(b)
