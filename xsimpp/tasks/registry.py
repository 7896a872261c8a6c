"""The two registries, filled by ``xsimpp.tasks`` (one line per task): ``TASKS``, the runnable
tasks (each one the runner runs, over any encoder or, for mine, over vectors), and ``METRICS``, every metric a record or
report can carry, with its unit, its direction and what produces it (a task, or a command such as
`xsimpp rank` that computes a metric without encoding). A module of its own so that a task reading
it (the ranking reads each metric's orientation) needs no import of the package that imports
every task."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..errors import BadInputError
from .base import MetricInfo, Task

if TYPE_CHECKING:
    from ..results import ResultRecord


@dataclass(frozen=True)
class Metric:
    """A registered metric: how to read its value and what produces it."""

    name: str
    unit: str
    lower_is_better: bool
    producer: str  # the task (``TASKS``) or command whose records carry it
    description: str = ""


@dataclass(frozen=True)
class DerivedMetric(MetricInfo):
    """A metric a task declares beside those its records carry: read off the record of its ``base``
    metric for the same language, nothing run again (xsim++ counting only some error types, from an
    xsim++ record's error-type counts). A grid (the study) asks for it like any other metric."""

    base: str = ""
    read: Callable[[ResultRecord], float] | None = None


# The one binding of each registry: everything else reads them through this module at call time
# (``task(name)``, ``registry.TASKS``; ``xsimpp.tasks.TASKS`` reads through too), so a test that
# swaps them swaps them here only.
TASKS: dict[str, Task] = {}
METRICS: dict[str, Metric] = {}


def task(name: str) -> Task:
    """The registered task ``name``, or one sentence naming the known ones."""
    try:
        return TASKS[name]
    except KeyError:
        raise BadInputError(f"unknown task {name!r}; the registered tasks are: {', '.join(TASKS)}") from None


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
