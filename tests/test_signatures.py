"""Every setting signs every record unless its knob says why not (``knob(unsigned=REASON)``): a
knob added to any task's Settings is signed without anyone editing a params() list."""

from __future__ import annotations

import dataclasses

import pytest

from xsimpp.tasks import TASKS
from xsimpp.tasks.base import Settings, knob, sign, unsigned_knobs

REQUIRED = {"filter": dict(src_lang="fur", tgt_lang="eng")}  # knobs without a usable default


class _Encoder:
    id, revision, fingerprint = "enc", "r1", "0" * 16


def _settings_classes():
    return [(name, t.Settings) for name, t in TASKS.items()]


@pytest.mark.parametrize("name, cls", _settings_classes())
def test_a_new_knob_is_signed_without_editing_anything(name, cls):
    dummy = dataclasses.make_dataclass(f"{cls.__name__}WithDummy", [("zz_dummy", int, knob(0, "a new knob"))],
                                       bases=(cls,), frozen=True)
    base = REQUIRED.get(name, {})
    a, b = dummy(**base), dummy(**base, zz_dummy=1)
    assert a.params()["zz_dummy"] == 0 and b.params()["zz_dummy"] == 1
    sig = lambda s: sign(_Encoder(), "d", "s", "c", "m", s).format()  # noqa: E731
    assert sig(a) != sig(b)


@pytest.mark.parametrize("name, cls", _settings_classes())
def test_every_field_is_signed_or_says_why_not(name, cls):
    st = cls(**REQUIRED.get(name, {}))
    params = st.params()
    for f in dataclasses.fields(cls):
        if f.metadata.get("unsigned"):
            assert len(f.metadata["unsigned"]) > 20  # a reason, not a flag
        elif f.metadata.get("signed_in"):
            assert f.metadata["signed_in"] in params
        else:
            assert f.name in params, f"{cls.__name__}.{f.name} is not signed"


def test_the_unsigned_knobs_are_these_and_no_more():
    """A knob leaving the signature is a decision: it shows up here for review."""
    found = {f"{name}.{k}" for name, t in TASKS.items() for k in unsigned_knobs(t.Settings)}
    # --ci's knobs: the records given an interval sign them as their "ci" key (tasks.intervals)
    interval = {f"{task}.{k}" for task in ("xsim", "tatoeba", "mteb-bitext", "bucc") for k in ("ci", "ci_resamples", "ci_seed")}
    # mine's layout: results are identical for every layout (engine.mining); mine signs no record
    layout = {f"mine.{k}" for k in ("max_memory", "shard_rows", "tile_cols", "max_shards", "keep_shards")}
    assert found == {"xsim.protocol", "xsim.rerank", "xsim.rerank_options", "xsim.alpha", "xsim.rerank_k",
                     "bucc.keep_fraction", "bucc.cv", "bucc.seed"} | interval | layout


def test_a_signed_in_key_must_be_produced():
    @dataclasses.dataclass(frozen=True)
    class Broken(Settings):
        a: int = knob(0, "a", signed_in="combined")

    with pytest.raises(TypeError, match="does not produce"):
        Broken().params()


def test_an_unsigned_knob_needs_a_reason():
    with pytest.raises(ValueError, match="states why"):
        knob(0, "x", unsigned=" ")


def test_score_goes_through_the_runners_number_check(monkeypatch, tmp_path):
    """`score` is not a side path: a value that is not a number is refused as the runner refuses it,
    and nothing is stored."""
    import dataclasses as dc

    import numpy as np

    import xsimpp.scoring as scoring
    from xsimpp.api import score
    from xsimpp.errors import BadInputError

    real = scoring.xsim
    monkeypatch.setattr(scoring, "xsim", lambda *a, **k: dc.replace(real(*a, **k), errors=0, n=0))
    x = np.eye(4, dtype=np.float32)
    with pytest.raises(BadInputError, match="not a number"):
        score(x, x, mode="index", save=tmp_path / "store")
    assert not (tmp_path / "store").exists()


def test_api_functions_show_every_keyword_they_take():
    """help() and IDEs that read __signature__ show each knob; every keyword shown is accepted."""
    import inspect

    import xsimpp
    from xsimpp.tasks.base import knob_names
    from xsimpp.tasks.runner import RunOptions, split_knobs

    for fn, task in ((xsimpp.evaluate, "xsim"), (xsimpp.tatoeba, "tatoeba"), (xsimpp.bucc, "bucc"),
                     (xsimpp.mining_f1, "mining-f1"), (xsimpp.filter_corpus, "filter")):
        params = inspect.signature(fn).parameters
        t = TASKS[task]
        for name in knob_names(t.Source) + knob_names(t.Settings) + knob_names(RunOptions):
            assert name in params, (fn.__name__, name)
        assert not any(p.kind is p.VAR_KEYWORD for p in params.values())
        shown = {n: None for n in params if n not in ("encoder", "settings", "run", "src", "tgt", "out")}
        split_knobs(t, shown)  # none of them is unknown to the task
    assert inspect.signature(xsimpp.evaluate).parameters["margin"].default == "ratio"
