"""German causality rules (strict style), without a parser: a word tokenisation, closed word lists
and patterns whose every hit can be trusted (no German spaCy model is installable here; German's
capitalised nouns and lower-case verbs carry much of what a tagger would).

Covered, one edit per variant:
- negation removed: "nicht" followed by at most two lower-case words (the final verb, participle,
  infinitive, separable particle or predicate) and then a clause boundary ("Er kam nicht." ->
  "Er kam.", "..., weil er nicht kommen konnte," -> "..., weil er kommen konnte,");
- "keinem/keines/keiner" + adjectives + noun -> "einem/eines/einer" (forms that are singular only,
  so the article maps one to one);
- negation added: "ein/eine/einen/einem/einer" + adjectives + noun -> "kein..." in a sentence
  without any negation; and "nicht" before the final participle, infinitive or predicate of a
  one-clause statement whose middle field holds only pronouns, definite noun phrases and a few
  time adverbs ("Die Polizei hat den Mann festgenommen." -> "... den Mann nicht festgenommen.");
- antonyms: reviewed adjective pairs with all their inflected, comparative and superlative forms
  (groß/klein, hoch/niedrig, gut/schlecht ...); a form shared by two paradigm slots with different
  antonyms ("kleiner": inflected positive or comparative) is skipped, not guessed.

Deliberately skipped:
- "kein"/"keine"/"keinen" -> "ein...": "keine" and "keinen" may be plural ("keine Mäuse" has no
  "eine" form) and "kein" mostly goes with mass nouns ("kein Geld" -> "ein Geld" is not German);
- "eines" (genitive "eines Tages", "die Frau eines Mannes") and a genitive-looking "einer" after a
  noun; "ein" after approximators, comparisons and focus words (nur, etwa, als, wie, lediglich ...),
  after a definite article ("das eine Ende" = the one end),
  after "und"/"oder" (lists) and after prepositions ("mit keinem Absatz" is not how German says
  "ohne Absatz"), and before quantity or time nouns (ein Drittel, eine Reihe, ein Jahr später);
- "nicht" in nicht nur / mehr / einmal / zuletzt / allein / etwa / wahr, after noch / gar /
  überhaupt / ob, in sentences with "sondern", and a sentence-initial "Nicht";
- "nicht" added anywhere else (its place depends on the parse), and antonyms of adverb-only uses
  ("gut 100", "kurz vor", "lange" = for a long time, "hoch" as a separable particle), capitalised
  words after the first (nouns and names), and the fixed phrases in FIXED_PHRASES.
"""

from __future__ import annotations

import re
from typing import Optional

from ._shared import Edit, FormTable, apply, finish, in_fixed_phrase, match_case

LANG = "deu_Latn"
VERSION = "deu-1"

_TOKEN = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")
_BOUNDARY = set(",.;:!?()[]\"„“”»«‚‘’–—")

NEGATIVE = {"nicht", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nie", "niemals", "nichts", "niemand",
            "niemanden", "niemandem", "nirgends", "nirgendwo", "weder", "keineswegs", "keinesfalls"}
# "nicht" stays in these: removing it breaks the idiom (nicht nur ... sondern, nicht mehr = no
# longer, nicht einmal = not even, nicht zuletzt, nicht allein, nicht etwa, nicht wahr?) or needs
# another word changed (noch nicht -> schon, gar/überhaupt nicht, ob ... nicht).
NICHT_NEXT_BLOCK = {"nur", "mehr", "einmal", "zuletzt", "allein", "etwa", "wahr", "weniger", "minder", "umsonst"}
NICHT_PREV_BLOCK = {"noch", "gar", "überhaupt", "ob", "oder", "und"}  # "... zu tun oder nicht zu tun"
# "ein" here is a numeral, part of a comparison or of a list, restricted by a focus word ("lediglich
# eine" -> "lediglich keine"), or inside a prepositional phrase, where "kein" is mostly unidiomatic
# ("laut keinem Transkript", "Stiefel mit keinem Absatz": German says "ohne").
EIN_PREV_BLOCK = {"als", "wie", "nur", "noch", "so", "solch", "welch", "etwa", "rund", "ungefähr", "mindestens",
                  "höchstens", "fast", "knapp", "je", "jeweils", "irgend", "mehr", "gut", "weniger", "zirka", "circa",
                  "ca", "lediglich", "bloß", "ausschließlich", "genau", "schon", "bereits", "sogar", "zumindest",
                  "wenigstens", "immerhin", "und", "oder", "sowie", "bzw",
                  "der", "die", "das", "den", "dem", "des", "dieser", "diese", "dieses", "jeder", "jede", "jedes",
                  "an", "auf", "aus", "bei", "mit", "nach", "seit", "von", "zu", "in", "durch", "für", "gegen", "ohne",
                  "um", "über", "unter", "vor", "hinter", "neben", "zwischen", "laut", "gemäß", "trotz", "während",
                  "wegen", "statt", "anstatt", "außer", "dank", "bis", "entlang", "innerhalb", "außerhalb", "per",
                  "pro", "samt", "gegenüber", "ab"}
