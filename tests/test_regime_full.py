"""benchmarks/regime_full.py (issue 54): the 1 012-line study's configuration keeps the gold apart
from every proxy line and the checkpoints' training, and its analysis -- ties read three ways, tests
over languages, the gold bootstrapped into resolved and unresolved pairs -- gives what a hand count
gives on a seed folder written here."""

from __future__ import annotations

import gzip
import json
import runpy
from itertools import combinations
from pathlib import Path

import numpy as np

from conftest import assert_section_is

ROOT = Path(__file__).resolve().parent.parent
FULL = runpy.run_path(str(ROOT / "benchmarks" / "regime_full.py"))
REGIME = FULL["REGIME"]
PROXIES = FULL["R"].PROXIES


def test_the_configuration_keeps_the_gold_apart():
    from xsimpp.study.config import check_config, parse_config
    from xsimpp.study.proxies import proxy_names
    from xsimpp.study.run import dev_lines_used

    cfg = parse_config(FULL["config_text"](1))
    check_config(cfg)
    assert cfg.flores_lines == 0 and cfg.seed == 1  # the proxies: all 1 012 devtest lines; the seed draws the test side
    assert (cfg.flores_gold_split, cfg.flores_gold_offset, cfg.flores_gold_lines) == ("dev", 300, 300)
    assert (cfg.ntrex_sample, cfg.ntrex_lines, cfg.tatoeba_gold, cfg.tatoeba) == ("seeded", 500, True, False)
    # every dev line the study mines (unpaired 0-299, gold 300-599) was held out of training
    assert dev_lines_used(cfg)[0] == FULL["HOLD_OUT"] == 600 and cfg.unpaired_sources == 300
    family = [e for e in cfg.encoders if e.family == REGIME.family]
    assert [e.options.get("model") for e in family[1:]] == [f"regime-full-e5-seed1/step-{s:05d}"
                                                             for s in range(30, 241, 30)]
    assert all(e.options.get("path") == "openvino-float32" for e in cfg.encoders if e.name == "hf")
    assert set(PROXIES) <= set(proxy_names(cfg, cfg.xsimpp_styles))


SYSTEMS = [REGIME.start_label] + [f"e5-step-{s:05d}" for s in range(30, 241, 30)]


# the start cached (encodes nothing), two checkpoints at 200 and 300 sentences/s, one under 1 000
# sentences (left out of the rate), and an encoder of another family
COSTS = [{"encoder": SYSTEMS[0], "encoded": 0, "requested": 3000, "encode_seconds": 0.5},
         {"encoder": SYSTEMS[1], "encoded": 3000, "requested": 3000, "encode_seconds": 15.0},
         {"encoder": SYSTEMS[2], "encoded": 3000, "requested": 3000, "encode_seconds": 10.0},
         {"encoder": SYSTEMS[3], "encoded": 500, "requested": 3000, "encode_seconds": 50.0},
         {"encoder": "use-m3", "encoded": 3000, "requested": 3000, "encode_seconds": 1.0}]


def _fake_seed(folder: Path, rng) -> dict:
    """A seed folder as `regime_full.py run` leaves it: fao's checkpoints find more gold the later
    they are (every pair resolved), kea's all find the same (none resolved)."""
    import pandas as pd

    rows, tables = [], []
    n_gold, n_unpaired = 200, 50
    tags = ["flores"] * n_gold + ["unpaired"] * n_unpaired
    gold = [1] * n_gold + [0] * n_unpaired
    for lang in ("fao_Latn", "kea_Latn"):
        for k, s in enumerate(SYSTEMS + ["use-m3"]):
            found = 100 + 10 * k if lang == "fao_Latn" else 150
            correct = [1] * found + [0] * (n_gold - found) + [0] * n_unpaired
            extracted = [1] * n_gold + [1] * 5 + [0] * (n_unpaired - 5)
            f1 = 100 * 2 * sum(correct) / (sum(extracted) + sum(gold))
            row = {"system": s, "family": REGIME.family if s in SYSTEMS else "use", "lang": lang,
                   "direction": f"{lang}-eng_Latn", "mining_f1": f1, "mining_f1_flores": f1,
                   "mining_f1_ntrex": float("nan"), "mining_f1_tatoeba": float("nan")}
            for p in PROXIES:
                row[p] = float(rng.integers(0, 4))  # few values: ties happen
            rows.append(row)
            views = {v: {"extracted": extracted, "correct": correct} for v in ("mining_f1", "mining_f1_flores")}
            tables.append({"system": s, "lang": lang, "tags": tags, "gold": gold, "views": views})
    sub = folder / "full"
    sub.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(sub / "cells.csv", index=False, lineterminator="\n")
    (sub / "study.json").write_text(json.dumps({"config": {"bootstrap": 50, "permutations": 50, "seed": 0},
                                                "proxies": PROXIES, "data": {}, "costs": COSTS}))
    (sub / "mining_outcomes.json.gz").write_bytes(gzip.compress(json.dumps({"cells": tables}).encode()))
    (folder / "timing.json").write_text(json.dumps({"train": {"seconds": 2.0}, "study": {"seconds": 3.0}}))
    return {(r["lang"], r["system"]): r for r in rows}


