"""Causality perturbations: adjective antonyms, negation added or removed, modal strengthening.

Each site in a sentence yields one variant with exactly one change, so a variant differs from
its source by one meaning-flipping edit (the paper's "causality alternation").
Input is a parsed spaCy Doc; output is a list of edit lists, in sentence order.
"""

from __future__ import annotations

from typing import Callable, Optional

from . import wordnet
from .edits import Edit
from .wordnet import antonym as wordnet_antonym  # noqa: F401  (re-exported)
from .wordnet import main_sense_antonym  # noqa: F401  (re-exported)
from .lexicon import BUILTIN_ANTONYMS, FIXED_PHRASES, STRICT_ANTONYMS, match_case, past_tense, third_person

AntonymFn = Callable[[str], Optional[str]]

FINITE_TAGS = {"VBD", "VBZ", "VBP", "MD"}
# Contracted negations whose host is not a word by itself ("ca" in "can't").
_NT_HOST = {"ca": "can", "wo": "will", "sha": "shall"}
_NT_FORM = {"can": "can't", "will": "won't", "shall": "shan't"}
_NT_OK = {"is", "are", "was", "were", "has", "have", "had", "does", "do", "did", "could", "would",
          "should", "must", "need"}
# Hedged modality -> certainty. "can" too: "it can rain" -> "it will rain" asserts the event.
MODAL_STRENGTHEN = {"may": "will", "might": "will", "could": "will", "can": "will", "should": "must"}
ADVERB_STRENGTHEN = {"possibly": "certainly", "probably": "certainly", "perhaps": "certainly",
                     "maybe": "certainly"}
# Adjectives whose "antonym" would be a determiner-like swap, not a meaning flip worth testing.
_ADJ_SKIP = {"such", "other", "same", "own", "only", "certain", "several", "various", "else"}


# Words that make a clause negative already: adding "not" there makes a double negative.
NEGATIVE_WORDS = frozenset({"no", "not", "n't", "never", "nothing", "none", "nobody", "nowhere", "neither", "nor",
                            "hardly", "scarcely", "barely", "without", "cannot", "no-one"})
# Negative-polarity words repaired when a negation goes or comes ("haven't yet" -> "have already").
_POLARITY_POS = {"yet": "already", "any": "some", "anything": "something", "anyone": "someone",
                 "anybody": "somebody", "anywhere": "somewhere", "either": "too"}
_POLARITY_NEG = {"already": "yet"}


def builtin_antonym(word: str) -> Optional[str]:
    return BUILTIN_ANTONYMS.get(word.lower())


def strict_antonym(word: str) -> Optional[str]:
    return STRICT_ANTONYMS.get(word.lower())


def _token_span(tok) -> tuple[int, int]:
    return tok.idx, tok.idx + len(tok.text)


def _uses_contractions(doc) -> bool:
    return any(t.lower_ == "n't" for t in doc)


def _subject_after(tok, verb) -> bool:
    """True for inverted order (questions, "Had he known"), where inserting 'not' misplaces it."""
    return any(c.dep_ in ("nsubj", "nsubjpass", "expl") and c.i > tok.i for c in verb.children)


def _antonym_sites(doc, antonym: AntonymFn) -> list[list[Edit]]:
    out = []
    for tok in doc:
        if tok.tag_ != "JJ" or tok.ent_type_ or tok.lower_ in _ADJ_SKIP or not tok.is_alpha:
            continue
        ant = antonym(tok.lower_)
        if ant and ant.lower() != tok.lower_:
            s, e = _token_span(tok)
            out.append([Edit(s, e, match_case(ant, tok.text))])
    return out


def _fixed_phrase(tok) -> bool:
    """The adjective is part of a name-like phrase: "round trip", "local time", "high-speed"."""
    nxt = tok.doc[tok.i + 1] if tok.i + 1 < len(tok.doc) else None
    text = tok.doc.text
    end = tok.idx + len(tok.text)
    if (tok.idx > 0 and text[tok.idx - 1] == "-") or (end < len(text) and text[end] == "-"):
        return True
    if nxt is None or nxt.pos_ not in ("NOUN", "PROPN"):
        return False
    if f"{tok.lower_} {nxt.lower_}" in FIXED_PHRASES or f"{tok.lower_} {nxt.lemma_.lower()}" in FIXED_PHRASES:
        return True
    return wordnet.available() and (wordnet.noun_compound(tok.lower_, nxt.lower_)
                                    or wordnet.noun_compound(tok.lower_, nxt.lemma_))


def _clause_tokens(verb):
    """Tokens of the verb's own clause: its subtree without clauses of their own."""
    out, stack = [], [verb]
    while stack:
        t = stack.pop()
        out.append(t)
        stack.extend(c for c in t.children
                     if c.dep_ not in ("ccomp", "xcomp", "advcl", "relcl", "acl", "conj", "csubj", "parataxis"))
    return out


def _negative_clause(verb) -> bool:
    return any(t.lower_ in NEGATIVE_WORDS or (t.dep_ == "det" and t.lower_ == "no") for t in _clause_tokens(verb))


