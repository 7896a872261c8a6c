"""The xSIM++ paper's question, reproducibly (issue 36): does xsim++ rank the checkpoints of one
model better than xsim does? Asked in two regimes by one harness:

- `saturated` (the paper's): the bundled multilingual-e5-small distilled onto its own frozen
  English at lr 2e-5 (xsim about 3.6 % on the paper's ten languages before any step), with USE-m3
  and MiniLM as the other families;
- `minilm` (a weak student): all-MiniLM-L6-v2 onto itself at the default lr 1e-4 (xsim about 51 %),
  with USE-m3 and e5-small as the other families.

Each seed is one `xsimpp train distill` run (240 steps, a checkpoint every 30, holding out the 300
FLORES dev lines the study mines as unpaired sources) and one study of its start and eight
checkpoints per arm (ARMS): 0, 1 and 5 near-duplicates (deletions) of every gold line in the pool,
and the FLORES gold moved past the 300 lines the proxies score (`disjoint`). Proxies: xsim and
xsim++ (strict) with the ratio *and* the paper's absolute margin; ground truth: mining F1.

    python benchmarks/regime.py run --regime saturated --seeds 0,1,2 --workdir /tmp/regime
    python benchmarks/regime.py analyse --regime saturated --markdown   # the tables of the docs

`run` (= `train` then `study`; an interrupted `study` resumes) keeps the checkpoints and the full
study folders in --workdir and copies the small files of each seed into
benchmarks/results/regime_<regime>/seed<S>/: one folder per arm (config.toml, cells.csv,
study.json, costs.csv, summary.txt, ranking_*.json), the checkpoints' training manifests and
timing.json; no vectors, no weights. `analyse` recomputes every number the docs quote from those
files alone.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from dataclasses import dataclass
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bounds  # noqa: E402  (benchmarks/bounds.py: the bounds of every number typed here)

RESULTS = ROOT / "benchmarks" / "results"
STEPS, SAVE_EVERY, HOLD_OUT, FLORES_LINES = 240, 30, 300, 300
LANGS = ["fao", "kea", "tpi", "kik", "fur", "ibo", "ltz", "swh", "zul", "bem"]  # the xSIM++ paper's ten
TRUTH = "mining_f1"  # FLORES + NTREX gold; the FLORES half shares its sentences with the proxies
NTREX_TRUTH = "mining_f1_ntrex"  # NTREX gold only (the languages NTREX-128 has): no proxy saw it
# The proxies the tables show; xsim[ratio] (LASER's default) is the one each other is tested against.
PROXIES = ["xsim[ratio]", "xsim[absolute]", "xsim++[strict]", "xsim++[strict,absolute]",
           "xsim++[strict:misaligned]", "xsim++[strict:causality+entity+number]"]
KEEP = ("config.toml", "cells.csv", "study.json", "costs.csv", "summary.txt")
# Each seed's studies, one per arm: (near-duplicates of every gold line in the pool, first FLORES
# devtest line of the gold). The near-duplicates are deletions (partial translations, not xsim++'s
# own generator); "disjoint" moves the FLORES gold past the 300 lines the proxies score.
ARMS = {"near0": (0, 0), "near1": (1, 0), "near5": (5, 0), "disjoint": (0, FLORES_LINES)}
DENSITIES = ("near0", "near1", "near5")


@dataclass(frozen=True)
class Regime:
    """A student and how it is distilled, and the study of its checkpoints: the start and the
    checkpoints are one family; the other encoders two more."""

    name: str  # results under benchmarks/results/regime_<name>/, study folders <name>-seed<S>...
    prefix: str  # checkpoint labels <prefix>-step-NNNNN, checkpoints in regime-<prefix>-seed<S>/
    title: str  # the configuration's first line
    distill: tuple[str, ...]  # `xsimpp train distill` arguments besides the shared ones
    encoder: str  # the encoder that loads a checkpoint
    start: str  # the encoder that is the untrained start (its defaults: the student itself)
    others: tuple[tuple[str, str, str], ...]  # (label, encoder, family) of the other families

    @property
    def family(self) -> str:
        return f"{self.prefix}-distill"

    @property
    def start_label(self) -> str:
        return f"{self.prefix}-step-00000"

    @property
    def results(self) -> Path:
        return RESULTS / f"regime_{self.name}"

    def checkpoint_dir(self, seed: int) -> str:
        return f"regime-{self.prefix}-seed{seed}"


REGIMES = {
    # e5-small onto its own frozen English: xsim about 3.6 % before any step (the paper's regime)
    "saturated": Regime("saturated", "e5", "the saturated regime",
                        ("--student", "e5-small", "--teacher", "e5-small", "--lr", "2e-05"), "hf", "hf",
                        (("use-m3", "use-m3", "use"), ("minilm", "sbert", "minilm"))),
    # all-MiniLM-L6-v2 onto its own frozen English at the default lr: xsim about 51 % before any step
    "minilm": Regime("minilm", "minilm", "the weak-student regime (MiniLM)", (), "sbert", "sbert",
                     (("use-m3", "use-m3", "use"), ("e5-small", "hf", "e5-small"))),
}


def study_dir(regime: Regime, seed: int, arm: str, path: str | None = None) -> str:
    return (f"study-{regime.name}-seed{seed}" + ("" if arm == "near0" else f"-{arm}")
            + (f"-{path}" if path else ""))


def _options(name: str, path: str | None, **given: str) -> str:
    """An encoder's options line: ``given`` and, for the hf-family adapters, the numeric path when one is asked."""
    if path and name in ("hf", "onealigner"):
        given["path"] = path
    inner = ", ".join(f'{k} = "{v}"' for k, v in given.items())
    return f"options = {{ {inner} }}\n" if inner else ""


