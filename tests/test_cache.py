"""Embedding cache: reuse, corruption, interruption, bad vectors, language keys, old-file migration."""

import hashlib
import logging
import sqlite3

import numpy as np
import pytest

from xsimpp.cache import EmbeddingCache, cache_lang, encode_cached, sentence_key
from xsimpp.encoders import VectorEncoder
from xsimpp.errors import BadInputError


class CountingEncoder:
    """A deterministic toy encoder (duck-typed) that records every sentence it is asked to encode."""

    id = "toy"
    fingerprint = "f" * 16

    def __init__(self, fail_after=None, bad=None, agnostic=True):
        self.seen: list[str] = []
        self.fail_after, self.bad = fail_after, bad
        if agnostic is not None:  # None: declares nothing, like a third-party encoder that forgot
            self.language_agnostic = agnostic

    def encode(self, sentences, *, lang=None, progress=None):
        if self.fail_after is not None and len(self.seen) >= self.fail_after:
            raise KeyboardInterrupt
        self.seen.extend(sentences)
        out = np.array([[len(s), s.count("a") + 1, 1.0] for s in sentences], dtype=np.float32)
        if self.bad is not None:
            out[[i for i, s in enumerate(sentences) if s == self.bad]] = np.nan
        if progress:
            progress(len(sentences))
        return out


def test_reuse_and_duplicates(tmp_path):
    enc = CountingEncoder()
    cache = EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    sents = ["a", "bb", "a", "ccc"]
    v1, n1 = encode_cached(enc, sents, cache=cache)
    assert n1 == 3 and enc.seen.count("a") == 1 and (v1[0] == v1[2]).all()
    ticks = []
    v2, n2 = encode_cached(enc, sents + ["dddd"], cache=cache, progress=ticks.append)
    assert n2 == 1 and enc.seen[-1] == "dddd" and sum(ticks) == 5
    assert (v2[:4] == v1).all()


def test_corrupt_row_is_recomputed(tmp_path):
    enc = CountingEncoder()
    cache = EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    encode_cached(enc, ["abc", "xyz"], cache=cache)
    with cache._db:
        cache._db.execute("UPDATE vectors SET data = ? WHERE key = ?", (b"\0" * 12, sentence_key("abc")))
    before = len(enc.seen)
    v, n = encode_cached(enc, ["abc", "xyz"], cache=cache)
    assert n == 1 and enc.seen[before:] == ["abc"] and cache.corrupt_rows == 1
    assert v[0].tolist() == [3, 2, 1]


def test_corrupt_database_file_is_moved_aside(tmp_path):
    enc = CountingEncoder()
    path = EmbeddingCache(enc.id, enc.fingerprint, tmp_path).path
    path.write_bytes(b"this is not sqlite" * 100)
    for suffix in ("-wal", "-shm"):
        p = path.with_name(path.name + suffix)
        if p.exists():
            p.unlink()
    cache = EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    assert len(cache) == 0
    assert list(path.parent.glob("*.corrupt-*"))
    v, n = encode_cached(enc, ["q"], cache=cache)
    assert n == 1


def test_interrupted_run_keeps_committed_chunks(tmp_path):
    sents = [f"s{i}" for i in range(10)]
    enc = CountingEncoder(fail_after=4)
    cache = EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    with pytest.raises(KeyboardInterrupt):
        encode_cached(enc, sents, cache=cache, chunk_size=4)
    assert len(cache) == 4
    enc2 = CountingEncoder()
    _, n = encode_cached(enc2, sents, cache=cache, chunk_size=4)
    assert n == 6


def test_nan_vector_is_an_error_and_not_cached(tmp_path):
    enc = CountingEncoder(bad="boom")
    cache = EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    with pytest.raises(BadInputError, match="'boom'"):
        encode_cached(enc, ["fine", "boom"], cache=cache)
    assert len(cache) == 0


class LangEncoder(VectorEncoder):
    """A language-dependent toy: the same text gets a different vector in each language. Declares nothing."""

    name = "langtoy"

    def __init__(self):
        self.seen: list[tuple[str, str]] = []

    @property
    def revision(self):
        return "l1"

    def encode(self, sentences, *, lang=None, progress=None):
        self.seen += [(lang, s) for s in sentences]
        return np.array([[len(s), sum(map(ord, lang)), 1.0] for s in sentences], dtype=np.float32)


class AgnosticLangEncoder(LangEncoder):
    name = "agnostictoy"
    language_agnostic = True

    def encode(self, sentences, *, lang=None, progress=None):
        return super().encode(sentences, lang="any", progress=progress)


def test_language_dependent_encoder_is_keyed_by_language_cold_and_warm(tmp_path):
    enc = LangEncoder()
    assert enc.language_agnostic is False  # undeclared: the safe default
    cold = {}
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:
        for lang in ("deu", "eng"):
            cold[lang], n = encode_cached(enc, ["Gift", "Rat"], cache=cache, lang=lang)
            assert n == 2
    assert not np.array_equal(cold["deu"], cold["eng"])
    assert enc.seen == [("deu", "Gift"), ("deu", "Rat"), ("eng", "Gift"), ("eng", "Rat")]
    warm_enc = LangEncoder()
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:  # reopened: warm
        assert len(cache) == 4
        for lang in ("eng", "deu"):
            v, n = encode_cached(warm_enc, ["Rat", "Gift"], cache=cache, lang=lang)
            assert n == 0 and np.array_equal(v, cold[lang][::-1])
        _, n = encode_cached(warm_enc, ["Gift"], cache=cache, lang="fra")
        assert n == 1 and warm_enc.seen == [("fra", "Gift")]


