"""Every path a command takes goes through ``textio.path``: an empty one is refused in one sentence
before any work, never read as "the default folder" or the current one."""

from __future__ import annotations

import argparse

import pytest

from xsimpp.cli import build_parser, main
from xsimpp.textio import path

# Options that name a file or folder, wherever a command has them.
PATH_DESTS = {"out", "to", "data_dir", "cache_dir", "results_dir", "csv", "html", "dump", "entity_pool", "bleu",
              "json", "checksums", "src", "tgt", "docs", "student", "src_file", "tgt_file", "augmented", "src_emb",
              "tgt_emb", "tgt_text", "errtype_json"}


def _actions(parser, prefix=()):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _actions(sub, prefix + (name,))
        elif a.option_strings and a.dest in PATH_DESTS and a.nargs != 0 and a.type is not bool:
            yield prefix, a


def test_every_path_option_refuses_an_empty_path():
    found = [(" ".join(p), a.option_strings[0]) for p, a in _actions(build_parser())
             if not isinstance(a, (argparse._StoreTrueAction, argparse._StoreConstAction)) and a.type is not path]
    assert not found, f"path options without textio.path: {found}"


@pytest.mark.parametrize("argv", [
    ["study", "--preset", "small", "--out", ""],
    ["augment", "flores200", "--split", "dev", "--out", ""],
    ["train", "distill", "--langs", "kea", "--out", ""],
    ["download", "flores200", "--to", ""],
    ["mining-f1", "--encoder", "chargram", "--langs", "kea", "--data-dir", ""],
    ["leaderboard", "--csv", " "],
])
def test_an_empty_path_is_one_sentence_and_exit_2(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own exit for a value its type refuses
        code = e.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and "invalid path value" in err and len(err.splitlines()) == 1, err
    assert not any(tmp_path.iterdir())  # nothing written where it ran


@pytest.mark.parametrize("argv, says", [
    (["train", "distill", "--langs", "kea", "--lr", "nan"], "invalid finite value"),
    (["train", "distill", "--langs", "kea", "--lr", "inf"], "invalid finite value"),
    (["train", "distill", "--langs", "kea", "--seed", str(2**64)], "invalid seed value"),
    (["train", "distill", "--langs", "kea", "--seed", "-1"], "invalid seed value"),
    (["train", "distill", "--langs", "kea", "--device", "tpu9"], "--device 'tpu9'"),
    (["train", "mnr", "--src", "x", "--tgt", "y", "--out", "o", "--device", "cuda:7"], "--device 'cuda:7'"),
    (["download", "flores200", "--timeout", "nan"], "invalid finite value"),
    (["rank", "t.csv", "--confidence", "inf"], "invalid finite value"),
    (["eval", "--encoder", "sbert", "--dataset", "demo", "--langs", "deu", "--device", "nope"], "option device"),
    # checked before spaCy, a pool or FLORES is read (before: after a minute of spaCy work)
    (["augment", "flores200", "--lang", "fra", "--categories", "causality,entitty"], "unknown or empty categories"),
    (["augment", "flores200", "--max-per-category", "0"], "max_per_category must be at least 1"),
])
def test_numbers_and_devices_are_checked_before_any_work(argv, says, capsys, tmp_path, monkeypatch):
    """A NaN or infinite number, a seed past 63 bits, an unknown or absent device: one sentence,
    exit 2, before any model loads or file is written."""
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and says in err and len(err.splitlines()) == 1, err
    assert not any(tmp_path.iterdir())


def test_a_target_listed_among_the_sources_is_refused_not_dropped(capsys):
    assert main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,eng_Latn", "--no-save",
                 "--no-cache", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--langs lists eng_Latn, the target" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("argv", [
    ["train", "distill", "--langs", "kea", "--steps", "1", "--out", "x" * 240],
    ["study", "--preset", "small", "--out", "y" * 230],
    ["leaderboard", "--csv", "z" * 250 + ".csv"],
])
def test_a_name_too_long_for_the_file_system_is_refused_before_any_work(argv, capsys, tmp_path, monkeypatch):
    """Before, a --out one character too long failed only when the finished training or study came
    to be written (the atomic write's temporary name did not fit)."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "this file system takes" in err and len(err.splitlines()) == 1, err
    assert not any(tmp_path.iterdir())


def test_a_second_distill_run_into_one_folder_is_refused_without_overwrite(tmp_path, capsys):
    """Checkpoints of an earlier run in --out: refused before any data or model loads, naming
    --overwrite (before, the second run's steps were written beside the first's)."""
    step = tmp_path / "ck" / "step-00100"
    step.mkdir(parents=True)
    (step / "xsimpp_training.json").write_text("{}", encoding="utf-8")
    assert main(["train", "distill", "--langs", "kea", "--out", str(tmp_path / "ck")]) == 2
    err = capsys.readouterr().err.strip()
    assert "already holds 1 checkpoint(s) of an earlier run" in err and "--overwrite" in err
    assert len(err.splitlines()) == 1 and [p.name for p in (tmp_path / "ck").iterdir()] == ["step-00100"]
