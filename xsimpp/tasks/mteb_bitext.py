"""MTEB's BitextMining score, the number the MTEB leaderboard shows for a bitext-mining task.

As mteb 2.x computes it (``AbsTaskBitextMining._compute_metrics`` over the neighbours of
``BitextMiningEvaluator``, mteb 2.26): every source sentence retrieves its top-1 target by the
model's similarity (cosine for sentence-transformers models), the prediction is that target's
index and the gold label the source's own index (line i translates line i); precision, recall and
F1 are scikit-learn's ``average="weighted"`` scores of labels vs predictions (``zero_division=0``),
accuracy the share of exact hits, and the main score is F1. Only source -> target is scored; a
FLORES subset ``kea_Latn-eng_Latn`` is kea -> eng, so ``--both-directions`` gives MTEB's two
subsets.

One difference, on purpose: mteb takes the top-1 with ``torch.topk`` over float32 products, whose
rounding (and tie-breaking) depends on the CPU's kernels; here the exact engine picks it (the same
exact similarities on every machine, ties to the lower index), so this number does not move with
the machine. On FLORES devtest with all-MiniLM-L6-v2 both give the same values
(tests/test_mteb_bitext.py); they can differ only where two targets' cosines are within float32
rounding of each other. Records are in % (MTEB's JSON stores the fraction: ``extra["main_score"]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..datasets.base import Bitext
from ..encoders.base import Encoder
from ..engine import EngineConfig, margin_knn, normalize, pair_similarity
from ..results import Outcomes, ResultRecord
from .base import IntervalSettings, MetricInfo, Task, TaskReport, bitext_sides, embedder_for, pair_scores_for, sign
from .retrieval import RetrievalSource, open_bitexts, select_lines


@dataclass(frozen=True)
class BitextMiningScores:
    precision: float  # fractions in [0, 1], as MTEB reports them
    recall: float
    f1: float
    accuracy: float
    n: int
    predicted: np.ndarray = field(repr=False)  # the retrieved target index of every source
    predicted_cosine: np.ndarray = field(repr=False)  # its cosine (exact)
    gold_cosine: np.ndarray = field(repr=False)  # the cosine of each source and its own target


def bitext_mining_scores(x: np.ndarray | None = None, y: np.ndarray | None = None, *,
                         similarity: np.ndarray | None = None, config: EngineConfig | None = None) -> BitextMiningScores:
    """MTEB's BitextMining metrics of sources ``x`` against targets ``y`` (vectors, or a
    ``similarity`` matrix), row i of each a translation pair."""
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    unit = False
    if similarity is None:
        threads = config.threads if config else None
        x, y, unit = normalize(x, "source embeddings", threads), normalize(y, "target embeddings", threads), True
    pred, pred_cos = margin_knn(x, y, similarity=similarity, margin="absolute", k=1, unit=unit,
                                config=config).forward_best()
    gold = np.arange(len(pred))
    gold_cos = (np.asarray(similarity, np.float32)[gold, gold].astype(np.float64) if similarity is not None
                else pair_similarity(x, y, gold, gold))
    kw = dict(zero_division=0, average="weighted")
    return BitextMiningScores(float(precision_score(gold, pred, **kw)), float(recall_score(gold, pred, **kw)),
                              float(f1_score(gold, pred, **kw)), float(accuracy_score(gold, pred)), len(pred), pred,
                              pred_cos, gold_cos)


@dataclass(frozen=True)
class MtebBitextSettings(IntervalSettings):
    """Nothing to set: MTEB's score is cosine top-1 by definition."""

    def signed_values(self) -> dict:
        return {"scoring": "cosine-top1"}  # no knob: the scoring MTEB defines, named in every signature


@dataclass
class MtebBitextReport(TaskReport):
    dataset: str
    pairs: list[tuple[Bitext, BitextMiningScores]] = field(default_factory=list)


class MtebBitextTask(Task):
    name = "mteb-bitext"
    description = "MTEB's BitextMining score (cosine top-1, weighted F1 over gold indices; MTEB's main score)"
    metrics = {"mteb_bitext_f1": MetricInfo("F1 %", lower_is_better=False)}
    Source = RetrievalSource
    Settings = MtebBitextSettings
    cli = True

    def load(self, source: RetrievalSource, settings) -> list[Bitext]:
        return select_lines(open_bitexts(source)[1], source.limit, source.sample, source.sample_seed)

    def sides(self, data: list[Bitext], settings) -> list[tuple[str, list[str]]]:
        return bitext_sides(data)

    def evaluate(self, encoder: Encoder, data: list[Bitext], settings, ctx) -> MtebBitextReport:
        embed = embedder_for(encoder, ctx.cache, ctx.progress)
        pairs = pair_scores_for(encoder, ctx.cache, ctx.progress)
        report = MtebBitextReport(data[0].dataset)
        for bt in data:
            if embed is not None:
                res = bitext_mining_scores(embed(bt.src, bt.src_lang), embed(bt.tgt, bt.tgt_lang), config=ctx.engine)
            else:
                res = bitext_mining_scores(similarity=pairs(bt.src, bt.tgt, bt.src_lang, bt.tgt_lang), config=ctx.engine)
            sig = sign(encoder, bt.dataset, bt.split, bt.checksum, "mteb_bitext_f1", settings)
            report.records.append(ResultRecord(
                "mteb_bitext_f1", 100 * res.f1, res.n, bt.src_lang, bt.tgt_lang, sig,
                errors=int((res.predicted != np.arange(res.n)).sum()),
                extra={"precision": 100 * res.precision, "recall": 100 * res.recall, "accuracy": 100 * res.accuracy,
                       "main_score": res.f1, "unit": "F1 %"},
                outcomes=Outcomes.build("weighted_f1", res.predicted == np.arange(res.n), res.predicted, None,
                                        res.predicted_cosine, res.gold_cosine)))
            report.pairs.append((bt, res))
        report.count_encoding(embed or pairs)
        return report

    def render(self, report: MtebBitextReport) -> str:
        from tabulate import tabulate

        body = [[report.dataset, f"{bt.src_lang}-{bt.tgt_lang}"] + [f"{100 * v:.2f}" for v in
                                                                    (r.precision, r.recall, r.f1, r.accuracy)] + [r.n]
                for bt, r in report.pairs]
        table = tabulate(body, headers=["dataset", "src-tgt", "precision", "recall", "F1 (main)", "accuracy", "n"],
                         tablefmt="psql", disable_numparse=True)
        return f"MTEB BitextMining (cosine top-1, weighted over gold indices), %\n{table}"