# Quantity and time nouns: "ein Drittel", "eine Reihe von", "ein Jahr später" count, they do not assert.
QUANTITY_NOUNS = {"Drittel", "Viertel", "Fünftel", "Hälfte", "Prozent", "Million", "Milliarde", "Dutzend",
                  "Paar", "Reihe", "Vielzahl", "Menge", "Anzahl", "Teil", "Großteil", "Mal", "Stück", "Jahr",
                  "Monat", "Woche", "Tag", "Tages", "Stunde", "Minute", "Sekunde", "Jahrzehnt", "Jahrhundert",
                  "Weile", "Art", "Form", "Zeit", "Mehrheit", "Minderheit", "Handvoll", "Bruchteil", "Kilometer",
                  "Meter", "Euro", "Dollar"}
# Closed classes that can stand between an article and its noun but are no adjectives.
FUNCTION_WORDS = {"der", "die", "das", "den", "dem", "des", "oder", "aber", "einer", "unter", "hinter", "über",
                  "wieder", "immer", "sehr", "mehr", "weder", "außer", "jeder", "jeden", "jedem", "jedes", "jede"}
# Finite auxiliaries and modals: with them the sentence ends in a participle / infinitive / predicate.
AUXILIARIES = {"hat", "haben", "habe", "hatte", "hatten", "hätte", "hätten", "ist", "sind", "war", "waren", "wäre",
               "wären", "wird", "werden", "wurde", "wurden", "würde", "würden", "kann", "können", "konnte",
               "konnten", "könnte", "könnten", "muss", "müssen", "musste", "mussten", "müsste", "müssten", "soll",
               "sollen", "sollte", "sollten", "will", "wollen", "wollte", "wollten", "darf", "dürfen", "durfte",
               "durften", "dürfte", "dürften"}
SEIN = {"ist", "sind", "war", "waren", "wäre", "wären"}
DEFINITE = {"der", "die", "das", "den", "dem", "des", "dieser", "diese", "diesen", "diesem", "dieses", "sein",
            "seine", "seinen", "seinem", "seiner", "seines", "ihr", "ihre", "ihren", "ihrem", "ihrer", "ihres",
            "mein", "meine", "meinen", "meinem", "meiner", "unser", "unsere", "unseren", "unserem", "unserer"}
PRONOUNS = {"ich", "du", "er", "sie", "wir", "ihr", "mich", "dich", "sich", "uns", "euch", "ihn", "ihm", "ihnen",
            "mir", "dir", "das", "dies"}
TIME_ADVERBS = {"gestern", "heute", "morgen", "damals", "jetzt", "nun", "dann", "bisher", "inzwischen"}
# A clause with these needs more than "nicht" (schon -> noch nicht, etwas -> nichts, und/oder: a
# second clause; subordinators: the finite verb is clause-final, not where "nicht" goes here).
NICHT_ADD_BLOCK = {"schon", "bereits", "noch", "auch", "sogar", "jemals", "etwas", "jemand", "und", "oder", "dass",
                   "weil", "ob", "wenn", "als", "während", "obwohl", "nachdem", "damit", "bevor", "ein", "eine",
                   "einen", "einem", "einer", "eines", "es"}
# Participles: (particle +) ge- + stem + -t/-en, -iert, or an inseparable prefix without ge-.
_PARTICIPLE = re.compile(r"^[a-zäöüß]*ge[a-zäöüß]+(?:t|en)$|^[a-zäöüß]+iert$"
                         r"|^(?:be|ver|zer|er|ent|emp|miss)[a-zäöüß]{3,}(?:t|en)$")
_INFINITIVE = re.compile(r"^[a-zäöüß]+(?:en|ern|eln)$|^(?:sein|tun)$")

ENDINGS = ("", "e", "en", "er", "es", "em")
SLOTS = tuple(f"pos-{e}" for e in ENDINGS) + tuple(f"cmp-{e}" for e in ENDINGS) + tuple(f"sup-{e}" for e in ENDINGS[1:])


def paradigm(base: Optional[str], stem: str, cmp: Optional[str] = None, sup: Optional[str] = None) -> tuple:
    """An adjective's forms in SLOTS order: predicative `base`, `stem` + endings, comparative,
    superlative stem + endings (None where the form is left out)."""
    return ((base,) + tuple(stem + e for e in ENDINGS[1:])
            + tuple(cmp + e if cmp else None for e in ENDINGS)
            + tuple(sup + e if sup else None for e in ENDINGS[1:]))


