"""The xSIM++ paper's regime, reproducibly (issue 36): does xsim++ rank the checkpoints of a
*saturated* student — one whose xsim is already near 0, as the paper's LASER students are — better
than xsim does? The MiniLM checkpoints study (`xsimpp study --preset checkpoints`) answered for a
weak student (xsim 37-51 %); this one asks where the paper's argument lives.

The student is the bundled multilingual-e5-small distilled onto its own frozen English (xsim about
3.6 % on the paper's ten languages before any step): `xsimpp train distill --student e5-small
--teacher e5-small`, checkpoints every 30 of 240 steps, lr 2e-5, holding out the 300 FLORES dev lines
the study mines as unpaired sources. Each seed is one training run and one study of its start and
eight checkpoints (one family), with USE-m3 and MiniLM (two other families), on the paper's ten
languages; proxies xsim and xsim++ (strict) with the ratio *and* the paper's absolute margin.

    python benchmarks/regime.py run --seeds 0,1,2 --workdir /tmp/regime   # train + study per seed
    python benchmarks/regime.py analyse --markdown                         # the tables of the docs

`run` keeps the checkpoints and the full study folders in --workdir and copies the small files of
each seed into benchmarks/results/regime_saturated/seed<S>/: near<N>/ per near-duplicate density
(config.toml, cells.csv, study.json, costs.csv, summary.txt, ranking_*.json), the checkpoints'
training manifests and timing.json; no vectors, no weights. The ground truth is the study's mining
F1 with 0, 1 and 5 near-duplicates (deletions) of every gold line in the pool. `analyse` recomputes every number the docs quote from those files alone.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = ROOT / "benchmarks" / "results" / "regime_saturated"
STEPS, SAVE_EVERY, LR, HOLD_OUT = 240, 30, 2e-5, 300
START = "e5-step-00000"  # the untrained start: e5-small itself, also the frozen teacher
LANGS = ["fao", "kea", "tpi", "kik", "fur", "ibo", "ltz", "swh", "zul", "bem"]  # the xSIM++ paper's ten
TRUTH = "mining_f1"  # FLORES + NTREX gold; the FLORES half shares its sentences with the proxies
NTREX_TRUTH = "mining_f1_ntrex"  # NTREX gold only (the languages NTREX-128 has): no proxy saw it
# The proxies the tables show; xsim[ratio] (LASER's default) is the one each other is tested against.
PROXIES = ["xsim[ratio]", "xsim[absolute]", "xsim++[strict]", "xsim++[strict,absolute]",
           "xsim++[strict:misaligned]", "xsim++[strict:causality+entity+number]"]
KEEP = ("config.toml", "cells.csv", "study.json", "costs.csv", "summary.txt")
# The ground truth that can see near-duplicates: the same study with 0, 1 and 5 near-duplicates of
# every gold line in the pool (deletions: partial translations, not xsim++'s own generator).
DENSITIES = (0, 1, 5)


def checkpoint_dir(seed: int) -> str:
    return f"regime-e5-seed{seed}"


def config_text(seed: int, near: int = 0) -> str:
    """The study of one seed's checkpoints at one near-duplicate density (run from --workdir, where
    the checkpoints are)."""
    ckpts = "".join(f"""
[[encoders]]
label = "e5-step-{step:05d}"
name = "hf"
options = {{ model = "{checkpoint_dir(seed)}/step-{step:05d}" }}
family = "e5-distill"
""" for step in range(SAVE_EVERY, STEPS + 1, SAVE_EVERY))
    return f"""# benchmarks/regime.py: the saturated regime, seed {seed} (issue 36)
[study]
name = "saturated-seed{seed}{f"-near{near}" if near else ""}"
languages = {json.dumps(LANGS)}
flores_lines = 300
ntrex_lines = 300
tatoeba_lines = 0
seed = 0

[proxies]
xsim_margins = ["ratio", "absolute"]
xsimpp_styles = ["strict"]
xsimpp_margin = "ratio"
xsimpp_extra_margins = ["absolute"]   # the xSIM++ paper's margin
error_type_subsets = true
tatoeba = false

