"""Datasets: FLORES-200, Tatoeba v1, the embedded demo corpus, generic parallel files, and the
xsim++ augmented English in LASER's format."""

from __future__ import annotations

from ..errors import MissingResourceError
from .base import AugmentedTargets, Bitext, load_augmented, text_checksum
from .demo import Demo
from .flores import Flores200, flores_file
from .languages import FLORES200_CODES, resolve_language, resolve_languages
from .tatoeba import ParallelFiles, TatoebaV1
from .tatoeba_challenge import TatoebaChallenge

# name -> (class, one-line description). `xsimpp datasets` prints these.
DATASETS = {
    "flores200": (Flores200, "FLORES-200: 204 languages, multi-way parallel; splits dev (997), devtest (1012)"),
    "tatoeba": (TatoebaV1, "Tatoeba v1 (LASER layout): 112 languages paired with English, <=1000 pairs each"),
    "tatoeba-challenge": (TatoebaChallenge, "Tatoeba Translation Challenge test sets: pairs with English, variant labels"),
    "demo": (Demo, "Embedded demo corpus: eng/deu/fra/spa, 120 lines, with hand-written xsim++ negatives"),
}


def get_dataset(name: str, split: str | None = None, data_dir=None):
    if name not in DATASETS:
        raise MissingResourceError(f"Unknown dataset '{name}'; known: {', '.join(DATASETS)} (or --src-file/--tgt-file)")
    cls = DATASETS[name][0]
    return cls(split or cls.splits[-1], data_dir=data_dir)


__all__ = [
    "AugmentedTargets", "Bitext", "DATASETS", "Demo", "FLORES200_CODES", "Flores200", "ParallelFiles",
    "TatoebaChallenge", "TatoebaV1", "flores_file", "get_dataset", "load_augmented", "resolve_language", "resolve_languages",
    "text_checksum",
]
