"""Dataset records shared by every loader: a bitext pair and the xsim++ augmented targets."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..errors import BadInputError, MissingResourceError
from ..textio import read_lines


def text_checksum(lines: Sequence[str]) -> str:
    """sha256 over the lines joined by newlines (the file content without BOM/CR variants)."""
    h = hashlib.sha256()
    for ln in lines:
        h.update(ln.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


@dataclass(frozen=True)
class Bitext:
    """Line-aligned sentences: ``src[i]`` translates ``tgt[i]``."""

    dataset: str
    split: str
    src_lang: str
    tgt_lang: str
    src: list[str]
    tgt: list[str]
    src_path: Path | None = None
    tgt_path: Path | None = None

    def __post_init__(self) -> None:
        if len(self.src) != len(self.tgt):
            raise BadInputError(
                f"{self.dataset}/{self.split}: {self.src_lang} has {len(self.src)} lines but {self.tgt_lang} "
                f"has {len(self.tgt)} ({self.src_path or ''} vs {self.tgt_path or ''}); the files must be line-aligned"
            )
        if not self.src:
            raise BadInputError(f"{self.dataset}/{self.split}: {self.src_lang}-{self.tgt_lang} is empty")

    @property
    def checksum(self) -> str:
        h = hashlib.sha256()
        h.update(text_checksum(self.src).encode())
        h.update(text_checksum(self.tgt).encode())
        return h.hexdigest()

    def __len__(self) -> int:
        return len(self.src)


@dataclass(frozen=True)
class AugmentedTargets:
    """xsim++ hard negatives for one target language, in LASER's file format.

    ``lines``: ``<lang>_augmented.<split>``; ``errtypes``: ``<lang>_errtype.<split>.json`` mapping
    each augmented sentence to ``{"src": original sentence, "errtype": category}``.
    """

    lang: str
    split: str
    lines: list[str]
    errtypes: dict[str, dict[str, str]] = field(repr=False)
    directory: Path | None = None

    @property
    def checksum(self) -> str:
        h = hashlib.sha256(text_checksum(self.lines).encode())
        h.update(json.dumps(self.errtypes, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        return h.hexdigest()

    def category_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for ln in self.lines:
            cat = self.errtypes.get(ln.strip(), {}).get("errtype", "unlabelled")
            counts[cat] = counts.get(cat, 0) + 1
        return dict(sorted(counts.items()))


def augmented_file_names(lang: str, split: str) -> tuple[str, str]:
    return f"{lang}_augmented.{split}", f"{lang}_errtype.{split}.json"


def load_augmented(directory: str | Path, lang: str = "eng_Latn", split: str = "devtest") -> AugmentedTargets:
    """Read LASER-format augmented targets from ``directory``; malformed files are clear errors."""
    d = Path(directory)
    text_name, json_name = augmented_file_names(lang, split)
    text_path, json_path = d / text_name, d / json_name
    missing = [p.name for p in (text_path, json_path) if not p.is_file()]
    if missing:
        raise MissingResourceError(
            f"Augmented {lang} {split} data not found in {d} (missing {', '.join(missing)}); "
            f"build it with `xsimpp augment` or download LASER's published xsim++ files into that folder"
        )
    lines = read_lines(text_path)
    try:
        errtypes = json.loads(json_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInputError(f"{json_path} is not valid UTF-8 JSON: {e}") from None
    if not isinstance(errtypes, dict) or not all(
        isinstance(v, dict) and "src" in v and "errtype" in v for v in errtypes.values()
    ):
        raise BadInputError(f"{json_path}: expected {{augmented sentence: {{'src': ..., 'errtype': ...}}}}")
    return AugmentedTargets(lang, split, lines, errtypes, d)
