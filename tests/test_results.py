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
    assert not ok and diff == ["params"]
    assert a.comparable_with(rec().signature) == (True, [])


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
