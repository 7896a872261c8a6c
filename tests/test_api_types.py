"""Wrong-typed API keywords: one sentence naming the knob (as its CLI flag), never a TypeError or
AttributeError from inside; numpy scalars count as the numbers they are."""

from __future__ import annotations

import numpy as np
import pytest

from xsimpp.api import bucc, evaluate, mining_f1
from xsimpp.errors import BadInputError


@pytest.mark.parametrize("knobs, says", [
    (dict(langs=123), 'languages are given as "kea,fur" or a list of codes, not 123'),
    (dict(langs=["deu", 5]), "not ['deu', 5]"),
    (dict(langs="deu", exclude=7), "not 7"),
    (dict(langs="deu", target=4), "--target takes text or None, not 4"),
    (dict(langs="deu", both_directions="yes"), "--both-directions takes true or false, not 'yes'"),
    (dict(langs="deu", limit="50"), "--limit takes an integer or None, not '50'"),
    (dict(langs="deu", k=True), "--k takes an integer, not True"),
    (dict(langs="deu", margin=3), "--margin takes text, not 3"),
    (dict(langs="deu", alpha="x"), "--alpha takes a number, not 'x'"),
])
def test_evaluate(knobs, says):
    with pytest.raises(BadInputError, match=None) as err:
        evaluate("chargram", dataset="demo", cache=False, **knobs)
    assert says in str(err.value)


def test_other_tasks_check_the_same_way():
    with pytest.raises(BadInputError, match="--cv takes an integer or None"):
        bucc("chargram", cv="5", cache=False)
    with pytest.raises(BadInputError, match="--distractors takes an integer"):
        mining_f1("chargram", "fao", distractors=1.5, cache=False)


def test_numpy_scalars_are_numbers_and_sign_as_python_numbers():
    res = evaluate("chargram", "deu", dataset="demo", cache=False, k=np.int64(3), alpha=np.float32(0.5),
                   rerank="chargram")
    params = res.records[0].signature.params
    assert params["k"] == 3 and type(params["k"]) is int and params["alpha"] == 0.5 and type(params["alpha"]) is float
