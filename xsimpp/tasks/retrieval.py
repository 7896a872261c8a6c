"""What the bitext-retrieval tasks share (xsim, Tatoeba, MTEB's score, mining): which bitexts a
run scores (``RetrievalSource``: a dataset's languages or two files), the language lists of
``--langs``/``--exclude``, the first-N-lines limit and the random sample."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..datasets import DATASETS
from ..datasets.base import Bitext
from ..errors import BadInputError
from ..textio import path
from ..textio import MAX_SEED, seed
from .base import exclude_knob, knob


def sample_knob():
    """``--sample N`` of every retrieval task, stated once."""
    return knob(None, "score N lines of each pair drawn at random (the same lines of every language of an n-way "
                      "corpus; the split is recorded as SPLIT[sample=N,seed=S]); --ci says how precise that is",
                type=int, metavar="N", min=1)


def sample_seed_knob():
    return knob(0, "seed of --sample's draw", flag="--seed", type=seed, min=0, max=MAX_SEED)


@dataclass(frozen=True)
class RetrievalSource:
    """Which bitexts a bitext-retrieval task scores: a dataset's languages, or two files."""

    # the registry's names, read when this module is imported (after every registration line has run)
    dataset: str = knob("flores200", f"{', '.join(DATASETS)} (`xsimpp datasets` lists them)")
    split: str | None = knob(None, "dataset split (flores200: dev or devtest; default devtest)")
    langs: Any = knob(None, "comma-separated source languages (kea,fur or kea_Latn,...), or all: every language of "
                            "the dataset but the target")
    exclude: Any = exclude_knob()
    target: str | None = knob(None, "target language (default: English of the dataset)")
    src_file: Any = knob(None, "line-aligned source file (instead of --dataset; --langs/--target name the sides)",
                         type=path)
    tgt_file: Any = knob(None, "line-aligned target file (instead of --dataset)", type=path)
    name: str | None = knob(None, "with --src-file/--tgt-file: the corpus name its results are stored under "
                                  "(default: 'parallel', told apart by the files' checksum)")
    both_directions: bool = knob(False, "also score target -> source")
    nway: bool = knob(False, "every ordered pair of --langs")
    data_dir: Any = knob(None, "data root (default: $XSIMPP_DATA_DIR, then the user data dir)", type=path)
    limit: int | None = knob(None, "score only the first N lines of each pair (a quick look; the split is recorded "
                                   "as SPLIT[:N], e.g. devtest[:50])", type=int)
    sample: int | None = sample_knob()
    sample_seed: int = sample_seed_knob()


ALL_LANGUAGES = "all"  # --langs all


def lang_list(langs) -> list[str]:
    """Language codes from "kea,fur" or ["kea", "fur"]; anything else is one sentence."""
    if langs is None:
        return []
    if isinstance(langs, str):
        items = langs.split(",")
    elif isinstance(langs, (list, tuple, set, frozenset)) and all(isinstance(c, str) for c in langs):
        items = list(langs)
    else:
        raise BadInputError(f"languages are given as \"kea,fur\" or a list of codes, not {langs!r}")
    return [c.strip() for c in items if c.strip()]


def wants_all(langs) -> bool:
    return ALL_LANGUAGES in (c.lower() for c in lang_list(langs))


def source_languages(dataset, langs, exclude, target: str) -> list[str]:
    """The dataset's codes for ``langs``: those listed, or with ``all`` every language of the
    dataset but ``target`` and ``exclude``. ``exclude`` goes only with ``all``: beside a list it
    would contradict it, and ignoring it would hide a typo."""
    codes, left_out = lang_list(langs), lang_list(exclude)
    if not wants_all(langs):
        if left_out:
            raise BadInputError("--exclude leaves languages out of --langs all; with a list, leave them out of --langs")
        return list(dict.fromkeys(dataset.resolve(c) for c in codes))
    if len(codes) > 1:
        raise BadInputError("--langs all takes no other language; leave languages out with --exclude")
    return dataset.sources_for(target, left_out)


def _pairs(dataset, source: RetrievalSource) -> list[Bitext]:
    if not lang_list(source.langs):
        raise BadInputError("give --langs (e.g. --langs kea,fur, or all) or --src-file/--tgt-file")
    if source.nway and wants_all(source.langs):
        raise BadInputError("--nway scores every ordered pair of the languages listed in --langs; list them rather "
                            f"than all {len(dataset.languages())} languages of {dataset.title}")
    tgt = dataset.resolve(source.target or dataset.default_target)
    codes = source_languages(dataset, source.langs, source.exclude, tgt)
    if source.nway:
        if len(codes) < 2:
            raise BadInputError(f"--nway needs at least two languages in --langs, got {', '.join(codes)}")
        return [dataset.bitext(s, t) for s in codes for t in codes if s != t]
    if tgt in codes and not wants_all(source.langs):  # listed by hand: a typo or a wrong idea, never dropped quietly
        raise BadInputError(f"--langs lists {tgt}, the target: every language is scored into the target, so leave it "
                            "out (or choose another --target)")
    pairs = [dataset.bitext(lang, tgt) for lang in codes if lang != tgt]
    if source.both_directions:
        pairs += [dataset.bitext(tgt, lang) for lang in codes if lang != tgt]
    if not pairs:
        raise BadInputError(f"no language pair to score: every --langs entry is the target {tgt}")
    return pairs


