"""Tatoeba Translation Challenge test sets (Tiedemann 2020), the OPUS-MT-testsets layout:
``testsets/<a>-<b>/tatoeba-test-<version>.<a|b>`` (+ ``.labels`` with per-line language variants),
folder names in alphabetical order (``afr-eng``, ``eng-fra``). Every pair with English is
offered as a language; ``fur`` also comes from ``data-test-eng-fur/test.txt`` (TSV: eng, fur,
English, Friulian) when that file is present and no folder exists."""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from ..errors import BadInputError
from ..textio import read_lines
from .base import Dataset

_FILE = re.compile(r"^tatoeba-test-(v[0-9-]+)\.([A-Za-z_]+)$")
FUR_TSV = ("data-test-eng-fur", "test.txt")


class TatoebaChallenge(Dataset):
    name = "tatoeba-challenge"
    title = "Tatoeba Challenge"
    description = "Tatoeba Translation Challenge test sets: pairs with English, variant labels"
    splits = ("test",)
    default_target = "eng"
    folders = ("tatoeba-challenge", "tatoeba-challenge/data", ".")
    download_hint = (
        "get the Tatoeba Challenge test sets (https://github.com/Helsinki-NLP/Tatoeba-Challenge, or the "
        "testsets/ folder of Helsinki-NLP/OPUS-MT-testsets) and put them at <data root>/tatoeba-challenge/testsets "
        "(data root: --data-dir or XSIMPP_DATA_DIR)"
    )
    english_pivot = True

    def holds_data(self, folder: Path) -> bool:
        sets = folder / "testsets"
        return sets.is_dir() and (any(sets.glob("*-eng")) or any(sets.glob("eng-*")))

    @cached_property
    def _files(self) -> dict[str, tuple[Path, Path, str]]:
        """lang -> (its file, the English file, version). The newest version wins if several."""
        root = self.root()
        index: dict[str, tuple[Path, Path, str]] = {}
        for d in sorted((root / "testsets").iterdir()):
            a, sep, b = d.name.partition("-")
            if not d.is_dir() or not sep or "eng" not in (a, b) or a == b:
                continue
            xx = b if a == "eng" else a
            versions: dict[str, set[str]] = {}
            for f in d.iterdir():
                m = _FILE.match(f.name)
                if m:
                    versions.setdefault(m.group(1), set()).add(m.group(2))
            usable = sorted(v for v, langs in versions.items() if {xx, "eng"} <= langs)
            if usable:
                v = usable[-1]  # version strings are ISO dates: the lexically last is the newest
                index[xx] = (d / f"tatoeba-test-{v}.{xx}", d / f"tatoeba-test-{v}.eng", v)
        fur = root.joinpath(*FUR_TSV)
        if "fur" not in index and fur.is_file():
            index["fur"] = (fur, fur, FUR_TSV[0])
        return index

    def languages(self) -> list[str]:
        return sorted(self._files)

    def version(self, lang: str) -> str:
        return self._files[self.resolve(lang)][2]

    def file(self, code: str, partner: str | None) -> Path:
        xx_path, eng_path, _ = self._files[self.pair_language(code, partner)]
        return eng_path if code == "eng" else xx_path

    def read(self, path: Path, code: str) -> list[str]:
        """One side; the eng-fur TSV holds both, English in column 3 and Friulian in column 4."""
        if path.parts[-2:] != FUR_TSV:
            return read_lines(path)
        side = []
        for i, line in enumerate(read_lines(path), 1):
            cols = line.split("\t")
            if len(cols) != 4 or cols[:2] != ["eng", "fur"]:
                raise BadInputError(f"{path}: line {i} is not 'eng<TAB>fur<TAB>English<TAB>Friulian'")
            side.append(cols[3] if code == "fur" else cols[2])
        return side

    def pool_files(self, target: str) -> list[Path]:
        """The test set files only: the eng-fur TSV is two columns of a line, not a side the pool can read."""
        return [f for f in super().pool_files(target) if f.parts[-2:] != FUR_TSV]

    def labels(self, lang: str) -> list[str] | None:
        """Per-line language variant of ``lang``'s side (e.g. ``cmn_Hans``, ``yue_Hant``), if given."""
        path = Path(str(self._files[self.resolve(lang)][0]) + ".labels")
        return read_lines(path) if path.is_file() else None
