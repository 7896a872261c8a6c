"""Embedding cache keyed by (encoder id, encoder fingerprint, language, sha256 of the sentence).

One SQLite file per (encoder id, fingerprint): transactions make every write atomic, several
processes can share it, and a run interrupted mid-way keeps every batch it committed. Each row
stores a BLAKE2 digest of its vector bytes; a row whose bytes do not match is treated as missing
and recomputed, never used. A file SQLite cannot read is moved aside and rebuilt.

Rows carry the language the encoder was given, or '' when the encoder declares itself
``language_agnostic`` (its vector for a sentence is the same whatever the language), so a
language-dependent encoder never gets the French vector back for German, while an agnostic one
reuses a sentence across languages. Files from before the language column (``key`` alone as
primary key, no language) are migrated in one transaction: their rows become '' rows, served to
agnostic encoders and never to language-dependent ones, which cannot tell which language wrote them.
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
    lang TEXT NOT NULL,       -- the language passed to the encoder; '' for language-agnostic encoders
    key TEXT NOT NULL,        -- sha256 of the UTF-8 sentence
    dim INTEGER NOT NULL,
    data BLOB NOT NULL,       -- float32 little-endian
    digest BLOB NOT NULL,     -- blake2b-16 of data
    PRIMARY KEY (lang, key)
);
"""
_AGNOSTIC = ""  # the lang of rows shared by every language
_CHUNK = 500  # SQLite host-parameter limit is 999 on old builds
# Sentences per encoder call and per committed batch: large enough that the torch encoders' batches
# of one padded width are not tiny, small enough that an interrupted run loses
# little. Distributed runs cut the same chunks, so their vectors equal a sequential run's.
CHUNK_SIZE = 1024


def sentence_key(sentence: str) -> str:
    return hashlib.sha256(sentence.encode("utf-8", "surrogatepass")).hexdigest()


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def cache_lang(encoder, lang: str | None) -> str:
    """The language an encoder's vectors are cached under: '' if it declares itself language-agnostic."""
    # getattr: duck-typed encoders that declare nothing are language-dependent, the safe reading.
    if bool(getattr(encoder, "language_agnostic", False)):
        return _AGNOSTIC
    if not lang:
        raise BadInputError(f"encoder {encoder.id} is language-dependent (it does not declare language_agnostic), "
                            "so its vectors need the sentences' language; none was given")
    return lang