def encoders_text(regime: Regime, checkpoints: str, path: str | None) -> str:
    """The [[encoders]] tables of a study of one training run: the start, the other families, and
    the checkpoints in the folder ``checkpoints`` (relative to the study's working folder)."""
    others = "".join(f"""
[[encoders]]
label = "{label}"
name = "{name}"
{_options(name, path)}family = "{family}"
""" for label, name, family in ((regime.start_label, regime.start, regime.family),) + regime.others)
    return others + "".join(f"""
[[encoders]]
label = "{regime.prefix}-step-{step:05d}"
name = "{regime.encoder}"
{_options(regime.encoder, path, model=f"{checkpoints}/step-{step:05d}")}family = "{regime.family}"
""" for step in range(SAVE_EVERY, STEPS + 1, SAVE_EVERY))


# The proxies every study of a regime ranks (the [proxies] table)
PROXIES_TOML = """[proxies]
xsim_margins = ["ratio", "absolute"]
xsimpp_styles = ["strict"]
xsimpp_margin = "ratio"
xsimpp_extra_margins = ["absolute"]   # the xSIM++ paper's margin
error_type_subsets = true
tatoeba = false
"""


def config_text(regime: Regime, seed: int, arm: str = "near0", path: str | None = None) -> str:
    """The study of one seed's checkpoints in one arm (run from --workdir, where the checkpoints are).
    ``path``: the numeric path of every hf encoder (None: each encoder's default, as the committed
    seeds ran: the bundled e5-small on torch before 0.9, checkpoints on torch)."""
    near, offset = ARMS[arm]
    gold = f"flores_gold_offset = {offset}\n" if offset else ""
    return f"""# benchmarks/regime.py: {regime.title}, seed {seed} (issue 36)
[study]
name = "{study_dir(regime, seed, arm, path)[len("study-"):]}"
languages = {json.dumps(LANGS)}
flores_lines = {FLORES_LINES}
ntrex_lines = 300
tatoeba_lines = 0
seed = 0

{PROXIES_TOML}
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
{gold}
[analysis]
bootstrap = 1000
permutations = 1000
confidence = 0.95
{encoders_text(regime, regime.checkpoint_dir(seed), path)}"""


