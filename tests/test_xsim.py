"""xsim / xsim++ error counting on hand-made cases (text vs index mode, error types, averages)."""

import numpy as np
import pytest

from xsimpp.errors import BadInputError
from xsimpp.scoring import MISALIGNED, XsimResult, count_errors, micro_average, nway_error_matrix, xsim


def test_text_mode_counts_duplicate_gold_as_correct():
    tgt = ["a", "b", "a", "c"]
    nn = np.array([2, 1, 0, 1])  # 0->dup of its gold, 1 right, 2->dup of its gold, 3 wrong
    assert count_errors(nn, mode="text", tgt_text=tgt).errors == 1
    assert count_errors(nn, mode="index").errors == 3


def test_errtype_breakdown_follows_laser_rule():
    tgt = ["the cat sat", "a dog ran", "the cat stood", "a cat ran", "a dog walked"]
    errtypes = {
        "the cat stood": {"src": "the cat sat", "errtype": "causality"},
        "a cat ran": {"src": "a dog ran", "errtype": "entity"},
        "a dog walked": {"src": "the cat sat", "errtype": "causality"},  # augmentation of ANOTHER sentence
    }
    # source 0 -> its own augmentation (causality); source 1 -> an augmentation of sentence 0 (Misaligned)
    res = count_errors(np.array([2, 4]), mode="text", tgt_text=tgt, errtypes=errtypes)
    assert res.errors == 2 and res.error_types == {"causality": 1, MISALIGNED: 1}
    res = count_errors(np.array([0, 3]), mode="text", tgt_text=tgt, errtypes=errtypes)
    assert res.error_types == {"entity": 1}
    # A wrong original sentence is Misaligned too.
    res = count_errors(np.array([1, 1]), mode="text", tgt_text=tgt, errtypes=errtypes)
    assert res.error_types == {MISALIGNED: 1}


def test_xsimpp_end_to_end_on_vectors():
    # Two sources; targets = 2 gold + 2 augmented. Source 1 is closer to an augmentation of itself.
    x = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float32)
    y = np.array([[1, 0, 0], [0, 0.6, 0.8], [0.5, 0, 0.5], [0, 1, 0.05]], dtype=np.float32)
    text = ["one", "two", "one!", "two?"]
    errtypes = {"one!": {"src": "one", "errtype": "number"}, "two?": {"src": "two", "errtype": "entity"}}
    res = xsim(x, y, margin="absolute", mode="text", tgt_text=text, errtypes=errtypes)
    assert (res.errors, res.n, res.error_types) == (1, 2, {"entity": 1})
    assert res.error_rate == 50.0


def test_size_rules():
    x = np.eye(3, dtype=np.float32)
    with pytest.raises(BadInputError, match="smaller than the source"):
        xsim(x, x[:2], margin="absolute", mode="index")
    with pytest.raises(BadInputError, match="sizes differ"):
        xsim(x[:2], x, margin="absolute", mode="index")
    with pytest.raises(BadInputError, match="needs the target sentences"):
        xsim(x, x, margin="absolute", mode="text")
    with pytest.raises(BadInputError, match="at least one"):
        xsim(np.zeros((0, 3)), x, mode="index")


def test_micro_average_is_sum_over_sum():
    avg = micro_average([XsimResult(1, 10, {"a": 1}), XsimResult(3, 30, {"a": 1, "b": 2})])
    assert (avg.errors, avg.n, avg.error_types) == (4, 40, {"a": 2, "b": 2})
    assert avg.error_rate == pytest.approx(10.0)  # not the macro mean of 10% and 10%... same here
    assert micro_average([XsimResult(1, 10), XsimResult(0, 90)]).error_rate == pytest.approx(1.0)


def test_nway_matrix_has_zero_diagonal():
    e = np.eye(4, dtype=np.float32)
    m = nway_error_matrix([e, e, e[[1, 0, 2, 3]]], margin="absolute", mode="index")
    assert m.shape == (3, 3) and np.all(np.diag(m) == 0)
    assert m[0, 1] == 0 and m[0, 2] == 50.0
