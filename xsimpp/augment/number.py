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
from .spans import is_sentence_initial

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
# Abbreviated months ("1 Jan.") make a number a day of the month; they are not swapped themselves.
_MONTH_ABBR = {m.lower()[:3]: i for i, m in enumerate(MONTHS)} | {"sept": 8}
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
    kind: str  # time, clock, ordinal, year, day, number, month, weekday, word, range
    text: str
    context: tuple = ()  # kind-specific facts: (12-hour clock,), (decade,), (month index,), (percent,)
    # Strict style: ("plural", noun start, noun end, plural form) for "one year" -> "N years";
    # ("no_one",) where a plural noun follows, so no value becomes "one"/"1" ("1 goals").
    agree: tuple = ()


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
        elif m.group().lower() in _MONTH_ABBR and (m.group()[0].isupper()):
            month = _MONTH_ABBR[m.group().lower()]
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
    if slot.kind == "clock":  # a 24-hour "HHMM" time
        return f"{rng.randint(0, 23):02d}{rng.randrange(0, 60, 5):02d}"
    if slot.kind == "day":
        days = calendar.monthrange(2001, slot.context[0] + 1)[1]  # non-leap year: always valid
        day = rng.randint(1, days)
        return f"{day:02d}" if old.startswith("0") else str(day)
    if slot.kind == "number":
        return _same_shape_number(old, rng, slot.context[0])
    if slot.kind == "decade":
        return str(rng.randint(2, 9) * 10)
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
    if slot.agree[:1] == ("no_one",) or slot.agree[:1] == ("plural",):
        seen |= {"1", "one"}
    for _ in range(8 * k):
        if len(out) == k:
            break
        v = _range_value(slot, rng) if slot.kind == "range" else _new_value(slot, rng)
        if v is not None and v.lower() not in seen:
            seen.add(v.lower())
            out.append(v)
    return out


def _slot_edits(slot: Slot, value: str) -> list[Edit]:
    edits = [Edit(slot.start, slot.end, value)]
    if slot.agree[:1] == ("plural",):
        _, s, e, plural = slot.agree
        edits.append(Edit(s, e, plural))
    return edits


def number_variants(slots: list[Slot], rng: random.Random, per_slot: int) -> list[list[Edit]]:
    """One changed slot per variant, interleaved across slots so a cap keeps every slot represented."""
    per = [[_slot_edits(sl, v) for v in slot_values(sl, rng, per_slot)] for sl in slots]
    out = []
    for r in range(max((len(p) for p in per), default=0)):
        out.extend(p[r] for p in per if r < len(p))
    return out


def number_slots(doc, strict: bool = False) -> list[Slot]:
    """The slots of a parsed sentence's numeric entities; strict: the rules of `strict_slots`."""
    slots = [sl for e in doc.ents if e.label_ in NUMERIC_LABELS
             for sl in entity_slots(doc.text, e.start_char, e.end_char, e.label_)]
    return strict_slots(doc, slots) if strict else slots


# --- strict style ----------------------------------------------------------------------------------

SCALE_WORDS = frozenset(WORD_FAMILIES[3])
# "one" that is no count: "one of", "no one", "one day" (some day), "one another", "one ... or another".
_ONE_SKIP_BEFORE = frozenset({"no", "any", "every", "some", "each", "the", "this", "that", "which", "another", "a",
                              "anyone", "someone", "such"})
_ONE_SKIP_AFTER = frozenset({"of", "another", "day", "time", "way", "hand", "point", "side", "thing"})
_RANGE_SEP = re.compile(r"^\s*(?:-|–|—|to|and|or)\s*$")
_IRREGULAR_PLURAL = {"man": "men", "woman": "women", "child": "children", "person": "people", "foot": "feet",
                     "tooth": "teeth", "mouse": "mice", "goose": "geese", "knife": "knives", "wife": "wives",
                     "life": "lives", "leaf": "leaves", "half": "halves", "wolf": "wolves", "shelf": "shelves",
                     "thief": "thieves", "loaf": "loaves", "calf": "calves", "crisis": "crises",
                     "analysis": "analyses", "phenomenon": "phenomena", "criterion": "criteria"}
_SAME_PLURAL = frozenset({"sheep", "fish", "deer", "series", "species", "aircraft", "offspring", "means"})
# Ordinals in set phrases: "first come, first served", "at first", "second class", "third party".
_ORDINAL_IDIOMS = re.compile(
    r"^(?:first come|first served|first aid|first lady|first class|second class|first hand|second hand|"
    r"third party|first name|first person|second person|third person|first of all|first and foremost)\b",
    re.IGNORECASE)
_NAME_BEFORE_OK = frozenset(m.lower() for m in MONTHS + WEEKDAYS) | {"in", "on", "at", "by", "since", "until"}


