"""Time `xsimpp augment` on FLORES-200 English (target: dev in <= 60 s on 2 CPU cores).

Usage: python benchmarks/bench_augment.py [--split dev] [--data-dir DIR] [--style strict|paper]
Data: --data-dir, then $XSIMPP_DATA_DIR, then ../shared/data beside the checkout. NLTK data:
$NLTK_DATA, then ../shared/nltk_data. Prints the counts beside the paper's (Chen et al. 2023, Table 2).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
import bounds  # noqa: E402  (benchmarks/bounds.py: the bounds of every number typed here)


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser()
    ap.add_argument("--split", default="dev", choices=("dev", "devtest"))
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--style", default="strict", choices=("strict", "paper"))
    ap.add_argument("--seed", type=bounds.seed, default=0)
    args = ap.parse_args(argv)
    shared = REPO.parent / "shared"
    data_dir = args.data_dir or os.environ.get("XSIMPP_DATA_DIR") or str(shared / "data")
    if not os.environ.get("NLTK_DATA") and (shared / "nltk_data").is_dir():
        os.environ["NLTK_DATA"] = str(shared / "nltk_data")  # read by nltk at import time

    t0 = time.perf_counter()
    from xsimpp.augment import build_augmented, format_stats, load_entity_pool, write_laser_format
    from xsimpp.datasets.flores import flores_file
    from xsimpp.textio import read_lines

    sentences = read_lines(flores_file("eng_Latn", args.split, data_dir=data_dir))
    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    pool, pool_info = load_entity_pool((), [f"flores200/{args.split}"])  # as `xsimpp augment flores200`
    aug = build_augmented(sentences, seed=args.seed, style=args.style, entity_pool=pool, pool_info=pool_info)
    t_build = time.perf_counter() - t1
    with tempfile.TemporaryDirectory() as out:
        t2 = time.perf_counter()
        write_laser_format(aug, out, args.split)
        t_write = time.perf_counter() - t2
    total = time.perf_counter() - t0

    print(format_stats(aug, args.split))
    print(f"\nFLORES {args.split} ({len(sentences)} sentences, {os.cpu_count()} CPUs, load avg "
          f"{os.getloadavg()[0]:.1f}): imports {t_import:.1f} s, build {t_build:.1f} s "
          f"(model loading included), write {t_write:.1f} s, total {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
