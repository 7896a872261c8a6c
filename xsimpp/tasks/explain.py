"""The wrong decisions behind a record (`xsimpp explain`, `eval --dump`): its per-sentence outcomes
joined with the sentences they index -- the source, its gold target and the chosen one.

The sentences come from the data the task reads: for a run, the knobs it was given; for a stored
record, knobs rebuilt from its signature (dataset, split with its ``[:N]`` or ``[sample=N,seed=S]``
selection, languages, xsim++ negatives' style). Either way the data's checksum must equal the one
the record signed, so a decision is never shown against other sentences than it was made on.
Records of xsim (xsim++, P-xSIM), Tatoeba (each direction's queries against the other side) and MTEB's
score are explained."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..datasets.base import LASER_PUBLISHED, STYLES
from ..errors import BadInputError, XsimppError
from ..results import Outcomes, ResultRecord


@dataclass(frozen=True)
class Decision:
    """One wrong choice: the source line (1-based, in the scored selection), what was chosen instead
    of the gold, both scores (margin, cosine or P-xSIM's blend) and the error type."""

    line: int
    error_type: str
    source: str
    gold: str
    chosen: str
    gold_score: float
    chosen_score: float

    @property
    def gap(self) -> float:
        """How much the wrong target outscored the gold (the most confident mistakes first)."""
        return self.chosen_score - self.gold_score


def wrong_decisions(outcomes: Outcomes, sources: Sequence[str], targets: Sequence[str],
                    item_targets: Sequence[Sequence[str]] | None = None) -> list[Decision]:
    """The wrong decisions, most confident first (largest chosen-minus-gold score; a gold without a
    score last), then by line. ``sources[i]`` is item i's query; its gold and chosen index
    ``targets``, or ``item_targets[i]`` where items search different sides (Tatoeba's mean)."""
    names = outcomes.type_names()
    n_src = len(sources) if item_targets is None else len(sources) // 2 or 1

    def side(i):
        return targets if item_targets is None else item_targets[i]

    for i in np.flatnonzero(~outcomes.correct).tolist():  # an index past the data (or -1) is no sentence of it
        for what, index in (("gold", int(outcomes.gold[i])), ("chosen", int(outcomes.chosen[i]))):
            if not 0 <= index < len(side(i)):
                raise XsimppError(f"the outcomes name {what} target {index} for line {i % n_src + 1}, but the data has "
                                  f"{len(side(i))} targets; they are not of this data (re-run the evaluation)")
    out = [Decision(i % n_src + 1, names[i] or "wrong", sources[i], side(i)[int(outcomes.gold[i])],
                    side(i)[int(outcomes.chosen[i])], float(outcomes.gold_score[i]), float(outcomes.chosen_score[i]))
           for i in range(len(outcomes)) if not outcomes.correct[i]]
    return sorted(out, key=lambda d: (math.isnan(d.gap), -d.gap if not math.isnan(d.gap) else 0.0, d.line))


EXPLAINED = ("xsim", "mteb-bitext", "tatoeba")  # the tasks whose records explain() reads sentences for


def _task_of(record: ResultRecord):
    from . import registry

    info = registry.METRICS.get(record.metric)
    if info is None or info.producer not in EXPLAINED:
        raise BadInputError(f"explain shows the decisions of xsim, xsim++, P-xSIM, Tatoeba and MTEB bitext records, "
                            f"not of {record.metric}")
    return registry.task(info.producer)


def sentences_of(record: ResultRecord, task, data) -> tuple:
    """(queries, targets[, per-item targets]) of ``record`` in ``data`` as ``task.load`` read it,
    checked against the record's data checksum: ``wrong_decisions``'s arguments. xsim's targets
    are the gold ones, then any xsim++ negatives; Tatoeba's eng->xx queries are the English side
    searching the other, its mean's queries both directions'."""
    bitexts = data.bitexts if hasattr(data, "bitexts") else data
    found = [bt for bt in bitexts if (bt.src_lang, bt.tgt_lang) == (record.src_lang, record.tgt_lang)]
    if not found:
        raise BadInputError(f"the data has no {record.src_lang}-{record.tgt_lang} pair")
    bt = found[0]
    targets, checksum = list(bt.tgt), bt.checksum
    aug = getattr(data, "augmented", None)
    if record.metric.endswith("++"):
        if aug is None or aug.lang != bt.tgt_lang:
            raise BadInputError(f"the {record.metric} record needs its xsim++ negatives, which were not found")
        targets += list(aug.lines)
        checksum = hashlib.sha256((bt.checksum + aug.checksum).encode()).hexdigest()
    if checksum != record.signature.data_checksum:
        raise BadInputError(f"the data found now differs from the data of the {record.metric} "
                            f"{record.src_lang}-{record.tgt_lang} record (checksum {checksum[:12]} vs "
                            f"{record.signature.data_checksum[:12]}); re-run it, then explain")
    if record.metric == "tatoeba_acc_en2xx":
        return list(bt.tgt), list(bt.src)
    if record.metric == "tatoeba_acc_mean":
        n = len(bt.src)
        return list(bt.src) + list(bt.tgt), targets, [bt.tgt] * n + [bt.src] * n
    return list(bt.src), targets


_SELECTION = re.compile(r"^(?P<base>[^\[]+)(?:\[:(?P<limit>\d+)\]|\[sample=(?P<sample>\d+),seed=(?P<seed>\d+)\])?$")


def source_of(record: ResultRecord, data_dir=None, augmented=None):
    """The task and the knobs that read a stored record's data again (from its signature;
    ``augmented``: the folder of its xsim++ negatives, default the places `--augmented auto` looks)."""
    task = _task_of(record)
    s = record.signature
    if s.dataset == "parallel":
        raise BadInputError("this record was measured on two files given by path (--src-file/--tgt-file), which a "
                            "stored record does not name; run `xsimpp eval ... --dump FILE` to see its decisions")
    m = _SELECTION.match(s.split)
    if not m:
        raise BadInputError(f"cannot read the split {s.split!r} of the record")
    if task.name == "tatoeba":  # its test sets are named by their source, English the pivot
        knobs: dict[str, Any] = {"langs": record.src_lang, "data_dir": data_dir,
                                 "source": "challenge" if s.dataset == "tatoeba-challenge" else "v1"}
    else:
        knobs = {"dataset": s.dataset, "split": m["base"], "langs": record.src_lang, "target": record.tgt_lang,
                 "data_dir": data_dir}
    if m["limit"]:
        knobs["limit"] = int(m["limit"])
    if m["sample"]:
        knobs.update(sample=int(m["sample"]), sample_seed=int(m["seed"]))
    settings: dict[str, Any] = {}
    if record.metric.endswith("++"):
        # the style the negatives were found under: strict and paper are asked for by name, LASER's
        # published files count as paper-style, others (a folder's hand-written ones) as found
        style = s.params.get("negatives")
        style = style if style in STYLES else "paper" if style == LASER_PUBLISHED else None
        knobs.update(augmented=augmented or "auto", style=style)
        settings["margin"] = s.params.get("margin", "ratio")
    return task, task.Source(**knobs), task.Settings.make(**settings)


def explain_record(record: ResultRecord, outcomes: Outcomes, data_dir=None, augmented=None) -> list[Decision]:
    """The wrong decisions of a stored record, its sentences read again and checked."""
    task, source, settings = source_of(record, data_dir, augmented)
    data = task.load(source, settings)
    return wrong_decisions(outcomes, *sentences_of(record, task, data))