def plural(noun: str) -> str:
    low = noun.lower()
    if low in _SAME_PLURAL:
        return noun
    if low in _IRREGULAR_PLURAL:
        return match_case(_IRREGULAR_PLURAL[low], noun)
    if low.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _in_name(doc, sl: Slot) -> bool:
    """A number that is part of a name: "Formula 1", "Windows 10", "Boeing 747", "COVID-19", "G7"."""
    text = doc.text
    before = text[: sl.start]
    if before[-1:].isalpha() or (before[-1:] in "-–" and before[-2:-1].isalnum()):
        return True
    span = doc.char_span(sl.start, sl.end, alignment_mode="expand")
    if span is None:
        return False
    if any(t.ent_type_ and t.ent_type_ not in NUMERIC_LABELS for t in span):
        return True
    prev = doc[span.start - 1] if span.start > 0 else None
    return (prev is not None and prev.text[:1].isupper() and prev.tag_ in ("NNP", "NNPS")
            and prev.lower_ not in _NAME_BEFORE_OK and text[prev.idx + len(prev.text): sl.start].strip() == "")


def _range_tails(text: str, slots: list[Slot]) -> list[Slot]:
    """A year or number whose range end lies outside the entity ("1995-96"): the end as a slot too."""
    out = list(slots)
    taken = {(sl.start, sl.end) for sl in slots}
    for sl in slots:
        m = re.match(r"[-–](\d{2,4})\b", text[sl.end :])
        if sl.kind in ("year", "number") and sl.text.isdigit() and m:
            s, e = sl.end + m.start(1), sl.end + m.end(1)
            if (s, e) not in taken:
                out.append(Slot(s, e, "number", m.group(1), (False,)))
    return sorted(out, key=lambda sl: sl.start)


def _count_noun(doc, sl: Slot):
    """The noun a number counts ("five [years]"), if it directly follows (adjectives allowed)."""
    span = doc.char_span(sl.start, sl.end, alignment_mode="expand")
    if span is None or len(span) != 1:
        return None
    tok = span[0]
    if tok.dep_ != "nummod" or tok.head.i <= tok.i or tok.head.pos_ != "NOUN":
        return None
    if any(t.pos_ not in ("ADJ", "NUM") for t in doc[tok.i + 1 : tok.head.i]):
        return None
    return tok.head


def _one_is_idiom(doc, sl: Slot) -> bool:
    span = doc.char_span(sl.start, sl.end, alignment_mode="expand")
    if span is None:
        return True
    tok = span[0]
    prev = doc[tok.i - 1] if tok.i > 0 else None
    nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
    if prev is not None and prev.lower_ in _ONE_SKIP_BEFORE:
        return True
    if nxt is not None and (nxt.lower_ in _ONE_SKIP_AFTER or nxt.text in "-–"):
        return True
    rest = doc.text[sl.end:].lower()
    return " or another" in rest or " or the other" in rest or tok.pos_ == "PRON"


def _merge_ranges(text: str, slots: list[Slot]) -> list[Slot]:
    """Two numbers of one kind joined by -, to, and (after "between"), or: one range slot, whose
    values move both ends by the same step ("1995-96" -> "1988-89", "two or three" -> "four or five")."""
    out: list[Slot] = []
    i = 0
    while i < len(slots):
        a = slots[i]
        b = slots[i + 1] if i + 1 < len(slots) else None
        if b is not None and a.kind in ("year", "number", "word") and b.kind in ("year", "number", "word") \
                and _RANGE_SEP.match(text[a.end : b.start]) \
                and (text[a.end : b.start].strip() != "and" or text[: a.start].rstrip().lower().endswith("between")) \
                and (a.kind == "word") == (b.kind == "word") and a.text.isdigit() == b.text.isdigit() \
                and _range_ok(a, b):
            out.append(Slot(a.start, b.end, "range", text[a.start : b.end], (a, b, text[a.end : b.start])))
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def _range_ok(a: Slot, b: Slot) -> bool:
    if a.kind == "word":
        fam = _FAMILY_OF.get(a.text.lower())
        return fam is not None and fam is _FAMILY_OF.get(b.text.lower())
    return re.fullmatch(r"\d+", a.text) is not None and re.fullmatch(r"\d+", b.text) is not None


def _range_value(slot: Slot, rng: random.Random) -> Optional[str]:
    a, b, sep = slot.context
    if a.kind == "word":
        fam = _FAMILY_OF[a.text.lower()]
        ia, ib = fam.index(a.text.lower()), fam.index(b.text.lower())
        step = rng.choice([d for d in range(-len(fam), len(fam)) if d and 0 <= ia + d < len(fam) and 0 <= ib + d < len(fam)]
                          or [0])
        if not step:
            return None
        return match_case(fam[ia + step], a.text) + sep + match_case(fam[ib + step], b.text)
    va, vb = int(a.text), int(b.text)
    if len(b.text) == 2 and len(a.text) == 4:  # "1995-96": the end written as two digits
        full_b = va - va % 100 + vb + (100 if vb < va % 100 else 0)
        step = rng.choice([d for d in range(-30, 31) if d]) if a.kind == "year" else None
        if step is None:
            new_a = int(_same_shape_number(a.text, rng, False))
            step = new_a - va
        na, nb = va + step, full_b + step
        return f"{na}{sep}{nb % 100:02d}" if len(str(na)) == 4 else None
    step = (rng.choice([d for d in range(-30, 31) if d]) if a.kind == "year"
            else int(_same_shape_number(a.text, rng, False)) - va)
    na, nb = va + step, vb + step
    if na < 0 or nb < 0 or len(str(na)) != len(a.text) or len(str(nb)) != len(b.text) or step == 0:
        return None
    return f"{na}{sep}{nb}"


