"""The study's columns as data: each is a row naming a registered task, one of its metrics and the
task's settings, in the shape of a ``[[proxies.task]]`` table. The ``[proxies]`` keys generate the
built-in rows (xsim per margin; xsim++ per style and margin with its error-type subsets, which are
metrics the xsim task derives from an xsim++ record; Tatoeba), the configuration's
``[[proxies.task]]`` tables add theirs, and the ground truth (the mining-f1 task) is the last row.
``run.run_study`` runs every row the same way; the columns are named by ``columns``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..datasets.pool import ENGLISH
from ..results import ResultRecord
from ..tasks import registry
from ..tasks.registry import DerivedMetric
from ..tasks.runner import RunOptions, Results, run_prepared
from ..tasks.xsim import ERROR_TYPES, XsimData, all_error_type_subsets, restricted_name
from .columns import TATOEBA, count_column, xsim_column, xsimpp_column, xsimpp_key

if TYPE_CHECKING:
    from .config import StudyConfig
    from .data import LanguageData, StudyData

@dataclass(frozen=True)
class ProxyRow:
    """A column as a ``[[proxies.task]]`` table holds it (task, metric, column, options) and what
    the study adds to a row it generates: which of a language's lines it scores (``lines``), its
    part in the analysis (``role``) and the cells beside its value."""

    task: str  # a registered task (tasks.registry)
    metric: str | None  # its metric in this column; None: every metric its records carry (the ground truth)
    column: str
    options: dict[str, Any] = field(default_factory=dict)  # the task's settings
    # "flores": the language's FLORES-200 devtest proxy lines (with ``style``: and that style's
    # xsim++ negatives); "tatoeba": its Tatoeba v1 pairs; "gold": the mining gold among the
    # distractors; "task": what the row's task loaded for it ([[proxies.task]]: StudyData.task_proxies)
    lines: str = "task"
    style: str | None = None
    view: dict[str, Any] = field(default_factory=dict)  # signature params a kept record has (Tatoeba's text mode)
    # "proxy": ranked; "tatoeba": ranked on the languages with Tatoeba pairs; "truth": ranked against
    role: str = "proxy"
    counts: str = ""  # cells err_<counts>_<type>: the kept record's count of each xsim++ error type
    # the cells of a row with metric None, from the task's report of one language
    detail: Callable[[Any], dict[str, Any]] | None = None
    # what the row keeps per sentence beside its cells, from the same report (the ground truth's
    # outcomes, which the study writes to mining_outcomes.json.gz rather than to the table)
    per_sentence: Callable[[Any], dict[str, Any]] | None = None

    def run_key(self) -> tuple:
        """Rows with the same key share one run per cell (an xsim++ column and its error-type subsets)."""
        return self.task, self.lines, self.style, tuple(sorted(self.options.items()))


def error_types_of(aug, target: str) -> tuple[str, ...]:
    """The error types an xsim++ column can count: all of ``ERROR_TYPES`` for English; for another
    target only the categories its negatives were built for (e.g. no causality without curated
    rules), and misaligned."""
    if target == ENGLISH:
        return ERROR_TYPES
    return tuple(t for t in ERROR_TYPES if t in aug.categories or t == "misaligned")


def mining_cells(report) -> dict[str, Any]:
    """The ground truth's cells: the mining task's table row of the language (its metrics, the
    cross-validated threshold and the counts)."""
    return report.langs[0].cells()


def mining_outcomes(report) -> dict[str, Any]:
    """The ground truth's per-sentence outcomes of the language (``LanguageMining.outcome_table``)."""
    return report.langs[0].outcome_table()


def builtin_rows(cfg: StudyConfig, types: dict[str, tuple[str, ...]]) -> list[ProxyRow]:
    """The rows ``[proxies]`` asks for, in table order: xsim per margin; per style (the keys of
    ``types``) xsim++, its subsets over the error types ``types[style]``, each extra margin's total."""
    rows = [ProxyRow("xsim", "xsim", xsim_column(m), {"margin": m, "k": cfg.k}, "flores") for m in cfg.xsim_margins]
    for style, style_types in types.items():
        for m in [cfg.xsimpp_margin] + cfg.xsimpp_extra_margins:
            key = xsimpp_key(style, None if m == cfg.xsimpp_margin else m)
            xsimpp = ProxyRow("xsim", "xsim++", xsimpp_column(key), {"margin": m, "k": cfg.k}, "flores", style,
                              counts=key)
            rows.append(xsimpp)
            if m == cfg.xsimpp_margin and cfg.error_type_subsets:
                rows += [dataclasses.replace(xsimpp, metric=restricted_name(t), column=xsimpp_column(key, t), counts="")
                         for t in all_error_type_subsets(style_types)]
    return rows


