"""Every `xsimpp ...` line of README.md and docs/getting-started.md runs, in order, in one fresh home
per page, so the README cannot drift from the code again (issue 55).

The lines are read from the pages' fenced bash blocks, so a new line is picked up by itself; each
line must have a rule in ``RULES`` (keyed by the exact line): run it as written, run it on a small
slice (the rule names the flags it adds or the values it shrinks, and only flags in ``SLICE_FLAGS``
may be touched, so a rule cannot change what a line does, only how much), or excuse it with a
reason. A line with no rule fails the test, and so does a rule whose line is gone.

``XSIMPP_README_TIMINGS=FILE`` writes each line's seconds there (benchmarks/results/readme_costs.json
is made this way, and docs/performance.md quotes it: ``test_the_costs_table_quotes_the_measurement``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, missing, shared_data_dir
from xsimpp.cli import main

PAGES = ("README.md", "docs/getting-started.md")
COSTS = REPO / "benchmarks" / "results" / "readme_costs.json"
COSTS_TABLE_PAGE = REPO / "docs" / "performance.md"

# The only flags a rule may add or shrink: sizes, steps and the quiet flag, never what is measured.
SLICE_FLAGS = {"--limit", "--sample", "--flores-lines", "--ntrex-lines", "--distractors", "--unpaired-sources",
               "--near-duplicates", "--steps", "--save-every", "--batch-size", "--max-length", "--hold-out-dev",
               "--no-progress", "--print-config"}
# The heavy encoder, swapped for the weight-free one where the line's point is the command, not the
# model (the main job's exact line runs with e5-small in .ci/run, from the installed wheel).
ENCODER_SWAP = {"e5-small": "chargram"}
# Likewise a training line's base model: a tiny random BERT in the real format (tests/tiny_models.py),
# its last layer, so the line trains, saves and reloads in seconds instead of loading e5-small.
TINY_BASE = ("--model", "{tiny_bert}", "--layer", "2")

NEEDS_NETWORK = ("downloads from the source's server: CI is offline, and the real archives' sha256 cannot be "
                 "mirrored locally; tests/test_download.py runs the same code against a local server")


@dataclass(frozen=True)
class Rule:
    """How the test runs one line: ``set`` replaces flag values (the flag must be in the line),
    ``add`` appends flags, ``swap`` swaps the encoder, ``tiny_base`` trains the tiny base model,
    ``files`` makes the placeholder files the line names (see ``_placeholders``); ``excuse``
    instead: not run, and why."""

    set: dict = field(default_factory=dict)
    add: tuple = ()
    swap: bool = False
    tiny_base: bool = False
    files: str = ""
    excuse: str = ""


SMALL_MINING = {"--distractors": "300"}
MINING_GOLD = ("--flores-lines", "20", "--ntrex-lines", "20")

RULES: dict[str, Rule] = {
    # README: set-up and one example per command
    "xsimpp eval --encoder e5-small --dataset demo --langs deu,fra,spa --augmented auto": Rule(swap=True),
    "xsimpp eval --encoder e5-small --langs kea,fur,swh": Rule(swap=True, add=("--limit", "20")),
    "xsimpp eval --encoder e5-small --langs all --exclude dzo": Rule(swap=True, add=("--limit", "5")),
    "xsimpp eval --encoder sbert --langs kea,fur,swh --ci": Rule(add=("--limit", "20")),
    "xsimpp tatoeba --encoder e5-small --langs deu,fra,swh": Rule(swap=True, add=("--limit", "20")),
    "xsimpp bucc --encoder e5-small --pair zh-en --cv 5": Rule(swap=True, add=("--sample", "300x400")),
    "xsimpp mining-f1 --encoder e5-small --langs kea,fur --distractors 20000 --unpaired-sources 300":
        Rule(swap=True, set={**SMALL_MINING, "--unpaired-sources": "20"}, add=MINING_GOLD),
    "xsimpp mining-f1 --encoder e5-small --langs kea,fur --distractors 20000 --near-duplicates 5":
        Rule(swap=True, set={**SMALL_MINING, "--near-duplicates": "2"}, add=MINING_GOLD),
    "xsimpp mteb-bitext --encoder sbert --langs kea,fur,deu --both-directions": Rule(add=("--limit", "20")),
    "xsimpp augment flores200 --split devtest": Rule(),
    "xsimpp augment flores200 --split devtest --lang fra_Latn": Rule(),
    "xsimpp score --src-emb kea.npy --tgt-emb eng.npy --tgt-text eng_Latn.devtest": Rule(files="score"),
    "xsimpp mine --src-emb zh.npy --tgt-emb en.npy --out mined/ --src-text zh.txt --tgt-text en.txt "
    "--pairs-tsv mined.tsv": Rule(files="mine"),
    "xsimpp filter --src corpus.fur --tgt corpus.eng --src-lang fur --tgt-lang eng --out kept/ --budget 2M":
        Rule(files="filter", add=("--encoder", "chargram")),
    "xsimpp train onealigner --src seed/fur_Latn --tgt seed/eng_Latn --out oa-fur/":
        Rule(files="seed", tiny_base=True, add=("--batch-size", "4", "--steps", "2", "--max-length", "16")),
    "xsimpp train distill --langs kea,fur --steps 1000 --save-every 100":
        Rule(set={"--steps": "2", "--save-every": "1"}, add=("--batch-size", "4", "--hold-out-dev", "990")),
    "xsimpp rank xsimpp/data/examples/sonar_flores200_devtest.csv": Rule(),
    # the study's configuration is read and checked; the study itself (encoders x languages, minutes on 2
    # cores even for the small preset) runs on a tiny configuration in tests/test_study.py
    "xsimpp study --preset small --out study-small/": Rule(add=("--print-config",)),
    "xsimpp compare --baseline e5-small --system sbert --metric xsim": Rule(swap=True),
    "xsimpp explain --encoder sbert --metric xsim --lang kea --html kea-errors.html": Rule(),
    "xsimpp leaderboard --csv leaderboard.csv": Rule(),
    "xsimpp leaderboard --dataset flores200 --metric xsim,xsim++ --lang kea,fur": Rule(),
    "xsimpp plot errors --encoder e5-small --dataset demo --out errors.png": Rule(swap=True),
    "xsimpp download flores200": Rule(excuse=NEEDS_NETWORK),
    "xsimpp download laser_xsimpp --unverified": Rule(excuse=NEEDS_NETWORK),
    "xsimpp encoders": Rule(),
    "xsimpp datasets": Rule(),
    # getting-started (its lines not already above)
    "xsimpp eval --encoder e5-small --langs kea,fur,swh --augmented auto": Rule(swap=True, add=("--limit", "20")),
}


def page_lines(page: str) -> list[str]:
    """The `xsimpp ...` lines of the page's fenced bash blocks, comments cut, in order."""
    text = (REPO / page).read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["xsimpp"]:
                lines.append(" ".join(words))
    return lines


