"""The two registries, filled by ``xsimpp.tasks`` (one line per task): ``TASKS``, the runnable
tasks (each one the runner can run over any encoder), and ``METRICS``, every metric a record or
report can carry, with its unit, its direction and what produces it (a task, or a command such as
`xsimpp rank` that computes a metric without encoding). A module of its own so that a task reading
it (the ranking reads each metric's orientation) needs no import of the package that imports
every task."""

from __future__ import annotations

from dataclasses import dataclass

from .base import MetricInfo, Task


@dataclass(frozen=True)
class Metric:
    """A registered metric: how to read its value and what produces it."""

    name: str
    unit: str
    lower_is_better: bool
    producer: str  # the task (``TASKS``) or command whose records carry it
    description: str = ""


TASKS: dict[str, Task] = {}
METRICS: dict[str, Metric] = {}


def register_metrics(producer: str, metrics: dict[str, MetricInfo]) -> None:
    """Register what ``producer`` computes; a metric name means one thing, so a second producer
    of the same name is an error."""
    for name, info in metrics.items():
        known = METRICS.get(name)
        if known is not None and known.producer != producer:
            raise ValueError(f"metric {name!r} is produced by {known.producer!r} already")
        METRICS[name] = Metric(name, info.unit, info.lower_is_better, producer, info.description)


def register(task: Task) -> None:
    """A runnable task: it must load, evaluate and render (the runner calls all three)."""
    for method in ("load", "evaluate", "render"):
        if getattr(type(task), method) is getattr(Task, method):
            raise TypeError(f"task {task.name!r} does not implement {method}(); a metric without a task is "
                            "registered with register_metrics")
    if task.name in TASKS:
        raise ValueError(f"a task named {task.name!r} is registered already")
    TASKS[task.name] = task
    register_metrics(task.name, task.metrics)
