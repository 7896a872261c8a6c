"""Tasks: data + encoder + metric -> result records (the MTEB idea, sacrebleu's signatures).

Each task is one module with one ``Task`` subclass: its knobs (``Source``, ``Settings``), how it
loads and checks its data, evaluates and prints (``xsimpp.tasks.base``). Registering it is its
line below; ``xsimpp.tasks.runner`` runs every task, the API (``xsimpp.run``) and the CLI (a
derived subcommand for ``cli = True``) are thin over it. Metrics computed by a command rather
than a task (`xsimpp rank`'s) are registered by ``register_metrics``. The layers under tasks
(datasets, encoders, cache, engine, scoring, results) never import a task.
"""

from __future__ import annotations

from . import bucc, filter, mine, mining, mteb_bitext, ranking, registry, tatoeba, xsim
from .base import Embedder, MetricInfo, Settings, Task, TaskReport, sign
from .registry import Metric, register, register_metrics, task

register(xsim.XsimTask())
register(tatoeba.TatoebaTask())
register(bucc.BuccTask())
register(filter.FilterTask())
register(mining.MiningTask())
register(mteb_bitext.MtebBitextTask())
register(mine.MineTask())
register_metrics("rank", ranking.RANKING_METRICS)


__all__ = ["Embedder", "METRICS", "Metric", "MetricInfo", "Settings", "TASKS", "Task", "TaskReport", "register",
           "register_metrics", "sign", "task"]


def __getattr__(name: str):
    """``TASKS`` and ``METRICS`` read through to ``registry``, their one binding."""
    if name in ("TASKS", "METRICS"):
        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