def _strict_antonym_sites(doc, antonym: AntonymFn) -> list[list[Edit]]:
    """Sense-checked antonyms (the curated list), not in fixed phrases, names or negated clauses;
    "the same"/"a different" get their determiner repaired, and are skipped where it cannot be."""
    out = []
    for tok in doc:
        if tok.tag_ not in ("JJ", "JJR") or tok.ent_type_ or not tok.is_alpha or tok.dep_ == "compound":
            continue
        ant = antonym(tok.lower_)
        if not ant or _fixed_phrase(tok):
            continue
        prev = doc[tok.i - 1] if tok.i > 0 else None
        if prev is not None and ((prev.lower_ in ("as", "if", "where", "when", "whenever", "wherever")
                                  and tok.lower_ in ("possible", "necessary"))
                                 or (tok.lower_ == "different" and prev.like_num)):
            continue  # "as soon as possible", "three different directions"
        head = tok.head if tok.dep_ in ("amod", "acomp", "attr") else tok
        verb = head if head.pos_ in ("VERB", "AUX") else head.head
        if _negative_clause(verb) or any(c.dep_ == "neg" for c in head.children):
            continue
        s, e = _token_span(tok)
        det = doc[tok.i - 1] if tok.i > 0 else None
        if ant == "different" or tok.lower_ == "same":
            # "the same X" -> "a different X" / "different Xs"
            if det is None or det.lower_ != "the" or tok.dep_ != "amod":
                continue
            plural = tok.head.tag_ in ("NNS", "NNPS")
            out.append([Edit(det.idx, e, match_case("different" if plural else "a different", det.text))])
            continue
        if ant == "same":
            continue
        if tok.lower_ == "different" and tok.dep_ == "amod" and det is not None and det.lower_ in ("a", "an", "the"):
            out.append([Edit(det.idx, e, match_case("the same", det.text))])  # "a different X" -> "the same X"
            continue
        out.append([Edit(s, e, match_case(ant, tok.text))])
    return out


def _span_after(tok):
    """Tokens after `tok` up to the next punctuation, conjunction or subordinator: the stretch a
    negation governs even where the parse attaches words elsewhere ("didn't find anything unusual")."""
    out = []
    for t in tok.doc[tok.i + 1 :]:
        if t.is_punct or t.dep_ in ("cc", "mark") or t.tag_ in ("WDT", "WP", "WRB"):
            break
        out.append(t)
    return out


def _polarity_repairs(verb, table: dict[str, str], after=None) -> list[Edit]:
    """Swap negative-polarity words of the verb's clause ("yet" <-> "already", "any" -> "some")."""
    edits = []
    toks = {t.i: t for t in _clause_tokens(verb) + (_span_after(after) if after is not None else [])}
    for t in sorted(toks.values(), key=lambda t: t.i):
        new = table.get(t.lower_)
        if new is not None and t is not verb:
            edits.append(Edit(*_token_span(t), match_case(new, t.text)))
    return edits


def _remove_negation(doc, neg) -> Optional[list[Edit]]:
    head = neg.head
    if head.pos_ not in ("VERB", "AUX"):
        return None
    nxt = doc[neg.i + 1] if neg.i + 1 < len(doc) else None
    if nxt is not None and nxt.lower_ in ("only", "just", "even"):
        return None  # "not only X but Y": removing 'not' breaks the construction
    prev = doc[neg.i - 1] if neg.i > 0 else None
    fused = prev is not None and not prev.whitespace_  # "is|n't", "can|not"
    # Do-support: "did not go" -> "went", "does n't know" -> "knows".
    aux_do = [c for c in head.children if c.dep_ == "aux" and c.lemma_ == "do" and c.i < neg.i]
    if aux_do and head.i > neg.i and head.tag_ == "VB":
        aux = aux_do[-1]
        if _subject_after(aux, head):
            return None
        form = {"VBD": past_tense, "VBZ": third_person}.get(aux.tag_, lambda v: v)(head.lemma_.lower())
        neg_end = neg.idx + len(neg.text) + len(neg.whitespace_)
        edits = [Edit(aux.idx, neg_end, "")]
        new_head = match_case(form, aux.text) if aux.i == aux.sent.start else form
        edits.append(Edit(*_token_span(head), new_head))
        return edits
    if neg.lower_ == "n't" and fused:
        host = _NT_HOST.get(prev.lower_, prev.text)
        return [Edit(prev.idx, neg.idx + len(neg.text), match_case(host, prev.text))]
    if neg.lower_ in ("not", "never"):
        if fused:  # "cannot" -> "can"
            return [Edit(*_token_span(neg), "")]
        return [Edit(neg.idx, neg.idx + len(neg.text) + len(neg.whitespace_), "")]
    return None


# "is not perhaps", "only do not think": negation cannot go beside these without rewording.
_HEDGE_AFTER = frozenset({"perhaps", "probably", "possibly", "certainly", "surely", "definitely", "maybe"})
_FOCUS_BEFORE = frozenset({"only", "just", "even", "simply", "merely"})


