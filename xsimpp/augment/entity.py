"""Entity perturbations: named entities replaced by others from a candidate pool.

Paper style: NLTK's binary maxent chunker (what the paper used; "NE" vs not, works offline with the
NLTK data), names replaced by random pool entities. Strict style: spaCy's typed NER, like replaced
by like (PERSON, place, ORG, NORP), one name per variant, whole spans only, aliases refused. The pool
comes from monolingual English (xsimpp.augment.pool); its order is sorted so sampling from it is
reproducible.
"""

from __future__ import annotations

import functools
import random
import re
from typing import Callable, Collection, Iterable, NamedTuple, Optional, Sequence

from .edits import Edit
from .spans import after_the, is_sentence_initial

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


# Strict style: spaCy labels swapped like for like, in four groups (a demonym only for a demonym).
STRICT_GROUP_OF = {"PERSON": "PERSON", "GPE": "PLACE", "LOC": "PLACE", "ORG": "ORG", "NORP": "NORP"}
STRICT_GROUPS = ("PERSON", "PLACE", "ORG", "NORP")
# Groups whose names carry their own article ("the Netherlands", "the BBC"); "the Germans" does not.
ARTICLE_GROUPS = ("PLACE", "ORG")
# Words that may stand next to a name without making it part of a longer one ("President Obama").
TITLES = frozenset("""
president vice prime minister secretary chancellor king queen prince princess emperor pope saint st
sir lord lady dame dr mr mrs ms miss professor prof senator governor mayor judge general gen captain
capt colonel col lieutenant sergeant coach ceo chairman chief director
""".split())
# Names that are the same place or body under another name: never a negative for each other.
ALIASES = [
    {"united states", "united states of america", "us", "usa", "america"},
    {"united kingdom", "uk", "britain", "great britain"},
    {"netherlands", "holland"}, {"myanmar", "burma"}, {"soviet union", "ussr"},
    {"czech republic", "czechia"}, {"ivory coast", "côte d'ivoire", "cote d'ivoire"},
    {"united nations", "un"}, {"european union", "eu"}, {"eswatini", "swaziland"},
    {"türkiye", "turkey"}, {"beijing", "peking"}, {"mumbai", "bombay"}, {"kolkata", "calcutta"},
    {"americans", "american"}, {"britons", "british", "brits"},
]
# Words that say what kind of thing a name is: a "PERSON" called "Lake Victoria" is a tagging error.
_KIND_WORDS = {
    "PLACE": frozenset("lake mount mountain mountains river ocean sea bay gulf island islands cape desert valley "
                       "county province state republic kingdom city town street avenue road".split()),
    "ORG": frozenset("university college school institute hospital company corporation corp inc ltd bank party "
                     "council ministry department agency association union club league committee foundation "
                     "group airlines museum".split()),
}


def plausible(group: str, name: str) -> bool:
    """No kind word of another group in the name ("Lake Victoria" is no PERSON, "Oxford University"
    no PLACE); a PERSON holds none at all."""
    words = {w.lower().strip(".") for w in name.split()}
    return not any(words & kw for g, kw in _KIND_WORDS.items() if g != group)


_ALIAS_OF = {name: i for i, group in enumerate(ALIASES) for name in group}


def _key(text: str) -> frozenset:
    """Word set used to reject near-paraphrase swaps: "U.S." vs "US", "Nadal" vs "Rafael Nadal"."""
    return frozenset(re.sub(r"[^\w\s]", "", text.lower()).split())


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s'’]", "", text.lower()).split())


def _initials(text: str) -> str:
    """"United States of America" -> "usa"; "U.S." -> "us"."""
    words = re.sub(r"[^\w\s]", "", text).split()
    if len(words) == 1:
        return words[0].lower() if words[0].isupper() else ""
    return "".join(w[0] for w in words if w[:1].isupper()).lower()


def same_referent(a: str, b: str) -> bool:
    """True when swapping `a` for `b` may not change what is named: one name contains the other
    ("Nadal" / "Rafael Nadal"), an acronym ("U.S." / "United States"), a listed alias ("Holland"),
    or a shared stem ("India" / "Indian", "Japan" / "Japanese")."""
    ka, kb = _key(a), _key(b)
    if not ka or not kb or ka <= kb or kb <= ka:
        return True
    na, nb = _norm(a), _norm(b)
    if na in _ALIAS_OF and _ALIAS_OF[na] == _ALIAS_OF.get(nb):
        return True
    ia, ib = _initials(a), _initials(b)
    if (ia and ia in (ib, nb.replace(" ", ""))) or (ib and ib == na.replace(" ", "")):
        return True
    short, long_ = sorted((na, nb), key=len)
    return len(short) >= 4 and long_.startswith(short[: max(4, len(short) - 1)]) and " " not in short


