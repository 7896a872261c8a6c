"""Embedding cache keyed by (encoder id, encoder fingerprint, sha256 of the sentence).

One SQLite file per (encoder id, fingerprint): transactions make every write atomic, several
processes can share it, and a run interrupted mid-way keeps every batch it committed. Each row
stores a BLAKE2 digest of its vector bytes; a row whose bytes do not match is treated as missing
and recomputed, never used. A file SQLite cannot read is moved aside and rebuilt.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .errors import BadInputError
from .paths import cache_dir

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key TEXT PRIMARY KEY,     -- sha256 of the UTF-8 sentence
    dim INTEGER NOT NULL,
    data BLOB NOT NULL,       -- float32 little-endian
    digest BLOB NOT NULL      -- blake2b-16 of data
);
"""
_CHUNK = 500  # SQLite host-parameter limit is 999 on old builds


def sentence_key(sentence: str) -> str:
    return hashlib.sha256(sentence.encode("utf-8", "surrogatepass")).hexdigest()


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class EmbeddingCache:
    """Persistent sentence -> vector store for one encoder configuration."""

    def __init__(self, encoder_id: str, fingerprint: str, root: str | Path | None = None):
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", encoder_id)
        self.path = Path(root or cache_dir()) / safe / f"{fingerprint}.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.corrupt_rows = 0
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, timeout=60)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            db.execute("SELECT count(*) FROM vectors").fetchone()
            return db
        except sqlite3.DatabaseError as e:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            log.warning("embedding cache %s is unreadable (%s); moved to %s and rebuilding", self.path, e, aside)
            try:
                db.close()
            except Exception:
                pass
            self.path.replace(aside)
            for suffix in ("-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            db = sqlite3.connect(self.path, timeout=60)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            return db

    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(keys))
        for start in range(0, len(uniq), _CHUNK):
            part = uniq[start : start + _CHUNK]
            q = f"SELECT key, dim, data, digest FROM vectors WHERE key IN ({','.join('?' * len(part))})"
            for key, dim, data, digest in self._db.execute(q, part):
                if _digest(data) != digest or len(data) != 4 * dim:
                    self.corrupt_rows += 1
                    log.warning("embedding cache %s: corrupt entry %s ignored and recomputed", self.path, key[:12])
                    continue
                found[key] = np.frombuffer(data, dtype="<f4").astype(np.float32)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = []
        for key, vec in items:
            data = np.ascontiguousarray(vec, dtype="<f4").tobytes()
            rows.append((key, int(vec.shape[-1]), data, _digest(data)))
        with self._db:  # one transaction: all rows or none
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM vectors").fetchone()[0])


def check_vectors(vectors: np.ndarray, sentences: Sequence[str], encoder_id: str) -> None:
    """Refuse NaN/inf or all-zero vectors from an encoder, naming the first offending sentence."""
    bad = ~np.isfinite(vectors).all(axis=1) | ~(np.abs(vectors) > 0).any(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise BadInputError(
            f"encoder {encoder_id} returned a NaN/infinite or all-zero vector for {int(bad.sum())} sentence(s), "
            f"e.g. line {i + 1}: {sentences[i][:80]!r}"
        )


def encode_cached(
    encoder,
    sentences: Sequence[str],
    *,
    cache: EmbeddingCache | None,
    lang: str | None = None,
    chunk_size: int = 256,
    progress: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, int]:
    """Vectors for ``sentences`` (in order), encoding only what the cache lacks.

    Duplicate sentences are encoded once. New vectors are committed every ``chunk_size``
    sentences, so an interrupted run resumes where it stopped. Returns (vectors, n_encoded).
    """
    keys = [sentence_key(s) for s in sentences]
    have = cache.get_many(keys) if cache is not None else {}
    todo: dict[str, str] = {}
    for k, s in zip(keys, sentences):
        if k not in have and k not in todo:
            todo[k] = s
    if progress and len(have):
        progress(sum(1 for k in keys if k in have))
    todo_items = list(todo.items())
    # Encode longest-first across the whole set so each chunk batches similar lengths.
    todo_items.sort(key=lambda kv: -len(kv[1]))
    for start in range(0, len(todo_items), chunk_size):
        chunk = todo_items[start : start + chunk_size]
        texts = [s for _, s in chunk]
        vecs = np.asarray(encoder.encode(texts, lang=lang, progress=progress), dtype=np.float32)
        if vecs.shape[0] != len(texts):
            raise BadInputError(f"encoder {encoder.id} returned {vecs.shape[0]} vectors for {len(texts)} sentences")
        check_vectors(vecs, texts, encoder.id)
        new = list(zip((k for k, _ in chunk), vecs))
        if cache is not None:
            cache.put_many(new)
        have.update(new)
        if progress:
            # The encoder reported unique texts; add the duplicate lines they stand for.
            done = {k for k, _ in chunk}
            progress(sum(1 for k in keys if k in done) - len(chunk))
    if not keys:
        return np.empty((0, 0), dtype=np.float32), 0
    dims = {have[k].shape[0] for k in set(keys)}
    if len(dims) != 1:
        raise BadInputError(f"embedding cache for {encoder.id} holds vectors of different sizes {sorted(dims)}")
    return np.stack([have[k] for k in keys]), len(todo_items)
