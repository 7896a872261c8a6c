"""The non-English xsim++ negatives of a FLORES-200 split built from the files on disk
(`xsimpp augment flores200 --lang L`, and the study's non-English target): the one place that
reads FLORES and NTREX for ``xsimpp.augment.target``, which only takes text (the augment package
sits below the datasets)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from ..augment.core import (CATEGORIES, DEFAULT_MAX_PER_CATEGORY, AugmentedSet, flores_augmented_dir, load_entity_pool,
                            write_laser_format)
from ..augment.target import ENGLISH, analyse_english, build_target_augmented, target_pool


def pool_corpora(lang: str, split: str, data_dir=None) -> dict:
    """Aligned (English, target) lines the target's entity pool is projected from: the other FLORES
    split and NTREX-128 where it has the language -- never the split being augmented."""
    from ..datasets.flores import flores_file
    from ..datasets.ntrex import Ntrex128
    from ..textio import read_lines

    other = "dev" if split == "devtest" else "devtest"
    corpora = {f"flores200/{other}": (read_lines(flores_file(ENGLISH, other, data_dir=data_dir)),
                                      read_lines(flores_file(lang, other, data_dir=data_dir)))}
    ntrex = Ntrex128("test", data_dir)
    if lang in ntrex.languages():
        corpora["ntrex128"] = (ntrex.sentences(ENGLISH), ntrex.sentences(lang))
    return corpora


def augment_flores_target(lang: str, split: str, *, data_dir=None, seed: int = 0,
                          categories: Optional[Iterable[str]] = None,
                          max_per_category: int = DEFAULT_MAX_PER_CATEGORY, out_dir=None,
                          progress: bool = False) -> tuple[AugmentedSet, Path]:
    """The strict negatives of a FLORES-200 split's `lang` side (``xsimpp augment flores200 --lang
    L``): the split's English analysed once, the entity pool projected from ``pool_corpora``,
    written in LASER's format to ``out_dir`` (default ``flores_augmented_dir(split, "strict")``,
    where ``--augmented auto`` finds them). Returns the set and the folder."""
    from ..datasets.flores import flores_file
    from ..textio import read_lines

    target = read_lines(flores_file(lang, split, data_dir=data_dir))
    english = read_lines(flores_file(ENGLISH, split, data_dir=data_dir))
    cats = list(categories) if categories is not None else list(CATEGORIES)
    analysis = analyse_english(english, [f"flores200/{split}"], progress=progress, categories=cats)
    items, pool_info = [], None
    if "entity" in cats:
        entries, _ = load_entity_pool()
        items, pool_info = target_pool(entries, pool_corpora(lang, split, data_dir))
    aug = build_target_augmented(target, analysis, lang, seed=seed, categories=categories,
                                 max_per_category=max_per_category, pool_items=items, pool_info=pool_info)
    out = Path(out_dir) if out_dir is not None else flores_augmented_dir(split, "strict")
    write_laser_format(aug, out, split, lang)
    return aug, out


__all__ = ["augment_flores_target", "pool_corpora"]
