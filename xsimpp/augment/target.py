"""xsim++ hard negatives for a non-English target language (issue 25), made through FLORES's
multi-way alignment: the English line of the same id is analysed once (the English strict
recognisers) and what it finds is carried over to the target line.

* number: the target's numerals whose value an English strict number slot states
  (``xsimpp.augment.numerals``), in any digit script, and num2words' number words where it covers
  the language;
* entity: the English strict names (``entity.strict_mentions``) that appear verbatim in the target
  line (Latin-script targets mostly; no transliteration), replaced by names of the same group from
  a target-side pool built the same way (``target_pool``). Two rules keep the swap fluent in any
  language without per-language lists (generator "xlang-2"):

  - context match: the pool records, for every target-side occurrence of a name, its left context
    (``left_context``: the previous token lower-cased, an elided or hyphen-joined form such as
    "l'", "d'", "e-" kept as one token, ' and ’ read alike, "<s>" at the start of the line). A
    mention may only be replaced by a name of its group seen in the pool corpora after the same
    token (after every token its mentions in the sentence have), so "en Iran" takes only names seen
    after "en", "l’Europe" only names seen after "l'", German "im" / "nach" / "(in) der" only names
    seen there. No such name: no variant for that mention.
  - stand-alone names only (``stand_alone``): a name with another capitalised word right beside it
    (one space between) is part of a longer name ("Garuda Indonesia", "Bank Indonesia") and is
    neither a pool occurrence nor a mention;
* causality: only where curated rules exist for the language (``xsimpp.augment.causality_rules``);
  elsewhere the category is absent, never guessed.

Only the strict style: the paper's method is defined on English. The English target keeps its own
generator (``core.build_augmented``); the files, errtype map and sidecar have the same layout.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Collection, Iterable, Mapping, Optional, Sequence

from ..datasets.base import TARGET_GENERATOR
from ..errors import BadInputError
from .core import (CATEGORIES, DEFAULT_MAX_PER_CATEGORY, DEFAULT_SWAPS_PER_ENTITY, DEFAULT_VALUES_PER_NUMBER,
                   STRICT_MIN_COUNT, AugmentedSet, _check_sentences, _rng, load_entity_pool)
from . import resources
from .edits import apply_edits
from .entity import STRICT_GROUP_OF, EntityPool, Mention, plausible, strict_entity_variants, strict_mentions
from .number import Slot, number_slots
from .spans import is_sentence_initial
from .numerals import NUM2WORDS, english_values, numeral_variants, target_numerals
from .pool import PoolEntry

GENERATOR = TARGET_GENERATOR  # bumped (in datasets.base) when the target generator's output changes
ENGLISH = "eng_Latn"
_WORD = re.compile(r"\w+")


@dataclass
class EnglishAnalysis:
    """What the English strict recognisers found in each English line: names (text, group) and
    number values (value key -> slot); shared by every target language of the same English text."""

    names: list[list[tuple[str, str]]]
    numbers: list[dict[str, Slot]]
    info: dict


def analyse_english(english: Sequence[str], exclude_sources: Iterable[str] = (), progress: bool = False,
                    categories: Iterable[str] = CATEGORIES) -> EnglishAnalysis:
    """Run the English strict number and entity recognisers over `english` (the evaluated split's
    English), with the shipped pool less the entries seen only in `exclude_sources`, as English does."""
    from tqdm import tqdm

    cats = set(categories)
    nlp, model = resources.load_spacy()
    pool = None
    info: dict = {"spacy_model": model}
    if "entity" in cats:
        entries, pool_info = load_entity_pool(exclude_sources=exclude_sources, nlp=nlp)
        pool = EntityPool([(STRICT_GROUP_OF[e.label], e.text, e.takes_the) for e in strict_entries(entries)])
        info["english_pool"] = {**pool_info, "used": len(pool)}
    names: list[list[tuple[str, str]]] = []
    numbers: list[dict[str, Slot]] = []
    docs = nlp.pipe(english, batch_size=64)
    for doc in tqdm(docs, total=len(english), desc="analysing English", unit="sent", disable=not progress):
        found = strict_mentions(doc, pool) if pool is not None else []
        names.append(list(dict.fromkeys((doc.text[m.start:m.end], m.label) for m in found)))
        numbers.append(english_values(doc.text, number_slots(doc, strict=True)) if "number" in cats else {})
    return EnglishAnalysis(names, numbers, info)


def strict_entries(entries: Iterable[PoolEntry]) -> list[PoolEntry]:
    """The pool entries the strict style draws from: spaCy names of a strict group seen twice."""
    return [e for e in entries if e.recogniser == "spacy" and e.label in STRICT_GROUP_OF
            and e.count >= STRICT_MIN_COUNT and plausible(STRICT_GROUP_OF[e.label], e.text)]


def _word_char(c: str) -> bool:
    """A character that would make a Latin name part of a longer word (letters of other scripts
    do not: a Latin name inside Chinese or Arabic text still stands alone)."""
    return c.isdigit() or c in "-–/_" or (c.isalpha() and "LATIN" in unicodedata.name(c, ""))


# A short prefix and a hyphen before a name: Zulu/Xhosa noun classes ("e-Paris", "U-Obama", "kwa-").
_CLASS_PREFIX = re.compile(r"(?:^|[^\w-])[^\W\d_][a-z]{0,3}[-–]$")


def occurrences(text: str, name: str) -> list[tuple[int, int]]:
    """Where `name` stands verbatim and whole in `text` ("Paris" not in "Paris-Saclay"); a
    lowercase prefix and hyphen before it is a noun-class prefix, not a longer name ("e-Paris")."""
    out, i = [], text.find(name)
    while i >= 0:
        j = i + len(name)
        prefixed = i > 1 and text[i - 1] in "-–" and _CLASS_PREFIX.search(text[max(0, i - 12):i]) is not None
        if not (i > 0 and _word_char(text[i - 1]) and not prefixed) and not (j < len(text) and _word_char(text[j])):
            out.append((i, j))
        i = text.find(name, i + 1)
    return out


# The token before a name: a word with the apostrophe or hyphen that joins it to the name ("l’",
# "d'", "qu’", "e-"), a word, or one punctuation mark; spaces between it and the name do not count.
_LEFT = re.compile(r"(?:(?<!\w)\w+[’'\-–]?|[^\w\s])\s*$")
_NORMALISE = str.maketrans("’–", "'-")
LINE_START = "<s>"


def left_context(text: str, start: int) -> str:
    """The left context of the name at `start`: the previous token lower-cased ("La France" ->
    "la", "l’Europe" -> "l'", "près du Rwanda" -> "du"), ’ read as ' and – as - (for matching
    only: a variant keeps the sentence's own characters); LINE_START at the start of the line."""
    m = _LEFT.search(text, 0, start)
    return m.group().rstrip().lower().translate(_NORMALISE) if m else LINE_START


