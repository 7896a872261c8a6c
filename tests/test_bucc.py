"""BUCC mining: candidates vs a brute-force reference, thresholds (midpoint, ties, best at the last
candidate, no gold), keep-fraction, cross-validation, Keung filters, duplicates, tune on one split
and apply to another, the loader's strictness, and a small real-data run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from xsimpp.datasets.bucc import Bucc2018, BuccSplit, read_gold, read_id_sentences
from xsimpp.encoders.base import PairScorer, VectorEncoder
from xsimpp.errors import BadInputError
from xsimpp.tasks.bucc import BuccSettings, bucc_rows, evaluate_bucc
from xsimpp.scoring.bucc import (Candidates, ascii_digit_sequences, cross_validate, digit_filter, digit_sequences,
                                 edit_filter,
                                 evaluate_threshold, expand_duplicates, gold_mask, keep_fraction_threshold,
                                 one_to_one, tune_threshold, unify_pairs, unique_texts)
from xsimpp.scoring.bucc import mine_candidates


# ---------------------------------------------------------------------------------------------
# candidates


def brute_candidates(x, y, k, margin="ratio"):
    """The definition, written plainly: LASER's margin over k-NN both ways (k clipped), forward best
    per source and backward best per target, max score per pair."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    s = (x @ y.T).astype(np.float64)
    kf, kb = min(k, len(y)), min(k, len(x))
    ax = np.sort(s, axis=1)[:, ::-1][:, :kf].mean(1)
    ay = np.sort(s.T, axis=1)[:, ::-1][:, :kb].mean(1)
    m = s / ((ax[:, None] + ay[None, :]) / 2) if margin == "ratio" else s - (ax[:, None] + ay[None, :]) / 2
    best: dict[tuple[int, int], float] = {}
    for i in range(len(x)):
        cand = np.argsort(-s[i], kind="stable")[:kf]
        j = cand[np.argmax(m[i, cand])]
        best[(i, j)] = max(best.get((i, j), -np.inf), m[i, j])
    for j in range(len(y)):
        cand = np.argsort(-s[:, j], kind="stable")[:kb]
        i = cand[np.argmax(m[cand, j])]
        best[(i, j)] = max(best.get((i, j), -np.inf), m[i, j])
    return best


@pytest.mark.parametrize("margin", ["ratio", "distance"])
@pytest.mark.parametrize("k", [1, 4, 50])  # 50 > both set sizes: clipped as LASER's mine_bitexts does
def test_candidates_match_brute_force(margin, k):
    rng = np.random.default_rng(k)
    x = rng.normal(size=(25, 6)).astype(np.float32)
    y = np.concatenate([x[:15] + 0.5 * rng.normal(size=(15, 6)), rng.normal(size=(20, 6))]).astype(np.float32)
    c = mine_candidates(x, y, margin=margin, k=k)
    ref = brute_candidates(x, y, k, margin)
    assert set(zip(c.src.tolist(), c.tgt.tolist())) == set(ref)
    # k=50 averages every similarity: the ratio's denominator nearly cancels (scores ~200), which
    # amplifies float32 rounding (LASER's arithmetic) ~100x against this float64 restatement.
    rel = 1e-4 if k == 50 and margin == "ratio" else 1e-5
    for s, t, v in zip(c.src, c.tgt, c.score):
        assert v == pytest.approx(ref[(s, t)], rel=rel, abs=1e-6)
    assert (np.diff(c.score) <= 0).all()
    assert (c.k_fwd, c.k_bwd) == (min(k, 35), min(k, 25))
    assert len(c) <= len(x) + len(y)


def test_k_larger_than_the_set_equals_k_of_the_set():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(3, 4)), rng.normal(size=(7, 4))
    a, b = mine_candidates(x, y, k=100), mine_candidates(x, y, k=7)
    # forward clipped to 7 targets in both; backward to 3 sources in both
    assert a.src.tolist() == b.src.tolist() and a.tgt.tolist() == b.tgt.tolist()
    np.testing.assert_array_equal(a.score, b.score)


def test_pair_found_both_ways_is_kept_once_with_max_score():
    c = unify_pairs(np.array([0, 1, 0]), np.array([2, 1, 2]), np.array([1.0, 0.5, 1.5], dtype=np.float32))
    assert list(zip(c.src.tolist(), c.tgt.tolist(), c.score.tolist())) == [(0, 2, 1.5), (1, 1, 0.5)]


