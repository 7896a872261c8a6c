"""README cases of issue 55 that failed or misled as written: mining-f1's default distractor sources
against --unpaired-sources, and `train onealigner`'s silence and help."""

from __future__ import annotations

import pytest

from tiny_models import build_bert, seed_files
from xsimpp.cli import main
from xsimpp.errors import BadInputError
from xsimpp.tasks.mining import WHOLE_SOURCES, MiningSource


def test_unpaired_sources_leave_flores_dev_out_of_the_default_pool():
    """The README's `mining-f1 ... --unpaired-sources 300` ran into the default whole sources (which
    hold FLORES dev, the unpaired sources' translations): the default now gives way to the flag."""
    assert "flores200-dev" in WHOLE_SOURCES
    assert MiningSource(langs="kea").whole_sources == WHOLE_SOURCES  # no flag: the default pool, as before
    assert MiningSource(langs="kea", unpaired_sources=5).whole_sources == ("ntrex128", "oldi-seed")


@pytest.mark.parametrize("kw, flag", [
    (dict(whole_sources=("flores200-dev", "ntrex128")), "--whole-sources 'ntrex128'"),
    (dict(fill_sources=("tatoeba", "flores200-dev")), "--fill-sources 'tatoeba'"),
])
def test_a_pool_the_user_chose_with_flores_dev_is_refused_with_the_flag_to_type(kw, flag):
    with pytest.raises(BadInputError, match="drop it: " + flag):
        MiningSource(langs="kea", unpaired_sources=5, **kw)


def test_unpaired_sources_run_with_the_default_pool_and_say_so(real_data, capsys):
    code = main(["mining-f1", "--encoder", "chargram", "--langs", "kea", "--unpaired-sources", "10",
                 "--flores-lines", "20", "--ntrex-lines", "0", "--distractors", "100", "--no-progress", "--no-save"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert "note: with --unpaired-sources the pool leaves out FLORES-200 dev" in cap.out


def test_onealigner_says_its_size_and_shows_a_bar(tmp_path, capsys):
    src, tgt = seed_files(tmp_path, 16)
    base = build_bert(tmp_path / "bert")
    code = main(["train", "onealigner", "--src", str(src), "--tgt", str(tgt), "--model", str(base), "--layer", "2",
                 "--out", str(tmp_path / "oa"), "--batch-size", "4", "--steps", "3", "--max-length", "16",
                 "--min-tokens", "0", "--data-dir", str(tmp_path / "no-data")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "training: 3 steps of 4 pairs (0.75 passes over 16 pairs): no training rate measured here yet" in err
    assert "3/3" in err  # the step bar ran to its end


def test_onealigner_estimates_from_the_rate_the_last_run_measured():
    from xsimpp.tasks.cost import record_training, training_line

    record_training("train onealigner|m|batch 64|max-length 100|auto", 10, 40.0)  # 0.25 steps/s
    assert training_line("train onealigner|m|batch 64|max-length 100|auto", 291).startswith("about 19 min at the 0.25 "
                                                                                            "steps/s measured here on")
    assert training_line("train onealigner|m|batch 16|max-length 100|auto", 291).startswith("no training rate")


def test_onealigner_help_shows_the_defaults_it_uses(capsys):
    with pytest.raises(SystemExit):
        main(["train", "onealigner", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for shown in ("(default 64) [64]", "(default 3) [3]", "(default 100) [100]", "(default 5) [5]", "--no-progress"):
        assert shown in text
