"""Number perturbations for a non-English target (issue 25): numerals of the target sentence whose
value the aligned English sentence states as a number the English strict generator would change.

A numeral is a run of Unicode decimal digits of one script (``unicodedata.decimal``: Latin,
Devanagari, Arabic-Indic, Bengali...) with its grouping marks ("1.500", "1 500", "٣٫٥", "10:30"),
or, where num2words covers the language (``NUM2WORDS``), one of its number words for 2-99 as
num2words writes them. The English sentence of the same FLORES id says which numerals count: a
target numeral changes only when its value is the value of one of the English sentence's strict
number slots (``xsimpp.augment.number``), which leaves numbers inside names ("Formula 1"),
idioms and ranges alone, as the English generator does, and keeps French "neuf" (new) or a
stray "to" from being taken for a number. The English slot also says what the number is: a year
moves by up to 30 (a decade by tens), a day of the month stays 1-28, a time stays a time, a
percentage stays within 100. Every new value is written in the original digits' script with the
original's grouping and width; a one-digit count never becomes 0 or 1 (singular agreement is not
known here), and 0 and 1 are never changed (they are articles and pronouns as often as counts).
"""

from __future__ import annotations

import functools
import random
import re
import unicodedata
from typing import NamedTuple, Optional

from .edits import Edit
from .lexicon import match_case
from .number import WORD_FAMILIES, Slot

# FLORES-200 code -> num2words language, checked by hand: the words num2words writes are in the
# FLORES script. Left out: srp_Cyrl (num2words writes Serbian in Latin), jpn_Jpan and tha_Thai
# (no spaces between words: a number word cannot be told from part of a longer word), kor_Hang
# (one-syllable Sino-Korean numerals).
NUM2WORDS = {
    "amh_Ethi": "am", "arb_Arab": "ar", "azj_Latn": "az", "bel_Cyrl": "be", "ben_Beng": "bn", "cat_Latn": "ca",
    "ces_Latn": "cs", "cym_Latn": "cy", "dan_Latn": "da", "deu_Latn": "de", "epo_Latn": "eo", "fin_Latn": "fi",
    "fra_Latn": "fr", "heb_Hebr": "he", "hun_Latn": "hu", "ind_Latn": "id", "isl_Latn": "is", "ita_Latn": "it",
    "kan_Knda": "kn", "kaz_Cyrl": "kz", "lit_Latn": "lt", "lvs_Latn": "lv", "nld_Latn": "nl", "nob_Latn": "no",
    "pes_Arab": "fa", "pol_Latn": "pl", "por_Latn": "pt", "prs_Arab": "fa", "ron_Latn": "ro", "rus_Cyrl": "ru",
    "slk_Latn": "sk", "slv_Latn": "sl", "spa_Latn": "es", "swe_Latn": "sv", "tel_Telu": "te", "tgk_Cyrl": "tg",
    "tur_Latn": "tr", "ukr_Cyrl": "uk", "vie_Latn": "vi",
}
WORD_VALUES = range(2, 100)  # 0 and 1 are articles and pronouns as often as counts; scale words need a number

_NUMERAL = re.compile(
    r"(?P<time>(?<!\d)\d{1,2}:\d{2}(?!\d))"
    r"|(?P<spaced>(?<!\d)\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d))"  # "1 500", "12 000 000"
    r"|(?P<num>\d+(?:[.,'’\u066b\u066c]\d+)*)"
)
# English cardinal words -> value: one..nine, ten..nineteen, twenty..ninety.
_ENGLISH_WORDS = {w: (i + 1, 10 + i, 20 + 10 * i)[f] for f, fam in enumerate(WORD_FAMILIES[:3]) for i, w in enumerate(fam)}


class Numeral(NamedTuple):
    start: int
    end: int
    text: str
    kind: str  # digits, time, word
    slot: Slot  # the English slot of the same value: what the number is (year, day, percent...)


def ascii_digits(text: str) -> str:
    """The digits of `text` as ASCII, other characters dropped ("١٬٥٠٠" -> "1500")."""
    return "".join(str(unicodedata.decimal(c)) for c in text if unicodedata.decimal(c, None) is not None)


