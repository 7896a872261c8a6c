"""Ray as an executor (``xsimpp eval --ray``, ``xsimpp mine --ray``): every item becomes one Ray
task, results come back in submission order.

``address``: ``"auto"`` joins the cluster named by ``$RAY_ADDRESS`` or the one ``ray start``
runs on this machine, and starts a private local one when there is none; anything else is a
cluster address (``head-node:6379``, ``ray://head-node:10001``). When Ray is already initialised
in this process (a notebook, a test) that connection is used as it is and left open. Otherwise
``close`` calls ``ray.shutdown()``: it stops a local instance started here and only disconnects
from a cluster, which keeps running.

Every node needs the same xsimpp (and the encoder's packages) installed: tasks import
``xsimpp`` there; mining shards write to ``--out``, which must be storage every node sees.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Iterator

from ..errors import MissingResourceError

INSTALL_HINT = "pip install 'xsimpp[ray]'"


def _ray():
    try:
        import ray
    except ImportError:
        raise MissingResourceError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def _apply(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


class RayExecutor:
    """``map(fn, items)`` over Ray tasks (``num_cpus`` each); see the module docstring."""

    def __init__(self, address: str = "auto", num_cpus: float = 1):
        ray = _ray()
        self._ray = ray
        self._owned = False
        if not ray.is_initialized():
            try:
                ray.init(address=None if address == "auto" else address, include_dashboard=False,
                         logging_level=logging.ERROR, log_to_driver=False, configure_logging=True)
            except (ConnectionError, RuntimeError, ValueError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise MissingResourceError(f"cannot connect to the Ray cluster at {address!r} ({first}); start one "
                                           "with `ray start --head` or give its address") from None
            # ray.shutdown() at close: stops a local instance started here, only disconnects from a cluster.
            self._owned = True
        self._task = ray.remote(num_cpus=num_cpus, max_retries=3)(_apply)

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        ray = self._ray
        fn_ref = ray.put(fn)  # shipped once, not once per task
        refs = [self._task.remote(fn_ref, item) for item in items]
        done = 0
        try:
            for ref in refs:
                try:
                    result = ray.get(ref)
                    done += 1
                    yield result
                except ray.exceptions.RayTaskError as e:
                    # The task's own exception (e.g. BadInputError: one sentence), not Ray's wrapper.
                    cause = getattr(e, "cause", None)
                    if isinstance(cause, Exception):
                        raise cause from None
                    raise
        finally:
            for ref in refs[done:]:  # an error or an abandoned iteration: stop what has not run yet
                try:
                    ray.cancel(ref)
                except Exception:  # noqa: BLE001 - finished tasks cannot be cancelled; nothing to do
                    pass

    def close(self) -> None:
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
            self._owned = False
