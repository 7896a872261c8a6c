"""build_augmented: xsim++ hard negatives for a list of English sentences, and LASER-format output."""

from __future__ import annotations

import hashlib
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..version import __version__
from ..datasets.base import STRICT_GENERATOR, STYLES
from ..errors import BadInputError, MissingResourceError
from ..textio import atomic_write_many, file_sha256, json_text, read_lines
from . import resources
from .causality import builtin_antonym, causality_sites, main_sense_antonym, strict_antonym
from .edits import apply_edits
from .entity import (STRICT_GROUP_OF, STRICT_GROUPS, EntityPool, Mention, nltk_mentions, paper_entity_variants, strict_entity_variants,
                     strict_mentions, plausible)
from .number import number_slots, number_variants
from .pool import PoolEntry, collect, default_pool_path, is_pool_file, read_pool, without_sources

CATEGORIES = ("causality", "entity", "number")
# Two generator styles (issue 14): "paper" follows the xSIM++ paper's text (NLTK chunker, a pool from
# monolingual data, 100 per category); "strict" makes only typed, fluent, true negatives.
DEFAULT_STYLE = STYLES[0]
DEFAULT_MAX_PER_CATEGORY = 100
# New values drawn per number slot (day, month, year, digits...). The paper does not state its
# count; 6 keeps FLORES dev near the paper's number total (3476) with one changed slot per variant.
DEFAULT_VALUES_PER_NUMBER = 6
# Strict style: new names per entity of a sentence (one entity changed per variant), so the
# category grows with the entities a sentence has, not "100 per sentence with any mention".
DEFAULT_SWAPS_PER_ENTITY = 5
# Paper style: draws per sentence (the paper's threshold of 100) and the chance that a draw replaces
# a given entity; unchanged and repeated draws are dropped (see entity.paper_entity_variants).
PAPER_REPLACE_PROB = 0.5
STRICT_MIN_COUNT = 2


@dataclass
class AugmentedSet:
    """Variants in output order with their source sentence and category."""

    variants: list[str] = field(default_factory=list)
    src: list[str] = field(default_factory=list)
    errtype: list[str] = field(default_factory=list)
    n_originals: int = 0
    info: dict = field(default_factory=dict)  # what was used: style, NER, pool, spaCy model, seed...

    @property
    def style(self) -> str:
        return self.info.get("style", DEFAULT_STYLE)

    @property
    def stats(self) -> dict[str, dict]:
        """Paper Table 2: total variants and variants per original sentence, per category."""
        out = {}
        for cat in self.info.get("categories", CATEGORIES):
            total = sum(1 for e in self.errtype if e == cat)
            out[cat] = {"total": total, "per_original": total / self.n_originals if self.n_originals else 0.0}
        return out

    def by_category(self, cat: str) -> list[tuple[str, str]]:
        return [(s, v) for v, s, e in zip(self.variants, self.src, self.errtype) if e == cat]


