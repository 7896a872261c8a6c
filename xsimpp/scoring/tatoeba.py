"""Tatoeba bitext retrieval accuracy (Artetxe & Schwenk 2019; XTREME, Hu et al. 2020), both ways.

For every source sentence the nearest target (cosine, or a margin score) is retrieved from the
whole target side; it is correct in ``index`` mode when it is the gold line, and in ``text`` mode
when its text equals the gold text. LASER's v1 English sides repeat sentences (the same English
translates several Tatoeba sentences), and duplicate targets have identical vectors, so the tie is
broken towards the lower index: index mode then counts a correct retrieval of a duplicate as an
error. Both modes are returned so that neither is mistaken for the other.

Direction names follow the data: ``fwd`` retrieves targets for sources (xx -> eng for Tatoeba),
``bwd`` sources for targets (eng -> xx). Accuracy is in percent, as XTREME reports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import BadInputError
from ..engine import EngineConfig, check_margin, check_vectors_or_similarity, margin_knn, normalize, pair_similarity

MODES = ("text", "index")


@dataclass(frozen=True)
class DirectionResult:
    """Retrieval in one direction: prediction, its score, the gold's score, correctness per mode."""

    pred: np.ndarray  # (n,) int64 index of the retrieved sentence
    pred_score: np.ndarray  # (n,) float64 score (cosine or margin) of the retrieved sentence
    gold_score: np.ndarray  # (n,) float64 score of the gold sentence under the same scoring
    correct_index: np.ndarray  # (n,) bool
    correct_text: np.ndarray  # (n,) bool

    @property
    def n(self) -> int:
        return int(len(self.pred))

    def correct(self, mode: str = "text") -> np.ndarray:
        if mode not in MODES:
            raise BadInputError(f"mode must be 'text' or 'index', got '{mode}'")
        return self.correct_text if mode == "text" else self.correct_index

    def n_correct(self, mode: str = "text") -> int:
        return int(self.correct(mode).sum())

    def accuracy(self, mode: str = "text") -> float:
        """Percentage of sources whose retrieved sentence is correct."""
        return 100.0 * self.n_correct(mode) / self.n


@dataclass(frozen=True)
class TatoebaResult:
    margin: str
    k: int
    fwd: DirectionResult  # sources -> targets (xx -> eng)
    bwd: DirectionResult  # targets -> sources (eng -> xx)

    def mean(self, mode: str = "text") -> float:
        """Mean of the two directions' accuracies (each direction has n queries, so macro = micro)."""
        return (self.fwd.accuracy(mode) + self.bwd.accuracy(mode)) / 2


def _text_equal(pred: np.ndarray, texts: Sequence[str]) -> np.ndarray:
    return np.fromiter((texts[p] == texts[i] for i, p in enumerate(pred)), dtype=bool, count=len(pred))


def tatoeba_accuracy(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    src_text: Sequence[str] | None = None,
    tgt_text: Sequence[str] | None = None,
    margin: str = "absolute",
    k: int = 4,
    config: EngineConfig | None = None,
) -> TatoebaResult:
    """Retrieval accuracy both ways for line-aligned ``x`` (sources) and ``y`` (targets).

    Give vectors (cosine after L2 normalisation) or a ``similarity`` matrix (pair scorers).
    ``margin='absolute'`` is plain cosine nearest neighbour (XTREME, LASER's Tatoeba numbers);
    ``ratio``/``distance`` retrieve by the margin of Artetxe & Schwenk (2019) with ``k`` neighbours,
    where each direction ranks its own k candidates, as LASER's xsim does. Gold and predicted
    scores are the engine's exact values (``engine.exact``), the same on every machine. Text mode
    needs both sides' sentences; without them only index mode is meaningful and text equals index.
    """
    check_margin(margin)
    sim = check_vectors_or_similarity(x, y, similarity)
    if sim is not None:
        n_x, n_y = sim.shape
    else:
        threads = config.threads if config else None
        x = normalize(x, "source embeddings", threads)
        y = normalize(y, "target embeddings", threads)
        n_x, n_y = x.shape[0], y.shape[0]
    if n_x != n_y:
        raise BadInputError(f"Tatoeba sides must be line-aligned: {n_x} sources vs {n_y} targets")
    for name, texts in (("source", src_text), ("target", tgt_text)):
        if texts is not None and len(texts) != n_x:
            raise BadInputError(f"{name} text has {len(texts)} lines but there are {n_x} vectors")
    gold = np.arange(n_x)
    # The gold pairs' exact similarities: the same routine that rescored the neighbours.
    gold_sim = np.diagonal(sim).astype(np.float64) if sim is not None else pair_similarity(x, y, gold, gold)
    knn = margin_knn(x, y, similarity=sim, margin=margin, k=k, backward=True, unit=sim is None, config=config)

    def direction(idx, scores, gold_score, texts) -> DirectionResult:
        # First maximum among the candidates (ordered by similarity desc, index asc): a tie in
        # score goes to the higher similarity, then the lower index, as numpy's/LASER's argmax.
        best = scores.argmax(axis=1)
        rows = np.arange(len(best))
        pred = idx[rows, best]
        correct_index = pred == gold
        correct_text = correct_index.copy() if texts is None else _text_equal(pred, texts)
        return DirectionResult(pred, scores[rows, best], gold_score, correct_index, correct_text)

    fwd = direction(knn.fwd_idx, knn.fwd_score, knn.pair_scores(gold_sim, gold, gold), tgt_text)
    # Backward scores put the target first: (A_y + A_x)/2, the same value (addition commutes).
    bwd = direction(knn.bwd_idx, knn.bwd_score, knn.pair_scores(gold_sim, gold, gold), src_text)
    return TatoebaResult(margin, knn.k, fwd, bwd)


def macro_average(values: Sequence[float]) -> float:
    """Unweighted mean over languages, as XTREME averages Tatoeba accuracies."""
    if not len(values):
        raise BadInputError("no languages to average")
    return float(np.mean(np.asarray(values, dtype=np.float64)))
