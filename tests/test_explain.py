"""`xsimpp explain` and `eval --dump`: the wrong decisions of a record with their sentences, read
again from the data and checked against the record's checksum."""

from __future__ import annotations

import csv
import json

import pytest

from clikit import cli
from xsimpp.datasets import Demo
from xsimpp.results import ResultStore

DEMO = ["--dataset", "demo", "--langs", "deu,fra", "--no-progress"]


def read_tsv(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_dump_and_explain_show_the_same_decisions(isolated_home, capsys, tmp_path):
    code, out, err = cli(capsys, "eval", "--encoder", "chargram", *DEMO, "--augmented", "auto",
                         "--dump", tmp_path / "dump.tsv")
    assert code == 0, err
    dumped = read_tsv(tmp_path / "dump.tsv")
    store = ResultStore(isolated_home / "results")
    records = store.records()
    assert len(dumped) == sum(r.errors for r in records) and f"{len(dumped)} wrong decisions" in out
    ds = Demo("dev")
    deu, eng = ds.sentences("deu_Latn"), ds.sentences("eng_Latn")
    for row in dumped:
        if row["metric"] == "xsim" and row["pair"] == "deu_Latn-eng_Latn":
            i = int(row["line"]) - 1
            assert row["source"] == deu[i] and row["gold"] == eng[i] and row["chosen"] != eng[i]
            assert row["chosen"] in eng
    pp = [row for row in dumped if row["metric"] == "xsim++"]
    assert {row["error_type"] for row in pp} <= {"causality", "entity", "number", "Misaligned"}
    gaps = [float(row["gap"]) for row in pp if row["pair"] == "deu_Latn-eng_Latn"]
    assert gaps == sorted(gaps, reverse=True)  # most confident mistakes first
    # explain reads the same sentences again from the stored record
    code, out, err = cli(capsys, "explain", "--encoder", "chargram", "--metric", "xsim++", "--lang", "deu", "--top", "2",
                         "--tsv", tmp_path / "ex.tsv", "--html", tmp_path / "ex.html")
    assert code == 0, err
    assert "most confident first" in out and "... " in out
    again = read_tsv(tmp_path / "ex.tsv")
    assert again == [row for row in pp if row["pair"] == "deu_Latn-eng_Latn"]
    page = (tmp_path / "ex.html").read_text(encoding="utf-8")
    assert page.count("<tr>") == len(again) + 1 and "&lt;" not in "".join(row["source"] for row in again)


def test_explain_refuses_what_it_cannot_show_truly(isolated_home, capsys, tmp_path):
    assert cli(capsys, "eval", "--encoder", "chargram", *DEMO)[0] == 0
    store = ResultStore(isolated_home / "results")
    rec = next(r for r in store.records() if r.src_lang == "deu_Latn")
    path = store.path(rec)
    d = json.loads(path.read_text())
    d["signature"]["data_checksum"] = "0" * 64  # measured on other sentences than the data holds now
    path.write_text(json.dumps(d))
    code, _, err = cli(capsys, "explain", "--encoder", "chargram", "--lang", "deu")
    assert code == 2 and "differs from the data" in err and "Traceback" not in err
    code, _, err = cli(capsys, "explain", "--encoder", "chargram", "--top", "-1")
    assert code == 2 and "--top" in err
    # two files given by path are not named by a stored record
    (tmp_path / "a.txt").write_text("Hallo Welt.\nGuten Tag.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("Hello world.\nGood day.\n", encoding="utf-8")
    assert cli(capsys, "eval", "--encoder", "chargram", "--src-file", tmp_path / "a.txt", "--tgt-file",
               tmp_path / "b.txt", "--k", "1", "--no-progress")[0] == 0
    code, _, err = cli(capsys, "explain", "--encoder", "chargram", "--dataset", "parallel")
    assert code == 2 and "--dump" in err


def test_dump_refuses_a_folder_before_any_work(isolated_home, capsys, tmp_path):
    (tmp_path / "d").mkdir()
    code, out, err = cli(capsys, "eval", "--encoder", "chargram", *DEMO, "--dump", tmp_path / "d")
    assert code == 2 and "--dump" in err and not out
    assert not (isolated_home / "results").exists()


@pytest.mark.parametrize("fmt", ["jsonl"])
def test_dump_as_jsonl(isolated_home, capsys, tmp_path, fmt):
    code, out, err = cli(capsys, "eval", "--encoder", "chargram", *DEMO, "--dump", tmp_path / f"d.{fmt}")
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / f"d.{fmt}").read_text(encoding="utf-8").splitlines()]
    assert rows and set(rows[0]) == {"metric", "pair", "line", "error_type", "gold_score", "chosen_score", "gap",
                                     "source", "gold", "chosen"}


def test_tatoeba_decisions_both_ways(isolated_home, capsys, tmp_path):
    from conftest import DATA_HINT, missing, shared_data_dir

    if shared_data_dir() is None:
        missing(f"real data not found ({DATA_HINT})", data=True)
    assert cli(capsys, "tatoeba", "--encoder", "chargram", "--langs", "swh", "--no-progress")[0] == 0
    store = ResultStore(isolated_home / "results")
    by_metric = {r.metric: r for r in store.records() if r.signature.params["mode"] == "text"}
    rows = {}
    for metric in ("tatoeba_acc_xx2en", "tatoeba_acc_en2xx", "tatoeba_acc_mean"):
        code, out, err = cli(capsys, "explain", "--encoder", "chargram", "--metric", metric, "--setting", "mode=text",
                             "--tsv", tmp_path / f"{metric}.tsv")
        assert code == 0, err
        rows[metric] = read_tsv(tmp_path / f"{metric}.tsv")
        assert len(rows[metric]) == by_metric[metric].errors
    from xsimpp.datasets import TatoebaV1

    bt = TatoebaV1("test", data_dir=shared_data_dir()).bitext("swh", "eng")
    swh, eng = set(bt.src), set(bt.tgt)
    # xx->eng: Swahili queries choosing English; eng->xx the other way round
    assert all(r["source"] in swh and r["chosen"] in eng for r in rows["tatoeba_acc_xx2en"])
    assert all(r["source"] in eng and r["chosen"] in swh for r in rows["tatoeba_acc_en2xx"])
    key = lambda r: (r["line"], r["source"], r["chosen"])  # noqa: E731
    assert sorted(map(key, rows["tatoeba_acc_mean"])) == sorted(map(key, rows["tatoeba_acc_xx2en"]
                                                                     + rows["tatoeba_acc_en2xx"]))
