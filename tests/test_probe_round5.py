"""Regressions of the outside probe of 0.11.0's new surfaces (issue 55, item 5): each case once
ended in exit 0, a wrong flag name or an unexplained refusal; now one sentence and exit 2."""

from __future__ import annotations

import numpy as np
import pytest

from xsimpp.cli import main

DEMO = ["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu", "--no-progress"]


def refused(argv, capsys, fragment: str) -> str:
    """``argv`` ends in exit 2 and one ``xsimpp: error:`` sentence that names ``fragment``."""
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith("xsimpp: error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert fragment in errors[0], errors[0]
    return errors[0]


def _mine_inputs(tmp_path):
    rng = np.random.default_rng(0)
    for name, n in (("s.npy", 30), ("t.npy", 25)):
        np.save(tmp_path / name, rng.standard_normal((n, 8)).astype(np.float32))
    return ["mine", "--src-emb", tmp_path / "s.npy", "--tgt-emb", tmp_path / "t.npy", "--out", tmp_path / "o",
            "--no-progress"]


@pytest.mark.parametrize("flag", ["--shard-rows", "--tile-cols"])
def test_mine_layout_past_its_bound_is_named_by_its_flag(flag, tmp_path, capsys):
    # before: "mining_shard_rows must be an integer from 1 to ..." (the engine's field, not the flag typed)
    refused([*_mine_inputs(tmp_path), flag, str(10**13)], capsys, f"{flag} must be at most")
    assert not (tmp_path / "o").exists()


def test_pxsim_k_has_an_upper_bound(capsys):
    # before: --pxsim-k 1000000000 ran and signed K = 10^9 (exit 0)
    refused([*DEMO, "--pxsim-k", str(10**9), "--rerank", "chargram", "--no-save"], capsys, "--pxsim-k (rerank_k) must be at most")


def test_two_stage_k_on_another_encoder_names_the_flag_typed(capsys):
    # before: "encoder 'chargram' does not take --rerank-k" -- the spelling the CLI itself refuses
    refused([*DEMO, "--two-stage-k", "5"], capsys, "does not take --two-stage-k")


def test_two_stage_k_out_of_range_names_the_flag_typed(capsys):
    # before: "encoder onealigner: option rerank_k takes an integer >= 0, not -1"
    refused(["eval", "--encoder", "onealigner", *DEMO[3:], "--two-stage-k=-1"], capsys, "rerank_k (--two-stage-k)")


@pytest.mark.parametrize("sources", [["--fill-sources", "tatoeba,tatoeba"],
                                     ["--whole-sources", "oldi-seed", "--fill-sources", "oldi-seed"]])
def test_mining_f1_source_named_twice(sources, capsys):
    # before: exit 0, the pool signed with a source list no spelling of the flags means
    refused(["mining-f1", "--encoder", "chargram", "--langs", "fur", "--no-progress", *sources], capsys,
            "is named twice")


def test_datasets_data_dir_that_is_a_file(tmp_path, capsys):
    # before: exit 0, every dataset listed as missing
    (tmp_path / "f").write_text("x")
    refused(["datasets", "--data-dir", tmp_path / "f"], capsys, "is not a folder")


def test_split_with_an_unclosed_bracket(capsys):
    # before: "--split names nothing"
    assert main(DEMO) == 0
    capsys.readouterr()
    refused(["leaderboard", "--split", "dev["], capsys, "'[' without its ']'")


def test_compare_empty_baseline(capsys):
    # before: "no stored result of  matches ... `xsimpp eval --encoder  --langs ...`"
    assert main(DEMO) == 0
    capsys.readouterr()
    refused(["compare", "--baseline", "", "--system", "chargram"], capsys, "--baseline names no encoder")


def test_mine_input_named_like_a_result_in_out(tmp_path, capsys):
    # before: exit 0, --src-emb OUT/fwd_idx.npy replaced by the run's index array
    argv = _mine_inputs(tmp_path)
    (tmp_path / "o").mkdir()
    src = tmp_path / "o" / "fwd_idx.npy"
    (tmp_path / "s.npy").rename(src)
    before = src.read_bytes()
    argv[argv.index("--src-emb") + 1] = src
    refused(argv, capsys, "is the same file as --src-emb")
    assert src.read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["fwd_idx.npy"]


def test_mine_input_beside_the_results_still_runs(tmp_path, capsys):
    # an input that only lives in --out (under a name no result takes) is read as before
    argv = _mine_inputs(tmp_path)
    (tmp_path / "o").mkdir()
    (tmp_path / "s.npy").rename(tmp_path / "o" / "src.npy")
    argv[argv.index("--src-emb") + 1] = tmp_path / "o" / "src.npy"
    assert main([str(a) for a in argv]) == 0
    assert np.load(tmp_path / "o" / "fwd_idx.npy").shape == (30, 4)


def test_mine_out_in_the_results_store(tmp_path, capsys):
    # before: exit 0, manifest.json written among the records (every store reader then failed on it)
    assert main(DEMO) == 0
    capsys.readouterr()
    from xsimpp.paths import results_dir

    argv = _mine_inputs(tmp_path)
    argv[argv.index("--out") + 1] = results_dir() / "mined"
    refused(argv, capsys, "inside the results store")
    assert not (results_dir() / "mined").exists()
    assert main(["leaderboard"]) == 0


def test_encode_rates_nested_too_deep_is_no_estimate(isolated_home, capsys):
    # before: RecursionError traceback from every run that prints a cost line
    from xsimpp.tasks.cost import rates_path, read_rate

    rates_path().parent.mkdir(parents=True, exist_ok=True)
    rates_path().write_text("[" * 100000 + "]" * 100000)
    assert read_rate("chargram") is None
    assert main([a for a in DEMO if a != "--no-progress"] + ["--no-save"]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_encode_rates_as_a_pipe_does_not_block(isolated_home, capsys):
    # before: every eval hung reading <home>/encode-rates.json when it was a FIFO
    import os
    import threading

    from xsimpp.tasks.cost import rates_path, read_rate

    rates_path().parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(rates_path())
    reader = threading.Thread(target=read_rate, args=("chargram",), daemon=True)  # a blocked read fails, not hangs
    reader.start()
    reader.join(timeout=20)
    assert not reader.is_alive(), "reading encode-rates.json blocked on a pipe"
    assert read_rate("chargram") is None
    assert main([a for a in DEMO if a != "--no-progress"] + ["--no-save"]) == 0


@pytest.mark.parametrize("given", [["--encoder-opt", "ngram_max=3", "--encoder-opt", "ngram_max=2"],
                                   ["--batch-size", "8", "--encoder-opt", "batch_size=16"]])
def test_encoder_option_given_twice_differently(given, capsys):
    # before: exit 0 with the last value (e.g. hf path=openvino-float32 then path=torch-float32)
    refused([*DEMO, *given, "--no-save"], capsys, "is given twice")


def test_encoder_option_repeated_with_the_same_value_runs(capsys):
    assert main([*DEMO, "--encoder-opt", "ngram_max=3", "--encoder-opt", "ngram_max=3", "--no-save"]) == 0


def test_encode_rates_concurrent_writers_keep_every_row(isolated_home):
    # before: 114 of 160 rows lost when 8 runs wrote their rates at once (read-modify-write race)
    import json
    import os
    import subprocess
    import sys

    from xsimpp.tasks.cost import rates_path

    code = ("import sys\nfrom xsimpp.tasks.cost import EncodeRate, write_rate\n"
            "for j in range(15): write_rate(f'{sys.argv[1]}-{j}', EncodeRate(10.0, 1.0, '2026-01-01'))")
    procs = [subprocess.Popen([sys.executable, "-c", code, f"enc{i}"], env=dict(os.environ)) for i in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0] * 4
    rows = json.loads(rates_path().read_text())
    assert sorted(rows) == sorted(f"enc{i}-{j}" for i in range(4) for j in range(15))


STUDY_TOML = """
[study]
name = "p"
languages = ["fur"]
flores_lines = 20

[[encoders]]
label = "a"
name = "chargram"

[[encoders]]
label = "b"
name = "chargram"
options = { ngram_max = 3 }
"""


@pytest.mark.parametrize("where", ["store", "inside"])
def test_study_out_is_not_the_results_store(where, tmp_path, capsys):
    # before: `study --out <results> --overwrite` replaced the store with the report (every record lost,
    # every later store read failed); checked before any work, so no data is needed
    assert main(DEMO) == 0
    capsys.readouterr()
    from xsimpp.paths import results_dir

    records = sorted(results_dir().glob("*.json"))
    (tmp_path / "s.toml").write_text(STUDY_TOML)
    out = results_dir() if where == "store" else results_dir() / "study"
    refused(["study", tmp_path / "s.toml", "--out", out, "--overwrite", "--no-progress"], capsys, "the results store")
    assert sorted(results_dir().glob("*.json")) == records and records
