"""The saturated regime asked again with the test side done as the paper did it (issue 54): do
xsim++'s proxies rank the checkpoints of one model better than xsim once the proxies score all 1 012
FLORES devtest lines (ties rare), the ground truth is apart from every proxy line, seeds resample the
test side, and the ground truth's own uncertainty is measured?

What differs from `regime.py`'s `saturated` arms (same student, teacher, lr, steps, checkpoints and
encoder families):

- **proxies**: xsim and xsim++ on all 1 012 devtest lines of the paper's ten languages (300 before);
- **training**: `xsimpp train distill --hold-out-dev 600`: the student never sees FLORES dev lines
  0-599 (397 dev lines per language train it instead of 697);
- **ground truth**, mining F1 with nothing of it among the proxies' lines: FLORES **dev** lines
  300-599 (held out of training; `[mining] flores_gold_split = "dev"`), NTREX-128 (500 lines drawn
  with the seed, 6 languages) and Tatoeba v1 (every pair of fao and swh, the two of the ten it has);
  dev lines 0-299 stay the unpaired sources. Per domain: `mining_f1_flores` (FLORES dev, ten
  languages), `mining_f1_ntrex` (news), `mining_f1_tatoeba` (short everyday sentences);
- **seeds** resample the test side too: `[study] seed = S` draws the NTREX lines, the distractor
  pool and the cross-validation folds (each seed's draw is in its `study.json`); the proxies' lines
  are the whole devtest set, so only their vectors change between seeds;
- **per-sentence outcomes** of every mining F1 (`mining_outcomes.json.gz`), so the gold can be
  bootstrapped (`xsimpp.scoring.bucc.bootstrap_f1`) and a checkpoint pair's ground-truth order
  called resolved or not.

    python benchmarks/regime_full.py run --seeds 0 --workdir /tmp/regime-full   # train + study
    python benchmarks/regime_full.py analyse --markdown                         # the docs' tables

Results: benchmarks/results/regime_saturated_full/seed<S>/full/ (config.toml, cells.csv,
study.json, costs.csv, summary.txt, ranking_*.json, mining_outcomes.json.gz), the checkpoints'
training manifests and timing.json; no vectors, no weights.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bounds  # noqa: E402
import regime as R  # noqa: E402  (the saturated regime: student, families, steps, the timed runner)

RESULTS = R.RESULTS / "regime_saturated_full"
REGIME = R.REGIMES["saturated"]
HOLD_OUT = 600  # dev lines the student never sees: 0-299 unpaired sources, 300-599 gold
DEV_GOLD = (300, 300)  # (first dev line, lines) of the FLORES gold
NTREX_LINES = 500  # drawn with the seed from NTREX-128's 1 997
PATH = "openvino-float32"  # every hf encoder's numeric path (the default e5-small's; same errors as torch)
ARM = "full"
KEEP = R.KEEP + ("mining_outcomes.json.gz",)


def config_text(seed: int) -> str:
    """The study of one seed's checkpoints with the test side apart (run from the workdir)."""
    offset, lines = DEV_GOLD
    return f"""# benchmarks/regime_full.py: the saturated regime, all 1 012 proxy lines, gold apart, seed {seed} (issue 54)
[study]
name = "saturated-full-seed{seed}"
languages = {json.dumps(R.LANGS)}
flores_lines = 0   # the proxies: all 1 012 devtest lines
flores_gold_lines = {lines}   # the FLORES gold: dev lines {offset}-{offset + lines - 1}
ntrex_lines = {NTREX_LINES}
tatoeba_lines = 0
seed = {seed}   # draws the NTREX gold, the pool and the folds

{R.PROXIES_TOML}
[mining]
distractors = 5000
whole_sources = ["ntrex128", "oldi-seed"]
fill_sources = ["tatoeba", "tatoeba-challenge"]
margin = "ratio"
k = 4
folds = 5
fixed_threshold = 1.06
unpaired_sources = {R.HOLD_OUT}
flores_gold_split = "dev"
flores_gold_offset = {offset}
ntrex_sample = "seeded"
tatoeba_gold = true

[analysis]
bootstrap = 1000
permutations = 1000
confidence = 0.95
{R.encoders_text(REGIME, checkpoint_dir(seed), PATH)}"""


