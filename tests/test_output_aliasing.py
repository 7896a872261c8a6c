"""No output overwrites an input, another output of the same run or a stored record; an output
folder is claimed by one run at a time; TSV outputs keep one row per pair (issue 55).

Each case ran to exit 0 before and replaced the file named twice; now it ends in one sentence
naming both flags, exit 2, before any work, and the file is as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xsimpp.cli import main
from xsimpp.errors import BadInputError
from xsimpp.textio import check_paths_apart, claimed, write_rows

CORPUS = ["sentence number 0 here", "sentence number 1 here", "sentence number 2 here", "sentence number 3 here"]
OTHER = ["Satz Nummer 0 hier", "Satz Nummer 1 hier", "Satz Nummer 2 hier", "Satz Nummer 3 hier"]


def _w(p: Path, lines) -> Path:
    p.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return p


def _refused(argv, capsys, *fragments) -> str:
    """Exit 2 with one `xsimpp: error:` line that holds every fragment."""
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("xsimpp: error:"), err
    for f in fragments:
        assert f in err, err
    return err


def _eval(tmp, *extra):
    return ["eval", "--encoder", "chargram", "--src-file", tmp / "s.txt", "--tgt-file", tmp / "t.txt", "--k", "2",
            "--no-progress", *extra]


@pytest.fixture
def corpus(tmp_path):
    _w(tmp_path / "s.txt", CORPUS)
    _w(tmp_path / "t.txt", OTHER)
    return tmp_path


def _unchanged(p: Path, lines) -> bool:
    return p.read_text(encoding="utf-8") == "".join(x + "\n" for x in lines)


def test_eval_dump_onto_its_source_file_is_refused(corpus, capsys):
    _refused(_eval(corpus, "--dump", corpus / "s.txt"), capsys, "--dump", "--src-file", "same file")
    assert _unchanged(corpus / "s.txt", CORPUS)
    assert not (Path(os.environ["XSIMPP_HOME"]) / "results").exists()  # before any work: nothing stored


def test_a_hard_link_or_a_symlink_to_an_input_is_the_same_file(corpus, capsys):
    os.link(corpus / "s.txt", corpus / "hard.txt")
    os.symlink(corpus / "t.txt", corpus / "soft.txt")
    _refused(_eval(corpus, "--dump", corpus / "hard.txt"), capsys, "--dump", "--src-file")
    _refused(_eval(corpus, "--dump", corpus / "soft.txt"), capsys, "--dump", "--tgt-file")
    assert _unchanged(corpus / "s.txt", CORPUS) and _unchanged(corpus / "t.txt", OTHER)


def test_eval_dump_onto_a_stored_record_is_refused(corpus, capsys):
    assert main([str(a) for a in _eval(corpus)]) == 0
    capsys.readouterr()
    record = next((Path(os.environ["XSIMPP_HOME"]) / "results").glob("*.json"))
    before = record.read_bytes()
    _refused(_eval(corpus, "--dump", record), capsys, "--dump", "inside the results store")
    assert record.read_bytes() == before
    assert main(["leaderboard"]) == 0  # the store still reads


def _mine(tmp, *extra):
    rng = np.random.default_rng(0)
    for name in ("x.npy", "y.npy"):
        np.save(tmp / name, rng.standard_normal((4, 8)).astype(np.float32))
    return ["mine", "--src-emb", tmp / "x.npy", "--tgt-emb", tmp / "y.npy", "--out", tmp / "run", "--k", "2",
            "--no-progress", *extra]


def test_mine_pairs_tsv_onto_its_source_text_is_refused(corpus, capsys):
    argv = _mine(corpus, "--src-text", corpus / "s.txt", "--tgt-text", corpus / "t.txt", "--pairs-tsv", corpus / "s.txt")
    _refused(argv, capsys, "--pairs-tsv", "--src-text", "same file")
    assert _unchanged(corpus / "s.txt", CORPUS) and not (corpus / "run").exists()


def test_mine_pairs_tsv_inside_its_out_folder_is_refused(corpus, capsys):
    assert main([str(a) for a in _mine(corpus)]) == 0
    capsys.readouterr()
    index = corpus / "run" / "fwd_idx.npy"
    before = index.read_bytes()
    argv = _mine(corpus, "--src-text", corpus / "s.txt", "--tgt-text", corpus / "t.txt", "--pairs-tsv", index)
    _refused(argv, capsys, "--pairs-tsv", "inside --out")
    assert index.read_bytes() == before


def test_the_mine_api_checks_aliasing_too(corpus):
    import xsimpp

    _mine(corpus)  # writes the two arrays
    with pytest.raises(BadInputError, match="same file as --tgt-text"):
        xsimpp.mine(corpus / "x.npy", corpus / "y.npy", corpus / "run", k=2, src_text=corpus / "s.txt",
                    tgt_text=corpus / "t.txt", pairs_tsv=corpus / "t.txt")
    assert _unchanged(corpus / "t.txt", OTHER) and not (corpus / "run").exists()


def test_mine_pairs_tsv_dash_is_refused_not_a_file_named_dash(corpus, capsys, monkeypatch):
    monkeypatch.chdir(corpus)
    argv = _mine(corpus, "--src-text", corpus / "s.txt", "--tgt-text", corpus / "t.txt", "--pairs-tsv", "-")
    _refused(argv, capsys, "--pairs-tsv -", "standard output")
    assert not (corpus / "-").exists()


@pytest.mark.parametrize("argv", [["explain", "--encoder", "chargram", "--tsv", "X", "--html", "X"],
                                  ["leaderboard", "--csv", "X", "--html", "X"]], ids=["explain", "leaderboard"])
def test_two_outputs_of_one_run_on_one_path_are_refused(argv, corpus, capsys, monkeypatch):
    assert main([str(a) for a in _eval(corpus)]) == 0
    capsys.readouterr()
    monkeypatch.chdir(corpus)
    _refused(argv, capsys, "are the same path", argv[-4], argv[-2])
    assert not (corpus / "X").exists()


def test_leaderboard_csv_inside_the_results_store_is_refused(corpus, capsys):
    assert main([str(a) for a in _eval(corpus)]) == 0
    capsys.readouterr()
    store = Path(os.environ["XSIMPP_HOME"]) / "results"
    _refused(["leaderboard", "--csv", store / "board.json"], capsys, "--csv", "inside the results store")
    assert not (store / "board.json").exists()


def test_a_replaced_out_folder_that_holds_an_input_is_refused(corpus, capsys):
    """filter and train replace --out as a whole: an input inside it would be lost."""
    out = corpus / "kept"
    out.mkdir()
    _w(out / "src.txt", CORPUS)
    _refused(["filter", "--encoder", "chargram", "--src", out / "src.txt", "--tgt", corpus / "t.txt", "--src-lang",
              "eng", "--tgt-lang", "deu", "--lid", "none", "--out", out, "--no-progress"],
             capsys, "--out", "holds --src", "replaces that folder")
    _w(out / "p.tsv", ["a\tb"])
    _refused(["train", "onealigner", "--pairs", out / "p.tsv", "--model", "x", "--out", out], capsys,
             "holds --pairs")
    assert _unchanged(out / "src.txt", CORPUS)


def test_augment_output_named_like_its_corpus_is_refused(corpus, capsys):
    out = corpus / "aug"
    out.mkdir()
    src = _w(out / "eng_Latn_augmented.dev", CORPUS)
    _refused(["augment", src, "--out", out, "--split", "dev"], capsys, "the corpus", "same file")
    assert _unchanged(src, CORPUS)


def test_rank_json_onto_its_table_is_refused(tmp_path, capsys):
    table = _w(tmp_path / "t.csv", ["direction,system,bleu,xsim", "de-en,a,10,5", "de-en,b,11,4", "de-en,c,12,3"])
    before = table.read_bytes()
    _refused(["rank", table, "--proxy", "xsim", "--lower-better", "xsim", "--json", table], capsys,
             "--json", "TABLE.csv")
    assert table.read_bytes() == before


def test_an_output_folder_may_hold_the_inputs_it_does_not_replace(tmp_path):
    """mine writes its own names into --out: embeddings kept there stay allowed."""
    out = tmp_path / "run"
    out.mkdir()
    check_paths_apart(inputs={"--src-emb": out / "x.npy"}, folders={"--out": out})


# -- TSV rows ------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad,name", [("a\rb", "carriage return"), ("a\0b", "NUL")])
def test_mine_refuses_a_sentence_that_would_break_its_tsv_row(corpus, capsys, bad, name):
    _w(corpus / "s.txt", [CORPUS[0], bad, *CORPUS[2:]])
    argv = _mine(corpus, "--src-text", corpus / "s.txt", "--tgt-text", corpus / "t.txt", "--pairs-tsv",
                 corpus / "p.tsv")
    _refused(argv, capsys, "line 2", name)
    assert not (corpus / "p.tsv").exists() and not (corpus / "run").exists()


def test_a_dump_row_with_a_carriage_return_stays_one_row(tmp_path):
    """csv leaves a bare CR unquoted under "\\n" line ends; pandas then read 3 rows for 2."""
    rows = [{"source": "x\ry", "score": 1.5}, {"source": "z", "score": 2.0}]
    write_rows(tmp_path / "d.tsv", rows, ["source", "score"])
    back = pd.read_csv(tmp_path / "d.tsv", sep="\t")
    assert back.to_dict("records") == rows


def test_a_dump_row_with_a_nul_is_refused_naming_the_row(tmp_path):
    with pytest.raises(BadInputError, match="row 2 holds a NUL"):
        write_rows(tmp_path / "d.tsv", [{"s": "ok"}, {"s": "a\0b"}], ["s"])
    assert not (tmp_path / "d.tsv").exists()
    write_rows(tmp_path / "d.jsonl", [{"s": "a\0b"}], ["s"])  # JSON lines carry it
    assert json.loads((tmp_path / "d.jsonl").read_text())["s"] == "a\0b"


# -- the claim of an output folder ---------------------------------------------------------------

def _holder(out: Path, ready: Path) -> subprocess.Popen:
    """A second process that claims ``out`` and holds it until killed."""
    code = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from xsimpp.textio import claimed
        with claimed({str(out)!r}, "--out"):
            Path({str(ready)!r}).write_text("held")
            time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ})
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the holder did not start"
        time.sleep(0.05)
    return proc


def test_two_processes_cannot_both_claim_one_folder(tmp_path):
    out = tmp_path / "o"
    proc = _holder(out, tmp_path / "ready")
    try:
        with pytest.raises(BadInputError, match="being written by another run"):
            with claimed(out, "--out"):
                pass
    finally:
        proc.kill()
        proc.wait()
    with claimed(out, "--out"):  # the killed holder's lock went with it; its claim file is no obstacle
        pass
    assert not (tmp_path / ".o.claim").exists()


def test_claims_raced_by_many_threads_have_one_winner(tmp_path):
    import threading

    # flock locks belong to an open file: threads with their own open() race like processes
    out, wins, refusals, barrier = tmp_path / "o", [], [], threading.Barrier(8)
    hold = threading.Event()

    def attempt():
        barrier.wait()
        try:
            with claimed(out, "--out"):
                wins.append(1)
                hold.wait(5)
        except BadInputError:
            refusals.append(1)
            if len(refusals) == 7:
                hold.set()

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(refusals) == 7


def test_a_second_study_with_the_same_out_is_refused_at_its_start(tmp_path, capsys):
    out = tmp_path / "o"
    proc = _holder(out, tmp_path / "ready")
    try:
        started = time.monotonic()
        _refused(["study", "--preset", "small", "--out", out, "--no-progress"], capsys, "--out", "another run")
        assert time.monotonic() - started < 30  # refused before any data or encoder loads
    finally:
        proc.kill()
        proc.wait()
    assert not out.exists()


def test_a_second_distill_with_the_same_out_is_refused(tmp_path, capsys):
    out = tmp_path / "ck"
    proc = _holder(out, tmp_path / "ready")
    try:
        _refused(["train", "distill", "--langs", "kea", "--out", out], capsys, "--out", "another run")
    finally:
        proc.kill()
        proc.wait()


def test_distill_does_not_replace_a_step_folder_without_a_manifest(tmp_path, capsys):
    step = tmp_path / "ck" / "step-00001"
    step.mkdir(parents=True)
    (step / "notes.txt").write_text("mine")
    _refused(["train", "distill", "--langs", "kea", "--out", tmp_path / "ck"], capsys, "already holds", "--overwrite")
    assert (step / "notes.txt").read_text() == "mine"


def test_the_mine_api_takes_arrays_beside_the_checked_paths(corpus):
    import xsimpp

    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((4, 8)).astype(np.float32) for _ in range(2))
    xsimpp.mine(x, y, corpus / "run", k=2, src_text=corpus / "s.txt", tgt_text=corpus / "t.txt",
                pairs_tsv=corpus / "p.tsv")
    assert len((corpus / "p.tsv").read_text().splitlines()) >= 1


def test_two_studies_started_at_once_with_one_out_have_one_winner(tmp_path, monkeypatch):
    """The emptiness check and the final rename are both under the claim: before, both runs passed
    the check (minutes before either renamed) and both reported success, one study lost."""
    import threading

    import xsimpp.study.output as output
    import xsimpp.study.pipeline as pipeline
    from xsimpp.study.config import load_config

    both_checked = threading.Barrier(2, timeout=10)

    def slow_run(*args):
        try:
            both_checked.wait()  # the old order: both runs would be here, past their checks
        except threading.BrokenBarrierError:
            pass
        return "result"

    def write(result, out, overwrite=False):  # as write_study: an atomic folder replaced by renames
        from xsimpp.textio import atomic_dir

        with atomic_dir(out) as tmp:
            (tmp / "summary.txt").write_text(threading.current_thread().name)

    monkeypatch.setattr(pipeline, "_run", slow_run)
    monkeypatch.setattr(output, "write_study", write)
    cfg, out, outcomes = load_config(None, "small"), tmp_path / "o", {}

    def one_study():
        try:
            pipeline.study(cfg, out=out)
            outcomes[threading.current_thread().name] = "written"
        except BadInputError as e:
            outcomes[threading.current_thread().name] = str(e)

    threads = [threading.Thread(target=one_study, name=f"study-{i}") for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    written = [n for n, o in outcomes.items() if o == "written"]
    assert len(written) == 1 and (out / "summary.txt").read_text() == written[0]
    refused = [o for o in outcomes.values() if o != "written"]
    assert len(refused) == 1 and "being written by another run" in refused[0]
