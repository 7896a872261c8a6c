"""Result records, their signatures, the JSON store and the leaderboard export.

A record is one number for one (encoder, dataset, split, language pair, metric, settings). Its
signature (as sacrebleu's) names everything that decides the number, so two numbers are compared
only when their signatures agree on all but the toolkit version.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import logging
import math
import os
import stat
import zipfile
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from .version import __version__
from .errors import BadInputError, XsimppError
from .paths import results_dir
from .textio import atomic_write_many, json_text, locked, make_dirs, os_error_cause, parse_json

log = logging.getLogger(__name__)

# Datasets named by nothing but their files (``eval --src-file/--tgt-file`` without ``--name``):
# their data checksum is part of the record key, so two corpora never share a record.
CUSTOM_DATASETS = frozenset({"parallel"})


@dataclass(frozen=True)
class Signature:
    encoder: str
    encoder_revision: str
    encoder_fingerprint: str
    dataset: str
    split: str
    data_checksum: str
    metric: str
    params: dict[str, Any] = field(default_factory=dict)
    version: str = __version__

    def format(self) -> str:
        parts = [f"xsimpp:{self.version}", f"enc:{self.encoder}@{self.encoder_revision}+cfg.{self.encoder_fingerprint[:8]}",
                 f"data:{self.dataset}/{self.split}@{self.data_checksum[:12]}", f"metric:{self.metric}"]
        parts += [f"{k}:{v}" for k, v in sorted(self.params.items())]
        return "|".join(parts)

    def comparable_with(self, other: "Signature") -> tuple[bool, list[str]]:
        """Whether two results measure the same thing; else the fields that differ (a setting of
        ``params`` by its name). The version and a confidence interval's settings (``ci``) do not
        change the number, so they are not compared."""
        a, b = asdict(self), asdict(other)
        diff = [k for k in a if k not in ("version", "params") and a[k] != b[k]]
        pa, pb = _compared_params(self.params), _compared_params(other.params)
        diff += [k for k in sorted(set(pa) | set(pb)) if pa.get(k, _ABSENT) != pb.get(k, _ABSENT)]
        return not diff, diff


_ABSENT = object()
UNCOMPARED_PARAMS = ("ci",)  # how an interval was drawn: it changes no number


def _compared_params(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k not in UNCOMPARED_PARAMS}


# How a record's value follows from its outcomes (``scoring.significance`` computes each on a
# resample): the percentage of items not correct, of items correct, MTEB's weighted F1 of the
# chosen against the gold indices, or BUCC's F1 over pairs (items: the extracted pairs, correct when
# gold, and the gold pairs not extracted).
STATISTICS = ("error_rate", "accuracy", "weighted_f1", "pair_f1")
_OUTCOME_ARRAYS = {"correct": np.bool_, "chosen": np.int64, "gold": np.int64, "chosen_score": np.float64,
                   "gold_score": np.float64, "error_type": np.int8, "unit": np.int64}
NOT_SCORED = np.nan  # a score an outcome has no value for (MTEB's cosine has no gold margin, etc.)


@dataclass(frozen=True, eq=False)
class Outcomes:
    """What happened to each item of one record (a source sentence of xsim, a query of Tatoeba):
    the index of the chosen target and of the gold one, whether the choice is correct (in the
    record's mode: text or index), the score (margin, cosine or P-xSIM's blend, the engine's exact
    values) of the chosen and of the gold target, and for a wrong choice its error type (an index
    into ``error_types``; -1 where correct). ``statistic`` says how the record's value follows from
    them, so a resample of the items gives that value on the resample (confidence intervals, paired
    tests); ``unit`` is what a resample draws (items of one unit move together: a Tatoeba sentence
    pair's two queries, a BUCC source sentence's pairs; default: the gold index). Stored beside the
    record (``ResultStore``) and checked against its digest on reading."""

    statistic: str
    correct: np.ndarray
    chosen: np.ndarray
    gold: np.ndarray
    chosen_score: np.ndarray
    gold_score: np.ndarray
    error_type: np.ndarray
    unit: np.ndarray
    error_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise BadInputError(f"unknown outcome statistic {self.statistic!r}; known: {', '.join(STATISTICS)}")
        n = len(self.correct)
        for name, dtype in _OUTCOME_ARRAYS.items():
            a = np.ascontiguousarray(getattr(self, name), dtype=dtype)
            if a.shape != (n,):
                raise BadInputError(f"outcome array {name} has shape {a.shape}, expected ({n},)")
            object.__setattr__(self, name, a)
        object.__setattr__(self, "error_types", tuple(str(t) for t in self.error_types))
        if n and (self.error_type.min() < -1 or self.error_type.max() >= len(self.error_types)):
            raise BadInputError("an outcome's error type is outside its list of error types")

    @classmethod
    def build(cls, statistic: str, correct, chosen, gold=None, chosen_score=None, gold_score=None,
              error_type=None, unit=None) -> "Outcomes":
        """From per-item arrays; ``error_type``: a name per item ("" or None where correct);
        ``gold`` defaults to the item's own index, ``unit`` to ``gold``."""
        correct = np.asarray(correct, dtype=bool)
        n = len(correct)
        names: tuple[str, ...] = ()
        codes = np.full(n, -1, dtype=np.int8)
        if error_type is not None:
            names = tuple(sorted({str(t) for t in error_type if t}))
            code_of = {t: i for i, t in enumerate(names)}
            codes = np.array([code_of[str(t)] if t else -1 for t in error_type], dtype=np.int8)
        missing = np.full(n, NOT_SCORED)
        gold = np.arange(n) if gold is None else gold
        return cls(statistic, correct, chosen, gold, missing if chosen_score is None else chosen_score,
                   missing if gold_score is None else gold_score, codes, gold if unit is None else unit, names)

    def __len__(self) -> int:
        return len(self.correct)

    def record_n(self) -> int:
        """The record's n these outcomes stand for: one per item, but BUCC's n is its gold pairs
        (the items correct and the gold pairs left out, chosen -1), not the pairs extracted."""
        if self.statistic == "pair_f1":
            return int(self.correct.sum() + (self.chosen < 0).sum())
        return len(self)

    def type_names(self) -> list[str]:
        """Each item's error type ("" where correct)."""
        return [self.error_types[c] if c >= 0 else "" for c in self.error_type.tolist()]

    def digest(self) -> str:
        """sha256 of the statistic, the names and every array's dtype, shape and bytes: what a
        record carries to tell its own outcomes from altered ones."""
        h = hashlib.sha256(json.dumps([self.statistic, list(self.error_types)]).encode())
        for name in _OUTCOME_ARRAYS:
            a = getattr(self, name)
            h.update(f"|{name}:{a.dtype.str}:{a.shape}|".encode())
            h.update(a.tobytes())
        return h.hexdigest()

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez_compressed(buf, statistic=np.array(self.statistic), error_types=np.array(self.error_types, dtype=str),
                            **{name: getattr(self, name) for name in _OUTCOME_ARRAYS})
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Outcomes":
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return cls(str(z["statistic"]), *(z[name] for name in _OUTCOME_ARRAYS),
                       error_types=tuple(z["error_types"].tolist()))


