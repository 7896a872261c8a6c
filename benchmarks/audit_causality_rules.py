"""A sample of the curated non-English causality negatives (issue 25) for a person to judge.

Shuffles FLORES-200 lines of one language with a seed, takes one variant (drawn with the same seed)
from each line that has any, until N variants, and writes a TSV with the columns id, original,
variant, subtype, true_negative, fluent -- the last two empty, for the judge. id is
"<split>:<line number, 1-based>". Also prints how many of the lines read had any variant.

    XSIMPP_DATA_DIR=../shared/data python benchmarks/audit_causality_rules.py --lang fra_Latn --n 50 \
        --seed 0 --out audit_fra.tsv
"""

from __future__ import annotations

import csv
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xsimpp.augment.causality_rules import rules_for  # noqa: E402
import bounds  # noqa: E402  (benchmarks/bounds.py: the bounds of every number typed here)

COLUMNS = ("id", "original", "variant", "subtype", "true_negative", "fluent")


def sample(lines: list[str], rules, n: int, seed: int, split: str) -> tuple[list[tuple[str, ...]], int]:
    """(rows, lines read): one seeded variant from each shuffled line that has one, n rows at most."""
    rng = random.Random(seed)
    order = list(range(len(lines)))
    rng.shuffle(order)
    rows, read = [], 0
    for i in order:
        if len(rows) >= n:
            break
        read += 1
        variants = rules.variants(lines[i])
        if variants:
            variant, subtype = variants[rng.randrange(len(variants))]
            rows.append((f"{split}:{i + 1}", lines[i], variant, subtype, "", ""))
    return rows, read


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", required=True, help="FLORES code with curated rules, e.g. fra_Latn, deu_Latn")
    ap.add_argument("--n", type=bounds.count(1, 10**5), default=50, help="variants to sample")
    ap.add_argument("--seed", type=bounds.seed, default=0)
    ap.add_argument("--split", default="devtest", choices=("dev", "devtest"))
    ap.add_argument("--out", type=Path, required=True, help="TSV to write")
    args = ap.parse_args(argv)
    rules = rules_for(args.lang)
    if rules is None:
        ap.error(f"no curated causality rules for {args.lang}")
    root = Path(os.environ.get("XSIMPP_DATA_DIR", "../shared/data"))
    lines = (root / "flores200" / args.split / f"{rules.lang}.{args.split}").read_text(encoding="utf-8").splitlines()
    rows, read = sample(lines, rules, args.n, args.seed, args.split)
    with args.out.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)
    print(f"{rules.lang} rules {rules.version}: {len(rows)} variants from {read} lines read "
          f"({100 * len(rows) / max(read, 1):.0f} % of lines with a variant) -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
