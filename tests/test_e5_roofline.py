"""docs/performance.md's e5-small roofline block ("Why float32 cannot meet the 40 % target here") is
printed from the committed ``bench_e5_roofline.py --json`` file, whose derived figures follow from its
measured ones and whose cold times are the committed cold runs' (benchmarks/results/flores_runs/);
and the GEMM work it counts is the forward pass's (benchmarks/encoder_flops.py)."""

from __future__ import annotations

import json
import runpy
import sys

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
BENCH = runpy.run_path(str(REPO / "benchmarks" / "bench_e5_roofline.py"))
FLOPS = runpy.run_path(str(REPO / "benchmarks" / "encoder_flops.py"))
FILE = REPO / "benchmarks" / "results" / "e5_paths" / "roofline_amd_2cores.json"
PAGE = REPO / "docs" / "performance.md"


def test_the_docs_block_is_the_committed_file():
    block = "\n".join(BENCH["lines"](json.loads(FILE.read_text(encoding="utf-8"))))
    page = PAGE.read_text(encoding="utf-8")
    assert f"<!-- e5-roofline -->\n{block}\n<!-- /e5-roofline -->" in page, (
        "docs/performance.md's roofline block differs from `python benchmarks/bench_e5_roofline.py --lines "
        f"{FILE.relative_to(REPO)}`")


def test_the_files_derived_figures_follow_from_its_measurements():
    r = json.loads(FILE.read_text(encoding="utf-8"))
    work = r["devtest"]
    assert work["sentences"] == 204 * 1012 and work["padded_tokens"] > work["tokens"]
    for path, row in r["paths"].items():
        bound = row["gemm_bound"]
        assert len(bound["by_round"]) == r["sample"]["rounds"] == len(row["seconds"])
        # the bound takes each shape's best round, so it is at least every round's weighted rate
        assert bound["gflops"] >= max(bound["by_round"]) - 0.1
        assert min(bound["shapes_gflops"].values()) <= bound["gflops"] <= max(bound["shapes_gflops"].values())
        assert row["gflops"] == pytest.approx(r["sample"]["padded_tflop"] * 1e3 / np.median(row["seconds"]), rel=2e-3)
        assert row["share_of_bound"] == pytest.approx(row["gflops"] / bound["gflops"], abs=1e-3)
        assert row["all_langs_floor_s"] == pytest.approx(work["padded_tflop"] * 1e3 / bound["gflops"], abs=0.1)
    assert r["committed_cold_all_langs_s"] == BENCH["committed_cold"]()
    # what the docs conclude: even at OpenVINO's GEMM rate, the default takes over 40 % of torch's time
    ov, torch = r["paths"]["openvino-float32"], r["paths"]["torch-float32"]
    assert torch["gflops"] / ov["gemm_bound"]["gflops"] > 0.40


def test_gemm_work_is_the_forward_pass_products():
    h, ff, layers = 4, 6, 2
    widths = [3, 5]
    by_hand = 0
    for w in widths:  # per layer: Q, K, V, output (w x h x h each), feed-forward (w x h x ff twice), QK^T and AV
        by_hand += layers * 2 * (4 * w * h * h + 2 * w * h * ff + 2 * w * w * h)
    assert FLOPS["gemm_flops"](widths, h, ff, layers) == by_hand
    assert sum(c * 2 * m * k * n for m, k, n, c in FLOPS["linear_shapes"](h, ff, rows=1)) == 2 * (4 * h * h + 2 * h * ff)
