"""docs/scaling.md's GPU section is printed from the committed files of the lent-GPU run
(benchmarks/results/gpu/, written by benchmarks/gpu/compare.py): the summary re-derives from the
records and run files beside it, every table and figure on the page is the one the summary prints,
and the run covers every command the device script runs."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
GPU = ROOT / "benchmarks" / "gpu"


@pytest.fixture()
def compare(monkeypatch):
    monkeypatch.syspath_prepend(str(GPU))
    spec = importlib.util.spec_from_file_location("gpu_compare", GPU / "compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_summary_re_derives_from_the_committed_run_files(compare):
    committed = json.loads((compare.RESULTS / "summary.json").read_text(encoding="utf-8"))
    assert compare.summary() == committed


@pytest.mark.parametrize("block, render", [("gpu-commands", "table"), ("gpu-fidelity", "fidelity_table"),
                                           ("gpu-figures", "figures")])
def test_the_docs_print_the_summary(compare, block, render):
    page = (ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")
    text = getattr(compare, render)(compare.summary())
    assert f"<!-- {block} -->\n\n{text}\n" in page, f"docs/scaling.md's {block} block is not what compare.py prints"


def test_the_run_covers_every_command_of_the_device_script_and_each_ended_well(compare, monkeypatch):
    monkeypatch.syspath_prepend(str(GPU.parent))
    monkeypatch.syspath_prepend(str(GPU))
    spec = importlib.util.spec_from_file_location("gpu_run_commands", GPU / "run_commands.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    names = set(run.commands("cuda", Path("aug"), Path("e5"), Path("work")))
    last = {c["name"]: c for c in compare.summary()["commands"]}  # a later call's row replaces an earlier one's
    assert set(last) == names
    assert {n: c["rc"] for n, c in last.items() if c["rc"] != 0} == {}


def test_float32_on_the_gpu_gives_the_cpus_error_counts(compare):
    s = compare.summary()
    fid = s["fidelity"]
    assert fid["languages"] >= 20 and fid["float32_equal_languages"] == fid["languages"]
    for c in s["commands"]:
        if "records" in c and c["name"] != "eval-xsim-24-bf16":
            assert c["same_values"] == c["records"] == c["cpu_records"], c["name"]
            assert c["signature_differs_beyond_numerics"] == [] or (
                c["name"] == "eval-pxsim" and c["signature_differs_beyond_numerics"] == ["params"]), c["name"]
    assert re.fullmatch(r"NVIDIA .+", s["device"])


def test_the_prose_figures_come_from_the_committed_profile_and_bundle_manifest(compare):
    """The section's prose quotes the cut's row counts and the cProfile of one command there."""
    page = (ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")
    bundle = json.loads((compare.RESULTS / "gpu" / "bundle.json").read_text(encoding="utf-8"))
    assert f"{bundle['rows_kept']:,} of {bundle['rows']:,} rows".replace(",", " ") in page
    profile = (compare.RESULTS / "gpu" / "eval_profile.txt").read_text(encoding="utf-8")

    def seconds(function: str) -> float:  # cumulative time of the profile's line for `function`
        line = next(x for x in profile.splitlines() if x.rstrip().endswith(function))
        return float(line.split()[3])

    calls = int(re.search(r"^(\d+)/531 .*_call_impl", profile, re.M).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): 0:(\d+\.\d+)", profile).group(1)
    quoted = {"wall": f"{float(wall):.1f} s wall", "forward": f"take {seconds('(hidden_layer)'):.1f} s",
              "scoring": f"on the device {seconds('(topk_both)'):.1f} s",
              "custom ops": f"registration {seconds('(_register_to_dispatcher)'):.1f} s",
              "compile": f"no cache\n{seconds('{built-in method builtins.compile}'):.1f} s",
              "tokenizer": f"tokenizer ({seconds('tokenization_auto.py:658(from_pretrained)'):.1f} s)",
              "module calls": f"({calls:,} of them".replace(",", " ")}
    for what, text in quoted.items():
        assert text in page, f"docs/scaling.md does not quote the profile's {what}: {text!r}"


def test_runs_that_counted_the_specials_twice_are_recounted_exactly(compare, monkeypatch):
    """Runs before 0.16.0 added <s> and </s> to ids that held them; the recount from the totals equals
    counting the true widths (benchmarks/encoder_flops.py) and leaves a run counted right alone."""
    monkeypatch.syspath_prepend(str(GPU.parent))
    from encoder_flops import gemm_flops

    widths = np.random.default_rng(0).integers(3, 300, size=777)
    dims = compare.E5_SMALL_DIMS
    old = {"sentences": 777, "tokens": int((widths + 2).sum()), "encode_s": 2.0,
           "model_gflop": round(gemm_flops(widths + 2, *dims) / 1e9, 1)}
    fixed = compare.recounted(old)
    assert fixed["tokens"] == int(widths.sum())
    assert fixed["model_gflop"] == pytest.approx(gemm_flops(widths, *dims) / 1e9, abs=0.11)
    right = {**old, "token_count": "ids"}
    assert compare.recounted(right) == right


def test_the_fixed_shape_padding_sentence_is_the_committed_count(compare, monkeypatch):
    monkeypatch.syspath_prepend(str(GPU.parent))
    spec = importlib.util.spec_from_file_location("fixed_shape_padding", GPU.parent / "fixed_shape_padding.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    counts = json.loads((compare.RESULTS / "fixed_shape_padding.json").read_text(encoding="utf-8"))
    from xsimpp.tasks.base import POOL_CHUNK_SIZE

    assert counts["pool_chunk_size"] == POOL_CHUNK_SIZE  # the count is of the chunks the runner makes
    page = (ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")
    assert f"<!-- fixed-shape-padding -->\n{mod.line(counts)}\n<!-- /fixed-shape-padding -->" in page
