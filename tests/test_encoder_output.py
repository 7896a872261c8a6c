"""An encoder object's output of the wrong type (a user's class, an mteb 2.x model): converted
where it is vectors in another container, else refused in one sentence naming the object."""

from __future__ import annotations

import numpy as np
import pytest

from xsimpp.api import evaluate
from xsimpp.errors import BadInputError


class Returns:
    def __init__(self, make):
        self.make = make

    def encode(self, sentences):
        return self.make(len(sentences))


@pytest.mark.parametrize("make, says", [
    (lambda n: [str(i) for i in range(n)], "returned text, not numbers"),
    (lambda n: [["0.1", "0.2"]] * n, "returned text, not numbers"),
    (lambda n: [[1.0] * (i % 3 + 1) for i in range(n)], "returned vectors of different lengths"),
    (lambda n: {"embeddings": 1}, "returned a dict (keys embeddings)"),
    (lambda n: np.array([None] * n), "returned Python objects"),
    (lambda n: np.ones(n), "returned an array of shape (64,)"),
])
def test_wrong_output_is_one_sentence_naming_the_object(make, says):
    with pytest.raises(BadInputError, match=r"Returns\.encode " + says.replace("(", r"\(").replace(")", r"\)")):
        evaluate(Returns(make), "deu", dataset="demo", cache=False, revision="v1")


def test_vectors_in_other_containers_are_taken_as_vectors():
    eye = np.eye(128, dtype=np.float32)
    as_array = evaluate(Returns(lambda n: eye[:n]), "deu", dataset="demo", cache=False, revision="v1")
    as_generator = evaluate(Returns(lambda n: (eye[i] for i in range(n))), "deu", dataset="demo", cache=False,
                            revision="v1")
    as_lists = evaluate(Returns(lambda n: eye[:n].tolist()), "deu", dataset="demo", cache=False, revision="v1")
    assert as_array.records[0].value == as_generator.records[0].value == as_lists.records[0].value
