"""Corpus filtering rules of Tan & Koehn (2022, appendix 6.2) and the WMT 2020 token-budget
subsampling, as pure functions (the streaming I/O lives in ``tasks.filter``).

- ``token_overlap``: the share of tokens two sides have in common, precisely: tokens are the
  whitespace-separated words after Unicode case folding; overlap = |A ∩ B| / max(|A|, |B|) with
  A, B the two sides' token *multisets* (a word twice on one side and once on the other counts
  once). 1.0 for a side copied into the other; a pair is dropped when it is > ``OVERLAP_LIMIT``
  (the paper: "over 90% overlap between source and target side sentences"; it does not define
  the measure, so this is ours).
- ``first_occurrences``: exact-duplicate pairs by 128-bit hashes, the first occurrence kept.
- ``rank``: pairs by score, best first, ties to the earlier line (a total order, so the ranking
  is the same everywhere).
- ``budget_prefix``: the longest prefix of the ranking whose English tokens add up to at most the
  budget (WMT 2020's subsampling to 2, 3, 5, 7 M English words; the pair that would overshoot and
  every pair after it are left out).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

OVERLAP_LIMIT = 0.9  # Tan & Koehn: pairs whose sides overlap by more than 90 % are dropped


def tokens(text: str) -> list[str]:
    """The overlap rule's tokens: whitespace-separated words after Unicode case folding."""
    return text.casefold().split()


def token_overlap(a: str, b: str) -> float:
    """|A ∩ B| / max(|A|, |B|) over the two sides' token multisets (see the module docstring)."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    common = sum((Counter(ta) & Counter(tb)).values())
    return common / max(len(ta), len(tb))


def first_occurrences(hashes: np.ndarray) -> np.ndarray:
    """Boolean mask: True where a row of ``hashes`` (n, 2) uint64 is seen for the first time."""
    h = np.ascontiguousarray(hashes, dtype=np.uint64).reshape(-1, 2)
    n = len(h)
    keep = np.zeros(n, bool)
    if n == 0:
        return keep
    order = np.lexsort((np.arange(n), h[:, 1], h[:, 0]))  # by hash, then line: a group's first is its earliest
    s = h[order]
    new = np.ones(n, bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    keep[order[new]] = True
    return keep


def rank(scores: np.ndarray) -> np.ndarray:
    """Positions of ``scores`` best first; equal scores keep their input order."""
    s = np.asarray(scores, np.float64)
    if np.isnan(s).any():
        raise ValueError("scores hold NaN")
    return np.lexsort((np.arange(len(s)), -s))


def budget_prefix(order: np.ndarray, token_counts: np.ndarray, budget: int) -> int:
    """How many pairs of ``order`` fit: the longest prefix whose token counts sum to <= ``budget``."""
    if budget < 0:
        raise ValueError("budget must be >= 0")
    total = np.cumsum(np.asarray(token_counts, np.int64)[np.asarray(order, np.int64)])
    return int(np.searchsorted(total, budget, side="right"))