class EntityPool:
    """Entity strings per label, sorted for reproducible sampling; for each, whether it takes "the"."""

    def __init__(self, items: Iterable[tuple]):
        by_label: dict[str, dict[str, bool]] = {}
        for item in items:
            label, text = item[0], " ".join(item[1].split())
            the = bool(item[2]) if len(item) > 2 else False
            if text and _key(text):
                by_label.setdefault(label, {})[text] = the
        self.by_label = {lab: sorted(v) for lab, v in sorted(by_label.items())}
        self._the = {lab: [v[t] for t in self.by_label[lab]] for lab, v in by_label.items()}
        self._label_of: dict[str, str] = {}
        for lab, texts in self.by_label.items():
            for t in texts:
                self._label_of.setdefault(t, lab)
        # label -> shape -> candidate indices: like replaces like in form, too.
        self._shape: dict[str, dict[tuple, list[int]]] = {}
        self._form: dict[str, dict[tuple, list[int]]] = {}
        for lab, texts in self.by_label.items():
            shapes: dict[tuple, list[int]] = {}
            forms: dict[tuple, list[int]] = {}
            for j, t in enumerate(texts):
                shape = _shape(t, lab, self._the[lab][j] and lab in ARTICLE_GROUPS)
                shapes.setdefault(shape, []).append(j)
                forms.setdefault(shape[1:], []).append(j)
            self._shape[lab], self._form[lab] = shapes, forms

    def __len__(self) -> int:
        return sum(len(v) for v in self.by_label.values())

    def knows(self, text: str) -> bool:
        return text in self._label_of

    def label_of(self, text: str):
        """The label the pool gives this name (its most frequent one in the pool's corpus), or None."""
        return self._label_of.get(text)

    def sample(self, label: str, old: str, rng: random.Random, tries: int = 25):
        """A pool entity of `label` that is not the same name as `old` (None if none is found)."""
        cands = self.by_label.get(label)
        if not cands:
            return None
        for _ in range(tries):
            new = cands[rng.randrange(len(cands))]
            if not same_referent(old, new):
                return new
        return None

    def sample_like(self, label: str, old: str, the: bool, rng: random.Random, k: int, avoid=(),
                    allowed: Optional[Collection[str]] = None) -> list[str]:
        """Up to k distinct names of `label` shaped like `old` (word count, "the" or not), none the
        same referent as `old` or as a name in `avoid` (the sentence's other names); only names in
        `allowed` when it is given (the target generator's context-matched names)."""
        cands = self.by_label.get(label)
        if not cands:
            return []
        shape = _shape(old, label, the)

        def kept(idx: list[int]) -> list[int]:
            return idx if allowed is None else [j for j in idx if cands[j] in allowed]

        idx = kept(self._shape[label].get(shape, []))
        if len(idx) < 20:  # too few of that shape: any number of words, the same form otherwise
            idx = kept(self._form[label].get(shape[1:], []))
        out: list[str] = []
        for _ in range(25 * k):
            if len(out) == k or not idx:
                break
            new = cands[idx[rng.randrange(len(idx))]]
            if new in out or same_referent(old, new) or any(same_referent(a, new) for a in avoid):
                continue
            out.append(new)
        return out


def _shape(name: str, label: str, the: bool) -> tuple:
    """(words up to 3, takes "the", an acronym, a plural demonym): "NBA" is replaced by an acronym,
    "Germans" by "Danes" (not "Danish"), "the United States" by a name that takes "the"."""
    acronym = len(name) <= 8 and re.fullmatch(r"(?:[A-Z]\.?){2,}", name) is not None
    plural = label == "NORP" and not acronym and name.endswith("s") and not name.endswith("ss")
    return (min(len(name.split()), 3), the, acronym, plural)


def _group_mentions(sentence: str, mentions: list[Mention]) -> dict[tuple[str, str], list[Mention]]:
    groups: dict[tuple[str, str], list[Mention]] = {}
    for m in mentions:
        groups.setdefault((sentence[m.start : m.end], m.label), []).append(m)
    return groups  # insertion order = first occurrence in the sentence