def timed(cmd: list[str], cwd: Path) -> dict:
    """Run an xsimpp command; its wall time and the peak RSS of the children so far."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd)
    if proc.returncode != 0:
        raise SystemExit(f"regime: {' '.join(cmd[2:4])} failed with exit {proc.returncode}")
    return {"seconds": round(time.perf_counter() - t0, 1),
            "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20, 2)}


def train(regime: Regime, seed: int, work: Path) -> dict:
    return timed([sys.executable, "-m", "xsimpp", "train", "distill", *regime.distill,
                  "--steps", str(STEPS), "--save-every", str(SAVE_EVERY), "--hold-out-dev", str(HOLD_OUT),
                  "--seed", str(seed), "--out", regime.checkpoint_dir(seed), "--overwrite",
                  "--log-every", "30", "--no-progress"], work)


def study(regime: Regime, seed: int, work: Path, done: dict, save, path: str | None = None) -> dict:
    """The seed's study in every arm, one after the other: the later ones find every vector but the
    near-duplicates' and the moved gold's in the encoders' caches. An arm already timed in `done`
    whose folder holds a finished study of the same config is kept, so an interrupted `study`
    resumes where it stopped; `save` records each arm's time as soon as it is known."""
    out = dict(done)
    for arm in ARMS:
        folder = work / study_dir(regime, seed, arm, path)
        cfg = folder.with_name(folder.name + ".toml")
        text = config_text(regime, seed, arm, path)
        if (arm in out and (folder / "study.json").is_file() and (folder / "config.toml").is_file()
                and (folder / "config.toml").read_text(encoding="utf-8") == text):
            continue
        cfg.write_text(text, encoding="utf-8")
        out[arm] = timed([sys.executable, "-m", "xsimpp", "study", str(cfg), "--out", folder.name, "--overwrite",
                          "--no-progress"], work)
        save(out)
    return out


def keep(regime: Regime, seed: int, work: Path, timing: dict, path: str | None = None) -> Path:
    """Copy the seed's small files into benchmarks/results (written whole, then renamed); a run
    with ``path`` into its own folder, ``<path>/seed<S>``, beside the committed seeds."""
    from machine import cpu_info

    dest = (regime.results / path if path else regime.results) / f"seed{seed}"
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "manifests").mkdir(parents=True)
    for arm in ARMS:
        src, to = work / study_dir(regime, seed, arm, path), tmp / arm
        to.mkdir()
        for name in KEEP:
            shutil.copy2(src / name, to / name)
        for p in sorted(src.glob("ranking_*.json")) + sorted(src.glob("costs_cold.csv")):
            shutil.copy2(p, to / p.name)
    for ckpt in sorted((work / regime.checkpoint_dir(seed)).glob("step-*")):
        shutil.copy2(ckpt / "xsimpp_training.json", tmp / "manifests" / f"{ckpt.name}.json")
    (tmp / "timing.json").write_text(json.dumps({**timing, "machine": timing.get("machine") or cpu_info()}, indent=1)
                                     + "\n", encoding="utf-8")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


# -- analysis: only the committed files ------------------------------------------------------------

def seed_folders(regime: Regime) -> list[Path]:
    return seed_dirs(regime.results)


def seed_dirs(root: Path) -> list[Path]:
    """The finished ``seed<S>`` folders under ``root``, by seed."""
    return sorted((p for p in root.glob("seed*") if p.is_dir() and not p.name.endswith(".tmp")),
                  key=lambda p: int(p.name[4:]))


def analyse_seed(folder: Path, start: str) -> dict:
    """Every arm of one seed (``analyse_study``), and the seed's timing."""
    return {"seed": int(folder.name[4:]),
            "arms": {arm: analyse_study(folder / arm, start) for arm in ARMS if (folder / arm).is_dir()},
            "timing": json.loads((folder / "timing.json").read_text(encoding="utf-8"))}


def analyse_study(folder: Path, start: str) -> dict:
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
        views[truth] = _views(frame, lower, kw, start)
    frame = cells_frame
    cols = ["xsim[ratio]", "xsim[absolute]", "xsim++[strict]", "xsim++[strict,absolute]", "err_strict_causality",
            "err_strict_entity", "err_strict_number", "err_strict_misaligned", TRUTH]
    per_system = frame.groupby("system", sort=False)[cols].mean()
    return {"views": views,
            "per_system": {s: {c: float(v) for c, v in row.items()} for s, row in per_system.iterrows()}}