def checkpoint_dir(seed: int) -> str:
    return f"regime-full-{REGIME.prefix}-seed{seed}"


def train(seed: int, work: Path) -> dict:
    return R.timed([sys.executable, "-m", "xsimpp", "train", "distill", *REGIME.distill,
                    "--steps", str(R.STEPS), "--save-every", str(R.SAVE_EVERY), "--hold-out-dev", str(HOLD_OUT),
                    "--seed", str(seed), "--out", checkpoint_dir(seed), "--overwrite",
                    "--log-every", "30", "--no-progress"], work)


def study(seed: int, work: Path) -> dict:
    folder = work / f"study-saturated-full-seed{seed}"
    cfg = folder.with_name(folder.name + ".toml")
    cfg.write_text(config_text(seed), encoding="utf-8")
    return R.timed([sys.executable, "-m", "xsimpp", "study", str(cfg), "--out", folder.name, "--overwrite",
                    "--no-progress"], work)


def keep(seed: int, work: Path, timing: dict) -> Path:
    """Copy the seed's small files into benchmarks/results (written whole, then renamed)."""
    from machine import cpu_info

    dest = RESULTS / f"seed{seed}"
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "manifests").mkdir(parents=True)
    src, to = work / f"study-saturated-full-seed{seed}", tmp / ARM
    to.mkdir()
    for name in KEEP:
        shutil.copy2(src / name, to / name)
    for p in sorted(src.glob("ranking_*.json")):
        shutil.copy2(p, to / p.name)
    for ckpt in sorted((work / checkpoint_dir(seed)).glob("step-*")):
        shutil.copy2(ckpt / "xsimpp_training.json", tmp / "manifests" / f"{ckpt.name}.json")
    (tmp / "timing.json").write_text(json.dumps({**timing, "machine": timing.get("machine") or cpu_info()}, indent=1)
                                     + "\n", encoding="utf-8")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    return dest


# -- analysis: only the committed files ------------------------------------------------------------

# The ground truths, one per domain (and all gold pooled): (column, what it is, its gold's tag in the
# outcomes; None: every source sentence, the unpaired ones included)
TRUTHS = (("mining_f1_flores", "FLORES dev gold (held out of training; 10 languages)", "flores"),
          ("mining_f1_ntrex", "NTREX-128 gold (news; 6 languages)", "ntrex"),
          ("mining_f1_tatoeba", "Tatoeba v1 gold (short everyday sentences; fao and swh)", "tatoeba"),
          ("mining_f1", "all gold pooled (FLORES dev + NTREX + Tatoeba, with the unpaired sources)", None))
N_BOOT = 1000  # gold resamples per language and ground truth
RULES = ("as_errors", "as_half")


def read_outcomes(folder: Path) -> dict[tuple[str, str], dict]:
    """``mining_outcomes.json.gz`` of a study folder: (system, language) -> its per-sentence table."""
    import gzip

    data = json.loads(gzip.decompress((folder / "mining_outcomes.json.gz").read_bytes()))
    return {(c["system"], c["lang"]): c for c in data["cells"]}


