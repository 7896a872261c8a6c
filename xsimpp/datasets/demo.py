"""The embedded demo corpus (xsimpp/data/demo): written by the xsimpp team, 4 languages, with its own
hand-checked xsim++ augmented English, so the main job runs on a fresh machine with no download."""

from __future__ import annotations

from pathlib import Path

from ..paths import repo_data_dir
from .base import Dataset


class Demo(Dataset):
    name = "demo"
    title = "The demo corpus"
    description = "Embedded demo corpus: eng/deu/fra/spa, 120 lines, with hand-written xsim++ negatives"
    splits = ("dev",)
    default_target = "eng_Latn"
    folders = ("demo",)
    pool_sources = {}  # 120 lines written for the demo and tests, not text a miner meets
    download_hint = "it ships inside the xsimpp package (xsimpp/data/demo); reinstall xsimpp"

    def data_roots(self) -> list[Path]:
        return [repo_data_dir()]  # the project's own data; --data-dir does not apply

    def holds_data(self, folder: Path) -> bool:
        return any(folder.glob(f"*.{self.split}"))

    def languages(self) -> list[str]:
        return sorted(p.name.rsplit(".", 1)[0] for p in self.root().glob(f"*.{self.split}"))

    def file(self, code: str, partner: str | None = None) -> Path:
        return self.root() / f"{code}.{self.split}"
