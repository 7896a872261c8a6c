"""The embedded demo corpus (data/demo): written by the xsimpp team, 4 languages, with its own
hand-checked xsim++ augmented English, so the main job runs on a fresh machine with no download."""

from __future__ import annotations

from pathlib import Path

from ..errors import MissingResourceError
from ..paths import repo_data_dir
from ..textio import read_lines
from .base import Bitext
from .languages import resolve_language


def demo_dir() -> Path:
    return repo_data_dir() / "demo"


class Demo:
    name = "demo"
    default_target = "eng_Latn"
    splits = ("dev",)

    def __init__(self, split: str = "dev", data_dir=None):
        if split not in self.splits:
            raise MissingResourceError(f"the demo corpus has only the 'dev' split, not '{split}'")
        self.split = split
        self.root = demo_dir()

    def languages(self) -> list[str]:
        return sorted(p.name.rsplit(".", 1)[0] for p in self.root.glob(f"*.{self.split}"))

    def resolve(self, code: str) -> str:
        return resolve_language(code, self.languages())

    def path(self, lang: str) -> Path:
        p = self.root / f"{self.resolve(lang)}.{self.split}"
        if not p.is_file():
            raise MissingResourceError(f"demo corpus file {p} is missing; reinstall xsimpp from a full checkout")
        return p

    def sentences(self, lang: str) -> list[str]:
        return read_lines(self.path(lang))

    def bitext(self, src_lang: str, tgt_lang: str) -> Bitext:
        sp, tp = self.path(src_lang), self.path(tgt_lang)
        return Bitext(self.name, self.split, self.resolve(src_lang), self.resolve(tgt_lang),
                      read_lines(sp), read_lines(tp), sp, tp)

    def augmented_dirs(self) -> list[Path]:
        return [self.root / f"{self.split}_augmented"]

    def is_available(self) -> bool:
        return self.root.is_dir() and bool(self.languages())
