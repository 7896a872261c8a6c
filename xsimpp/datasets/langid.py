"""Offline language identification for corpus filtering: py3langid (langid.py's model retrained on
more languages, shipped inside the wheel; no download). Its labels (ISO 639-1 where one exists,
else ISO 639-3: ``en``, ``it``, ``vec``) are mapped to the toolkit's codes through
``languages.resolve_language``, at the language level (ISO 639-3, no script: the identifier does
not tell scripts apart)."""

from __future__ import annotations

import functools
from typing import Sequence

from ..errors import MissingResourceError
from .languages import FLORES200_CODES, UnknownLanguageError, resolve_language

IDENTIFIER = "py3langid"


def language_of(code: str) -> str:
    """The ISO 639-3 part of a toolkit language code ('fur' -> 'fur', 'de' -> 'deu')."""
    return resolve_language(code).split("_")[0]


@functools.lru_cache(maxsize=1)
def _model():
    try:
        import py3langid.langid as langid
    except ImportError:
        raise MissingResourceError("language identification needs py3langid: pip install py3langid") from None
    return langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=True)


def identifier_version() -> str:
    from importlib.metadata import version

    return f"{IDENTIFIER}-{version(IDENTIFIER)}"


@functools.lru_cache(maxsize=1)
def label_languages() -> dict[str, str]:
    """The identifier's labels -> ISO 639-3 base codes (labels the toolkit cannot map are left out)."""
    bases = sorted({c.split("_")[0] for c in FLORES200_CODES})
    out = {}
    for label in _model().nb_classes:
        try:
            out[str(label)] = resolve_language(str(label), bases)
        except UnknownLanguageError:
            continue
    return out


def knows(language: str) -> bool:
    """Whether the identifier can recognise ``language`` (an ISO 639-3 base code)."""
    return language in set(label_languages().values())


def identify(lines: Sequence[str]) -> list[tuple[str, float]]:
    """(ISO 639-3 base code or the raw label when unmappable, probability) per line."""
    model, labels = _model(), label_languages()
    out = []
    for line in lines:
        label, prob = model.classify(line)
        out.append((labels.get(str(label), str(label)), float(prob)))
    return out
