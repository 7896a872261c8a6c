"""xsim and xsim++ as MTEB tasks, and xsimpp results as MTEB result files (docs/mteb.md)::

    import mteb
    from xsimpp.integrations.mteb import XsimPlusPlusTask, XsimTask, to_mteb_results

    model = mteb.get_model("sentence-transformers/LaBSE")
    mteb.evaluate(model, tasks=[XsimTask("kea,fur"), XsimPlusPlusTask("kea,fur", augmented="auto")])
    to_mteb_results(xsimpp.evaluate(model, "kea,fur", augmented="auto"), "~/.cache/mteb/results")

**The tasks** are mteb 2.x ``AbsTaskBitextMining`` tasks on FLORES-200 (devtest by default), each
source language against English (hf subsets ``kea_Latn-eng_Latn``, as mteb's FloresBitextMining
names them). Their data comes from xsimpp's dataset layer (the local FLORES folder, never the HF
hub), read and checked when the task is made; mteb's model is fed as mteb feeds it
(``xsimpp.encoders.mteb_model``, told this task's metadata and split) and scored by xsimpp's own
engine with LASER's protocol (xsimpp's defaults: ratio margin, k = 4, text mode), so a number equals
`xsimpp eval`'s for the same vectors. xsim++ adds the augmented English of
``xsimpp augment flores200`` (``augmented="auto"`` or a folder, as ``--augmented``): strict-style
negatives for ``XsimPlusPlusTask``, paper-style (or LASER's published ones) for
``XsimPlusPlusPaperTask``; the style is in the task name because mteb reuses a stored result by task
name, and other negatives give other numbers. ``limit=N`` scores the first N lines and names the
split ``devtest[:N]``, so a partial run is never stored as the whole.

**Scores.** xsim is an error rate: lower is better. mteb has no lower-is-better main score (its
leaderboards and ``ModelResult`` rank every main score descending), so the main score is the
accuracy the error rate leaves, ``xsim_accuracy`` = 1 - errors / n (``xsimpp_accuracy`` for
xsim++), and the error rate itself is reported beside it (``xsim_error_rate``, a fraction, as mteb
stores scores), with the error counts, the error types (xsim++) and the record's xsimpp signature.

**Export.** ``to_mteb_results`` writes xsimpp records of these tasks (xsim / xsim++ on FLORES-200
into English, measured with the tasks' protocol) as mteb writes results:
``<folder>/<model name as path>/<revision>/<TaskName>.json`` plus ``model_meta.json``, through
mteb's ``TaskResult`` and ``ResultCache``, all files atomically; an existing result file of the
same task is merged as mteb merges it.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar, Iterable

from ..datasets import FLORES200_CODES
from ..encoders.mteb_model import MtebModelEncoder
from ..errors import BadInputError, MissingResourceError
from ..results import ResultRecord, Results
from ..tasks.registry import task
from ..tasks.runner import RunOptions, prepare, run_prepared
from ..tasks.xsim import XsimSettings
from ..textio import atomic_write_many, check_output_dir, locked, make_dirs, path_inside

try:
    from datasets import Dataset
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining
    from mteb.cache import ResultCache
    from mteb.models.model_meta import ModelMeta
    from mteb.results import TaskResult
except ImportError:
    raise MissingResourceError("xsimpp.integrations.mteb needs mteb 2.x: pip install 'xsimpp[mteb]'") from None

TARGET = "eng_Latn"
# Every FLORES-200 language into English, named as mteb's FloresBitextMining names its subsets.
FLORES_SUBSETS = {f"{c}-{TARGET}": [c.replace("_", "-"), TARGET.replace("_", "-")] for c in FLORES200_CODES
                  if c != TARGET}
# The xsim tasks score with xsimpp's default settings (LASER's protocol).
PROTOCOL = XsimSettings()
FLORES_CITATION = r"""
@article{nllb2022,
  author = {{NLLB Team} and Costa-juss{\`a}, Marta R. and others},
  title = {No Language Left Behind: Scaling Human-Centered Machine Translation},
  year = {2022},
}"""


def _metadata(name: str, metric: str, description: str, reference: str) -> TaskMetadata:
    main = f"{metric.replace('++', 'pp')}_accuracy"
    return TaskMetadata(
        name=name,
        description=(f"{description} Main score: {main} = 1 - {metric} error rate (higher is better; mteb ranks "
                     f"every main score descending); the error rate, lower is better, is in "
                     f"{metric.replace('++', 'pp')}_error_rate. Scored by xsimpp's engine (LASER's protocol: ratio "
                     f"margin, k = 4, text mode) on FLORES-200 read from the local data folder."),
        reference=reference,
        # Read from local files by xsimpp's dataset layer, never loaded from the hub; the data each number
        # was measured on is named by the checksum in its score's xsimpp_signature.
        dataset={"path": "facebook/flores", "revision": "local-files"},
        type="BitextMining",
        category="t2t",
        modalities=["text"],
        eval_splits=["devtest"],
        eval_langs=FLORES_SUBSETS,
        main_score=main,
        date=("2022-01-01", "2022-12-31"),
        domains=["Non-fiction", "Encyclopaedic", "Written"],
        task_subtypes=[],
        license="cc-by-sa-4.0",
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="created",
        bibtex_citation=FLORES_CITATION,
    )


class XsimTask(AbsTaskBitextMining):
    """xsim (Artetxe & Schwenk 2019) on FLORES-200 as an MTEB task: each language of ``langs``
    against English; see the module docstring. ``split``: dev or devtest; ``data_dir``: the data
    root (default: $XSIMPP_DATA_DIR, then the user data dir); ``limit``: the first N lines."""

    parallel_subsets = True
    metric: ClassVar[str] = "xsim"
    style: ClassVar[str | None] = None  # xsim++ negatives: strict or paper
    metadata = _metadata("Flores200Xsim", "xsim",
                         "xsim: the error rate of margin-based retrieval of each source's English translation "
                         "among all English sentences (Artetxe & Schwenk 2019).",
                         "https://aclanthology.org/P19-1309/")

    def __init__(self, langs, *, split: str = "devtest", data_dir=None, limit: int | None = None, seed: int = 42):
        self._data, self._settings, _ = prepare(task("xsim"), langs=langs, split=split, data_dir=data_dir,
                                                limit=limit, dataset="flores200", settings=PROTOCOL,
                                                run=RunOptions(cache=False), **self.negatives())
        super().__init__(seed=seed)
        self._bitexts = {f"{bt.src_lang}-{bt.tgt_lang}": bt for bt in self._data.bitexts}
        self.hf_subsets = list(self._bitexts)
        # The split as xsimpp names it: devtest, or devtest[:N] for a limited run.
        self.filter_eval_splits([self._data.bitexts[0].split])

    def negatives(self) -> dict[str, Any]:
        """The xsim++ negatives' data knobs (``augmented``, ``style``); xsim has none."""
        return {}

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        """mteb's view of the data xsimpp read when the task was made: one column per language."""
        if self.data_loaded:
            return
        columns = {TARGET: list(self._data.bitexts[0].tgt)}
        columns.update({bt.src_lang: list(bt.src) for bt in self._data.bitexts})
        self.dataset = {self.eval_splits[0]: Dataset.from_dict(columns)}
        self.data_loaded = True

    def _evaluate_subset(self, model, data_split, *, hf_split: str, hf_subset: str, encode_kwargs,
                         prediction_folder=None, parallel: bool = False, num_proc=None, timer=None,
                         **kwargs: Any) -> dict[str, dict]:
        if prediction_folder is not None:
            raise BadInputError(f"{self.metadata.name} keeps no per-sentence predictions; drop prediction_folder")
        unknown = [s for s in self.hf_subsets if s not in self._bitexts]
        if unknown:
            raise BadInputError(f"{self.metadata.name} was made for {', '.join(self._bitexts)}, not {', '.join(unknown)}; "
                                "make the task with those languages")
        data = dataclasses.replace(self._data, bitexts=[self._bitexts[s] for s in self.hf_subsets])
        encoder = MtebModelEncoder(model, encode_kwargs=dict(encode_kwargs), task_metadata=self.metadata,
                                   hf_split=hf_split)
        res = run_prepared(task("xsim"), encoder, data, self._settings, RunOptions(cache=False))
        return {f"{r.src_lang}-{r.tgt_lang}": self.scores(r) for r in res.records if r.metric == self.metric}

    @classmethod
    def scores(cls, record: ResultRecord) -> dict[str, Any]:
        """One record as this task's scores of its subset (the main score an accuracy: see the module docstring)."""
        key = cls.metric.replace("++", "pp")
        out: dict[str, Any] = {f"{key}_accuracy": 1 - record.errors / record.n, f"{key}_error_rate": record.errors / record.n,
                               "errors": record.errors, "n": record.n}
        out.update({f"errors_{t.lower()}": c for t, c in sorted(record.error_types.items())})
        out["xsimpp_signature"] = record.signature.format()
        out["main_score"] = out[cls.metadata.main_score]
        return out


class XsimPlusPlusTask(XsimTask):
    """xsim++ (Chen et al. 2023) on FLORES-200 with strict-style negatives as an MTEB task:
    ``augmented`` is "auto" (where ``xsimpp augment flores200`` writes them) or a folder."""

    metric = "xsim++"
    style = "strict"
    metadata = _metadata("Flores200XsimPlusPlus", "xsim++",
                         "xsim++: xsim with hard negatives among the English targets (causality, entity and number "
                         "alterations of each English sentence, xsimpp's strict-style negatives) (Chen et al. 2023).",
                         "https://aclanthology.org/2023.acl-short.11/")

    def __init__(self, langs, *, augmented="auto", **kwargs: Any):
        self.augmented = augmented
        super().__init__(langs, **kwargs)

    def negatives(self) -> dict[str, Any]:
        return {"augmented": self.augmented, "style": self.style}


class XsimPlusPlusPaperTask(XsimPlusPlusTask):
    """xsim++ with paper-style negatives (the paper's rules, or LASER's published files)."""

    style = "paper"
    metadata = _metadata("Flores200XsimPlusPlusPaper", "xsim++",
                         "xsim++ with the xSIM++ paper's style of hard negatives (its rules, or LASER's published "
                         "files) among the English targets (Chen et al. 2023).",
                         "https://aclanthology.org/2023.acl-short.11/")



def task_of(record: ResultRecord) -> type[XsimTask]:
    """The MTEB task a record is a score of; one sentence naming what does not fit otherwise."""
    s = record.signature
    where = f"the {record.metric} record {record.src_lang}-{record.tgt_lang} of {s.encoder} on {s.dataset}"
    if record.metric not in ("xsim", "xsim++"):
        raise BadInputError(f"{where} has no MTEB task: only xsim and xsim++ records export (xsimpp.integrations.mteb)")
    if s.dataset != "flores200" or record.tgt_lang != TARGET or f"{record.src_lang}-{TARGET}" not in FLORES_SUBSETS:
        raise BadInputError(f"{where} has no MTEB task: the tasks score FLORES-200 languages into {TARGET}")
    protocol = PROTOCOL.params()
    differs = {k: s.params.get(k) for k in protocol if s.params.get(k) != protocol[k]}
    if differs or s.params.get("protocol", "laser") != "laser" or "rerank" in s.params:
        raise BadInputError(f"{where} was measured with {differs or s.params}, not the MTEB tasks' LASER protocol "
                            f"({', '.join(f'{k} {v}' for k, v in protocol.items())}); only such records export")
    if record.metric == "xsim":
        return XsimTask
    style = s.params.get("negatives")
    return XsimPlusPlusTask if style == "strict" else XsimPlusPlusPaperTask


def model_meta_of(record: ResultRecord) -> ModelMeta:
    """The model as MTEB names it: an mteb model by its MTEB name, any other by its xsimpp id."""
    name = record.signature.encoder
    if name.startswith(f"{MtebModelEncoder.name}:"):
        name = name.split(":", 1)[1]
    return ModelMeta.create_empty(overwrites={"name": name, "revision": record.signature.encoder_revision})


def to_mteb_results(results: Results | Iterable[ResultRecord], folder) -> list[Path]:
    """Write xsimpp records (``Results`` or records) as MTEB result files under ``folder`` (give
    ``<mteb cache>/results`` to put them where ``mteb.ResultCache`` reads): one
    ``<model>/<revision>/<TaskName>.json`` per model and task, with ``model_meta.json``; returns the
    result files written. Every file is written or none."""
    if isinstance(results, (str, bytes, os.PathLike)) or not isinstance(results, (Results, Iterable)):
        raise BadInputError(f"to_mteb_results takes a run's Results or a list of ResultRecord, not {results!r}")
    records = list(results.records if isinstance(results, Results) else results)
    if not all(isinstance(r, ResultRecord) for r in records):
        raise BadInputError("to_mteb_results takes a run's Results or a list of ResultRecord; the list holds "
                            f"{type(next(r for r in records if not isinstance(r, ResultRecord))).__name__}")
    if not records:
        raise BadInputError("no records to export; run xsimpp.evaluate first")
    if not isinstance(folder, (str, os.PathLike)):
        raise BadInputError(f"to_mteb_results writes into a folder (a path), not {folder!r}")
    out = check_output_dir(Path(folder).expanduser(), "MTEB results folder")
    grouped: dict[tuple[str, str, type[XsimTask]], list[ResultRecord]] = defaultdict(list)
    for r in records:
        grouped[(r.signature.encoder, r.signature.encoder_revision, task_of(r))].append(r)
    files: list[tuple[Path, bytes]] = []
    written: list[Path] = []
    # read, merge and write under one lock: two exports of one model's languages keep both
    make_dirs(out, "MTEB results folder")
    with locked(out / ".xsimpp-mteb-export.lock"), tempfile.TemporaryDirectory() as tmp:
        staging = ResultCache(tmp)
        for (_, _, task), recs in grouped.items():
            meta = model_meta_of(recs[0])
            scores: dict[str, dict[str, dict]] = defaultdict(dict)
            for r in recs:
                scores[r.signature.split][f"{r.src_lang}-{r.tgt_lang}"] = task.scores(r)
            result = TaskResult.from_task_results(task, scores, evaluation_time=None,
                                                  date=max(_created(r) for r in recs))
            staged = staging.get_task_result_path(task.metadata.name, meta)
            # <model>/<revision>/<task>.json, each name checked before anything is written: a revision
            # such as '../x' must not choose where the file goes
            target = path_inside(out, meta.model_name_as_path(), str(meta.revision), staged.name,
                                 what=f"the MTEB result file of {meta.name}@{meta.revision}")
            if target != out / staged.relative_to(staging.cache_path / "results"):
                raise BadInputError(f"mteb would write the result of {meta.name}@{meta.revision} elsewhere than "
                                    f"{target}; not exported")
            if target.is_file():
                result = _merged(target, result)
            staging.save_to_cache(result, meta)
            files += [(target, staged.read_bytes()),
                      (target.parent / "model_meta.json", (staged.parent / "model_meta.json").read_bytes())]
            written.append(target)
        atomic_write_many(files)
    return written


def _created(record: ResultRecord) -> datetime.datetime:
    """When the record was made (MTEB's result date); a damaged date ends in one sentence."""
    try:
        return datetime.datetime.fromisoformat(record.created)
    except (TypeError, ValueError):
        raise BadInputError(f"the {record.metric} record {record.src_lang}-{record.tgt_lang} of "
                            f"{record.signature.encoder} has no readable creation date (created: {record.created!r}, "
                            "not an ISO date); re-run it to export it") from None


def _merged(path: Path, new: TaskResult) -> TaskResult:
    """``new`` merged into the result file at ``path`` as mteb merges results (same task and data)."""
    try:
        return TaskResult.from_disk(path).merge(new)
    except Exception as e:  # noqa: BLE001 - an unreadable or foreign file: mteb raises many types for it
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
        raise BadInputError(f"cannot add to the MTEB result file {path}: {first} (not an MTEB result of this task; "
                            "move it away or export to another folder)") from None
