"""The CLI end to end on the demo corpus and on bad input (clear error, exit 2, nothing written)."""

import json

import numpy as np
import pandas as pd
import pytest

from xsimpp.cli import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_eval_demo_xsimpp_cold_then_warm(capsys, isolated_home):
    args = ["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra", "--augmented", "auto", "--no-progress"]
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    assert "| demo      | deu_Latn-eng_Latn |" in out and "xsim++" in out
    assert "Absolute error under augmented transformations for: eng_Latn" in out
    # deu 120 + fra 120 + eng 120 + 346 variants: English and its variants are encoded once for both pairs.
    assert "sentences encoded: 706, reused from cache: 0" in out
    code, out2, _ = run_cli(capsys, *args)
    assert "sentences encoded: 0, reused from cache: 706" in out2
    # Same numbers from cache.
    assert out.split("signature")[0] == out2.split("signature")[0]
    results = list((isolated_home / "results").glob("*.json"))
    assert len(results) == 4  # 2 pairs x (xsim, xsim++), updated in place on the re-run
    code, out, _ = run_cli(capsys, "leaderboard", "--csv", str(isolated_home / "lb.csv"))
    df = pd.read_csv(isolated_home / "lb.csv")
    assert len(df) == 4 and set(df.metric) == {"xsim", "xsim++"}
    pp = df[df.metric == "xsim++"]
    assert (pp.err_causality + pp.err_entity + pp.err_number + pp.err_misaligned == pp.errors).all()
    assert (df[df.metric == "xsim++"].value.values >= df[df.metric == "xsim"].value.values).all()


def test_eval_json_both_directions(capsys):
    code, out, _ = run_cli(capsys, "eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "spa",
                           "--both-directions", "--json", "--no-progress", "--no-save", "--margin", "distance")
    recs = [json.loads(line) for line in out.splitlines()]
    assert [(r["src_lang"], r["tgt_lang"]) for r in recs] == [("spa_Latn", "eng_Latn"), ("eng_Latn", "spa_Latn")]
    assert all(r["signature"]["params"]["margin"] == "distance" for r in recs)
    assert all(r["signature_string"].startswith("xsimpp:") for r in recs)


def test_nway(capsys):
    code, out, _ = run_cli(capsys, "eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra,spa",
                           "--nway", "--no-progress", "--no-save")
    assert code == 0 and "Global average:" in out and "src \\ tgt" in out


def write(path, lines):
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("case", ["mismatch", "empty", "unknown_lang", "missing_dataset", "k_too_large", "bad_option"])
def test_bad_input_clear_error_and_nothing_written(capsys, tmp_path, isolated_home, monkeypatch, case):
    monkeypatch.delenv("XSIMPP_DATA_DIR", raising=False)
    a = write(tmp_path / "a.txt", ["one", "two", "three"])
    base = ["eval", "--encoder", "chargram", "--no-progress"]
    argv, expect = {
        "mismatch": (base + ["--src-file", a, "--tgt-file", write(tmp_path / "b.txt", ["uno", "dos"])],
                     "src has 3 lines but tgt has 2"),
        "empty": (base + ["--src-file", a, "--tgt-file", str(tmp_path / "e.txt")], "is empty"),
        "unknown_lang": (base + ["--dataset", "demo", "--langs", "klingon"], "Unknown language code 'klingon'"),
        "missing_dataset": (base + ["--langs", "kea", "--data-dir", str(tmp_path / "none")],
                            "FLORES-200 devtest file kea_Latn.devtest not found"),
        "k_too_large": (base + ["--src-file", a, "--tgt-file", write(tmp_path / "c.txt", ["un", "deux", "trois"]),
                                "--k", "4"], "k=4 is larger than the target set (3 sentence(s))"),
        "bad_option": (base + ["--dataset", "demo", "--langs", "deu", "--model", "x"], "does not take --model"),
    }[case]
    if case == "empty":
        (tmp_path / "e.txt").write_text("", encoding="utf-8")
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert expect in err and err.startswith("xsimpp: error:") and "Traceback" not in err
    assert not (isolated_home / "results").exists()


def test_score_npy_and_raw_laser_files(capsys, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 8)).astype(np.float32)
    y = x + 0.1 * rng.standard_normal((20, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    y.tofile(tmp_path / "y.raw")  # LASER's raw float32 layout
    code, out, _ = run_cli(capsys, "score", "--src-emb", str(tmp_path / "x.npy"), "--tgt-emb", str(tmp_path / "y.raw"),
                           "--dim", "8", "--mode", "index")
    assert code == 0 and "errors: 0 / 20" in out
    code, _, err = run_cli(capsys, "score", "--src-emb", str(tmp_path / "x.npy"), "--tgt-emb", str(tmp_path / "y.raw"),
                           "--dim", "7", "--mode", "index")
    assert code == 2 and "not a whole number of 7-d vectors" in err


def test_listing_commands(capsys):
    code, out, _ = run_cli(capsys, "encoders")
    assert code == 0 and "e5-small" in out and "chargram" in out and "use-m3" in out
    code, out, _ = run_cli(capsys, "datasets")
    assert code == 0 and "flores200" in out and "demo" in out


def test_parallel_files_with_augmented_targets(capsys, tmp_path):
    src = write(tmp_path / "de.txt", ["Der Hund schläft.", "Die Katze isst.", "Es regnet in Berlin."])
    tgt = write(tmp_path / "en.txt", ["The dog sleeps.", "The cat eats.", "It rains in Berlin."])
    aug_dir = tmp_path / "aug"
    aug_dir.mkdir()
    write(aug_dir / "en_augmented.mine", ["The dog does not sleep.", "It rains in Paris."])
    (aug_dir / "en_errtype.mine.json").write_text(json.dumps({
        "The dog does not sleep.": {"src": "The dog sleeps.", "errtype": "causality"},
        "It rains in Paris.": {"src": "It rains in Berlin.", "errtype": "entity"}}), encoding="utf-8")
    code, out, err = run_cli(capsys, "eval", "--encoder", "chargram", "--src-file", src, "--tgt-file", tgt,
                             "--langs", "de", "--target", "en", "--split", "mine", "--augmented", str(aug_dir),
                             "--k", "2", "--no-progress", "--json", "--no-save")
    assert code == 0, err
    recs = {r["metric"]: r for r in map(json.loads, out.splitlines())}
    assert recs["xsim++"]["n"] == 3 and recs["xsim++"]["src_lang"] == "de" and recs["xsim++"]["tgt_lang"] == "en"
    assert recs["xsim++"]["signature"]["split"] == "mine"