def value_key(text: str) -> str:
    """What two numerals share when they say the same number: their digits, no leading zeros."""
    return ascii_digits(text).lstrip("0") or "0"


def english_values(text: str, slots: list[Slot]) -> dict[str, Slot]:
    """Value key -> the English strict slot stating it (digits or a number word; "twenty-five" as
    25). Range slots are left out: their ends change together, which a target numeral alone cannot."""
    out: dict[str, Slot] = {}
    prev = None
    for sl in slots:
        if sl.kind == "range":
            prev = None
            continue
        if sl.kind == "word":
            n = _ENGLISH_WORDS.get(sl.text.lower())
            if n is None:
                prev = None
                continue
            if prev is not None and prev.kind == "word" and re.fullmatch(r"[- ]", text[prev.end : sl.start]) \
                    and _ENGLISH_WORDS.get(prev.text.lower(), 0) >= 20 and n < 10:
                out.setdefault(str(_ENGLISH_WORDS[prev.text.lower()] + n), sl._replace(start=prev.start))
            out.setdefault(str(n), sl)
        else:
            out.setdefault(value_key(sl.text), sl)
        prev = sl
    return out


@functools.lru_cache(maxsize=None)
def number_words(lang: str) -> tuple[dict[str, int], Optional[re.Pattern]]:
    """num2words' words for 2-99 in `lang` (lower case -> value) and a pattern finding them as
    whole words; ({}, None) where num2words does not cover the language."""
    code = NUM2WORDS.get(lang)
    if code is None:
        return {}, None
    from num2words import num2words

    words: dict[str, int] = {}
    for n in WORD_VALUES:
        words.setdefault(fold(num2words(n, lang=code)), n)
    alts = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return words, re.compile(rf"(?<![\w-])(?:{alts})(?![\w-])", re.IGNORECASE)


def fold(word: str) -> str:
    """A number word's lookup form: lower case, without the dot Turkish "İ" keeps when lowered."""
    return word.lower().replace("\u0307", "")


def _script_zero(text: str) -> Optional[int]:
    """The code point of zero in the digits' script, or None when the digits mix scripts."""
    zeros = {ord(c) - unicodedata.decimal(c) for c in text if unicodedata.decimal(c, None) is not None}
    return zeros.pop() if len(zeros) == 1 else None


def _in_name(text: str, start: int, end: int) -> bool:
    """Digits glued to a word: "COVID-19", "F-16", "G7", "5G", "A4" -- but not to a lowercase
    prefix before a hyphen, the noun-class prefix of Bantu languages (Zulu "ngo-2019")."""
    before, after = text[start - 1 : start], text[end : end + 1]
    prefix = re.search(r"([^\W\d_]+)[-–]$", text[:start])
    if before.isalpha() or (prefix is not None and prefix.group(1)[0].isupper()):
        return True
    return after.isalpha() and after.isupper()


def target_numerals(text: str, lang: str, english: dict[str, Slot]) -> list[Numeral]:
    """The numerals of a target sentence that change: those whose value an English slot states."""
    out = []
    for m in _NUMERAL.finditer(text):
        s, e, g = m.start(), m.end(), m.group()
        if _script_zero(g) is None or _in_name(text, s, e):
            continue
        key = value_key(g)
        slot = english.get(key)
        if slot is None or (len(key) == 1 and key in "01"):
            continue
        if m.group("time") and slot.kind != "time":
            continue
        out.append(Numeral(s, e, g, "time" if m.group("time") else "digits", slot))
    words, pattern = number_words(lang)
    if pattern is not None:
        taken = [(n.start, n.end) for n in out]
        for m in pattern.finditer(text):
            slot = english.get(str(words[fold(m.group())]))
            if slot is not None and not any(a < m.end() and m.start() < b for a, b in taken):
                out.append(Numeral(m.start(), m.end(), m.group(), "word", slot))
    return sorted(out)


def _digits(old: str, new: str, zero: int) -> str:
    """`new` (ASCII digits, one per digit of `old`) written in `old`'s script and grouping."""
    it = iter(new)
    return "".join(chr(zero + int(next(it))) if unicodedata.decimal(c, None) is not None else c for c in old)


