"""Tatoeba Translation Challenge test sets (Tiedemann 2020), the OPUS-MT-testsets layout:
``testsets/<a>-<b>/tatoeba-test-<version>.<a|b>`` (+ ``.labels`` with per-line language variants),
folder names in alphabetical order (``afr-eng``, ``eng-fra``). Every pair with English is
offered as a language; ``fur`` also comes from ``data-test-eng-fur/test.txt`` (TSV: eng, fur,
English, Friulian) when that file is present and no folder exists."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import BadInputError, MissingResourceError
from ..paths import data_dirs
from ..textio import read_lines
from .base import Bitext
from .languages import resolve_language

FOLDERS = ("tatoeba-challenge", "tatoeba-challenge/data", ".")
DOWNLOAD_HINT = (
    "get the Tatoeba Challenge test sets (https://github.com/Helsinki-NLP/Tatoeba-Challenge, or the "
    "testsets/ folder of Helsinki-NLP/OPUS-MT-testsets) and put them at <data root>/tatoeba-challenge/testsets "
    "(data root: --data-dir or XSIMPP_DATA_DIR)"
)
_FILE = re.compile(r"^tatoeba-test-(v[0-9-]+)\.([A-Za-z_]+)$")


def challenge_root(data_dir=None) -> Path:
    for root in data_dirs(data_dir):
        for folder in FOLDERS:
            cand = root / folder / "testsets"
            if cand.is_dir() and (any(cand.glob("*-eng")) or any(cand.glob("eng-*"))):
                return cand.resolve().parent
    looked = ", ".join(str(r) for r in data_dirs(data_dir))
    raise MissingResourceError(f"Tatoeba Challenge test sets not found (looked under {looked}); {DOWNLOAD_HINT}")


class TatoebaChallenge:
    name = "tatoeba-challenge"
    default_target = "eng"
    splits = ("test",)

    def __init__(self, split: str = "test", data_dir=None):
        if split not in self.splits:
            raise MissingResourceError(f"The Tatoeba Challenge offers only the 'test' split here, not '{split}'")
        self.split = split
        self.data_dir = data_dir
        self._index: dict[str, tuple[Path, Path, str]] | None = None

    def _scan(self) -> dict[str, tuple[Path, Path, str]]:
        """lang -> (its file, the English file, version). The newest version wins if several."""
        if self._index is not None:
            return self._index
        root = challenge_root(self.data_dir)
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
        fur = root / "data-test-eng-fur" / "test.txt"
        if "fur" not in index and fur.is_file():
            index["fur"] = (fur, fur, "data-test-eng-fur")
        self._index = index
        return index

    def languages(self) -> list[str]:
        return sorted(self._scan())

    def resolve(self, code: str) -> str:
        if code in ("eng", "eng_Latn", "en"):
            return "eng"
        return resolve_language(code, self.languages())

    def version(self, lang: str) -> str:
        return self._scan()[self.resolve(lang)][2]

    def _read(self, xx: str) -> tuple[list[str], list[str], Path, Path]:
        xx_path, eng_path, version = self._scan()[xx]
        if version == "data-test-eng-fur":
            eng, fur = [], []
            for i, line in enumerate(read_lines(xx_path), 1):
                cols = line.split("\t")
                if len(cols) != 4 or cols[:2] != ["eng", "fur"]:
                    raise BadInputError(f"{xx_path}: line {i} is not 'eng<TAB>fur<TAB>English<TAB>Friulian'")
                eng.append(cols[2])
                fur.append(cols[3])
            return fur, eng, xx_path, eng_path
        return read_lines(xx_path), read_lines(eng_path), xx_path, eng_path

    def labels(self, lang: str) -> list[str] | None:
        """Per-line language variant of ``lang``'s side (e.g. ``cmn_Hans``, ``yue_Hant``), if given."""
        xx = self.resolve(lang)
        path = Path(str(self._scan()[xx][0]) + ".labels")
        return read_lines(path) if path.is_file() else None

    def bitext(self, src_lang: str, tgt_lang: str = "eng") -> Bitext:
        s, t = self.resolve(src_lang), self.resolve(tgt_lang)
        if "eng" not in (s, t) or s == t:
            raise MissingResourceError(f"Only pairs with English are offered here, not {s}-{t}")
        xx = t if s == "eng" else s
        xx_lines, eng_lines, xx_path, eng_path = self._read(xx)
        sides = {xx: (xx_lines, xx_path), "eng": (eng_lines, eng_path)}
        return Bitext(self.name, self.split, s, t, sides[s][0], sides[t][0], sides[s][1], sides[t][1])

    def augmented_dirs(self) -> list[Path]:
        return []

    def is_available(self) -> bool:
        try:
            challenge_root(self.data_dir)
            return True
        except MissingResourceError:
            return False