def _views(frame, lower: dict, kw: dict, start: str) -> dict:
    """Accuracy per proxy and kind of pair, with and without the untrained start's cells."""
    from scipy.stats import false_discovery_control

    from xsimpp.tasks.ranking import RankingTable, evaluate_table

    views = {}
    for view, sub in (("with_start", frame), ("without_start", frame[frame["system"] != start])):
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


PATHS = ("torch-float32", "openvino-float32")
# a cell's value that is not a count or a score: the cross-validated margin threshold, where two
# numeric paths may differ in the last bits without moving any count
CONTINUOUS = ("mining_threshold_cv",)


def compare_rerun(folder: Path, committed: Path) -> dict:
    """A seed studied again on another numeric path (``<path>/seed<S>``) against the committed
    seed: per arm, the cells whose proxies or ground truths differ, and the wall times of both."""
    import numpy as np
    import pandas as pd

    arms = {}
    for arm in ARMS:
        if not (folder / arm / "cells.csv").is_file():
            continue
        a = pd.read_csv(committed / arm / "cells.csv")
        b = pd.read_csv(folder / arm / "cells.csv")
        if list(a.columns) != list(b.columns) or len(a) != len(b):
            raise SystemExit(f"regime: {folder / arm} does not hold the cells of {committed / arm}")
        m = a.merge(b, on=["system", "direction"], suffixes=("", "@rerun"))
        compared = [c for c in a.columns if pd.api.types.is_numeric_dtype(a[c]) and c not in CONTINUOUS]
        x, y = m[compared].to_numpy(float), m[[c + "@rerun" for c in compared]].to_numpy(float)
        differ = ~((x == y) | (np.isnan(x) & np.isnan(y))).all(axis=1)  # NaN: no gold of that kind in both
        gap = max(float((m[c] - m[c + "@rerun"]).abs().fillna(0).max()) for c in CONTINUOUS)
        arms[arm] = {"cells": int(len(m)), "columns": len(compared), "cells_differing": int(differ.sum()),
                     "max_continuous_gap": gap}
    timing = json.loads((folder / "timing.json").read_text(encoding="utf-8"))
    done = json.loads((committed / "timing.json").read_text(encoding="utf-8"))
    return {"seed": int(folder.name[4:]), "arms": arms, "timing": timing, "committed_timing": done}


def analyse(regime: Regime) -> dict:
    seeds = [analyse_seed(f, regime.start_label) for f in seed_folders(regime)]
    if not seeds:
        raise SystemExit(f"regime: no seed folders under {regime.results}; run `python benchmarks/regime.py run "
                         f"--regime {regime.name}` first")
    reruns = {path: [compare_rerun(f, regime.results / f.name) for f in seed_dirs(regime.results / path)]
              for path in PATHS if (regime.results / path).is_dir()}
    return {"regime": regime.name, "seeds": seeds, "reruns": reruns}


def _pct(x) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}"


def _spread(values: list[float]) -> str:
    """mean over seeds, and the range when there are several."""
    vals = [v for v in values if v == v]
    if not vals:
        return "-"
    mean = sum(vals) / len(vals)
    return _pct(mean) if len(vals) == 1 else f"{_pct(mean)} ({_pct(min(vals))}-{_pct(max(vals))})"


def _seed_list(seeds: list[dict]) -> str:
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(str(s["seed"]) for s in seeds)


def _seconds(stage: dict | None) -> str:
    return "-" if not stage else f"{stage['seconds']:.0f}"


