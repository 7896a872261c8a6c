"""What every task shares: the cached embedder, settings that sign their own results, and the
description a task registers (its name and the metrics it writes).

A task is data + encoder + metric -> result records (the MTEB idea). Its knobs live in one frozen
``Settings`` dataclass that the task reads them from; every field goes into the signature of every
record (``sign``), so no knob can change a number without changing its signature (sacrebleu's
rule). Knobs are checked when the settings are made, before any model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, Sequence

import numpy as np

from ..cache import (CHUNK_SIZE, EmbeddingCache, cache_lang, checked_chunk, encode_cached, pending_chunks,
                     sentence_key, states_cached)
from ..datasets.base import text_checksum
from ..encoders.base import Encoder
from ..engine import MARGINS
from ..errors import BadInputError
from ..results import ResultRecord, Signature


@dataclass(frozen=True)
class Settings:
    """Every knob of a task that changes its numbers. Subclasses add fields (with defaults) and
    may override ``params`` to show a knob as it is used (e.g. k = 1 for the absolute margin)."""

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


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
    """How to read a metric's value: its unit and which way is better."""

    unit: str
    lower_is_better: bool


@dataclass(frozen=True)
class Task:
    """A registered task: its name, what it measures, the metrics its records carry."""

    name: str
    description: str
    metrics: dict[str, MetricInfo]
    settings: type | None = None
    run: Callable[..., Any] | None = field(default=None, repr=False)


@dataclass
class TaskReport:
    """What every evaluation task returns besides its own details: records and cache counts."""

    records: list[ResultRecord] = field(default_factory=list, kw_only=True)
    n_encoded: int = field(default=0, kw_only=True)
    n_cached: int = field(default=0, kw_only=True)
    encoder_note: str = field(default="", kw_only=True)  # a choice the encoder made for the user (its layer)

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


def prefill_cache(encoder: Encoder, sides: Sequence[tuple[str, Sequence[str]]], cache, executor,
                  factory: Callable[[], Encoder], *, chunk_size: int = CHUNK_SIZE,
                  progress: Callable[[int], None] | None = None) -> int:
    """Encode what ``cache`` lacks for ``sides`` (language, sentences) through ``executor.map``
    (one task per encoder x language x chunk) and store it, checked, in ``cache``. The chunks are
    exactly those a sequential run of the same sides would give the encoder (``pending_chunks``,
    in the same order), so a deterministic encoder gives the very same vectors; every chunk is
    committed as it arrives (an interrupted run keeps them). Returns the number encoded."""
    import functools

    planned: dict[str, set[str]] = {}
    jobs = []
    for lang, sentences in sides:
        key_lang = cache_lang(encoder, lang)
        keys = [sentence_key(s) for s in sentences]
        have = cache.get_many(keys, key_lang)
        if progress:
            progress(sum(1 for k in keys if k in have))
        for chunk in pending_chunks(keys, sentences, have, chunk_size, planned.setdefault(key_lang, set())):
            jobs.append((key_lang, lang, chunk))
    work = functools.partial(encode_chunk, factory, encoder.fingerprint)
    n_new = 0
    results = executor.map(work, [(lang, [s for _, s in chunk]) for _, lang, chunk in jobs])
    for (key_lang, _, chunk), vecs in zip(jobs, results):
        cache.put_many(checked_chunk(encoder, chunk, vecs), key_lang)
        n_new += len(chunk)
        if progress:
            progress(len(chunk))
    return n_new