# Adjective pairs, each reviewed: antonyms in their common senses, paradigms from the standard
# declension (Duden grammar). A None base keeps an adverb-only or particle reading out
# ("gut 100", "kurz vor", "hoch" in "hob ... hoch", "erst" = only, "bekannt geben").
# Left out after review: alt/neu and alt/jung (which opposite?), leicht/schwer ("schwer verletzt"
# vs "leicht erhöht"), sicher/unsicher ("sicher" = surely), voll/leer, nah/fern.
ADJECTIVES = FormTable(SLOTS, [
    (paradigm("groß", "groß", "größer", "größt"), paradigm("klein", "klein", "kleiner", "kleinst")),
    (paradigm(None, "hoh", "höher", "höchst"), paradigm("niedrig", "niedrig", "niedriger", "niedrigst")),
    (paradigm(None, "gut", "besser", "best"), paradigm("schlecht", "schlecht", "schlechter", "schlechtest")),
    (paradigm("stark", "stark", "stärker", "stärkst"), paradigm("schwach", "schwach", "schwächer", "schwächst")),
    (paradigm("warm", "warm", "wärmer", "wärmst"), paradigm("kalt", "kalt", "kälter", "kältest")),
    (paradigm("schnell", "schnell", "schneller", "schnellst"),
     paradigm("langsam", "langsam", "langsamer", "langsamst")),
    (paradigm("früh", "früh", "früher", "frühest"), paradigm("spät", "spät", "später", "spätest")),
    (paradigm(None, "lang", None, "längst"), paradigm(None, "kurz", None, "kürzest")),
    (paradigm("reich", "reich", "reicher", "reichst"), paradigm("arm", "arm", "ärmer", "ärmst")),
    (paradigm("möglich", "möglich"), paradigm("unmöglich", "unmöglich")),
    (paradigm("wichtig", "wichtig", "wichtiger", "wichtigst"),
     paradigm("unwichtig", "unwichtig", "unwichtiger", "unwichtigst")),
    (paradigm(None, "bekannt"), paradigm(None, "unbekannt")),
    (paradigm("richtig", "richtig", "richtiger", "richtigst"), paradigm("falsch", "falsch", "falscher", "falschest")),
    (paradigm("positiv", "positiv", "positiver", "positivst"), paradigm("negativ", "negativ", "negativer", "negativst")),
    (paradigm(None, "erst"), paradigm(None, "letzt")),
], not_sources={"lange", "längste", "längsten", "stark"})
# Not sources: "lange" = for a long time, "am längsten" = longest (time); "stark" is also an
# intensifying adverb ("stark gestiegen" -> "schwach gestiegen" is not idiomatic).
# Uninflected quantity words and one-way adverbs: "viele"/"wenige", "mehr"/"weniger"; "oft" ->
# "selten" only ("selten" is also an adjective: "ein seltener Fall").
WORDS = FormTable(("w",), [(("viele",), ("wenige",)), (("vielen",), ("wenigen",)), (("mehr",), ("weniger",)),
                           (("oft",), ("selten",))], not_sources={"selten"})
# Idioms where a listed word has no opposite: "vielen Dank", "so bald wie möglich", "zum größten
# Teil" (mostly), "mehr oder weniger", "nur wenige" (-> "nur viele"); "seit langem" is kept ("seit
# kurzem" is its opposite).
FIXED_PHRASES = [("vielen", "dank"), ("wie", "möglich"), ("als", "möglich"), ("zum", "größten", "teil"),
                 ("mehr", "oder", "weniger"), ("immer", "wieder"), ("umso", "mehr"), ("nicht", "mehr"),
                 ("nichts", "mehr"), ("kein", "mehr"), ("keine", "mehr"), ("keinen", "mehr"), ("nie", "mehr"),
                 ("nicht", "weniger"), ("ein", "wenig"), ("des", "besten"), ("nur", "wenige"), ("nur", "wenigen")]


def tokens(sentence: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]


def _sentence_initial(toks, i: int) -> bool:
    return all(not t[0][0].isalnum() for t in toks[:i])


def _noun_phrase_end(toks, i: int) -> Optional[int]:
    """Index of the noun closing an article's phrase starting after position i: lower-case
    adjectives (-e/-en/-er/-es/-em), then a capitalised word; None when no such phrase follows."""
    j = i + 1
    while j < len(toks) and toks[j][0].islower() and toks[j][0].isalpha() and toks[j][0] not in FUNCTION_WORDS \
            and toks[j][0].endswith(ENDINGS[1:]) and len(toks[j][0]) > 3:
        j += 1
    if j < len(toks) and toks[j][0][:1].isupper() and toks[j][0].isalpha():
        return j
    return None