def _accuracy_table(seeds: list[dict], truth: str, arm: str, what: str) -> list[str]:
    """Accuracy per proxy and kind of pair in one arm (mean over seeds, range), with each seed's
    BH-corrected p against xsim[ratio]."""
    seeds = [s for s in seeds if arm in s["arms"]]
    if not seeds:
        return []
    first = seeds[0]["arms"][arm]["views"][truth]
    rows = ["", f"Against `{truth}`{what} ({_seed_list(seeds)}; {first['with_start']['languages']} languages; pairs: all "
                f"{first['with_start']['pairs']}, within {first['with_start']['within_pairs']} with the start, "
                f"{first['without_start']['within_pairs']} without, across {first['with_start']['across_pairs']}):",
            "", "| proxy | all pairs | within, with the start | within, checkpoints only | across models | "
                "p within vs xsim[ratio] (BH; with / without the start), per seed |", "|---|---|---|---|---|---|"]
    for p in PROXIES:
        ws = [s["arms"][arm]["views"][truth]["with_start"]["proxies"][p] for s in seeds]
        wo = [s["arms"][arm]["views"][truth]["without_start"]["proxies"][p] for s in seeds]
        pv = "-" if p == PROXIES[0] else ", ".join(
            f"{w['p_within_vs_xsim_ratio_bh']:.3f} / {o['p_within_vs_xsim_ratio_bh']:.3f}" for w, o in zip(ws, wo))
        rows.append(f"| {p} | {_spread([w['all'] for w in ws])} | {_spread([w['within'] for w in ws])} | "
                    f"{_spread([w['within'] for w in wo])} | {_spread([w['across'] for w in ws])} | {pv} |")
    return rows


