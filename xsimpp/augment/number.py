"""Number perturbations: new values for the numbers inside spaCy's numeric entities.

A numeric entity ("3 May 2021", "88%", "$1,500.25", "the first", "10:30 p.m.") is split into
slots (day, month, year, digits, time, ordinal, number word, weekday). A variant changes one slot
to a value that is different from the old one and keeps its shape: same digit count, same thousands
separators and decimals, a valid day for the month, a correct ordinal suffix ("22nd"), the same
capitalisation. Changing one slot per variant keeps each variant one fact away from the truth.
"""

from __future__ import annotations

import calendar
import random
import re
from typing import NamedTuple, Optional

from .edits import Edit
from .lexicon import match_case

NUMERIC_LABELS = ("DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL")

MONTHS = [calendar.month_name[i] for i in range(1, 13)]
WEEKDAYS = [calendar.day_name[i] for i in range(7)]
# Number words are swapped within their family so that compounds stay well-formed:
# "twenty-five" -> "thirty-five" or "twenty-eight", never "twenty-twelve".
WORD_FAMILIES = [
    ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"],
    ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"],
    ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"],
    ["hundred", "thousand", "million", "billion", "trillion"],
    ["hundreds", "thousands", "millions", "billions", "trillions"],
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"],
    ["tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
     "eighteenth", "nineteenth"],
    ["twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth"],
    ["dozen", "score"],
]
_FAMILY_OF = {}
for _fam in WORD_FAMILIES:
    for _w in _fam:
        _FAMILY_OF.setdefault(_w, _fam)
_MONTH_IDX = {m.lower(): i for i, m in enumerate(MONTHS)}
_WEEKDAY_IDX = {d.lower(): i for i, d in enumerate(WEEKDAYS)}

_SLOT_RE = re.compile(
    r"(?P<time>(?<!\d)\d{1,2}:\d{2}(?!\d))"
    r"|(?P<ord>(?<![\d.,])\d+(?:st|nd|rd|th)\b)"
    r"|(?P<num>(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,]\d)|(?<![\d.,])\d+(?:\.\d+)?(?![\d]|[.,]\d))"
    r"|(?P<word>[A-Za-z]+)"
)
_AMPM_RE = re.compile(r"^\s*(?:a\.?m\.?|p\.?m\.?)", re.IGNORECASE)


class Slot(NamedTuple):
    start: int  # character offsets in the sentence
    end: int
    kind: str  # time, ordinal, year, day, number, month, weekday, word
    text: str
    context: tuple = ()  # kind-specific facts: (12-hour clock,), (decade,), (month index,), (percent,)


def ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def entity_slots(sentence: str, start: int, end: int, label: str) -> list[Slot]:
    """Slots inside one numeric entity sentence[start:end]."""
    text = sentence[start:end]
    month = None
    for m in re.finditer(r"[A-Za-z]+", text):
        if m.group().lower() in _MONTH_IDX:
            month = _MONTH_IDX[m.group().lower()]
    slots = []
    for m in _SLOT_RE.finditer(text):
        s, e, g = start + m.start(), start + m.end(), m.group()
        if m.group("time"):
            twelve = bool(_AMPM_RE.match(sentence[e:]))
            slots.append(Slot(s, e, "time", g, (twelve,)))
        elif m.group("ord"):
            slots.append(Slot(s, e, "ordinal", g, (label == "DATE",)))
        elif m.group("num"):
            value = g.replace(",", "")
            if label == "DATE" and len(g) == 4 and 1000 <= int(g) <= 2099:
                slots.append(Slot(s, e, "year", g, (sentence[e : e + 1] == "s",)))
            elif label == "DATE" and month is not None and len(g) <= 2 and 1 <= int(g) <= 31:
                slots.append(Slot(s, e, "day", g, (month,)))
            else:
                slots.append(Slot(s, e, "number", g, (label == "PERCENT" and float(value) <= 100,)))
        else:
            low = g.lower()
            if low in _MONTH_IDX:
                # "May" is also a modal verb; inside a DATE entity it is the month.
                slots.append(Slot(s, e, "month", g, (_day_in(text),)))
            elif low in _WEEKDAY_IDX or (low.endswith("s") and low[:-1] in _WEEKDAY_IDX):
                slots.append(Slot(s, e, "weekday", g))
            elif low in _FAMILY_OF:
                if low in ("second", "score") and label not in ("ORDINAL", "CARDINAL", "QUANTITY"):
                    continue  # "30 seconds" is a unit, "score" a verb: only swap them as counts
                slots.append(Slot(s, e, "word", g))
    return slots


