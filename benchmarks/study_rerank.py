"""Re-rank a finished study's cells with this version's analysis (e.g. a report folder written
before within- and across-model CIs existed): reads CELLS.csv and study.json from the folder,
prints each ground truth's ranking table as `xsimpp study` prints it, and with --compare A,B the
one-sided PERM-BOTH test of A over B on all, within-model and across-model pairs. --systems keeps
only the named encoders: each encoder's cells are mined and scored on their own, so this is the
table a study of just those encoders would print.

    python benchmarks/study_rerank.py study-checkpoints/ --compare "xsim++[strict],xsim[ratio]"
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


def main() -> int:
    import pandas as pd

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--compare", action="append", default=[], help="A,B: is proxy A better than B (repeatable)")
    ap.add_argument("--systems", help="comma-separated encoder labels to keep (default: all)")
    args = ap.parse_args()
    folder = Path(args.folder)
    meta = json.loads((folder / "study.json").read_text(encoding="utf-8"))
    cfg = SimpleNamespace(**meta["config"])  # the analysis settings: bootstrap, permutations, confidence, seed
    cells = pd.read_csv(folder / "cells.csv").to_dict("records")
    if args.systems:
        keep = args.systems.split(",")
        missing = sorted(set(keep) - {c["system"] for c in cells})
        if missing:
            raise SystemExit(f"no cells for {', '.join(missing)} in {folder / 'cells.csv'}")
        cells = [c for c in cells if c["system"] in keep]
    proxies = list(meta["proxies"])
    lower = {p: p != "tatoeba" for p in proxies}  # error rates: lower is better; Tatoeba accuracy: higher
    notes: list[str] = []
    rankings = _rank_all(cells, proxies, lower, cfg, notes)
    result = SimpleNamespace(rankings=rankings, data_summary=meta.get("data", {}))  # what ranking_text reads
    for gt in rankings:
        print(ranking_text(result, gt), end="\n\n")
    frame = pd.DataFrame(cells)
    for pair in args.compare:
        a, b = pair.split(",")
        for gt in rankings:
            sub = frame[frame[gt].notna()].copy()
            sub["bleu"] = sub[gt]
            rep = evaluate_table(RankingTable(sub.reset_index(drop=True), [a, b], {a: lower[a], b: lower[b]}),
                                 compare=[(a, b)], n_bootstrap=cfg.bootstrap, n_permutations=cfg.permutations,
                                 seed=cfg.seed)
            parts = [f"{kind} delta {100 * r.delta:+.1f} p {r.p_value:.3f}" for kind, tests in
                     (("all", rep.comparisons), ("within", rep.within_comparisons), ("across", rep.across_comparisons))
                     for _, _, r in tests]
            print(f"{gt}: {a} > {b} (one-sided PERM-BOTH): {'; '.join(parts)}")
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
