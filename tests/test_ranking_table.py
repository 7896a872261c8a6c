"""Ranking tables and `xsimpp rank`: the SONAR worked example, BLEU from hyp/ref with sacrebleu,
xsim++ restricted to error types, tables built from the results store, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu

from xsimpp.cli import main
from xsimpp.errors import BadInputError
from xsimpp.tasks.ranking import evaluate_table, read_table, restricted_name, table_from_results
from xsimpp.results import ResultRecord, ResultStore, Signature

REPO = Path(__file__).resolve().parent.parent
SONAR = REPO / "xsimpp" / "data" / "examples" / "sonar_flores200_devtest.csv"


def test_sonar_example_runs_and_prints_accuracy_correlation_ci(capsys):
    assert main(["rank", str(SONAR)]) == 0
    out = capsys.readouterr().out
    assert "4 direction(s), 2 system(s), 8 rows -> 4 system pairs (0 within a model family, 4 across)" in out
    row = next(line for line in out.splitlines() if line.startswith("xsim++"))
    cells = row.split()
    # proxy, better, accuracy, agree/pairs, CI low, CI high, within, across, chance, p, r, rho, tau
    assert cells[:4] == ["xsim++", "lower", "100.00", "4/4"]
    assert cells[4:6] == ["[100.00,", "100.00]"]
    assert cells[7:10] == ["100.00", "50.00", "0.0625"]
    assert cells[10:] == ["0.925", "0.929", "0.857"]
    assert "only 4 pair(s)" in out  # the degenerate CI is called out


def test_sonar_example_citation_is_in_the_file():
    text = SONAR.read_text(encoding="utf-8")
    assert "Duquenne" in text and "SONAR: Sentence-Level Multimodal and Language-Agnostic Representations" in text


def test_bleu_from_hyp_ref_files_with_sacrebleu(tmp_path, capsys):
    refs = ["the cat sat on the mat", "a dog barked at the moon", "rain fell all night long"]
    good = ["the cat sat on the mat", "a dog barked at the moon", "rain fell all night"]
    bad = ["cat mat", "dog", "rain"]
    for name, lines in (("ref.txt", refs), ("good.txt", good), ("bad.txt", bad)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "t.csv").write_text(
        "direction,system,xsim,hyp,ref\n"
        "fra-eng,A,1.0,good.txt,ref.txt\n"
        "fra-eng,B,3.0,bad.txt,ref.txt\n", encoding="utf-8")
    table = read_table(tmp_path / "t.csv")
    expected = sacrebleu.corpus_bleu(good, [refs]).score
    assert table.frame.loc[table.frame["system"] == "A", "bleu"].item() == pytest.approx(expected)
    assert table.bleu_signature.startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert main(["rank", str(tmp_path / "t.csv")]) == 0
    out = capsys.readouterr().out
    assert "BLEU computed with sacrebleu: nrefs:1" in out and "1/1" in out


def test_hyp_ref_line_mismatch_is_reported(tmp_path):
    (tmp_path / "r.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "h.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "t.csv").write_text("direction,system,xsim,hyp,ref\nx-y,A,1,h.txt,r.txt\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="1 lines but its reference"):
        read_table(tmp_path / "t.csv")


ERR_TABLE = (
    "src_lang,tgt_lang,system,family,xsim,xsim++,n,err_causality,err_entity,err_number,err_misaligned,bleu\n"
    # direction deu: A best on BLEU; A has most causality errors but fewest entity errors
    "deu,eng,A,f1,1.0,10.0,100,6,1,2,1,30\n"
    "deu,eng,B,f1,2.0,9.0,100,1,4,2,2,25\n"
    "deu,eng,C,f2,3.0,12.0,100,2,6,,4,20\n"  # empty number count = 0 (the leaderboard omits zeros)
)


def test_xsimpp_restricted_to_error_types(tmp_path):
    (tmp_path / "t.csv").write_text(ERR_TABLE, encoding="utf-8")
    table = read_table(tmp_path / "t.csv", error_type_sets=[["entity"], ["causality", "number"]])
    ent, cn = restricted_name(["entity"]), restricted_name(["causality", "number"])
    assert table.proxies == ["xsim", "xsim++", ent, cn]
    assert table.frame[ent].tolist() == [1.0, 4.0, 6.0]
    assert table.frame[cn].tolist() == [8.0, 3.0, 2.0]
    rep = {p.proxy: p for p in evaluate_table(table, n_bootstrap=50, n_permutations=50).proxies}
    # BLEU order A > B > C. xsim: 1<2<3 -> 3/3. xsim++: 10,9,12 -> A vs B wrong -> 2/3.
    # entity: 1<4<6 -> 3/3. causality+number: 8,3,2 -> all reversed -> 0/3.
    assert [rep[p].accuracy.agreements for p in table.proxies] == [3, 2, 3, 0]
    # families: (A,B) within f1; (A,C), (B,C) across. xsim++ gets (A,B) wrong.
    assert rep["xsim++"].accuracy.within_accuracy == 0.0 and rep["xsim++"].accuracy.across_accuracy == 1.0


def test_cli_all_error_subsets_and_compare(tmp_path, capsys):
    (tmp_path / "t.csv").write_text(ERR_TABLE, encoding="utf-8")
    assert main(["rank", str(tmp_path / "t.csv"), "--all-error-subsets", "--compare", "xsim,xsim++",
                 "--permutations", "100", "--json", str(tmp_path / "r.json")]) == 0
    rep = json.loads((tmp_path / "r.json").read_text())
    assert len(rep["proxies"]) == 2 + 15
    assert rep["comparisons"][0]["a"] == "xsim" and rep["comparisons"][0]["alternative"] == "greater"
    assert rep["settings"]["seed"] == 0


def _record(encoder, metric, lang, value, types=None):
    sig = Signature(encoder, "r1", "f" * 16, "flores200", "devtest", "c" * 64, metric,
                    {"margin": "ratio", "k": 4, "mode": "text"})
    errors = int(round(value * 10))
    return ResultRecord(metric, value, 1000, lang, "eng_Latn", sig, errors=errors, error_types=types or {})


def test_table_from_results_store_and_bleu_file(tmp_path, capsys):
    store = ResultStore(tmp_path / "results")
    # encoder "good" is better everywhere on both proxies; "bad" has no misaligned errors at all
    for lang, (g, b) in {"fra_Latn": (1.0, 2.0), "swh_Latn": (3.0, 6.0), "kea_Latn": (5.0, 9.0)}.items():
        store.put(_record("good", "xsim", lang, g))
        store.put(_record("bad", "xsim", lang, b))
        store.put(_record("good", "xsim++", lang, 5 * g, {"causality": 20, "entity": int(30 * g), "Misaligned": 2}))
        store.put(_record("bad", "xsim++", lang, 5 * b, {"causality": 10, "entity": int(30 * b)}))
    bleu = tmp_path / "bleu.csv"
    # short ISO codes on purpose: fra-eng must match fra_Latn-eng_Latn
    bleu.write_text("encoder,direction,bleu\n"
                    "good,fra-eng,40\nbad,fra-eng,35\n"
                    "good,swh-eng,30\nbad,swh-eng,20\n"
                    "good,deu-eng,30\n", encoding="utf-8")
    table = table_from_results(store.records(), bleu, error_type_sets=[["causality"], ["misaligned"]])
    assert sorted(table.frame["direction"].unique()) == ["fra_Latn-eng_Latn", "swh_Latn-eng_Latn"]
    assert table.proxies == ["xsim", "xsim++", "xsim++[causality]", "xsim++[misaligned]"]
    assert any("no matching results" in n for n in table.notes)
    assert any("have no BLEU" in n for n in table.notes)
    rep = {p.proxy: p.accuracy.accuracy for p in evaluate_table(table, n_bootstrap=20, n_permutations=20).proxies}
    # causality: good 2.0 % vs bad 1.0 % -> ranks bad above good: 0/2; misaligned 0.2 vs 0 -> 0/2
    assert rep == {"xsim": 1.0, "xsim++": 1.0, "xsim++[causality]": 0.0, "xsim++[misaligned]": 0.0}
    assert main(["rank", "--from-results", "--results-dir", str(tmp_path / "results"), "--bleu", str(bleu),
                 "--permutations", "100"]) == 0
    out = capsys.readouterr().out
    assert "PERM-BOTH" in out and "2 direction(s), 2 system(s), 4 rows -> 2 system pairs" in out


def test_bad_tables_are_reported(tmp_path, capsys):
    cases = {
        "dup.csv": ("direction,system,xsim,bleu\nx-y,A,1,2\nx-y,A,2,3\n", "more than once"),
        "nobleu.csv": ("direction,system,xsim\nx-y,A,1\nx-y,B,2\n", "no 'hyp'/'ref'"),
        "nodir.csv": ("system,xsim,bleu\nA,1,2\n", "direction"),
        "noproxy.csv": ("direction,system,bleu\nx-y,A,1\nx-y,B,2\n", "no proxy columns"),
        "nan.csv": ("direction,system,xsim,bleu\nx-y,A,,1\nx-y,B,2,2\n",
                    r"nan.csv: proxy column 'xsim' is missing, not a number or infinite in row 1 \(x-y/A\)"),
    }
    for name, (text, msg) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(BadInputError, match=msg):
            read_table(tmp_path / name)
    (tmp_path / "single.csv").write_text("direction,system,xsim,bleu\na-b,A,1,2\nc-d,B,2,3\n", encoding="utf-8")
    assert main(["rank", str(tmp_path / "single.csv")]) == 2
    assert "no language direction has two systems" in capsys.readouterr().err
    assert main(["rank", str(tmp_path / "missing.csv")]) == 2
    assert main(["rank", "--from-results"]) == 2
