"""FLORES-200 (NLLB Team 2022): 204 languages, multi-way parallel, dev (997) and devtest (1012).

Accepted layouts under a data root: the official ``flores200_dataset/<split>/<code>.<split>``,
the flat ``flores200/<split>/<code>.<split>``, or the root being that folder itself.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import MissingResourceError
from ..paths import augmented_dir, data_dirs
from ..textio import read_lines
from .base import Bitext
from .languages import FLORES200_CODES, resolve_language

SPLITS = ("dev", "devtest")
FOLDERS = ("flores200", "flores200_dataset", "flores-200", ".")
DOWNLOAD_HINT = (
    "download flores200_dataset.tar.gz (https://github.com/facebookresearch/flores/tree/main/flores200) "
    "and unpack it under a data root given by --data-dir or XSIMPP_DATA_DIR"
)


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise MissingResourceError(f"FLORES-200 has splits {', '.join(SPLITS)}, not '{split}'")


def flores_roots(data_dir=None) -> list[Path]:
    """Every existing FLORES-200 folder (one holding dev/ or devtest/) under the data roots."""
    found: list[Path] = []
    for root in data_dirs(data_dir):
        for folder in FOLDERS:
            cand = (root / folder).resolve()
            if any((cand / s).is_dir() for s in SPLITS) and cand not in found:
                found.append(cand)
    return found


def flores_file(lang: str, split: str, data_dir=None) -> Path:
    """Path of ``<lang>.<split>``; ``lang`` may be any code ``resolve_language`` accepts."""
    _check_split(split)
    code = resolve_language(lang, FLORES200_CODES)
    roots = flores_roots(data_dir)
    for root in roots:
        p = root / split / f"{code}.{split}"
        if p.is_file():
            return p
    looked = ", ".join(str(r) for r in data_dirs(data_dir))
    raise MissingResourceError(f"FLORES-200 {split} file {code}.{split} not found (looked under {looked}); {DOWNLOAD_HINT}")


class Flores200:
    name = "flores200"
    default_target = "eng_Latn"
    splits = SPLITS

    def __init__(self, split: str = "devtest", data_dir=None):
        _check_split(split)
        self.split = split
        self.data_dir = data_dir

    def languages(self) -> list[str]:
        return list(FLORES200_CODES)

    def resolve(self, code: str) -> str:
        return resolve_language(code, FLORES200_CODES)

    def path(self, lang: str) -> Path:
        return flores_file(lang, self.split, self.data_dir)

    def sentences(self, lang: str) -> list[str]:
        return read_lines(self.path(lang))

    def bitext(self, src_lang: str, tgt_lang: str) -> Bitext:
        s, t = self.resolve(src_lang), self.resolve(tgt_lang)
        sp, tp = self.path(s), self.path(t)
        return Bitext(self.name, self.split, s, t, read_lines(sp), read_lines(tp), sp, tp)

    def augmented_dirs(self) -> list[Path]:
        """Where `--augmented auto` looks: LASER's layout beside the split, then xsimpp's own output."""
        dirs = [root / f"{self.split}_augmented" for root in flores_roots(self.data_dir)]
        dirs.append(augmented_dir() / self.name / f"{self.split}_augmented")
        return dirs

    def is_available(self) -> bool:
        return any((r / self.split).is_dir() for r in flores_roots(self.data_dir))
