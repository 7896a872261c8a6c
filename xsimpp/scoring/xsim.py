"""xsim and xsim++ error rates (Artetxe & Schwenk 2019; Chen et al. 2023), as LASER computes them.

Error in ``text`` mode (LASER's default): the target text at the chosen neighbour differs from the
gold target text, so duplicates of the gold sentence count as correct. ``index`` mode: the
neighbour is not the gold index. xsim++ appends augmented English to the targets; a wrong
neighbour that is an augmentation of the gold sentence is counted under its error type, any
other wrong neighbour as ``Misaligned``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..errors import BadInputError
from ..engine import DEFAULT_MARGIN, DeviceRows, EngineConfig, margin_knn, normalize, pair_similarity

MODES = ("text", "index")
MISALIGNED = "Misaligned"


@dataclass(frozen=True)
class XsimResult:
    """Counts, and per source (when scored here, not summed): the chosen target ``nn``, whether it
    is ``correct``, the score of the chosen target and of the gold one (margin, or P-xSIM's blend;
    the engine's exact values) and the ``error_type`` of a wrong choice ("" where correct)."""

    errors: int
    n: int
    error_types: dict[str, int] = field(default_factory=dict)
    nn: np.ndarray | None = field(default=None, repr=False, compare=False)
    correct: np.ndarray | None = field(default=None, repr=False, compare=False)
    chosen_score: np.ndarray | None = field(default=None, repr=False, compare=False)
    gold_score: np.ndarray | None = field(default=None, repr=False, compare=False)
    error_type: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def error_rate(self) -> float:
        """Percentage of sources whose neighbour is wrong."""
        return 100.0 * self.errors / self.n if self.n else float("nan")


def count_errors(
    nn: np.ndarray,
    *,
    mode: str = "text",
    tgt_text: Sequence[str] | None = None,
    errtypes: Mapping[str, Mapping[str, str]] | None = None,
    chosen_score: np.ndarray | None = None,
    gold_score: np.ndarray | None = None,
) -> XsimResult:
    """Count xsim errors given each source's chosen neighbour; the gold of source i is target i.

    ``tgt_text`` is the whole target side (originals, then augmented lines); ``errtypes`` is the
    LASER errtype JSON: ``{augmented: {"src": original, "errtype": name}}``. ``chosen_score`` /
    ``gold_score`` (per source) travel with the result as its per-source outcomes.
    """
    if mode not in MODES:
        raise BadInputError(f"mode must be 'text' or 'index', got '{mode}'")
    nn = np.asarray(nn).reshape(-1)
    n = len(nn)
    if mode == "text" and tgt_text is None:
        raise BadInputError("text mode needs the target sentences (tgt_text)")
    if tgt_text is not None and len(tgt_text) < n:
        raise BadInputError(f"target text has {len(tgt_text)} lines but there are {n} sources")
    gold = np.arange(n)
    if mode == "index":
        wrong = np.flatnonzero(nn != gold)
    else:
        assert tgt_text is not None
        wrong = np.array([i for i in range(n) if tgt_text[nn[i]] != tgt_text[i]], dtype=np.int64)
    types: Counter[str] = Counter()
    item_type = np.full(n, "", dtype=object)
    if errtypes is not None and tgt_text is not None:
        for i in wrong:
            hit = tgt_text[nn[i]].strip()
            entry = errtypes.get(hit)
            name = str(entry.get("errtype")) if entry is not None and entry.get("src") == tgt_text[i].strip() \
                else MISALIGNED
            types[name] += 1
            item_type[i] = name
    correct = np.ones(n, dtype=bool)
    correct[wrong] = False
    return XsimResult(int(len(wrong)), n, dict(sorted(types.items())), nn, correct, chosen_score, gold_score,
                      item_type)


def xsim(
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    similarity: np.ndarray | None = None,
    margin: str = DEFAULT_MARGIN,
    k: int = 4,
    mode: str = "text",
    tgt_text: Sequence[str] | None = None,
    errtypes: Mapping[str, Mapping[str, str]] | None = None,
    config: EngineConfig | None = None,
) -> XsimResult:
    """xsim (targets = gold translations) or xsim++ (targets = gold + augmented, with ``errtypes``).

    The target set must hold at least the n_x gold sentences first; for xsim++ (more targets than
    sources) the margin's target-side averages are computed over all targets, as in LASER. ``y``
    may be rows held on the engine's device (``engine.hold_rows``), scored against many sources
    without a copy each time.
    """
    n_x = similarity.shape[0] if similarity is not None else (0 if x is None else len(x))
    n_y = similarity.shape[1] if similarity is not None else (0 if y is None else len(y))
    if n_x == 0 or n_y == 0:
        raise BadInputError("xsim needs at least one source and one target sentence")
    if n_y < n_x:
        raise BadInputError(
            f"the target set ({n_y}) is smaller than the source set ({n_x}); target i must be the gold of source i"
        )
    if errtypes is None and n_y != n_x:
        raise BadInputError(
            f"source ({n_x}) and target ({n_y}) sizes differ; pass the augmented errtype map for xsim++"
        )
    if tgt_text is not None and len(tgt_text) != n_y:
        raise BadInputError(f"target text has {len(tgt_text)} lines but there are {n_y} target vectors")
    # config changes only the speed (engine.exact: the answers do not depend on it). Backward
    # neighbours of every target give the gold pairs' margins too (the choices are the same).
    unit = False
    if similarity is None:
        threads = config.threads if config else None
        x = normalize(x, "source embeddings", threads)
        y = y if isinstance(y, DeviceRows) else normalize(y, "target embeddings", threads)  # unit already
        unit = True
    knn = margin_knn(x, y, similarity=similarity, margin=margin, k=k, backward=margin != "absolute", unit=unit,
                     config=config)
    nn, chosen = knn.forward_best()
    gold = np.arange(n_x)
    gold_sim = (np.asarray(similarity, np.float32)[gold, gold].astype(np.float64) if similarity is not None
                else pair_similarity(x, y.host if isinstance(y, DeviceRows) else y, gold, gold))
    return count_errors(nn, mode=mode, tgt_text=tgt_text, errtypes=errtypes, chosen_score=chosen,
                        gold_score=knn.pair_scores(gold_sim, gold, gold))


def micro_average(results: Sequence[XsimResult]) -> XsimResult:
    """Sum of errors over sum of sentences (LASER's 'average' row), with summed error types."""
    errors = sum(r.errors for r in results)
    n = sum(r.n for r in results)
    types: Counter[str] = Counter()
    for r in results:
        types.update(r.error_types)
    return XsimResult(errors, n, dict(sorted(types.items())))


def nway_error_matrix(embeddings: Sequence[np.ndarray], texts: Sequence[Sequence[str]] | None = None, *,
                      margin: str = DEFAULT_MARGIN, k: int = 4, mode: str = "text",
                      config: EngineConfig | None = None) -> np.ndarray:
    """Error % for every ordered pair (row = source, column = target) of a multi-way corpus.

    The diagonal is 0, as in LASER's n-way table.
    """
    m = len(embeddings)
    out = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            if i == j:
                continue
            r = xsim(embeddings[i], embeddings[j], margin=margin, k=k, mode=mode,
                     tgt_text=None if texts is None else texts[j], config=config)
            out[i, j] = r.error_rate
    return out
