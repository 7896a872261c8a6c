"""NTREX-128 as an evaluation dataset (`--dataset ntrex`, xsimpp/datasets/ntrex.py): its languages,
code resolution, errors, and eval through the Python API and the CLI. Real-data tests skip (fail
under XSIMPP_REQUIRE_DATA=1) when the shared data has no ntrex128/ folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import xsimpp
from conftest import missing
from xsimpp.cli import main
from xsimpp.datasets import DATASETS, get_dataset
from xsimpp.datasets.ntrex import ENGLISH_FILE, Ntrex128
from xsimpp.errors import BadInputError, MissingResourceError

LANGS = ["bem_Latn", "deu_Latn", "eng_Latn", "fao_Latn", "fra_Latn", "ibo_Latn", "ltz_Latn", "rus_Cyrl", "swh_Latn",
         "zho_Hans", "zul_Latn"]


@pytest.fixture
def ntrex_data(real_data) -> Path:
    """The real data root, when it holds NTREX-128 (skips, or fails under XSIMPP_REQUIRE_DATA=1, if not)."""
    if not (real_data / "ntrex128" / ENGLISH_FILE).is_file():
        missing(f"real data ntrex128/ not found under {real_data} (set XSIMPP_DATA_DIR to the shared data folder)",
                data=True)
    return real_data


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- without data ------------------------------------------------------------------------------


def test_registered_as_ntrex():
    assert DATASETS["ntrex"] is Ntrex128 and "ntrex128" not in DATASETS  # the registry has no aliases
    ds = get_dataset("ntrex")
    assert (ds.split, ds.default_target, ds.english_pivot) == ("test", "eng_Latn", False)


def test_unknown_split_is_one_sentence(tmp_path):
    with pytest.raises(MissingResourceError, match=r"^NTREX-128 has only the 'test' split, not 'newstest2019'$"):
        get_dataset("ntrex", "newstest2019", data_dir=tmp_path)


def test_missing_data_says_what_and_how(tmp_path, monkeypatch):
    monkeypatch.setenv("XSIMPP_DATA_DIR", str(tmp_path))
    ds = get_dataset("ntrex", data_dir=tmp_path)
    assert not ds.is_available() and ds.languages() == []
    with pytest.raises(MissingResourceError, match=r"^NTREX-128 test data not found \(looked under .*\); .*"
                                                   r"MicrosoftTranslator/NTREX.*<data root>/ntrex128"):
        ds.bitext("fao")


def test_layout_on_a_toy_copy(tmp_path):
    """Codes as NTREX writes them (``swa``, ``aze-Latn``, ``eng-GB``) map to FLORES-200 codes or are left out."""
    d = tmp_path / "NTREX-128"
    d.mkdir()
    for name in (ENGLISH_FILE, "newstest2019-ref.swa.txt", "newstest2019-ref.aze-Latn.txt",
                 "newstest2019-ref.eng-GB.txt", "newstest2019-ref-2.spa.txt"):
        (d / name).write_text("".join(f"{name} {i}\n" for i in range(3)), encoding="utf-8")
    ds = Ntrex128(data_dir=tmp_path)
    assert ds.languages() == ["azj_Latn", "eng_Latn", "swh_Latn"]
    bt = ds.bitext("swa", "aze")
    assert (bt.dataset, bt.split, bt.src_lang, bt.tgt_lang, len(bt)) == ("ntrex", "test", "swh_Latn", "azj_Latn", 3)


def test_datasets_command_lists_it_missing(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "datasets", "--data-dir", str(tmp_path))
    assert code == 0
    row = next(ln for ln in out.splitlines() if ln.startswith("ntrex "))
    assert row.split()[:3] == ["ntrex", "test", "missing"]
    assert "ntrex: `xsimpp download` has no NTREX source" in out


# -- on the real data --------------------------------------------------------------------------


def test_languages_and_line_counts(ntrex_data):
    ds = get_dataset("ntrex", data_dir=ntrex_data)
    assert ds.languages() == LANGS
    for lang in LANGS:
        assert len(ds.sentences(lang)) == 1997
    bt = ds.bitext("zul")
    assert (bt.src_lang, bt.tgt_lang, len(bt)) == ("zul_Latn", "eng_Latn", 1997)
    bt = ds.bitext("fao", "zul")  # any to any: the files are multi-way parallel
    assert (bt.src_lang, bt.tgt_lang, len(bt)) == ("fao_Latn", "zul_Latn", 1997)
    assert ds.sources_for("eng") == [c for c in LANGS if c != "eng_Latn"]


def test_code_resolution(ntrex_data):
    ds = get_dataset("ntrex", data_dir=ntrex_data)
    assert ds.resolve("fao") == ds.resolve("fao_Latn") == "fao_Latn"
    assert ds.resolve("swa") == ds.resolve("swh") == ds.resolve("swh_Latn") == "swh_Latn"  # the file says swa
    assert ds.path("swh").name == "newstest2019-ref.swa.txt"
    assert ds.resolve("eng") == ds.resolve("en") == "eng_Latn"
    with pytest.raises(BadInputError, match=r"^Unknown language code 'kea'\."):  # FLORES-200 has it, NTREX not
        ds.bitext("kea")


def test_evaluate_chargram(ntrex_data):
    res = xsimpp.evaluate("chargram", "fao", dataset="ntrex", limit=50, cache=False, data_dir=ntrex_data)
    (rec,) = res.records
    assert (rec.src_lang, rec.tgt_lang, rec.n) == ("fao_Latn", "eng_Latn", 50)
    assert rec.signature.dataset == "ntrex" and rec.signature.split == "test[:50]"
    assert "|data:ntrex/test[:50]@" in rec.signature.format()
    with pytest.raises(BadInputError, match="'qqq'"):
        xsimpp.evaluate("chargram", "qqq", dataset="ntrex", limit=50, cache=False, data_dir=ntrex_data)


def test_cli_eval(ntrex_data, capsys):
    code, out, _ = run_cli(capsys, "eval", "--encoder", "chargram", "--dataset", "ntrex", "--langs", "fao,zul",
                           "--limit", "40", "--data-dir", str(ntrex_data), "--json", "--no-progress", "--no-save")
    assert code == 0
    recs = [json.loads(line) for line in out.splitlines()]
    assert [(r["src_lang"], r["tgt_lang"], r["n"]) for r in recs] == [("fao_Latn", "eng_Latn", 40),
                                                                      ("zul_Latn", "eng_Latn", 40)]
    assert all(r["signature"]["dataset"] == "ntrex" for r in recs)
    code, _, err = run_cli(capsys, "eval", "--encoder", "chargram", "--dataset", "ntrex", "--langs", "kea",
                           "--data-dir", str(ntrex_data), "--no-progress", "--no-save")
    assert code == 2 and "Unknown language code 'kea'" in err


def test_datasets_command_lists_it_found(ntrex_data, capsys):
    code, out, _ = run_cli(capsys, "datasets", "--data-dir", str(ntrex_data))
    row = next(ln for ln in out.splitlines() if ln.startswith("ntrex "))
    assert code == 0 and row.split()[:3] == ["ntrex", "test", "found"]
