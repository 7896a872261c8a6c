"""NTREX-128 (Federmann et al. 2022): the 1 997 English sentences of WMT19's news test set
translated into 128 languages. Files as OPUS-MT-testsets ship them: ``newstest2019-src.eng.txt``
(English) and ``newstest2019-ref.<code>.txt`` (one per language; codes are ISO 639-3 or
``zho_Hans``-style), line-aligned, under ``<data root>/ntrex128/``."""

from __future__ import annotations

from pathlib import Path

from .base import Dataset
from .languages import resolve_language

ENGLISH = "newstest2019-src.eng.txt"


class Ntrex128(Dataset):
    name = "ntrex128"
    title = "NTREX-128"
    description = "NTREX-128: 1997 news sentences, English source + translations (multi-way parallel)"
    splits = ("test",)
    default_target = "eng_Latn"
    folders = ("ntrex128", "NTREX-128", "ntrex", ".")
    download_hint = ("get NTREX-128 (https://github.com/MicrosoftTranslator/NTREX; OPUS-MT-testsets ships it as "
                     "newstest2019-{src,ref}.<code>.txt) and put the files under <data root>/ntrex128")

    def holds_data(self, folder: Path) -> bool:
        return (folder / ENGLISH).is_file()

    def _files(self) -> dict[str, Path]:
        """FLORES-200 code -> file, for every file whose code resolves (``swa`` -> ``swh_Latn``)."""
        out: dict[str, Path] = {}
        for root in self.roots():
            for f in sorted(root.glob("newstest2019-ref.*.txt")):
                try:
                    code = resolve_language(f.name[len("newstest2019-ref."):-len(".txt")])
                except Exception:  # a file whose code names no FLORES language: not offered
                    continue
                out.setdefault(code, f)
            out.setdefault("eng_Latn", root / ENGLISH)
        return out

    def languages(self) -> list[str]:
        return sorted(self._files()) if self.is_available() else []

    def file(self, code: str, partner: str | None = None) -> Path:
        files = self._files()
        if code not in files:
            raise self.missing(f"NTREX-128 file for {code}")
        return files[code]
