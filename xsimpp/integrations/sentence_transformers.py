"""xsim / xsim++ as a sentence-transformers evaluator, for ``SentenceTransformerTrainer`` or a
plain call::

    from xsimpp.integrations.sentence_transformers import XsimEvaluator

    evaluator = XsimEvaluator(["kea", "fur"], split="dev", augmented="auto")
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train, loss=loss,
                                         evaluator=evaluator)          # logs eval_flores200-dev_xsim_avg ...
    evaluator(model)                                                   # {"flores200-dev_xsim_avg": 12.3, ...}

The data (FLORES-200 by default, any ``xsimpp.evaluate`` dataset or two files) is read and checked
once, when the evaluator is made; each call encodes it with the model as it is at that moment and
scores it exactly as `xsimpp eval` does. Metrics, prefixed with ``name`` (default
``<dataset>-<split>``): ``<src>-<tgt>_xsim`` and ``_xsimpp`` (error %, per pair), ``xsim_avg`` and
``xsimpp_avg`` (micro averages, LASER's); the primary metric is ``xsimpp_avg`` when augmented
targets are given, else ``xsim_avg``; lower is better (``greater_is_better = False``).
``last_results`` holds the last call's ``xsimpp.results.Results`` (records with signatures: the
model signs as ``py:<encoder_name or class>@weights.<sha256 of its parameters>``, so every
checkpoint has its own revision; a model still at the weights of a folder ``--encoder sbert``
loads, e.g. before the first step, signs as that encoder). Nothing is cached or stored: weights change between calls.
"""

from __future__ import annotations

import csv
import logging
import os
from typing import Any

from ..encoders.pyobject import PyObjectEncoder, adopt_named
from ..errors import MissingResourceError
from ..results import Results
from ..tasks.registry import task
from ..tasks.runner import RunOptions, prepare, run_prepared

try:
    from sentence_transformers.sentence_transformer.evaluation import SentenceEvaluator
except ImportError:
    raise MissingResourceError("XsimEvaluator needs sentence-transformers: pip install 'sentence-transformers>=6.0'"
                               ) from None

log = logging.getLogger(__name__)


def _metric_name(text: str) -> str:
    return text.replace("++", "pp")


class XsimEvaluator(SentenceEvaluator):
    """xsim (and xsim++) error rates of a SentenceTransformer; see the module docstring."""

    def __init__(self, langs="kea,fur", *, split: str | None = "dev", batch_size: int = 32,
                 encoder_name: str | None = None, name: str | None = None, write_csv: bool = True, **knobs):
        """``knobs``: the xsim task's data and settings (``dataset``, ``target``, ``augmented``,
        ``limit``, ``src_file``/``tgt_file``, ``margin``, ``k``, ``mode``, ...), read and checked here."""
        super().__init__()
        # Nothing cached or stored: the weights change between calls.
        self._data, self.settings, self._run = prepare(task("xsim"), langs=langs, split=split,
                                                       run=RunOptions(cache=False), **knobs)
        self.bitexts, self.augmented = self._data.bitexts, self._data.augmented
        first = self.bitexts[0]
        self.name = name if name is not None else f"{first.dataset}-{first.split}"
        self.batch_size = batch_size
        self.encoder_name = encoder_name
        self.write_csv = write_csv
        self.greater_is_better = False
        self.primary_metric = "xsimpp_avg" if self.augmented is not None else "xsim_avg"
        self.csv_file = f"xsim_evaluation_{self.name}_results.csv"
        self.last_results: Results | None = None

    def __call__(self, model, output_path: str | None = None, epoch: int = -1, steps: int = -1) -> dict[str, float]:
        where = f" after epoch {epoch}" + (f", {steps} steps" if steps != -1 else "") if epoch != -1 else ""
        # No encode keywords: they would enter the signature, which then differs from xsimpp.evaluate(model)'s.
        # A model still at the weights of a folder `--encoder sbert` loads is that encoder (one identity);
        # a trained one signs with its own weights.
        enc = (adopt_named(model) if self.encoder_name is None else None) or PyObjectEncoder(
            model, name=self.encoder_name, batch_size=self.batch_size)
        self.last_results = run_prepared(task("xsim"), enc, self._data, self.settings, self._run)
        report = self.last_results.report
        metrics: dict[str, float] = {}
        for rec in report.records:
            metrics[f"{rec.src_lang}-{rec.tgt_lang}_{_metric_name(rec.metric)}"] = rec.value
        metrics["xsim_avg"] = report.average("xsim").error_rate
        if self.augmented is not None:
            metrics["xsimpp_avg"] = report.average("xsim++").error_rate
        log.info("xsim on %s%s: %s", self.name, where, ", ".join(f"{k} {v:.2f}" for k, v in metrics.items()))
        if output_path is not None and self.write_csv:
            self._write_csv(output_path, epoch, steps, metrics)
        metrics = self.prefix_name_to_metrics(metrics, self.name)
        self.store_metrics_in_model_card_data(model, metrics, epoch, steps)
        return metrics

    def _write_csv(self, output_path: str, epoch: int, steps: int, metrics: dict[str, float]) -> None:
        os.makedirs(output_path, exist_ok=True)
        path = os.path.join(output_path, self.csv_file)
        new = not os.path.isfile(path)
        with open(path, "a", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            if new:
                w.writerow(["epoch", "steps", *metrics])
            w.writerow([epoch, steps, *(f"{v:.4f}" for v in metrics.values())])

    def get_config_dict(self) -> dict[str, Any]:
        return {**self.settings.params(), "languages": [f"{bt.src_lang}-{bt.tgt_lang}" for bt in self.bitexts],
                "split": self.bitexts[0].split, "xsim++": self.augmented is not None}
