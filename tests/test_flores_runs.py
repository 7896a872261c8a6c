"""docs/performance.md's cold-run table ("The main job and xsim++ on FLORES-200") is printed from
the committed ``bench_flores_runs.py --json`` files (benchmarks/results/flores_runs/, in run order;
one block per machine and session: the AMD VM's files in the folder itself, the Intel Xeon's in intel_2cores/ and
intel_2cores_0.18/), and those files hold what they claim: every command exited 0, each run's vectors came from the path
its options name, the warm run encoded nothing, and the error counts are the runs' own records."""

from __future__ import annotations

import json
import runpy
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))  # the driver imports its neighbour (machine)
DRIVER = runpy.run_path(str(REPO / "benchmarks" / "bench_flores_runs.py"))
RUNS = REPO / "benchmarks" / "results" / "flores_runs"
BLOCKS = {"flores-runs": RUNS, "flores-runs-intel": RUNS / "intel_2cores",  # docs block -> one machine's files
          "flores-runs-intel-0.18": RUNS / "intel_2cores_0.18"}  # the Intel Xeon again, another session
FILES = sorted(f for folder in BLOCKS.values() for f in folder.glob("*.json"))
PAGE = REPO / "docs" / "performance.md"


def test_the_docs_blocks_are_the_committed_runs():
    page = PAGE.read_text(encoding="utf-8")
    for marker, folder in BLOCKS.items():
        files = sorted(folder.glob("*.json"))
        assert files, f"no committed cold runs in {folder}"
        block = "\n".join(DRIVER["table"](files))
        assert f"<!-- {marker} -->\n{block}\n<!-- /{marker} -->" in page, (
            f"docs/performance.md's {marker} block differs from `python benchmarks/bench_flores_runs.py --table "
            f"{folder.relative_to(REPO)}/*.json`")


def test_each_file_is_what_its_options_ran():
    default_paths = set()
    for f in FILES:
        run = json.loads(f.read_text(encoding="utf-8"))
        asked = [o.split("=", 1)[1] for o in run["encoder_opt"] if o.startswith("path=")]
        for r in run["runs"]:
            assert r["exit"] == 0, (f.name, r["run"], r["phase"])
            assert r["records"], (f.name, r["run"])
            paths = {DRIVER["path_of"](rec) for rec in r["records"]}
            assert len(paths) == 1, paths
            if asked:
                assert paths == set(asked), (f.name, paths)
            else:
                default_paths |= paths
            if r["phase"] == "warm":
                assert r.get("encoded") in (0, None), (f.name, r["run"])  # None: before the JSON kept the count
            langs = {rec["src_lang"] for rec in r["records"]}
            assert len(langs) == (10 if r["run"] == "ten" else 203 if r["run"] == "all" else len(langs))
    assert len(default_paths) <= 1, default_paths  # the default runs all ran the same path


def test_a_warm_run_gives_its_cold_runs_counts():
    for f in FILES:
        run = json.loads(f.read_text(encoding="utf-8"))
        by = {(r["run"], r["phase"]): r for r in run["runs"]}
        for name in {r["run"] for r in run["runs"]}:
            def counts(phase):
                return sorted((rec["metric"], rec["src_lang"], rec["errors"], rec["n"]) for rec in by[(name, phase)]["records"])

            assert counts("cold") == counts("warm"), (f.name, name)


def test_every_path_gives_the_same_counts_as_the_page_says():
    """"Both paths give the same error counts in every language of every run": each command's
    per-language counts are the same in every float32 file (bf16's differ by design; its gates
    hold them to torch float32's, docs/performance.md)."""
    seen: dict[str, list] = {}
    for f in FILES:
        for r in json.loads(f.read_text(encoding="utf-8"))["runs"]:
            if r["phase"] == "cold" and DRIVER["path_of"](r["records"][0]).endswith("-float32"):
                counts = sorted((rec["metric"], rec["src_lang"], rec["errors"], rec["n"]) for rec in r["records"])
                assert seen.setdefault(r["command"], counts) == counts, (f.name, r["run"])
    assert "Both paths give the same error counts in every language of every run" in " ".join(PAGE.read_text(encoding="utf-8").split())


def test_the_bf16_prose_is_its_runs():
    """The sentence after the 0.18 Intel block: bf16's share of torch float32's cold ten-language time
    in the same session, and its cold `--langs all` time against the 20-minute bound."""
    folder = BLOCKS["flores-runs-intel-0.18"]
    cold = {(json.loads(f.read_text(encoding="utf-8"))["encoder_opt"][0], r["run"]): r["wall_s"]
            for f in folder.glob("*.json") for r in json.loads(f.read_text(encoding="utf-8"))["runs"] if r["phase"] == "cold"}
    share = 100 * cold[("path=openvino-bf16", "ten")] / cold[("path=torch-float32", "ten")]
    minutes, seconds = divmod(round(cold[("path=openvino-bf16", "all")]), 60)
    flat = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert f"`openvino-bf16` takes {share:.1f} % of torch float32's cold ten-language time here" in flat and share <= 50
    assert f"all 203 languages into English in {minutes} min {seconds} s cold" in flat and minutes < 20
