"""Datasets: FLORES-200, Tatoeba v1, the Tatoeba Challenge, the embedded demo corpus, generic
parallel files, and the xsim++ augmented English in LASER's format. Each loader is a ``Dataset``
subclass (base.py says what one declares); registering it here makes it a ``--dataset`` choice."""

from __future__ import annotations

from ..errors import MissingResourceError
from .base import (KNOWN_ERRTYPES, AugmentedTargets, Bitext, Dataset, check_errtypes, load_augmented, read_errtypes,
                   text_checksum)
from .demo import Demo
from .flores import Flores200, flores_file
from .flores_plus import FloresPlus
from .languages import FLORES200_CODES, resolve_language, resolve_languages
from .ntrex import Ntrex128
from .tatoeba import ParallelFiles, TatoebaV1
from .tatoeba_challenge import TatoebaChallenge

# name -> class, in the order `xsimpp datasets` lists them (with each class's description).
DATASETS: dict[str, type[Dataset]] = {cls.name: cls for cls in (
    Flores200,
    FloresPlus,
    TatoebaV1,
    TatoebaChallenge,
    Ntrex128,
    Demo,
)}


def get_dataset(name: str, split: str | None = None, data_dir=None) -> Dataset:
    if name not in DATASETS:
        raise MissingResourceError(f"Unknown dataset '{name}'; known: {', '.join(DATASETS)} (or --src-file/--tgt-file)")
    return DATASETS[name](split, data_dir=data_dir)


__all__ = [
    "AugmentedTargets", "Bitext", "DATASETS", "Dataset", "Demo", "FLORES200_CODES", "Flores200", "FloresPlus",
    "ParallelFiles",
    "TatoebaChallenge", "TatoebaV1", "flores_file", "get_dataset", "load_augmented", "resolve_language", "resolve_languages",
    "text_checksum",
]
