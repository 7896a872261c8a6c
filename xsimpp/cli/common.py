"""Pieces shared by the subcommands: common options, progress bars and LASER-style tables."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Iterator

from tabulate import tabulate

from ..scoring import MARGINS, MODES


def add_scoring_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--margin", choices=MARGINS, default="ratio", help="margin scoring (default: ratio, as LASER)")
    p.add_argument("--k", type=int, default=4, help="neighbours for the margin averages (default: 4)")
    p.add_argument("--mode", choices=MODES, default="text",
                   help="error when the neighbour's text differs from the gold (text, LASER default) "
                        "or its index does (index)")


def add_data_dir_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="data root (default: $XSIMPP_DATA_DIR, then the user data dir)")


@contextlib.contextmanager
def progress_bar(total: int, desc: str, enabled: bool = True) -> Iterator:
    """A tqdm bar on stderr (hidden when not a terminal unless forced), yielding an update callable."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit="sent", disable=not enabled, file=sys.stderr, dynamic_ncols=True,
               mininterval=0.5)
    try:
        yield bar.update
    finally:
        bar.close()


def fmt_pct(value: float) -> str:
    return f"{value:.2f}"


def xsim_table(dataset: str, rows: list[tuple[str, float, int, float | None]], avg: tuple[float, int, float | None],
               with_pp: bool) -> str:
    """The LASER table: dataset | src-tgt | xsim | nbex, with an xsim++ column when it ran."""
    headers = ["dataset", "src-tgt", "xsim"] + (["xsim++"] if with_pp else []) + ["nbex"]
    body = []
    for pair, err, n, errpp in rows + [("average", avg[0], avg[1], avg[2])]:
        body.append([dataset, pair, fmt_pct(err)] + ([fmt_pct(errpp) if errpp is not None else "-"] if with_pp else []) + [n])
    return tabulate(body, headers=headers, tablefmt="psql", disable_numparse=True)


def errtype_table(per_pair: dict[str, dict[str, int]]) -> str:
    """Absolute error counts by type (rows: source languages), as LASER prints for xsim++."""
    cols = sorted({c for d in per_pair.values() for c in d}) or ["Misaligned"]
    body = [[pair] + [per_pair[pair].get(c, 0) for c in cols] for pair in per_pair]
    return tabulate(body, headers=["src-tgt"] + cols, tablefmt="grid")
