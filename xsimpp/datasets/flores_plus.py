"""FLORES+ (openlanguagedata/flores_plus, the OLDI-maintained continuation of FLORES-200): one
parquet file per language variety and split, ``<split>/<code>.parquet`` (``dev/eng_Latn.parquet``),
with the columns ``id`` (1-based sentence number), ``iso_639_3``, ``iso_15924``, ``glottocode``,
``text`` (the sentence) and metadata (``url``, ``domain``, ``topic``, ``has_image``,
``has_hyperlink``, ``last_updated``). Splits dev (997 sentences) and devtest (1012).

Sentences are read in ``id`` order; a file must hold one variety (one ``iso_639_3``/``iso_15924``
pair matching its name) and no empty sentence. Reading needs pyarrow (``xsimpp[flores-plus]``).
FLORES+ corrects and renames some FLORES-200 files (e.g. ``cmn_Hans``), so its records are
``flores_plus``'s, never compared with ``flores200``'s (their data checksums differ anyway).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import BadInputError, MissingResourceError
from ..paths import augmented_dir
from .base import Dataset


class FloresPlus(Dataset):
    name = "flores_plus"
    title = "FLORES+"
    description = "FLORES+ (parquet, openlanguagedata/flores_plus): ~220 varieties; splits dev (997), devtest (1012)"
    splits = ("dev", "devtest")
    default_target = "eng_Latn"
    folders = ("flores_plus", "flores-plus", "floresp", ".")
    pool_sources = {}  # FLORES-200's sentences again (flores200-dev is the pool's), in parquet
    download_hint = ("fetch it with `xsimpp download flores_plus --langs kea,fur` (gated: set HF_TOKEN to a Hugging "
                     "Face token of an account that accepted its terms), or put <split>/<code>.parquet files under "
                     "<data root>/flores_plus")

    def holds_data(self, folder: Path) -> bool:
        return (folder / self.split).is_dir() and any((folder / self.split).glob("*.parquet"))

    def languages(self) -> list[str]:
        roots = self.roots()
        if not roots:  # say the data is missing, not that every language code is unknown
            raise self.missing(f"FLORES+ {self.split} data")
        return sorted({p.stem for root in roots for p in (root / self.split).glob("*.parquet")})

    def file(self, code: str, partner: str | None = None) -> Path:
        for root in self.roots():
            if (root / self.split / f"{code}.parquet").is_file():
                return root / self.split / f"{code}.parquet"
        raise self.missing(f"FLORES+ {self.split} file {code}.parquet")

    def read(self, path: Path, code: str) -> list[str]:
        try:
            import pyarrow  # noqa: F401  (pandas' parquet engine)
        except ImportError:
            raise MissingResourceError("reading FLORES+ parquet files needs pyarrow: pip install 'xsimpp[flores-plus]'"
                                       ) from None
        import pandas as pd

        try:
            df = pd.read_parquet(path)
        except (OSError, ValueError) as e:
            raise BadInputError(f"{path} is not a readable parquet file ({str(e).splitlines()[0][:120]})") from None
        if "text" not in df.columns:
            raise BadInputError(f"{path} has no 'text' column (columns: {', '.join(map(str, df.columns))}); "
                                "is it a FLORES+ file?")
        lang, _, script = code.partition("_")
        for col, want in (("iso_639_3", lang), ("iso_15924", script)):
            if col in df.columns:
                seen = sorted(set(map(str, df[col])))
                if seen != [want]:
                    raise BadInputError(f"{path} holds {col} {', '.join(seen[:3])}, but its name says {want}")
        if "id" in df.columns:
            df = df.sort_values("id", kind="stable")
        texts = [str(t) if t is not None else "" for t in df["text"]]
        empty = [i + 1 for i, t in enumerate(texts) if not t.strip()]
        if empty:
            raise BadInputError(f"{path} has {len(empty)} empty sentence(s) (row {empty[0]}); every row must hold one")
        if any("\n" in t for t in texts):
            raise BadInputError(f"{path}: a sentence spans several lines; FLORES+ sentences are single lines")
        return texts

    def augmented_dirs(self) -> list[Path]:
        """LASER's layout beside the split, then where `xsimpp augment` would write for this dataset."""
        return super().augmented_dirs() + [augmented_dir() / self.name / f"{self.split}_augmented"]
