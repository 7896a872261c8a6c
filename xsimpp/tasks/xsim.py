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
from ..datasets.base import AugmentedTargets, Bitext, augmented_style, load_augmented, text_checksum
from ..encoders.base import Encoder
from ..errors import BadInputError, MissingResourceError
from ..results import ResultRecord
from ..scoring import EngineConfig, XsimResult, micro_average, xsim
from ..scoring.pxsim import pxsim
from ..scoring.xsim import MODES
from .base import (MetricInfo, Settings, Task, TaskReport, check_margin_k, embedder_for, pair_scores_for,
                   sign)


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


# Protocols of `xsimpp eval`: LASER's (its xsim.py: ratio margin by default) and the xSIM++ paper's
# ("we report all results using the absolute margin similarity", with its own style of negatives).
PROTOCOLS = ("laser", "xsimpp-paper")
PAPER_PROTOCOL = {"margin": "absolute", "style": "paper"}
STYLES = ("strict", "paper")  # the styles of `xsimpp augment` (xsimpp.augment.STYLES)


def protocol_of(margin: str, style: str) -> str:
    """The protocol a (margin, negatives style) pair is: the paper's, or LASER's scoring."""
    return "xsimpp-paper" if margin == PAPER_PROTOCOL["margin"] and style == PAPER_PROTOCOL["style"] else "laser"


def _style_dirs(d: Path, style: str | None) -> list[Path]:
    """Where one folder may hold negatives of `style`: `<d>/<style>/` (what `xsimpp augment` writes),
    then `<d>` itself (LASER's layout: its own published files are the paper's negatives). No style
    asked: the default style first, then the folder itself, then the paper's."""
    return [d / style, d] if style else [d / STYLES[0], d, d / STYLES[1]]


def _style_ok(found: str, wanted: str | None) -> bool:
    return wanted is None or found == wanted or (found == "unrecorded" and wanted == "paper")


def find_augmented(spec: str | Path | None, dataset, lang: str, allow_errtypes=(),
                   style: str | None = None) -> AugmentedTargets | None:
    """``None`` -> no xsim++; ``"auto"`` -> the dataset's known folders; else a folder path.

    ``style`` ("strict" or "paper"; None: any) picks which build of `xsimpp augment` to use: each
    folder is tried as ``<folder>/<style>/`` and then itself, whose files count when their sidecar
    says that style (files without one, such as LASER's published negatives, count as the paper's).
    The style found is in every xsim++ record's signature (``negatives``)."""
    if spec is None:
        return None
    if style is not None and style not in STYLES:
        raise BadInputError(f"unknown augmentation style {style!r}; choose strict or paper")
    name = f"{lang}_augmented.{dataset.split}"
    if str(spec) == "auto":
        tried = dataset.augmented_dirs()
        for base in tried:
            for d in _style_dirs(base, style):
                if (d / name).is_file() and _style_ok(augmented_style(d, lang, dataset.split), style):
                    return load_augmented(d, lang, dataset.split, allow_errtypes)
        where = ", ".join(str(d) for d in tried) or "(no default location for this dataset)"
        which = f"{style}-style " if style else ""
        build = f" --style {style}" if style else ""
        raise MissingResourceError(
            f"No {which}augmented {lang} data for {dataset.name} {dataset.split} (looked in {where}); "
            f"build it with `xsimpp augment {dataset.name} --split {dataset.split}{build}` or pass --augmented DIR"
        )
    d = next((c for c in _style_dirs(Path(spec), style) if (c / name).is_file()), Path(spec))
    aug = load_augmented(d, lang, dataset.split, allow_errtypes)
    if not _style_ok(aug.style, style):
        raise BadInputError(f"the augmented data in {d} is {aug.style}-style, not {style}; "
                            f"build {style}-style negatives with `xsimpp augment ... --style {style}`")
    return aug


def _record(metric: str, res: XsimResult, bt: Bitext, encoder: Encoder, settings: XsimSettings,
            checksum: str, **view) -> ResultRecord:
    sig = sign(encoder, bt.dataset, bt.split, checksum, metric, settings, **view)
    return ResultRecord(metric, res.error_rate, res.n, bt.src_lang, bt.tgt_lang, sig, errors=res.errors,
                        error_types=dict(res.error_types))


