"""`xsimpp datasets`: the registered datasets (``xsimpp.datasets.DATASETS``) split by split, whether
each is found here, the distractor-pool source it is, and where to put what is missing."""

from __future__ import annotations

from tabulate import tabulate

from .common import add_data_dir_option


def register(sub) -> None:
    p = sub.add_parser("datasets", help="list datasets and whether they are available",
                       description="Every dataset `--dataset` takes, with whether its files are found under the data "
                                   "roots (--data-dir, $XSIMPP_DATA_DIR, the user data dir) and how to get them.")
    add_data_dir_option(p)
    p.set_defaults(func=run)


def _bucc_rows(args, hints: dict) -> list[list[str]]:
    """BUCC 2018 (bitext mining, `xsimpp bucc`): one row per pair and split found, or one 'missing' row."""
    from ..datasets.bucc import DOWNLOAD_HINT, Bucc2018
    from ..errors import XsimppError

    what = "BUCC 2018 bitext mining (`xsimpp bucc --pair zh-en`)"
    try:
        ds = Bucc2018(args.data_dir)
        rows = [["bucc2018", f"{pair}.{split}", "found", "-", "-", what] for pair in ds.pairs()
                for split in ds.splits(pair)]
    except XsimppError:
        rows = []
    if not rows:
        hints["bucc2018"] = DOWNLOAD_HINT
        rows = [["bucc2018", "-", "missing", "-", "-", what]]
    return rows


def run(args) -> int:
    from pathlib import Path

    from ..datasets import DATASETS, pool_sources
    from ..errors import BadInputError
    from ..paths import data_dirs

    # a file given as the root would list every dataset as missing, as if the data were not there
    if args.data_dir and Path(args.data_dir).exists() and not Path(args.data_dir).is_dir():
        raise BadInputError(f"--data-dir {args.data_dir} is not a folder; give the folder that holds the datasets")
    source_of = {(cls.name, split): source for source, (cls, split) in pool_sources().items()}
    rows, hints = [], {}
    for name, cls in DATASETS.items():
        for split in cls.splits:
            ds = cls(split, data_dir=args.data_dir)
            ok = ds.is_available()
            aug = [d for d in ds.augmented_dirs() if d.is_dir() and any(d.rglob(f"*_augmented.{split}"))] if ok else []
            rows.append([name, split, "found" if ok else "missing", str(aug[0]) if aug else "-",
                         source_of.get((name, split), "-"), cls.description])
            if not ok:
                hints[name] = cls.download_hint
    rows += _bucc_rows(args, hints)
    print(tabulate(rows, headers=["dataset", "split", "status", "xsim++ augmented", "pool source", "description"],
                   tablefmt="simple"))
    print("\ndata roots searched, in order: " + ", ".join(str(d) for d in data_dirs(args.data_dir)))
    for name, hint in hints.items():
        print(f"{name}: {hint}")
    return 0
