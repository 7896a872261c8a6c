"""Entity candidate pools: named entities collected from monolingual English, with their sources.

The paper "collect[s] candidate entities from large amounts of monolingual data"; xsimpp ships one
such pool (xsimpp/data/entity_pool/entities.tsv, built by xsimpp/data/entity_pool/build_pool.py from the English
text in the shared data folder) and builds the same kind of pool from your own sentences
(`--entity-pool FILE`). Each entry remembers which corpora it was seen in, so the evaluated split can
be left out of its own pool (FLORES dev is augmented from entities of devtest, NTREX, OLDI and
Tatoeba, never from dev itself).

File format (UTF-8, tab-separated, `#` lines are comments; the first line names the format):

    # xsimpp entity pool v1
    recogniser  label  entity          count  with_the  sources
    spacy       GPE    Peru            41     0         flores200/devtest,oldi-seed,tatoeba
    spacy       GPE    United States   212    205       flores200/dev,ntrex128,oldi-seed,tatoeba

`recogniser` is `nltk` (the paper's binary chunker: label `NE`) or `spacy` (typed labels);
`with_the` counts the mentions written after "the" (a name that takes the article replaces one
that does: "the United States" -> "the Netherlands", "Peru" -> "Chile").

Pool hygiene, applied when a pool is built (`finalise`): an entity must start with a capital letter;
a one-word entity must have been seen in the middle of a sentence, and not be an ordinary word
there (its lowercase form seen at least as often mid-sentence: "Fill", "Local", "Luckily"); a
spaCy entity keeps only its most frequent label ("Jordan": GPE or PERSON, whichever wins).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import BadInputError
from ..paths import repo_data_dir
from ..textio import read_lines
from .spans import after_the, is_sentence_initial

HEADER = "# xsimpp entity pool v1"
RECOGNISERS = ("nltk", "spacy")
# spaCy labels that name something (numeric labels belong to the number category).
NAME_LABELS = ("PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE")
MAX_WORDS = 6

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_POSSESSIVE = re.compile(r"\s*['’]s?$")
_THE = re.compile(r"[Tt]he\s+")
_MID_CAPITAL = re.compile(r"\S\s+(?!I\b|I['’])[A-Z]")


def has_mid_capital(sentence: str) -> bool:
    """A capitalised word after the first one (not "I"): the only sentences a recogniser runs on
    when a pool is collected (a name in first position alone is not kept: see `finalise`)."""
    return bool(_MID_CAPITAL.search(sentence))


def default_pool_path() -> Path:
    return repo_data_dir() / "entity_pool" / "entities.tsv"


@dataclass(frozen=True)
class PoolEntry:
    recogniser: str
    label: str
    text: str
    count: int
    with_the: int
    sources: tuple[str, ...]

    @property
    def takes_the(self) -> bool:
        return 2 * self.with_the > self.count


def is_pool_file(path: str | Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.readline().rstrip("\n") == HEADER


def read_pool(path: str | Path) -> list[PoolEntry]:
    """Entries of a pool file (see the module docstring), in file order."""
    out = []
    for n, line in enumerate(read_lines(path, allow_empty_lines=True), 1):
        if not line or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 6 or parts[0] not in RECOGNISERS or not (parts[3].isdigit() and parts[4].isdigit()):
            raise BadInputError(f"{path} line {n} is not "
                                "'recogniser<TAB>label<TAB>entity<TAB>count<TAB>with_the<TAB>sources'")
        out.append(PoolEntry(parts[0], parts[1], parts[2], int(parts[3]), int(parts[4]),
                             tuple(s for s in parts[5].split(",") if s)))
    return out


def without_sources(entries: Iterable[PoolEntry], excluded: Iterable[str]) -> list[PoolEntry]:
    """Entries seen somewhere other than the `excluded` corpora (e.g. the split being augmented)."""
    ex = set(excluded)
    return [e for e in entries if not set(e.sources) <= ex] if ex else list(entries)


class Collector:
    """Counts entity mentions and word casing over monolingual sentences, then `finalise`s a pool."""

    def __init__(self) -> None:
        # (recogniser, label, text) -> [count, mid-sentence count, after "the", sources]
        self.seen: dict[tuple[str, str, str], list] = {}
        self.lower_mid: Counter = Counter()  # word -> mid-sentence lowercase occurrences
        self.upper_mid: Counter = Counter()  # Word -> mid-sentence capitalised occurrences

    def add_casing(self, sentence: str) -> None:
        for m in _WORD.finditer(sentence):
            if is_sentence_initial(sentence, m.start()):
                continue
            w = m.group()
            if w.islower():
                self.lower_mid[w] += 1
            elif w[0].isupper():
                self.upper_mid[w] += 1

    def add(self, recogniser: str, label: str, sentence: str, start: int, end: int, source: str) -> None:
        text = _POSSESSIVE.sub("", " ".join(sentence[start:end].split()))
        the = _THE.match(text)
        if the:  # "the United Nations" as one span: the name is the rest
            text, start = text[the.end():], start + the.end()
        if not text:
            return
        rec = self.seen.setdefault((recogniser, label, text), [0, 0, 0, set()])
        rec[0] += 1
        rec[1] += 0 if is_sentence_initial(sentence, start) else 1
        rec[2] += 1 if the or after_the(sentence, start) else 0
        rec[3].add(source)

    def common_word(self, word: str) -> bool:
        """An ordinary word that a sentence start capitalised: more often lowercase mid-sentence."""
        return self.lower_mid[word.lower()] >= max(1, self.upper_mid[word])

    def finalise(self) -> list[PoolEntry]:
        best: dict[tuple[str, str], tuple[int, str]] = {}
        for (rec, label, text), (count, _mid, _the, _src) in self.seen.items():
            if rec == "spacy":
                cur = best.get((rec, text))
                if cur is None or (count, label) > cur:  # ties: the label later in the alphabet, stable
                    best[(rec, text)] = (count, label)
        out = []
        for (rec, label, text), (count, mid, with_the, sources) in self.seen.items():
            if rec == "spacy" and best[(rec, text)][1] != label:
                continue
            words = text.split()
            if not text[0].isupper() or len(words) > MAX_WORDS or not any(c.isalpha() for c in text):
                continue
            if any(c in text for c in "()[]{}\"“”<>|\t") or text[-1] in ",;:-'’":
                continue
            if len(words) == 1 and (mid == 0 or self.common_word(text)):
                continue
            out.append(PoolEntry(rec, label, text, count, with_the, tuple(sorted(sources))))
        return sorted(out, key=lambda e: (e.recogniser, e.label, e.text))


def collect(sentences: Sequence[str], source: str, recognisers: Sequence[str], collector: Collector | None = None,
            nlp=None, batch_size: int = 256) -> Collector:
    """Run the recognisers over `sentences` (tagged `source`) into `collector`."""
    from .entity import nltk_mentions

    col = collector or Collector()
    for s in sentences:
        col.add_casing(s)
    sentences = [s for s in sentences if has_mid_capital(s)]
    if "spacy" in recognisers:
        with nlp.select_pipes(enable=["tok2vec", "ner"]):
            for s, doc in zip(sentences, nlp.pipe(sentences, batch_size=batch_size)):
                for e in doc.ents:
                    if e.label_ in NAME_LABELS:
                        col.add("spacy", e.label_, s, e.start_char, e.end_char, source)
    if "nltk" in recognisers:
        for s, ms in zip(sentences, nltk_mentions(sentences)):
            for m in ms:
                col.add("nltk", m.label, s, m.start, m.end, source)
    return col