@dataclass
class ResultRecord:
    metric: str  # "xsim", "xsim++", ...
    value: float  # the headline number (error % for xsim)
    n: int
    src_lang: str
    tgt_lang: str
    signature: Signature
    errors: int | None = None
    error_types: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    outcomes_digest: str | None = None  # Outcomes.digest() of the outcomes stored beside the record
    outcomes: Outcomes | None = field(default=None, repr=False, compare=False)  # in memory, not in the JSON

    def __post_init__(self) -> None:
        if self.outcomes is not None:
            self.outcomes_digest = self.outcomes.digest()

    @property
    def key(self) -> str:
        """Identity for update-not-duplicate: all that decides the number except data content
        and toolkit version (a re-run after a data fix replaces the old number). Custom corpora
        (``CUSTOM_DATASETS``: files without a name) have no identity but their content, so for
        them the data checksum is part of the key."""
        s = self.signature
        ident = [s.encoder, s.encoder_fingerprint, s.dataset, s.split, self.src_lang, self.tgt_lang, self.metric,
                 json.dumps(_compared_params(s.params), sort_keys=True)]
        if s.dataset in CUSTOM_DATASETS:
            ident.append(s.data_checksum)
        return hashlib.sha256("\x1f".join(ident).encode()).hexdigest()[:24]

    def to_json(self) -> dict[str, Any]:
        d = asdict(replace(self, outcomes=None))
        del d["outcomes"]
        if d["outcomes_digest"] is None:
            del d["outcomes_digest"]  # records without outcomes keep their old JSON
        d["signature_string"] = self.signature.format()
        d["key"] = self.key
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ResultRecord":
        d = dict(d)
        d.pop("signature_string", None)
        d.pop("key", None)
        d.pop("outcomes", None)  # never stored in the JSON; a hand-made one is not trusted
        d["signature"] = Signature(**d["signature"])
        rec = cls(**d)
        number = (int, float)
        if (not isinstance(rec.value, number) or isinstance(rec.value, bool) or not math.isfinite(rec.value)
                or not isinstance(rec.n, int) or isinstance(rec.n, bool) or rec.n < 0
                or not (rec.errors is None or isinstance(rec.errors, int))
                or not isinstance(rec.error_types, dict)
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in rec.error_types.values())
                or not isinstance(rec.extra, dict) or not isinstance(rec.signature.params, dict)
                or not all(_is_number(rec.extra[b]) for b in ("ci_low", "ci_high") if b in rec.extra)
                or not (rec.outcomes_digest is None or isinstance(rec.outcomes_digest, str))):
            raise TypeError("a field has the wrong type (value, ci_low and ci_high must be finite numbers, n and error "
                            "counts integers)")
        return rec

    def has_interval(self) -> bool:
        return "ci" in self.signature.params


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _read_stored(p: Path) -> bytes:
    """A store file's bytes; anything but a regular file (a FIFO would block every reader) is
    refused in one sentence: the store writes only regular files, and a record silently skipped
    would change what a leaderboard or a comparison holds."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise XsimppError(f"result file {p} cannot be read: {os_error_cause(e)}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise XsimppError(f"{p} in the results folder is not a regular file (a pipe, socket or device?); "
                              "move it out of the folder")
        try:
            return f.read()
        except OSError as e:
            raise XsimppError(f"result file {p} cannot be read: {os_error_cause(e)}") from None


STORE_LOCK = ".xsimpp-store.lock"  # held while a run replaces record/outcomes pairs and while a reader reads one


class ResultStore:
    """One JSON file per record key under a folder; writes are atomic, re-runs overwrite."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root or results_dir())

    def path(self, record: ResultRecord) -> Path:
        return self.root / f"{record.key}.json"

    def outcomes_path(self, record: ResultRecord) -> Path:
        return self.root / f"{record.key}.outcomes.npz"

    def put(self, record: ResultRecord) -> Path:
        return self.put_many([record])[0]

    def put_many(self, records: Iterable[ResultRecord]) -> list[Path]:
        """Store one run's records all or nothing (a full disk leaves the old records, no half run).
        Replacing a record measured on different data (same key, other checksum) is logged."""
        records = list(records)
        paths = [self.path(r) for r in records]
        make_dirs(self.root, "--results-dir")
        # one lock for the pairs: a reader sees every record/outcomes pair old or new, never torn
        with locked(self.root / STORE_LOCK):
            kept = [self._keeps_interval(r, p) for r, p in zip(records, paths)]
            files = [(p, json_text(r.to_json()).encode("utf-8")) for r, p, k in zip(records, paths, kept) if not k]
            files += [(self.outcomes_path(r), r.outcomes.to_bytes()) for r, k in zip(records, kept)
                      if r.outcomes is not None and not k]
            atomic_write_many(files)
        return paths

    @staticmethod
    def _keeps_interval(record: ResultRecord, path: Path) -> bool:
        """Whether the stored record at ``path`` stays: it has an interval and ``record`` is the same
        number on the same outcomes without one (the interval's settings change no number, so a
        rerun without --ci would only drop it). Replacing a record measured on other data is logged."""
        try:
            old = ResultRecord.from_json(json.loads(_read_stored(path)))
        except (XsimppError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return False
        s, new = old.signature, record.signature
        if s.data_checksum != new.data_checksum:
            log.warning("replacing the %s %s %s-%s result of %s: it was measured on other data (checksum %s, now %s)",
                        record.metric, new.dataset, record.src_lang, record.tgt_lang, new.encoder,
                        str(s.data_checksum)[:12], new.data_checksum[:12])
            return False
        return (old.has_interval() and not record.has_interval() and record.outcomes_digest is not None
                and old.outcomes_digest == record.outcomes_digest and old.value == record.value
                and s.encoder_revision == new.encoder_revision)

    def records(self) -> list[ResultRecord]:
        """Every stored record (without its outcomes: ``load`` reads a record with them)."""
        if self.root.exists() and not self.root.is_dir():
            raise BadInputError(f"results folder {self.root} is not a directory; give --results-dir a folder")
        if not self.root.is_dir():
            return []
        return [self._read(p) for p in sorted(self.root.glob("*.json"))]

    @staticmethod
    def _read(p: Path) -> ResultRecord:
        try:
            return ResultRecord.from_json(parse_json(_read_stored(p), p))
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
            raise XsimppError(f"result file {p} is unreadable ({e}); delete it or re-run the evaluation") from None

    def _reading(self) -> contextlib.ExitStack:
        """The store's lock while a pair is read (writers hold it while they replace pairs); a
        folder where the lock file cannot be made (read-only) is read without it: no run can
        write there either."""
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(locked(self.root / STORE_LOCK))
        except BadInputError:
            pass
        return stack

    def load(self, record: ResultRecord) -> ResultRecord:
        """``record`` as stored now, read again together with its outcomes (checked against the
        digest it carries) under the store's lock: the record and its outcomes are one pair, the
        old one or the new one when a run replaces it meanwhile, never half of each."""
        what = (f"the {record.metric} {record.signature.dataset}/{record.signature.split} {record.src_lang}-"
                f"{record.tgt_lang} result of {record.signature.encoder}")
        path, p = self.path(record), self.outcomes_path(record)
        with self._reading():
            if not path.is_file():
                raise XsimppError(f"{what} is no longer stored ({path}); re-run the evaluation")
            now = self._read(path)
            if now.outcomes_digest is None:
                return now
            if not p.is_file():
                raise XsimppError(f"the outcomes of {what} are missing ({p}); re-run it to get outcomes")
            data = _read_stored(p)
        try:
            out = Outcomes.from_bytes(data)
        except (ValueError, KeyError, OSError, EOFError, BadInputError, TypeError, zipfile.BadZipFile) as e:
            raise XsimppError(f"the outcomes file {p} is unreadable ({e}); re-run the evaluation") from None
        if out.digest() != now.outcomes_digest or out.record_n() != now.n:
            raise XsimppError(f"the outcomes file {p} does not match its record (altered or from another run); "
                              "re-run the evaluation")
        now.outcomes = out
        return now

    def outcomes(self, record: ResultRecord) -> Outcomes:
        """The per-item outcomes stored beside ``record``, checked against the digest it carries."""
        if record.outcomes is not None:
            return record.outcomes
        if record.outcomes_digest is None:
            raise XsimppError(f"the {record.metric} {record.signature.dataset}/{record.signature.split} "
                              f"{record.src_lang}-{record.tgt_lang} result of {record.signature.encoder} has no "
                              "per-sentence outcomes (stored before xsimpp kept them, or by a task that has none); "
                              "re-run it to get outcomes")
        now = self.load(record)
        if now.outcomes_digest != record.outcomes_digest:
            raise XsimppError(f"the result in {self.path(record)} was replaced by another run while it was read; "
                              "run the command again")
        return now.outcomes


LEADERBOARD_COLUMNS = ["encoder", "encoder_revision", "dataset", "split", "src_lang", "tgt_lang", "metric", "value",
                       "errors", "n", "margin", "k", "mode", "signature"]


def leaderboard_frame(records: Iterable[ResultRecord]):
    """One row per encoder x dataset x language pair x metric x settings (pandas DataFrame)."""
    import pandas as pd

    rows = []
    for r in records:
        s = r.signature
        row = {"encoder": s.encoder, "encoder_revision": s.encoder_revision, "dataset": s.dataset, "split": s.split,
               "src_lang": r.src_lang, "tgt_lang": r.tgt_lang, "metric": r.metric, "value": round(r.value, 4),
               "errors": r.errors, "n": r.n, "margin": s.params.get("margin"), "k": s.params.get("k"),
               "mode": s.params.get("mode"), "signature": s.format()}
        for et, c in r.error_types.items():
            row[f"err_{et.lower()}"] = c
        for key, v in r.extra.items():  # e.g. BUCC precision / recall / threshold
            if isinstance(v, (int, float, str, bool)) and f"x_{key}" not in row:
                row[f"x_{key}"] = v
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=LEADERBOARD_COLUMNS)
    extra = sorted(c for c in df.columns if c not in LEADERBOARD_COLUMNS)
    # A category absent from an xsim++ record means zero errors of that type, not "not measured".
    err_cols = [c for c in extra if c.startswith("err_")]
    if err_cols:
        pp = df["metric"] == "xsim++"
        df.loc[pp, err_cols] = df.loc[pp, err_cols].fillna(0)
    df = df[LEADERBOARD_COLUMNS + extra]
    # k is a count: shown as 4, not 4.0, when some records have none (MTEB's F1)
    df["k"] = pd.to_numeric(df["k"], errors="coerce").astype("Int64")
    return df.sort_values(["dataset", "split", "metric", "src_lang", "tgt_lang", "encoder"], kind="stable").reset_index(drop=True)


def write_leaderboard_csv(records: Iterable[ResultRecord], path: str | Path) -> int:
    from .textio import atomic_write_text

    df = leaderboard_frame(records)
    if df.empty:
        raise BadInputError("no results to export yet; run `xsimpp eval` first")
    atomic_write_text(path, df.to_csv(index=False))
    return len(df)


@dataclass
class Results:
    """What a run returns (``xsimpp.evaluate`` and every other task): ``records``
    (``ResultRecord``, each with its signature), ``frame`` (a pandas DataFrame of them) and
    ``report`` (the task's report: per-pair details, error types, cache counts)."""

    records: list[ResultRecord]
    report: Any = field(repr=False)

    @functools.cached_property
    def frame(self):
        return leaderboard_frame(self.records)

    @property
    def signature(self) -> str:
        """The first record's signature string (every record carries its own)."""
        return self.records[0].signature.format() if self.records else ""

    def __iter__(self) -> Iterator[ResultRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return f"Results({len(self.records)} records; .frame for a DataFrame)"