def test_analysis_counts_resolved_pairs_and_agreement_by_hand(tmp_path):
    cells = _fake_seed(tmp_path / "seed0", np.random.default_rng(4))
    res = FULL["analyse"](tmp_path)
    (seed,) = res["seeds"]
    t = seed["truths"]["mining_f1_flores"]
    # fao: 10 more gold sentences found per checkpoint of 200 -> every one of its 36 pairs resolved;
    # kea: identical outcomes -> none
    assert t["gold"] == {"pairs": 72, "resolved": 36, "median_gap": t["gold"]["median_gap"]}
    for p in PROXIES:
        agree = half = 0.0
        for a, b in combinations(SYSTEMS, 2):  # b is later, so better by the gold
            d = cells[("fao_Latn", a)][p] - cells[("fao_Latn", b)][p]  # > 0: the proxy puts b first too
            agree += d > 0
            half += 1.0 if d > 0 else 0.5 if d == 0 else 0.0
        got = t["resolved"][p]
        assert got["pairs"] == 36 and got["as_errors"] == agree / 36 and got["as_half"] == half / 36, p
    assert "as_errors" not in t["resolved_sign_flip"]  # one language with resolved pairs: no test over languages
    # the tie view is regime_ties' over the within-model cells: 2 languages x 36 pairs
    assert t["ties"]["proxies"][PROXIES[0]]["pairs"] == 72 and t["ties"]["languages"] == 2
    assert seed["encoded"] == 9500 and seed["requested"] == 15000
    assert seed["e5_rate"] == {"encoders": 2, "median": 250.0}
    assert all(("p_bh" in f) == (f["p"] == f["p"]) for f in FULL["table_ps"](res))  # NaN: under two languages
    table = "\n".join(FULL["markdown"](res))
    assert "| FLORES dev gold | 0 | 72 |" in table and "36 / 72" in table
    assert "| 0 | 2 | 3 | 9500 / 15000 | 250.0 (2) |" in table


PAGE = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")


def test_the_docs_tables_are_what_the_committed_seeds_give():
    res = FULL["analyse"](FULL["RESULTS"])
    assert_section_is(PAGE, "<!-- regime-full -->", "<!-- /regime-full -->", FULL["markdown"](res))


