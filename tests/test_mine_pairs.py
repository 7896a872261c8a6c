"""`xsimpp mine --pairs-tsv` against a re-statement of LASER's source/mine_bitexts.py ``--mode mine``
(faiss searches both ways, the mean of each side's k similarities, explicit scoring loops, the
greedy one-to-one walk of ``--retrieval max``), on real FLORES sentences and on synthetic vectors.

LASER's similarities are float32 faiss products and xsimpp's are exact, so scores agree to float32
precision and the pairs agree wherever no two candidates are closer than that (checked below)."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from clikit import cli
from conftest import DATA_HINT, missing, shared_data_dir
from xsimpp.cli import main
from xsimpp.engine import margin_knn
from xsimpp.scoring.bucc import select_pairs

MARGINS = {"absolute": lambda a, b: a, "distance": lambda a, b: a - b, "ratio": lambda a, b: a / b}


def laser_mine(x, y, k, margin, retrieval, threshold):
    """(score, source, target) rows as LASER writes them; its fwd/bwd/intersect rows then sorted by
    score (what xsimpp documents doing for every mode), and thresholded the same way."""
    x, y = x.astype(np.float32).copy(), y.astype(np.float32).copy()
    faiss.normalize_L2(x)
    faiss.normalize_L2(y)

    def knn(a, b, kk):
        index = faiss.IndexFlatIP(a.shape[1])
        index.add(b)
        return index.search(a, kk)

    x2y_sim, x2y_ind = knn(x, y, min(len(y), k))
    y2x_sim, y2x_ind = knn(y, x, min(len(x), k))
    x2y_mean, y2x_mean = x2y_sim.mean(axis=1), y2x_sim.mean(axis=1)
    m = MARGINS[margin]

    def score_candidates(a, b, inds, fwd_mean, bwd_mean):
        scores = np.zeros(inds.shape)
        for i in range(scores.shape[0]):
            for j in range(scores.shape[1]):
                t = inds[i, j]
                scores[i, j] = m(a[i].dot(b[t]), (fwd_mean[i] + bwd_mean[t]) / 2)
        return scores

    fwd_scores = score_candidates(x, y, x2y_ind, x2y_mean, y2x_mean)
    bwd_scores = score_candidates(y, x, y2x_ind, y2x_mean, x2y_mean)
    fwd_best = x2y_ind[np.arange(len(x)), fwd_scores.argmax(axis=1)]
    bwd_best = y2x_ind[np.arange(len(y)), bwd_scores.argmax(axis=1)]
    rows = []
    if retrieval == "fwd":
        rows = [(fwd_scores[i].max(), i, j) for i, j in enumerate(fwd_best)]
    elif retrieval == "bwd":
        rows = [(bwd_scores[j].max(), i, j) for j, i in enumerate(bwd_best)]
    elif retrieval == "intersect":
        rows = [(fwd_scores[i].max(), i, j) for i, j in enumerate(fwd_best) if bwd_best[j] == i]
    else:
        indices = np.stack((np.concatenate((np.arange(len(x)), bwd_best)),
                            np.concatenate((fwd_best, np.arange(len(y))))), axis=1)
        scores = np.concatenate((fwd_scores.max(axis=1), bwd_scores.max(axis=1)))
        seen_src, seen_trg = set(), set()
        for n in np.argsort(-scores):
            s, t = indices[n]
            if s not in seen_src and t not in seen_trg:
                seen_src.add(s)
                seen_trg.add(t)
                rows.append((scores[n], s, t))
    rows = sorted({(s, t): v for v, s, t in rows}.items(), key=lambda kv: -kv[1])
    return [(v, s, t) for (s, t), v in rows if v > threshold]


def read_tsv(path):
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        score, src, tgt = line.split("\t")
        rows.append((float(score), src, tgt))
    return rows


def check_equal(ours, ref, src_texts, tgt_texts):
    """Same pairs, same scores to float32 precision, same order up to ties closer than that."""
    assert len(ours) == len(ref)
    assert {(s, t) for _, s, t in ours} == {(src_texts[s], tgt_texts[t]) for _, s, t in ref}
    ours_scores = np.array([v for v, _, _ in ours])
    ref_scores = np.array([v for v, _, _ in ref], dtype=np.float64)
    np.testing.assert_allclose(ours_scores, ref_scores, rtol=2e-6, atol=2e-6)
    assert (np.diff(ours_scores) <= 0).all()  # best first


@pytest.mark.parametrize("retrieval", ["max", "fwd", "bwd", "intersect"])
@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
def test_synthetic_equals_laser(retrieval, margin):
    rng = np.random.default_rng(7)
    y = rng.standard_normal((90, 24)).astype(np.float32)
    x = (y[:70] + 0.6 * rng.standard_normal((70, 24))).astype(np.float32)  # 70 noisy translations of 90
    k = 1 if margin == "absolute" else 4
    ours = select_pairs(margin_knn(x, y, margin=margin, k=k, backward=True), retrieval,
                        threshold=-1.0 if margin == "distance" else 0.0)
    ref = laser_mine(x, y, k, margin, retrieval, -1.0 if margin == "distance" else 0.0)
    src_texts, tgt_texts = [str(i) for i in range(len(x))], [str(j) for j in range(len(y))]
    check_equal([(v, str(s), str(t)) for v, s, t in zip(ours.score, ours.src, ours.tgt)], ref, src_texts, tgt_texts)
    if retrieval in ("max", "intersect"):  # one-to-one
        assert len(set(ours.src.tolist())) == len(ours) == len(set(ours.tgt.tolist()))


def test_threshold_is_strict_and_keeps_order():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((30, 8)), rng.standard_normal((40, 8))
    knn = margin_knn(x, y, k=4, backward=True)
    every = select_pairs(knn, "max", threshold=0.0)
    cut = float(every.score[5])
    kept = select_pairs(knn, "max", threshold=cut)
    assert len(kept) == 5 and np.array_equal(kept.src, every.src[:5])


def test_real_flores_cli_equals_laser(tmp_path, capsys):
    root = shared_data_dir()
    if root is None:
        missing(f"real data not found ({DATA_HINT})", data=True)
    from xsimpp.datasets import Flores200
    from xsimpp.encoders import create_encoder

    ds = Flores200("devtest", data_dir=root)
    # 200 kea sentences against 300 English ones (the 200 translations among 100 others): mining.
    src, tgt = ds.sentences("kea_Latn")[:200], ds.sentences("eng_Latn")[:300]
    enc = create_encoder("chargram")
    x, y = enc.encode(src), enc.encode(tgt)
    for name, arr, lines in (("x", x, src), ("y", y, tgt)):
        np.save(tmp_path / f"{name}.npy", arr)
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out_tsv = tmp_path / "mined.tsv"
    code = main(["mine", "--src-emb", str(tmp_path / "x.npy"), "--tgt-emb", str(tmp_path / "y.npy"),
                 "--out", str(tmp_path / "run"), "--src-text", str(tmp_path / "x.txt"),
                 "--tgt-text", str(tmp_path / "y.txt"), "--pairs-tsv", str(out_tsv), "--threshold", "1.0",
                 "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert f"in {out_tsv}" in capsys.readouterr().out
    ours = read_tsv(out_tsv)
    ref = laser_mine(x, y, 4, "ratio", "max", 1.0)
    check_equal(ours, ref, src, tgt)
    correct = sum(1 for _, s, t in ours if src.index(s) == tgt.index(t))
    assert len(ours) > 100 and correct / len(ours) > 0.9  # chargram mines kea-eng mostly right


@pytest.mark.parametrize("extra, expected", [
    (["--pairs-tsv", "P"], "needs all three"),
    (["--src-text", "X", "--tgt-text", "Y"], "needs all three"),
    (["--pairs-tsv", "P", "--src-text", "SHORT", "--tgt-text", "Y"], "has 3 lines but the source embeddings have 5 rows"),
    (["--pairs-tsv", "P", "--src-text", "TAB", "--tgt-text", "Y"], "line 2 holds a tab"),
    (["--pairs-tsv", "DIR", "--src-text", "X", "--tgt-text", "Y"], "--pairs-tsv"),
    (["--pairs-tsv", "P", "--src-text", "X", "--tgt-text", "Y", "--threshold", "nan"], "--threshold"),
])
def test_bad_pairs_input_refused_before_mining(tmp_path, capsys, extra, expected):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.standard_normal((5, 4)).astype(np.float32))
    np.save(tmp_path / "y.npy", rng.standard_normal((6, 4)).astype(np.float32))
    files = {"X": "a\nb\nc\nd\ne\n", "Y": "1\n2\n3\n4\n5\n6\n", "SHORT": "a\nb\nc\n", "TAB": "a\nb\tc\nd\ne\nf\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "DIR").mkdir()
    argv = [str(tmp_path / a) if a in (*files, "P", "DIR") else a for a in extra]
    code, _, err = cli(capsys, "mine", "--src-emb", tmp_path / "x.npy", "--tgt-emb", tmp_path / "y.npy",
                       "--out", tmp_path / "run", "--no-progress", *argv)
    assert code == 2 and expected in err and "Traceback" not in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "P").exists()  # nothing mined, nothing written
