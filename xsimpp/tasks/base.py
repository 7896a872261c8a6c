"""What every task shares: the ``Task`` a task module subclasses and registers, the knobs it
declares (``knob``), the cached embedder, and settings that sign their own results.

A task is data + encoder + metric -> result records (the MTEB idea). It declares two frozen
dataclasses of knobs: its ``Source`` (which data: dataset, languages, files, limits) and its
``Settings`` (what changes a number: margin, k, ...; every field signs every record through
``sign``, so no knob can change a number without changing its signature -- sacrebleu's rule).
Each knob is declared once with ``knob`` (``xsimpp.options``: default, help, type, range; checks that
join knobs in ``__post_init__``); the API
takes the same names as keywords and the CLI derives its flags from them (``xsimpp.cli.knobs``),
so a flag cannot exist in one and not the other. Protocol presets (LASER's, the xSIM++ paper's,
Keung et al.'s) are ``Settings.PRESETS``: the values a protocol sets, and which of them a user may
not change under it. ``xsimpp.tasks.runner`` runs every task the same way.
"""

from __future__ import annotations

import numbers
import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from ..cache import (CHUNK_SIZE, EmbeddingCache, cache_lang, checked_chunk, encode_cached, pending_chunks,
                     report_cached, sentence_key, states_cached)
from ..datasets.base import text_checksum
from ..encoders.base import Encoder
from ..engine import MARGINS
from ..errors import BadInputError
from ..options import knob
from ..scoring.significance import BOOTSTRAP_RESAMPLES, DEFAULT_SEED, MAX_RESAMPLES, MIN_RESAMPLES
from ..textio import MAX_SEED, path, seed
from ..results import ResultRecord, Signature


def exclude_knob() -> Any:
    """The ``exclude`` knob of every task that takes ``--langs all``, stated once."""
    return knob((), "with --langs all: languages to leave out, comma-separated (e.g. kea,fur)", metavar="LANGS")


def knob_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _plain_types(hint) -> tuple | None:
    """The types a knob annotated ``hint`` takes when they are plain (str, int, float, bool, None,
    or a union of them); None for anything else (Any, containers), which the task checks itself."""
    import types
    import typing

    args = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    plain = (str, int, float, bool, type(None))
    if not all(a in plain for a in args):
        return None
    return tuple(args) + ((int,) if float in args else ())  # a float knob takes an int


def _is_list_knob(hint) -> bool:
    """Whether a knob annotated ``hint`` holds a tuple (``tuple[str, ...]``, optionally ``| None``)."""
    import types
    import typing

    args = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    return any(a is tuple or typing.get_origin(a) is tuple for a in args)


def check_knob_types(cls: type, given: dict[str, Any]) -> dict[str, Any]:
    """Keywords of the API checked against their knob's declared type before anything else: a
    wrong type is one sentence naming the knob (as its CLI flag), never a TypeError from deep inside.
    Returns them with numpy scalars as the Python numbers they are (what a signature can hold)."""
    import typing

    hints = typing.get_type_hints(cls)
    declared = {f.name: f for f in fields(cls)}
    out = dict(given)
    for name, value in given.items():
        if isinstance(value, np.generic):
            value = out[name] = value.item()
        knob_field = declared.get(name)
        md = knob_field.metadata if knob_field is not None else {}
        # a path knob takes a path (mine's embeddings also an array), never a number
        if md.get("type") is path and value is not None and not isinstance(value, (str, os.PathLike, np.ndarray)):
            raise BadInputError(f"--{name.replace('_', '-')} takes a path (text or pathlib.Path), not {value!r}")
        if _is_list_knob(hints.get(name)) and isinstance(value, str) and callable(md.get("type")):
            value = out[name] = md["type"](value)  # a list knob given one text: read as the CLI reads it (a,b)
        allowed = _plain_types(hints[name]) if name in hints else None
        if allowed is None:
            continue
        # numpy's integers and floats count as the numbers they are (a grid loop over np.arange)
        accepted = tuple({int: numbers.Integral, float: numbers.Real}.get(t, t) for t in allowed)
        wrong = not isinstance(value, accepted) or (isinstance(value, bool) and bool not in allowed)
        if wrong:
            names = {str: "text", int: "an integer", float: "a number", bool: "true or false", type(None): "None"}
            kinds = " or ".join(names[t] for t in dict.fromkeys(allowed) if not (t is int and float in allowed))
            raise BadInputError(f"--{name.replace('_', '-')} takes {kinds}, not {value!r}")
    return out


