"""Tatoeba test sets in LASER's layout (Artetxe & Schwenk 2019): ``tatoeba.<xxx>-eng.{xxx,eng}``,
up to 1000 pairs per language; each language has its own English side, which repeats sentences.
Also ``ParallelFiles``: any two line-aligned files the user brings."""

from __future__ import annotations

from pathlib import Path

from ..errors import BadInputError, MissingResourceError
from .base import Bitext, Dataset


class TatoebaV1(Dataset):
    name = "tatoeba"
    title = "Tatoeba v1"
    description = "Tatoeba v1 (LASER layout): 112 languages paired with English, <=1000 pairs each"
    splits = ("test",)
    default_target = "eng"
    folders = ("tatoeba/v1", "tatoeba", "LASER/data/tatoeba/v1", ".")
    download_hint = (
        "get LASER's data/tatoeba/v1 folder (https://github.com/facebookresearch/LASER/tree/main/data/tatoeba/v1) "
        "and put it at <data root>/tatoeba/v1 (data root: --data-dir or XSIMPP_DATA_DIR)"
    )
    english_pivot = True

    def holds_data(self, folder: Path) -> bool:
        return any(folder.glob("tatoeba.*-eng.eng"))

    def languages(self) -> list[str]:
        return sorted(p.name.split(".")[1].split("-")[0] for p in self.root().glob("tatoeba.*-eng.eng"))

    def file(self, code: str, partner: str | None) -> Path:
        return self.root() / f"tatoeba.{self.pair_language(code, partner)}-eng.{code}"


class ParallelFiles(Dataset):
    """Any two line-aligned files the user brings (``--src-file``/``--tgt-file``): no data root,
    any split name, the two sides named by ``src_lang``/``tgt_lang``."""

    name = "parallel"
    title = "parallel files"
    description = "two line-aligned files given by --src-file/--tgt-file"
    default_target = "tgt"

    def __init__(self, src_file: str | Path, tgt_file: str | Path, src_lang: str = "src", tgt_lang: str = "tgt",
                 split: str = "custom", name: str | None = None):
        if name is not None:  # an explicit corpus name keys its results (else the data checksum does)
            if not name.strip() or "/" in name or "|" in name:
                raise BadInputError(f"--name {name!r} must be a non-empty name without '/' or '|'")
            self.name = name
        self.src_file, self.tgt_file = Path(src_file), Path(tgt_file)
        self.src_lang, self.tgt_lang, self.split = src_lang, tgt_lang, split
        self.data_dir, self.search_roots = None, None

    def languages(self) -> list[str]:
        return [self.src_lang, self.tgt_lang]

    def resolve(self, code: str) -> str:
        if code not in self.languages():
            raise MissingResourceError(f"parallel files hold {self.src_lang} and {self.tgt_lang}, not '{code}'")
        return code

    def file(self, code: str, partner: str | None = None) -> Path:
        return {self.src_lang: self.src_file, self.tgt_lang: self.tgt_file}[code]

    def bitext(self, src_lang: str | None = None, tgt_lang: str | None = None) -> Bitext:
        """Default: the files' own direction; given only ``src_lang``, the other side is the target."""
        s = src_lang or self.src_lang
        return super().bitext(s, tgt_lang or (self.tgt_lang if s == self.src_lang else self.src_lang))

    def augmented_dirs(self) -> list[Path]:
        return [self.tgt_file.parent]

    def is_available(self) -> bool:
        return self.src_file.is_file() and self.tgt_file.is_file()
