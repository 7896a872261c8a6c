"""OLDI Seed (openlanguagedata/seed, version 2 of NLLB-Seed, NLLB Team 2022): 6193 English
Wikipedia sentences translated into low-resource languages, multi-way parallel. One file per
language named by its FLORES-200 code, no extension (``eng_Latn``, ``fur_Latn``), beside a
``metadata.tsv``, under ``<data root>/oldi-seed/``; one split, ``train`` (as OLDI publishes it: it
is training data, NLLB's among others, so a score on it may measure what a model was taught)."""

from __future__ import annotations

import re
from pathlib import Path

from .base import ENGLISH, Dataset

_LANGUAGE_FILE = re.compile(r"[a-z]{3}_[A-Z][a-z]{3}")  # eng_Latn; not metadata.tsv, README.md, LICENSE


class OldiSeed(Dataset):
    name = "oldi-seed"
    title = "OLDI Seed"
    description = "OLDI Seed (NLLB-Seed v2): 6193 Wikipedia sentences, English + low-resource languages, multi-way parallel"
    splits = ("train",)
    default_target = ENGLISH
    folders = ("oldi-seed",)
    download_hint = ("`xsimpp download` has no OLDI Seed source: put the language files of "
                     "https://github.com/openlanguagedata/seed (eng_Latn, fur_Latn, ...) in <data root>/oldi-seed "
                     "(data root: --data-dir or XSIMPP_DATA_DIR)")

    def holds_data(self, folder: Path) -> bool:
        return (folder / ENGLISH).is_file()

    def languages(self) -> list[str]:
        return sorted(p.name for p in self.root().iterdir() if _LANGUAGE_FILE.fullmatch(p.name) and p.is_file())

    def file(self, code: str, partner: str | None = None) -> Path:
        return self.root() / code
