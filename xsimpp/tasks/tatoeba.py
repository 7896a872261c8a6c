"""The Tatoeba task (Artetxe & Schwenk 2019; XTREME, Hu et al. 2020): line-aligned xx-eng test sets
-> encoder (cached) -> nearest neighbours both ways -> accuracy records, text and index mode.

No printing here; the CLI renders what this returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..cache import EmbeddingCache
from ..datasets.base import Bitext
from ..encoders.base import Encoder
from ..errors import BadInputError
from ..results import ResultRecord
from ..scoring import EngineConfig
from ..scoring.tatoeba import MODES, TatoebaResult, macro_average, tatoeba_accuracy
from .base import (MetricInfo, Settings, Task, TaskReport, check_margin_k, embedder_for, pair_scores_for,
                   sign)

# The 36 Tatoeba languages of XTREME (Hu et al. 2020, "XTREME: A Massively Multilingual Multi-task
# Benchmark for Evaluating Cross-lingual Generalization", ICML; Table 5 / the LASER v1 codes of its
# preprocessing), which OneAligner (Niu et al. 2022) reports as "Tatoeba-36". LASER v1 codes.
TATOEBA36 = (
    "afr", "ara", "ben", "bul", "cmn", "deu", "ell", "est", "eus", "fin", "fra", "heb", "hin", "hun", "ind", "ita",
    "jav", "jpn", "kat", "kaz", "kor", "mal", "mar", "nld", "pes", "por", "rus", "spa", "swh", "tam", "tel", "tgl",
    "tha", "tur", "urd", "vie",
)
# Where the Tatoeba Challenge names the same language differently from LASER v1.
V1_TO_CHALLENGE = {"cmn": "cmn_Hans", "swh": "swa"}

DIRECTIONS = {"fwd": "xx2en", "bwd": "en2xx"}


def tatoeba_set(name: str, source: str, available: Sequence[str]) -> list[str]:
    """Language codes of a named set for a source ('v1' or 'challenge')."""
    if name == "all":
        return [c for c in available if c != "eng"]
    if name == "tatoeba36":
        codes = [V1_TO_CHALLENGE.get(c, c) if source == "challenge" else c for c in TATOEBA36]
        missing = [c for c in codes if c not in available]
        if missing:
            raise BadInputError(f"the tatoeba36 set needs {', '.join(missing)}, which this {source} copy lacks")
        return codes
    raise BadInputError(f"unknown language set '{name}'; use tatoeba36 or all")


# ----------------------------------------------------------------------------------------------
# Tatoeba


@dataclass
class TatoebaLang:
    lang: str
    bitext: Bitext  # src = xx, tgt = eng
    result: TatoebaResult


@dataclass(frozen=True)
class TatoebaSettings(Settings):
    """absolute = cosine nearest neighbour (XTREME, LASER); ratio/distance = margin with k neighbours."""

    margin: str = "absolute"
    k: int = 4

    def __post_init__(self) -> None:
        check_margin_k(self.margin, self.k)

    def params(self) -> dict:
        return {"margin": self.margin, "k": 1 if self.margin == "absolute" else self.k}


@dataclass
class TatoebaReport(TaskReport):
    dataset: str
    split: str
    encoder_id: str
    settings: TatoebaSettings
    langs: list[TatoebaLang] = field(default_factory=list)

    @property
    def margin(self) -> str:
        return self.settings.margin

    @property
    def k(self) -> int:
        return self.settings.params()["k"]

    def average(self, direction: str, mode: str) -> float:
        """Macro average over languages (XTREME); ``direction`` is fwd, bwd or mean."""
        vals = [(r.result.mean(mode) if direction == "mean" else getattr(r.result, direction).accuracy(mode))
                for r in self.langs]
        return macro_average(vals)


def _tatoeba_records(bt: Bitext, res: TatoebaResult, encoder: Encoder, settings: TatoebaSettings) -> list[ResultRecord]:
    out = []
    for mode in MODES:  # both views of one run: a record each, told apart by their signatures
        entries = [("tatoeba_acc_xx2en", res.fwd.accuracy(mode), res.fwd.n, res.fwd.n - res.fwd.n_correct(mode)),
                   ("tatoeba_acc_en2xx", res.bwd.accuracy(mode), res.bwd.n, res.bwd.n - res.bwd.n_correct(mode)),
                   ("tatoeba_acc_mean", res.mean(mode), res.fwd.n + res.bwd.n,
                    res.fwd.n + res.bwd.n - res.fwd.n_correct(mode) - res.bwd.n_correct(mode))]
        for metric, value, n, errors in entries:
            sig = sign(encoder, bt.dataset, bt.split, bt.checksum, metric, settings, mode=mode)
            out.append(ResultRecord(metric, value, n, bt.src_lang, bt.tgt_lang, sig, errors=errors,
                                    extra={"unit": "accuracy %"}))
    return out


def evaluate_tatoeba(
    encoder: Encoder,
    bitexts: Sequence[Bitext],
    settings: TatoebaSettings | None = None,
    *,
    cache: EmbeddingCache | None = None,
    progress: Callable[[int], None] | None = None,
    config: EngineConfig | None = None,
) -> TatoebaReport:
    """Accuracy xx->eng and eng->xx for every bitext (src = xx, tgt = eng).

    Vectors go through the embedding cache, so an English sentence shared by several languages'
    test sets (or by an earlier run) is encoded once.
    """
    st = settings or TatoebaSettings()
    if not bitexts:
        raise BadInputError("no Tatoeba languages to evaluate")
    first = bitexts[0]
    report = TatoebaReport(first.dataset, first.split, encoder.id, st)
    embed = embedder_for(encoder, cache, progress)
    pairs = pair_scores_for(encoder, cache, progress)
    for bt in bitexts:
        texts = dict(src_text=bt.src, tgt_text=bt.tgt, margin=st.margin, k=st.k, config=config)
        if embed is not None:
            res = tatoeba_accuracy(embed(bt.src, bt.src_lang), embed(bt.tgt, bt.tgt_lang), **texts)
        else:
            res = tatoeba_accuracy(similarity=pairs(bt.src, bt.tgt, bt.src_lang, bt.tgt_lang), **texts)
        report.langs.append(TatoebaLang(bt.src_lang, bt, res))
        report.records.extend(_tatoeba_records(bt, res, encoder, st))
    report.count_encoding(embed or pairs)
    return report


DUMP_FIELDS = ("dataset", "lang", "direction", "line", "source", "gold", "predicted", "predicted_line", "gold_score",
               "predicted_score", "text_correct")


def tatoeba_error_rows(report: TatoebaReport) -> list[dict]:
    """Every retrieval whose index is wrong; ``text_correct`` marks those that text mode forgives
    (the retrieved sentence is a duplicate of the gold). Lines are 1-based, as in the files."""
    rows = []
    for tl in report.langs:
        bt = tl.bitext
        for which, queries, targets in (("fwd", bt.src, bt.tgt), ("bwd", bt.tgt, bt.src)):
            d = getattr(tl.result, which)
            for i in np.flatnonzero(~d.correct_index):
                p = int(d.pred[i])
                rows.append({"dataset": bt.dataset, "lang": tl.lang, "direction": DIRECTIONS[which], "line": int(i) + 1,
                             "source": queries[i], "gold": targets[i], "predicted": targets[p],
                             "predicted_line": p + 1, "gold_score": round(float(d.gold_score[i]), 6),
                             "predicted_score": round(float(d.pred_score[i]), 6),
                             "text_correct": bool(d.correct_text[i])})
    return rows


TASK = Task("tatoeba", "Tatoeba bitext retrieval accuracy both ways, text and index mode (LASER, XTREME)",
            {m: MetricInfo("accuracy %", lower_is_better=False)
             for m in ("tatoeba_acc_xx2en", "tatoeba_acc_en2xx", "tatoeba_acc_mean")},
            TatoebaSettings, evaluate_tatoeba)
