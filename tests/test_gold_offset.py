"""Mining gold apart from the proxies' lines (issue 36, item 4): `[mining] flores_gold_offset`
moves the FLORES gold past the lines xsim and xsim++ score, so no proxy is scored on the very
sentences of the ground truth; at 0 everything is as before (records, study.json, checksums)."""

from __future__ import annotations

import dataclasses

import pytest

from xsimpp.datasets.base import Bitext
from xsimpp.errors import BadInputError
from xsimpp.tasks.mining import MiningSource, flores_window, source_view

BT = Bitext("flores200", "devtest", "kea_Latn", "eng_Latn", [f"s{i}" for i in range(10)], [f"t{i}" for i in range(10)])


def test_the_window_is_the_lines_asked_for_and_named_so():
    assert flores_window(BT, 0, 4).split == "devtest[:4]" and flores_window(BT, 0, 4).src == ["s0", "s1", "s2", "s3"]
    w = flores_window(BT, 4, 3)
    assert (w.split, w.src, w.tgt) == ("devtest[4:7]", ["s4", "s5", "s6"], ["t4", "t5", "t6"])
    assert flores_window(BT, 7, 0).src == ["s7", "s8", "s9"] and flores_window(BT, 7, 0).split == "devtest[7:10]"
    with pytest.raises(BadInputError, match="has 10 lines, so gold lines 8 to 11"):
        flores_window(BT, 8, 3)


def test_the_knob_is_the_tasks_and_the_studys_and_signs_only_when_set():
    from xsimpp.study.config import PRESETS, mining_knobs, parse_config

    assert source_view(MiningSource(langs="kea")) == {}
    assert source_view(MiningSource(langs="kea", flores_gold_offset=300)) == {"flores_gold_offset": 300}
    with pytest.raises(BadInputError, match="flores-gold-offset"):
        MiningSource(langs="kea", flores_gold_offset=-1)
    cfg = parse_config(PRESETS["checkpoints"].replace("flores_gold_offset = 0", "flores_gold_offset = 300"))
    assert mining_knobs(cfg)[0].flores_gold_offset == 300 and cfg.to_json()["flores_gold_offset"] == 300
    assert "flores_gold_offset" not in parse_config(PRESETS["checkpoints"]).to_json()  # study.json as before
    with pytest.raises(BadInputError, match=r"\[mining\] flores_gold_offset"):
        parse_config(PRESETS["small"].replace("flores_gold_offset = 0", "flores_gold_offset = -3"))


def test_a_study_with_disjoint_gold_on_real_data(real_data, tmp_path, monkeypatch):
    """kea, 20 proxy lines, gold lines 20-39: the proxies score the first 20 lines (xsim the same
    as without the offset), mining the next 20 (its figures and signature differ), and the
    negatives are those of the proxies' lines."""
    from test_study import _config

    from xsimpp.augment import augment_flores_english
    from xsimpp.study.data import load_study_data
    from xsimpp.study.run import run_study

    monkeypatch.setenv("XSIMPP_HOME", str(tmp_path / "home"))

    def number_only(english, split, **kw):  # the real builder, one category, to keep the test short
        return augment_flores_english(english, split, categories=["number"], max_per_category=1, **kw)

    monkeypatch.setattr("xsimpp.augment.augment_flores_english", number_only)
    same = _config(languages=["kea"], flores_lines=20, ntrex_lines=0, tatoeba=False, xsimpp_styles=["strict"],
                   distractors=300, whole_sources=["ntrex128", "oldi-seed"], fill_sources=[], folds=2,
                   xsim_margins=["ratio"], fixed_threshold=1.06)
    apart = dataclasses.replace(same, flores_gold_offset=20)
    d0, d1 = load_study_data(same, real_data), load_study_data(apart, real_data)
    lines = (real_data / "flores200" / "devtest" / "kea_Latn.devtest").read_text(encoding="utf-8").splitlines()
    (l0,), (l1,) = d0.languages, d1.languages
    assert l0.proxy is None and l0.proxy_lines is l0.flores and l0.flores.src == lines[:20]
    assert (l1.proxy.split, l1.proxy.src) == ("devtest[:20]", lines[:20])
    assert (l1.flores.split, l1.flores.src) == ("devtest[20:40]", lines[20:40])
    assert not set(l1.proxy.tgt) & set(l1.flores.tgt)
    for d, ld in ((d0, l0), (d1, l1)):  # negatives of the lines the proxies score, never of the gold
        aug = d.augmented["strict"]
        assert aug.lines and {aug.errtypes[x.strip()]["src"].strip() for x in aug.lines} <= set(ld.proxy_lines.tgt)
    assert d1.augmented["strict"].lines == d0.augmented["strict"].lines
    assert set(l1.proxy.tgt) | set(l1.flores.tgt) <= set(d1.target_sides())
    assert d0.checksum != d1.checksum and d0.distractors.lines == d1.distractors.lines
    r0, r1 = run_study(same, d0, _encoders()), run_study(apart, d1, _encoders())
    for c0, c1 in zip(r0.cells, r1.cells):
        assert c0["xsim[ratio]"] == c1["xsim[ratio]"] and c0["xsim++[strict]"] == c1["xsim++[strict]"]
    assert [c["mining_f1"] for c in r0.cells] != [c["mining_f1"] for c in r1.cells]
    sig = {r.metric: r.signature.format() for r in r1.records}
    assert "flores_gold_offset:20" in sig["mining_f1"] and "flores_gold_offset" not in sig["xsim"]
    assert all("flores_gold_offset" not in r.signature.format() for r in r0.records)
    assert r1.data_summary["languages"][0]["proxy_split"] == "devtest[:20]"


def _encoders():
    from xsimpp.study.config import EncoderSpec
    from xsimpp.study.encoders import build_encoders

    return build_encoders([EncoderSpec("cg", "chargram", family="a"),
                           EncoderSpec("cg-2", "chargram", {"ngram_max": 2}, family="b")], cache=False)