def test_one_to_one_is_greedy_by_score():
    # (0,1) 0.9 wins; (0,2) shares source 0 and (2,1) target 1: both go; (1,2) is free.
    c = unify_pairs(np.array([0, 0, 2, 1]), np.array([1, 2, 1, 2]), np.array([0.9, 0.8, 0.7, 0.6], np.float32))
    o = one_to_one(c)
    assert list(zip(o.src.tolist(), o.tgt.tolist())) == [(0, 1), (1, 2)]
    # equal scores: the (score, source, target) order decides, deterministically
    t = one_to_one(unify_pairs(np.array([1, 0]), np.array([0, 0]), np.array([0.5, 0.5], np.float32)))
    assert list(zip(t.src.tolist(), t.tgt.tolist())) == [(0, 0)]


def test_similarity_matrix_path_equals_vectors():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(12, 5)), rng.normal(size=(9, 5))
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    yn = y / np.linalg.norm(y, axis=1, keepdims=True)
    a, b = mine_candidates(x, y), mine_candidates(similarity=xn @ yn.T)
    assert a.src.tolist() == b.src.tolist() and a.tgt.tolist() == b.tgt.tolist()
    np.testing.assert_allclose(a.score, b.score, rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# thresholds


def xtreme_optimize(scores, gold_flags, n_gold, exact=True):
    """XTREME/LASER bucc_optimize, but returning None where it raises IndexError. ``exact``: F1 as a
    fraction, so that two cuts with equal F1 compare equal (the published float formula can rank
    one of two equal F1s above the other by rounding, which decides the threshold arbitrarily)."""
    from fractions import Fraction

    nextract = ncorrect = 0
    threshold, best_f1 = 0, 0
    for i in range(len(scores)):
        nextract += 1
        if gold_flags[i]:
            ncorrect += 1
        if ncorrect > 0:
            if exact:
                p, r = Fraction(ncorrect, nextract), Fraction(ncorrect, n_gold)
            else:
                p, r = ncorrect / nextract, ncorrect / n_gold
            f1 = 2 * p * r / (p + r)
            if f1 > best_f1:
                best_f1 = f1
                if i + 1 >= len(scores):
                    return None
                threshold = (scores[i] + scores[i + 1]) / 2
    return threshold


def test_threshold_midpoint_matches_reference_on_distinct_scores():
    rng = np.random.default_rng(0)
    for trial in range(50):
        n = 40
        scores = np.sort(rng.random(n))[::-1]
        flags = rng.random(n) < np.linspace(0.9, 0.05, n)
        flags[-1] = False  # keep the best cut away from the end, where the reference breaks
        n_gold = int(flags.sum()) + int(rng.integers(0, 5))
        ref = xtreme_optimize(scores, flags, n_gold)
        got = tune_threshold(scores, flags, n_gold)
        if ref is None or not flags.any():
            continue
        assert got.threshold == pytest.approx(ref, abs=1e-12)
        res = evaluate_threshold(scores, flags, n_gold, got.threshold)
        assert (res.n_extracted, res.n_correct) == (got.n_extracted, got.n_correct)


def test_best_f1_at_the_last_candidate():
    scores = np.array([3.0, 2.0, 1.0])
    flags = np.array([True, True, True])
    assert xtreme_optimize(scores, flags, 3) is None  # the reference raises IndexError here
    r = tune_threshold(scores, flags, 3)
    assert r.threshold == 1.0 and r.f1 == 1.0 and r.n_extracted == 3
    assert evaluate_threshold(scores, flags, 3, r.threshold).n_extracted == 3


def test_hand_computed_threshold_and_prf():
    scores = np.array([1.5, 1.4, 1.2, 1.1, 1.0])
    flags = np.array([True, False, True, False, False])
    r = tune_threshold(scores, flags, 4)
    # cuts: F1 = 2c/(e+g): e=1: 2/5=.4, e=2: 2/6, e=3: 4/7=.571, e=4: 4/8, e=5: 4/9 -> cut after 3
    assert r.threshold == pytest.approx((1.2 + 1.1) / 2)
    assert (r.n_extracted, r.n_correct) == (3, 2)
    assert r.precision == pytest.approx(2 / 3) and r.recall == 0.5 and r.f1 == pytest.approx(4 / 7)


def test_ties_are_never_split():
    # Items 2 and 3 tie at 1.0; the reference would cut between them (F1 peaks after the gold one)
    # with threshold 1.0, which then extracts both. We evaluate cuts only between distinct scores.
    scores = np.array([2.0, 1.0, 1.0, 0.5])
    flags = np.array([True, True, False, False])
    r = tune_threshold(scores, flags, 2)
    assert xtreme_optimize(scores, flags, 2) == 1.0  # claims F1 1.0 at a cut no threshold realises
    assert r.threshold == 0.75 and (r.n_extracted, r.n_correct) == (3, 2) and r.f1 == pytest.approx(0.8)
    applied = evaluate_threshold(scores, flags, 2, r.threshold)
    assert (applied.n_extracted, applied.n_correct) == (r.n_extracted, r.n_correct)


def test_no_gold_among_candidates_extracts_nothing():
    scores = np.array([2.0, 1.0])
    r = tune_threshold(scores, np.array([False, False]), 5)
    assert r.f1 == 0 and r.threshold > 2.0
    assert evaluate_threshold(scores, np.array([False, False]), 5, r.threshold).n_extracted == 0
    with pytest.raises(BadInputError, match="descending"):
        tune_threshold(np.array([1.0, 2.0]), np.array([True, False]), 1)


def test_keep_fraction():
    scores = np.array([5.0, 4.0, 3.0, 3.0, 1.0])
    assert keep_fraction_threshold(scores, 0.1, 10) == 4.5  # keep 1: midpoint of 5 and 4
    assert keep_fraction_threshold(scores, 0.2, 10) == 3.5  # keep 2
    assert keep_fraction_threshold(scores, 0.3, 10) == 3.0  # keep 3, but 3.0 ties: keep both (4)
    assert evaluate_threshold(scores, np.zeros(5, bool), 1, 3.0).n_extracted == 4
    assert keep_fraction_threshold(scores, 1.0, 10) == 1.0  # more than there are: keep all
    assert keep_fraction_threshold(scores, 0.01, 10) > 5.0  # rounds to 0: keep none
    with pytest.raises(BadInputError):
        keep_fraction_threshold(scores, 0, 10)


# ---------------------------------------------------------------------------------------------
# cross-validation


def _toy_candidates(n=60, seed=0):
    rng = np.random.default_rng(seed)
    src = np.arange(n)
    tgt = rng.permutation(n)
    gold = rng.random(n) < 0.5
    score = np.where(gold, 1.0 + rng.random(n), 0.8 + 0.5 * rng.random(n)).astype(np.float32)
    c = unify_pairs(src, tgt, score)
    gs = np.array([s for s, g in zip(src, gold) if g])
    gt = np.array([t for t, g in zip(tgt, gold) if g])
    return c, gold_mask(c, gs, gt), gs


def test_cross_validation_is_seeded_and_counts_every_pair_once():
    c, flags, gs = _toy_candidates()
    a = cross_validate(c, flags, gs, 60, folds=5, seed=3)
    b = cross_validate(c, flags, gs, 60, folds=5, seed=3)
    other = cross_validate(c, flags, gs, 60, folds=5, seed=4)
    assert a == b
    assert a.thresholds != other.thresholds
    assert a.pooled.n_gold == len(gs)
    # every candidate is scored once: extracted count = sum over folds of its test candidates
    manual = 0
    fold_of = np.empty(60, int)
    fold_of[np.random.default_rng(3).permutation(60)] = np.arange(60) % 5
    for f in range(5):
        test = fold_of[c.src] == f
        manual += int((c.score[test] >= a.thresholds[f]).sum())
    assert manual == a.pooled.n_extracted
    with pytest.raises(BadInputError, match="2 folds"):
        cross_validate(c, flags, gs, 60, folds=1)


# ---------------------------------------------------------------------------------------------
# filters and duplicates


def test_digit_sequences_and_filter():
    assert digit_sequences("在２００８年有3個") == {"2008", "3"}
    assert digit_sequences("in 2008 there were 3") == {"2008", "3"}
    assert digit_sequences("no digits") == frozenset()
    src = ["２００８年", "没有数字", "1999年和2000年"]
    tgt = ["in 2008", "no number", "in 2000 and 1999", "in 1999"]
    c = Candidates(np.array([0, 0, 1, 2, 2]), np.array([0, 3, 1, 2, 3]), np.array([5, 4, 3, 2, 1], np.float32))
    assert digit_filter(src, tgt, c).tolist() == [True, False, True, True, False]


def test_edit_filter_drops_near_copies():
    src = ["Barack Obama", "美国总统", "The cat sat."]
    tgt = ["Barack Obama.", "US president", "A dog ran away quickly."]
    c = Candidates(np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([3, 2, 1], np.float32))
    assert edit_filter(src, tgt, c, 0.5).tolist() == [False, True, True]
    assert edit_filter(src, tgt, c, 1.0).tolist() == [True, True, True]  # only identical strings go


def test_duplicates_lose_no_gold_pair():
    texts, inv = unique_texts(["a", "b", "a", "c"])
    assert texts == ["a", "b", "c"] and inv.tolist() == [0, 1, 0, 2]
    c = Candidates(np.array([0, 1]), np.array([1, 0]), np.array([2.0, 1.0], np.float32))
    e = expand_duplicates(c, np.array([0, 1]), inv)  # target text 0 sits at lines 0 and 2
    assert list(zip(e.src.tolist(), e.tgt.tolist(), e.score.tolist())) == [(0, 1, 2.0), (1, 0, 1.0), (1, 2, 1.0)]


# ---------------------------------------------------------------------------------------------
# orchestration on hand-made splits


class TableEncoder(VectorEncoder):
    name = "table"

    def __init__(self, table):
        self.table = table
        self.encoded = []

    @property
    def revision(self):
        return "t1"

    def encode(self, sentences, *, lang=None, progress=None):
        self.encoded += list(sentences)
        return np.array([self.table[s] for s in sentences], dtype=np.float32)


class DotScorer(PairScorer):
    name = "dot"

    def __init__(self, table):
        self.table = table

    @property
    def revision(self):
        return "d1"

    def similarity(self, sources, targets, *, src_lang=None, tgt_lang=None):
        a = np.array([self.table[s] for s in sources], dtype=np.float64)
        b = np.array([self.table[s] for s in targets], dtype=np.float64)
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        b /= np.linalg.norm(b, axis=1, keepdims=True)
        return (a @ b.T).astype(np.float32)


def _split(name, n_pairs, n_noise, seed, table, dup_target=False):
    rng = np.random.default_rng(seed)
    src, tgt, gold = [], [], []
    for i in range(n_pairs):
        v = rng.normal(size=8)
        s, t = f"{name}-s{i}", f"{name}-t{i}"
        table[s], table[t] = v + 0.3 * rng.normal(size=8), v + 0.3 * rng.normal(size=8)
        src.append(s)
        tgt.append(t)
        gold.append((f"zh-{i}", f"en-{i}"))
    for j in range(n_noise):
        s, t = f"{name}-ns{j}", f"{name}-nt{j}"
        table[s], table[t] = rng.normal(size=8), rng.normal(size=8)
        src.append(s)
        tgt.append(t)
    if dup_target:  # the target of gold pair 0 appears again, later in the file, as its own gold
        tgt.append(tgt[0])
        gold.append(("zh-0", f"en-{len(tgt) - 1}"))
    return BuccSplit("zh-en", name, "zh", "en", [f"zh-{i}" for i in range(len(src))], src,
                     [f"en-{i}" for i in range(len(tgt))], tgt, gold)


def test_threshold_tuned_on_one_split_is_applied_unchanged_to_another():
    table: dict = {}
    train = _split("train", 20, 30, 0, table)
    test = _split("test", 15, 40, 1, table)
    enc = TableEncoder(table)
    rep = evaluate_bucc(enc, test, train)
    assert not rep.optimistic and rep.tune_split == "train"
    # the threshold is the one tuned on train's gold ...
    t = rep.mined["train"]
    tuned = tune_threshold(t.cands.score, t.is_gold, t.n_gold)
    assert rep.result.threshold == tuned.threshold
    # ... and test's numbers are what that threshold gives there
    a = rep.mined["test"]
    assert rep.result == evaluate_threshold(a.cands.score, a.is_gold, 15, tuned.threshold)
    rec = rep.records[0]
    assert rec.metric == "bucc_f1" and rec.value == pytest.approx(100 * rep.result.f1)
    assert rec.extra["threshold"] == tuned.threshold and rec.signature.params["threshold"] == "best-f1@train"
    assert 0 < rep.result.f1 < 1

    same = evaluate_bucc(TableEncoder(table), test, test, BuccSettings(cv=3))
    assert same.optimistic and "optimistic" in same.records[0].extra
    assert same.records[1].signature.params["threshold"] == "cv3-seed0"

    pair = evaluate_bucc(DotScorer(table), test, train)
    assert pair.result.n_correct == rep.result.n_correct and pair.result.n_extracted == rep.result.n_extracted


def test_duplicate_target_keeps_both_gold_pairs_and_is_encoded_once():
    table: dict = {}
    data = _split("dup", 10, 10, 3, table, dup_target=True)
    enc = TableEncoder(table)
    rep = evaluate_bucc(enc, data, data)
    assert enc.encoded.count(data.tgt[0]) == 1
    m = rep.mined["dup"]
    pairs = set(zip(m.cands.src.tolist(), m.cands.tgt.tolist()))
    assert (0, 0) in pairs and (0, len(data.tgt) - 1) in pairs  # both lines of the duplicate
    assert m.n_gold == 11
    rows = bucc_rows(rep)
    assert sum(r["status"] in ("TP", "FN") for r in rows) == 11


def test_keep_fraction_and_filters_in_orchestration():
    table: dict = {}
    data = _split("kf", 10, 40, 4, table)
    rep = evaluate_bucc(TableEncoder(table), data, settings=BuccSettings(keep_fraction=0.2))
    assert rep.method == "keep-fraction" and rep.result.n_extracted == 10  # 0.2 x 50 sources
    # The toy sentences are named kf-s<i>, kf-t<j>, kf-ns<i>, kf-nt<j>: the digit filter keeps a
    # pair only when i == j.
    c = rep.mined["kf"].cands
    mismatch = sum(digit_sequences(data.src[s]) != digit_sequences(data.tgt[t]) for s, t in zip(c.src, c.tgt))
    assert mismatch > 0
    f = evaluate_bucc(TableEncoder(table), data,
                      settings=BuccSettings(keep_fraction=0.2, digits=True, max_edit_similarity=0.9))
    assert f.records[0].signature.params["filters"] == "digits-unicode+edit<0.9"
    assert f.mined["kf"].dropped == {"digits": mismatch, "edit": 0}
    fc = f.mined["kf"].cands
    assert len(fc) == len(c) - mismatch
    assert all(data.src[s].split("s")[-1] == data.tgt[t].split("t")[-1] for s, t in zip(fc.src, fc.tgt))
    with pytest.raises(BadInputError, match="threshold"):
        evaluate_bucc(TableEncoder(table), data)
    o = evaluate_bucc(TableEncoder(table), data, settings=BuccSettings(keep_fraction=0.2, one_to_one=True))
    oc = o.mined["kf"].cands
    assert len(set(oc.src.tolist())) == len(oc) == len(set(oc.tgt.tolist())) <= len(c)
    assert o.records[0].signature.params["retrieval"] == "max-1to1"
    assert rep.records[0].signature.params["retrieval"] == "max"  # every setting, always in the signature


def test_no_setting_changes_a_number_without_changing_its_signature():
    """Run the task with each knob changed: records that share a signature share their value."""
    import dataclasses

    table: dict = {}
    data = _split("sg", 12, 40, 5, table)
    tune = _split("sh", 12, 40, 5, table)
    variants = [BuccSettings(), BuccSettings(margin="distance"), BuccSettings(margin="absolute"), BuccSettings(k=2),
                BuccSettings(one_to_one=True), BuccSettings(digits=True), BuccSettings(max_edit_similarity=0.3),
                BuccSettings(keep_fraction=0.1), BuccSettings(keep_fraction=0.3), BuccSettings(cv=2),
                BuccSettings(cv=3), BuccSettings(cv=3, seed=1), BuccSettings(digits="ascii"),
                BuccSettings(protocol="keung"), BuccSettings(ci=0.9, ci_resamples=100, ci_seed=3)]
    assert {f.name for f in dataclasses.fields(BuccSettings)} <= {
        name for v in variants for name, val in dataclasses.asdict(v).items()
        if val != getattr(BuccSettings(), name)}  # every knob is varied at least once
    by_sig: dict = {}
    for st in variants:
        for r in evaluate_bucc(TableEncoder(table), data, tune if st.keep_fraction is None else None, st).records:
            by_sig.setdefault(r.signature.format(), set()).add((r.value, r.extra["precision"]))
    # 11 distinct main records (cv and seed do not change the main number, so those runs share the
    # default's record, and neither does an interval's drawing) + 3 cross-validated ones
    assert len(by_sig) == 14
    assert all(len(v) == 1 for v in by_sig.values())


# ---------------------------------------------------------------------------------------------
# Keung et al.'s protocol against the LASER/XTREME default, on hand-made pairs: one test per reason
# the two extract different pairs (forward-only retrieval, threshold before the filters, ASCII digits)


def _hand_split(src, tgt, gold):
    return BuccSplit("zh-en", "hand", "zh", "en", [f"zh-{i}" for i in range(len(src))], src,
                     [f"en-{i}" for i in range(len(tgt))], tgt, gold)


def _extracted(rep) -> set:
    m = rep.mined[rep.apply_split]
    keep = m.cands.score >= rep.result.threshold
    return {(m.data.src_ids[s], m.data.tgt_ids[t]) for s, t in zip(m.cands.src[keep], m.cands.tgt[keep])}


def test_keung_retrieves_forward_only():
    # "three" lies near 甲's direction: its backward best is 甲, whose forward best is "one". The
    # LASER union keeps (甲, three); Keung et al. pair each source with its own nearest target only.
    e = np.eye(4)
    table = {"甲": e[0], "乙": e[1], "丙": e[2], "one": e[0] + 0.05 * e[3], "two": e[1] + 0.05 * e[3],
             "three": 0.6 * e[0] + 0.8 * e[3]}
    data = _hand_split(["甲", "乙", "丙"], ["one", "two", "three"], [("zh-0", "en-0"), ("zh-1", "en-1")])
    laser = evaluate_bucc(TableEncoder(table), data, settings=BuccSettings(keep_fraction=1.0))
    keung = evaluate_bucc(TableEncoder(table), data, settings=BuccSettings.make(protocol="keung", keep_fraction=1.0))
    assert ("zh-0", "en-2") in _extracted(laser)
    kc = keung.mined["hand"].cands
    assert sorted(kc.src.tolist()) == [0, 1, 2]  # one candidate per source, nothing else
    assert ("zh-0", "en-2") not in _extracted(keung) and _extracted(laser) != _extracted(keung)
    assert keung.records[0].signature.params["retrieval"] == "forward"
    assert keung.records[0].signature.params["protocol"] == "keung"
    assert laser.records[0].signature.params["protocol"] == "laser"


def _ranked_split(src_texts, tgt_texts):
    """Source i and target i share direction e_i, pair i scoring above pair i+1 (asserted by the
    callers through the candidates' order)."""
    n = len(src_texts)
    e = np.eye(n + 1)
    table = {}
    for i, (s, t) in enumerate(zip(src_texts, tgt_texts)):
        table[s] = e[i] + 0.1 * (n - i) * e[n]
        table[t] = e[i] - 0.1 * (n - i) * e[n]
    return table, _hand_split(src_texts, tgt_texts, [(f"zh-{i}", f"en-{i}") for i in range(n)])


def test_keung_thresholds_before_filtering():
    # Pair 0 scores best but its digits differ. Keung: keep the best 2 of 4 (pairs 0, 1), then the
    # filter drops pair 0 -> one pair. Filters first (the LASER-protocol order): pair 0 goes, then
    # the best 2 of what is left -> pairs 1 and 2.
    table, data = _ranked_split(["一九九九年的事", "第二个句子", "第三个句子", "第四个句子"],
                                ["it was 1998", "the second one", "the third one", "the fourth one"])
    keung = evaluate_bucc(TableEncoder(table), data, settings=BuccSettings.make(protocol="keung", keep_fraction=0.5))
    laser = evaluate_bucc(TableEncoder(table), data,
                          settings=BuccSettings(keep_fraction=0.5, digits="ascii", max_edit_similarity=0.5))
    c = keung.mined["hand"].cands
    assert c.src.tolist() == c.tgt.tolist() == [1, 2, 3]  # sorted by score; pair 0 filtered out
    assert keung.mined["hand"].dropped == {"digits": 1, "edit": 0}
    assert _extracted(keung) == {("zh-1", "en-1")}
    assert keung.records[0].extra["above_threshold_before_filters"] == 2  # 0.5 x 4 sources, then the filter
    assert _extracted(laser) == {("zh-1", "en-1"), ("zh-2", "en-2")}
    # with a score threshold (tuned or cross-validated) the order does not matter: same pairs
    tuned = [evaluate_bucc(TableEncoder(table), data, data, dataclasses.replace(st, keep_fraction=None))
             for st in (BuccSettings.make(protocol="keung"), BuccSettings(digits="ascii", max_edit_similarity=0.5))]
    assert _extracted(tuned[0]) == _extracted(tuned[1])


def test_keung_digits_are_ascii_as_published():
    assert ascii_digit_sequences("在２００８年有3個") == {"3"}  # full-width digits are not [0-9]
    assert digit_sequences("在２００８年有3個") == {"2008", "3"}
    table, data = _ranked_split(["在２００８年", "第二个句子"], ["in 2008", "the second one"])
    ascii_ = evaluate_bucc(TableEncoder(table), data, settings=BuccSettings.make(protocol="keung", keep_fraction=1.0))
    unicode_ = evaluate_bucc(TableEncoder(table), data, settings=BuccSettings.make(protocol="keung", keep_fraction=1.0, digits="unicode"))
    laser = evaluate_bucc(TableEncoder(table), data, settings=BuccSettings(keep_fraction=1.0, digits=True))
    assert ascii_.mined["hand"].unfiltered_score[0] > ascii_.mined["hand"].unfiltered_score[1]
    assert _extracted(ascii_) == {("zh-1", "en-1")}
    assert _extracted(unicode_) == _extracted(laser) == {("zh-0", "en-0"), ("zh-1", "en-1")}
    assert ascii_.records[0].signature.params["filters"] == "digits-ascii+edit<0.5"
    assert unicode_.records[0].signature.params["filters"] == "digits-unicode+edit<0.5"


def test_keung_flags_in_the_api_and_cli(real_data, capsys):
    import xsimpp
    from xsimpp.cli import main

    with pytest.raises(BadInputError, match="--protocol keung"):
        xsimpp.bucc("chargram", keung=True, data_dir=real_data)
    with pytest.raises(BadInputError, match="one-to-one"):
        xsimpp.bucc("chargram", protocol="keung", one_to_one=True, data_dir=real_data)
    assert main(["bucc", "--encoder", "chargram", "--keung", "--data-dir", str(real_data)]) == 2
    assert "--digit-filter --edit-filter" in capsys.readouterr().err
    res = xsimpp.bucc("chargram", protocol="keung", sample="300x400", cv=3, cache=False, data_dir=real_data)
    main_rec, cv_rec = res.records
    assert main_rec.signature.params["threshold"] == "keep-fraction=0.02"
    assert cv_rec.signature.params["threshold"] == "cv3-seed0"
    assert main_rec.extra["n_extracted"] <= round(0.02 * 300)  # 2 % of the sources, then the filters
    rc = main(["bucc", "--encoder", "chargram", "--protocol", "keung", "--sample", "300x400", "--digits", "unicode",
               "--no-edit-filter", "--no-cache", "--no-save", "--json", "--data-dir", str(real_data)])
    assert rc == 0
    import json

    rec = json.loads(capsys.readouterr().out.splitlines()[0])
    assert rec["signature"]["params"]["filters"] == "digits-unicode" and rec["extra"]["n_extracted"] <= 6


# ---------------------------------------------------------------------------------------------
# loader


def test_loader_is_strict(tmp_path):
    (tmp_path / "a.zh").write_text("zh-1\t你好\nzh-2\t再见\n", encoding="utf-8")
    assert read_id_sentences(tmp_path / "a.zh") == (["zh-1", "zh-2"], ["你好", "再见"])
    (tmp_path / "b.zh").write_text("zh-1\t你好\nzh-1\t再见\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="twice"):
        read_id_sentences(tmp_path / "b.zh")
    (tmp_path / "c.zh").write_text("zh-1 你好\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="id<TAB>sentence"):
        read_id_sentences(tmp_path / "c.zh")
    (tmp_path / "g").write_text("en-1\tzh-1\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="target id first"):
        read_gold(tmp_path / "g", {"zh-1"}, {"en-1"})
    (tmp_path / "g2").write_text("zh-1\ten-9\nzh-1\ten-1\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="en-9"):
        read_gold(tmp_path / "g2", {"zh-1"}, {"en-1"})
    (tmp_path / "g3").write_text("zh-1\ten-1\nzh-1\ten-1\n", encoding="utf-8")
    assert read_gold(tmp_path / "g3", {"zh-1"}, {"en-1"}) == [("zh-1", "en-1")]


def test_real_data_head_and_sample(real_data, tmp_path, capsys):
    from xsimpp.cli import main
    from xsimpp.results import ResultStore, write_leaderboard_csv

    ds = Bucc2018(real_data)
    assert ds.splits("zh-en") == ["sample"]
    full = ds.load("zh-en", "sample")
    assert (len(full.src), len(full.tgt), len(full.gold)) == (8624, 13589, 257)
    head = full.head(3000)
    assert 0 < len(head.gold) < 257
    sub = full.sample(400, 500, seed=1)
    assert len(sub.src) == 400 and len(sub.tgt) == 500 and len(sub.gold) == 257
    assert sub.src_ids == full.sample(400, 500, seed=1).src_ids  # seeded

    dump = tmp_path / "pairs.jsonl"
    rc = main(["bucc", "--encoder", "chargram", "--pair", "zh-en", "--tune", "sample", "--sample", "300x400", "--seed", "1",
               "--cv", "3", "--digit-filter", "--edit-filter", "--no-progress", "--no-cache",
               "--data-dir", str(real_data), "--dump", str(dump)])
    out = capsys.readouterr().out
    assert rc == 0 and "OPTIMISTIC" in out and "3-fold CV" in out
    recs = ResultStore().records()
    assert {r.metric for r in recs} == {"bucc_f1"} and len(recs) == 2
    assert all(r.signature.params["subset"] == "gold+random:300x400:seed1" for r in recs)
    assert all(r.n == 257 for r in recs)
    assert {"precision", "recall", "threshold"} <= set(recs[0].extra)
    assert write_leaderboard_csv(recs, tmp_path / "lb.csv") == 2
    import json

    rows = [json.loads(ln) for ln in dump.read_text(encoding="utf-8").splitlines()]
    best = next(r for r in recs if r.signature.params["threshold"] == "best-f1@sample")
    assert sum(r["status"] in ("TP", "FN") for r in rows) == best.n  # every gold pair is listed once
    assert sum(r["status"] == "TP" for r in rows) == best.extra["n_correct"]


@pytest.mark.parametrize("dup", [False, True])
def test_outcomes_give_every_f1_and_resample_by_source(dup):
    """Each record's outcomes (extracted pairs + gold pairs left out, per source sentence) give its
    F1 exactly -- tuned, cross-validated, keep-fraction, with a duplicate gold target -- so --ci
    resamples source sentences at the record's threshold(s)."""
    from xsimpp.tasks.intervals import units_of

    table: dict = {}
    data = _split("o", 30, 40, 5, table, dup_target=dup)
    for settings in (BuccSettings(cv=4), BuccSettings(keep_fraction=0.2), BuccSettings(one_to_one=True, cv=3)):
        rep = evaluate_bucc(TableEncoder(table), data, data if settings.keep_fraction is None else None, settings)
        assert len(rep.records) == (2 if settings.cv else 1)
        for rec in rep.records:
            o = rec.outcomes
            assert o.statistic == "pair_f1"
            assert units_of(rec).value() == pytest.approx(rec.value, abs=1e-9)
            assert int(o.correct.sum()) == rec.extra["n_correct"]
            assert int((o.chosen >= 0).sum()) == rec.extra["n_extracted"]
            assert len(units_of(rec)) == len(set(o.unit.tolist())) <= len(data.src)


def test_bootstrap_f1_resamples_sentences_paired_across_systems():
    """F1 = 2c/(e+g) on each resample of the sentences; every system sees the same resample, so two
    identical systems never differ and a system that only adds correct pairs never loses."""
    import numpy as np

    from xsimpp.scoring.bucc import bootstrap_f1

    gold = np.array([1, 1, 1, 1, 0, 0])  # four gold sentences, two without a translation
    a_e, a_c = np.array([1, 1, 0, 1, 1, 0]), np.array([1, 0, 0, 1, 0, 0])
    b_e, b_c = np.array([1, 1, 1, 1, 1, 0]), np.array([1, 0, 1, 1, 0, 0])  # a + one more correct pair
    boot = bootstrap_f1(np.stack([a_e, a_e, b_e]), np.stack([a_c, a_c, b_c]), gold, n_boot=500, seed=1)
    assert boot.shape == (500, 3)
    assert np.array_equal(boot[:, 0], boot[:, 1]) and (boot[:, 2] >= boot[:, 0]).all()
    # one resample by hand: the weights are a multinomial draw of the six sentences
    w = np.random.default_rng(1).multinomial(6, np.full(6, 1 / 6), size=500)[0]
    assert boot[0, 0] == 2 * (w @ a_c) / (w @ a_e + w @ gold)
    full = 2 * a_c.sum() / (a_e.sum() + gold.sum())
    assert abs(boot[:, 0].mean() - full) < 0.05
    with pytest.raises(BadInputError, match="do not match"):
        bootstrap_f1(a_e, a_c, gold[:5])
    with pytest.raises(BadInputError, match="more correct pairs"):
        bootstrap_f1(a_c, a_e, gold)