def paper_entity_variants(sentence: str, mentions: list[Mention], pool: EntityPool, rng: random.Random, draws: int,
                          p: float) -> list[list[Edit]]:
    """The paper's entity replacement: `draws` (its threshold, 100) draws per sentence, each
    replacing every named entity with probability `p` by a random pool entity (repeated mentions of
    a name together). Draws that change nothing, or repeat an earlier draw, are dropped, so a
    sentence with one entity gets about draws * p variants and one with many nearly `draws`."""
    groups = _group_mentions(sentence, mentions)
    if not groups:
        return []
    cands = pool.by_label.get(BINARY_LABEL, [])
    out: list[list[Edit]] = []
    seen: set[tuple] = set()
    for _ in range(draws):
        sig, edits = [], []
        for gi, ((text, _label), ms) in enumerate(groups.items()):
            if rng.random() >= p or not cands:
                continue
            new = cands[rng.randrange(len(cands))]
            if new == text:
                continue
            sig.append((gi, new))
            edits.extend(Edit(m.start, m.end, new) for m in ms)
        sig = tuple(sig)
        if edits and sig not in seen:
            seen.add(sig)
            out.append(edits)
    return out


def strict_mentions(doc, pool: EntityPool) -> list[Mention]:
    """Typed names a strict variant may replace, as whole spans labelled with their group.

    Left alone: other labels; a name with digits; a span that is part of a longer name (a
    capitalised proper noun or a hyphen right beside it that is not a title: "Karenia brevis",
    "Anglo-French"); and a one-word name at the start of a sentence unless the pool knows it as a
    name (sentence starts capitalise ordinary words: "Fill your home...")."""
    text = doc.text
    out = []
    for e in doc.ents:
        group = STRICT_GROUP_OF.get(e.label_)
        if group is None:
            continue
        toks = list(e)
        while toks and (toks[0].lower_ == "the" or toks[0].is_punct):
            toks = toks[1:]
        while toks and (toks[-1].tag_ == "POS" or (toks[-1].is_punct and toks[-1].text != ".")):
            toks = toks[:-1]
        if not toks:
            continue
        first, last = toks[0], toks[-1]
        start, end = first.idx, last.idx + len(last.text)
        name = text[start:end]
        if not name[:1].isupper() or any(c.isdigit() for c in name):
            continue
        prev = doc[first.i - 1] if first.i > 0 else None
        nxt = doc[last.i + 1] if last.i + 1 < len(doc) else None
        if prev is not None and prev.text[:1].isupper() and prev.tag_ in ("NNP", "NNPS") \
                and prev.lower_.rstrip(".") not in TITLES:
            continue  # "Lake Victoria", "Hurricane Katrina"
        if nxt is not None and ((nxt.text[:1].isupper() and nxt.tag_ in ("NNP", "NNPS")
                                 and nxt.lower_.rstrip(".") not in TITLES) or nxt.tag_ == "FW"):
            continue
        if group == "PERSON" and nxt is not None and nxt.is_lower and nxt.tag_ in ("NN", "NNS", "JJ"):
            continue  # a "person" right before a common noun is a binomial or a modifier: "Karenia brevis"
        if (start > 0 and text[start - 1] in "-–/") or (end < len(text) and text[end] in "-–/"):
            continue
        if len(toks) == 1 and is_sentence_initial(text, start) and not pool.knows(name):
            continue
        if not plausible(group, name) or pool.label_of(name) not in (None, group):
            continue  # the pool's corpus mostly calls it something else: the tag here may be wrong
        out.append(Mention(start, end, group))
    return out


def strict_entity_variants(sentence: str, mentions: list[Mention], pool: EntityPool, rng: random.Random,
                           per_entity: int,
                           allowed: Optional[Callable[[str, list[Mention]], Collection[str]]] = None
                           ) -> list[list[Edit]]:
    """`per_entity` variants per name of the sentence, each replacing that one name (every mention
    of it) by a pool name of the same group and shape; interleaved across names so a cap keeps
    every name represented. `allowed(label, mentions)`, when given, names the only pool names
    that may replace those mentions (the target generator's context match); English passes none."""
    groups = _group_mentions(sentence, mentions)
    names = [t for t, _ in groups]
    per = []
    for (text, label), ms in groups.items():
        the = label in ARTICLE_GROUPS and after_the(sentence, ms[0].start)
        news = pool.sample_like(label, text, the, rng, per_entity, avoid=[n for n in names if n != text],
                                allowed=None if allowed is None else allowed(label, ms))
        per.append([[Edit(m.start, m.end, new) for m in ms] for new in news])
    out = []
    for r in range(max((len(p) for p in per), default=0)):
        out.extend(p[r] for p in per if r < len(p))
    return out
