"""`xsimpp filter` (Tan & Koehn 2022): rules, LASER's --mode score margin, ranking, budget, streaming, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xsimpp.cli import main
from xsimpp.scoring.filtering import budget_prefix, first_occurrences, rank, token_overlap


class Lookup:
    """A vector 'encoder' reading each sentence's vector from a table (hand-checkable scores)."""

    def __init__(self, table: dict[str, np.ndarray]):
        self.table = table
        self.seen: list[str] = []

    def encode(self, sentences):
        self.seen += list(sentences)
        return np.stack([self.table[s] for s in sentences]).astype(np.float32)


def e(*coords):
    v = np.zeros(5)
    for i, c in coords:
        v[i] = c
    return v


# Line: (French, English, French vector, English vector). e1..e5 are orthogonal unit vectors.
CORPUS = [
    ("Le chat dort sur le canapé.", "The cat sleeps on the sofa.", e((0, 1)), e((0, 1))),                # 1
    ("Nous mangeons du pain frais le matin.", "We eat fresh bread in the morning.",
     e((1, 1)), e((1, .8), (0, .6))),                                                                    # 2
    ("Le chat dort sur le canapé.", "The cat sleeps on the sofa.", e((0, 1)), e((0, 1))),                # 3 duplicate of 1
    ("Paris 2024 !", "paris 2024 !", e((2, 1)), e((2, 1))),                                             # 4 overlap 1.0
    ("Le chien court vite dans le parc.", "Der Hund läuft schnell durch den großen Park und bellt laut.",
     e((3, 1)), e((3, 1))),                                                                              # 5 German "English"
    ("Il pleut depuis trois jours.", "It has been raining for three days.", e((2, 1)), e((2, .6), (3, .8))),  # 6
    ("Le train part à midi.", "My brother lives in a small village near the sea.",
     e((3, 1)), e((1, .6), (4, .8))),                                                                    # 7 mismatch
]
# Scored pairs 1, 2, 6, 7 (n = 4, so k = min(4, n) = 4: each neighbourhood is a whole row / column).
# cos(x_i, y_j), rows x1 x2 x6 x7, columns y1 y2 y6 y7:
#   x1 [1 .6 0 0] mean .40   x2 [0 .8 0 .6] mean .35   x6 [0 0 .6 0] mean .15   x7 [0 0 .8 0] mean .20
#   column means: y1 .25, y2 .35, y6 .35, y7 .15
# ratio margin: s1 = 1 / ((.40+.25)/2) = 3.0769, s2 = .8 / ((.35+.35)/2) = 2.2857,
#               s6 = .6 / ((.15+.35)/2) = 2.4, s7 = 0 / ((.20+.15)/2) = 0
# Ranking 1, 6, 2, 7 (6 beats 2 on margin though its cosine is lower). English tokens 6, 7, 7, 10.
EXPECTED_SCORES = {1: 1 / .325, 2: .8 / .35, 6: .6 / .25, 7: 0.0}
EXPECTED_RANK = {1: 1, 6: 2, 2: 3, 7: 4}


def write_corpus(tmp_path: Path, rows, names=("fr.txt", "en.txt")) -> tuple[Path, Path]:
    src, tgt = tmp_path / names[0], tmp_path / names[1]
    src.write_text("".join(r[0] + "\n" for r in rows), encoding="utf-8")
    tgt.write_text("".join(r[1] + "\n" for r in rows), encoding="utf-8")
    return src, tgt


