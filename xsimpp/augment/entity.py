"""Entity perturbations: named entities replaced by others from a candidate pool.

Recognisers: NLTK's binary maxent chunker (what the paper used; "NE" vs not, works offline with
the NLTK data) or spaCy's typed NER (replace like with like: PERSON by PERSON). The pool is built
from monolingual English (the corpus itself plus optional extra files); its order is sorted so
sampling from it is reproducible.
"""

from __future__ import annotations

import functools
import random
import re
from typing import Iterable, NamedTuple, Sequence

from .edits import Edit
from .number import NUMERIC_LABELS

BINARY_LABEL = "NE"


class Mention(NamedTuple):
    start: int
    end: int
    label: str


@functools.lru_cache(maxsize=1)
def _nltk_pipeline():
    from nltk.chunk import ne_chunker
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktTokenizer

    # nltk.ne_chunk() reloads the model on every call (~2 s each); load it once.
    return PunktTokenizer("english"), NLTKWordTokenizer(), ne_chunker(fmt="binary")


def nltk_mentions(sentences: Sequence[str]) -> list[list[Mention]]:
    """Binary NE mentions with character offsets, for a batch of sentences."""
    import nltk

    punkt, words, chunker = _nltk_pipeline()
    spans_all = []
    for s in sentences:
        # span_tokenize gives offsets into the original string, so replacements keep its bytes.
        spans_all.append([(a + o, b + o) for o, e in punkt.span_tokenize(s) for a, b in words.span_tokenize(s[o:e])])
    tagged = nltk.pos_tag_sents([[s[a:b] for a, b in spans] for s, spans in zip(sentences, spans_all)])
    out = []
    for spans, tags in zip(spans_all, tagged):
        mentions = []
        i = 0
        for node in chunker.parse(tags):
            if hasattr(node, "label"):
                n = len(node.leaves())
                mentions.append(Mention(spans[i][0], spans[i + n - 1][1], BINARY_LABEL))
                i += n
            else:
                i += 1
        out.append(mentions)
    return out


def spacy_mentions(doc) -> list[Mention]:
    """Typed, non-numeric spaCy entities (numeric ones belong to the number category)."""
    return [Mention(e.start_char, e.end_char, e.label_) for e in doc.ents if e.label_ not in NUMERIC_LABELS]


def _key(text: str) -> frozenset:
    """Word set used to reject near-paraphrase swaps: "U.S." vs "US", "Nadal" vs "Rafael Nadal"."""
    return frozenset(re.sub(r"[^\w\s]", "", text.lower()).split())


class EntityPool:
    """Entity strings per label, sorted for reproducible sampling."""

    def __init__(self, items: Iterable[tuple[str, str]]):
        by_label: dict[str, set[str]] = {}
        for label, text in items:
            text = " ".join(text.split())
            if text and _key(text):
                by_label.setdefault(label, set()).add(text)
        self.by_label = {lab: sorted(v) for lab, v in sorted(by_label.items())}
        self._keys = {lab: [_key(t) for t in v] for lab, v in self.by_label.items()}

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_label.values())

    def sample(self, label: str, old: str, rng: random.Random, tries: int = 25):
        """A pool entity of `label` that is not the same name as `old` (None if none is found)."""
        cands = self.by_label.get(label)
        if not cands:
            return None
        old_key = _key(old)
        keys = self._keys[label]
        for _ in range(tries):
            j = rng.randrange(len(cands))
            k = keys[j]
            # Subset either way means one name contains the other: same referent, not a negative.
            if not (k <= old_key or old_key <= k):
                return cands[j]
        return None


def entity_variants(sentence: str, mentions: list[Mention], pool: EntityPool, rng: random.Random, cap: int) -> list[list[Edit]]:
    """Up to `cap` edit lists, each replacing one or several entities of the sentence.

    Repeated mentions of the same name are replaced together ("Vidal ... Vidal") so the variant
    stays coherent. Half of the variants replace one entity, the others several (when there are).
    """
    groups: dict[tuple[str, str], list[Mention]] = {}
    for m in mentions:
        groups.setdefault((sentence[m.start : m.end], m.label), []).append(m)
    keys = list(groups)  # insertion order = first occurrence in the sentence
    if not keys:
        return []
    out: list[list[Edit]] = []
    seen: set[tuple] = set()
    for _ in range(10 * cap):
        if len(out) >= cap:
            break
        k = 1 if len(keys) == 1 or rng.random() < 0.5 else rng.randint(2, len(keys))
        chosen = sorted(rng.sample(range(len(keys)), k))
        edits: list[Edit] = []
        sig = []
        for gi in chosen:
            text, label = keys[gi]
            new = pool.sample(label, text, rng)
            if new is None:
                continue
            sig.append((gi, new))
            edits.extend(Edit(m.start, m.end, new) for m in groups[keys[gi]])
        sig = tuple(sig)
        if edits and sig not in seen:
            seen.add(sig)
            out.append(edits)
    return out
