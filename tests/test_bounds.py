"""Issue 55: every hand-written number and type has both bounds and is checked before work starts;
statistics at their edges; damaged inputs end in one sentence; a study never drops a member silently.

Each CLI case is graded as the fault matrix grades (tests/test_fault_matrix.py: exit 2, one
`xsimpp: error:` line with the expected fragment, no traceback, nothing written); the API cases
expect one XsimppError naming the keyword."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_fault_matrix import DEMO, Case, _mine_argv, _mine_done, _npy, grade

from xsimpp.errors import BadInputError, XsimppError

REPO = Path(__file__).resolve().parent.parent


def _mining(*extra):
    return ["mining-f1", "--encoder", "chargram", "--langs", "kea", "--no-progress", *extra]


def _edited_manifest(tmp, **plan):
    _mine_done(tmp)
    p = tmp / "run" / "manifest.json"
    d = json.loads(p.read_text())
    d["plan"].update(plan)
    p.write_text(json.dumps(d))
    return _mine_argv(tmp)


def _empty_npy(tmp):
    _npy(tmp, 150, 16, "y.npy")
    (tmp / "x.npy").write_bytes(b"")
    return _mine_argv(tmp)


def _no_manifest_written(tmp, code, out):
    return not (tmp / "run").exists()


CASES = [
    # statistics at the edges
    Case("--ci-resamples 1", "option", lambda t, m: [*DEMO, "--ci", "--ci-resamples", "1"], "from 100 to 100000"),
    Case("--ci-resamples 10^12", "option", lambda t, m: [*DEMO, "--ci", "--ci-resamples", "1000000000000"],
         "from 100 to 100000"),
    Case("--ci-resamples without --ci", "option", lambda t, m: [*DEMO, "--ci-resamples", "500"], "add --ci"),
    Case("--ci-seed without --ci", "option", lambda t, m: [*DEMO, "--ci-seed", "4"], "add --ci"),
    Case("--seed without --sample", "option", lambda t, m: [*DEMO, "--seed", "3"], "add --sample N"),
    # unchecked values
    Case("mining-f1 --seed -1", "option", lambda t, m: _mining("--seed", "-1"), "invalid seed value"),
    Case("mining-f1 --flores-lines 5000", "option", lambda t, m: _mining("--flores-lines", "5000"),
         "--flores-lines takes an integer from 0 to 1012"),
    Case("mining-f1 --near-duplicates 1e9", "option", lambda t, m: _mining("--near-duplicates", "1000000000"),
         "--near-duplicates takes an integer from 0 to 100"),
    Case("mining-f1 --k 1000000", "option", lambda t, m: _mining("--k", "1000000"),
         "--k takes an integer from 1 to 1024"),
    Case("mining-f1 --k under the absolute margin", "option", lambda t, m: _mining("--k", "8", "--margin", "absolute"),
         "no effect under the absolute margin"),
    Case("--threads 100000", "option", lambda t, m: [*DEMO, "--threads", "100000"], "positive integer up to 1024"),
    Case("--block-memory 1B", "option", lambda t, m: [*DEMO, "--block-memory", "1B"],
         "from 4 bytes (one value) to 1TB"),
    Case("download --timeout -1", "option", lambda t, m: ["download", "flores200", "--to", t / "d", "--timeout", "-1"],
         "--timeout is a number of seconds from 0.1 to 3600"),
    Case("download --retries 1000", "option",
         lambda t, m: ["download", "flores200", "--to", t / "d", "--retries", "1000"], "--retries is an integer"),
    Case("train distill --steps 0", "option", lambda t, m: ["train", "distill", "--out", t / "ck", "--steps", "0"],
         "--steps is from 1 to"),
    Case("train distill --langs eng", "option", lambda t, m: ["train", "distill", "--out", t / "ck", "--langs", "eng"],
         "--langs names English"),
    # damaged inputs
    Case("mine: 0-byte .npy", "input", lambda t, m: _empty_npy(t), "is not a readable .npy file"),
    Case("mine: manifest shard_rows=0", "state", lambda t, m: _edited_manifest(t, shard_rows=0),
         "says shard_rows = 0"),
    Case("mine: manifest shard_rows=-7", "state", lambda t, m: _edited_manifest(t, shard_rows=-7),
         "says shard_rows = -7"),
    Case("mine: manifest k=2", "state", lambda t, m: _edited_manifest(t, k=2), "says k = 2 in its plan but 4"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bound_case(case, tmp_path, monkeypatch, isolated_home):
    g, what = grade(case, tmp_path, monkeypatch)
    assert g == "good", what


def test_mine_negative_threshold_in_exponent_form(tmp_path, isolated_home):
    """`--threshold -1e308` is a value, not an unknown option (no `=` needed)."""
    from xsimpp.cli import main

    _npy(tmp_path, 40, 8, "x.npy", 1)
    _npy(tmp_path, 50, 8, "y.npy", 2)
    (tmp_path / "s.txt").write_text("".join(f"s{i}\n" for i in range(40)))
    (tmp_path / "t.txt").write_text("".join(f"t{i}\n" for i in range(50)))
    assert main([str(a) for a in _mine_argv(tmp_path, "--threshold", "-1e308", "--pairs-tsv", tmp_path / "p.tsv",
                                             "--src-text", tmp_path / "s.txt", "--tgt-text", tmp_path / "t.txt")]) == 0
    assert len((tmp_path / "p.tsv").read_text().splitlines()) > 0  # every pair scores above -1e308


def test_gemm_device_absent_is_refused_before_any_write(tmp_path, isolated_home, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    case = Case("--gemm-device cuda", "option", lambda t, m: (_mine_argv(t, "--gemm-device", "cuda"),
                                                            _no_manifest_written), "no cuda device")
    _npy(tmp_path, 40, 8, "x.npy", 1)
    _npy(tmp_path, 50, 8, "y.npy", 2)
    g, what = grade(case, tmp_path, monkeypatch)
    assert g == "good" and not (tmp_path / "run").exists(), what


def test_a_degenerate_interval_is_stored_as_printed(isolated_home, capsys):
    """--sample 5 --ci with no error: the record stores the interval the table prints (the exact one)."""
    from xsimpp.cli import main
    from xsimpp.results import ResultStore
    from xsimpp.tasks.intervals import exact_bounds

    assert main([*DEMO, "--sample", "5", "--ci"]) == 0
    text = capsys.readouterr().out
    (rec,) = ResultStore().records()
    assert rec.value == 0.0  # the case this test is about: every resample gives 0 %
    lo, hi = exact_bounds(0.0, 5, 0.95)
    assert (rec.extra["ci_low"], rec.extra["ci_high"]) == (lo, hi) and hi > 50
    assert rec.extra["ci_method"] == "clopper-pearson" and f"[{lo:.2f}, {hi:.2f}] *" in text


def test_compare_bounds_and_identical_results(isolated_home):
    import xsimpp

    a = xsimpp.evaluate("chargram", "deu", dataset="demo", cache=False)
    for kw, match in ((dict(n_resamples=1), "from 100 to 100000"), (dict(n_resamples=10**8), "from 100 to 100000"),
                      (dict(n_trials=10**11), "from 100 to 1000000"), (dict(seed=-1), "a seed is an integer")):
        with pytest.raises(BadInputError, match=match):
            xsimpp.compare(a, a, **kw)
    same = xsimpp.compare(a, a, n_trials=200, bootstrap_method="sacrebleu")
    assert same.rows[0].result.p_bootstrap == 1.0
    assert same.rows[0].verdict.startswith("no difference: the two agree on every resample")


def test_paired_resamples_beyond_memory_are_refused():
    from xsimpp.scoring import significance as S

    big = S.Units.of("error_rate", np.ones(3000, bool), np.zeros(3000), np.arange(3000))
    with pytest.raises(BadInputError, match="GiB of indices at once; use at most"):
        S.paired_bootstrap_samples([big], [big], S.MAX_RESAMPLES, 1)


@pytest.mark.parametrize("make, match", [
    (lambda x, t: x.evaluate("chargram", "deu", dataset="demo", augmented=123), "--augmented takes a path"),
    (lambda x, t: x.evaluate("chargram", "deu", dataset="demo", data_dir=5), "--data-dir takes a path"),
    (lambda x, t: x.evaluate("chargram", "deu", dataset="demo", engine="fast"), "run option engine takes"),
    (lambda x, t: x.evaluate("chargram", "deu", dataset="demo", save=3), "run option save takes"),
    (lambda x, t: x.mine(t / "x.npy", t / "x.npy", t / "o", engine="cuda"), "run option engine takes"),
    (lambda x, t: x.mining_f1("chargram", langs="kea", seed=-1), "--seed takes an integer from 0"),
    (lambda x, t: x.evaluate("chargram", "deu", dataset="demo", ci=0.95, ci_resamples=10**12), "--ci-resamples"),
])
def test_api_wrong_types_and_values_name_the_keyword(make, match, tmp_path, isolated_home):
    import xsimpp

    _npy(tmp_path)
    with pytest.raises(XsimppError, match=match):
        make(xsimpp, tmp_path)


def test_api_list_knob_given_as_one_text_is_read_as_the_cli_reads_it():
    from xsimpp.tasks.base import check_knob_types
    from xsimpp.tasks.mining import MiningSource

    got = check_knob_types(MiningSource, {"whole_sources": "flores200-dev", "fill_sources": "tatoeba,ntrex128"})
    assert got == {"whole_sources": ("flores200-dev",), "fill_sources": ("tatoeba", "ntrex128")}


def test_run_options_and_engine_config_bounds():
    from xsimpp.engine import EngineConfig
    from xsimpp.tasks.runner import RunOptions

    with pytest.raises(BadInputError, match="run option engine"):
        RunOptions(engine="fast")
    with pytest.raises(BadInputError, match="run option progress"):
        RunOptions(progress="yes")
    assert RunOptions(progress=print).progress is print  # mine's shard counter is a callable
    with pytest.raises(BadInputError, match="up to 1024"):
        EngineConfig(threads=100_000)
    with pytest.raises(BadInputError, match=r"from 4 bytes \(one value\) to 1TB"):
        EngineConfig(block_bytes=1)


def test_to_mteb_results_refuses_what_is_not_results(tmp_path):
    from xsimpp.integrations.mteb import to_mteb_results

    for given in ("text", 5, [1]):
        with pytest.raises(BadInputError, match="to_mteb_results takes a run's Results"):
            to_mteb_results(given, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_study_config_with_a_byte_order_mark(tmp_path):
    from xsimpp.study.config import SMALL, load_config

    p = tmp_path / "s.toml"
    p.write_bytes(b"\xef\xbb\xbf" + SMALL.encode())
    assert load_config(p).name == load_config(preset="small").name


@pytest.mark.parametrize("body", [{"use": {}, "data": {"hold_out_dev": "abc"}}, {"use": {"layer": "x"}}])
def test_study_member_with_a_damaged_checkpoint(body, tmp_path):
    """Refused (one sentence) unless the member is optional; then skipped with a note, never silently."""
    from tiny_models import cached

    from xsimpp.study.config import EncoderSpec
    from xsimpp.study.encoders import build_encoders

    model = tmp_path / "model"
    shutil.copytree(cached("bert"), model)
    (model / "xsimpp_training.json").write_text(json.dumps(body))
    with pytest.raises(BadInputError, match="its checkpoint is damaged .*mark it optional = true"):
        build_encoders([EncoderSpec("ck", "hf", {"model": str(model)}, "f")], cache=False)
    notes: list[str] = []
    assert build_encoders([EncoderSpec("ck", "hf", {"model": str(model)}, "f", True)], cache=False, notes=notes) == []
    assert len(notes) == 1 and "encoder 'ck' (optional) skipped: its checkpoint is damaged" in notes[0]


def test_study_report_on_a_full_disk_names_the_file(tmp_path, monkeypatch):
    import errno

    from xsimpp.study import output

    monkeypatch.setattr(output, "study_files", lambda result: {"report.html": b"x"})

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(BadInputError, match=r"cannot write the study report .*report\.html: the disk is full"):
        output.write_study(None, tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_study_rerank_refuses_a_cell_that_is_not_a_number(tmp_path):
    src = REPO / "benchmarks" / "results" / "study_small"
    folder = tmp_path / "s"
    shutil.copytree(src, folder)
    lines = (folder / "cells.csv").read_text().splitlines(keepends=True)
    cells = lines[2].split(",")
    cells[4] = "abc"
    lines[2] = ",".join(cells)
    (folder / "cells.csv").write_text("".join(lines))
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "study_rerank.py"), str(folder)],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines() == [f"study_rerank: error: {folder / 'cells.csv'} row 3 has 'abc' in the "
                                             "column xsim[ratio], which holds numbers"]