def strict_slots(doc, slots: list[Slot]) -> list[Slot]:
    """Strict rules over a sentence's slots: numbers inside names are left alone ("Formula 1");
    a bare number shaped like a year moves as a year, by at most 30 ("1624" -> "1611", never "9903");
    a scale word changes only with its number ("340 million" -> "527 million", never "340 hundred");
    ranges change as one ("1995-96"); "one" that counts a noun changes with the noun made plural
    ("one year ago" -> "five years ago"), and not at all in "one of", "no one", "one day", "one
    another", "one ... or another"; a number before a plural noun never becomes "one"."""
    text = doc.text
    kept: list[Slot] = []
    slots = [_year_shaped(text, sl) for sl in slots
             if not (sl.kind in ("number", "word", "year", "ordinal") and _in_name(doc, sl))]
    for sl in _merge_ranges(text, _range_tails(text, slots)):
        if sl.kind == "range":
            kept.append(sl)
            continue
        low = sl.text.lower()
        if sl.kind == "word" and sl.text[:1].isupper() and (not is_sentence_initial(text, sl.start)
                                                            or re.match(r"\s+[A-Z]", text[sl.end :])):
            continue  # "Six Flags", "Big Ten": a capitalised number word mid-sentence or before a name
        if sl.kind == "word" and (_ORDINAL_IDIOMS.match(text[sl.start:].replace("-", " "))
                                  or re.search(r"\bat\s+$", text[: sl.start].lower()) and low == "first"):
            continue
        if sl.kind == "number" and re.fullmatch(r"[1-9]0", sl.text) and text[sl.end : sl.end + 1] == "s":
            kept.append(sl._replace(kind="decade"))  # "the 90s" -> "the 60s"
            continue
        if sl.kind == "word" and low in SCALE_WORDS and re.search(r"(?:\d|[a-z])\s+$", text[: sl.start]) \
                and _preceded_by_number(text[: sl.start]):
            continue
        if sl.kind in ("word", "number") and low in ("one", "1"):
            if _one_is_idiom(doc, sl):
                continue
            noun = _count_noun(doc, sl)
            if noun is not None:
                if noun.tag_ != "NN" or noun.text[:1].isupper():
                    continue  # not a plain singular count noun: leave it
                sl = sl._replace(agree=("plural", noun.idx, noun.idx + len(noun.text), plural(noun.text)))
            elif sl.kind == "word":
                continue  # "one" that counts nothing we can see: a pronoun, leave it
        elif sl.kind in ("word", "number"):
            noun = _count_noun(doc, sl)
            span = doc.char_span(sl.start, sl.end, alignment_mode="expand")
            nxt = doc[span.end] if span is not None and span.end < len(doc) else None
            if (noun is not None and noun.tag_ in ("NNS", "NNPS")) or (nxt is not None and nxt.tag_ == "NNS"):
                sl = sl._replace(agree=("no_one",))  # "four times", "2 goals": never "one times", "1 goals"
        kept.append(sl)
    return kept


_CLOCK_AFTER = re.compile(r"\s*(?:GMT|UTC|hrs?\b|hours\b)")


def _year_shaped(text: str, sl: Slot) -> Slot:
    """A bare 1000-2099 the tagger did not put in a DATE ("In 1624,Dutch ..." is CARDINAL there)
    moves as a year does, by at most 30: a random same-width value would turn a year into 9903.
    A count of that size ("1500 people") stays a plausible count that way too."""
    if sl.kind == "number" and re.fullmatch(r"1\d{3}|20\d{2}", sl.text):
        if _CLOCK_AFTER.match(text[sl.end :]) and int(sl.text[:2]) < 24 and int(sl.text[2:]) < 60:
            return sl._replace(kind="clock", agree=())  # "1200 GMT": another time of day, not a year
        return sl._replace(kind="year", context=(text[sl.end : sl.end + 1] == "s",), agree=())
    return sl


def _preceded_by_number(before: str) -> bool:
    m = re.search(r"([\w.,]+)\s+$", before)
    if not m:
        return False
    w = m.group(1).lower().rstrip(",")
    return bool(re.fullmatch(r"[\d.,]+", w)) or w in _FAMILY_OF or w.split("-")[-1] in _FAMILY_OF
