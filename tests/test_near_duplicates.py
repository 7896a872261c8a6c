"""Near-duplicates in the mining pool (issue 36): a ground truth that can see what xsim++ measures.
Each kind makes what it says, the pool stays the same below them at every density, and the
records say how many there were."""

from __future__ import annotations

import random

import pytest

from xsimpp.datasets.pool import (Distractors, add_near_duplicates, deletion_variants, natural_neighbours,
                                  NEAR_DUPLICATE_KINDS)
from xsimpp.errors import BadInputError

GOLD = ["The new bridge over the river was opened by the mayor on Monday morning.",
        "Scientists say the glacier has lost a fifth of its ice since the survey began."]
POOL = Distractors(["Tickets are sold at the door.", "He plays the piano."], {"hand": 2}, {"hand": 2})


def _is_one_deletion(line: str, variant: str) -> bool:
    words, kept = line.split(), variant.split()
    cut = len(words) - len(kept)
    if not round(len(words) / 4) <= cut <= len(words) // 2 or cut < 1:
        return False
    return any(words[:i] + words[i + cut:] == kept for i in range(len(words) - cut + 1))


def test_deletion_variants_delete_one_run_of_a_quarter_to_a_half_of_the_words():
    for line in GOLD:
        out = deletion_variants(line, 6, random.Random(0))
        assert len(out) == 6 and len(set(out)) == 6
        assert all(_is_one_deletion(line, v) for v in out), out
        assert out == deletion_variants(line, 6, random.Random(0))  # seeded
    assert deletion_variants("Too short here.", 3, random.Random(0)) == []


def test_natural_neighbours_are_the_closest_lines_by_chrf():
    cands = ["Stock markets fell sharply in Asia.", "The new bridge over the river was opened by the mayor on Friday.",
             "A bridge was opened.", "Scientists say the glacier lost a fifth of its ice.", "He plays the piano."]
    got = natural_neighbours(GOLD, cands, 2)
    assert got[0][0] == cands[1] and got[1][0] == cands[3]
    assert cands[0] not in got[0][:1] and len(got[0]) == 2


@pytest.mark.parametrize("kind", ["deletion"])
def test_the_pool_below_stays_and_every_gold_line_gets_its_density(kind):
    for n in (1, 3):
        out = add_near_duplicates(POOL, GOLD, n, kind, 0, set(), [], [])
        assert out.lines[:2] == POOL.lines  # the same pool at every density, near-duplicates after it
        added = out.lines[2:]
        assert len(added) == n * len(GOLD) and len(set(added)) == len(added)
        assert not set(added) & (set(GOLD) | set(POOL.lines))
        assert out.per_source[f"near-duplicates:{kind}"] == len(added)
        for g in GOLD:  # n of them come from each gold line
            assert sum(_is_one_deletion(g, a) for a in added) == n
    assert add_near_duplicates(POOL, GOLD, 0, "deletion", 0, set(), [], []) is POOL
    # a near-duplicate that is an excluded line (e.g. another gold set's target) is never used
    first = deletion_variants(GOLD[0], 5, random.Random(f"0:{GOLD[0]}"))[0]
    out = add_near_duplicates(POOL, GOLD, 1, "deletion", 0, {first}, [], [])
    assert first not in out.lines and len(out.lines) == 4
    with pytest.raises(BadInputError, match="not one of"):
        add_near_duplicates(POOL, GOLD, 1, "paraphrase", 0, set(), [], [])
    assert NEAR_DUPLICATE_KINDS == ("deletion", "natural")


def test_the_knobs_are_the_mining_tasks_and_the_studys_and_sign_the_records():
    from xsimpp.study.config import PRESETS, mining_knobs, parse_config
    from xsimpp.tasks.mining import MiningSource, source_view

    assert source_view(MiningSource(langs="kea")) == {}  # without them: records signed as before
    src = MiningSource(langs="kea", near_duplicates=5, near_duplicate_kind="natural")
    assert source_view(src) == {"near_duplicates": 5, "near_duplicate_kind": "natural"}
    with pytest.raises(BadInputError):
        MiningSource(langs="kea", near_duplicates=-1)
    with pytest.raises(BadInputError, match="near-duplicate kind"):
        MiningSource(langs="kea", near_duplicate_kind="paraphrase")
    cfg = parse_config(PRESETS["small"].replace("near_duplicates = 0", "near_duplicates = 5"))
    assert mining_knobs(cfg)[0].near_duplicates == 5 and cfg.to_json()["near_duplicates"] == 5
    assert "near_duplicates" not in parse_config(PRESETS["small"]).to_json()  # study.json as before


def test_mining_f1_with_near_duplicates_on_real_data(real_data, capsys, isolated_home):
    """`xsimpp mining-f1 --near-duplicates 2` on a slice: the pool grows by 2 per gold line, the
    records sign it, and chargram (which sees the shared words) loses F1 to them."""
    import json

    from clikit import cli

    base = ["mining-f1", "--encoder", "chargram", "--langs", "kea", "--flores-lines", "40", "--ntrex-lines", "0",
            "--distractors", "300", "--data-dir", str(real_data), "--json", "--no-progress"]
    plain = cli(capsys, *base)
    near = cli(capsys, *base, "--near-duplicates", "2")
    assert plain[0] == near[0] == 0, (plain[2], near[2])
    rec = {json.loads(ln)["metric"]: json.loads(ln) for ln in near[1].splitlines() if ln.startswith("{")}
    was = {json.loads(ln)["metric"]: json.loads(ln) for ln in plain[1].splitlines() if ln.startswith("{")}
    assert "near_duplicates:2" in rec["mining_f1"]["signature_string"]
    assert "near_duplicate" not in was["mining_f1"]["signature_string"]
    assert rec["mining_f1"]["value"] < was["mining_f1"]["value"]
