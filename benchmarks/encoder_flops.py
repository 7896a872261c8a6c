"""The GEMM work of a BERT-family encoder's forward pass, counted from its token widths: what the
encoding benchmarks hold a measured rate against (``bench_e5_roofline.py``, ``gpu/run_commands.py``).

Per token and layer: Q, K, V and the output projection (4 h^2 multiply-adds), the feed-forward
(2 h ff), and attention's QK^T and AV over the row's own width (2 h w). Embedding look-ups, layer
norms, softmax and GELU are not GEMM work and are left out, so a rate computed from this is a
floor on what the kernels did. A width counts every token the model runs, its specials and
prompt included (``tokenize``'s ids have them already) and, for the padded count, the padding."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def dims(folder: Path) -> tuple[int, int, int]:
    """(hidden size, feed-forward size, layers) from a model folder's config.json."""
    cfg = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    return int(cfg["hidden_size"]), int(cfg["intermediate_size"]), int(cfg["num_hidden_layers"])


def gemm_flops(widths, hidden: int, ff: int, layers: int) -> float:
    """Floating-point operations (2 per multiply-add) of rows of these widths through ``layers`` layers."""
    w = np.asarray(widths, dtype=np.float64)
    return 2.0 * layers * float(np.sum(w * (4 * hidden * hidden + 2 * hidden * ff) + 2 * hidden * w ** 2))


def linear_shapes(hidden: int, ff: int, rows: int = 4096) -> list[tuple[int, int, int, int]]:
    """(rows, in, out, count per layer) of a layer's weight products: the shapes its linear GEMMs run."""
    return [(rows, hidden, hidden, 4), (rows, hidden, ff, 1), (rows, ff, hidden, 1)]