def _columns(db: sqlite3.Connection) -> list[str]:
    return [row[1] for row in db.execute("PRAGMA table_info(vectors)")]


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring a file from before the language column to the current schema, in one transaction."""
    if "lang" in _columns(db):
        return
    # BEGIN IMMEDIATE takes the write lock first, so a second process opening the same old file
    # waits here and then finds it migrated; a crash mid-way rolls back to the intact old table.
    db.execute("BEGIN IMMEDIATE")
    try:
        if "lang" not in _columns(db):
            db.execute("ALTER TABLE vectors RENAME TO vectors_v1")
            db.execute(_SCHEMA)
            n = db.execute("INSERT INTO vectors (lang, key, dim, data, digest) "
                           "SELECT ?, key, dim, data, digest FROM vectors_v1", (_AGNOSTIC,)).rowcount
            db.execute("DROP TABLE vectors_v1")
            log.warning("embedding cache %s: migrated %d vectors written without a language; they are reused by "
                        "language-agnostic encoders only", path, n)
        db.commit()
    except BaseException:
        db.rollback()
        raise


def _problem(e: sqlite3.DatabaseError) -> str:
    """What an SQLite error means for the file: 'locked', 'full', 'readonly', 'io', 'open' or 'corrupt'."""
    msg = str(e).lower()
    for word, kind in (("locked", "locked"), ("busy", "locked"), ("disk is full", "full"), ("readonly", "readonly"),
                       ("read-only", "readonly"), ("unable to open", "open"), ("i/o error", "io"),
                       ("out of memory", "memory")):
        if word in msg:
            return kind
    return "corrupt"  # malformed, not a database, file is encrypted, ...


_PROBLEM_TEXT = {
    "full": "the disk is full; free some space or run with --no-cache",
    "readonly": "its folder or file is read-only; give a writable --cache-dir or run with --no-cache",
    "open": "it cannot be opened (permission denied?); give a writable --cache-dir or run with --no-cache",
    "io": "the disk reported an input/output error; check the disk or run with --no-cache",
    "memory": "SQLite ran out of memory; run with --no-cache",
}
_SALVAGE_WINDOW = 256


class EmbeddingCache:
    """Persistent sentence -> vector store for one encoder configuration."""

    def __init__(self, encoder_id: str, fingerprint: str, root: str | Path | None = None):
        from .textio import make_dirs, path_inside

        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", encoder_id)
        self.path = path_inside(root or cache_dir(), safe, f"{fingerprint}.sqlite",
                                what=f"the embedding cache of encoder {encoder_id!r}")
        make_dirs(self.path.parent, "--cache-dir")
        if self.path.is_dir():
            raise BadInputError(f"embedding cache {self.path} is a directory; remove it or give another --cache-dir")
        self.corrupt_rows = 0
        self.salvaged: int | None = None  # rows kept by the last recovery, if one ran
        self._warned = False
        self._db = self._open()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
            _migrate(db, self.path)
            db.execute("SELECT count(*) FROM vectors").fetchone()
            return db
        except BaseException:
            db.close()
            raise

    def _fail(self, e: sqlite3.DatabaseError, kind: str) -> BadInputError:
        if kind == "locked":
            return BadInputError(f"embedding cache {self.path} stayed locked by another process for 60 s; "
                                 "try again when it has finished")
        return BadInputError(f"embedding cache {self.path} cannot be used: {_PROBLEM_TEXT[kind]}")

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as e:
            kind = _problem(e)
            # Only a damaged file is rebuilt: a lock, a full disk or a read-only folder say
            # nothing about the file, which stays as it is.
            if kind != "corrupt":
                raise self._fail(e, kind) from None
            return self._recover(e)

    def _guard(self, action: Callable[[], object]):
        """Run one database action; a damaged file met mid-way is recovered and the action retried once."""
        try:
            return action()
        except sqlite3.DatabaseError as e:
            kind = _problem(e)
            if kind != "corrupt":
                raise self._fail(e, kind) from None
            self._db.close()
            self._db = self._recover(e)
            try:
                return action()
            except sqlite3.DatabaseError as e2:
                raise self._fail(e2, _problem(e2)) if _problem(e2) != "corrupt" else BadInputError(
                    f"embedding cache {self.path} is still damaged after a rebuild ({e2}); delete it") from None

    def _salvage(self) -> list[tuple]:
        """Every row of the damaged file that SQLite can still read and whose digest matches."""
        rows: dict[int, tuple] = {}
        try:
            src = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5)
        except sqlite3.DatabaseError:
            return []
        q = "SELECT rowid, lang, key, dim, data, digest FROM vectors"

        def take(sql: str, *params) -> bool:
            try:
                for rowid, lang, key, dim, data, digest in src.execute(sql, params):
                    if isinstance(data, bytes) and len(data) == 4 * dim and _digest(data) == digest:
                        rows[rowid] = (lang, key, dim, data, digest)
                return True
            except sqlite3.DatabaseError:
                return False

        try:
            if not take(q):
                # Read around the damage: windows of rowids, then single rows in a window that fails,
                # until many windows in a row past the last row found hold nothing.
                try:
                    top = int(src.execute("SELECT max(rowid) FROM vectors").fetchone()[0] or 0)
                except sqlite3.DatabaseError:
                    top = None
                start, empty = 0, 0
                while (top is not None and start <= top) or (top is None and empty < 64):
                    end = start + _SALVAGE_WINDOW
                    before = len(rows)
                    if not take(f"{q} WHERE rowid >= ? AND rowid < ?", start, end):
                        for r in range(start, end):
                            take(f"{q} WHERE rowid = ?", r)
                    empty = 0 if len(rows) > before else empty + 1
                    start = end
        finally:
            src.close()
        return [rows[r] for r in sorted(rows)]

    def _recover(self, e: sqlite3.DatabaseError) -> sqlite3.Connection:
        """Rebuild a damaged file from the rows it still yields. Extra space is bounded by the size
        of those rows (written to one new file that then replaces the damaged one); a file that
        yields nothing is moved aside (a rename: no space), replacing an earlier one moved aside."""
        import shutil

        rows = self._salvage()
        for old in self.path.parent.glob(f"{self.path.name}.corrupt-*"):
            old.unlink(missing_ok=True)
        self.salvaged = len(rows)
        if not rows:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            log.warning("embedding cache %s is unreadable (%s); moved to %s and rebuilding", self.path, e, aside)
            self.path.replace(aside)
        else:
            need = sum(len(r[4]) + 200 for r in rows)
            if shutil.disk_usage(self.path.parent).free < need:
                raise BadInputError(f"embedding cache {self.path} is damaged and rebuilding it needs "
                                    f"{need / 2**20:.0f} MiB free; free space, delete the file or run with --no-cache")
            tmp = self.path.with_name(f"{self.path.name}.rebuild")
            tmp.unlink(missing_ok=True)
            try:
                db = sqlite3.connect(tmp)
                try:
                    db.execute(_SCHEMA)
                    with db:
                        db.executemany("INSERT OR REPLACE INTO vectors (lang, key, dim, data, digest) "
                                       "VALUES (?, ?, ?, ?, ?)", rows)
                finally:
                    db.close()
                tmp.replace(self.path)
            except sqlite3.DatabaseError as e2:
                tmp.unlink(missing_ok=True)
                kind = _problem(e2)
                raise self._fail(e2, kind if kind != "corrupt" else "io") from None
            log.warning("embedding cache %s was damaged (%s); rebuilt it with the %d vectors still readable, "
                        "the rest will be recomputed", self.path, e, len(rows))
        for suffix in ("-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        try:
            return self._connect()
        except sqlite3.DatabaseError as e3:
            raise self._fail(e3, _problem(e3)) if _problem(e3) != "corrupt" else BadInputError(
                f"embedding cache {self.path} cannot be rebuilt ({e3}); delete it") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get_many(self, keys: Sequence[str], lang: str) -> dict[str, np.ndarray]:
        """Vectors cached under ``lang`` ('' = language-agnostic rows) for the sentence keys it has."""
        return self._guard(lambda: self._get_many(keys, lang))

    def _get_many(self, keys: Sequence[str], lang: str) -> dict[str, np.ndarray]:
        if lang != _AGNOSTIC:
            self._warn_unattributed()
        found: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(keys))
        for start in range(0, len(uniq), _CHUNK):
            part = uniq[start : start + _CHUNK]
            q = f"SELECT key, dim, data, digest FROM vectors WHERE lang = ? AND key IN ({','.join('?' * len(part))})"
            for key, dim, data, digest in self._db.execute(q, [lang, *part]):
                if _digest(data) != digest or len(data) != 4 * dim:
                    self.corrupt_rows += 1
                    log.warning("embedding cache %s: corrupt entry %s ignored and recomputed", self.path, key[:12])
                    continue
                found[key] = np.frombuffer(data, dtype="<f4").astype(np.float32)
        return found

    def _warn_unattributed(self) -> None:
        """Say once that rows without a language (migrated from an old file) are not used for this lookup."""
        if self._warned:
            return
        self._warned = True
        n = self._db.execute("SELECT count(*) FROM vectors WHERE lang = ?", (_AGNOSTIC,)).fetchone()[0]
        if n:
            log.warning("embedding cache %s: %d vectors carry no language (written by an older xsimpp, or while the "
                        "encoder declared itself language-agnostic); a language-dependent encoder cannot use them, "
                        "so they are ignored and recomputed per language", self.path, n)

    def put_many(self, items: Iterable[tuple[str, np.ndarray]], lang: str) -> None:
        rows = []
        for key, vec in items:
            data = np.ascontiguousarray(vec, dtype="<f4").tobytes()
            rows.append((lang, key, int(vec.shape[-1]), data, _digest(data)))

        def insert() -> None:
            with self._db:  # one transaction: all rows or none
                self._db.executemany("INSERT OR REPLACE INTO vectors (lang, key, dim, data, digest) "
                                     "VALUES (?, ?, ?, ?, ?)", rows)

        self._guard(insert)

    def __len__(self) -> int:
        return int(self._guard(lambda: self._db.execute("SELECT count(*) FROM vectors").fetchone()[0]))


def check_vectors(vectors: np.ndarray, sentences: Sequence[str], encoder_id: str) -> None:
    """Refuse NaN/inf or all-zero vectors from an encoder, naming the first offending sentence."""
    bad = ~np.isfinite(vectors).all(axis=1) | ~(np.abs(vectors) > 0).any(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise BadInputError(
            f"encoder {encoder_id} returned a NaN/infinite or all-zero vector for {int(bad.sum())} sentence(s), "
            f"e.g. line {i + 1}: {sentences[i][:80]!r}"
        )


def report_cached(progress: Callable[[int], None] | None, n: int) -> None:
    """Tell a progress callback about ``n`` sentences found in the cache: through its ``cached``
    method when it has one (the runner's bar keeps them out of its rate), else as plain progress."""
    if progress and n:
        getattr(progress, "cached", progress)(n)


def pending_chunks(keys: Sequence[str], sentences: Sequence[str], have, chunk_size: int = CHUNK_SIZE,
                   planned: set[str] | None = None) -> list[list[tuple[str, str]]]:
    """The (key, sentence) chunks ``encode_cached`` hands to the encoder, in order: every distinct
    sentence whose key is neither in ``have`` nor in ``planned`` (keys already given to an earlier
    chunk; updated here), longest first across the whole set so each chunk batches similar
    lengths. A distributed run that encodes exactly these chunks gets the very vectors of a
    sequential one."""
    planned = set() if planned is None else planned
    todo: dict[str, str] = {}
    for k, s in zip(keys, sentences):
        if k not in have and k not in planned and k not in todo:
            todo[k] = s
    planned.update(todo)
    items = sorted(todo.items(), key=lambda kv: -len(kv[1]))
    return [items[start : start + chunk_size] for start in range(0, len(items), chunk_size)]


def checked_chunk(encoder, chunk: Sequence[tuple[str, str]], vecs) -> list[tuple[str, np.ndarray]]:
    """An encoder's vectors for one chunk, checked (count, NaN/inf, all-zero), as (key, vector) pairs."""
    texts = [s for _, s in chunk]
    vecs = np.asarray(vecs, dtype=np.float32)
    if vecs.ndim != 2 or vecs.shape[0] != len(texts):
        raise BadInputError(f"encoder {encoder.id} returned {vecs.shape[0] if vecs.ndim else 0} vectors for "
                            f"{len(texts)} sentences")
    check_vectors(vecs, texts, encoder.id)
    return list(zip((k for k, _ in chunk), vecs))


class MemoryCache:
    """An in-process stand-in for ``EmbeddingCache`` (same ``get_many``/``put_many``): vectors a
    run computed elsewhere (e.g. on a cluster) when no on-disk cache is used."""

    def __init__(self):
        self._rows: dict[tuple[str, str], np.ndarray] = {}

    def get_many(self, keys: Sequence[str], lang: str) -> dict[str, np.ndarray]:
        return {k: self._rows[(lang, k)] for k in dict.fromkeys(keys) if (lang, k) in self._rows}

    def put_many(self, items: Iterable[tuple[str, np.ndarray]], lang: str) -> None:
        for key, vec in items:
            self._rows[(lang, key)] = np.asarray(vec, dtype=np.float32)

    def __len__(self) -> int:
        return len(self._rows)

    def close(self) -> None:
        pass


class RoutedCache:
    """The cache of an encoder that hands some languages to another encoder (a self-trained
    checkpoint's frozen base, ``routes_to_frozen``): those languages are read from and written to
    the frozen encoder's own cache, under the key it uses itself, so the base's vectors (English)
    are shared with every run of the base and of each checkpoint trained from it."""

    def __init__(self, encoder, own: EmbeddingCache, frozen: EmbeddingCache):
        self.encoder, self.own, self.frozen = encoder, own, frozen

    def _route(self, lang: str):
        if self.encoder.routes_to_frozen(lang):
            return self.frozen, cache_lang(self.encoder.frozen_encoder, lang)
        return self.own, lang

    def get_many(self, keys: Sequence[str], lang: str) -> dict[str, np.ndarray]:
        store, key_lang = self._route(lang)
        return store.get_many(keys, key_lang)

    def put_many(self, items: Iterable[tuple[str, np.ndarray]], lang: str) -> None:
        store, key_lang = self._route(lang)
        store.put_many(items, key_lang)

    def __len__(self) -> int:
        return len(self.own) + len(self.frozen)

    def close(self) -> None:
        self.own.close()
        self.frozen.close()


def is_cache_object(cache) -> bool:
    """Whether ``cache`` is a cache itself (``get_many``/``put_many``), handed over by its owner."""
    return hasattr(cache, "get_many") and hasattr(cache, "put_many")


def open_cache(encoder, cache) -> "EmbeddingCache | RoutedCache | MemoryCache | None":
    """The cache policy of a run (``cache``: True = the default folder, a path = that folder,
    False/None = none, or a cache object its owner filled and closes, e.g. the study's shared
    forward pass): vectors of a vector encoder, token states of a pair scorer that keeps them
    (keyed by what changes the states, so a scoring knob such as alpha reuses them); None for other
    pair scorers and for unversioned objects, whose vectors nothing could tell apart from a changed
    model's."""
    if cache is False or cache is None:
        return None
    if is_cache_object(cache):
        return cache
    root = None if cache is True else cache
    if encoder.kind != "vector":
        states = getattr(encoder, "states_fingerprint", None)
        return EmbeddingCache(encoder.id + "-states", states, root) if states else None
    if getattr(encoder, "versioned", True) is False:
        log.warning("encoder %s has no revision (give revision=...), so its vectors are not cached", encoder.id)
        return None
    return open_encoder_cache(encoder, root)


def open_encoder_cache(encoder, root=None) -> "EmbeddingCache | RoutedCache":
    """The vector cache of ``encoder`` (routed through its frozen part's cache when it has one)."""
    own = EmbeddingCache(encoder.id, encoder.fingerprint, root)
    frozen = getattr(encoder, "frozen_encoder", None)
    if frozen is None:
        return own
    return RoutedCache(encoder, own, EmbeddingCache(frozen.id, frozen.fingerprint, root))


def encode_cached(
    encoder,
    sentences: Sequence[str],
    *,
    cache: EmbeddingCache | MemoryCache | None,
    lang: str | None = None,
    chunk_size: int = CHUNK_SIZE,
    progress: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, int]:
    """Vectors for ``sentences`` (in order), encoding only what the cache lacks.

    Duplicate sentences are encoded once. New vectors are committed every ``chunk_size``
    sentences, so an interrupted run resumes where it stopped. ``lang`` is the sentences'
    language; a language-dependent encoder needs it (BadInputError without), a language-agnostic
    one shares cached vectors across languages. Returns (vectors, n_encoded).
    """
    # Checked even without a cache, so a missing language fails the same way cached or not.
    key_lang = cache_lang(encoder, lang)
    keys = [sentence_key(s) for s in sentences]
    have = cache.get_many(keys, key_lang) if cache is not None else {}
    report_cached(progress, sum(1 for k in keys if k in have))
    n_new = 0
    for chunk in pending_chunks(keys, sentences, have, chunk_size):
        new = checked_chunk(encoder, chunk, encoder.encode([s for _, s in chunk], lang=lang, progress=progress))
        if cache is not None:
            cache.put_many(new, key_lang)
        have.update(new)
        n_new += len(chunk)
        if progress:
            # The encoder reported unique texts; add the duplicate lines they stand for.
            done = {k for k, _ in chunk}
            progress(sum(1 for k in keys if k in done) - len(chunk))
    if not keys:
        return np.empty((0, 0), dtype=np.float32), 0
    dims = {have[k].shape[0] for k in set(keys)}
    if len(dims) != 1:
        raise BadInputError(f"embedding cache for {encoder.id} holds vectors of different sizes {sorted(dims)}")
    return np.stack([have[k] for k in keys]), n_new


def states_cached(
    scorer,
    sentences: Sequence[str],
    *,
    cache: EmbeddingCache | None,
    lang: str | None = None,
    chunk_size: int = CHUNK_SIZE,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[np.ndarray], int]:
    """Token states (one (n_tokens, d) float32 array per sentence, in order) of a pair scorer that
    keeps them (``scorer.token_states``, ``scorer.state_dim``), computing only what the cache lacks.

    Rows are stored flattened (their ``dim`` is n_tokens * d) in the same kind of file as vectors,
    keyed by the scorer's ``states_fingerprint`` (what changes the states: model, layer, prompt),
    so changing a scoring knob such as alpha reuses them. Returns (states, n_computed)."""
    d = int(scorer.state_dim)
    key_lang = cache_lang(scorer, lang)
    keys = [sentence_key(s) for s in sentences]
    have: dict[str, np.ndarray] = {}
    if cache is not None:
        for k, flat in cache.get_many(keys, key_lang).items():
            if flat.size and flat.size % d == 0:
                have[k] = flat.reshape(-1, d)
    report_cached(progress, sum(1 for k in keys if k in have))
    # the same chunks as for vectors (distinct sentences, longest first): the scorer batches
    # sentences of one padded width, so a chunk of mixed lengths would run as many small batches
    n_new = 0
    for chunk in pending_chunks(keys, sentences, have, chunk_size):
        states = scorer.token_states([s for _, s in chunk], progress=progress)
        if len(states) != len(chunk):
            raise BadInputError(f"encoder {scorer.id} returned {len(states)} token-state arrays for {len(chunk)} sentences")
        for (k, s), st in zip(chunk, states):
            if st.ndim != 2 or st.shape[1] != d or not np.isfinite(st).all():
                raise BadInputError(f"encoder {scorer.id} returned malformed or non-finite token states for {s[:80]!r}")
        new = [(k, np.asarray(st, dtype=np.float32)) for (k, _), st in zip(chunk, states)]
        if cache is not None:
            cache.put_many([(k, st.reshape(-1)) for k, st in new], key_lang)
        have.update(new)
        n_new += len(chunk)
        if progress:
            done = {k for k, _ in chunk}
            progress(sum(1 for k in keys if k in done) - len(chunk))
    return [have[k] for k in keys], n_new
