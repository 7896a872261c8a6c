"""NTREX-128 (Federmann et al. 2022): the 1 997 English sentences of WMT19's news test set
translated into 128 languages, multi-way parallel (every file is line-aligned with every other).
``--dataset ntrex``; one split, ``test`` (what NTREX calls newstest2019).

Files as NTREX (its ``NTREX-128`` folder) and OPUS-MT-testsets ship them: ``ENGLISH_FILE`` (the
English source) and ``REF_FILE`` (one per language), under ``<data root>/ntrex128/``. Their codes
are ISO 639-3, macro-language (``swa``) or with a script or region (``aze-Latn``, ``zho_Hans``,
``eng-GB``); each is offered under the FLORES-200 code it resolves to (``swa`` -> ``swh_Latn``,
as records name languages), and a file whose code names no one FLORES-200 language (``eng-GB``,
``fra-CA``) is left out.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from .base import ENGLISH, Dataset
from .languages import UnknownLanguageError, resolve_language

ENGLISH_FILE = "newstest2019-src.eng.txt"
REF_FILE = "newstest2019-ref.{code}.txt"  # a language's translation of ENGLISH_FILE


class Ntrex128(Dataset):
    name = "ntrex"
    title = "NTREX-128"
    description = "NTREX-128: 1997 news sentences (WMT newstest2019), English + 128 languages, multi-way parallel"
    splits = ("test",)
    default_target = ENGLISH
    folders = ("ntrex128", "NTREX-128", "ntrex", ".")
    pool_sources = {"ntrex128": "test"}  # the name mining-f1 and study configurations have always given it
    download_hint = (f"`xsimpp download` has no NTREX source: get the NTREX-128 folder of "
                     f"https://github.com/MicrosoftTranslator/NTREX (or OPUS-MT-testsets' copy) and put its "
                     f"{ENGLISH_FILE} and {REF_FILE.format(code='<code>')} files in <data root>/ntrex128 "
                     f"(data root: --data-dir or XSIMPP_DATA_DIR)")

    def holds_data(self, folder: Path) -> bool:
        return (folder / ENGLISH_FILE).is_file()

    @cached_property
    def _files(self) -> dict[str, Path]:
        """FLORES-200 code -> file, for every file whose code resolves (``swa`` -> ``swh_Latn``);
        where several roots or files give a code, the first root's, then the first name's."""
        prefix, suffix = REF_FILE.split("{code}")
        out: dict[str, Path] = {}
        for root in self.roots():
            for f in sorted(root.glob(REF_FILE.format(code="*"))):
                try:
                    code = resolve_language(f.name[len(prefix):-len(suffix)])
                except UnknownLanguageError:  # no one FLORES language (eng-GB, fra-CA): not offered
                    continue
                out.setdefault(code, f)
            out.setdefault(ENGLISH, root / ENGLISH_FILE)
        return out

    def languages(self) -> list[str]:
        """The FLORES-200 codes of the files found, English included; none when the data is missing
        (``resolve`` then says so)."""
        return sorted(self._files)

    def resolve(self, code: str) -> str:
        if not self.is_available():  # say the data is missing, not that every language code is unknown
            raise self.missing(f"{self.title} {self.split} data")
        return super().resolve(code)

    def file(self, code: str, partner: str | None = None) -> Path:
        if code not in self._files:
            raise self.missing(f"{self.title} file {REF_FILE.format(code=code)}")
        return self._files[code]