def test_language_dependent_encoder_without_language_is_an_error(tmp_path):
    for enc in (LangEncoder(), CountingEncoder(agnostic=None), CountingEncoder(agnostic=False)):
        with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:
            for c in (cache, None):  # refused with or without a cache, so behaviour does not depend on it
                for lang in (None, ""):
                    with pytest.raises(BadInputError, match="language-dependent"):
                        encode_cached(enc, ["x"], cache=c, lang=lang)
    assert cache_lang(CountingEncoder(), None) == ""


def test_undeclared_duck_typed_encoder_is_language_dependent(tmp_path):
    enc = CountingEncoder(agnostic=None)
    assert not hasattr(enc, "language_agnostic")
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:
        assert encode_cached(enc, ["a", "b"], cache=cache, lang="fra")[1] == 2
        assert encode_cached(enc, ["a", "b"], cache=cache, lang="deu")[1] == 2
        assert encode_cached(enc, ["b", "a"], cache=cache, lang="fra")[1] == 0


def test_language_agnostic_encoder_reuses_rows_across_languages(tmp_path):
    enc = AgnosticLangEncoder()
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:
        v1, n1 = encode_cached(enc, ["Hi.", "Taxi"], cache=cache, lang="fra")
        v2, n2 = encode_cached(enc, ["Taxi", "Hi.", "new"], cache=cache, lang="deu")
        assert (n1, n2) == (2, 1) and len(cache) == 3
        assert np.array_equal(v2[:2], v1[::-1])
        _, n3 = encode_cached(enc, ["new"], cache=cache, lang=None)  # no language needed at all
        assert n3 == 0
        assert {r[0] for r in cache._db.execute("SELECT DISTINCT lang FROM vectors")} == {""}


OLD_VECTOR = np.array([9.0, 9.0, 9.0], dtype="<f4")


def old_cache_file(tmp_path, enc, sentences):
    """A cache file as written before the language column (key = sha256 of the sentence only), where
    EmbeddingCache looks for it."""
    folder = tmp_path / enc.id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{enc.fingerprint}.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE vectors (key TEXT PRIMARY KEY, dim INTEGER NOT NULL, data BLOB NOT NULL, "
               "digest BLOB NOT NULL)")
    data = OLD_VECTOR.tobytes()
    digest = hashlib.blake2b(data, digest_size=16).digest()
    with db:
        db.executemany("INSERT INTO vectors VALUES (?, ?, ?, ?)",
                       [(sentence_key(s), 3, data, digest) for s in sentences])
    db.close()
    return path


def columns(cache):
    return [r[1] for r in cache._db.execute("PRAGMA table_info(vectors)")]


def test_old_file_migrated_rows_reused_by_agnostic_encoder(tmp_path, caplog):
    enc = AgnosticLangEncoder()
    path = old_cache_file(tmp_path, enc, ["Hi.", "Taxi"])
    with caplog.at_level(logging.WARNING, logger="xsimpp.cache"):
        cache = EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    assert cache.path == path and "migrated 2 vectors" in caplog.text
    assert "lang" in columns(cache) and len(cache) == 2
    tables = {r[0] for r in cache._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"vectors"}
    for lang in ("fra", "deu"):
        v, n = encode_cached(enc, ["Taxi", "Hi.", "Taxi"], cache=cache, lang=lang)
        assert n == 0 and (v == OLD_VECTOR).all()
    cache.close()
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as again:  # already migrated: opens as is
        assert len(again) == 2 and encode_cached(enc, ["Hi."], cache=again, lang="eng")[1] == 0


def test_old_file_rows_not_served_to_language_dependent_encoder(tmp_path, caplog):
    enc = LangEncoder()
    old_cache_file(tmp_path, enc, ["Gift", "Rat"])
    with caplog.at_level(logging.WARNING, logger="xsimpp.cache"):
        with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:
            v, n = encode_cached(enc, ["Gift", "Rat"], cache=cache, lang="deu")
            assert n == 2 and not (v == OLD_VECTOR).all(axis=1).any()
            assert np.array_equal(v, LangEncoder().encode(["Gift", "Rat"], lang="deu"))
            assert encode_cached(enc, ["Gift", "Rat"], cache=cache, lang="deu")[1] == 0
            assert len(cache) == 4  # the unattributed rows are ignored, not deleted
    assert "2 vectors carry no language" in caplog.text


def test_interrupted_migration_leaves_the_old_file_usable(tmp_path, monkeypatch):
    enc = AgnosticLangEncoder()
    path = old_cache_file(tmp_path, enc, ["Hi.", "Taxi"])
    import xsimpp.cache as cache_mod

    def crash(*a, **k):  # fails after the copy, before the commit
        raise KeyboardInterrupt

    monkeypatch.setattr(cache_mod.log, "warning", crash)
    with pytest.raises(KeyboardInterrupt):
        EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    monkeypatch.undo()
    db = sqlite3.connect(path)
    assert [r[1] for r in db.execute("PRAGMA table_info(vectors)")] == ["key", "dim", "data", "digest"]
    assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
    db.close()
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:
        assert "lang" in columns(cache)
        assert encode_cached(enc, ["Hi.", "Taxi"], cache=cache, lang="fra")[1] == 0


def test_an_encoder_id_never_leaves_the_cache_folder(tmp_path):
    from xsimpp.cache import EmbeddingCache
    from xsimpp.errors import BadInputError

    with pytest.raises(BadInputError, match="outside"):
        EmbeddingCache("..", "f" * 16, tmp_path / "cache")
    ok = EmbeddingCache("mteb:org/model", "f" * 16, tmp_path / "cache")  # '/' becomes '_': one folder
    assert ok.path.parent == tmp_path / "cache" / "mteb_org_model"
    ok.close()