def _nicht_removals(sentence: str, toks, words: list[str]) -> list[tuple[int, str]]:
    out = []
    if "sondern" in words:
        return out
    for i, (w, s, e) in enumerate(toks):
        if w != "nicht" or i == 0 or words[i - 1] in NICHT_PREV_BLOCK:
            continue
        if i + 1 < len(toks) and words[i + 1] in NICHT_NEXT_BLOCK:
            continue
        j = i + 1
        while j < len(toks) and j <= i + 2 and toks[j][0].isalpha() and toks[j][0].islower():
            j += 1
        if j < len(toks) and toks[j][0] not in _BOUNDARY:
            continue
        out.append((i, apply(sentence, [Edit(toks[i - 1][2], e, "")])))
    return out


def _article_edits(sentence: str, toks, words: list[str]) -> list[tuple[int, str]]:
    out = []
    negative = any(w in NEGATIVE for w in words)
    for i, (w, s, e) in enumerate(toks):
        low = words[i]
        if not (w.islower() or (w[1:].islower() and _sentence_initial(toks, i))):
            continue
        if low in ("keinem", "keines", "keiner"):
            new = low[1:]
        elif low in ("ein", "eine", "einen", "einem", "einer") and not negative:
            if i and (words[i - 1] in EIN_PREV_BLOCK or (low == "einer" and toks[i - 1][0][:1].isupper())):
                continue
            new = "k" + low
        else:
            continue
        noun = _noun_phrase_end(toks, i)
        if noun is None or toks[noun][0] in QUANTITY_NOUNS:
            continue
        out.append((i, apply(sentence, [Edit(s, e, match_case(new, w))])))
    return out


def _middle_field_ok(toks, start: int, end: int) -> bool:
    """Every word in toks[start:end] is a pronoun, a time adverb, or part of a definite noun phrase."""
    definite = False
    for w, _, _ in toks[start:end]:
        low = w.lower()
        if low in DEFINITE:
            definite = True
        elif w[:1].isupper() and w.isalpha() and definite:
            definite = False  # the noun closes its phrase
        elif w.islower() and definite and w.endswith(ENDINGS[1:]):
            continue  # an adjective inside the phrase
        elif low not in PRONOUNS and low not in TIME_ADVERBS:
            return False
    return not definite


def _nicht_addition(sentence: str, toks, words: list[str]) -> list[tuple[int, str]]:
    if len(toks) < 4 or toks[-1][0] != "." or any(w in _BOUNDARY for w, _, _ in toks[:-1]):
        return []
    if any(w in NEGATIVE or w in NICHT_ADD_BLOCK for w in words):
        return []
    aux = [i for i, w in enumerate(words) if w in AUXILIARIES]
    last = len(toks) - 2
    final = toks[last][0]
    if len(aux) != 1 or aux[0] >= last or not (final.isalpha() and final.islower()):
        return []
    a = words[aux[0]]
    if not (_PARTICIPLE.match(final) or _INFINITIVE.match(final) or (a in SEIN and final not in PRONOUNS)):
        return []
    if not _middle_field_ok(toks, aux[0] + 1, last):
        return []
    s = toks[last][1]
    return [(last, apply(sentence, [Edit(s, s, "nicht ")]))]


def _antonym_variants(sentence: str, toks, words: list[str]) -> list[str]:
    out = []
    for i, (w, s, e) in enumerate(toks):
        initial = _sentence_initial(toks, i)
        if not (w.islower() or (initial and w[1:].islower() and i + 1 < len(toks) and toks[i + 1][0][:1].isupper())):
            continue
        if "-" in w or in_fixed_phrase(words, i, FIXED_PHRASES):
            continue
        new = ADJECTIVES.lookup(words[i]) or WORDS.lookup(words[i])
        if new:
            out.append(apply(sentence, [Edit(s, e, match_case(new, w))]))
    return out


class GermanRules:
    """Curated German causality rules (see the module docstring)."""

    lang = LANG
    version = VERSION

    def variants(self, sentence: str) -> list[tuple[str, str]]:
        toks = tokens(sentence)
        words = [t[0].lower() for t in toks]
        negations = sorted(_nicht_removals(sentence, toks, words) + _article_edits(sentence, toks, words)
                           + _nicht_addition(sentence, toks, words))
        return finish(sentence, [(v, "negation") for _, v in negations]
                      + [(v, "antonym") for v in _antonym_variants(sentence, toks, words)])
