"""The exact kNN engine: neighbours and margins that are the same on every machine.

``exact`` states the contract and holds the plain routines that define it; ``kernels`` the
compiled selection; ``knn`` the in-memory engine (both directions in one pass, margins);
``mining`` the sharded, resumable, memory-bounded engine for large sets. Arrays in, arrays out:
the engine never imports encoders, datasets, tasks or the CLI.
"""

from .device import DeviceRows
from .exact import normalize
from .knn import (DEFAULT_MARGIN, MARGINS, EngineConfig, MarginKNN, TopK, check_k, check_margin,
                  check_vectors_or_similarity, hold_rows, margin_knn, margin_scores, nearest_neighbors, pair_similarity,
                  topk_both)

__all__ = ["DEFAULT_MARGIN", "DeviceRows", "EngineConfig", "MARGINS", "MarginKNN", "TopK", "check_k", "check_margin",
           "check_vectors_or_similarity", "hold_rows", "margin_knn", "margin_scores", "nearest_neighbors", "normalize",
           "pair_similarity", "topk_both"]