def read_scores(out: Path) -> list[list[str]]:
    lines = (out / "scores.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "line\tstatus\tscore\trank"
    return [ln.split("\t") for ln in lines[1:]]


def run_filter(tmp_path, budget, **kw):
    import xsimpp

    tmp_path.mkdir(exist_ok=True)
    src, tgt = write_corpus(tmp_path, CORPUS)
    table = {r[0]: r[2] for r in CORPUS} | {r[1]: r[3] for r in CORPUS}
    enc = Lookup(table)
    out = tmp_path / "out"
    rep = xsimpp.filter_corpus(src, tgt, out, enc, src_lang="fra", tgt_lang="eng", budget=budget, cache=False,
                                   **kw)
    return rep, out, enc


@pytest.mark.parametrize("budget,kept", [(None, [1, 2, 6, 7]), ("14", [1, 6]), ("13", [1, 6]), ("12", [1]),
                                         ("5", []), ("1k", [1, 2, 6, 7])])
def test_hand_made_corpus_rules_ranking_and_budget(tmp_path, budget, kept):
    rep, out, enc = run_filter(tmp_path, budget)
    rows = read_scores(out)
    status = {int(r[0]): r[1] for r in rows}
    assert status[3] == "duplicate" and status[4] == "overlap" and status[5] == "language-tgt"
    for line in (1, 2, 6, 7):
        assert status[line] == ("kept" if line in kept else "over-budget")
        assert float(rows[line - 1][2]) == pytest.approx(EXPECTED_SCORES[line], rel=1e-6, abs=1e-9)
        assert int(rows[line - 1][3]) == EXPECTED_RANK[line]
    for line in (3, 4, 5):
        assert rows[line - 1][2:] == ["", ""]
    # Kept pairs in corpus order, both sides line-aligned.
    assert (out / "kept.fra_Latn").read_text(encoding="utf-8") == "".join(CORPUS[i - 1][0] + "\n" for i in kept)
    assert (out / "kept.eng_Latn").read_text(encoding="utf-8") == "".join(CORPUS[i - 1][1] + "\n" for i in kept)
    # Dropped pairs were never encoded: they are in no one's neighbourhood.
    assert set(enc.seen) == {CORPUS[i - 1][0] for i in (1, 2, 6, 7)} | {CORPUS[i - 1][1] for i in (1, 2, 6, 7)}
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    tokens = {1: 6, 2: 7, 6: 7, 7: 10}
    assert report["dropped"] == {"duplicate": 1, "overlap > 0.9": 1, "wrong language (fra_Latn side)": 0,
                                 "wrong language (eng_Latn side)": 1, "over budget": 4 - len(kept)}
    assert report["lines"] == 7 and report["scored"] == 4 and report["kept"] == len(kept)
    assert report["tokens_scored"] == 30 and report["tokens_kept"] == sum(tokens[i] for i in kept)
    assert rep.kept == len(kept)


def test_chunked_streaming_gives_the_same_outputs(tmp_path):
    _, out_a, _ = run_filter(tmp_path / "a", "14")
    _, out_b, _ = run_filter(tmp_path / "b", "14", chunk_lines=2, max_memory="64MB")
    for name in ("kept.fra_Latn", "kept.eng_Latn", "scores.tsv"):
        assert (out_a / name).read_bytes() == (out_b / name).read_bytes()


def test_scores_equal_laser_mine_bitexts_score_mode(tmp_path):
    """A re-statement of LASER's `mine_bitexts.py --mode score` (faiss IndexFlatIP kNN both ways,
    ratio margin, k=4) on random vectors gives the same score for every pair."""
    faiss = pytest.importorskip("faiss")
    import xsimpp

    rng = np.random.default_rng(0)
    n, d = 60, 16
    x, y = rng.standard_normal((n, d)).astype(np.float32), rng.standard_normal((n, d)).astype(np.float32)
    y[:40] += 1.5 * x[:40]  # 40 true pairs, 20 noise
    rows = [(f"phrase source {i}", f"target phrase {i}") for i in range(n)]
    src, tgt = write_corpus(tmp_path, rows)
    table = {s: x[i] for i, (s, _) in enumerate(rows)} | {t: y[i] for i, (_, t) in enumerate(rows)}
    out = tmp_path / "out"
    xsimpp.filter_corpus(src, tgt, out, Lookup(table), src_lang="fra", tgt_lang="eng", cache=False, lid="none")
    got = np.array([float(r[2]) for r in read_scores(out)])

    xn, yn = x.copy(), y.copy()
    faiss.normalize_L2(xn)
    faiss.normalize_L2(yn)

    def knn(a, b, k):
        idx = faiss.IndexFlatIP(d)
        idx.add(b)
        return idx.search(a, k)

    x2y_mean = knn(xn, yn, 4)[0].mean(axis=1)
    y2x_mean = knn(yn, xn, 4)[0].mean(axis=1)
    want = np.array([xn[i].dot(yn[i]) / ((x2y_mean[i] + y2x_mean[i]) / 2) for i in range(n)])
    np.testing.assert_allclose(got, want, rtol=2e-6)
    ranks = [int(r[3]) for r in read_scores(out)]
    assert np.sum(np.array(ranks[:40]) <= 40) >= 36  # the 40 true pairs rank (almost all) on top


def test_overlap_definition():
    assert token_overlap("Paris 2024 !", "paris 2024 !") == 1.0
    assert token_overlap("a b c d e f g h i j", "a b c d e f g h i k") == 0.9  # 9 of 10: not > 0.9, kept
    assert token_overlap("a a b", "a b b") == pytest.approx(2 / 3)  # multisets: {a, b} in common
    assert token_overlap("one two", "one two three four") == 0.5  # divided by the longer side
    assert token_overlap("x", "y") == 0.0


def test_first_occurrences_rank_and_budget():
    h = np.array([[1, 2], [3, 4], [1, 2], [1, 3], [3, 4]], np.uint64)
    assert first_occurrences(h).tolist() == [True, True, False, True, False]
    assert rank(np.array([0.5, 2.0, 0.5, 3.0])).tolist() == [3, 1, 0, 2]  # ties: earlier line first
    order = np.array([3, 1, 0, 2])
    counts = np.array([5, 4, 1, 3])
    assert budget_prefix(order, counts, 7) == 2  # 3 + 4 = 7 <= 7; + 5 = 12 > 7
    assert budget_prefix(order, counts, 6) == 1
    assert budget_prefix(order, counts, 2) == 0  # the best pair alone overshoots: nothing kept, no skipping
    assert budget_prefix(order, counts, 100) == 4


def test_language_rules_both_sides_and_reject(tmp_path):
    """--lid both: an identifier-known side must be identified as its language; a side it does not
    know (Friulian) is checked only against --reject-lang at the confidence given."""
    import xsimpp

    rows = [
        ("Il gjat al duar sul divan di cjase.", "The cat is sleeping on the sofa at home."),
        ("Il governo ha approvato la nuova legge sulla scuola pubblica italiana.",
         "The government approved the new law on Italian public schools."),
        ("O vin mangjât pan e formadi te ostarie.", "We ate bread and cheese at the inn."),
    ]
    src, tgt = write_corpus(tmp_path, rows, ("fur.txt", "en.txt"))
    common = dict(src_lang="fur", tgt_lang="eng", encoder="chargram", cache=False)
    rep = xsimpp.filter_corpus(src, tgt, tmp_path / "a", lid="both", reject_langs=("ita",), **common)
    assert [r[1] for r in read_scores(tmp_path / "a")] == ["kept", "language-src", "kept"]
    assert "unknown to py3langid" in rep.lid_checks["fur_Latn"]
    rep = xsimpp.filter_corpus(src, tgt, tmp_path / "b", lid="both", **common)
    assert [r[1] for r in read_scores(tmp_path / "b")] == ["kept"] * 3
    assert rep.lid_checks["fur_Latn"] == "not checked"


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case,message", [
    ("mismatch", "has 2 lines but"),
    ("empty", "line 2 is empty"),
    ("utf8", "line 2 is not valid UTF-8"),
    ("lang", "Unknown language code 'xx1'"),
    ("budget", "--budget takes a token count"),
    ("reject", "needs --lid both"),
    ("nonenglish", "neither side is English"),
])
def test_bad_input_is_one_sentence_exit_2(tmp_path, capsys, case, message):
    src, tgt = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_bytes(b"one line\nsecond line\n")
    tgt.write_bytes(b"erste Zeile\nzweite Zeile\n")
    args = ["filter", "--src", str(src), "--tgt", str(tgt), "--src-lang", "deu", "--tgt-lang", "eng",
            "--out", str(tmp_path / "out"), "--encoder", "chargram", "--no-cache", "--no-progress"]
    if case == "mismatch":
        tgt.write_bytes(b"erste Zeile\nzweite Zeile\ndritte\n")
    elif case == "empty":
        tgt.write_bytes(b"erste Zeile\n  \n")
    elif case == "utf8":
        src.write_bytes(b"one line\nsec\xffond\n")
    elif case == "lang":
        args[args.index("deu")] = "xx1"
    elif case == "budget":
        args += ["--budget", "two million"]
    elif case == "reject":
        args += ["--reject-lang", "ita"]
    elif case == "nonenglish":
        args[args.index("eng")] = "fra"
        args += ["--budget", "2M"]
    code, out, err = cli(capsys, *args)
    assert code == 2, err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_cli_writes_folder_and_prints_report(tmp_path, capsys):
    src, tgt = write_corpus(tmp_path, [(r[0], r[1]) for r in CORPUS])
    code, out, err = cli(capsys, "filter", "--src", str(src), "--tgt", str(tgt), "--src-lang", "fr", "--tgt-lang",
                         "en", "--out", str(tmp_path / "o"), "--encoder", "chargram", "--budget", "2M",
                         "--no-progress")
    assert code == 0, err
    assert "7 pairs; dropped 1 duplicate, 1 overlap > 0.9" in out
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["kept.eng_Latn", "kept.fra_Latn", "report.json",
                                                                  "scores.tsv"]
