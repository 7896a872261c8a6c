"""The evaluation sentences a training set must not contain (OneAligner's data recipe removes every
training pair whose source or target is in a test set): FLORES-200 dev and devtest in every
language file present, the Tatoeba v1 test files (both sides), and the Tatoeba Challenge test sets
(both sides, the version ``tatoeba-challenge`` evaluates), each from the data roots
(``--data-dir`` / ``XSIMPP_DATA_DIR``) where it is found."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..textio import read_lines
from .flores import Flores200
from .tatoeba import TatoebaV1
from .tatoeba_challenge import TatoebaChallenge


def _flores_lines(splits: list[Flores200]) -> Iterator[str]:
    for ds in splits:
        seen: set[str] = set()
        for root in ds.roots():  # a file name is taken from the first root that has it, as the loader does
            for f in sorted((root / ds.split).glob(f"*.{ds.split}")):
                if f.name not in seen and f.is_file():
                    seen.add(f.name)
                    yield from read_lines(f, allow_empty_lines=True)


def _tatoeba_lines(ds: TatoebaV1) -> Iterator[str]:
    for f in sorted(Path(ds.root()).glob("tatoeba.*-eng.*")):
        if f.is_file():
            yield from read_lines(f, allow_empty_lines=True)


def _challenge_lines(ds: TatoebaChallenge) -> Iterator[str]:
    for lang in ds.languages():
        for code, partner in ((lang, "eng"), ("eng", lang)):
            yield from ds.read(ds.file(code, partner), code)


def evaluation_sentences(data_dir=None) -> dict[str, Iterator[str] | None]:
    """Test set name -> its sentences (read lazily), or None where that data is not found here."""
    flores = [Flores200(split, data_dir) for split in Flores200.splits]
    tatoeba, challenge = TatoebaV1(None, data_dir), TatoebaChallenge(None, data_dir)
    return {
        "FLORES-200 dev+devtest": _flores_lines(flores) if any(d.is_available() for d in flores) else None,
        "Tatoeba v1 test": _tatoeba_lines(tatoeba) if tatoeba.is_available() else None,
        "Tatoeba Challenge test": _challenge_lines(challenge) if challenge.is_available() else None,
    }
