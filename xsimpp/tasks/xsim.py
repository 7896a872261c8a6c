"""The xsim / xsim++ task (Artetxe & Schwenk 2019; Chen et al. 2023): bitexts (+ augmented English)
-> encoder (cached) -> margin kNN -> error-rate records, as LASER's xsim.py computes them.

No printing here; the CLI renders what this returns.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..cache import EmbeddingCache
from ..datasets.base import AugmentedTargets, Bitext, load_augmented, text_checksum
from ..encoders.base import Encoder
from ..errors import BadInputError, MissingResourceError
from ..results import ResultRecord
from ..scoring import EngineConfig, XsimResult, micro_average, xsim
from ..scoring.xsim import MODES
from .base import MetricInfo, Settings, Task, TaskReport, check_margin_k, embedder_for, sign


@dataclass(frozen=True)
class XsimSettings(Settings):
    """margin (ratio, distance, absolute), k neighbours for the margin averages, and the
    comparison mode (text: a duplicate of the gold sentence counts as correct, LASER's default)."""

    margin: str = "ratio"
    k: int = 4
    mode: str = "text"

    def __post_init__(self) -> None:
        check_margin_k(self.margin, self.k)
        if self.mode not in MODES:
            raise BadInputError(f"mode must be 'text' or 'index', got '{self.mode}'")

    def params(self) -> dict:
        return {"margin": self.margin, "k": 1 if self.margin == "absolute" else self.k, "mode": self.mode}


@dataclass
class PairResult:
    src_lang: str
    tgt_lang: str
    xsim: XsimResult
    xsimpp: XsimResult | None = None


@dataclass
class EvalReport(TaskReport):
    dataset: str
    split: str
    encoder_id: str
    pairs: list[PairResult] = field(default_factory=list)

    def average(self, which: str = "xsim") -> XsimResult:
        res = [p.xsim if which == "xsim" else p.xsimpp for p in self.pairs]
        return micro_average([r for r in res if r is not None])


def find_augmented(spec: str | Path | None, dataset, lang: str, allow_errtypes=()) -> AugmentedTargets | None:
    """``None`` -> no xsim++; ``"auto"`` -> the dataset's known folders; else a folder path."""
    if spec is None:
        return None
    if str(spec) == "auto":
        tried = dataset.augmented_dirs()
        for d in tried:
            if (d / f"{lang}_augmented.{dataset.split}").is_file():
                return load_augmented(d, lang, dataset.split, allow_errtypes)
        where = ", ".join(str(d) for d in tried) or "(no default location for this dataset)"
        raise MissingResourceError(
            f"No augmented {lang} data for {dataset.name} {dataset.split} (looked in {where}); "
            f"build it with `xsimpp augment {dataset.name} --split {dataset.split}` or pass --augmented DIR"
        )
    return load_augmented(spec, lang, dataset.split, allow_errtypes)


def _record(metric: str, res: XsimResult, bt: Bitext, encoder: Encoder, settings: XsimSettings,
            checksum: str) -> ResultRecord:
    sig = sign(encoder, bt.dataset, bt.split, checksum, metric, settings)
    return ResultRecord(metric, res.error_rate, res.n, bt.src_lang, bt.tgt_lang, sig, errors=res.errors,
                        error_types=dict(res.error_types))


def evaluate_bitexts(
    encoder: Encoder,
    bitexts: Sequence[Bitext],
    settings: XsimSettings | None = None,
    *,
    augmented: AugmentedTargets | None = None,
    cache: EmbeddingCache | None = None,
    progress: Callable[[int], None] | None = None,
    config: EngineConfig | None = None,
) -> EvalReport:
    """xsim for every bitext; xsim++ too where ``augmented`` matches the bitext's target language."""
    st = settings or XsimSettings()
    knobs = dict(margin=st.margin, k=st.k, mode=st.mode, config=config)
    first = bitexts[0]
    report = EvalReport(first.dataset, first.split, encoder.id)
    embed = embedder_for(encoder, cache, progress)
    for bt in bitexts:
        aug = augmented if augmented is not None and augmented.lang == bt.tgt_lang else None
        if embed is not None:
            x = embed(bt.src, bt.src_lang)
            y = embed(bt.tgt, bt.tgt_lang)
            res = xsim(x, y, tgt_text=bt.tgt, **knobs)
        else:
            sim = encoder.similarity(bt.src, bt.tgt, src_lang=bt.src_lang, tgt_lang=bt.tgt_lang)
            res = xsim(similarity=sim, tgt_text=bt.tgt, **knobs)
        pair = PairResult(bt.src_lang, bt.tgt_lang, res)
        report.records.append(_record("xsim", res, bt, encoder, st, bt.checksum))
        if aug is not None:
            tgt_all = list(bt.tgt) + list(aug.lines)
            if embed is not None:
                y_all = np.concatenate([y, embed(aug.lines, bt.tgt_lang)])
                respp = xsim(x, y_all, tgt_text=tgt_all, errtypes=aug.errtypes, **knobs)
            else:
                sim = encoder.similarity(bt.src, tgt_all, src_lang=bt.src_lang, tgt_lang=bt.tgt_lang)
                respp = xsim(similarity=sim, tgt_text=tgt_all, errtypes=aug.errtypes, **knobs)
            pair.xsimpp = respp
            checksum = hashlib.sha256((bt.checksum + aug.checksum).encode()).hexdigest()
            report.records.append(_record("xsim++", respp, bt, encoder, st, checksum))
        report.pairs.append(pair)
    report.count_encoding(embed)
    return report


def encoding_sides(bitexts: Sequence[Bitext], augmented: AugmentedTargets | None) -> list[tuple[str, list[str]]]:
    """The (language, sentences) sides ``evaluate_bitexts`` encodes, in the order it asks for them."""
    sides = []
    for bt in bitexts:
        sides += [(bt.src_lang, bt.src), (bt.tgt_lang, bt.tgt)]
        if augmented is not None and augmented.lang == bt.tgt_lang:
            sides.append((bt.tgt_lang, augmented.lines))
    return sides


def count_sentences(bitexts: Sequence[Bitext], augmented: AugmentedTargets | None) -> int:
    """Sentences the run will look up or encode: each distinct side once (the progress total)."""
    sides = {}
    for bt in bitexts:
        sides[(bt.src_lang, text_checksum(bt.src))] = len(bt.src)
        sides[(bt.tgt_lang, text_checksum(bt.tgt))] = len(bt.tgt)
    total = sum(sides.values())
    if augmented is not None and any(bt.tgt_lang == augmented.lang for bt in bitexts):
        total += len(augmented.lines)
    return total


TASK = Task("xsim", "xsim / xsim++ error rate of margin-based retrieval (LASER's xsim.py)",
            {"xsim": MetricInfo("error %", lower_is_better=True),
             "xsim++": MetricInfo("error %", lower_is_better=True)},
            XsimSettings, evaluate_bitexts)