def variant(line: str, rule: Rule, tiny_bert: str = "TINY") -> list[str]:
    """The argv the test runs for ``line`` under ``rule`` (the rule's edits checked first)."""
    argv = shlex.split(line)[1:]
    for flag, value in rule.set.items():
        assert flag in SLICE_FLAGS, f"{line!r}: a rule may only shrink {sorted(SLICE_FLAGS)}, not {flag}"
        assert flag in argv, f"{line!r}: the rule sets {flag}, which the line does not have"
        argv[argv.index(flag) + 1] = value
    added = [w for w in rule.add if w.startswith("--")]
    for flag in added:
        assert flag in SLICE_FLAGS or (flag == "--encoder" and "--encoder" not in argv), \
            f"{line!r}: a rule may only add {sorted(SLICE_FLAGS)} (or an encoder where the line names none), not {flag}"
    if rule.swap:
        i = argv.index("--baseline") if "--baseline" in argv else argv.index("--encoder")
        assert argv[i + 1] in ENCODER_SWAP, f"{line!r}: nothing to swap"
        argv[i + 1] = ENCODER_SWAP[argv[i + 1]]
    if rule.tiny_base:
        assert argv[0] == "train" and "--model" not in argv, f"{line!r}: the tiny base replaces a default base only"
        argv += [w.format(tiny_bert=tiny_bert) for w in TINY_BASE]
    return argv + list(rule.add) + ["--no-progress"] * needs_no_progress(argv)


def needs_no_progress(argv: list[str]) -> bool:
    """Quiet bars where the command has the flag (the logs stay readable); it changes no output."""
    return argv[0] in {"eval", "tatoeba", "bucc", "mining-f1", "mteb-bitext", "augment", "filter", "study"} or \
        argv[:2] in (["train", "distill"], ["train", "onealigner"])


def tiny_base(tmp_path: Path) -> Path:
    from tiny_models import build_bert

    folder = tmp_path / "tiny-bert"
    return folder if folder.is_dir() else build_bert(folder)


def _lines(n: int, rng: np.random.Generator, word: str) -> str:
    return "".join(f"{word} {i} {rng.integers(1000)}\n" for i in range(n))