def resolution(cells, outcomes: dict, truth: str, tag: str | None, family: str, seed: int) -> dict:
    """The gold's own uncertainty for the within-model pairs of ``family``: per language, F1 of every
    checkpoint on ``N_BOOT`` resamples of the gold sentences (paired: the same resample for all,
    ``bootstrap_f1``); a pair is *resolved* when the 95 % percentile interval of its F1 difference
    excludes 0. Returns each resolved pair's gold order (+1: the first system better) by language."""
    import numpy as np

    from xsimpp.scoring.bucc import bootstrap_f1

    resolved, gaps = {}, []
    for lang, sub in cells[cells["family"] == family].groupby("lang", sort=False):
        if sub[truth].isna().all():
            continue
        systems = sub["system"].tolist()
        tables = [outcomes[(s, lang)] for s in systems]
        tags = np.array(tables[0]["tags"])
        units = np.ones(len(tags), bool) if tag is None else tags == tag
        gold = np.array(tables[0]["gold"])[units]
        e = np.stack([np.array(t["views"][truth]["extracted"])[units] for t in tables])
        c = np.stack([np.array(t["views"][truth]["correct"])[units] for t in tables])
        boot = bootstrap_f1(e, c, gold, N_BOOT, seed)
        f1 = sub[truth].to_numpy(float) / 100
        for i in range(len(systems)):
            for j in range(i + 1, len(systems)):
                d = boot[:, i] - boot[:, j]
                lo, hi = np.percentile(d, [2.5, 97.5])
                gaps.append(abs(f1[i] - f1[j]))
                if lo > 0 or hi < 0:
                    resolved[(lang, systems[i], systems[j])] = 1 if lo > 0 else -1
    n_pairs = len(gaps)
    return {"resolved": resolved, "pairs": n_pairs, "median_gap": float(np.median(gaps)) if gaps else float("nan")}


def resolved_accuracy(cells, resolved: dict, proxy: str) -> dict:
    """A proxy (lower is better) on the resolved pairs only: agreement with ties as errors and as 1/2,
    pooled and per language (for the sign-flip over languages)."""
    value = {(r["lang"], r["system"]): r[proxy] for _, r in cells.iterrows()}
    per_lang: dict[str, list[tuple[float, float]]] = {}
    for (lang, a, b), order in resolved.items():
        d = value[(lang, b)] - value[(lang, a)]  # > 0: a makes fewer errors, so the proxy puts a first
        sign = (d > 0) - (d < 0)
        per_lang.setdefault(lang, []).append((float(sign == order), 1.0 if sign == order else 0.5 if sign == 0 else 0.0))
    flat = [x for v in per_lang.values() for x in v]
    out = {"pairs": len(flat)}
    for k, rule in enumerate(RULES):
        out[rule] = sum(x[k] for x in flat) / len(flat) if flat else float("nan")
        out[f"{rule}_by_language"] = {lang: sum(x[k] for x in v) / len(v) for lang, v in per_lang.items()}
    return out


def e5_rate(costs: list[dict], cells) -> dict:
    """The study's encoding rate of the regime's own encoders (the start and its checkpoints, on
    ``openvino-float32``): the median over those that encoded at least 1 000 sentences in this run
    (a seed whose cache already held an encoder's vectors encodes few or none of them)."""
    import statistics

    family = set(cells.loc[cells["family"] == REGIME.family, "system"])
    rates = [c["encoded"] / c["encode_seconds"] for c in costs
             if c["encoder"] in family and c["encoded"] >= 1000 and c["encode_seconds"] > 0]
    return {"encoders": len(rates), "median": statistics.median(rates) if rates else float("nan")}


def analyse_seed_full(folder: Path) -> dict:
    """One seed: per ground truth, the tie view of every proxy (three rules, sign-flip over
    languages: ``regime_ties.tie_view``), the gold's resolution and the accuracy on resolved pairs."""
    import pandas as pd

    import regime_ties as T
    from study_rerank import read_study

    meta, rows = read_study(folder / ARM)
    cells = pd.DataFrame(rows)
    outcomes = read_outcomes(folder / ARM)
    seed = int(folder.name[4:])
    out = {"seed": seed, "data": meta["data"], "truths": {}, "encoded": sum(c["encoded"] for c in meta["costs"]),
           "requested": sum(c["requested"] for c in meta["costs"]), "e5_rate": e5_rate(meta["costs"], cells),
           "timing": json.loads((folder / "timing.json").read_text(encoding="utf-8"))}
    for truth, _, tag in TRUTHS:
        frame = cells[cells[truth].notna()].reset_index(drop=True)
        within = frame[frame["family"] == REGIME.family].reset_index(drop=True)
        res = resolution(frame, outcomes, truth, tag, REGIME.family, seed)
        resolved = {p: resolved_accuracy(within, res["resolved"], p) for p in R.PROXIES}
        a, b = T.HEADLINE
        langs = sorted(set(resolved[a]["as_errors_by_language"]) & set(resolved[b]["as_errors_by_language"]))
        flips = {}
        for rule in RULES:
            diffs = [resolved[b][f"{rule}_by_language"][lg] - resolved[a][f"{rule}_by_language"][lg] for lg in langs]
            if len(diffs) >= 2:
                t = T.ranking.sign_flip_test(diffs)
                flips[rule] = {"p": t.p_value, "mean_difference": t.delta, "languages": len(diffs)}
        out["truths"][truth] = {
            "ties": T.tie_view(within, truth),
            "gold": {"pairs": res["pairs"], "resolved": len(res["resolved"]), "median_gap": res["median_gap"]},
            "resolved": {p: {k: v for k, v in r.items() if not k.endswith("_by_language")} for p, r in resolved.items()},
            "resolved_sign_flip": flips}
    return out


