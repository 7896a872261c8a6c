"""LASER-style tables the tasks' reports print (``Task.render``)."""

from __future__ import annotations

from tabulate import tabulate


def fmt_pct(value: float) -> str:
    return f"{value:.2f}"


# More pairs than this (--langs all, a long --langs list) are a summary: sorted by error, worst
# first, so the languages that need attention are on top; fewer keep LASER's order.
SORTED_ABOVE = 10


def xsim_table(dataset: str, rows: list[tuple[str, float, int, float | None]], avg: tuple[float, int, float | None],
               with_pp: bool, label: str = "xsim") -> str:
    """The LASER table: dataset | src-tgt | xsim | nbex, with an xsim++ column when it ran
    (``label`` p-xsim for P-xSIM), and the micro average (all errors / all sentences, LASER's
    'average') last. Over ``SORTED_ABOVE`` rows, sorted by xsim error, worst first."""
    avg_label = "average"
    if len(rows) > SORTED_ABOVE:
        rows = sorted(rows, key=lambda row: (-row[1], row[0]))
        avg_label = "micro average"
    headers = ["dataset", "src-tgt", label] + ([label + "++"] if with_pp else []) + ["nbex"]
    body = []
    for pair, err, n, errpp in rows + [(avg_label, avg[0], avg[1], avg[2])]:
        body.append([dataset, pair, fmt_pct(err)] + ([fmt_pct(errpp) if errpp is not None else "-"] if with_pp else []) + [n])
    return tabulate(body, headers=headers, tablefmt="psql", disable_numparse=True)


def errtype_table(per_pair: dict[str, dict[str, int]], categories=None) -> str:
    """Absolute error counts by type (rows: source languages), as LASER prints for xsim++. Every
    known type has a column, zero or not, in one order and one spelling (lower case); a known type
    the negatives were not built for (``categories`` leaves it out: a target language without
    curated causality rules) shows '-' rather than a zero it could not have helped."""
    from ..datasets import KNOWN_ERRTYPES
    from ..scoring import MISALIGNED

    seen = {c.lower() for d in per_pair.values() for c in d}
    cols = [*KNOWN_ERRTYPES, *sorted(seen - {*KNOWN_ERRTYPES, MISALIGNED.lower()}), MISALIGNED.lower()]
    absent = set(KNOWN_ERRTYPES) - {c.lower() for c in categories} if categories is not None else set()
    body = [[pair] + ["-" if c in absent else sum(v for k, v in per_pair[pair].items() if k.lower() == c)
                      for c in cols] for pair in per_pair]
    return tabulate(body, headers=["src-tgt"] + cols, tablefmt="grid")
