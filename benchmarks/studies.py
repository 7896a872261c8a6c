"""The proxy studies the docs quote, each re-derivable from its committed folder (issue 36): the
small preset, and the same encoders ranked into English and into French. `run` writes each
study's configuration, runs `xsimpp study` on it and copies the small files of its report folder
into benchmarks/results/study_<name>/ (config.toml, cells.csv, study.json, costs.csv,
summary.txt, ranking_*.json, timing.json; no vectors); `markdown` prints the docs' tables from
those files alone, and tests/test_studies.py checks that the docs quote exactly them.

    python benchmarks/studies.py run small target-eng target-fra --workdir /tmp/studies
    python benchmarks/studies.py markdown small
    python benchmarks/studies.py markdown targets

The checkpoint studies live in benchmarks/regime.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = ROOT / "benchmarks" / "results"
KEEP = ("config.toml", "cells.csv", "study.json", "costs.csv", "summary.txt")
TRUTHS = {"mining_f1": "vs mining F1 (FLORES + NTREX gold)", "mining_f1_ntrex": "vs mining F1, NTREX only",
          "mining_p_fixed": "vs precision at 1.06"}
# Proxies every table shows besides the best ones (xsim[ratio] is LASER's default).
NAMED = ["xsim[ratio]", "xsim[absolute]", "xsim++[strict]", "xsim++[strict:misaligned]", "xsim++[strict:entity]",
         "xsim++[strict:number]"]


def _small() -> str:
    from xsimpp.study.config import PRESETS

    return PRESETS["small"]


def _target(target: str) -> str:
    """The small preset's encoders on its languages other than French, into `target`, scaled down
    to fit: 300 FLORES + 300 NTREX gold lines, 10 000 distractors, no Tatoeba proxy (Tatoeba v1 has
    no French-X pairs)."""
    text = _small()
    for old, new in (('name = "small"', f'name = "target-{target}"'),
                     ('languages = ["deu", "fra", ', 'languages = ["deu", '),
                     ("flores_lines = 500 ", "flores_lines = 300 "), ("ntrex_lines = 500 ", "ntrex_lines = 300 "),
                     ("tatoeba = true", "tatoeba = false"), ("distractors = 50000", "distractors = 10000"),
                     ("seed = 0\n", f'seed = 0\ntarget = "{target}"\n')):
        assert old in text, old
        text = text.replace(old, new, 1)
    return f"# benchmarks/studies.py: the small preset's encoders into {target} (issue 25)\n" + text


STUDIES = {"small": _small, "target-eng": lambda: _target("eng"), "target-fra": lambda: _target("fra")}


def folder(name: str) -> Path:
    return RESULTS / f"study_{name}"


def run(name: str, work: Path) -> Path:
    """Run one study from its configuration and keep its small files (written whole, then renamed)."""
    from machine import cpu_info

    cfg = work / f"{name}.toml"
    cfg.write_text(STUDIES[name](), encoding="utf-8")
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "xsimpp", "study", str(cfg), "--out", name, "--overwrite",
                             "--no-progress"], cwd=work)
    # wait4 gives this child's own peak RSS (RUSAGE_CHILDREN would be the max over every study run so far)
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"studies: {name} failed with exit {code}")
    timing = {"seconds": round(time.perf_counter() - t0, 1), "peak_rss_gib": round(usage.ru_maxrss / 2**20, 2),
              "load": [round(load0, 2), round(os.getloadavg()[0], 2)], "machine": cpu_info()}
    dest = folder(name)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for p in [work / name / k for k in KEEP] + sorted((work / name).glob("ranking_*.json")):
        shutil.copy2(p, tmp / p.name)
    (tmp / "timing.json").write_text(json.dumps(timing, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


def ranking(name: str, truth: str) -> dict:
    return json.loads((folder(name) / f"ranking_{truth}.json").read_text(encoding="utf-8"))


def _cell(rank: dict, proxy: str) -> str:
    """accuracy [CI] and the PERM-BOTH p against the best (two-sided, uncorrected), as the study prints them."""
    row = next((p for p in rank["proxies"] if p["proxy"] == proxy), None)
    if row is None:
        return "-"
    best = rank["proxies"][0]["proxy"]
    p = "best" if proxy == best else next(
        f"p {c['p_value']:.3f}" for c in rank["comparisons"] if c["a"] == best and c["b"] == proxy)
    return f"{100 * row['accuracy']:.1f} [{100 * row['ci_low']:.1f}, {100 * row['ci_high']:.1f}] {p}"


# A subset naming every error type is xsim++[strict] itself: the same column under a second name.
ALIASES = {"xsim++[strict:causality+entity+number+misaligned]"}


def shown(rank: dict, top: int) -> list[str]:
    """The best `top` proxies of a ranking, then the named ones not among them, in ranking order."""
    order = [p["proxy"] for p in rank["proxies"] if p["proxy"] not in ALIASES]
    return order[:top] + [p for p in order[top:] if p in NAMED or p == "tatoeba"]


def _folder_data(name: str) -> tuple[dict, list[dict]]:
    from study_rerank import read_study

    return read_study(folder(name))


def _costs(name: str) -> str:
    t = json.loads((folder(name) / "timing.json").read_text(encoding="utf-8"))
    m = t["machine"]
    note = f"; {t['note']}" if t.get("note") else ""
    return (f"{name}: {int(t['seconds'] // 60)} min {t['seconds'] % 60:.0f} s, {t['peak_rss_gib']} GiB peak RSS "
            f"({m.get('cpu', '?')}, {m.get('cores', '?')} cores, load {t['load'][0]} at the start and {t['load'][1]} "
            f"at the end{note})")


def markdown_small() -> list[str]:
    first = ranking("small", "mining_f1")
    rows = [f"{first['n_systems']} encoders x {first['n_directions']} languages, {first['pairs']} pairs (chance "
            f"{100 * first['chance']:.1f} %); accuracy % [95 % bootstrap CI]; p: PERM-BOTH against the column's "
            f"best, two-sided, 1 000 permutations, not corrected for the {len(first['comparisons'])} comparisons:", "",
            "| proxy | " + " | ".join(TRUTHS.values()) + " |", "|---|---|---|---|"]
    ranks = {t: ranking("small", t) for t in TRUTHS}
    for proxy in shown(first, 8):
        rows.append(f"| {proxy} | " + " | ".join(_cell(ranks[t], proxy) for t in TRUTHS) + " |")
    tat = ranking("small", "tatoeba-languages_mining_f1")
    best = tat["proxies"][0]["proxy"]
    rows += ["", f"- Over the {tat['n_directions']} languages with Tatoeba v1 ({tat['pairs']} pairs), against mining "
             f"F1: tatoeba {_cell(tat, 'tatoeba')}; the best there {best} {_cell(tat, best)}; xsim[absolute] "
             f"{_cell(tat, 'xsim[absolute]')}; xsim[ratio] {_cell(tat, 'xsim[ratio]')}.",
             f"- Cost of this run: {_costs('small')}."]
    _, cells = _folder_data("small")
    cell = {(c["system"], c["lang"]): c for c in cells}
    plain, norm = cell[("oa-mean-L6", "bem_Latn")], cell[("oa-mean-L6-norm", "bem_Latn")]
    e5 = [c for c in cells if c["system"] == "e5-L12"]
    rows += [f"- In-batch normalisation, bem: oa-mean-L6 -> oa-mean-L6-norm moves xsim[ratio] {plain['xsim[ratio]']:.1f} -> "
             f"{norm['xsim[ratio]']:.1f} % and mining F1 {plain['mining_f1']:.1f} -> {norm['mining_f1']:.1f}.",
             f"- e5-L12 at the fixed threshold 1.06 (mean over the languages): precision "
             f"{sum(c['mining_p_fixed'] for c in e5) / len(e5):.1f} %, recall {sum(c['mining_r_fixed'] for c in e5) / len(e5):.1f} %."]
    return rows


def markdown_targets() -> list[str]:
    eng, fra = ranking("target-eng", "mining_f1"), ranking("target-fra", "mining_f1")
    rows = [f"Against mining F1, {eng['n_systems']} encoders x {eng['n_directions']} languages, {eng['pairs']} "
            "pairs per target; accuracy % [95 % bootstrap CI]; p: PERM-BOTH against the column's best, two-sided, "
            f"1 000 permutations, not corrected for the {len(eng['comparisons'])} comparisons:", "",
            "| proxy | into English | into French |", "|---|---|---|"]
    proxies = list(dict.fromkeys(shown(eng, 3) + shown(fra, 3)))
    proxies = [p for p in (p["proxy"] for p in eng["proxies"]) if p in proxies]
    for proxy in proxies:
        rows.append(f"| {proxy} | {_cell(eng, proxy)} | {_cell(fra, proxy)} |")
    rows.append("")
    from study_rerank import one_sided

    for name, label in (("target-eng", "into English"), ("target-fra", "into French")):
        meta, cells = _folder_data(name)
        tests = [(b, one_sided(meta, cells, "xsim++[strict]", b, "mining_f1")["all"]) for b in ("xsim[ratio]", "xsim[absolute]")]
        data = meta["data"]
        negatives = sum(a["lines"] for a in data["augmented"].values())
        pool = ", ".join(f"{k} {v}" for k, v in data["distractors"]["per_source"].items())
        rows.append(f"- {label}: xsim++[strict] over " + " and over ".join(
            f"{b} {100 * d:+.1f} points (one-sided p {pv:.3f})" for b, (d, pv) in tests)
            + f"; {negatives} negatives in the pool; distractors {pool}; {_costs(name)}.")
    return rows


TABLES = {"small": markdown_small, "targets": markdown_targets}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("names", nargs="+", choices=sorted(STUDIES))
    r.add_argument("--workdir", type=Path, default=Path("studies-work"), help="the full study folders")
    m = sub.add_parser("markdown")
    m.add_argument("table", choices=sorted(TABLES))
    args = ap.parse_args()
    if args.cmd == "markdown":
        print("\n".join(TABLES[args.table]()))
        return 0
    os.environ.setdefault("XSIMPP_DATA_DIR", str(ROOT.parent / "shared" / "data"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    for name in args.names:
        print(f"{name}: {run(name, args.workdir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
