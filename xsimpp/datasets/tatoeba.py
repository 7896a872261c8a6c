"""Tatoeba test sets in LASER's layout (Artetxe & Schwenk 2019): ``tatoeba.<xxx>-eng.{xxx,eng}``,
up to 1000 pairs per language; each language has its own English side, which repeats sentences."""

from __future__ import annotations

from pathlib import Path

from ..errors import MissingResourceError
from ..paths import data_dirs
from ..textio import read_lines
from .base import Bitext
from .languages import resolve_language

FOLDERS = ("tatoeba/v1", "tatoeba", "LASER/data/tatoeba/v1", ".")
DOWNLOAD_HINT = (
    "get LASER's data/tatoeba/v1 folder (https://github.com/facebookresearch/LASER/tree/main/data/tatoeba/v1) "
    "and put it at <data root>/tatoeba/v1 (data root: --data-dir or XSIMPP_DATA_DIR)"
)


def tatoeba_root(data_dir=None) -> Path:
    for root in data_dirs(data_dir):
        for folder in FOLDERS:
            cand = root / folder
            if cand.is_dir() and any(cand.glob("tatoeba.*-eng.eng")):
                return cand.resolve()
    looked = ", ".join(str(r) for r in data_dirs(data_dir))
    raise MissingResourceError(f"Tatoeba v1 test sets not found (looked under {looked}); {DOWNLOAD_HINT}")


class TatoebaV1:
    name = "tatoeba"
    default_target = "eng"
    splits = ("test",)

    def __init__(self, split: str = "test", data_dir=None):
        if split not in self.splits:
            raise MissingResourceError(f"Tatoeba v1 has only the 'test' split, not '{split}'")
        self.split = split
        self.data_dir = data_dir

    def languages(self) -> list[str]:
        root = tatoeba_root(self.data_dir)
        return sorted(p.name.split(".")[1].split("-")[0] for p in root.glob("tatoeba.*-eng.eng"))

    def resolve(self, code: str) -> str:
        if code in ("eng", "eng_Latn", "en"):
            return "eng"
        return resolve_language(code, self.languages())

    def bitext(self, src_lang: str, tgt_lang: str = "eng") -> Bitext:
        s, t = self.resolve(src_lang), self.resolve(tgt_lang)
        if "eng" not in (s, t) or s == t:
            raise MissingResourceError(f"Tatoeba pairs every language with English only, not {s}-{t}")
        xx = t if s == "eng" else s
        root = tatoeba_root(self.data_dir)
        paths = {xx: root / f"tatoeba.{xx}-eng.{xx}", "eng": root / f"tatoeba.{xx}-eng.eng"}
        return Bitext(self.name, self.split, s, t, read_lines(paths[s]), read_lines(paths[t]), paths[s], paths[t])

    def augmented_dirs(self) -> list[Path]:
        return []

    def is_available(self) -> bool:
        try:
            tatoeba_root(self.data_dir)
            return True
        except MissingResourceError:
            return False


class ParallelFiles:
    """Any two line-aligned files the user brings (``--src-file``/``--tgt-file``)."""

    name = "parallel"
    default_target = "tgt"

    def __init__(self, src_file: str | Path, tgt_file: str | Path, src_lang: str = "src", tgt_lang: str = "tgt",
                 split: str = "custom"):
        self.src_file, self.tgt_file = Path(src_file), Path(tgt_file)
        self.src_lang, self.tgt_lang, self.split = src_lang, tgt_lang, split

    def languages(self) -> list[str]:
        return [self.src_lang, self.tgt_lang]

    def resolve(self, code: str) -> str:
        if code not in self.languages():
            raise MissingResourceError(f"parallel files hold {self.src_lang} and {self.tgt_lang}, not '{code}'")
        return code

    def bitext(self, src_lang: str | None = None, tgt_lang: str | None = None) -> Bitext:
        s = src_lang or self.src_lang
        paths = {self.src_lang: self.src_file, self.tgt_lang: self.tgt_file}
        t = tgt_lang or (self.tgt_lang if s == self.src_lang else self.src_lang)
        self.resolve(s), self.resolve(t)
        return Bitext(self.name, self.split, s, t, read_lines(paths[s]), read_lines(paths[t]), paths[s], paths[t])

    def augmented_dirs(self) -> list[Path]:
        return [self.tgt_file.parent]

    def is_available(self) -> bool:
        return self.src_file.is_file() and self.tgt_file.is_file()