def markdown(res: dict) -> list[str]:
    """The docs' tables of one regime: accuracy per proxy and kind of pair (mean over seeds, range)
    on both gold sets, with gold apart from the proxies' lines and as near-duplicates join the pool;
    mining F1 per encoder by density; the per-checkpoint means (seed by seed)."""
    seeds = res["seeds"]
    rows = _accuracy_table(seeds, TRUTH, "near0", "") + _accuracy_table(seeds, NTREX_TRUTH, "near0", "")
    rows += _accuracy_table(seeds, TRUTH, "disjoint", f" with the FLORES gold apart from the proxies' lines "
                                                      f"(devtest[{FLORES_LINES}:{2 * FLORES_LINES}] + NTREX)")
    dense = list(DENSITIES)  # every seed folder holds every density
    counts = [str(ARMS[d][0]) for d in dense]
    rows += ["", f"Against `{TRUTH}` as near-duplicates join the pool ({' / '.join(counts)} per gold "
                 f"line; {_seed_list(seeds)}):", "",
             "| proxy | within, checkpoints only | across models |", "|---|---|---|"]
    for p in PROXIES:
        cells = []
        for kind, view in (("within", "without_start"), ("across", "with_start")):
            cells.append(" / ".join(_spread([s["arms"][d]["views"][TRUTH][view]["proxies"][p][kind]
                                             for s in seeds]) for d in dense))
        rows.append(f"| {p} | {cells[0]} | {cells[1]} |")
    rows += ["", "| encoder | " + " | ".join(f"{TRUTH}, {n} near-duplicates" for n in counts) + " |",
             "|---|" + "---|" * len(dense)]
    for system in seeds[0]["arms"]["near0"]["per_system"]:
        rows.append(f"| {system} | " + " | ".join(
            _spread([s["arms"][d]["per_system"][system][TRUTH] / 100 for s in seeds]) for d in dense) + " |")
    rows += ["", "Wall time per seed (s; `timing.json`: the machine each ran on, and notes on what shared it):", "",
             "| seed | training | " + " | ".join(f"study, {arm}" for arm in ARMS) + " |", "|---|---|" + "---|" * len(ARMS)]
    for s in seeds:
        t = s["timing"]
        study_t = t.get("study", {})
        cold = {arm: study_t[f"{arm}_cold"]["seconds"] for arm in ARMS if f"{arm}_cold" in study_t}
        rows.append(f"| {s['seed']} | {_seconds(t.get('train'))} | " + " | ".join(
            _seconds(study_t.get(arm)) + (f" (cold {cold[arm]:.0f})" if arm in cold else "") for arm in ARMS) + " |")
    for path, reruns in res.get("reruns", {}).items():
        for r in reruns:
            arms = [a for a in ARMS if a in r["arms"]]
            rows += ["", f"Seed {r['seed']} studied again with every hf encoder on `{path}` (`--path {path}`; "
                         f"`{path}/seed{r['seed']}/`), against the committed run:", "",
                     "| arm | cells differing (any proxy or ground truth) | largest change of a cross-validated "
                     "threshold | wall time (s), this run | wall time (s), committed run |", "|---|---|---|---|---|"]
            for a in arms:
                v = r["arms"][a]
                rows.append(f"| {a} | {v['cells_differing']} of {v['cells']} ({v['columns']} columns) | "
                            f"{v['max_continuous_gap']:.1e} | {_seconds(r['timing']['study'].get(a))} | "
                            f"{_seconds(r['committed_timing']['study'].get(a))} |")

            def total(timing: dict) -> str:  # the arms' sum, and the peak RSS of the children over them all
                study_t = [timing["study"][a] for a in arms if a in timing["study"]]
                return (f"{sum(t['seconds'] for t in study_t):.0f} (peak RSS "
                        f"{max(t['peak_rss_gib'] for t in study_t):.2f} GiB)")

            rows.append(f"| all | | | {total(r['timing'])} | {total(r['committed_timing'])} |")
    for s in seeds:
        rows.append("")
        rows.append(f"Seed {s['seed']} (means over the ten languages; error counts of 300 lines):")
        rows.append("")
        rows.append("| encoder | xsim[ratio] | xsim[absolute] | xsim++[strict] | xsim++[strict,absolute] | causality | "
                    "entity | number | misaligned | mining F1 |")
        rows.append("|---|---|---|---|---|---|---|---|---|---|")
        for system, v in s["arms"]["near0"]["per_system"].items():
            rows.append(f"| {system} | {v['xsim[ratio]']:.2f} | {v['xsim[absolute]']:.2f} | {v['xsim++[strict]']:.2f} | "
                        f"{v['xsim++[strict,absolute]']:.2f} | {v['err_strict_causality']:.1f} | "
                        f"{v['err_strict_entity']:.1f} | {v['err_strict_number']:.1f} | "
                        f"{v['err_strict_misaligned']:.1f} | {v[TRUTH]:.2f} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "train", "study", "analyse"):
        p = sub.add_parser(name)
        p.add_argument("--regime", choices=sorted(REGIMES), default="saturated",
                       help="saturated: e5-small onto itself (the paper's regime, default); minilm: a weak student")
        if name == "analyse":
            p.add_argument("--markdown", action="store_true", help="print the docs' tables")
            p.add_argument("--json", type=Path, help="write the analysis here")
        else:
            p.add_argument("--seeds", type=bounds.counts(0, bounds.MAX_SEED), default="0", help="comma-separated seeds (default 0)")
            p.add_argument("--workdir", type=Path, default=Path("regime-work"), help="checkpoints and full study folders")
            p.add_argument("--path", choices=("torch-float32", "openvino-float32"),
                           help="the numeric path of every hf encoder in the studies (default: each encoder's own, "
                                "as the committed seeds ran); results then go to regime_<regime>/<path>/seed<S>")
    args = ap.parse_args(argv)
    regime = REGIMES[args.regime]
    if args.cmd == "analyse":
        res = analyse(regime)
        if args.json:
            args.json.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print("\n".join(markdown(res)) if args.markdown else json.dumps(res, indent=1, sort_keys=True))
        return 0
    os.environ.setdefault("XSIMPP_DATA_DIR", str(ROOT.parent / "shared" / "data"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        # each stage's time, kept in the workdir so `train` and `study` may run as separate calls
        log = args.workdir / f"timing-{regime.name}-seed{seed}{'-' + args.path if args.path else ''}.json"
        timing = json.loads(log.read_text(encoding="utf-8")) if log.is_file() else {}

        def save(stage_timing, stage="study"):
            timing[stage] = stage_timing
            log.write_text(json.dumps(timing, indent=1) + "\n", encoding="utf-8")

        if args.cmd in ("run", "train"):
            save(train(regime, seed, args.workdir), "train")
        if args.cmd in ("run", "study"):
            save(study(regime, seed, args.workdir, timing.get("study", {}), save, args.path))
            print(f"seed {seed}: {keep(regime, seed, args.workdir, timing, args.path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
