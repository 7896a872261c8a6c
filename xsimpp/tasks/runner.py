"""The one runner: every task runs through ``run_task`` (the API's functions and the CLI's
subcommands are thin over it, and the study runs its grid through ``run_prepared``).

The sequence, stated once: split the user's knobs between the task's ``Source``, its ``Settings``
and the ``RunOptions`` (an unknown knob is an error naming the known ones) -> build the settings
(protocol presets applied) -> load and check every input (k against the set sizes included)
before any model is loaded -> make the encoder -> open its cache (the cache layer's policy:
vectors, token states or none) -> say the cost (sentences, the cached share, the time at this
machine's measured rate: ``cost.py``) -> encode on a Ray cluster first when asked -> the task ->
close every cache -> record the rate the run measured -> check that every number is a number ->
confidence intervals when the settings ask (``--ci``) -> save all records or none -> Results.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from ..cache import MemoryCache, is_cache_object, open_cache
from ..encoders.base import check_device
from ..errors import BadInputError
from ..results import ResultRecord, ResultStore, Results
from .base import (IntervalSettings, Task, TaskReport, check_knob_bounds, check_knob_types, knob_names, prefill_cache,
                   prefill_local)
from .cost import EncodeClock, cached_count, cost_line, read_rate, write_rate
from .intervals import add_intervals

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunOptions:
    """How a run is carried out, not what it measures (nothing here enters a signature but a
    grid's ``label``, which names the encoder rather than changes a number).

    ``cache``: True = the default embedding cache, a path = that folder, False/None = none, or a
    cache object (``get_many``/``put_many``) its owner filled and closes (the study's shared pass);
    ``save``: True = the default results store, a path = that folder, False = nothing stored;
    ``progress``: show a progress bar on stderr; ``engine``: an ``EngineConfig`` (speed only);
    ``ray``: "auto" or a cluster address to encode on Ray (registered encoder names only);
    ``options``: constructor options of a registered encoder name; ``revision`` /
    ``encoder_name`` / ``encode_kwargs``: the identity of an encoder object
    (``xsimpp.encoders.pyobject``); ``label``: the name a grid gives the encoder (a study's
    encoder label), which the mining task signs as ``system`` as study records always have."""

    cache: Any = True
    save: Any = False
    progress: bool = False
    engine: Any = None
    ray: str | None = None
    options: dict | None = None
    revision: str | None = None
    encoder_name: str | None = None
    encode_kwargs: dict | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        """Each option's type, checked here: a wrong one is one sentence naming it, not an
        AttributeError deep inside the run (``engine="fast"``)."""
        from ..engine import EngineConfig

        def refuse(name: str, what: str) -> None:
            raise BadInputError(f"the run option {name} takes {what}, not {getattr(self, name)!r}")

        folder = (bool, str, os.PathLike)
        if not (isinstance(self.cache, folder) or self.cache is None or is_cache_object(self.cache)):
            refuse("cache", "True, False, None, a folder or a cache object")
        if not isinstance(self.save, folder) and self.save is not None:
            refuse("save", "True, False or a folder")
        if not (isinstance(self.progress, bool) or callable(self.progress)):
            refuse("progress", "True, False or a callable (mine's shard counter)")
        if self.engine is not None and not isinstance(self.engine, EngineConfig):
            refuse("engine", "an xsimpp.engine.EngineConfig (e.g. EngineConfig(threads=4)) or None")
        for name in ("ray", "revision", "encoder_name", "label"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                refuse(name, "a text or None")
        for name in ("options", "encode_kwargs"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), dict):
                refuse(name, "a dict or None")


RUN_KNOBS = knob_names(RunOptions)


def split_knobs(task: Task, knobs: dict[str, Any]) -> tuple[dict, dict, dict]:
    """The user's keywords as (source, settings, run) keywords; an unknown one is an error."""
    src_names = knob_names(task.Source)
    set_names = knob_names(task.Settings) + tuple(getattr(task.Settings, "ALIASES", ()))
    parts: tuple[dict, dict, dict] = ({}, {}, {})
    for name, value in knobs.items():
        for i, names in enumerate((src_names, set_names, RUN_KNOBS)):
            if name in names:
                parts[i][name] = value
                break
        else:
            known = ", ".join(sorted({*src_names, *set_names, *RUN_KNOBS}))
            raise BadInputError(f"{task.name} has no option {name!r}; its options are: {known}")
    return parts


def make_encoder(encoder, options: dict | None = None, *, name: str | None = None, revision: str | None = None,
                 encode_kwargs: dict | None = None):
    """An ``Encoder`` from a registered name (+ constructor options), an Encoder, an mteb 2.x
    encoder (``xsimpp.encoders.mteb_model``), or an object with ``encode(list[str])``."""
    from ..encoders import Encoder, create_encoder
    from ..encoders.mteb_model import MtebModelEncoder, speaks_mteb2
    from ..encoders.pyobject import PyObjectEncoder, adopt_named

    if isinstance(encoder, str):
        if name is not None or revision is not None or encode_kwargs:
            raise BadInputError("name, revision and encode_kwargs describe an encoder object; a registered encoder "
                                f"('{encoder}') has its own id and revision")
        return create_encoder(encoder, **(options or {}))
    if options:
        raise BadInputError("options are constructor options of a registered encoder name; "
                            f"this encoder is already built ({type(encoder).__name__})")
    if isinstance(encoder, Encoder):
        return encoder
    if speaks_mteb2(encoder):
        return MtebModelEncoder(encoder, name=name, revision=revision, encode_kwargs=encode_kwargs)
    if name is None and revision is None and not encode_kwargs:
        named = adopt_named(encoder)
        if named is not None:
            return named
    return PyObjectEncoder(encoder, name=name, revision=revision, encode_kwargs=encode_kwargs)


class SentenceProgress:
    """The run's one bar over every sentence it looks up or encodes (a whole ``--langs all`` run
    included). Sentences found in the cache advance the bar but not its rate: tqdm counts them as
    ``initial``, whose sentences its rate leaves out, so the rate is sentences encoded per second
    so far and a resumed run whose first languages are cached does not promise the rest at the
    speed of a cache read (what is left may still be partly cached: the ETA errs long, not short).
    ``clock`` (an ``EncodeClock``) times the encoded sentences for the next run's cost line."""

    def __init__(self, bar, clock: EncodeClock | None = None):
        self.bar = bar
        self.clock = clock
        self.n_cached = 0

    def __call__(self, n: int) -> None:
        self.bar.update(n)
        if n and self.clock is not None:
            self.clock.encoded(n)

    def cached(self, n: int) -> None:
        if self.bar.disable:
            return
        self.n_cached += n
        # moved together, so that neither the average rate nor tqdm's smoothed one sees them
        self.bar.initial += n
        self.bar.n += n
        self.bar.last_print_n += n
        self.bar.set_postfix_str(f"{self.n_cached} from cache")


@contextlib.contextmanager
def progress_bar(total: int, desc: str, enabled: bool = True, unit: str = "sent",
                 clock: EncodeClock | None = None) -> Iterator[SentenceProgress]:
    """A tqdm bar on stderr (hidden when disabled), yielding its update callable."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit=unit, disable=not enabled, file=sys.stderr, dynamic_ncols=True,
               mininterval=0.5)
    try:
        yield SentenceProgress(bar, clock)
    finally:
        bar.close()


@dataclass
class RunContext:
    """What a task's ``evaluate`` gets from the runner besides encoder, data and settings."""

    cache: Any  # the encoder's cache (EmbeddingCache / RoutedCache / MemoryCache) or None
    progress: Callable[[int], Any] | None
    engine: Any
    run: RunOptions
    _stack: contextlib.ExitStack = field(repr=False, default_factory=contextlib.ExitStack)

    def encoder(self, spec, options: dict | None = None):
        """Another encoder a task needs (P-xSIM's auxiliary one), with its cache under the run's
        cache policy; the runner closes the cache with the run's own."""
        enc = make_encoder(spec, options)
        if is_cache_object(self.run.cache):  # a cache handed over holds the run's own encoder's vectors only
            return enc, None
        store = open_cache(enc, self.run.cache)
        if store is not None:
            self._stack.callback(store.close)
        return enc, store


def check_numbers(records: Sequence[ResultRecord]) -> None:
    """No record is saved or returned with a value that is not a number (an encoder's NaN, a
    pair scorer's inf): one sentence naming the record."""
    for r in records:
        if not isinstance(r.value, (int, float)) or not math.isfinite(r.value):
            raise BadInputError(f"the {r.metric} of {r.src_lang}-{r.tgt_lang} came out as {r.value!r}, not a number: "
                                f"the encoder {r.signature.encoder} returned vectors or scores that are not finite; "
                                "nothing was saved")


def save_records(records: Sequence[ResultRecord], save) -> None:
    """Store records all or nothing (``save``: True = the default results folder, a path = that folder)."""
    if save:
        ResultStore(None if save is True else save).put_many(records)


def prepare(task: Task, *, spec=None, settings=None, run: RunOptions | None = None,
            **knobs) -> tuple[Any, Any, RunOptions]:
    """Knobs -> (data, settings, run options), every input read and checked; no model loaded."""
    src_kw, set_kw, run_kw = split_knobs(task, knobs)
    src_kw, set_kw = check_knob_types(task.Source, src_kw), check_knob_types(task.Settings, set_kw)
    if settings is not None and set_kw:
        raise BadInputError(f"give the {task.name} settings either as settings= or as keywords "
                            f"({', '.join(sorted(set_kw))}), not both")
    if settings is None:
        settings = task.Settings.make(**set_kw)
    if spec is None:
        spec = task.Source(**src_kw)
    elif src_kw:
        raise BadInputError(f"give the {task.name} data either as spec= or as keywords, not both")
    check_knob_bounds(spec)
    check_knob_bounds(settings)
    run = _run_options(run, run_kw)
    if run.engine is not None and run.engine.gemm == "torch":  # an absent device, before anything is written
        check_device(run.engine.device, "--gemm-device")
    return task.load(spec, settings), settings, run


def _run_options(run: RunOptions | None, given: dict[str, Any]) -> RunOptions:
    if run is None:
        return RunOptions(**given)
    if given:
        raise BadInputError(f"give run options either as run= or as keywords ({', '.join(sorted(given))}), not both")
    return run


def run_task(task: Task, encoder, *, spec=None, settings=None, run: RunOptions | None = None, **knobs) -> Results:
    """Run ``task`` with ``encoder`` (a registered name, an Encoder or an object with ``encode``).
    ``knobs``: any field of the task's ``Source`` or ``Settings`` or of ``RunOptions`` by name
    (or the objects themselves: ``spec=``, ``settings=``, ``run=``); the settings' ``protocol``
    applies its presets (LASER's, the paper's, Keung et al.'s)."""
    data, settings, run = prepare(task, spec=spec, settings=settings, run=run, **knobs)
    return run_prepared(task, encoder, data, settings, run)


def run_prepared(task: Task, encoder, data, settings, run: RunOptions) -> Results:
    """The rest of ``run_task`` for data already loaded and checked (the study's grid calls this
    once per cell with one loaded encoder)."""
    if not task.encodes:  # its inputs are vectors already: no encoder, cache or records to store
        if encoder is not None:
            raise BadInputError(f"{task.name} reads precomputed embeddings, not an encoder: give encoder=None")
        report = task.evaluate(None, data, settings, RunContext(None, None, run.engine, run))
        return Results(report.records, report)
    clock = EncodeClock()  # started before the encoder is built: its loading is part of the start-up
    enc = make_encoder(encoder, run.options, name=run.encoder_name, revision=run.revision,
                       encode_kwargs=run.encode_kwargs)
    if task.needs_vectors and enc.kind != "vector":
        raise BadInputError(f"{task.name} needs a vector encoder (margin kNN over sentence vectors); "
                            f"{enc.id} scores sentence pairs")
    with contextlib.ExitStack() as stack:
        store = open_cache(enc, run.cache)
        if store is not None and store is not run.cache:  # a cache handed over is closed by its owner
            stack.callback(store.close)
        sides = task.sides(data, settings)
        total = task.total(data, settings)
        if run.progress and total:  # the cost, before the first forward pass; with the bar, so --no-progress hides it
            print(cost_line(enc.id, total, cached_count(enc, store, sides), read_rate(enc.id)), file=sys.stderr,
                  flush=True)
        update = stack.enter_context(progress_bar(total, f"encoding ({enc.id})",
                                                  enabled=run.progress and not task.own_progress, clock=clock))
        ctx = RunContext(store, update, run.engine, run)
        stack.enter_context(ctx._stack)
        report = _evaluate(task, enc, encoder, data, settings, ctx, sides)
    measured = clock.rate()
    if measured is not None:
        write_rate(enc.id, measured)
    if not report.encoder_note:
        report.encoder_note = getattr(enc, "note", "")
    check_numbers(report.records)
    if isinstance(settings, IntervalSettings) and settings.ci is not None:
        report.intervals = add_intervals(report.records, settings.ci, settings.ci_resamples, settings.ci_seed,
                                         settings.interval_label())
    save_records(report.records, run.save)
    return Results(report.records, report)


def _prefill_on_ray(enc, spec, sides, ctx: RunContext) -> int:
    if not isinstance(spec, str):
        raise BadInputError("--ray needs a registered encoder name: each worker builds its own copy of the "
                            "encoder from the name and options")
    from ..distributed.ray_backend import RayExecutor
    from ..encoders import create_encoder

    factory = functools.partial(create_encoder, spec, **(ctx.run.options or {}))
    ex = RayExecutor(ctx.run.ray)
    try:
        return prefill_cache(enc, sides, ctx.cache, ex, factory, progress=ctx.progress)
    finally:
        ex.close()


def _evaluate(task: Task, enc, spec, data, settings, ctx: RunContext, sides) -> TaskReport:
    """The task, after a prefill of its sides: on Ray when ``ray`` is given (each worker builds the
    encoder from its registered name and the cluster fills the cache with exactly the chunks a
    sequential run would encode), or here, the sides pooled, when the encoder ``pools_sides``
    (a fixed-shape encoder on a GPU); the task then reads every vector and its results are the same."""
    ray = ctx.run.ray
    if ray and enc.kind != "vector":
        log.warning("--ray distributes vector encoders; %s scores sentence pairs, so it runs in this process", enc.id)
    pooled = not ray and enc.kind == "vector" and bool(getattr(enc, "pools_sides", False))
    if not pooled and (not ray or enc.kind != "vector"):
        return task.evaluate(enc, data, settings, ctx)
    if ctx.cache is None:
        ctx.cache = MemoryCache()
    if pooled:  # every side in one pool of length-sorted chunks, in this process
        n_new = prefill_local(enc, sides, ctx.cache, progress=ctx.progress)
    else:
        n_new = _prefill_on_ray(enc, spec, sides, ctx)
    ctx.progress = lambda n: None
    report = task.evaluate(enc, data, settings, ctx)
    report.n_cached -= n_new
    report.n_encoded += n_new
    return report
