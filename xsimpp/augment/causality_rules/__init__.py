"""Curated causality rules (negation and antonym edits, strict style) for target languages other
than English, for xsim++ beyond English (issue 25).

``rules_for(lang)`` returns the rules of a language that has a reviewed rule set (French: fra.py,
German: deu.py) and None for every other language: nothing is guessed for a language nobody has
reviewed. ``RULES_VERSION`` changes whenever any rule or word list changes, so signatures of
built negatives change with it.
"""

from __future__ import annotations

from typing import Optional, Protocol

from .deu import GermanRules
from .fra import FrenchRules

RULES_VERSION = "1"


class CausalityRules(Protocol):
    lang: str
    version: str

    def variants(self, sentence: str) -> list[tuple[str, str]]:
        """(variant, subtype) pairs, subtype "negation" or "antonym", in a fixed order; each variant
        differs from `sentence` in meaning by one edit; [] when no safe edit exists."""


_RULES = {"fra_Latn": FrenchRules, "deu_Latn": GermanRules}


def rules_for(lang: str) -> Optional[CausalityRules]:
    """The curated rules for a FLORES code ("fra_Latn") or its ISO 639-3 part ("fra"); None when the
    language has none."""
    code = lang.strip()
    if "_" not in code:
        code = {c.split("_")[0]: c for c in _RULES}.get(code.lower(), code)
    cls = _RULES.get(code)
    return cls() if cls is not None else None


__all__ = ["RULES_VERSION", "CausalityRules", "rules_for"]
