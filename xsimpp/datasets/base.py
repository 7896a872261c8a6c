"""What every dataset loader shares: the records (``Bitext``, ``AugmentedTargets``) and ``Dataset``,
the one base class of the loaders that give bitexts.

A dataset is one small file: a ``Dataset`` subclass declaring its layout, plus one line in
``DATASETS`` (xsimpp/datasets/__init__.py). The subclass fulfils this contract:

* class attributes: ``name`` (registry key, recorded in results), ``title`` (how messages name
  it), ``description`` (one line for ``xsimpp datasets``), ``splits`` (the last is the default),
  ``default_target``, ``folders`` (where below a data root it may sit, in order),
  ``download_hint`` (how to get it), ``english_pivot = True`` when every pair is
  <language>-English with an English file of its own per language (Tatoeba), and
  ``pool_sources`` when its distractor-pool sources are not the default one per split;
* ``holds_data(folder)``: whether a candidate folder holds the data of ``self.split``;
* ``languages()``: the codes offered (English excluded for English-pivot datasets);
* ``file(code, partner)``: the file of a resolved code's sentences (``partner``, the other side
  of the pair, matters only to English-pivot datasets);
* optionally ``read(path, code)`` for files that are not one sentence per line, and
  ``augmented_dirs()`` for xsim++ targets kept elsewhere than ``<split>_augmented`` beside the data.

The base class does the rest the same way for every dataset: split validation, the search for
the data (under --data-dir, then $XSIMPP_DATA_DIR, then the user data dir: ``data_roots()``),
one-sentence errors for missing data, language resolution, ``sources_for`` (``--langs all``), ``path``, ``sentences``, ``bitext``,
``augmented_dirs``, ``is_available`` and ``pool_files`` (a side's files for the distractor pool,
xsimpp/datasets/pool.py, which reads them as plain text). BUCC (bucc.py) gives id-tagged mining
splits rather than bitexts, so it is not a ``Dataset``; it shares only the data search
(``find_folders``, ``data_not_found``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Sequence

from ..errors import BadInputError, MissingResourceError
from ..paths import data_dirs
from ..textio import check_input_file, parse_json, read_bytes, read_lines
from .languages import UnknownLanguageError, resolve_language

ENGLISH_CODES = ("eng", "eng_Latn", "en")  # what English-pivot datasets accept for their "eng"
ENGLISH = "eng_Latn"


def _names_language(code: str, target: str) -> bool:
    """Whether a dataset's own ``code`` (NTREX ``swa``, Tatoeba ``fra``) is FLORES-200 ``target``;
    a code of no one FLORES-200 language (Tatoeba's ``cmn``, NTREX's ``eng-GB``) is none."""
    try:
        return resolve_language(code) == target
    except UnknownLanguageError:
        return False


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
    # How the negatives were made, from the sidecar beside them: "strict" or "paper" (`xsimpp
    # augment`), LASER_PUBLISHED (LASER's own files, `xsimpp download laser_xsimpp`); "unrecorded"
    # without one (e.g. LASER's files copied by hand).
    style: str = "unrecorded"
    # The sidecar itself ({} without one): a non-English target's says which categories it has and
    # which generator made them (`xsimpp augment --lang`), and xsim++ signatures name both.
    meta: dict = field(default_factory=dict, repr=False)

    @property
    def categories(self) -> tuple[str, ...]:
        """The error types these negatives were built for: the sidecar's, else the paper's three."""
        info = self.meta.get("info")
        cats = info.get("categories") if isinstance(info, dict) else None
        return tuple(cats) if isinstance(cats, list) and cats else KNOWN_ERRTYPES

    @property
    def generator(self) -> str | None:
        """The strict generator that built these negatives ("strict-1" for an English strict build
        that predates the record); None for the paper style and LASER's files (one version each)."""
        info = self.meta.get("info")
        recorded = info.get("generator") if isinstance(info, dict) else None
        if recorded is not None:
            return str(recorded)
        return "strict-1" if self.style == "strict" else None

    @property
    def current_generator(self) -> str:
        """The strict generator this version builds for this target language."""
        return STRICT_GENERATOR if self.lang == "eng_Latn" else TARGET_GENERATOR

    def stale(self) -> bool:
        """Built by another strict generator than the one this version builds."""
        return self.generator is not None and self.generator != self.current_generator

    def signature_view(self) -> dict[str, str]:
        """What an xsim++ signature adds for negatives whose generator is recorded (strict builds): its
        version, the categories they have and the causality rules' version (older English builds and
        the paper style add nothing)."""
        info = self.meta.get("info")
        if not isinstance(info, dict) or "generator" not in info:
            return {}
        view = {"negatives_generator": str(info["generator"]), "negatives_categories": "+".join(self.categories)}
        if info.get("causality_rules"):
            view["negatives_causality_rules"] = str(info["causality_rules"])
        return view

    @property
    def checksum(self) -> str:
        h = hashlib.sha256(text_checksum(self.lines).encode())
        h.update(json.dumps(self.errtypes, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        return h.hexdigest()

    def check_sources(self, originals: Sequence[str], where: str) -> None:
        """Every variant's ``src`` is one of ``originals`` (the gold targets): else the augmented
        data belongs to another corpus and would count its hits as Misaligned."""
        orig = {o.strip() for o in originals}
        foreign = [ln for ln in self.lines if self.errtypes[ln.strip()]["src"].strip() not in orig]
        if foreign:
            raise BadInputError(
                f"{len(foreign)} of {len(self.lines)} augmented {self.lang} lines were made from sentences that are not "
                f"in {where} (e.g. {foreign[0][:60]!r}); is the augmented folder of another corpus or split?")

    def category_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for ln in self.lines:
            cat = self.errtypes.get(ln.strip(), {}).get("errtype", "unlabelled")
            counts[cat] = counts.get(cat, 0) + 1
        return dict(sorted(counts.items()))


# The style sidecar's name for LASER's published xsim++ negatives: the xSIM++ paper's own files.
# The styles of xsim++ negatives `xsimpp augment` builds (the default first): "strict" (typed, fluent,
# true negatives) and "paper" (the xSIM++ paper's text). Stated here, with the format that records
# them, so the writer (augment), the readers (tasks) and the study name the same ones.
STYLES = ("strict", "paper")
LASER_PUBLISHED = "laser-published"
# The strict generators' versions, in every sidecar `xsimpp augment` writes (bump when a generator's
# output changes): ``--augmented auto`` passes over a build of an older one, so no result rests on
# negatives this version would not make. English sidecars of before 0.7 record none: "strict-1".
STRICT_GENERATOR = "strict-2"  # English (strict-2: a bare year-shaped number moves as a year, by <= 30)
TARGET_GENERATOR = "xlang-3"  # every other target language (xlang-3: likewise)


def augmented_file_names(lang: str, split: str) -> tuple[str, str]:
    return f"{lang}_augmented.{split}", f"{lang}_errtype.{split}.json"


def augmented_meta(directory: str | Path, lang: str, split: str) -> dict:
    """The sidecar ``<lang>_augmented.<split>.meta.json`` (``{}`` without one)."""
    path = Path(directory) / f"{augmented_file_names(lang, split)[0]}.meta.json"
    if not path.is_file():
        return {}
    meta = parse_json(read_bytes(path), path)
    if not isinstance(meta, dict):
        raise BadInputError(f"{path} is not a JSON object; rebuild it with `xsimpp augment`")
    return meta


def augmented_style(directory: str | Path, lang: str, split: str) -> str:
    """The style recorded in ``<lang>_augmented.<split>.meta.json`` ("unrecorded" without one)."""
    path = Path(directory) / f"{augmented_file_names(lang, split)[0]}.meta.json"
    if not path.is_file():
        return "unrecorded"
    style = augmented_meta(directory, lang, split).get("style")
    if not isinstance(style, str) or not style:
        raise BadInputError(f"{path} has no 'style'; rebuild it with `xsimpp augment`")
    return style


KNOWN_ERRTYPES = ("causality", "entity", "number")  # the xsim++ paper's transformations (LASER, `xsimpp augment`)


def check_errtypes(errtypes: Any, lines: Sequence[str], where: str, allow: Iterable[str] = ()) -> dict:
    """An errtype map checked against the augmented lines it describes: a JSON object of
    ``{variant: {"src": original, "errtype": name}}`` with string values, an entry for every
    line, and known type names (``allow`` adds names, case-insensitively). Returns the map."""
    shape = "{augmented sentence: {'src': original sentence, 'errtype': name}}"
    if not isinstance(errtypes, dict):
        raise BadInputError(f"{where}: expected a JSON object {shape}, got a JSON {type(errtypes).__name__}")
    for key, v in errtypes.items():
        if not (isinstance(v, dict) and isinstance(v.get("src"), str) and isinstance(v.get("errtype"), str)):
            raise BadInputError(f"{where}: the entry for {key[:60]!r} is not {{'src': text, 'errtype': text}} "
                                f"but {json.dumps(v, ensure_ascii=False)[:60]}")
    missing = [i for i, ln in enumerate(lines) if ln.strip() not in errtypes]
    if missing:
        i = missing[0]
        raise BadInputError(f"{where} describes only {len(lines) - len(missing)} of the {len(lines)} augmented lines "
                            f"(line {i + 1}, {lines[i][:60]!r}, has no entry); was it written for another text?")
    allowed = {t.lower() for t in (*KNOWN_ERRTYPES, *allow)}
    unknown = sorted({v["errtype"] for v in errtypes.values() if v["errtype"].lower() not in allowed})
    if unknown:
        raise BadInputError(f"{where} uses unknown error type(s) {', '.join(map(repr, unknown[:5]))}; known: "
                            f"{', '.join(KNOWN_ERRTYPES)} (accept a new one with --allow-errtype {unknown[0]})")
    return errtypes


def load_augmented(directory: str | Path, lang: str = "eng_Latn", split: str = "devtest",
                   allow_errtypes: Iterable[str] = ()) -> AugmentedTargets:
    """Read LASER-format augmented targets from ``directory``; malformed files are clear errors."""
    d = Path(directory)
    text_name, json_name = augmented_file_names(lang, split)
    text_path, json_path = d / text_name, d / json_name
    missing = [p.name for p in (text_path, json_path) if not p.is_file()]
    if missing:
        raise MissingResourceError(
            f"Augmented {lang} {split} data not found in {d} (missing {', '.join(missing)}); "
            f"build it with `xsimpp augment`, or for FLORES-200 English fetch LASER's published ones with "
            f"`xsimpp download laser_xsimpp`"
        )
    lines = read_lines(text_path)
    errtypes = read_errtypes(json_path, lines, allow_errtypes)
    return AugmentedTargets(lang, split, lines, errtypes, d, augmented_style(d, lang, split),
                            augmented_meta(d, lang, split))


def read_errtypes(path: str | Path, lines: Sequence[str], allow: Iterable[str] = ()) -> dict:
    """Read an errtype JSON file and check it against its augmented lines (``check_errtypes``)."""
    errtypes = parse_json(read_bytes(check_input_file(path, "errtype JSON")), path)
    return check_errtypes(errtypes, lines, str(path), allow)


def find_folders(roots: Iterable[Path], folders: Iterable[str], holds_data: Callable[[Path], bool]) -> list[Path]:
    """Every ``root/folder`` (resolved, each once) for which ``holds_data`` is true, roots first."""
    folders = tuple(folders)
    found: list[Path] = []
    for root in roots:
        for folder in folders:
            cand = (root / folder).resolve()
            if cand not in found and holds_data(cand):
                found.append(cand)
    return found


def data_not_found(what: str, roots: Iterable[Path], hint: str) -> MissingResourceError:
    looked = ", ".join(str(r) for r in roots)
    return MissingResourceError(f"{what} not found (looked under {looked}); {hint}")


class Dataset:
    """A set of line-aligned sentence files, one split at a time; see the module docstring."""

    name: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str]
    splits: ClassVar[tuple[str, ...]]
    default_target: ClassVar[str]
    folders: ClassVar[tuple[str, ...]] = (".",)
    download_hint: ClassVar[str] = ""
    english_pivot: ClassVar[bool] = False
    # The distractor-pool sources (xsimpp/datasets/pool.py) this dataset's splits are: source name ->
    # split. None: every split, named "<name>" in a one-split dataset, else "<name>-<split>";
    # declared where a source keeps an older name or a split is no distractor text ({}: none).
    pool_sources: ClassVar[dict[str, str] | None] = None

    def __init__(self, split: str | None = None, data_dir: str | os.PathLike | None = None, *,
                 roots: Sequence[Path] | None = None):
        """``roots``: search exactly these data roots rather than ``data_dirs(data_dir)`` (the
        distractor pool takes a source from the first of its roots that has it)."""
        split = self.splits[-1] if split is None else split
        if split not in self.splits:
            have = f"splits {', '.join(self.splits)}" if len(self.splits) > 1 else f"only the '{self.splits[0]}' split"
            raise MissingResourceError(f"{self.title} has {have}, not '{split}'")
        self.split = split
        self.data_dir = data_dir
        self.search_roots = None if roots is None else list(roots)

    # -- where the data is ------------------------------------------------------------------

    def data_roots(self) -> list[Path]:
        return data_dirs(self.data_dir) if self.search_roots is None else list(self.search_roots)

    def holds_data(self, folder: Path) -> bool:
        """Whether ``folder`` (one of ``folders`` below a data root) holds this split's data."""
        raise NotImplementedError

    def roots(self) -> list[Path]:
        """Every folder holding this split, in priority order."""
        return find_folders(self.data_roots(), self.folders, self.holds_data)

    def root(self) -> Path:
        roots = self.roots()
        if not roots:
            raise self.missing(f"{self.title} {self.split} data")
        return roots[0]

    def missing(self, what: str) -> MissingResourceError:
        return data_not_found(what, self.data_roots(), self.download_hint)

    def is_available(self) -> bool:
        return bool(self.roots())

    def augmented_dirs(self) -> list[Path]:
        """Where ``--augmented auto`` looks: ``<split>_augmented`` beside the data (LASER's layout).
        English-pivot datasets have no one target side to augment: nowhere."""
        if self.english_pivot:
            return []
        return [root / f"{self.split}_augmented" for root in self.roots()]

    # -- languages and files ----------------------------------------------------------------

    def languages(self) -> list[str]:
        """The codes this dataset offers (English-pivot datasets: the languages paired with English)."""
        raise NotImplementedError

    def resolve(self, code: str) -> str:
        """The dataset's own code for a user's code (``kea`` -> ``kea_Latn``), else UnknownLanguageError."""
        if self.english_pivot and code in ENGLISH_CODES:
            return "eng"
        return resolve_language(code, self.languages())

    def sources_for(self, target: str, exclude: Iterable[str] = ()) -> list[str]:
        """Every language of the dataset that can be scored against ``target`` (``--langs all``), in
        its own codes: all but the target and ``exclude`` (any codes ``resolve`` takes)."""
        tgt = self.resolve(target)
        left_out = {tgt}
        for code in exclude:
            try:
                left_out.add(self.resolve(code))
            except UnknownLanguageError as e:
                raise UnknownLanguageError(f"--exclude: {e}") from None
        codes = [c for c in self.languages() if c not in left_out]
        if not codes:
            raise BadInputError(f"--exclude leaves no language of {self.title} to score against {tgt}")
        return codes

    def file(self, code: str, partner: str | None) -> Path:
        """The file holding resolved ``code``'s side; ``partner`` is the other side's code, if known."""
        raise NotImplementedError

    def pool_files(self, target: str) -> list[Path]:
        """The files of this split holding ``target``'s sentences (a FLORES-200 code), sorted, for the
        distractor pool: the file of every code of the dataset that resolves to ``target`` (an
        English-pivot dataset's English side: the English file of each of its languages); none when
        the data or its ``target`` side is not here."""
        if not self.is_available():
            return []
        if self.english_pivot and target == ENGLISH:
            sides = [("eng", xx) for xx in self.languages()]
        else:
            partner = "eng" if self.english_pivot else None
            sides = [(code, partner) for code in self.languages() if _names_language(code, target)]
        files: set[Path] = set()
        for code, partner in sides:
            try:
                files.add(self.file(code, partner))
            except MissingResourceError:  # a language the dataset knows but whose file is not here
                continue
        return sorted(f for f in files if f.is_file())

    def pair_language(self, code: str, partner: str | None) -> str:
        """English-pivot datasets: the non-English language of the pair that ``code``'s file is of."""
        xx = partner if code == "eng" else code
        if xx is None or xx == "eng":
            raise BadInputError(f"{self.title} has one English file per language; say which language it pairs with")
        return xx

    def read(self, path: Path, code: str) -> list[str]:
        """``code``'s sentences from ``path``: one a line, read strictly (``read_lines``)."""
        return read_lines(path)

    def path(self, lang: str, partner: str | None = None) -> Path:
        """``file`` for any code the user may give."""
        return self.file(self.resolve(lang), None if partner is None else self.resolve(partner))

    def sentences(self, lang: str, partner: str | None = None) -> list[str]:
        code = self.resolve(lang)
        return self.read(self.path(code, partner), code)

    def bitext(self, src_lang: str, tgt_lang: str | None = None) -> Bitext:
        s, t = self.resolve(src_lang), self.resolve(tgt_lang or self.default_target)
        if self.english_pivot and ("eng" not in (s, t) or s == t):
            raise MissingResourceError(f"{self.title} pairs every language with English only, not {s}-{t}")
        sp, tp = self.file(s, t), self.file(t, s)
        return Bitext(self.name, self.split, s, t, self.read(sp, s), self.read(tp, t), sp, tp)
