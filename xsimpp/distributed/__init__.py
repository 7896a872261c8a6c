"""Running xsimpp's independent units of work (encoding chunks, mining shards) elsewhere.

An *executor* is anything with ``map(fn, items) -> iterator of fn(item)`` in order, as
``concurrent.futures.Executor.map``: ``xsimpp.engine.mining.mine`` and
``xsimpp.tasks.base.prefill_cache`` accept one, so a ``ProcessPoolExecutor`` works as well as the
Ray cluster of ``ray_backend`` (the one adapter here; optional extra ``xsimpp[ray]``).
"""
