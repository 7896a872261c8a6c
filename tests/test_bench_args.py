"""The benchmark drivers check every number typed on their command lines before any work
(benchmarks/bounds.py): a value out of its bounds is one sentence on stderr and exit 2, raised by
argparse while the command line is parsed -- before any data is built, model loaded or file written."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture()
def load(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # as when a driver runs as a script: its folder first

    def module(name: str):
        spec = importlib.util.spec_from_file_location(f"bench_args_{name}", BENCHMARKS / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, spec.name, mod)  # a driver's dataclasses look their module up there
        spec.loader.exec_module(mod)
        return mod

    return module


@pytest.mark.parametrize("driver, argv, says", [
    ("bench_bucc", ["--n-src", "0"], "argument --n-src: an integer from 1 to 10000000, not '0'"),
    ("bench_bucc", ["--dim", "1000000000"], "argument --dim: an integer from 1 to 4096"),
    ("bench_bucc", ["--threads", "100000"], "argument --threads: an integer from 1 to 1024"),
    ("bench_bucc", ["--seed", "-1"], "argument --seed: an integer from 0 to 9223372036854775807"),
    ("bench_bucc", ["--n-src", "10", "--n-gold", "11"], "--n-gold 11 is more than --n-src or --n-tgt"),
    ("bench_roofline", ["--repeats", "0"], "argument --repeats: an integer from 1 to 100"),
    ("bench_roofline", ["--big", "4096x0"], "argument --big: each side of '4096x0' is an integer from 1"),
    ("bench_roofline", ["--big", "4096"], "argument --big: ROWSxCOLS"),
    ("bench_mining_scale", ["--sizes", "1000,-5"], "argument --sizes: each of '1000,-5' is an integer from 1"),
    ("bench_mining_scale", ["--max-memory", "1B"], "argument --max-memory: a memory budget from 1MiB to 1TiB"),
    ("bench_mining_scale", ["--max-memory", "lots"], "argument --max-memory: cannot read memory size 'lots'"),
    ("bench_ray", ["--workers", "0,x"], "argument --workers: each of '0,x' is an integer from 0 to 1024"),
    ("regime", ["run", "--seeds", "0,,1"], "argument --seeds: a comma-separated list of integers"),
    ("significance_calibration", ["--reps", "10000000"], "argument --reps: an integer from 1 to 1000000"),
    ("fixed_shape_padding", ["--max-tokens", "0"], "argument --max-tokens: an integer from 8 to 1048576"),
    ("bench_e5_roofline", ["--n", "2000"], "argument --n: an integer from 1 to 1012"),
])
def test_a_number_out_of_bounds_is_one_sentence_and_exit_2(load, capsys, driver, argv, says):
    main = load(driver).main
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr()
    assert err.out == ""  # nothing ran: a driver prints its machine or header first
    lines = err.err.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "--help" in lines[0], err.err
    assert "Traceback" not in err.err


def test_the_list_and_shape_types_give_the_drivers_numbers(load):
    bounds = load("bounds")
    assert bounds.counts(0, 10)("0,3, 10") == [0, 3, 10]
    assert bounds.shape()("1012X45000") == (1012, 45000)
    assert bounds.memory("64MB") == "64MB"  # handed on to xsimpp as typed
    for bad in ("11", "1.5", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            bounds.counts(0, 10)(bad)


def test_every_typed_number_of_every_driver_is_bounded():
    """No driver reads a number with a bare ``type=int``/``float``: each goes through bounds.py."""
    unbounded = [f"{p.name}:{i}" for p in sorted(BENCHMARKS.glob("*.py"))
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if "add_argument(" in line and ("type=int" in line or "type=float" in line)]
    assert not unbounded, unbounded