def open_bitexts(source: RetrievalSource):
    """The dataset (or the two files as one) and the bitexts ``source`` names, read and checked."""
    from ..datasets import ParallelFiles, get_dataset

    langs = lang_list(source.langs)
    if source.src_file or source.tgt_file:
        if not (source.src_file and source.tgt_file):
            raise BadInputError("--src-file and --tgt-file go together")
        if source.nway:
            raise BadInputError("--nway scores every ordered pair of --langs in a dataset; two files are one pair "
                                "(use --both-directions for both ways)")
        if wants_all(source.langs) or lang_list(source.exclude):
            raise BadInputError("--langs all and --exclude pick languages of a --dataset; with --src-file/--tgt-file "
                                "--langs names the source side")
        # With files, langs / target only name the two sides (for results and for finding
        # <target>_augmented.<split> with augmented).
        src_lang = source.langs if isinstance(source.langs, str) else ",".join(langs)
        ds = ParallelFiles(source.src_file, source.tgt_file, src_lang=src_lang or "src", tgt_lang=source.target or "tgt",
                           split=source.split or "custom", name=source.name)
        bt = ds.bitext()
        bitexts = [bt]
        if source.both_directions:
            bitexts.append(dataclasses.replace(bt, src_lang=bt.tgt_lang, tgt_lang=bt.src_lang, src=bt.tgt, tgt=bt.src,
                                               src_path=bt.tgt_path, tgt_path=bt.src_path))
        return ds, bitexts
    if source.name:
        raise BadInputError("--name names a corpus given by --src-file/--tgt-file; a --dataset has its own name")
    ds = get_dataset(source.dataset, source.split, source.data_dir)
    return ds, _pairs(ds, source)


def select_lines(bitexts: list[Bitext], limit: int | None, sample: int | None = None,
                 sample_seed: int = 0) -> list[Bitext]:
    """``limit_lines``, or ``sample`` lines of each bitext drawn without replacement by
    ``numpy.random.default_rng(sample_seed)`` (kept in corpus order; bitexts of one size get the
    same lines), recorded in the split name (``devtest[sample=200,seed=0]``): a sample is neither
    the whole set nor its first N lines, and never passes for them."""
    if sample is None:
        if sample_seed != 0:  # a seed draws nothing without a sample: it would be dropped unseen
            raise BadInputError(f"--seed {sample_seed} is the seed of --sample's draw; add --sample N or leave it out")
        return limit_lines(bitexts, limit)
    if limit is not None:
        raise BadInputError("--limit takes the first N lines and --sample a random N; give one of the two")
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 1:
        raise BadInputError(f"--sample must be a positive number of lines, got {sample!r}")
    if isinstance(sample_seed, bool) or not isinstance(sample_seed, int) or sample_seed < 0:
        raise BadInputError(f"--seed must be a non-negative integer, got {sample_seed!r}")
    out = []
    for bt in bitexts:
        if sample > len(bt):
            raise BadInputError(f"--sample {sample} is more than the {len(bt)} lines of {bt.src_lang}-{bt.tgt_lang} "
                                f"({bt.dataset} {bt.split})")
        keep = np.sort(np.random.default_rng(sample_seed).choice(len(bt), size=sample, replace=False)).tolist()
        out.append(dataclasses.replace(bt, split=f"{bt.split}[sample={sample},seed={sample_seed}]",
                                       src=[bt.src[i] for i in keep], tgt=[bt.tgt[i] for i in keep]))
    return out


def limit_lines(bitexts: list[Bitext], limit: int | None) -> list[Bitext]:
    """The first ``limit`` lines of each bitext, recorded in the split name (``dev[:40]``) so a
    partial run never passes for the whole."""
    if limit is None:
        return bitexts
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise BadInputError(f"limit must be a positive number of lines, got {limit!r}")
    return [dataclasses.replace(bt, split=f"{bt.split}[:{limit}]", src=bt.src[:limit], tgt=bt.tgt[:limit])
            if len(bt) > limit else bt for bt in bitexts]