def _span(values, fmt) -> str:
    """``lo–hi`` over the seeds (one value when they agree), each as ``fmt`` writes it."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


def reading_fragments(res: dict) -> list[str]:
    """Every number the reading quotes, as it quotes it (ranges over the committed seeds)."""
    pct = FULL["R"]._pct
    seeds = res["seeds"]
    a, b = "xsim[ratio]", "xsim++[strict]"

    def truth(name):
        return [s["truths"][name] for s in seeds]

    def span(ts, proxy, key):
        return _span([t["ties"]["proxies"][proxy][key] for t in ts], pct)

    def pspan(fs):
        return _span([f["p"] for f in fs], lambda x: f"{x:.3f}")

    flores, ntrex, tatoeba = truth("mining_f1_flores"), truth("mining_f1_ntrex"), truth("mining_f1_tatoeba")
    frags = [f"xsim[ratio] ties {span(flores, a, 'tie_share')} % of the {flores[0]['ties']['proxies'][a]['pairs']} "
             f"within-model pairs",
             f"xsim++[strict] {span(flores, b, 'tie_share')} %.",
             f"{span(flores, a, 'as_errors')} / {span(flores, b, 'as_errors')} % of the pairs with ties as errors and "
             f"{span(flores, a, 'as_half')} / {span(flores, b, 'as_half')} % with ties as ½",
             f"p {pspan([t['ties']['sign_flip']['as_errors'] for t in flores])} / "
             f"{pspan([t['ties']['sign_flip']['as_half'] for t in flores])}"]
    bh = [f["p_bh"] for f in FULL["table_ps"](res) if "p_bh" in f]
    frags.append(f"{_span(bh, lambda x: f'{x:.3f}')} after Benjamini-Hochberg over the {len(bh)} p-values")
    lead = max(v["as_half"] - t["ties"]["proxies"][a]["as_half"] for t in flores for v in t["ties"]["proxies"].values())
    frags.append(f"by more than {100 * lead:.1f} points")
    gap = max(abs(t["ties"]["proxies"][b]["as_half"] - t["ties"]["proxies"][a]["as_half"]) for t in flores)
    frags.append(f"within {100 * gap:.1f} points of each other in every seed")
    frags.append(f"the only clearly worse one ({span(flores, 'xsim++[strict:causality+entity+number]', 'as_half')})")
    frags.append(f"{span(ntrex, a, 'as_half')} / {span(ntrex, b, 'as_half')} with ties as ½ "
                 f"(p {pspan([t['ties']['sign_flip']['as_half'] for t in ntrex])})")
    frags.append(f"{span(tatoeba, a, 'as_half')} / {span(tatoeba, b, 'as_half')}")
    for name, ts in (("NTREX", ntrex), ("Tatoeba", tatoeba)):
        firsts = [max(t["ties"]["proxies"], key=lambda p, t=t: t["ties"]["proxies"][p]["as_half"]) for t in ts]
        frags.append(f"first on {name} by seed: {', '.join(firsts)}")
    frags.append(f"is {_span([t['gold']['median_gap'] for t in flores], lambda x: f'{100 * x:.2f}')} points")
    g = [[t["gold"] for t in ts] for ts in (flores, ntrex, tatoeba)]

    def counts(gs):
        return f"{', '.join(str(x['resolved']) for x in gs)} of {gs[0]['pairs']}"

    frags.append(f"resolves {counts(g[0])} pairs against the FLORES dev gold ({counts(g[1])} against NTREX, "
                 f"{counts(g[2])} against Tatoeba)")
    ra = _span([t["resolved"][a]["as_errors"] for t in flores], pct)
    rb = _span([t["resolved"][b]["as_errors"] for t in flores], pct)
    frags.append(f"({ra} / {rb} % with ties as errors, p "
                 f"{pspan([t['resolved_sign_flip']['as_errors'] for t in flores])})")
    def th(n) -> str:  # thousands apart by a space, as the docs write them
        return f"{n:,.0f}".replace(",", " ")

    for s in seeds:
        t = s["timing"]
        frags.append(f"seed {s['seed']}: training {t['train']['seconds']:.0f} s, the study {th(t['study']['seconds'])} s "
                     f"({th(s['encoded'])} of {th(s['requested'])} sentences encoded; e5 at "
                     f"{s['e5_rate']['median']:.1f} sentences/s)")
    frags.append(f"peak RSS {max(s['timing']['study']['peak_rss_gib'] for s in seeds):.2f} GiB")
    return frags


def test_the_reading_quotes_what_the_committed_seeds_give():
    res = FULL["analyse"](FULL["RESULTS"])
    reading = PAGE.split("<!-- /regime-full -->")[1].split("## Training")[0].replace("\n  ", " ")
    assert all(p["epsilon"] == 0 for s in res["seeds"] for t in s["truths"].values() for p in t["ties"]["proxies"].values())
    missing = [f for f in reading_fragments(res) if f.lower() not in reading.lower()]
    assert missing == [], missing
    # the cost bullet's per-encoder figures, from each seed's study.json
    costs = {s["seed"]: {c["encoder"]: c for c in json.loads((FULL["RESULTS"] / f"seed{s['seed']}" / "full" /
                                                              "study.json").read_text(encoding="utf-8"))["costs"]}
             for s in res["seeds"]}
    last = costs[max(costs)]
    ckpt = [c["encode_seconds"] for k, c in last.items() if k.startswith("e5-step-") and k != REGIME.start_label]
    assert f"({min(ckpt):.0f}-{max(ckpt):.0f} s for {last['e5-step-00030']['encoded']:,} sentences each".replace(",", " ") \
        in reading
    t = res["seeds"][-1]["timing"]
    assert f": {(t['train']['seconds'] + t['study']['seconds']) / 60:.0f} min a seed." in reading
    assert f"but for the {last['minilm']['encoded']:,} lines this seed's draw adds".replace(",", " ") in reading
    assert (f"seed 0's {costs[0]['use-m3']['encode_seconds']:.0f} s for USE-m3 and "
            f"{costs[0]['minilm']['encode_seconds']:.0f} s for MiniLM") in reading
    # the 300-line ties it compares with: the table above (itself re-derived by tests/test_regime_ties.py)
    ties300 = [float(row.split("|")[3].split("/")[0]) for row in PAGE.splitlines()
               if row.startswith("| ") and "| with the start, 360 |" in row][:3]
    assert f"({_span(ties300, lambda x: f'{x:.1f}')} % in the three seeds of the 300-line study" in reading
    speed = json.loads((ROOT / "benchmarks" / "results" / "e5_paths" / "hf_checkpoint" /
                        "speed_full-seed0-step-00240_amd_2cores.json").read_text(encoding="utf-8"))["speed"]
    assert (f"encodes {speed['sentences']:,} FLORES lines alone at {speed['paths']['openvino-float32']['sent_per_s']} "
            "sentences/s").replace(",", " ") in reading