_WORD_BEFORE = re.compile(r"(?<!\w)\w[\w.]*\s$")  # after an elision or a bracket: "d’Ilha", "(Garuda"
_WORD_AFTER = re.compile(r"\s\w")
_ABBREVIATION = re.compile(r"(?:[^\W\d_]{1,2}\.)+")  # "M.", "Dr.", "F.", "U.S."


def stand_alone(text: str, start: int, end: int) -> bool:
    """Whether the name at text[start:end] stands alone: no capitalised word right beside it, one
    space between ("Garuda Indonesia", "Bank Indonesia", "Indonesia Airlines" hold no stand-alone
    "Indonesia"). Hyphen-joined words are ``occurrences``' business (a capitalised class prefix,
    Zulu "U-Obama", is no longer name).

    Decided here: a capitalised word that opens the sentence (``spans.is_sentence_initial``: the
    line start, after . ! ? : ; a quote or a bracket) does not count ("En Iran", "Depuis Paris": the
    capital is the sentence's), so "Garuda Indonesia" at the start of a sentence or in brackets, and
    "Dr Smith" opening a line, slip through -- rare, and the context match still applies. Titles
    and initials count as capitalised words ("M. Macron", "Präsident Obama", "John F. Kennedy"; one
    or two letters and a full stop are a title or an initial even at a sentence start, while a
    longer word with a full stop ends a sentence: "au Japon. Obama"), so the name beside them is
    left alone: a title often carries gender (M. / Mme, Herr / Frau), and a list of titles per
    language is what this generator does without. German, which capitalises every noun, loses
    names beside nouns ("Hauptstadt Berlin"): fewer negatives, none wrong. Scripts without case are
    never affected."""
    m = _WORD_BEFORE.search(text, 0, start)
    if m:
        word = m.group().rstrip()
        if _ABBREVIATION.fullmatch(word):
            if word[0].isupper():
                return False  # a title or an initial, even at the start of a sentence
        elif word[0].isupper() and word[-1] != "." and not is_sentence_initial(text, m.start()):
            return False  # a word with a full stop of its own ends a sentence: "au Japon. Obama"
    m = _WORD_AFTER.match(text, end)
    return not (m and m.group()[-1].isupper())