def _placeholders(kind: str, data: Path) -> None:
    """The user's own files a line names (kea.npy, corpus.fur, ...), tiny and made here."""
    rng = np.random.default_rng(0)
    if kind in ("score", "mine"):
        a, b = ("kea", "eng") if kind == "score" else ("zh", "en")
        base = rng.standard_normal((40, 16)).astype(np.float32)
        np.save(f"{a}.npy", base + 0.1 * rng.standard_normal(base.shape).astype(np.float32))
        np.save(f"{b}.npy", base)
        Path("eng_Latn.devtest" if kind == "score" else "en.txt").write_text(_lines(40, rng, "target"))
        if kind == "mine":
            Path("zh.txt").write_text(_lines(40, rng, "source"))
        return
    seed = data / "oldi-seed"
    fur, eng = ((seed / f).read_text(encoding="utf-8").splitlines()[:60] for f in ("fur_Latn", "eng_Latn"))
    if kind == "filter":
        Path("corpus.fur").write_text("\n".join(fur) + "\n", encoding="utf-8")
        Path("corpus.eng").write_text("\n".join(eng) + "\n", encoding="utf-8")
    else:  # seed/
        Path("seed").mkdir()
        Path("seed/fur_Latn").write_text("\n".join(fur[:40]) + "\n", encoding="utf-8")
        Path("seed/eng_Latn").write_text("\n".join(eng[:40]) + "\n", encoding="utf-8")


def test_every_line_has_a_rule_and_every_rule_a_line():
    lines = [line for page in PAGES for line in page_lines(page)]
    assert len(lines) > 25  # the pages' examples were found at all
    unruled = sorted(set(lines) - set(RULES))
    assert not unruled, ("lines of README.md/getting-started.md with no rule in tests/test_readme_lines.py "
                         f"RULES (run as written, on a slice, or excused with a reason): {unruled}")
    stale = sorted(set(RULES) - set(lines))
    assert not stale, f"rules whose line is no longer on either page: {stale}"
    for line, rule in RULES.items():
        if not rule.excuse:
            variant(line, rule)  # the rule's edits are slices only


@pytest.mark.parametrize("page", PAGES)
def test_every_line_runs_in_order(page, tmp_path, monkeypatch, capsys):
    data = shared_data_dir()
    if data is None:
        missing("real data not found: the README's lines read FLORES-200, Tatoeba, BUCC, NTREX and the OLDI seed "
                "(run `xsimpp download ...`, or set XSIMPP_DATA_DIR)", data=True)
    monkeypatch.chdir(tmp_path)
    # the repository's example files are named relative to a checkout's root, as the README is read there
    (tmp_path / "xsimpp").symlink_to(REPO / "xsimpp")
    timings, failed = {}, []
    for line in page_lines(page):
        rule = RULES[line]
        if rule.excuse:
            timings[line] = {"excused": rule.excuse}
            continue
        if rule.files:
            _placeholders(rule.files, data)
        argv = variant(line, rule, str(tiny_base(tmp_path)) if rule.tiny_base else "")
        t0, cpu0 = time.perf_counter(), time.process_time()
        rc = main(argv)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        out = capsys.readouterr()
        ran = "xsimpp " + shlex.join(argv).replace(str(tmp_path), ".")
        timings[line] = {"ran": ran, "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1)}
        if rc != 0:
            failed.append(f"{line!r} (ran as {shlex.join(argv)}) -> exit {rc}: {out.err.strip()[-400:]}")
    if os.environ.get("XSIMPP_README_TIMINGS"):
        _record_timings(Path(os.environ["XSIMPP_README_TIMINGS"]), page, timings)
    assert not failed, "README lines that fail:\n" + "\n".join(failed)


def _record_timings(path: Path, page: str, timings: dict) -> None:
    """Each page's timings into ``path`` (``machine``: say where they were taken, by hand)."""
    rows = json.loads(path.read_text()) if path.exists() else {"machine": "", "pages": {}}
    rows["pages"][page] = timings
    path.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")


def costs_rows(costs: dict) -> list[str]:
    """The rows of docs/performance.md's README-costs table, made from the committed timings."""
    rows = []
    for page in PAGES:
        for line, row in costs["pages"][page].items():
            if "excused" in row:
                rows.append(f"| `{line}` | not run | {row['excused']} |")
            else:
                rows.append(f"| `{line}` | {row['seconds']:.1f} s ({row['cpu_seconds']:.1f} s CPU) | `{row['ran']}` |")
    return rows


def test_the_costs_table_quotes_the_measurement():
    """docs/performance.md gives each README line's cost as the committed measurement has it
    (benchmarks/results/readme_costs.json, written by this file's run with XSIMPP_README_TIMINGS)."""
    costs = json.loads(COSTS.read_text(encoding="utf-8"))
    for page in PAGES:  # measured on the pages as they are now
        assert list(costs["pages"][page]) == page_lines(page), f"{COSTS.name} is stale for {page}: measure again"
    page_text = COSTS_TABLE_PAGE.read_text(encoding="utf-8")
    missing_rows = [row for row in costs_rows(costs) if row not in page_text]
    assert not missing_rows, missing_rows[:3]
    assert costs["machine"] in " ".join(page_text.split())