[mining]
distractors = 5000
whole_sources = ["ntrex128", "oldi-seed"]
fill_sources = ["tatoeba", "tatoeba-challenge"]
margin = "ratio"
k = 4
folds = 5
fixed_threshold = 1.06
unpaired_sources = {HOLD_OUT}
near_duplicates = {near}
near_duplicate_kind = "deletion"

[analysis]
bootstrap = 1000
permutations = 1000
confidence = 0.95

[[encoders]]
label = "{START}"
name = "hf"
family = "e5-distill"

[[encoders]]
label = "use-m3"
name = "use-m3"
family = "use"

[[encoders]]
label = "minilm"
name = "sbert"
family = "minilm"
{ckpts}"""


def timed(cmd: list[str], cwd: Path) -> dict:
    """Run an xsimpp command; its wall time and the peak RSS of the children so far."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd)
    if proc.returncode != 0:
        raise SystemExit(f"regime: {' '.join(cmd[2:4])} failed with exit {proc.returncode}")
    return {"seconds": round(time.perf_counter() - t0, 1),
            "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20, 2)}


def train(seed: int, work: Path) -> dict:
    return timed([sys.executable, "-m", "xsimpp", "train", "distill", "--student", "e5-small", "--teacher", "e5-small",
                  "--steps", str(STEPS), "--save-every", str(SAVE_EVERY), "--hold-out-dev", str(HOLD_OUT),
                  "--lr", str(LR), "--seed", str(seed), "--out", checkpoint_dir(seed), "--overwrite",
                  "--log-every", "30", "--no-progress"], work)


def study_dir(seed: int, near: int) -> str:
    return f"study-saturated-seed{seed}" + (f"-near{near}" if near else "")


def study(seed: int, work: Path, done: dict, save) -> dict:
    """The seed's study at every density, one after the other: the later ones find every vector but
    the near-duplicates' in the encoders' caches. A density already timed in `done` whose folder holds
    a finished study of the same config is kept, so an interrupted `study` resumes where it stopped;
    `save` records each density's time as soon as it is known."""
    out = dict(done)
    for near in DENSITIES:
        cfg, folder = work / f"{study_dir(seed, near)}.toml", work / study_dir(seed, near)
        text = config_text(seed, near)
        if (f"near{near}" in out and (folder / "study.json").is_file()
                and (folder / "config.toml").is_file()
                and (folder / "config.toml").read_text(encoding="utf-8") == text):
            continue
        cfg.write_text(text, encoding="utf-8")
        out[f"near{near}"] = timed([sys.executable, "-m", "xsimpp", "study", str(cfg), "--out", study_dir(seed, near),
                                    "--overwrite", "--no-progress"], work)
        save(out)
    return out


def keep(seed: int, work: Path, timing: dict) -> Path:
    """Copy the seed's small files into benchmarks/results (written whole, then renamed)."""
    from machine import cpu_info

    dest = RESULTS / f"seed{seed}"
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "manifests").mkdir(parents=True)
    for near in DENSITIES:
        src, to = work / study_dir(seed, near), tmp / f"near{near}"
        to.mkdir()
        for name in KEEP:
            shutil.copy2(src / name, to / name)
        for p in sorted(src.glob("ranking_*.json")):
            shutil.copy2(p, to / p.name)
    for ckpt in sorted((work / checkpoint_dir(seed)).glob("step-*")):
        shutil.copy2(ckpt / "xsimpp_training.json", tmp / "manifests" / f"{ckpt.name}.json")
    (tmp / "timing.json").write_text(json.dumps({**timing, "machine": cpu_info()}, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


# -- analysis: only the committed files ------------------------------------------------------------

def seed_folders(results: Path = RESULTS) -> list[Path]:
    return sorted((p for p in results.glob("seed*") if p.is_dir() and not p.name.endswith(".tmp")),
                  key=lambda p: int(p.name[4:]))


def analyse_seed(folder: Path) -> dict:
    """Every density of one seed (``analyse_study``), and the seed's timing."""
    return {"seed": int(folder.name[4:]),
            "densities": {near: analyse_study(folder / f"near{near}") for near in DENSITIES
                          if (folder / f"near{near}").is_dir()},
            "timing": json.loads((folder / "timing.json").read_text(encoding="utf-8"))}


def analyse_study(folder: Path) -> dict:
    """Pairwise accuracy against mining F1 per proxy over all, within-model (with and without the
    untrained start) and across-model pairs; PERM-BOTH (two-sided) of each proxy against
    xsim[ratio] over the within-model pairs, Benjamini-Hochberg corrected over the proxies; and
    the per-checkpoint means over the languages."""
    import pandas as pd

    from study_rerank import read_study

    meta, cells = read_study(folder)
    cfg = SimpleNamespace(**meta["config"])
    cells_frame = pd.DataFrame(cells)
    lower = {p: True for p in PROXIES}
    kw = dict(n_bootstrap=cfg.bootstrap, n_permutations=cfg.permutations, confidence=cfg.confidence, seed=cfg.seed)
    views = {}
    for truth in (TRUTH, NTREX_TRUTH):
        frame = cells_frame[cells_frame[truth].notna()].copy()
        frame["bleu"] = frame[truth]
        views[truth] = _views(frame, lower, kw)
    frame = cells_frame
    cols = ["xsim[ratio]", "xsim[absolute]", "xsim++[strict]", "xsim++[strict,absolute]", "err_strict_causality",
            "err_strict_entity", "err_strict_number", "err_strict_misaligned", TRUTH]
    per_system = frame.groupby("system", sort=False)[cols].mean()
    return {"views": views,
            "per_system": {s: {c: float(v) for c, v in row.items()} for s, row in per_system.iterrows()}}


def _views(frame, lower: dict, kw: dict) -> dict:
    """Accuracy per proxy and kind of pair, with and without the untrained start's cells."""
    from scipy.stats import false_discovery_control

    from xsimpp.tasks.ranking import RankingTable, evaluate_table

    views = {}
    for view, sub in (("with_start", frame), ("without_start", frame[frame["system"] != START])):
        rep = evaluate_table(RankingTable(sub.reset_index(drop=True), list(PROXIES), dict(lower)), **kw)
        p_within = {b: r.p_value for _, b, r in rep.within_comparisons}
        tested = PROXIES[1:]
        corrected = dict(zip(tested, false_discovery_control([p_within[p] for p in tested], method="bh")))
        views[view] = {
            "pairs": rep.pairs, "within_pairs": rep.within_pairs, "across_pairs": rep.across_pairs,
            "languages": int(sub["direction"].nunique()),
            "proxies": {p.proxy: {"all": p.accuracy.accuracy, "within": p.accuracy.within_accuracy,
                                  "across": p.accuracy.across_accuracy, "within_ci": list(p.within_ci),
                                  "p_within_vs_xsim_ratio": p_within.get(p.proxy),
                                  "p_within_vs_xsim_ratio_bh": corrected.get(p.proxy)} for p in rep.proxies}}
    return views


def analyse(results: Path = RESULTS) -> dict:
    seeds = [analyse_seed(f) for f in seed_folders(results)]
    if not seeds:
        raise SystemExit(f"regime: no seed folders under {results}; run `python benchmarks/regime.py run` first")
    return {"seeds": seeds}


def _pct(x) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}"


def _spread(values: list[float]) -> str:
    """mean over seeds, and the range when there are several."""
    vals = [v for v in values if v == v]
    if not vals:
        return "-"
    mean = sum(vals) / len(vals)
    return _pct(mean) if len(vals) == 1 else f"{_pct(mean)} ({_pct(min(vals))}-{_pct(max(vals))})"


def markdown(res: dict) -> list[str]:
    """The docs' tables: accuracy per proxy and kind of pair (mean over seeds, range), and the
    per-checkpoint means (seed by seed)."""
    seeds = [{**s, **s["densities"][0]} for s in res["seeds"]]  # the tables without near-duplicates
    rows = []
    for truth in (TRUTH, NTREX_TRUTH):
        first = seeds[0]["views"][truth]
        rows += ["", f"Against `{truth}` ({first['with_start']['languages']} languages; pairs: all "
                     f"{first['with_start']['pairs']}, within {first['with_start']['within_pairs']} with the start, "
                     f"{first['without_start']['within_pairs']} without, across {first['with_start']['across_pairs']}):",
                 "", "| proxy | all pairs | within, with the start | within, checkpoints only | across models | "
                     "p within vs xsim[ratio] (BH; with / without the start), per seed |", "|---|---|---|---|---|---|"]
        for p in PROXIES:
            ws = [s["views"][truth]["with_start"]["proxies"][p] for s in seeds]
            wo = [s["views"][truth]["without_start"]["proxies"][p] for s in seeds]
            pv = "-" if p == PROXIES[0] else ", ".join(
                f"{w['p_within_vs_xsim_ratio_bh']:.3f} / {o['p_within_vs_xsim_ratio_bh']:.3f}" for w, o in zip(ws, wo))
            rows.append(f"| {p} | {_spread([w['all'] for w in ws])} | {_spread([w['within'] for w in ws])} | "
                        f"{_spread([w['within'] for w in wo])} | {_spread([w['across'] for w in ws])} | {pv} |")
    dense = [d for d in DENSITIES if all(d in s["densities"] for s in res["seeds"])]
    rows += ["", f"Against `{TRUTH}` as near-duplicates join the pool (0 / {' / '.join(map(str, dense[1:]))} per gold "
                 "line; mean over seeds):", "",
             "| proxy | within, checkpoints only | across models |", "|---|---|---|"]
    for p in PROXIES:
        cells = []
        for kind, view in (("within", "without_start"), ("across", "with_start")):
            cells.append(" / ".join(_spread([s["densities"][d]["views"][TRUTH][view]["proxies"][p][kind]
                                             for s in res["seeds"]]) for d in dense))
        rows.append(f"| {p} | {cells[0]} | {cells[1]} |")
    rows += ["", "| encoder | " + " | ".join(f"{TRUTH}, {d} near-duplicates" for d in dense) + " |",
             "|---|" + "---|" * len(dense)]
    for system in seeds[0]["per_system"]:
        rows.append(f"| {system} | " + " | ".join(
            _spread([s["densities"][d]["per_system"][system][TRUTH] / 100 for s in res["seeds"]]) for d in dense) + " |")
    for s in seeds:
        rows.append("")
        rows.append(f"Seed {s['seed']} (means over the ten languages; error counts of 300 lines):")
        rows.append("")
        rows.append("| encoder | xsim[ratio] | xsim[absolute] | xsim++[strict] | xsim++[strict,absolute] | causality | "
                    "entity | number | misaligned | mining F1 |")
        rows.append("|---|---|---|---|---|---|---|---|---|---|")
        for system, v in s["per_system"].items():
            rows.append(f"| {system} | {v['xsim[ratio]']:.2f} | {v['xsim[absolute]']:.2f} | {v['xsim++[strict]']:.2f} | "
                        f"{v['xsim++[strict,absolute]']:.2f} | {v['err_strict_causality']:.1f} | "
                        f"{v['err_strict_entity']:.1f} | {v['err_strict_number']:.1f} | "
                        f"{v['err_strict_misaligned']:.1f} | {v[TRUTH]:.2f} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "train", "study"):
        p = sub.add_parser(name)
        p.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
        p.add_argument("--workdir", type=Path, default=Path("regime-work"), help="checkpoints and full study folders")
    a = sub.add_parser("analyse")
    a.add_argument("--markdown", action="store_true", help="print the docs' tables")
    a.add_argument("--json", type=Path, help="write the analysis here")
    args = ap.parse_args()
    if args.cmd == "analyse":
        res = analyse()
        if args.json:
            args.json.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print("\n".join(markdown(res)) if args.markdown else json.dumps(res, indent=1, sort_keys=True))
        return 0
    os.environ.setdefault("XSIMPP_DATA_DIR", str(ROOT.parent / "shared" / "data"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    for seed in (int(s) for s in args.seeds.split(",")):
        # each stage's time, kept in the workdir so `train` and `study` may run as separate calls
        log = args.workdir / f"timing-seed{seed}.json"
        timing = json.loads(log.read_text(encoding="utf-8")) if log.is_file() else {}

        def save(stage_timing, stage="study"):
            timing[stage] = stage_timing
            log.write_text(json.dumps(timing, indent=1) + "\n", encoding="utf-8")

        if args.cmd in ("run", "train"):
            save(train(seed, args.workdir), "train")
        if args.cmd in ("run", "study"):
            save(study(seed, args.workdir, timing.get("study", {}), save))
        if args.cmd in ("run", "study"):
            print(f"seed {seed}: {keep(seed, args.workdir, timing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
