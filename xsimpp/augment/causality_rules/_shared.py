"""Helpers shared by the per-language causality rules: span edits on the original string, antonym
form tables that refuse ambiguous forms, fixed-phrase checks and the final clean-up of a variant list.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Optional, Sequence


class Edit(NamedTuple):
    start: int
    end: int
    text: str


def apply(source: str, edits: Sequence[Edit]) -> str:
    """Replace non-overlapping character spans of `source`; everything else stays byte-identical."""
    out, pos = [], 0
    for e in sorted(edits):
        if e.start < pos:
            raise ValueError(f"overlapping edits in {source!r}: {edits!r}")
        out.append(source[pos:e.start])
        out.append(e.text)
        pos = e.end
    out.append(source[pos:])
    return "".join(out)


def match_case(new: str, old: str) -> str:
    """`new` with the first-letter case of `old` ("Grand" -> "Petit")."""
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


def finish(sentence: str, variants: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Keep the first of each variant text, drop the input itself, and give a variant the input's
    capital first letter when an edit at the start left it lower case."""
    out, seen = [], {sentence}
    for text, subtype in variants:
        if sentence[:1].isupper() and text[:1].islower():
            text = text[0].upper() + text[1:]
        if text not in seen:
            seen.add(text)
            out.append((text, subtype))
    return out


class FormTable:
    """Antonym pairs given as parallel tuples of inflected forms: slot i of one word swaps with slot
    i of the other (None: no such form). A form found in several slots whose replacements differ
    ("faux": masc. singular and plural, "vrai"/"vrais") is only replaced when the caller names the
    slot; otherwise `lookup` returns None, so an ambiguous form is skipped rather than guessed."""

    def __init__(self, slots: Sequence[str], pairs: Iterable[tuple[Sequence[Optional[str]], Sequence[Optional[str]]]],
                 not_sources: Iterable[str] = ()):
        self.slots = tuple(slots)
        self._map: dict[str, dict[str, str]] = {}
        skip = set(not_sources)
        for a, b in pairs:
            if len(a) != len(self.slots) or len(b) != len(self.slots):
                raise ValueError(f"antonym pair {a!r} / {b!r} does not have one form per slot {self.slots!r}")
            for src, dst in ((a, b), (b, a)):
                for slot, f, g in zip(self.slots, src, dst):
                    if f is not None and g is not None and f not in skip:
                        self._map.setdefault(f, {})[slot] = g

    def lookup(self, form: str, slot: Optional[str] = None) -> Optional[str]:
        options = self._map.get(form)
        if not options:
            return None
        values = set(options.values())
        if len(values) == 1:
            return values.pop()
        return options.get(slot) if slot is not None else None


def in_fixed_phrase(words: Sequence[str], i: int, phrases: Iterable[tuple[str, ...]]) -> bool:
    """True when lower-cased `words[i]` is part of one of `phrases` (tuples of lower-case words)
    occurring in `words` around position i."""
    for phrase in phrases:
        for k, w in enumerate(phrase):
            if w != words[i]:
                continue
            start = i - k
            if start >= 0 and tuple(words[start:start + len(phrase)]) == phrase:
                return True
    return False
