"""Causality perturbations: adjective antonyms, negation added or removed, modal strengthening.

Each site in a sentence yields one variant with exactly one change, so a variant differs from
its source by one meaning-flipping edit (the paper's "causality alternation").
Input is a parsed spaCy Doc; output is a list of edit lists, in sentence order.
"""

from __future__ import annotations

from typing import Callable, Optional

from .edits import Edit
from .wordnet import antonym as wordnet_antonym  # noqa: F401  (re-exported)
from .lexicon import BUILTIN_ANTONYMS, match_case, past_tense, third_person

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


def builtin_antonym(word: str) -> Optional[str]:
    return BUILTIN_ANTONYMS.get(word.lower())


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


def _add_negation(doc, verb, contract: bool) -> Optional[list[Edit]]:
    auxes = sorted((c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i), key=lambda t: t.i)
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


def _negation_sites(doc) -> list[list[Edit]]:
    out = []
    contract = _uses_contractions(doc)
    negated = set()
    for tok in doc:
        if tok.dep_ == "neg" and tok.lower_ in ("not", "n't", "never"):
            negated.add(tok.head.i)
            edits = _remove_negation(doc, tok)
            if edits:
                out.append(edits)
    for tok in doc:
        # Negation is added to main-clause verbs only: one clear flip of what the sentence asserts.
        # Existing negations are removed wherever they are (above).
        if tok.pos_ not in ("VERB", "AUX") or tok.i in negated or not _is_main_clause(tok):
            continue
        edits = _add_negation(doc, tok, contract)
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


def causality_sites(doc, antonym: AntonymFn) -> list[list[Edit]]:
    """All single-edit causality variants of a parsed sentence, ordered by position."""
    sites = _antonym_sites(doc, antonym) + _negation_sites(doc) + _strengthen_sites(doc)
    sites.sort(key=lambda edits: min(e.start for e in edits))
    return sites