def check_knob_bounds(declared: Any) -> None:
    """Every knob of a built ``Source`` or ``Settings`` within its declared ``min``/``max``, checked
    before any input is read: one sentence naming the knob (as its CLI flag) and its range, never a
    number silently capped (``--flores-lines 5000``) nor a run that cannot end."""
    from ..options import describe, within_bounds

    for f in fields(declared):
        value = getattr(declared, f.name)
        if not within_bounds(f, value):
            flag = f.metadata.get("flag") or f"--{f.name.replace('_', '-')}"
            raise BadInputError(f"{flag} takes {describe(f)}, not {value!r}")


def preset_values(cls: type, protocol: str | None, given: dict[str, Any]) -> dict[str, Any]:
    """``given`` (the knobs a user set) over what ``protocol`` presets; a knob the protocol fixes
    and the user set to something else is refused, naming both (never silently overridden)."""
    presets = getattr(cls, "PRESETS", {})
    if protocol is None:
        return dict(given)
    if protocol not in presets:
        raise BadInputError(f"protocol must be one of {', '.join(presets)}, got {protocol!r}")
    preset = presets[protocol]
    for name in getattr(cls, "FIXED", {}).get(protocol, ()):
        if name in given and given[name] != preset[name]:
            raise BadInputError(f"--protocol {protocol} sets --{name.replace('_', '-')} {preset[name]}; "
                                f"drop --{name.replace('_', '-')} {given[name]}")
    return {**preset, **given}


@dataclass(frozen=True)
class Settings:
    """Every knob of a task that changes its numbers. Subclasses add fields (``knob``, with
    defaults) and check them in ``__post_init__``. ``PRESETS``: protocol -> the knob values it
    sets; ``FIXED``: protocol -> the knobs a user may not change under it.

    The signature (``params``) holds every field by default: a knob leaves it only by declaring
    ``unsigned=REASON`` (or ``signed_in=KEY``) in its ``knob``, so a new knob is signed without
    anyone remembering to. ``signed_values`` may show a signed knob as it is used (k = 1 under the
    absolute margin) and must produce each ``signed_in`` key."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}
    FIXED: ClassVar[dict[str, tuple[str, ...]]] = {}

    @classmethod
    def make(cls, **given: Any):
        """Settings from the knobs a user gave (absent = default) under their ``protocol``'s presets."""
        return cls(**preset_values(cls, given.get("protocol"), given))

    def signed_values(self) -> dict[str, Any]:
        """Signature keys shown otherwise than as their raw field value (default: none)."""
        return {}

    def params(self) -> dict[str, Any]:
        """The signature's settings: every field not declared unsigned, as ``signed_values`` shows it."""
        out: dict[str, Any] = {}
        combined: set[str] = set()
        for f in fields(self):
            if f.metadata.get("unsigned"):
                continue
            if f.metadata.get("signed_in"):
                combined.add(f.metadata["signed_in"])
                continue
            out[f.name] = getattr(self, f.name)
        shown = self.signed_values()
        missing = combined - set(shown)
        if missing:
            raise TypeError(f"{type(self).__name__}.signed_values does not produce {sorted(missing)}, the signature "
                            "key(s) its knobs are signed in")
        out.update(shown)
        return out


_SIGNED_WITH_INTERVAL = ("the records given an interval carry its method, level, resamples and seed as their 'ci' "
                         "signature key; the number itself does not change")


