"""Datasets: FLORES-200, FLORES+, Tatoeba v1, the Tatoeba Challenge, NTREX-128, OLDI Seed, the
embedded demo corpus, generic parallel files, and the xsim++ augmented English in LASER's format.

``DATASETS`` is the one registry: each loader is a ``Dataset`` subclass (base.py says what one
declares), and its line here makes it a ``--dataset`` choice, a row of ``xsimpp datasets`` and of
the docs' dataset table, and its splits distractor-pool sources (``pool_sources``)."""

from __future__ import annotations

from ..errors import MissingResourceError
from .base import (KNOWN_ERRTYPES, AugmentedTargets, Bitext, Dataset, check_errtypes, load_augmented, read_errtypes,
                   text_checksum)
from .demo import Demo
from .flores import Flores200, flores_file
from .flores_plus import FloresPlus
from .languages import FLORES200_CODES, resolve_language, resolve_languages
from .ntrex import Ntrex128
from .oldi_seed import OldiSeed
from .tatoeba import ParallelFiles, TatoebaV1
from .tatoeba_challenge import TatoebaChallenge

# name -> class, in the order `xsimpp datasets` lists them (with each class's description).
DATASETS: dict[str, type[Dataset]] = {cls.name: cls for cls in (
    Flores200,
    FloresPlus,
    TatoebaV1,
    TatoebaChallenge,
    Ntrex128,
    OldiSeed,
    Demo,
)}


def get_dataset(name: str, split: str | None = None, data_dir=None) -> Dataset:
    if name not in DATASETS:
        raise MissingResourceError(f"Unknown dataset '{name}'; known: {', '.join(DATASETS)} (or --src-file/--tgt-file)")
    return DATASETS[name](split, data_dir=data_dir)


def pool_sources() -> dict[str, tuple[type[Dataset], str]]:
    """Every distractor-pool source, by name (sorted): the dataset and split it is, as each
    registered dataset declares (``Dataset.pool_sources``) or, by default, one per split."""
    out: dict[str, tuple[type[Dataset], str]] = {}
    for cls in DATASETS.values():
        declared = cls.pool_sources
        if declared is None:
            declared = {cls.name if len(cls.splits) == 1 else f"{cls.name}-{split}": split for split in cls.splits}
        for source, split in declared.items():
            if source in out:  # two registration lines claim one name: a mistake in the code, not in input
                raise ValueError(f"distractor source '{source}' is declared by {out[source][0].name} and {cls.name}")
            out[source] = (cls, split)
    return dict(sorted(out.items()))


__all__ = [
    "AugmentedTargets", "Bitext", "DATASETS", "Dataset", "Demo", "FLORES200_CODES", "Flores200", "FloresPlus",
    "Ntrex128", "OldiSeed", "ParallelFiles",
    "TatoebaChallenge", "TatoebaV1", "flores_file", "get_dataset", "load_augmented", "pool_sources", "resolve_language",
    "resolve_languages", "text_checksum",
]
