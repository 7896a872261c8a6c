"""Variants per category of the non-English xsim++ negatives (issue 25) for every FLORES-200
language: the table `xsimpp augment flores200 --lang L` would print for each L, in one process
(the English line of each id is analysed once and shared, as every L uses the same English).

    XSIMPP_DATA_DIR=../shared/data NLTK_DATA=../shared/nltk_data \
        python benchmarks/target_variants_table.py --split devtest --csv variants_per_language.csv

Prints one row per language (causality, entity, number, all; "-" where the category is absent) and
a summary: languages with at least one category, with all three, and the totals.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xsimpp import augment as A  # noqa: E402
from xsimpp.study.target_negatives import pool_corpora  # noqa: E402  (the pool `augment --lang` projects, not a copy)
from xsimpp.datasets.flores import Flores200  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="devtest", choices=("dev", "devtest"))
    ap.add_argument("--langs", default="all", help="comma-separated FLORES codes (default: every one on disk)")
    ap.add_argument("--csv", help="also write the table here")
    ap.add_argument("--data-dir")
    args = ap.parse_args()

    flores = Flores200(args.split, args.data_dir)
    langs = [c for c in (flores.languages() if args.langs == "all" else args.langs.split(",")) if c != "eng_Latn"]
    t0 = time.perf_counter()
    english = A.analyse_english(flores.sentences("eng_Latn"), [f"flores200/{args.split}"])
    entries, _ = A.load_entity_pool()
    print(f"English analysed in {time.perf_counter() - t0:.1f} s; {len(langs)} target languages", flush=True)
    rows = []
    for lang in langs:
        t1 = time.perf_counter()
        items, pool_info = A.target_pool(entries, pool_corpora(lang, args.split, args.data_dir))
        aug = A.build_target_augmented(flores.sentences(lang), english, lang, pool_items=items, pool_info=pool_info)
        counts = {c: (len(aug.by_category(c)) if c in aug.info["categories"] else None) for c in A.CATEGORIES}
        rows.append({"lang": lang, **counts, "all": len(aug.variants), "pool": len(items),
                     "seconds": round(time.perf_counter() - t1, 2)})
        cell = " ".join(f"{'-' if v is None else v:>6}" for v in counts.values())
        print(f"{lang:<10} {cell} {len(aug.variants):>6}  pool {len(items):>4}", flush=True)
    with_any = [r for r in rows if r["all"] > 0]
    with_all = [r for r in rows if all(r[c] for c in A.CATEGORIES)]
    print(f"\n{len(rows)} languages; {len(with_any)} with >= 1 variant; {len(with_all)} with all three categories "
          f"({', '.join(r['lang'] for r in with_all)}); totals "
          + ", ".join(f"{c} {sum(r[c] or 0 for r in rows)}" for c in A.CATEGORIES)
          + f"; languages with entity > 0: {sum(1 for r in rows if r['entity'])}, number > 0: "
          f"{sum(1 for r in rows if r['number'])}; {time.perf_counter() - t0:.0f} s in all, load {os.getloadavg()[0]:.1f}")
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