@dataclass(frozen=True)
class IntervalSettings(Settings):
    """Settings of a task whose records keep per-sentence outcomes (``Outcomes``): ``ci`` asks the
    runner for a percentile-bootstrap confidence interval of every record and of each average
    (``xsimpp.scoring.significance``), ``ci_resamples`` resamples drawn with ``ci_seed``."""

    ci: float | None = knob(None, "add a percentile-bootstrap confidence interval at this level to every number and "
                                  "average (--ci alone: 0.95)", type=float, const=0.95, metavar="LEVEL",
                            unsigned=_SIGNED_WITH_INTERVAL)
    ci_resamples: int = knob(BOOTSTRAP_RESAMPLES, "bootstrap resamples of --ci (from 100, so that a 95%% interval's "
                             "tails hold a few resamples, to 100000)", type=int, min=MIN_RESAMPLES,
                             max=MAX_RESAMPLES, unsigned=_SIGNED_WITH_INTERVAL)
    ci_seed: int = knob(DEFAULT_SEED, "seed of --ci's resamples (sacrebleu's default)", type=seed, min=0, max=MAX_SEED,
                        unsigned=_SIGNED_WITH_INTERVAL)

    def __post_init__(self) -> None:
        from ..scoring.significance import check_level, check_resamples

        if self.ci is not None:
            check_level(self.ci)
        check_resamples(self.ci_resamples, "--ci-resamples")
        if isinstance(self.ci_seed, bool) or not isinstance(self.ci_seed, int) or not 0 <= self.ci_seed <= MAX_SEED:
            raise BadInputError(f"--ci-seed must be an integer from 0 to {MAX_SEED}, not {self.ci_seed!r}")
        if self.ci is None:  # an interval's resamples or seed without an interval would be dropped unseen
            for name, default in (("ci_resamples", BOOTSTRAP_RESAMPLES), ("ci_seed", DEFAULT_SEED)):
                if getattr(self, name) != default:
                    raise BadInputError(f"--{name.replace('_', '-')} sets how --ci draws its interval; add --ci "
                                        "(e.g. --ci 0.95) or leave it out")

    def interval_label(self) -> str:
        """What an interval's record signs (its 'ci' key)."""
        return f"bootstrap-percentile:{self.ci:g}:{self.ci_resamples}:seed{self.ci_seed}"


def unsigned_knobs(cls: type) -> dict[str, str]:
    """Knob -> why it is not in the signature (the only way a setting leaves it)."""
    return {f.name: f.metadata["unsigned"] for f in fields(cls) if f.metadata.get("unsigned")}


# The largest k a margin averages over: LASER's is 4, and the selection keeps up to 80 bytes per
# neighbour beside every column of a block (engine.knn), so a k of millions only exhausts memory.
MAX_K = 1024
# The most cross-validation folds: each fold sets a threshold on the others, and beyond 100 a fold
# holds a handful of sources (the study's 500 gold lines: 5 per fold).
MAX_FOLDS = 100


def check_margin_k(margin: str, k: Any) -> None:
    if margin not in MARGINS:
        raise BadInputError(f"margin must be one of {', '.join(MARGINS)}, got '{margin}'")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise BadInputError(f"k must be a positive integer, got {k!r}")


def sign(encoder: Encoder, dataset: str, split: str, checksum: str, metric: str, settings: Settings,
         **view: Any) -> Signature:
    """The signature of one record: the encoder, the data, the metric, every setting, and the view
    of the result the record reports (e.g. the comparison mode of a Tatoeba accuracy)."""
    params = settings.params()
    clash = set(params) & set(view)
    if clash:
        raise ValueError(f"record view overrides settings {sorted(clash)}")
    return Signature(encoder.id, encoder.revision, encoder.fingerprint, dataset, split, checksum, metric,
                     {**params, **view})


@dataclass(frozen=True)
class MetricInfo:
    """How a task declares a metric its records carry: the unit, which way is better, what it is
    (``xsimpp.tasks.registry`` keeps them, each with the task that produces it)."""

    unit: str
    lower_is_better: bool
    description: str = ""


