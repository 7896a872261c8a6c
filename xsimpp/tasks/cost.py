"""What a run will cost, said before its first forward pass, from this machine's measured rate.

The runner prints one line on stderr (with the progress bar; ``--no-progress`` hides both): the
sentences the run looks up, how many the embedding cache already holds, and -- when an earlier run
of the same encoder measured it here -- the expected time. The measurement is kept per encoder id in
``<user data dir>/encode-rates.json`` and replaced after every run that encoded enough to measure:

- ``startup_seconds``: from the run's start (before the encoder is built) to the first batch of
  sentences encoded, so model loading and the first batch are in it;
- ``sentences_per_second``: the sentences encoded after that first batch over the time they took
  (the search and scoring between batches included, so the estimate errs long, not short).

The trainers (`train onealigner`, `mnr`, `distill`, `self-train`) keep their steps per second the
same way, keyed by what sets a step's cost (``training_key``), and say their steps up front
(``training_cost``); `xsimpp study` says each member's encoding pass (``distinct_cached``). Every
such line goes through ``say``.

No record: the line says so rather than guess. The record is advice, never a result: a file that
cannot be read or written changes nothing but the line.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from ..errors import BadInputError
from ..paths import user_data_dir
from ..textio import atomic_write_json, locked, make_dirs

log = logging.getLogger(__name__)

RATES_FILE = "encode-rates.json"
# Fewer sentences or seconds than this after the first batch say more about noise than about the rate.
MIN_MEASURED_SENTENCES = 64
MIN_MEASURED_SECONDS = 1.0


def rates_path() -> Path:
    return user_data_dir() / RATES_FILE


@dataclass(frozen=True)
class EncodeRate:
    """One encoder's measured speed on this machine."""

    sentences_per_second: float
    startup_seconds: float
    measured: str  # the date, ISO

    def seconds(self, n_encode: int) -> float:
        return self.startup_seconds + n_encode / self.sentences_per_second


