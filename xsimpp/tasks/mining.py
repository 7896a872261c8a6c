"""The mining ground truths of `xsimpp study`: gold pairs hidden among real English distractors,
mined with the margin kNN both ways (BUCC's candidates), scored as F1 / precision / recall. The
study computes them per (encoder, language) cell (``xsimpp.study.run.mine_language``) and ranks
the proxies against them; their names are registered here with the other metrics."""

from __future__ import annotations

from .base import MetricInfo, Task

# Ground truth -> what it is (the study ranks the proxies against each).
GROUND_TRUTHS = {
    "mining_f1": "mining F1, FLORES + NTREX gold (threshold cross-validated)",
    "mining_f1_ntrex": "mining F1 on NTREX gold only (sentences no proxy saw)",
    "mining_p_fixed": "mining precision at the fixed threshold",
    "mining_f1_fixed": "mining F1 at the fixed threshold (set in advance, as a miner runs it)",
}


class MiningTruthTask(Task):
    name = "mining"
    description = "bitext mining of gold pairs among distractors: the ground truth `xsimpp study` ranks proxies by"
    metrics = {m: MetricInfo("%", lower_is_better=False)
               for m in ("mining_f1", "mining_f1_ntrex", "mining_f1_flores", "mining_p_fixed", "mining_r_fixed",
                         "mining_f1_fixed")}