def projected_mentions(names: Sequence[tuple[str, str]], target: str) -> list[Mention]:
    """The English names (text, group) found verbatim and stand-alone (``stand_alone``) in the
    target line, every occurrence; a name inside a longer projected name is left to the longer one."""
    out: list[Mention] = []
    for text, group in sorted(names, key=lambda n: -len(n[0])):
        for s, e in occurrences(target, text):
            if stand_alone(target, s, e) and not any(m.start < e and s < m.end for m in out):
                out.append(Mention(s, e, group))
    return sorted(out)


def target_pool(entries: Iterable[PoolEntry], corpora: Mapping[str, tuple[Sequence[str], Sequence[str]]]
                ) -> tuple[list[tuple[str, str, bool, tuple[str, ...]]], dict]:
    """The target-side names: the strict pool entries (``strict_entries``) of each corpus
    (source tag -> aligned English and target lines) that stand verbatim in both the English and
    the target line of one id, stand-alone in the target line (``stand_alone``). Pass only corpora
    other than the evaluated split (as the English pool leaves it out). Returns (group, name,
    False, left contexts) items -- the sorted ``left_context`` tokens of the name's target-side
    occurrences; ``EntityPool`` reads the first three -- and a description."""
    by_first: dict[str, dict[str, list[PoolEntry]]] = {}
    for e in strict_entries(entries):
        first = _WORD.match(e.text)
        if first:
            for src in e.sources:
                by_first.setdefault(src, {}).setdefault(first.group(), []).append(e)
    contexts: dict[tuple[str, str], set[str]] = {}
    for src, (english, target) in corpora.items():
        if len(english) != len(target):
            raise BadInputError(f"{src}: {len(english)} English lines but {len(target)} target lines; "
                                "the corpora must be line-aligned")
        index = by_first.get(src, {})
        for en, tl in zip(english, target):
            for m in _WORD.finditer(en):
                for e in index.get(m.group(), ()):
                    if en.startswith(e.text, m.start()) and occurrences(en, e.text):
                        left = {left_context(tl, s) for s, end in occurrences(tl, e.text) if stand_alone(tl, s, end)}
                        if left:
                            contexts.setdefault((STRICT_GROUP_OF[e.label], e.text), set()).update(left)
    items = sorted((group, text, False, tuple(sorted(left))) for (group, text), left in contexts.items())
    return items, {"files": sorted(corpora), "projected": "shipped pool names standing verbatim in the English "
                   "and stand-alone in the target line of one id, with the left context of each target-side "
                   "occurrence", "entries": len(items), "contexts": sum(len(i[3]) for i in items)}


def context_index(items: Iterable[tuple]) -> dict[tuple[str, str], frozenset]:
    """(group, left context) -> the pool names seen there, from ``target_pool``'s items (an item
    without contexts is seen nowhere); names spelt as ``EntityPool`` keeps them."""
    index: dict[tuple[str, str], set[str]] = {}
    for item in items:
        for ctx in (item[3] if len(item) > 3 else ()):
            index.setdefault((item[0], ctx), set()).add(" ".join(item[1].split()))
    return {k: frozenset(v) for k, v in index.items()}


def context_matched(sentence: str, index: Mapping[tuple[str, str], Collection[str]]):
    """For ``strict_entity_variants``: the pool names of a group seen after the left context of
    every given mention of `sentence` (empty when any context is unseen)."""
    def allowed(label: str, mentions: Sequence[Mention]) -> frozenset:
        seen = [frozenset(index.get((label, left_context(sentence, m.start)), ())) for m in mentions]
        return frozenset.intersection(*seen) if seen else frozenset()
    return allowed


def causality_rules(lang: str):
    """The curated causality rules of `lang` (``xsimpp.augment.causality_rules``), or None."""
    from .causality_rules import RULES_VERSION, rules_for

    rules = rules_for(lang)
    return (rules, RULES_VERSION) if rules is not None else (None, None)


