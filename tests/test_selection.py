"""Results found by the names users type (report.select), a rerun without --ci keeping the stored
interval, and store reads that end in one sentence: a FIFO in the folder, a value edited by hand,
outcome indices past the data, a non-numeric interval bound, a damaged creation date, and a record
rewritten while it is read (the reader sees the old pair or the new one)."""

from __future__ import annotations

import json
import os
import threading

import numpy as np
import pytest

from xsimpp.cli import main
from xsimpp.errors import BadInputError, XsimppError
from xsimpp.report.select import Selection, checked, of_encoder, one_table, partnered, split_names
from xsimpp.results import Outcomes, ResultRecord, ResultStore, Signature

SBERT = "sbert:sentence-transformers/all-MiniLM-L6-v2"
DEMO = ["eval", "--encoder", "chargram", "--dataset", "demo", "--no-progress"]


def rec(encoder="chargram", split="devtest", metric="xsim", lang="kea_Latn", fingerprint="f" * 16, wrong=3, n=20,
        **params):
    outcomes = Outcomes.build("error_rate", np.arange(n) >= wrong, np.arange(n))
    sig = Signature(encoder, "r1", fingerprint, "flores200", split, "c" * 64, metric,
                    {"margin": "ratio", "k": 4, "mode": "text", **params})
    return ResultRecord(metric, 100.0 * wrong / n, n, lang, "eng_Latn", sig, errors=wrong, outcomes=outcomes)


def test_split_names_keep_the_commas_of_a_sampled_split():
    assert split_names("devtest[sample=200,seed=3], dev", "split") == ["devtest[sample=200,seed=3]", "dev"]
    with pytest.raises(BadInputError, match="names nothing"):
        split_names(" , ", "split")
    records = [rec(split="devtest"), rec(split="devtest[sample=200,seed=3]")]
    kept = Selection(split="devtest[sample=200,seed=3]").apply(records)
    assert [r.signature.split for r in kept] == ["devtest[sample=200,seed=3]"]


@pytest.mark.parametrize("name", ["sbert", SBERT, f"{SBERT}@r1", f"{SBERT}@r1+cfg.ffffffff",
                                  f"enc:{SBERT}@r1+cfg.ffffffff"])
def test_an_encoder_answers_to_the_names_users_type(name):
    records = [rec(SBERT), rec("chargram")]
    assert [r.signature.encoder for r in of_encoder(records, name, "--encoder")] == [SBERT]


def test_ambiguity_lists_the_flags_to_type():
    records = [rec(SBERT), rec("sbert:other")]
    with pytest.raises(BadInputError, match=f"pick one: --encoder sbert:other or --encoder {SBERT}"):
        of_encoder(records, "sbert", "--encoder")
    two = [rec(split="devtest"), rec(split="devtest[sample=200,seed=3]"), rec(fingerprint="e" * 16)]
    with pytest.raises(BadInputError) as e:
        one_table(two, "the stored results of chargram")
    msg = str(e.value)
    assert "--split 'devtest[sample=200,seed=3]'" in msg and "--encoder chargram@r1+cfg.eeeeeeee" in msg
    # each listed choice picks exactly one kind
    for choice in msg.split("pick one with ")[1].split(" | "):
        flags = dict(zip(choice.split()[::2], (v.strip("'") for v in choice.split()[1::2])))
        kept = Selection(split=flags.get("--split")).apply(two)
        if "--encoder" in flags:
            kept = of_encoder(kept, flags["--encoder"], "--encoder")
        assert len(one_table(kept, "x")) == 1


def test_compare_takes_the_only_partnered_choice_and_says_so():
    base = [rec("a"), rec("a", split="devtest[sample=200,seed=3]")]
    system = [rec("b", wrong=5)]
    b, s, note = partnered(base, system, ("a", "b"))
    assert [r.signature.split for r in b] == ["devtest"] and s == system
    assert "the only ones both a and b have" in note
    with pytest.raises(BadInputError, match="pick one with --split devtest"):
        partnered(base, system + [rec("b", split="devtest[sample=200,seed=3]")], ("a", "b"))
    with pytest.raises(BadInputError, match="name the same encoder"):
        partnered(base, base, ("a", "a2"))