def _rng(seed: int, category: str, sentence: str) -> random.Random:
    """Per-(sentence, category) generator: independent of corpus order and of other categories,
    and stable across processes (no salted hash())."""
    digest = hashlib.sha256(f"{seed}\x00{category}\x00{sentence}".encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _check_sentences(sentences: Sequence[str], what: str = "sentence") -> None:
    for i, s in enumerate(sentences):
        if not isinstance(s, str) or not s.strip():
            raise BadInputError(f"{what} {i + 1} is empty; every line must hold a sentence")
        if "\n" in s or "\r" in s:
            raise BadInputError(f"{what} {i + 1} contains a line break; one sentence per line is required")


def check_style(style: str) -> str:
    if style not in STYLES:
        raise BadInputError(f"unknown augmentation style {style!r}; choose strict or paper")
    return style


def check_categories(categories: Iterable[str], max_per_category: int) -> list[str]:
    """The categories asked for, in CATEGORIES order, and the cap, checked: cheap, so callers check
    them before any model or pool loads (a typo must not cost a minute of spaCy first)."""
    categories = list(categories)
    cats = [c for c in CATEGORIES if c in set(categories)]
    unknown = set(categories) - set(CATEGORIES)
    if unknown or not cats:
        raise BadInputError(f"unknown or empty categories {sorted(unknown)}; choose from {', '.join(CATEGORIES)}")
    if not isinstance(max_per_category, int) or isinstance(max_per_category, bool) or max_per_category < 1:
        raise BadInputError(f"max_per_category must be at least 1, not {max_per_category!r}")
    return cats


def load_entity_pool(files: Sequence[str | os.PathLike] = (), exclude_sources: Iterable[str] = (),
                     nlp=None) -> tuple[list[PoolEntry], dict]:
    """The candidate entities: the shipped pool (xsimpp/data/entity_pool/entities.tsv) less the entries seen
    only in `exclude_sources` (the split being augmented), or, with `files`, your own pools: pool
    files (xsimpp.augment.pool format) or plain English text, one sentence a line, whose entities
    are collected with both recognisers. Returns (entries, description for the metadata)."""
    if not files:
        path = default_pool_path()
        if not path.is_file():
            raise MissingResourceError(
                f"the default entity pool {path} is missing (it ships inside the xsimpp package, xsimpp/data/entity_pool; reinstall xsimpp); "
                "pass your own with --entity-pool FILE (English text, one sentence a line)")
        entries = without_sources(read_pool(path), exclude_sources)
        # the pool's name in the negatives' metadata, as it has always been given (now package data)
        return entries, {"file": "data/entity_pool/entities.tsv", "sha256": file_sha256(path)[:16],
                         "excluded_sources": sorted(set(exclude_sources)), "entries": len(entries)}
    entries: list[PoolEntry] = []
    texts: list[str] = []
    names = []
    for f in files:
        names.append(Path(f).name)
        if is_pool_file(f):
            entries += read_pool(f)
        else:
            lines = read_lines(f)
            _check_sentences(lines, f"{f}: line")
            texts += lines
    if texts:
        recs = ["nltk", "spacy"]
        resources.require_nltk()
        nlp = nlp or resources.load_spacy()[0]
        entries += collect(texts, "user", recs, nlp=nlp).finalise()
    return entries, {"files": names, "entries": len(entries)}


def build_augmented(
    sentences: Sequence[str],
    *,
    style: str = DEFAULT_STYLE,
    seed: int = 0,
    categories: Iterable[str] = CATEGORIES,
    max_per_category: int = DEFAULT_MAX_PER_CATEGORY,
    entity_pool: Optional[Sequence[PoolEntry]] = None,
    pool_info: Optional[dict] = None,
    values_per_number: int = DEFAULT_VALUES_PER_NUMBER,
    swaps_per_entity: int = DEFAULT_SWAPS_PER_ENTITY,
    progress: bool = False,
    reduced_rules: bool = False,
) -> AugmentedSet:
    """Generate causality / entity / number hard negatives for each sentence, in `style`.

    Causality reads WordNet (NLTK data): its antonyms (paper style) and its noun compounds (strict
    style, to leave fixed phrases alone). Without it the negatives differ, so its absence is an
    error unless ``reduced_rules`` accepts the reduced rule set, which the sidecar then records.

    `entity_pool`: candidate entities (``load_entity_pool``; default: the shipped pool, whole).
    Output order: sentence by sentence, categories in CATEGORIES order. Never emitted: a variant
    equal to its source, to any original sentence, or to an earlier variant (first source wins).
    """
    check_style(style)
    cats = check_categories(categories, max_per_category)
    if values_per_number < 1 or swaps_per_entity < 1:
        raise BadInputError("values_per_number and swaps_per_entity must be at least 1")
    sentences = list(sentences)
    _check_sentences(sentences)
    strict = style == "strict"

    info: dict = {"style": style, "categories": cats, "seed": seed, "max_per_category": max_per_category}
    if strict:
        info["generator"] = STRICT_GENERATOR
    use_entity = "entity" in cats
    nlp, model = resources.load_spacy()
    info["spacy_model"] = model
    if use_entity:
        if strict:
            info["ner"] = f"spaCy {model} (typed: {', '.join(STRICT_GROUPS)})"
            info["swaps_per_entity"] = swaps_per_entity
        else:
            resources.require_nltk()
            info["ner"] = "NLTK maxent chunker (binary)"
            info["entity_draws"] = f"{max_per_category} per sentence, each entity replaced with p={PAPER_REPLACE_PROB}"
    if "causality" in cats and not resources.wordnet_available():
        if not reduced_rules:
            raise MissingResourceError(
                "NLTK data 'wordnet' not found (the causality rules read its antonyms and noun compounds; without "
                "it the negatives differ); point NLTK_DATA at a folder holding it, or run: python -m nltk.downloader "
                "wordnet -- or pass --allow-reduced-rules to build with the reduced rule set, recorded in the sidecar")
        info["reduced_rules"] = "WordNet not found: built with the reduced rule set (--allow-reduced-rules)"
    if "causality" in cats:
        if strict:
            antonym = strict_antonym
            info["antonyms"] = "curated sense-checked list (xsimpp.augment.lexicon.STRICT_ANTONYMS)"
            info["fixed_phrases"] = ("curated list + WordNet noun compounds" if resources.wordnet_available()
                                     else "curated list (WordNet not found)")
        elif resources.wordnet_available():
            antonym = main_sense_antonym
            info["antonyms"] = "WordNet 3.0, the adjective's main sense"
        else:
            antonym = builtin_antonym
            info["antonyms"] = "built-in lexicon (WordNet not found)"
    if "number" in cats:
        info["values_per_number"] = values_per_number
    pool = None
    if use_entity:
        if entity_pool is None:
            entity_pool, pool_info = load_entity_pool(nlp=nlp)
        if strict:
            # Names seen once may carry a one-off tagging error: strict draws from names seen twice.
            pool = EntityPool([(STRICT_GROUP_OF[e.label], e.text, e.takes_the) for e in entity_pool
                               if e.recogniser == "spacy" and e.label in STRICT_GROUP_OF and e.count >= STRICT_MIN_COUNT
                               and plausible(STRICT_GROUP_OF[e.label], e.text)])
        else:
            pool = EntityPool([(e.label, e.text) for e in entity_pool if e.recogniser == "nltk"])
        info["entity_pool"] = {**(pool_info or {}), "used": len(pool)}

    # Pass 1: analyse every sentence once (the expensive part; the progress bar covers it).
    causal_sites: list = [None] * len(sentences)
    num_slots: list = [None] * len(sentences)
    mentions: list[list[Mention]] = [[] for _ in sentences]
    from tqdm import tqdm

    docs = nlp.pipe(sentences, batch_size=64)
    for i, doc in enumerate(tqdm(docs, total=len(sentences), desc="analysing", unit="sent", disable=not progress)):
        if "causality" in cats:
            causal_sites[i] = causality_sites(doc, antonym, strict=strict)
        if "number" in cats:
            num_slots[i] = number_slots(doc, strict=strict)
        if use_entity and strict:
            mentions[i] = strict_mentions(doc, pool)
    if use_entity and not strict:
        mentions = nltk_mentions(sentences)

    # Pass 2: generate, cap and de-duplicate.
    originals = set(sentences)
    emitted: set[str] = set()
    aug = AugmentedSet(n_originals=len(sentences), info=info)
    for i, sent in enumerate(sentences):
        for cat in cats:
            rng = _rng(seed, cat, sent)
            if cat == "causality":
                edit_lists = causal_sites[i]
                if len(edit_lists) > max_per_category:  # rare; sample, keep sentence order
                    keep = sorted(rng.sample(range(len(edit_lists)), max_per_category))
                    edit_lists = [edit_lists[j] for j in keep]
            elif cat == "number":
                edit_lists = number_variants(num_slots[i], rng, values_per_number)
            elif strict:
                edit_lists = strict_entity_variants(sent, mentions[i], pool, rng, swaps_per_entity)
            else:
                edit_lists = paper_entity_variants(sent, mentions[i], pool, rng, max_per_category, PAPER_REPLACE_PROB)
            n = 0
            for edits in edit_lists:
                if n >= max_per_category:
                    break
                v = apply_edits(sent, edits)
                if v == sent or v in originals or v in emitted or not v.strip():
                    continue
                emitted.add(v)
                aug.variants.append(v)
                aug.src.append(sent)
                aug.errtype.append(cat)
                n += 1
    return aug


# Table 2 of the paper (dev) and its appendix A (devtest): variants per category on FLORES-200.
PAPER_TABLE2 = {"dev": {"causality": 1868, "entity": 37745, "number": 3476},
                "devtest": {"causality": 1916, "entity": 38855, "number": 3262}}
META_FORMAT = "xsimpp-augment-meta v1"


def output_paths(out_dir: os.PathLike | str, split: str, lang: str = "eng_Latn") -> tuple[Path, Path]:
    out = Path(out_dir)
    return out / f"{lang}_augmented.{split}", out / f"{lang}_errtype.{split}.json"


def meta_path(out_dir: os.PathLike | str, split: str, lang: str = "eng_Latn") -> Path:
    """The sidecar that says how the two LASER files were made (style, seed, pool, counts). LASER's
    own readers never open it; `xsimpp eval` reads the style from it into its signatures."""
    return Path(out_dir) / f"{lang}_augmented.{split}.meta.json"


def metadata(aug: AugmentedSet) -> dict:
    return {"format": META_FORMAT, "style": aug.style, "xsimpp": __version__, "originals": aug.n_originals,
            "variants": len(aug.variants), "counts": {c: st["total"] for c, st in aug.stats.items()}, "info": aug.info}


def write_laser_format(aug: AugmentedSet, out_dir: os.PathLike | str, split: str,
                       lang: str = "eng_Latn") -> tuple[Path, Path]:
    """Write LASER's xsim++ inputs for target `lang`: the variants (one per line) and {variant:
    {src, errtype}}, and the metadata sidecar (``meta_path``)."""
    text_path, json_path = output_paths(out_dir, split, lang)
    # All files or none: a full disk must not leave new variants beside an old errtype map.
    atomic_write_many([(text_path, "".join(v + "\n" for v in aug.variants).encode("utf-8")),
                       (json_path, json_text({v: {"src": s, "errtype": e}
                                              for v, s, e in zip(aug.variants, aug.src, aug.errtype)}).encode("utf-8")),
                       (meta_path(out_dir, split, lang), json_text(metadata(aug)).encode("utf-8"))])
    return text_path, json_path


def format_stats(aug: AugmentedSet, paper_split: Optional[str] = None) -> str:
    """Table 2 of the paper for this run (beside the paper's own for a FLORES split), plus what was
    used to build it."""
    paper = PAPER_TABLE2.get(paper_split or "")
    head = f"{'category':<10} {'total':>8} {'per original':>13}"
    rows = [head + (f" {'paper':>8} {'vs paper':>9}" if paper else "")]
    for cat, st in aug.stats.items():
        row = f"{cat:<10} {st['total']:>8} {st['per_original']:>13.2f}"
        if paper:
            row += f" {paper[cat]:>8} {100 * (st['total'] / paper[cat] - 1):>+8.1f}%"
        rows.append(row)
    row = f"{'all':<10} {len(aug.variants):>8} {len(aug.variants) / max(aug.n_originals, 1):>13.2f}"
    if paper:
        tot = sum(paper[c] for c in aug.stats)
        row += f" {tot:>8} {100 * (len(aug.variants) / tot - 1):>+8.1f}%"
    rows.append(row)
    rows.append(f"originals: {aug.n_originals}")
    for k in ("lang", "generator", "absent", "style", "antonyms", "causality_rules", "fixed_phrases", "ner",
              "entity_projection", "entity_draws", "swaps_per_entity", "spacy_model", "number_words",
              "values_per_number", "max_per_category", "seed"):
        if k in aug.info:
            rows.append(f"{k.replace('_', ' ')}: {aug.info[k]}")
    if "entity_pool" in aug.info:
        p = aug.info["entity_pool"]
        where = p.get("file") or ", ".join(p.get("files", []))
        excl = f", without entries seen only in {', '.join(p['excluded_sources'])}" if p.get("excluded_sources") else ""
        rows.append(f"entity pool: {where}{excl} ({p['used']} candidates)")
    return "\n".join(rows)


def flores_augmented_dir(split: str, style: str) -> Path:
    """Where `xsimpp augment flores200` writes a split's negatives by default, and where
    `--augmented auto` looks first: ``<user data>/augmented/flores200/<split>_augmented/<style>``."""
    from ..paths import augmented_dir

    return augmented_dir() / "flores200" / f"{split}_augmented" / style


def augment_flores_english(english: Sequence[str], split: str, *, style: str = DEFAULT_STYLE, seed: int = 0,
                           out_dir: os.PathLike | str | None = None, progress: bool = False,
                           **kw) -> tuple[AugmentedSet, Path]:
    """The negatives of a FLORES-200 split's English (``xsimpp augment flores200``): the shipped
    entity pool without the entries seen only in that split, written in LASER's format to
    ``out_dir`` (default ``flores_augmented_dir``). Returns the set and the folder."""
    categories = list(kw.pop("categories", CATEGORIES))
    pool, pool_info = (load_entity_pool(exclude_sources=[f"flores200/{split}"]) if "entity" in categories
                       else (None, None))
    aug = build_augmented(english, style=style, seed=seed, categories=categories, entity_pool=pool,
                          pool_info=pool_info, progress=progress, **kw)
    out = Path(out_dir) if out_dir is not None else flores_augmented_dir(split, style)
    write_laser_format(aug, out, split)
    return aug, out