def _day_in(text: str) -> int:
    m = re.search(r"(?<!\d)([0-3]?\d)(?:st|nd|rd|th)?(?!\d)", text)
    return int(m.group(1)) if m and 1 <= int(m.group(1)) <= 31 else 1


def _same_shape_number(old: str, rng: random.Random, percent: bool) -> str:
    """A different number written like `old`: digit count, separators and decimals preserved."""
    int_part, _, dec = old.replace(",", "").partition(".")
    n = len(int_part)
    if percent and int_part == "100":
        n = 2  # keep percentages within 0-100: "100%" -> "73%"
    lo = 0 if n == 1 else 10 ** (n - 1)
    new_int = str(rng.randint(lo, 10**n - 1))
    if len(int_part) == n and int_part.startswith("0") and n > 1:  # zero-padded ("05")
        new_int = str(rng.randint(0, 10**n - 1)).zfill(n)
    if "," in old:
        new_int = f"{int(new_int):,}"
    new_dec = "".join(str(rng.randint(0, 9)) for _ in dec)
    return new_int + ("." + new_dec if dec else "")


def _new_value(slot: Slot, rng: random.Random) -> Optional[str]:
    old = slot.text
    if slot.kind == "time":
        h, mm = old.split(":")
        twelve = slot.context[0]
        hour = rng.randint(1, 12) if twelve else rng.randint(0, 23)
        hs = f"{hour:02d}" if h.startswith("0") else str(hour)  # keep "09:15" style, not "10" -> "07"
        return f"{hs}:{rng.randint(0, 59):02d}"
    if slot.kind == "ordinal":
        digits = re.match(r"\d+", old).group()
        if slot.context[0] and int(digits) <= 31:  # day of month
            n = rng.randint(1, 28)
        else:
            n = int(_same_shape_number(digits, rng, False))
        return f"{n}{ordinal_suffix(n)}"
    if slot.kind == "year":
        step = 10 if slot.context[0] else 1  # "1990s" -> "1960s"
        offset = rng.choice([d for d in range(-30, 31, step) if d])
        return str(int(old) + offset)
    if slot.kind == "day":
        days = calendar.monthrange(2001, slot.context[0] + 1)[1]  # non-leap year: always valid
        day = rng.randint(1, days)
        return f"{day:02d}" if old.startswith("0") else str(day)
    if slot.kind == "number":
        return _same_shape_number(old, rng, slot.context[0])
    if slot.kind == "month":
        day = slot.context[0]
        choices = [m for i, m in enumerate(MONTHS) if calendar.monthrange(2001, i + 1)[1] >= day]
        return match_case(rng.choice(choices), old)
    if slot.kind == "weekday":
        plural = old.lower().endswith("s") and old.lower()[:-1] in _WEEKDAY_IDX
        return match_case(rng.choice(WEEKDAYS) + ("s" if plural else ""), old)
    if slot.kind == "word":
        return match_case(rng.choice(_FAMILY_OF[old.lower()]), old)
    raise AssertionError(slot.kind)


def slot_values(slot: Slot, rng: random.Random, k: int) -> list[str]:
    """Up to k distinct new values for a slot, all different from its current text."""
    out: list[str] = []
    seen = {slot.text.lower()}
    for _ in range(8 * k):
        if len(out) == k:
            break
        v = _new_value(slot, rng)
        if v is not None and v.lower() not in seen:
            seen.add(v.lower())
            out.append(v)
    return out


def number_variants(slots: list[Slot], rng: random.Random, per_slot: int) -> list[list[Edit]]:
    """One edit per variant, interleaved across slots so a cap keeps every slot represented."""
    per = [[Edit(sl.start, sl.end, v) for v in slot_values(sl, rng, per_slot)] for sl in slots]
    out = []
    for r in range(max((len(p) for p in per), default=0)):
        out.extend([p[r]] for p in per if r < len(p))
    return out