def build_target_augmented(
    target: Sequence[str],
    english: EnglishAnalysis,
    lang: str,
    *,
    seed: int = 0,
    categories: Optional[Iterable[str]] = None,
    max_per_category: int = DEFAULT_MAX_PER_CATEGORY,
    pool_items: Sequence[tuple] = (),
    pool_info: Optional[dict] = None,
    values_per_number: int = DEFAULT_VALUES_PER_NUMBER,
    swaps_per_entity: int = DEFAULT_SWAPS_PER_ENTITY,
) -> AugmentedSet:
    """Strict hard negatives for the target sentences `target` of language `lang`, line-aligned
    with the English lines `english` was made from. `categories` (default: every one the language
    has) may not ask for causality where no curated rules exist. Output order and de-duplication
    as ``core.build_augmented``; variants are written without outer whitespace."""
    if lang == ENGLISH:
        raise BadInputError("English targets are built by xsimpp.augment.build_augmented")
    target = list(target)
    _check_sentences(target)
    if len(target) != len(english.numbers):
        raise BadInputError(f"{len(target)} {lang} lines but {len(english.numbers)} English lines; "
                            "the target must be line-aligned with its English")
    if max_per_category < 1 or values_per_number < 1 or swaps_per_entity < 1:
        raise BadInputError("max_per_category, values_per_number and swaps_per_entity must be at least 1")
    asked = list(CATEGORIES if categories is None else categories)
    unknown = set(asked) - set(CATEGORIES)
    if unknown or not asked:
        raise BadInputError(f"unknown or empty categories {sorted(unknown)}; choose from {', '.join(CATEGORIES)}")
    rules, rules_version = causality_rules(lang) if "causality" in asked else (None, None)
    if rules is None and "causality" in asked and categories is not None:
        raise BadInputError(f"there are no curated causality rules for {lang}; leave causality out of --categories")
    cats = [c for c in CATEGORIES if c in asked and (c != "causality" or rules is not None)]
    words = NUM2WORDS.get(lang)
    info: dict = {"lang": lang, "generator": GENERATOR, "style": "strict", "categories": cats, "seed": seed,
                  "max_per_category": max_per_category, "spacy_model": english.info["spacy_model"]}
    if "causality" not in cats:
        info["absent"] = ("causality (no curated rules for " + lang + ")" if "causality" in asked
                          else "causality (not asked for)")
    if rules is not None:
        info["causality_rules"] = rules_version
    if "number" in cats:
        info["number_words"] = (f"num2words '{words}' (2-99)" if words else
                                "none: num2words does not cover this language (digits only)")
        info["values_per_number"] = values_per_number
    pool = None
    if "entity" in cats:
        pool = EntityPool(pool_items)
        contexts = context_index(pool_items)
        info["entity_projection"] = ("English strict names (spaCy, typed) standing verbatim and stand-alone in the "
                                     "target line; no transliteration; swaps context-matched: a name is replaced only "
                                     "by pool names seen after the same previous token")
        info["swaps_per_entity"] = swaps_per_entity
        info["entity_pool"] = {**(pool_info or {}), "used": len(pool)}
        info["english_pool"] = english.info.get("english_pool")

    # Compared and written without outer whitespace: LASER looks a variant up by its stripped line,
    # and FLORES lines may end in a no-break space.
    originals = {t.strip() for t in target}
    emitted: set[str] = set()
    subtypes: Counter = Counter()
    aug = AugmentedSet(n_originals=len(target), info=info)
    for i, sent in enumerate(target):
        for cat in cats:
            rng = _rng(seed, cat, sent)
            if cat == "causality":
                found = rules.variants(sent)
                if len(found) > max_per_category:
                    found = [found[j] for j in sorted(rng.sample(range(len(found)), max_per_category))]
                candidates = list(found)
            elif cat == "number":
                nums = target_numerals(sent, lang, english.numbers[i])
                candidates = [(apply_edits(sent, e, fix_articles=False), None)
                              for e in numeral_variants(nums, lang, rng, values_per_number)]
            else:
                mentions = projected_mentions(english.names[i], sent)
                candidates = [(apply_edits(sent, e, fix_articles=False), None)
                              for e in strict_entity_variants(sent, mentions, pool, rng, swaps_per_entity,
                                                              allowed=context_matched(sent, contexts))]
            n = 0
            for v, sub in candidates:
                if n >= max_per_category:
                    break
                v = v.strip()
                if v in originals or v in emitted or not v or "\n" in v or "\r" in v:
                    continue
                emitted.add(v)
                aug.variants.append(v)
                aug.src.append(sent)
                aug.errtype.append(cat)
                if sub is not None:
                    subtypes[sub] += 1
                n += 1
    if rules is not None:
        info["causality_subtypes"] = dict(sorted(subtypes.items()))
    return aug