@dataclass
class Rerank:
    """P-xSIM (``xsimpp.scoring.pxsim``): the ``k`` nearest targets by the main encoder's margin
    (its averages over the settings' k neighbours) rescored by ``encoder`` (cosine of its vectors,
    or its pair scores) and blended ``alpha * margin + (1 - alpha) * aux``. LASER's pxsim.py uses one
    k (16) for both: ``--k 16 --rerank-k 16`` reproduces it."""

    encoder: Encoder
    alpha: float = 0.5
    k: int = 16
    cache: EmbeddingCache | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.alpha <= 1.0:
            raise BadInputError(f"--alpha must be between 0 and 1, not {self.alpha}")
        if self.k < 1:
            raise BadInputError(f"--rerank-k must be at least 1, not {self.k}")

    def view(self) -> dict:
        """What the rerank adds to a record's signature: the auxiliary encoder, alpha, candidates."""
        e = self.encoder
        return {"rerank": f"{e.id}@{e.revision}+cfg.{e.fingerprint[:8]}", "alpha": self.alpha, "rerank_k": self.k}


def evaluate_bitexts(
    encoder: Encoder,
    bitexts: Sequence[Bitext],
    settings: XsimSettings | None = None,
    *,
    augmented: AugmentedTargets | None = None,
    cache: EmbeddingCache | None = None,
    progress: Callable[[int], None] | None = None,
    config: EngineConfig | None = None,
    rerank: Rerank | None = None,
) -> EvalReport:
    """xsim for every bitext; xsim++ too where ``augmented`` matches the bitext's target language.
    With ``rerank`` the records are P-xSIM ("p-xsim", "p-xsim++") instead."""
    st = settings or XsimSettings()
    knobs = dict(margin=st.margin, mode=st.mode, config=config)
    first = bitexts[0]
    report = EvalReport(first.dataset, first.split, encoder.id)
    embed = embedder_for(encoder, cache, progress)
    pairs = pair_scores_for(encoder, cache, progress)
    aux_embed = aux_pairs = None
    if rerank is not None:
        aux_embed = embedder_for(rerank.encoder, rerank.cache, progress)
        aux_pairs = pair_scores_for(rerank.encoder, rerank.cache, progress)
    prefix = "p-" if rerank is not None else ""
    view = rerank.view() if rerank is not None else {}

    def vectors(emb, bt: Bitext, aug: AugmentedTargets | None) -> dict:
        y = emb(bt.tgt, bt.tgt_lang)
        if aug is not None:  # the negatives on their own: the gold targets are already encoded
            y = np.concatenate([y, emb(aug.lines, bt.tgt_lang)])
        return {"x": emb(bt.src, bt.src_lang), "y": y}

    def score(bt: Bitext, aug: AugmentedTargets | None = None) -> XsimResult:
        more = list(aug.lines) if aug is not None else []
        targets = list(bt.tgt) + more
        errtypes = aug.errtypes if aug is not None else None
        if embed is not None:
            main = vectors(embed, bt, aug)
        else:
            main = dict(similarity=pairs(bt.src, bt.tgt, bt.src_lang, bt.tgt_lang, more))
        if rerank is None:
            return xsim(**main, k=st.k, tgt_text=targets, errtypes=errtypes, **knobs)
        if aux_embed is not None:
            aux_vecs = vectors(aux_embed, bt, aug)
            aux = dict(x_aux=aux_vecs["x"], y_aux=aux_vecs["y"])
        else:
            aux = dict(aux_similarity=aux_pairs(bt.src, bt.tgt, bt.src_lang, bt.tgt_lang, more))
        return pxsim(**main, **aux, alpha=rerank.alpha, k=min(rerank.k, len(targets)), k_margin=st.k,
                     tgt_text=targets, errtypes=errtypes, **knobs)

    for bt in bitexts:
        aug = augmented if augmented is not None and augmented.lang == bt.tgt_lang else None
        res = score(bt)
        pair = PairResult(bt.src_lang, bt.tgt_lang, res)
        report.records.append(_record(prefix + "xsim", res, bt, encoder, st, bt.checksum, **view))
        if aug is not None:
            respp = score(bt, aug)
            pair.xsimpp = respp
            checksum = hashlib.sha256((bt.checksum + aug.checksum).encode()).hexdigest()
            # Which negatives and which protocol: an xsim++ number means nothing without them.
            report.records.append(_record(prefix + "xsim++", respp, bt, encoder, st, checksum, negatives=aug.style,
                                          protocol=protocol_of(st.margin, aug.style), **view))
        report.pairs.append(pair)
    report.count_encoding(embed or pairs)
    if rerank is not None:
        aux_count = aux_embed or aux_pairs
        report.n_encoded += aux_count.n_encoded
        report.n_cached += aux_count.n_requested - aux_count.n_encoded
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


TASK = Task("xsim", "xsim / xsim++ error rate of margin-based retrieval (LASER's xsim.py); P-xSIM with a rerank",
            {"xsim": MetricInfo("error %", lower_is_better=True),
             "xsim++": MetricInfo("error %", lower_is_better=True),
             "p-xsim": MetricInfo("error %", lower_is_better=True),
             "p-xsim++": MetricInfo("error %", lower_is_better=True)},
            XsimSettings, evaluate_bitexts)