def _read_all() -> dict:
    if not rates_path().is_file():  # none yet, or a folder or a pipe (reading one would block the run)
        return {}
    try:
        rows = json.loads(rates_path().read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # none yet, or damaged: no estimate; the next run writes one
        return {}
    return rows if isinstance(rows, dict) else {}


def read_rate(encoder_id: str) -> EncodeRate | None:
    row = _read_all().get(encoder_id)
    try:
        rate = EncodeRate(float(row["sentences_per_second"]), float(row["startup_seconds"]), str(row["measured"]))
    except (TypeError, KeyError, ValueError):
        return None
    ok = 0 < rate.sentences_per_second < math.inf and 0 <= rate.startup_seconds < math.inf
    return rate if ok else None


def write_rate(encoder_id: str, rate: EncodeRate) -> None:
    _write_row(encoder_id, {"sentences_per_second": round(rate.sentences_per_second, 3),
                            "startup_seconds": round(rate.startup_seconds, 2), "measured": rate.measured,
                            "cpus": os.cpu_count()})


def _write_row(key: str, row: dict) -> None:
    """Replace one row; the file's other rows are read and written back under a lock, as runs that
    end together would otherwise each write back the rows they read and drop the others' new ones."""
    try:
        make_dirs(rates_path().parent)
        with locked(rates_path().with_name(RATES_FILE + ".lock")):
            rows = _read_all()
            rows[key] = row
            atomic_write_json(rates_path(), rows)
    except (OSError, BadInputError) as e:  # advice only: a read-only or full home costs the next estimate, not the run
        log.debug("encode rate not recorded in %s: %s", rates_path(), e)


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def cost_line(encoder_id: str, total: int, n_cached: int | None, rate: EncodeRate | None) -> str:
    """``cost: ...``: what the run looks up and encodes, and the expected time when measured."""
    if n_cached is None:  # no cache to ask (none used, or a pair scorer's)
        what = f"{total} sentences to encode with {encoder_id}"
        n_encode = total
    else:
        share = f" ({100 * n_cached / total:.0f} %)" if total else ""
        n_encode = total - n_cached
        what = f"{total} sentences for {encoder_id}, {n_cached} in the cache{share}, {n_encode} to encode"
    if not n_encode:
        return f"cost: {what}"
    if rate is None:
        return (f"cost: {what}; no encoding rate measured for this encoder on this machine yet "
                f"(this run measures it: {rates_path()})")
    return (f"cost: {what}: about {duration(rate.seconds(n_encode))} at the {rate.sentences_per_second:.3g} "
            f"sentences/s and {duration(rate.startup_seconds)} start-up measured here on {rate.measured}")


class EncodeClock:
    """Times a run's encoding from the progress callbacks (see the module docstring)."""

    def __init__(self):
        self.start = time.perf_counter()
        self.first: float | None = None
        self.last = 0.0
        self.after_first = 0

    def encoded(self, n: int) -> None:
        now = time.perf_counter()
        if self.first is None:
            self.first = now
        else:
            self.after_first += n
        self.last = now

    def rate(self) -> EncodeRate | None:
        if self.first is None or self.after_first < MIN_MEASURED_SENTENCES:
            return None
        seconds = self.last - self.first
        if seconds < MIN_MEASURED_SECONDS:
            return None
        return EncodeRate(self.after_first / seconds, self.first - self.start, date.today().isoformat())


def cached_count(encoder, cache, sides) -> int | None:
    """How many of the run's sentences (each distinct side once, as ``Task.total`` counts them) the
    vector cache already holds; None when there is no vector cache to ask."""
    from ..cache import cache_lang, sentence_key
    from ..datasets.base import text_checksum

    if cache is None or encoder.kind != "vector":
        return None
    distinct = {(lang, text_checksum(s)): (lang, s) for lang, s in sides}
    n = 0
    for lang, sentences in distinct.values():
        keys = [sentence_key(s) for s in sentences]
        have = cache.get_many(keys, cache_lang(encoder, lang))
        n += sum(1 for k in keys if k in have)
    return n


def say(line: str, show: bool = True) -> None:
    """One cost line on stderr (stdout and --json stay the results'), where ``show`` -- the progress
    bars' switch, so --no-progress hides both."""
    if show:
        print(line, file=sys.stderr, flush=True)


def distinct_cached(sides, caches, key_lang) -> tuple[int, int | None]:
    """(distinct sentences of ``sides`` -- (language, sentences) pairs -- under their cache language
    ``key_lang(lang)``, how many of them every cache in ``caches`` holds, None without a cache):
    what a pass that encodes each sentence once for several caches (the study's shared forward
    pass) looks up and has."""
    from ..cache import sentence_key

    wanted: dict[str, dict[str, None]] = {}
    for lang, sentences in sides:
        wanted.setdefault(key_lang(lang), {}).update(dict.fromkeys(sentence_key(s) for s in sentences))
    n = held = 0
    for lang, keys in wanted.items():
        have = set(keys)
        for cache in caches:
            have &= set(cache.get_many(list(keys), lang))
        n, held = n + len(keys), held + len(have)
    return n, held if caches else None


def training_key(trainer: str, model: str, batch_size: int, max_length: int, device: str) -> str:
    """What a training step's time depends on: the rate measured under one key estimates only runs
    under the same key."""
    return f"{trainer}|{model}|batch {batch_size}|max-length {max_length}|{device}"


def training_cost(key: str, steps: int, batch_size: int, n_examples: int, what: str = "pairs") -> str:
    """``training: ...``: the steps a run takes, the passes over its examples, and the expected time."""
    return (f"training: {steps} steps of {batch_size} {what} ({steps * batch_size / max(1, n_examples):.2f} passes "
            f"over {n_examples} {what}): {training_line(key, steps)}")


def training_line(key: str, steps: int) -> str:
    """The expected time of ``steps`` optimizer steps at the rate the last run under ``key`` (the
    trainer, base model, batch size, sequence length, device) measured here, or that none is known."""
    row = _read_all().get(key)
    try:
        per_second, measured = float(row["steps_per_second"]), str(row["measured"])
    except (TypeError, KeyError, ValueError):
        return "no training rate measured here yet for this model, batch size and device (this run measures it)"
    if not 0 < per_second < math.inf:
        return "no training rate measured here yet for this model, batch size and device (this run measures it)"
    return f"about {duration(steps / per_second)} at the {per_second:.3g} steps/s measured here on {measured}"


def record_training(key: str, steps: int, seconds: float) -> None:
    """Keep the steps per second a training run measured, for the next run's ``training_line``."""
    if steps < 1 or seconds < MIN_MEASURED_SECONDS:
        return
    _write_row(key, {"steps_per_second": round(steps / seconds, 5), "measured": date.today().isoformat(),
                     "cpus": os.cpu_count()})
