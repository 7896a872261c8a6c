"""Embedding cache: reuse, corruption, interruption, bad vectors."""


import numpy as np
import pytest

from xsimpp.cache import EmbeddingCache, encode_cached, sentence_key
from xsimpp.errors import BadInputError


class CountingEncoder:
    """A deterministic toy encoder that records every sentence it is asked to encode."""

    id = "toy"
    fingerprint = "f" * 16

    def __init__(self, fail_after=None, bad=None):
        self.seen: list[str] = []
        self.fail_after, self.bad = fail_after, bad

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
