"""xsim and xsim++ with selection on a device hold each target side there once (``engine.hold_rows``)
and score every source language against it: the same records as the CPU engine, and one copy per
distinct target, not one per language (through torch's CPU device: the device string is the only
difference from a GPU)."""

from __future__ import annotations

import pytest

import xsimpp
from xsimpp.engine import EngineConfig, device

pytest.importorskip("torch")


def test_targets_are_held_once_and_the_records_are_the_cpu_engines(monkeypatch):
    made = []
    init = device.DeviceRows.__init__

    def counted(self, rows, *args, **kwargs):
        made.append(len(rows))
        init(self, rows, *args, **kwargs)

    monkeypatch.setattr(device.DeviceRows, "__init__", counted)
    langs = ["deu", "fra", "spa"]
    cpu = xsimpp.evaluate("chargram", langs, dataset="demo", augmented="auto", save=False, cache=None)
    assert made == []
    dev = xsimpp.evaluate("chargram", langs, dataset="demo", augmented="auto", save=False, cache=None,
                          engine=EngineConfig(gemm="torch", device="cpu", selection="device"))
    assert same_records(dev.records, cpu.records)
    assert len(made) == 2 and made[0] < made[1]  # the gold targets (xsim), then with the negatives (xsim++)


def same_records(a, b) -> bool:
    """Equal records but for the time each was made."""
    strip = lambda recs: [{k: v for k, v in r.to_json().items() if k != "created"} for r in recs]
    return strip(a) == strip(b)