def _awkward_spot(doc, tok, do_support: bool) -> bool:
    if do_support:
        prev = doc[tok.i - 1] if tok.i > 0 else None
        return prev is not None and prev.lower_ in _FOCUS_BEFORE
    nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
    return nxt is not None and nxt.lower_ in _HEDGE_AFTER


def _add_negation(doc, verb, contract: bool, strict: bool = False) -> Optional[list[Edit]]:
    auxes = sorted((c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i), key=lambda t: t.i)
    if strict:
        where = auxes[0] if auxes else verb
        if _awkward_spot(doc, where, not auxes and verb.lemma_ != "be"):
            return None
    if auxes:
        aux = auxes[0]
        if aux.tag_ not in FINITE_TAGS or _subject_after(aux, verb) or not aux.is_alpha:
            return None
        s, e = _token_span(aux)
        low = aux.lower_
        if low == "can":
            return [Edit(s, e, match_case("can't" if contract else "cannot", aux.text))]
        if contract and (low in _NT_OK or low in _NT_FORM):
            return [Edit(s, e, match_case(_NT_FORM.get(low, low + "n't"), aux.text))]
        return [Edit(e, e, " not")]
    if verb.tag_ not in ("VBD", "VBZ", "VBP") or _subject_after(verb, verb):
        return None
    s, e = _token_span(verb)
    if verb.lemma_ == "be":  # copula: "was" -> "was not", "'re" -> "'re not"
        if contract and verb.lower_ in _NT_OK:
            return [Edit(s, e, match_case(verb.lower_ + "n't", verb.text))]
        return [Edit(e, e, " not")]
    if verb.pos_ != "VERB" or not verb.is_alpha:
        return None
    do = {"VBD": "did", "VBZ": "does", "VBP": "do"}[verb.tag_]
    neg = do + ("n't" if contract else " not")
    return [Edit(s, e, match_case(neg, verb.text) + " " + verb.lemma_.lower())]


def _is_main_clause(tok) -> bool:
    while tok.dep_ == "conj":  # "He came and saw": both verbs are main-clause verbs
        tok = tok.head
    return tok.dep_ == "ROOT"


def _own_subject(tok) -> bool:
    return any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in tok.children)


def _negation_sites(doc, strict: bool = False) -> list[list[Edit]]:
    """Existing negations removed wherever they are; negation added to the sentence's main verb
    (the paper: "negate the meaning of sentences"). Strict: also to a conjoined main verb with its
    own subject, never where the clause is negative already, with "yet"/"already", "any"/"some"
    repaired."""
    out = []
    contract = _uses_contractions(doc)
    negated = set()
    for tok in doc:
        if tok.dep_ == "neg" and tok.lower_ in ("not", "n't", "never"):
            negated.add(tok.head.i)
            edits = _remove_negation(doc, tok)
            if edits and strict:
                edits = edits + [e for e in _polarity_repairs(tok.head, _POLARITY_POS, after=tok)
                                 if not any(e.start < x.end and x.start < e.end for x in edits)]
            if edits:
                out.append(edits)
    for tok in doc:
        if tok.pos_ not in ("VERB", "AUX") or tok.i in negated:
            continue
        if not (tok.dep_ == "ROOT" or (strict and tok.dep_ == "conj" and _own_subject(tok) and _is_main_clause(tok))):
            continue
        if strict and _negative_clause(tok):
            continue
        edits = _add_negation(doc, tok, contract, strict)
        if edits and strict:
            repairs = _polarity_repairs(tok, _POLARITY_NEG)
            if any(r.start < edits[0].start for r in repairs):
                continue  # "He already knew": no place for "not yet" without rewording
            edits = edits + repairs
        if edits:
            out.append(edits)
    return out


def _strengthen_sites(doc) -> list[list[Edit]]:
    out = []
    for tok in doc:
        nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
        if tok.tag_ == "MD" and tok.lower_ in MODAL_STRENGTHEN:
            if nxt is not None and nxt.dep_ == "neg":
                continue  # "cannot", "may not": strengthening a negated modal is a different edit
            out.append([Edit(*_token_span(tok), match_case(MODAL_STRENGTHEN[tok.lower_], tok.text))])
        elif tok.pos_ == "ADV" and tok.lower_ in ADVERB_STRENGTHEN:
            out.append([Edit(*_token_span(tok), match_case(ADVERB_STRENGTHEN[tok.lower_], tok.text))])
    return out


def causality_sites(doc, antonym: AntonymFn, strict: bool = False) -> list[list[Edit]]:
    """All single-change causality variants of a parsed sentence, ordered by position."""
    ants = _strict_antonym_sites(doc, antonym) if strict else _antonym_sites(doc, antonym)
    sites = ants + _negation_sites(doc, strict) + _strengthen_sites(doc)
    sites.sort(key=lambda edits: min(e.start for e in edits))
    return sites