def _same_shape(old: str, rng: random.Random, percent: bool) -> str:
    """New ASCII digits for `old`: as many as it has (a percentage of 100 gets two, staying within
    100); a leading zero kept where it starts a one-digit group ("0,5"), else a non-zero lead; a
    lone digit never becomes 0 or 1."""
    digits = ascii_digits(old)
    if len(digits) == 1:
        return str(rng.randint(2, 9))
    if percent and digits == "100":
        return str(rng.randint(10, 99))
    first_group = len(re.match(r"\d+", old).group())
    lead = ("0" if first_group == 1 else str(rng.randint(0, 9))) if digits[0] == "0" else str(rng.randint(1, 9))
    return lead + "".join(str(rng.randint(0, 9)) for _ in digits[1:])


def _render(old: str, new: str) -> str:
    """ASCII digits `new` in the script of `old`, in its grouping when the counts agree."""
    zero = _script_zero(old)
    if len(new) != len(ascii_digits(old)):
        return "".join(chr(zero + int(d)) for d in new)
    it = iter(new)
    return "".join(chr(zero + int(next(it))) if unicodedata.decimal(c, None) is not None else c for c in old)


def _word_value(n: int, rng: random.Random) -> int:
    """Another number in n's band: 2-9, 10-19, round tens, or tens with units."""
    if n < 10:
        band = range(2, 10)
    elif n < 20:
        band = range(10, 20)
    elif n % 10 == 0:
        band = range(20, 100, 10)
    else:
        band = [v for v in range(21, 100) if v % 10]
    return rng.choice([v for v in band if v != n])


def new_value(num: Numeral, lang: str, rng: random.Random) -> str:
    """A different value for a numeral, of the kind its English slot says, written as it is."""
    slot, old = num.slot, num.text
    if num.kind == "word":
        from num2words import num2words

        words, _ = number_words(lang)
        return match_case(num2words(_word_value(words[fold(old)], rng), lang=NUM2WORDS[lang]), old)
    if num.kind == "time":
        hour, minute = old.split(":")
        h = rng.randint(1, 12) if slot.context[:1] == (True,) else rng.randint(0, 23)
        return _render(hour, f"{h:02d}" if len(hour) == 2 else str(h)) + ":" + _render(minute, f"{rng.randint(0, 59):02d}")
    digits = ascii_digits(old)
    if slot.kind in ("year", "decade") and len(digits) == 4 and old.isdigit():
        step = 10 if slot.kind == "decade" or slot.context[:1] == (True,) else 1
        return _render(old, str(int(digits) + rng.choice([d for d in range(-30, 31, step) if d])))
    if slot.kind == "clock" and len(digits) == 4:  # "1200 GMT" -> another valid HHMM
        return _render(old, f"{rng.randint(0, 23):02d}{rng.randrange(0, 60, 5):02d}")
    if slot.kind == "day" and len(digits) <= 2:
        # the same width: "5" -> 2-9, "05" -> 01-28, "15" -> 10-28 (a day every month has)
        day = rng.randint(2, 9) if len(digits) == 1 else rng.randint(1 if digits[0] == "0" else 10, 28)
        return _render(old, f"{day:0{len(digits)}d}")
    percent = slot.kind == "number" and slot.context[:1] == (True,)
    return _render(old, _same_shape(old, rng, percent))


def numeral_variants(numerals: list[Numeral], lang: str, rng: random.Random, per_numeral: int) -> list[list[Edit]]:
    """Up to `per_numeral` new values per numeral, one changed numeral per variant, interleaved
    across numerals so a cap keeps every numeral represented."""
    per = []
    for num in numerals:
        seen, values = {value_key(num.text) if num.kind != "word" else fold(num.text)}, []
        for _ in range(8 * per_numeral):
            if len(values) == per_numeral:
                break
            v = new_value(num, lang, rng)
            key = value_key(v) if num.kind != "word" else fold(v)
            if key not in seen:
                seen.add(key)
                values.append([Edit(num.start, num.end, v)])
        per.append(values)
    out = []
    for r in range(max((len(p) for p in per), default=0)):
        out.extend(p[r] for p in per if r < len(p))
    return out