def test_a_rerun_without_ci_keeps_the_stored_interval_and_plot_ignores_ci(isolated_home, tmp_path, capsys):
    assert main([*DEMO, "--langs", "deu,fra", "--ci"]) == 0
    assert main([*DEMO, "--langs", "deu"]) == 0
    stored = ResultStore(isolated_home / "results").records()
    assert len(stored) == 2 and all("ci" in r.signature.params and "ci_low" in r.extra for r in stored)
    assert main(["plot", "xsim", "--dataset", "demo", "--split", "dev", "--out", str(tmp_path / "x.png")]) == 0
    # a rerun that changes the number replaces the record, interval and all
    assert main([*DEMO, "--langs", "deu", "--margin", "absolute"]) == 0
    assert main(["plot", "xsim", "--dataset", "demo", "--out", str(tmp_path / "y.png")]) == 2
    assert "pick one with --setting k=1 | --setting k=4" in capsys.readouterr().err


def _stored(isolated_home):
    assert main([*DEMO, "--langs", "deu"]) == 0
    store = ResultStore(isolated_home / "results")
    return store, store.path(store.records()[0])


def test_a_fifo_named_json_ends_in_one_sentence(isolated_home):
    store, _ = _stored(isolated_home)
    os.mkfifo(store.root / "zz.json")
    with pytest.raises(XsimppError, match="not a regular file"):
        store.records()


def test_an_edited_value_is_refused_not_served(isolated_home, capsys):
    store, path = _stored(isolated_home)
    d = json.loads(path.read_text())
    path.write_text(json.dumps({**d, "value": 1.0}))
    with pytest.raises(XsimppError, match="edited by hand"):
        checked(store, store.records())
    assert main(["leaderboard"]) == 2 and "edited by hand" in capsys.readouterr().err


def test_outcome_indices_past_the_data_end_in_one_sentence(isolated_home, capsys):
    store, path = _stored(isolated_home)
    r = store.load(store.records()[0])
    o = r.outcomes
    chosen = o.chosen.copy()
    chosen[np.flatnonzero(~o.correct)[0]] = -1
    bad = Outcomes(o.statistic, o.correct, chosen, o.gold, o.chosen_score, o.gold_score, o.error_type, o.unit,
                   o.error_types)
    store.outcomes_path(r).write_bytes(bad.to_bytes())
    path.write_text(json.dumps({**json.loads(path.read_text()), "outcomes_digest": bad.digest()}))
    assert main(["explain", "--encoder", "chargram"]) == 2
    err = capsys.readouterr().err
    assert "chosen target -1" in err and "Traceback" not in err


def test_a_non_numeric_interval_bound_and_a_bad_date_end_in_one_sentence(isolated_home, tmp_path, capsys):
    store, path = _stored(isolated_home)
    d = json.loads(path.read_text())
    path.write_text(json.dumps({**d, "extra": {"ci_low": "abc", "ci_high": 1.0}}))
    assert main(["leaderboard", "--html", str(tmp_path / "lb.html")]) == 2
    assert "unreadable" in capsys.readouterr().err
    from xsimpp.integrations.mteb import _created

    r = rec()
    r.created = "not-a-date"
    with pytest.raises(BadInputError, match="no readable creation date"):
        _created(r)


def test_a_reader_sees_the_old_pair_or_the_new_one(tmp_path):
    store = ResultStore(tmp_path)
    a, b = rec(wrong=3), rec(wrong=7)
    store.put(a)
    listed = store.records()[0]
    stop, torn = threading.Event(), []

    def write():
        while not stop.is_set():
            for r in (a, b):
                store.put(r)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(300):
            try:
                now = store.load(listed)
                checked(store, [listed])
            except XsimppError as e:
                torn.append(str(e))
            else:
                assert now.errors in (3, 7)
    finally:
        stop.set()
        writer.join()
    assert not torn, torn[:3]
