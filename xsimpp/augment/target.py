"""xsim++ hard negatives for a non-English target language (issue 25), made through FLORES's
multi-way alignment: the English line of the same id is analysed once (the English strict
recognisers) and what it finds is carried over to the target line.

* number: the target's numerals whose value an English strict number slot states
  (``xsimpp.augment.numerals``), in any digit script, and num2words' number words where it covers
  the language;
* entity: the English strict names (``entity.strict_mentions``) that appear verbatim in the target
  line (Latin-script targets mostly; no transliteration), replaced by names of the same group from
  a target-side pool built the same way (``target_pool``);
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
from typing import Iterable, Mapping, Optional, Sequence

from ..errors import BadInputError
from .core import (CATEGORIES, DEFAULT_MAX_PER_CATEGORY, DEFAULT_SWAPS_PER_ENTITY, DEFAULT_VALUES_PER_NUMBER,
                   STRICT_MIN_COUNT, AugmentedSet, _check_sentences, _rng, load_entity_pool)
from . import resources
from .edits import apply_edits
from .entity import STRICT_GROUP_OF, EntityPool, Mention, plausible, strict_entity_variants, strict_mentions
from .number import Slot, number_slots
from .numerals import NUM2WORDS, english_values, numeral_variants, target_numerals
from .pool import PoolEntry

GENERATOR = "xlang-1"  # bump when the target generator's output changes
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


def projected_mentions(names: Sequence[tuple[str, str]], target: str) -> list[Mention]:
    """The English names (text, group) found verbatim in the target line, every occurrence; a
    name inside a longer projected name is left to the longer one."""
    out: list[Mention] = []
    for text, group in sorted(names, key=lambda n: -len(n[0])):
        for s, e in occurrences(target, text):
            if not any(m.start < e and s < m.end for m in out):
                out.append(Mention(s, e, group))
    return sorted(out)


def target_pool(entries: Iterable[PoolEntry], corpora: Mapping[str, tuple[Sequence[str], Sequence[str]]]
                ) -> tuple[list[tuple[str, str, bool]], dict]:
    """The target-side names: the strict pool entries (``strict_entries``) of each corpus
    (source tag -> aligned English and target lines) that stand verbatim in both the English and
    the target line of one id. Pass only corpora other than the evaluated split (as the English
    pool leaves it out). Returns (group, name, False) items for ``EntityPool`` and a description."""
    by_first: dict[str, dict[str, list[PoolEntry]]] = {}
    for e in strict_entries(entries):
        first = _WORD.match(e.text)
        if first:
            for src in e.sources:
                by_first.setdefault(src, {}).setdefault(first.group(), []).append(e)
    counts: Counter = Counter()
    for src, (english, target) in corpora.items():
        if len(english) != len(target):
            raise BadInputError(f"{src}: {len(english)} English lines but {len(target)} target lines; "
                                "the corpora must be line-aligned")
        index = by_first.get(src, {})
        for en, tl in zip(english, target):
            for m in _WORD.finditer(en):
                for e in index.get(m.group(), ()):
                    if en.startswith(e.text, m.start()) and occurrences(en, e.text) and occurrences(tl, e.text):
                        counts[(STRICT_GROUP_OF[e.label], e.text)] += 1
    items = sorted((group, text, False) for group, text in counts)
    return items, {"files": sorted(corpora), "projected": "shipped pool names standing verbatim in the English "
                   "and the target line of one id", "entries": len(items)}


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
    pool_items: Sequence[tuple[str, str, bool]] = (),
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
        info["entity_projection"] = ("English strict names (spaCy, typed) standing verbatim in the target line; "
                                     "no transliteration")
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
                              for e in strict_entity_variants(sent, mentions, pool, rng, swaps_per_entity)]
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