def proxy_names(cfg: StudyConfig, styles: list[str], types: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The built-in proxy columns of ``styles`` in table order (error-type subsets over
    ``types[style]``: default every one of ``ERROR_TYPES``)."""
    return [row.column for row in builtin_rows(cfg, {s: (types or {}).get(s, ERROR_TYPES) for s in styles})]


def study_rows(cfg: StudyConfig, data: StudyData) -> list[ProxyRow]:
    """Every row of the study in table order: the built-in proxies (the styles whose negatives the
    data holds), Tatoeba where the data has it, the ``[[proxies.task]]`` tables, the ground truth."""
    rows = builtin_rows(cfg, {style: error_types_of(aug, data.target) for style, aug in data.augmented.items()})
    if any(ld.tatoeba is not None for ld in data.languages):
        rows.append(ProxyRow("tatoeba", "tatoeba_acc_mean", TATOEBA, {"margin": "absolute"}, "tatoeba",
                             view={"mode": "text"}, role="tatoeba"))
    rows += [ProxyRow(tp.task, tp.metric, tp.column, dict(tp.options)) for tp in cfg.task_proxies]
    rows.append(ProxyRow("mining-f1", None, "mining", lines="gold", role="truth", detail=mining_cells,
                        per_sentence=mining_outcomes))
    return rows


def lower_is_better(row: ProxyRow) -> bool:
    return registry.METRICS[row.metric].lower_is_better


def row_input(row: ProxyRow, cfg: StudyConfig, data: StudyData, ld: LanguageData, mining_settings,
              run: RunOptions, label: str) -> tuple[Any, Any, RunOptions, str] | None:
    """The row's task data, settings and run options in one language, and the source language its
    records name (Tatoeba's own code for its pairs); None: the language has none of its lines. The
    ground truth's records are signed with the study's data and ``label``."""
    task = registry.task(row.task)
    if row.lines == "task":
        return (*data.task_proxies[(row.column, ld.lang)], run, ld.lang)
    if row.lines == "gold":
        return data.mining_data(cfg.name, ld), mining_settings, dataclasses.replace(run, label=label), ld.lang
    if row.lines == "tatoeba":
        if ld.tatoeba is None:
            return None
        return [ld.tatoeba], task.Settings.make(**row.options), run, ld.tatoeba.src_lang
    negatives = data.augmented[row.style] if row.style else None
    return XsimData([ld.proxy_lines], negatives), task.Settings.make(**row.options), run, ld.lang


def run_rows(rows: list[ProxyRow], inputs: Callable[[ProxyRow], tuple | None],
             member) -> tuple[dict[str, Any], list[ResultRecord], dict[str, Any]]:
    """One cell: each row's task run through the runner (once per ``run_key``), its column read off
    its records (a derived metric off its base metric's), the records it reports kept once, and
    what the rows with a ``per_sentence`` hook keep per sentence."""
    runs: dict[tuple, tuple[Results, str] | None] = {}
    cells: dict[str, Any] = {}
    per_sentence: dict[str, Any] = {}
    kept: list[ResultRecord] = []
    for row in rows:
        key = row.run_key()
        if key not in runs:
            given = inputs(row)
            runs[key] = None if given is None else (run_prepared(registry.task(row.task), member, *given[:3]), given[3])
        if runs[key] is None:
            continue
        res, lang = runs[key]
        derived = registry.task(row.task).metrics.get(row.metric)
        metric = derived.base if isinstance(derived, DerivedMetric) else row.metric
        mine = [r for r in res.records if (metric is None or r.metric == metric) and r.src_lang == lang
                and all(r.signature.params.get(k) == v for k, v in row.view.items())]
        if row.detail is not None:
            cells.update(row.detail(res.report))
        else:
            cells[row.column] = derived.read(mine[0]) if isinstance(derived, DerivedMetric) else mine[0].value
        if row.per_sentence is not None:
            per_sentence.update(row.per_sentence(res.report))
        if row.counts:
            have = {str(k).lower(): v for k, v in mine[0].error_types.items()}
            cells.update({count_column(row.counts, t): have.get(t, 0) for t in ERROR_TYPES})
        kept += [r for r in mine if not any(r is k for k in kept)]
    return cells, kept, per_sentence
