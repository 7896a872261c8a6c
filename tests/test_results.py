"""Signatures, the results store (update, not duplicate) and the leaderboard CSV."""

import pandas as pd
import pytest

from xsimpp.errors import BadInputError, XsimppError
from xsimpp.results import ResultRecord, ResultStore, Signature, write_leaderboard_csv


def rec(value=5.0, enc="e5-small", lang="kea_Latn", metric="xsim", margin="ratio", checksum="ab" * 32, types=None):
    sig = Signature(enc, "rev1", "f" * 16, "flores200", "devtest", checksum, metric, {"margin": margin, "k": 4, "mode": "text"})
    return ResultRecord(metric, value, 1012, lang, "eng_Latn", sig, errors=int(value * 10.12), error_types=types or {})


def test_signature_string_and_comparability():
    a, b = rec().signature, rec(margin="distance").signature
    s = a.format()
    assert s.startswith("xsimpp:") and "enc:e5-small@rev1" in s and "data:flores200/devtest@abababababab" in s
    assert "margin:ratio" in s and "k:4" in s and "mode:text" in s
    ok, diff = a.comparable_with(b)
    assert not ok and diff == ["margin"]  # the setting that differs, by name
    assert a.comparable_with(rec().signature) == (True, [])
    # how a confidence interval was drawn changes no number: compared and keyed without it
    with_ci = rec()
    with_ci.signature = Signature(**{**a.__dict__, "params": {**a.params, "ci": "bootstrap-percentile:0.95:1000:seed1"}})
    assert a.comparable_with(with_ci.signature) == (True, []) and with_ci.key == rec().key
    assert "ci:bootstrap-percentile:0.95:1000:seed1" in with_ci.signature.format()


def test_outcomes_stored_beside_the_record_and_checked(tmp_path):
    import numpy as np

    from xsimpp.results import Outcomes

    store = ResultStore(tmp_path)
    out = Outcomes.build("error_rate", [True, False, True], [0, 2, 2], None, [1.2, 1.1, 1.3], [1.2, 1.0, 1.3],
                         ["", "entity", ""])
    r = rec(33.33)
    r.n = 3
    r.outcomes = out
    r.__post_init__()
    store.put(r)
    back = next(iter(store.records()))
    assert back.outcomes is None and back.outcomes_digest == out.digest()
    got = store.outcomes(back)
    assert got.type_names() == ["", "entity", ""] and np.array_equal(got.chosen, [0, 2, 2])
    # a tampered file, a missing one, a record stored without outcomes: one sentence each
    path = store.outcomes_path(back)
    altered = Outcomes.build("error_rate", [True, True, True], [0, 1, 2])
    path.write_bytes(altered.to_bytes())
    with pytest.raises(XsimppError, match="does not match its record"):
        store.outcomes(back)
    path.write_bytes(b"PK\x03\x04 cut")
    with pytest.raises(XsimppError, match="unreadable"):
        store.outcomes(back)
    path.unlink()
    with pytest.raises(XsimppError, match="missing"):
        store.outcomes(back)
    with pytest.raises(XsimppError, match="re-run it to get outcomes"):
        store.outcomes(rec())


def test_store_updates_instead_of_duplicating(tmp_path):
    store = ResultStore(tmp_path)
    store.put(rec(5.0))
    store.put(rec(4.0, checksum="cd" * 32))  # same evaluation re-run on fixed data: replaces
    store.put(rec(6.0, margin="distance"))  # different settings: a new row
    values = sorted(r.value for r in store.records())
    assert values == [4.0, 6.0]


def test_roundtrip_and_leaderboard_csv(tmp_path):
    store = ResultStore(tmp_path / "r")
    store.put(rec(3.0, types={"causality": 2, "Misaligned": 1}, metric="xsim++"))
    store.put(rec(2.0, lang="fur_Latn"))
    out = tmp_path / "lb.csv"
    assert write_leaderboard_csv(store.records(), out) == 2
    df = pd.read_csv(out)
    assert list(df.columns[:8]) == ["encoder", "encoder_revision", "dataset", "split", "src_lang", "tgt_lang", "metric", "value"]
    row = df[df.metric == "xsim++"].iloc[0]
    assert row.err_causality == 2 and row.err_misaligned == 1 and row.value == 3.0


def test_empty_and_corrupt_store(tmp_path):
    with pytest.raises(BadInputError, match="no results"):
        write_leaderboard_csv([], tmp_path / "x.csv")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(XsimppError, match="unreadable"):
        ResultStore(tmp_path).records()
