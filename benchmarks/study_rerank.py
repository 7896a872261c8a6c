"""Re-rank a finished study's cells with this version's analysis (e.g. a report folder written
before within- and across-model CIs existed): reads CELLS.csv and study.json from the folder,
prints each ground truth's ranking table as `xsimpp study` prints it, and with --compare A,B the
one-sided PERM-BOTH test of A over B on all, within-model and across-model pairs. --systems keeps
only the named encoders: each encoder's cells are mined and scored on their own, so this is the
table a study of just those encoders would print.

    python benchmarks/study_rerank.py benchmarks/results/study_small --compare "xsim++[strict],xsim[ratio]"
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xsimpp.study.output import ranking_text  # noqa: E402
from xsimpp.study.run import _rank_all  # noqa: E402
from xsimpp.tasks.ranking import RankingTable, evaluate_table  # noqa: E402


def fail(message: str) -> SystemExit:
    """One sentence on stderr, exit 2 (as xsimpp's commands end on bad input)."""
    print(f"study_rerank: error: {message}", file=sys.stderr)
    return SystemExit(2)


def read_study(folder: Path) -> tuple[dict, list[dict]]:
    """study.json and cells.csv of a report folder, checked: readable, of the shape `xsimpp study`
    writes, and no row cut short (a cells.csv cut mid-row would otherwise rank fewer encoders)."""
    import pandas as pd

    if not folder.is_dir():
        raise fail(f"{folder} is not a study report folder")
    try:
        meta = json.loads((folder / "study.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise fail(f"cannot read {folder / 'study.json'} ({e})") from None
    cfg = meta.get("config") if isinstance(meta, dict) else None
    if not isinstance(cfg, dict) or not isinstance(meta.get("proxies"), list) \
            or not all(isinstance(cfg.get(k), int) for k in ("bootstrap", "permutations", "seed")):
        raise fail(f"{folder / 'study.json'} is not a study.json of `xsimpp study` (config, proxies)")
    import csv
    import io

    try:
        text = (folder / "cells.csv").read_text(encoding="utf-8")
        frame = pd.read_csv(io.StringIO(text))
    except (OSError, ValueError) as e:
        raise fail(f"cannot read {folder / 'cells.csv'} ({e})") from None
    rows = list(csv.reader(io.StringIO(text)))
    short = [i for i, row in enumerate(rows[1:], 2) if len(row) != len(rows[0])]
    if short or not text.endswith("\n"):  # `xsimpp study` ends every row, the last one too
        raise fail(f"{folder / 'cells.csv'} row {short[0] if short else len(rows)} is incomplete (the file was cut "
                   "short?)")
    needed = {"system", "family", "lang", "direction", *meta["proxies"]}
    if not needed <= set(frame.columns):
        raise fail(f"{folder / 'cells.csv'} lacks the columns {', '.join(sorted(needed - set(frame.columns)))}")
    # every column but the cell's names holds numbers (a proxy, a ground truth, a count)
    for column in frame.columns.difference(["system", "family", "lang", "direction"], sort=False):
        numbers = pd.to_numeric(frame[column], errors="coerce")
        bad = frame[column].notna() & numbers.isna()
        if bad.any():
            row = int(bad.idxmax())
            raise fail(f"{folder / 'cells.csv'} row {row + 2} has {frame[column][row]!r} in the column {column}, "
                       "which holds numbers")
        frame[column] = numbers
    cut = frame[frame[["system", "lang", "direction"]].isna().any(axis=1) | frame[meta["proxies"]].isna().all(axis=1)]
    if len(cut):
        raise fail(f"{folder / 'cells.csv'} row {int(cut.index[0]) + 2} is incomplete (the file was cut short?)")
    per_system = frame.groupby("system")["lang"].nunique()
    if per_system.nunique() > 1:
        raise fail(f"{folder / 'cells.csv'} has {per_system.min()} languages for {per_system.idxmin()} but "
                   f"{per_system.max()} for {per_system.idxmax()} (the file was cut short?)")
    return meta, frame.to_dict("records")


def orientation(meta: dict) -> dict[str, bool]:
    """Each proxy's direction, as the study ranked it: error rates lower is better, Tatoeba accuracy
    higher, [[proxies.task]] columns as the metric registry orients their metric."""
    from xsimpp.tasks import METRICS

    lower = {p: p != "tatoeba" for p in meta["proxies"]}
    lower.update({tp["column"]: METRICS[tp["metric"]].lower_is_better for tp in meta["config"].get("task_proxies", [])})
    return lower


def one_sided(meta: dict, cells: list[dict], a: str, b: str, truth: str) -> dict:
    """Is proxy `a` better than `b` against `truth`? The one-sided PERM-BOTH test on all, within-model
    and across-model pairs, with the study's own resampling settings: kind -> (delta, p)."""
    import pandas as pd

    lower = orientation(meta)
    cfg = meta["config"]
    frame = pd.DataFrame(cells)
    sub = frame[frame[truth].notna()].copy()
    sub["bleu"] = sub[truth]
    rep = evaluate_table(RankingTable(sub.reset_index(drop=True), [a, b], {a: lower[a], b: lower[b]}),
                         compare=[(a, b)], n_bootstrap=cfg["bootstrap"], n_permutations=cfg["permutations"],
                         seed=cfg["seed"])
    return {kind: (r.delta, r.p_value) for kind, tests in
            (("all", rep.comparisons), ("within", rep.within_comparisons), ("across", rep.across_comparisons))
            for _, _, r in tests}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--compare", action="append", default=[], help="A,B: is proxy A better than B (repeatable)")
    ap.add_argument("--systems", help="comma-separated encoder labels to keep (default: all)")
    args = ap.parse_args()
    folder = Path(args.folder)
    meta, cells = read_study(folder)
    cfg = SimpleNamespace(**meta["config"])  # the analysis settings: bootstrap, permutations, confidence, seed
    if args.systems:
        keep = args.systems.split(",")
        missing = sorted(set(keep) - {c["system"] for c in cells})
        if missing:
            raise fail(f"no cells for {', '.join(missing)} in {folder / 'cells.csv'}")
        cells = [c for c in cells if c["system"] in keep]
    for pair in args.compare:
        if len(pair.split(",")) != 2 or not set(pair.split(",")) <= set(meta["proxies"]):
            raise fail(f"--compare takes two of the study's proxies A,B, not {pair!r}")
    notes: list[str] = []
    rankings = _rank_all(cells, list(meta["proxies"]), orientation(meta), cfg, notes)
    result = SimpleNamespace(rankings=rankings, data_summary=meta.get("data", {}))  # what ranking_text reads
    for gt in rankings:
        print(ranking_text(result, gt), end="\n\n")
    for pair in args.compare:
        a, b = pair.split(",")
        for gt in rankings:
            parts = [f"{kind} delta {100 * d:+.1f} p {pv:.3f}" for kind, (d, pv) in one_sided(meta, cells, a, b, gt).items()]
            print(f"{gt}: {a} > {b} (one-sided PERM-BOTH): {'; '.join(parts)}")
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
