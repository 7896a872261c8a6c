"""Confidence intervals of a run's records and averages (``--ci``), from their per-sentence outcomes;
the runner adds them to any task whose settings are ``IntervalSettings``.

Each record with outcomes gets ``extra["ci_low"]``/``extra["ci_high"]`` and the interval's method,
level, resamples and seed as its signature's ``ci`` key (the record's key and comparisons ignore
it: the number is the same). Each group of records that differ only in their languages (one
metric, one setting) also gets an interval of its average, every language resampled within itself
and combined as the task averages them (``scoring.significance``).

Where no resample can differ (every sentence right, or every one wrong: 0 % or 100 %) the
bootstrap's interval is the point itself, which claims a certainty a few sentences cannot give;
the interval stored and printed is then the exact (Clopper-Pearson) one, and the record says so
(``extra["ci_method"] = "clopper-pearson"``), so the table and the store show the same numbers."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Sequence

from ..results import Outcomes, ResultRecord
from ..scoring.significance import Units, confidence_interval, value


@dataclass(frozen=True)
class Interval:
    """One row of the interval table: a record's (``pair`` = "kea_Latn-eng_Latn") or an average's
    (``pair`` = "average (N)")."""

    metric: str
    view: str  # the settings that tell records of one metric apart (e.g. "mode=index"), "" if none
    pair: str
    value: float
    low: float
    high: float
    n: int
    exact: bool = False  # the Clopper-Pearson interval of a 0 % or 100 % (no resample can differ)


def units_of(record: ResultRecord) -> Units:
    return outcome_units(record.outcomes)


def outcome_units(o: Outcomes) -> Units:
    """The resampling units of a record's outcomes."""
    return Units.of(o.statistic, o.correct, o.chosen, o.gold, o.unit)


def _group_key(r: ResultRecord) -> tuple:
    params = {k: v for k, v in r.signature.params.items() if k != "ci"}
    return r.metric, r.signature.dataset, r.signature.split, json.dumps(params, sort_keys=True, default=str)


def interval(units: list[Units], n: int, level: float, resamples: int, seed: int) -> tuple[float, float, bool]:
    """(low, high, exact): the percentile bootstrap's interval, or the exact one where every
    resample gives the same 0 % or 100 % (see the module docstring)."""
    lo, hi = confidence_interval(units, level=level, n_resamples=resamples, seed=seed)
    estimate = value(units)
    if lo == hi and estimate in (0.0, 100.0):
        return (*exact_bounds(estimate, n, level), True)
    return lo, hi, False


def add_intervals(records: Sequence[ResultRecord], level: float, resamples: int, seed: int,
                  label: str) -> list[Interval]:
    """Give every record with outcomes its interval (in place) and return the table's rows."""
    rows: list[Interval] = []
    groups: dict[tuple, list[ResultRecord]] = {}
    for r in records:
        if r.outcomes is None:
            continue
        lo, hi, exact = interval([units_of(r)], r.n, level, resamples, seed)
        r.extra.update(ci_low=lo, ci_high=hi)
        if exact:
            r.extra["ci_method"] = "clopper-pearson"
        r.signature = dataclasses.replace(r.signature, params={**r.signature.params, "ci": label})
        groups.setdefault(_group_key(r), []).append(r)
    for (metric, _, _, params), members in groups.items():
        view = _view(json.loads(params), [json.loads(k[3]) for k in groups if k[0] == metric])
        for r in members:
            rows.append(Interval(metric, view, f"{r.src_lang}-{r.tgt_lang}", r.value, r.extra["ci_low"],
                                 r.extra["ci_high"], r.n, r.extra.get("ci_method") == "clopper-pearson"))
        if len(members) > 1:
            units = [units_of(r) for r in members]
            n = sum(r.n for r in members)
            lo, hi, exact = interval(units, n, level, resamples, seed)
            rows.append(Interval(metric, view, f"average ({len(members)})", value(units), lo, hi, n, exact))
    return rows


def _view(params: dict, of_metric: list[dict]) -> str:
    """What tells this group from the metric's other groups in one run (Tatoeba's text and index
    mode, BUCC's threshold rules): the settings whose values differ among them."""
    keys = sorted({k for p in of_metric for k in p if len({str(q.get(k)) for q in of_metric}) > 1})
    return ", ".join(f"{k}={params.get(k)}" for k in keys)


def render_intervals(rows: Sequence[Interval], level: float, resamples: int, seed: int) -> str:
    from tabulate import tabulate

    body, notes = [], []
    for r in rows:
        ci = f"[{r.low:.2f}, {r.high:.2f}]"
        if r.exact:  # no resample can differ: the interval is what the data allows
            ci += " *"
            notes.append(f"* {r.metric} {r.pair}: {r.value:.0f} % of {r.n}, so every resample gives {r.value:.0f} %; "
                         f"the interval shown (and stored) is the exact (Clopper-Pearson) {level:.0%} interval for "
                         f"{r.n} independent sentences")
        body.append([r.metric + (f" ({r.view})" if r.view else ""), r.pair, f"{r.value:.2f}", ci,
                     f"{r.high - r.low:.2f}", r.n])
    table = tabulate(body, headers=["metric", "pair", "value", f"{level:.0%} CI", "width", "n"], tablefmt="psql",
                     disable_numparse=True)
    return (f"{level:.0%} confidence intervals (percentile bootstrap, {resamples} resamples of the sentences, seed "
            f"{seed}; an average resamples each language within itself)\n{table}" + "".join("\n" + n for n in notes))


def exact_bounds(percent: float, n: int, level: float) -> tuple[float, float]:
    """Clopper-Pearson interval (scipy's ``binomtest``) of a percentage of ``n`` items, in percent."""
    from scipy.stats import binomtest

    ci = binomtest(round(percent * n / 100), n).proportion_ci(confidence_level=level, method="exact")
    return 100 * ci.low, 100 * ci.high
