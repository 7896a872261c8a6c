"""Adjective antonyms read straight from WordNet 3.0's index.adj / data.adj files.

The files are the ones NLTK ships (found with nltk.data.find, so NLTK_DATA applies), but NLTK's
WordNetCorpusReader takes ~27 s to open here: nltk 3.10 compares the version string "3.0" with
"wordnet", concludes the versions differ and builds a full sense-key mapping for OMW on every
load. Antonyms need only the adjective files, which this module parses in well under a second.
Semantics follow NLTK's Lemma.antonyms(): lexical "!" pointers between words of synsets
(checked equal to NLTK on 4000 random adjectives).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Optional

_MARKER = re.compile(r"\([a-z]+\)$")  # syntactic markers such as "galore(ip)"


@functools.lru_cache(maxsize=1)
def _root() -> Path:
    import nltk

    return Path(str(nltk.data.find("corpora/wordnet/")))


@functools.lru_cache(maxsize=1)
def _adjectives():
    """(index: lemma -> synset offsets in sense order, data: offset -> (type, words, pointers))."""
    root = _root()
    index: dict[str, list[int]] = {}
    with open(root / "index.adj", encoding="utf-8") as f:
        for line in f:
            if line.startswith(" "):  # licence header
                continue
            parts = line.split()
            n_synsets, n_ptr_types = int(parts[2]), int(parts[3])
            index[parts[0]] = [int(o) for o in parts[6 + n_ptr_types : 6 + n_ptr_types + n_synsets]]
    data: dict[int, tuple[str, list[str], list[tuple[str, int, int, int]]]] = {}
    with open(root / "data.adj", encoding="utf-8") as f:
        for line in f:
            if line.startswith(" "):
                continue
            parts = line.split(" | ", 1)[0].split()
            offset, ss_type, n_words = int(parts[0]), parts[2], int(parts[3], 16)
            words = [_MARKER.sub("", parts[4 + 2 * k]).lower() for k in range(n_words)]
            pos = 4 + 2 * n_words
            n_ptrs = int(parts[pos])
            pointers = []
            for k in range(n_ptrs):
                sym, target, _pos, src_tgt = parts[pos + 1 + 4 * k : pos + 5 + 4 * k]
                pointers.append((sym, int(target), int(src_tgt[:2], 16), int(src_tgt[2:], 16)))
            data[offset] = (ss_type, words, pointers)
    return index, data


def available() -> bool:
    try:
        root = _root()
    except (LookupError, ImportError):
        return False
    return (root / "index.adj").is_file() and (root / "data.adj").is_file()


@functools.lru_cache(maxsize=None)
def antonym(word: str, senses: Optional[int] = None) -> Optional[str]:
    """First direct antonym of an adjective over its senses in frequency order ("new" -> "old"),
    or over its first `senses` senses only (``senses=1``: the main sense's antonym, or None).

    Same result as the first single-word `Lemma.antonyms()` over `wordnet.synsets(word, ADJ)` in
    NLTK. Indirect antonyms through satellite heads ("blue" -> chromatic -> "achromatic") are left
    out on purpose: they are often not opposites in context.
    """
    index, data = _adjectives()
    word = word.lower()
    for off in index.get(word, [])[:senses]:
        _type, words, pointers = data[off]
        for sym, target, src, tgt in pointers:
            if sym == "!" and src and words[src - 1] == word:
                name = data[target][1][tgt - 1]
                if "_" not in name and name != word:
                    return name
    return None


def main_sense_antonym(word: str) -> Optional[str]:
    """The antonym of the adjective's most frequent sense: what the paper style swaps."""
    return antonym(word, 1)


@functools.lru_cache(maxsize=1)
def _noun_lemmas() -> frozenset:
    out = set()
    with open(_root() / "index.noun", encoding="utf-8") as f:
        for line in f:
            if not line.startswith(" ") and "_" in line.split(" ", 1)[0]:
                out.add(line.split(" ", 1)[0])
    return frozenset(out)


def noun_compound(*words: str) -> bool:
    """True when the words form one WordNet noun ("round trip", "local time", "high school")."""
    return "_".join(w.lower() for w in words) in _noun_lemmas()
