"""FLORES-200 (NLLB Team 2022): 204 languages, multi-way parallel, dev (997) and devtest (1012).

Accepted layouts under a data root: the official ``flores200_dataset/<split>/<code>.<split>``,
the flat ``flores200/<split>/<code>.<split>``, or the root being that folder itself. A file is
taken from the first such folder that has it.
"""

from __future__ import annotations

from pathlib import Path

from ..paths import augmented_dir
from .base import Dataset
from .languages import FLORES200_CODES


class Flores200(Dataset):
    name = "flores200"
    title = "FLORES-200"
    description = "FLORES-200: 204 languages, multi-way parallel; splits dev (997), devtest (1012)"
    splits = ("dev", "devtest")
    default_target = "eng_Latn"
    folders = ("flores200", "flores200_dataset", "flores-200", ".")
    # dev only: devtest is what xsim, xsim++ and the mining gold score, so never a distractor
    pool_sources = {"flores200-dev": "dev"}
    download_hint = (
        "fetch it with `xsimpp download flores200` (or unpack flores200_dataset.tar.gz, "
        "https://github.com/facebookresearch/flores/tree/main/flores200, under a data root given by --data-dir "
        "or XSIMPP_DATA_DIR)"
    )

    def holds_data(self, folder: Path) -> bool:
        return (folder / self.split).is_dir()

    def languages(self) -> list[str]:
        return list(FLORES200_CODES)

    def file(self, code: str, partner: str | None = None) -> Path:
        name = f"{code}.{self.split}"
        for root in self.roots():
            if (root / self.split / name).is_file():
                return root / self.split / name
        raise self.missing(f"FLORES-200 {self.split} file {name}")

    def augmented_dirs(self) -> list[Path]:
        """LASER's layout beside the split, then where `xsimpp augment` writes."""
        return super().augmented_dirs() + [augmented_dir() / self.name / f"{self.split}_augmented"]


def flores_file(lang: str, split: str, data_dir=None) -> Path:
    """Path of ``<lang>.<split>``; ``lang`` may be any code ``resolve_language`` accepts."""
    return Flores200(split, data_dir).path(lang)
