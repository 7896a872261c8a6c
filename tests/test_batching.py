"""Batches as the encoders build them (xsimpp.encoders.backbone.batching): padding to a width with
fixed-shape filling (``pad_rows``), and the background producer the device paths build batches
with (``prefetched``): same items in the same order, errors raised to the consumer, and a consumer
that stops early stops the producer."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from xsimpp.encoders.backbone.batching import pad_rows, padded_batches, prefetched


def test_pad_rows_pads_to_the_width_and_fills_with_the_first_sentence():
    ids = [[5, 6, 7], [8], [9, 10]]
    x, att = pad_rows(ids, [2, 1], 4, pad=0, rows=4)
    assert x.tolist() == [[9, 10, 0, 0], [8, 0, 0, 0], [9, 10, 0, 0], [9, 10, 0, 0]]
    assert att.tolist() == [[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]]
    assert x.dtype == att.dtype == np.int64
    x, att = pad_rows(ids, [0], 3, pad=1)
    assert x.tolist() == [[5, 6, 7]] and att.tolist() == [[1, 1, 1]]
    # the OpenVINO paths' batches are the same rows
    for idx, bx, batt in padded_batches(ids, 0, max_tokens=64, batch_size=8):
        ex, eatt = pad_rows(ids, idx, bx.shape[1], 0)
        assert np.array_equal(bx, ex) and np.array_equal(batt, eatt)


def test_prefetched_gives_every_item_in_order():
    assert list(prefetched(iter(range(1000)), depth=3)) == list(range(1000))
    assert list(prefetched(iter([]))) == []


def test_a_producer_error_is_raised_to_the_consumer_after_the_items_before_it():
    def items():
        yield 1
        yield 2
        raise ValueError("broken batch")

    got = []
    with pytest.raises(ValueError, match="broken batch"):
        for item in prefetched(items()):
            got.append(item)
    assert got == [1, 2]


def test_a_consumer_that_stops_early_stops_the_producer():
    made = []

    def items():
        for i in range(10_000):
            made.append(i)
            yield i

    before = threading.active_count()
    gen = prefetched(items(), depth=2)
    assert [next(gen) for _ in range(3)] == [0, 1, 2]
    gen.close()  # joins the producer
    assert threading.active_count() == before
    n = len(made)
    time.sleep(0.1)
    assert len(made) == n < 10  # nothing produced after the close, never more than depth ahead (+ one in hand)
