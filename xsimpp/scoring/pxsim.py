"""P-xSIM (Seamless Communication 2023; LASER ``source/pxsim.py``): margin kNN from one encoder,
each candidate rescored by an auxiliary encoder or pair scorer, blended.

For source i, the k nearest targets by margin score (LASER's k = 16; ratio margin over k-neighbour
averages, or cosine for the absolute margin) are rescored as

    blended_ij = alpha * margin_ij + (1 - alpha) * aux_ij

and the prediction is the candidate with the highest blend (the first, in candidate order --
similarity descending, then index ascending -- when two are equal, as ``argmax`` over LASER's
faiss order). ``aux_ij`` is the cosine of the auxiliary encoder's vectors (LASER's default), or any
pair scorer's similarity (e.g. OneAligner's BERTScore). LASER's optional AutoPCP comparator, a
speech-model softmax over the candidates, is not offered. Errors are counted as in xsim
(``text`` mode by default: a candidate whose text equals the gold's is correct; LASER's pxsim
counts by index, ``mode="index"``), with xsim++'s error types when ``errtypes`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ..engine import (DEFAULT_MARGIN, EngineConfig, check_vectors_or_similarity, margin_knn, normalize,
                      pair_similarity, topk_both)
from ..errors import BadInputError
from .xsim import XsimResult, count_errors


@dataclass(frozen=True)
class PxsimCandidates:
    """The k margin candidates per source with both scores (for inspection and tests)."""

    idx: np.ndarray  # (n, k) target indices, similarity descending then index ascending
    margin: np.ndarray  # (n, k) margin scores (cosine for the absolute margin)
    aux: np.ndarray  # (n, k) auxiliary scores of the same pairs
    gold_margin: np.ndarray  # (n,) margin score of each source's gold target (target i)
    gold_aux: np.ndarray  # (n,) auxiliary score of the same pairs


def pxsim_candidates(x: np.ndarray | None = None, y: np.ndarray | None = None, *,
                     similarity: np.ndarray | None = None, x_aux: np.ndarray | None = None,
                     y_aux: np.ndarray | None = None, aux_similarity: np.ndarray | None = None,
                     margin: str = DEFAULT_MARGIN, k: int = 16, k_margin: int | None = None,
                     config: EngineConfig | None = None) -> PxsimCandidates:
    """The ``k`` nearest targets of each source (by similarity) with their margin scores, the
    margin's averages taken over ``k_margin`` neighbours (default ``k``: LASER uses one k, 16, for
    both); auxiliary scores from the cosine of (``x_aux``, ``y_aux``) or an ``aux_similarity`` matrix."""
    if (x_aux is None or y_aux is None) == (aux_similarity is None):
        raise BadInputError("P-xSIM needs the auxiliary vectors (x_aux and y_aux) or an auxiliary similarity matrix")
    unit = False
    similarity = check_vectors_or_similarity(x, y, similarity)
    if similarity is None:
        x, y, unit = normalize(x, "source embeddings"), normalize(y, "target embeddings"), True
    top = topk_both(x, y, similarity=similarity, k_fwd=k, k_bwd=None, unit=unit, config=config)
    idx = top.fwd_idx
    rows = np.repeat(np.arange(idx.shape[0]), idx.shape[1])
    n = idx.shape[0]
    gold = np.arange(n)
    gold_sim = (np.asarray(similarity, np.float32)[gold, gold].astype(np.float64) if similarity is not None
                else pair_similarity(x, y, gold, gold))
    if margin == "absolute":  # LASER searches k neighbours by cosine and blends the cosines
        score, gold_margin = top.fwd_sim, gold_sim
    else:  # every target's k_margin-neighbour average, then the one margin formula of the engine
        knn = margin_knn(x, y, similarity=similarity, margin=margin, k=k_margin or k, backward=True, unit=unit,
                         config=config)
        score = knn.pair_scores(top.fwd_sim.reshape(-1), rows, idx.reshape(-1)).reshape(idx.shape)
        gold_margin = knn.pair_scores(gold_sim, gold, gold)
    if aux_similarity is not None:
        aux_similarity = np.asarray(aux_similarity)
        if aux_similarity.shape[0] != n or aux_similarity.shape[1] <= int(idx.max()):
            raise BadInputError(f"the auxiliary similarity matrix is {aux_similarity.shape}, the candidates need "
                                f"({n}, > {int(idx.max())})")
        aux = aux_similarity[rows, idx.reshape(-1)].astype(np.float64).reshape(idx.shape)
        gold_aux = aux_similarity[gold, gold].astype(np.float64)
    else:
        if len(x_aux) != n or len(y_aux) <= int(idx.max()):
            raise BadInputError(f"the auxiliary vectors cover {len(x_aux)} sources and {len(y_aux)} targets; the "
                                f"primary ones {n} sources and more than {int(idx.max())} targets")
        xa, ya = normalize(x_aux, "auxiliary source embeddings"), normalize(y_aux, "auxiliary target embeddings")
        aux = pair_similarity(xa, ya, rows, idx.reshape(-1)).reshape(idx.shape)
        gold_aux = pair_similarity(xa, ya, gold, gold)
    if not np.isfinite(aux).all():
        raise BadInputError("the auxiliary scores of some candidates are NaN or infinite")
    return PxsimCandidates(idx, np.asarray(score, np.float64), aux, np.asarray(gold_margin, np.float64), gold_aux)


def pxsim(x: np.ndarray | None = None, y: np.ndarray | None = None, *, similarity: np.ndarray | None = None,
          x_aux: np.ndarray | None = None, y_aux: np.ndarray | None = None,
          aux_similarity: np.ndarray | None = None, alpha: float = 0.5, margin: str = DEFAULT_MARGIN, k: int = 16,
          k_margin: int | None = None, mode: str = "text", tgt_text: Sequence[str] | None = None,
          errtypes: Mapping[str, Mapping[str, str]] | None = None,
          config: EngineConfig | None = None) -> XsimResult:
    """P-xSIM error count: the gold of source i is target i (targets beyond n are xsim++ negatives)."""
    if not 0.0 <= alpha <= 1.0:
        raise BadInputError(f"P-xSIM alpha must be between 0 and 1, not {alpha}")
    c = pxsim_candidates(x, y, similarity=similarity, x_aux=x_aux, y_aux=y_aux, aux_similarity=aux_similarity,
                         margin=margin, k=k, k_margin=k_margin, config=config)
    blended = alpha * c.margin + (1.0 - alpha) * c.aux
    rows, best = np.arange(len(c.idx)), blended.argmax(axis=1)
    return count_errors(c.idx[rows, best], mode=mode, tgt_text=tgt_text, errtypes=errtypes,
                        chosen_score=blended[rows, best], gold_score=alpha * c.gold_margin + (1.0 - alpha) * c.gold_aux)