def analyse(results: Path = RESULTS) -> dict:
    seeds = [analyse_seed_full(f) for f in R.seed_dirs(results)]
    if not seeds:
        raise SystemExit(f"regime_full: no seed folders under {results}; run `python benchmarks/regime_full.py run` "
                         "first")
    res = {"seeds": seeds}
    add_bh(res)
    return res


def table_ps(res: dict) -> list[dict]:
    """Every p-value the tables report (ground truths x seeds x {all pairs, resolved pairs} x rules):
    the family the Benjamini-Hochberg correction runs over."""
    out = []
    for s in res["seeds"]:
        for truth, *_ in TRUTHS:
            t = s["truths"][truth]
            out += [t["ties"]["sign_flip"][rule] for rule in RULES]
            out += [t["resolved_sign_flip"][rule] for rule in RULES if rule in t["resolved_sign_flip"]]
    return out


def add_bh(res: dict) -> None:
    from scipy.stats import false_discovery_control

    ps = [f for f in table_ps(res) if f["p"] == f["p"]]  # NaN: fewer than two languages, no test
    for f, adj in zip(ps, false_discovery_control([f["p"] for f in ps], method="bh")):
        f["p_bh"] = float(adj)


def markdown(res: dict) -> list[str]:
    """The docs' tables: per ground truth and seed, the headline pair under the three rules with the
    sign-flip p over languages (all within-model pairs, then the gold-resolved ones), and every proxy's
    accuracy on the resolved pairs."""
    import regime_ties as T

    a, b = T.HEADLINE
    pct = R._pct
    rows = [f"Within the model (the start and its 8 checkpoints, 36 pairs per language), {a} / {b}: share of pairs "
            "each ties; accuracy with ties as errors (mt-metrics-eval's rule), as ½ (over pairs whose F1 differs) and "
            "tie-calibrated (ε fitted on the pairs); p: exact sign-flip test over languages of the per-language "
            f"difference, {b} minus {a} (as errors / as ½), Benjamini-Hochberg adjusted over all "
            f"{sum(f['p'] == f['p'] for f in table_ps(res))} "
            "p-values of these tables in brackets ('-': fewer than two languages to test over). *Resolved*: pairs whose F1 difference's 95 % bootstrap interval "
            f"over the gold sentences ({N_BOOT} paired resamples) excludes 0.", ""]
    rows += ["| ground truth | seed | pairs | tied | ties as errors | ties as ½ | tie-calibrated | p, all pairs | "
             "resolved / pairs (median |ΔF1|) | on resolved: as errors | as ½ | p, resolved pairs |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def pv(f: dict | None) -> str:
        return "-" if not f or f["p"] != f["p"] else f"{f['p']:.3f} ({f['p_bh']:.3f})"

    for truth, title, _ in TRUTHS:
        for s in res["seeds"]:
            t = s["truths"][truth]
            v = t["ties"]
            pa, pb = v["proxies"][a], v["proxies"][b]
            ra, rb = t["resolved"][a], t["resolved"][b]
            g = t["gold"]
            flip, rflip = v["sign_flip"], t["resolved_sign_flip"]
            rows.append(
                f"| {title.split(' (')[0]} | {s['seed']} | {pa['pairs']} | {pct(pa['tie_share'])} / {pct(pb['tie_share'])} | "
                f"{pct(pa['as_errors'])} / {pct(pb['as_errors'])} | {pct(pa['as_half'])} / {pct(pb['as_half'])} | "
                f"{pct(pa['calibrated'])} / {pct(pb['calibrated'])} | "
                f"{pv(flip['as_errors'])} / {pv(flip['as_half'])} | {g['resolved']} / {g['pairs']} "
                f"({100 * g['median_gap']:.2f}) | {pct(ra['as_errors'])} / {pct(rb['as_errors'])} | "
                f"{pct(ra['as_half'])} / {pct(rb['as_half'])} | "
                f"{pv(rflip.get('as_errors'))} / {pv(rflip.get('as_half'))} |")
    for truth, title, _ in TRUTHS:
        rows += ["", f"Every proxy against {title} (`{truth}`), within the model, seed by seed (% of pairs):", "",
                 "| proxy | tied | ties as errors | ties as ½ | tie-calibrated (ε) | on resolved pairs, as errors | "
                 "on resolved pairs, as ½ |", "|---|---|---|---|---|---|---|"]
        for p in R.PROXIES:
            v = [s["truths"][truth]["ties"]["proxies"][p] for s in res["seeds"]]
            r = [s["truths"][truth]["resolved"][p] for s in res["seeds"]]

            def each(xs: list[dict], key: str) -> str:
                return " / ".join(pct(x[key]) for x in xs)

            cal = " / ".join(f"{pct(x['calibrated'])} ({x['epsilon']:g})" for x in v)
            rows.append(f"| {p} | {each(v, 'tie_share')} | {each(v, 'as_errors')} | {each(v, 'as_half')} | {cal} | "
                        f"{each(r, 'as_errors')} | {each(r, 'as_half')} |")
    rows += ["", "Cost per seed (s; `timing.json`, machine and load there; a study encodes only what the "
             "cache lacks, so *encoded* of *requested* says how cold it ran):", "",
             "| seed | training | study | sentences encoded / requested | e5 start and checkpoints, sentences/s "
             "(median; encoders) |", "|---|---|---|---|---|"]
    for s in res["seeds"]:
        t = s["timing"]
        rows.append(f"| {s['seed']} | {R._seconds(t.get('train'))} | {R._seconds(t.get('study'))} | "
                    f"{s['encoded']} / {s['requested']} | {s['e5_rate']['median']:.1f} ({s['e5_rate']['encoders']}) |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "train", "study", "analyse"):
        p = sub.add_parser(name)
        if name == "analyse":
            p.add_argument("--markdown", action="store_true", help="print the docs' tables")
            p.add_argument("--json", type=Path, help="write the analysis here")
        else:
            p.add_argument("--seeds", type=bounds.counts(0, bounds.MAX_SEED), default="0",
                           help="comma-separated seeds (default 0)")
            p.add_argument("--workdir", type=Path, default=Path("regime-full-work"),
                           help="checkpoints and full study folders")
    args = ap.parse_args(argv)
    if args.cmd == "analyse":
        res = analyse(RESULTS)
        if args.json:
            args.json.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print("\n".join(markdown(res)) if args.markdown else json.dumps(res, indent=1, sort_keys=True))
        return 0
    os.environ.setdefault("XSIMPP_DATA_DIR", str(R.ROOT.parent / "shared" / "data"))
    args.workdir.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        log = args.workdir / f"timing-full-seed{seed}.json"
        timing = json.loads(log.read_text(encoding="utf-8")) if log.is_file() else {}

        def save(stage: str, stage_timing: dict) -> None:
            timing[stage] = stage_timing
            log.write_text(json.dumps(timing, indent=1) + "\n", encoding="utf-8")

        if args.cmd in ("run", "train"):
            save("train", train(seed, args.workdir))
        if args.cmd in ("run", "study"):
            save("study", study(seed, args.workdir))
            print(f"seed {seed}: {keep(seed, args.workdir, timing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