class Task:
    """A task: what the runner (``xsimpp.tasks.runner.run_task``) needs to run it, declared once.

    Subclasses set ``name``, ``description``, ``metrics`` (metric -> how to read it), ``Source``
    and ``Settings`` (frozen dataclasses of ``knob`` fields), and implement:

    - ``load(source, settings)``: read and check every input before any model is loaded (k
      against the set sizes included), returning the task's data;
    - ``sides(data, settings)``: the (language, sentences) the run encodes, in the order it asks
      for them (a Ray prefill encodes exactly these; their size is the progress total);
    - ``evaluate(encoder, data, settings, ctx)``: the records and report (``ctx``: ``RunContext``);
    - ``render(report)``: the report as the CLI prints it.

    A new task is one module with one subclass, registered in ``xsimpp/tasks/__init__.py``: the API
    (``xsimpp.run``) and the CLI (a subcommand derived from the knobs, when ``cli`` is set) follow.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    metrics: ClassVar[dict[str, MetricInfo]]
    Source: ClassVar[type]
    Settings: ClassVar[type]
    cli: ClassVar[bool] = False  # a subcommand derived from the knobs (tasks with a hand-written one: False)
    needs_vectors: ClassVar[bool] = False  # refuses pair scorers (OneAligner) up front
    own_progress: ClassVar[bool] = False  # shows its own progress bars (the runner shows none)
    encodes: ClassVar[bool] = True  # False: reads precomputed vectors (mine); the runner makes no encoder

    def load(self, source, settings) -> Any:
        raise NotImplementedError

    def sides(self, data, settings) -> list[tuple[str, Sequence[str]]]:
        return []

    def total(self, data, settings) -> int:
        """Sentences the run looks up or encodes (the progress bar's total): each distinct side once,
        as the embedder asks for it once (a side asked again, e.g. English in both directions of
        every pair, is the run's memo, and the bar would stop short of its total)."""
        distinct = {(lang, text_checksum(s)): len(s) for lang, s in self.sides(data, settings)}
        return sum(distinct.values())

    def evaluate(self, encoder: Encoder, data, settings, ctx) -> "TaskReport":
        raise NotImplementedError

    def render(self, report) -> str:
        raise NotImplementedError


@dataclass
class TaskReport:
    """What every evaluation task returns besides its own details: records and cache counts."""

    records: list[ResultRecord] = field(default_factory=list, kw_only=True)
    n_encoded: int = field(default=0, kw_only=True)
    n_cached: int = field(default=0, kw_only=True)
    encoder_note: str = field(default="", kw_only=True)  # a choice the encoder made for the user (its layer)
    intervals: list = field(default_factory=list, kw_only=True)  # --ci's rows (tasks.intervals.Interval)

    def count_encoding(self, embed: "Embedder | PairScores | None") -> None:
        if embed is not None:
            self.n_encoded = embed.n_encoded
            self.n_cached = embed.n_requested - embed.n_encoded


class Embedder:
    """Encodes through the cache and counts what was encoded vs reused."""

    def __init__(self, encoder: Encoder, cache: EmbeddingCache | None, progress: Callable[[int], None] | None = None):
        self.encoder, self.cache, self.progress = encoder, cache, progress
        self.n_encoded = 0
        self.n_requested = 0
        self._memo: dict[tuple[str, str], np.ndarray] = {}

    def __call__(self, sentences: Sequence[str], lang: str) -> np.ndarray:
        memo_key = (lang, text_checksum(sentences))
        if memo_key in self._memo:  # the same side asked for twice in one run (e.g. both directions)
            return self._memo[memo_key]
        vecs, n_new = encode_cached(self.encoder, sentences, cache=self.cache, lang=lang, progress=self.progress)
        self.n_encoded += n_new
        self.n_requested += len(sentences)
        self._memo[memo_key] = vecs
        return vecs


def bitext_sides(bitexts) -> list[tuple[str, Sequence[str]]]:
    """The (language, sentences) a run over line-aligned bitexts encodes: each source, each target."""
    return [side for bt in bitexts for side in ((bt.src_lang, bt.src), (bt.tgt_lang, bt.tgt))]


def embedder_for(encoder: Encoder, cache: EmbeddingCache | None, progress) -> Embedder | None:
    """An embedder for vector encoders; None for pair scorers (they score pairs, not vectors)."""
    return Embedder(encoder, cache, progress) if encoder.kind == "vector" else None


class PairScores:
    """Similarity matrices from a pair scorer, through the token-state cache when the scorer keeps
    token states (``token_states`` / ``score_states``, e.g. OneAligner): each sentence's states are
    computed once and reused across runs; counts what was encoded vs reused, as ``Embedder`` does."""

    def __init__(self, encoder: Encoder, cache: EmbeddingCache | None, progress: Callable[[int], None] | None = None):
        self.encoder, self.cache, self.progress = encoder, cache, progress
        self.n_encoded = 0
        self.n_requested = 0
        self._memo: dict[tuple[str, str], list] = {}
        self.keeps_states = hasattr(encoder, "token_states") and hasattr(encoder, "score_states")

    def states(self, sentences: Sequence[str], lang: str) -> list:
        memo_key = (lang, text_checksum(sentences))
        if memo_key not in self._memo:
            got, n_new = states_cached(self.encoder, sentences, cache=self.cache, lang=lang, progress=self.progress)
            self.n_encoded += n_new
            self.n_requested += len(sentences)
            if len(self._memo) > 4:
                self._memo.clear()
            self._memo[memo_key] = got
        return self._memo[memo_key]

    def __call__(self, sources: Sequence[str], targets: Sequence[str], src_lang: str, tgt_lang: str,
                 more_targets: Sequence[str] = ()) -> np.ndarray:
        """(sources, targets + more_targets) scores; ``more_targets`` (xsim++'s negatives) are looked
        up on their own, so the targets asked for before count as reused, not as new."""
        if not self.keeps_states:  # a scorer without token states: no cache, report the sentences as done
            every = list(targets) + list(more_targets)
            sim = self.encoder.similarity(sources, every, src_lang=src_lang, tgt_lang=tgt_lang)
            self.n_encoded += len(sources) + len(every)
            self.n_requested += len(sources) + len(every)
            if self.progress:
                self.progress(len(sources) + len(every))
            return sim
        tgt = self.states(targets, tgt_lang)
        if len(more_targets):
            tgt = list(tgt) + list(self.states(more_targets, tgt_lang))
        return self.encoder.score_states(self.states(sources, src_lang), tgt)


def pair_scores_for(encoder: Encoder, cache: EmbeddingCache | None, progress) -> PairScores | None:
    """Scores for pair scorers; None for vector encoders."""
    return PairScores(encoder, cache, progress) if encoder.kind == "pair" else None


# -- encoding elsewhere (a Ray cluster, a process pool) -----------------------------------------

_WORKER_ENCODERS: dict[str, Encoder] = {}  # one encoder per worker process and configuration


def encode_chunk(factory: Callable[[], Encoder], fingerprint: str, job: tuple[str | None, list[str]]) -> np.ndarray:
    """What a worker runs: build the encoder once per process (``factory``, e.g. a partial of
    ``create_encoder``), then encode one chunk of sentences in the given language."""
    enc = _WORKER_ENCODERS.get(fingerprint)
    if enc is None:
        enc = _WORKER_ENCODERS[fingerprint] = factory()
    lang, texts = job
    return np.asarray(enc.encode(texts, lang=lang), dtype=np.float32)


def pending_jobs(encoder: Encoder, sides: Sequence[tuple[str, Sequence[str]]], cache, *, chunk_size: int = CHUNK_SIZE,
                 pooled: bool = False, progress: Callable[[int], None] | None = None) -> list[tuple[str, str, list]]:
    """(cache language, language, chunk) for every chunk of ``sides`` that ``cache`` lacks: side by
    side, exactly the chunks a sequential run would encode (``pending_chunks``), or, ``pooled``, the
    sides that share a cache language in one pool, sorted by length across them (a language-agnostic
    encoder then gets chunks of similar lengths from every language at once)."""
    planned: dict[str, set[str]] = {}
    pools: dict[str, tuple[str, list[str], list[str]]] = {}
    jobs = []
    for lang, sentences in sides:
        key_lang = cache_lang(encoder, lang)
        keys = [sentence_key(s) for s in sentences]
        have = cache.get_many(keys, key_lang)
        report_cached(progress, sum(1 for k in keys if k in have))
        if pooled:  # the side's missing sentences join its cache language's pool
            pool = pools.setdefault(key_lang, (lang, [], []))
            pool[1].extend(k for k in keys if k not in have)
            pool[2].extend(s for k, s in zip(keys, sentences) if k not in have)
            continue
        for chunk in pending_chunks(keys, sentences, have, chunk_size, planned.setdefault(key_lang, set())):
            jobs.append((key_lang, lang, chunk))
    for key_lang, (lang, keys, sentences) in pools.items():
        jobs += [(key_lang, lang, chunk) for chunk in pending_chunks(keys, sentences, set(), chunk_size)]
    return jobs


def prefill_cache(encoder: Encoder, sides: Sequence[tuple[str, Sequence[str]]], cache, executor,
                  factory: Callable[[], Encoder], *, chunk_size: int = CHUNK_SIZE,
                  progress: Callable[[int], None] | None = None) -> int:
    """Encode what ``cache`` lacks for ``sides`` (language, sentences) through ``executor.map``
    (one task per encoder x language x chunk) and store it, checked, in ``cache``. The chunks are
    exactly those a sequential run of the same sides would give the encoder (``pending_jobs``,
    in the same order), so a deterministic encoder gives the very same vectors; every chunk is
    committed as it arrives (an interrupted run keeps them). Returns the number encoded."""
    import functools

    jobs = pending_jobs(encoder, sides, cache, chunk_size=chunk_size, progress=progress)
    work = functools.partial(encode_chunk, factory, encoder.fingerprint)
    n_new = 0
    results = executor.map(work, [(lang, [s for _, s in chunk]) for _, lang, chunk in jobs])
    for (key_lang, _, chunk), vecs in zip(jobs, results):
        cache.put_many(checked_chunk(encoder, chunk, vecs), key_lang)
        n_new += len(chunk)
        if progress:
            progress(len(chunk))
    return n_new


# Sentences a pooled chunk holds: the chunks are sorted by characters, not by the encoder's tokens,
# so a chunk spans many widths, and at fixed shapes each width's last batch is filled up. On the
# FLORES-200 devtest pool at 4 096 tokens a batch that ran 1.66x the tokens needed in chunks of
# 1 024, 1.16x of 4 096, 1.04x of 16 384 (benchmarks/fixed_shape_padding.py); on a GPU a chunk this
# size is seconds of work, which is what an interrupted run can lose.
POOL_CHUNK_SIZE = 16 * CHUNK_SIZE


def prefill_local(encoder: Encoder, sides: Sequence[tuple[str, Sequence[str]]], cache, *,
                  chunk_size: int = POOL_CHUNK_SIZE, progress: Callable[[int], None] | None = None) -> int:
    """Encode what ``cache`` lacks for ``sides`` in this process, the sides pooled
    (``pending_jobs(pooled=True)``): for an encoder that ``pools_sides`` (its vectors do not depend
    on their companions), so the vectors are those of a side-by-side run. Each chunk is committed
    as it is encoded. Returns the number encoded."""
    n_new = 0
    for key_lang, lang, chunk in pending_jobs(encoder, sides, cache, chunk_size=chunk_size, pooled=True,
                                              progress=progress):
        vecs = encoder.encode([s for _, s in chunk], lang=lang, progress=progress)
        cache.put_many(checked_chunk(encoder, chunk, vecs), key_lang)
        n_new += len(chunk)
    return n_new
