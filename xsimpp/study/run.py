"""Run a study: per (encoder, language) the proxies and the mining ground truth, then the ranking
analysis of every proxy against mining -- the same statistics as `xsimpp rank`
(``tasks.ranking.evaluate_table``: pairwise accuracy within language directions, Kocmi et al.
2021; bootstrap CI; PERM-BOTH; correlations), with mining F1 in the place of BLEU.

Every proxy and the ground truth is a row naming a registered task and metric (``study.proxies``:
the ``[proxies]`` keys generate the built-in ones, ``[[proxies.task]]`` tables add theirs), run
through the runner over the cache the study's encoding pass filled. The ground truths (each its own ranking: ``tasks.mining.GROUND_TRUTHS``)
are the ``mining-f1`` task's metrics, defined there: ``mining_f1`` (FLORES + NTREX gold, threshold
cross-validated; partly circular, as xsim on FLORES devtest shares its sentences),
``mining_f1_ntrex`` (sentences no proxy saw), ``mining_p_fixed`` / ``mining_f1_fixed`` (LASER's fixed
1.06 cut), with ``[mining] unpaired_sources`` as false-positive bait. Each ranking reports its
pairwise accuracy over encoder pairs of the same ``family`` (within a model: checkpoints of one
training run) and of different families (across models) separately as well, as the xSIM++ paper's
appendix D does.

With a non-English ``[study] target`` T every direction is X->T: xsim and xsim++ on FLORES devtest
X->T (T's strict negatives; the error-type subsets only over the types T's negatives have: entity
and number, causality too where curated rules exist), mining into T's lines and a T pool, no
Tatoeba proxy. Records name T as their target language and the mining records sign it
(``target``); an English study's records and signatures are as before targets existed.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..encoders.backbone.manifest import training_manifest
from ..errors import BadInputError, XsimppError
from ..results import ResultRecord
from ..tasks import registry
from ..tasks.mining import FLORES_DEV_LINES, GROUND_TRUTHS
from ..tasks.cost import cost_line, read_rate
from ..tasks.ranking import RankingTable, evaluate_table
from ..tasks.runner import RunOptions
from .config import StudyConfig, gold_flores_lines, mining_knobs, target_language
from .data import ENGLISH, StudyData
from .encoders import StudyEncoder
from .proxies import lower_is_better, row_input, run_rows, study_rows

log = logging.getLogger(__name__)


@dataclass
class StudyResult:
    config: StudyConfig
    cells: list[dict[str, Any]]  # one row per (encoder, language): proxies, ground truths, counts
    proxies: list[str]
    lower_is_better: dict[str, bool]
    rankings: dict[str, Any]  # ground truth -> RankingReport (all languages, Tatoeba left out)
    tatoeba_rankings: dict[str, Any]  # ground truth -> RankingReport on the languages with Tatoeba
    records: list[ResultRecord]
    costs: list[dict[str, Any]]
    data_summary: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # per (encoder, language): the ground truth's per-sentence outcomes (``LanguageMining.outcome_table``)
    outcomes: list[dict[str, Any]] = field(default_factory=list)


def dev_lines_used(cfg: StudyConfig) -> tuple[int, str]:
    """How many of FLORES dev's first lines the study mines (unpaired sources, and FLORES dev gold),
    and what they are, for the checkpoint guard."""
    if cfg.flores_gold_split != "dev":
        return cfg.unpaired_sources, "as sources without a translation"
    end = cfg.flores_gold_offset + (gold_flores_lines(cfg) or FLORES_DEV_LINES - cfg.flores_gold_offset)
    return max(end, cfg.unpaired_sources), "as gold" + (" and as sources without a translation"
                                                      if cfg.unpaired_sources else "")


def check_unpaired_unseen(unpaired_sources: int, langs: list[str], encoders: list[StudyEncoder],
                          what: str = "as sources without a translation") -> None:
    """Refuse a checkpoint (an encoder whose ``model`` folder has an ``xsimpp train`` manifest) that
    was trained on the FLORES dev lines the study mines (``unpaired_sources``: its first lines up to
    there, ``what`` they are): a checkpoint pulled towards those very sentences' English would
    reject (or find) them better than it could an unseen sentence, and the ground truth would favour it."""
    if not unpaired_sources:
        return
    for enc in encoders:
        model = enc.spec.options.get("model")
        if not model:
            continue
        try:
            data = training_manifest(Path(str(model))).get("data", {})
        except XsimppError as e:
            raise BadInputError(f"encoder '{enc.label}': {e}") from None
        trained = {k.split(":", 1)[1] for k in data.get("sources", {}) if k.startswith("flores200-dev:")}
        seen = sorted(trained & set(langs))
        if seen and int(data.get("hold_out_dev", 0)) < unpaired_sources:
            raise BadInputError(
                f"encoder '{enc.label}' was trained on FLORES-200 dev lines that this study mines {what} "
                f"(the first {unpaired_sources} of {', '.join(seen)}); retrain it with `xsimpp train "
                f"distill --hold-out-dev {unpaired_sources}` or set [mining] unpaired_sources = 0"
                + ("" if what.startswith("as sources") else " and take the FLORES gold from devtest"))


def run_study(cfg: StudyConfig, data: StudyData, encoders: list[StudyEncoder], *,
              progress: Callable[[str, int], Callable[[int], None]] | None = None, engine=None) -> StudyResult:
    """Every cell of the grid, then the analysis. ``progress(desc, total, rate_key=, cost=)`` opens a
    progress callback per encoder, saying its ``cost:`` line first and measuring its encoding rate
    under ``rate_key`` (None: silent)."""
    used, what = dev_lines_used(cfg)
    check_unpaired_unseen(used, [ld.lang for ld in data.languages], encoders, what)
    if target_language(cfg.target) != data.target:
        raise BadInputError(f"the configuration's target is {cfg.target} but the data's is {data.target}")
    t_start = time.perf_counter()
    # signed with the pool's size as built (a non-English target's pool may fall short of the ask)
    mining = dataclasses.replace(mining_knobs(cfg)[1], distractors=len(data.distractors.lines))
    target = data.target
    rows = study_rows(cfg, data)
    ranked = [row for row in rows if row.role == "proxy"]
    proxies = [row.column for row in ranked]
    cells, records, costs, outcomes = [], [], [], []
    tgt_lines = list(dict.fromkeys(data.target_sides()))
    for enc in encoders:
        src_sides = [(ld.lang, bt.src) for ld in data.languages for _, bt in ld.gold_sources]
        src_sides += [(ld.lang, ld.proxy.src) for ld in data.languages if ld.proxy is not None]
        src_sides += [(ld.lang, ld.tatoeba.src) for ld in data.languages if ld.tatoeba is not None]
        src_sides += [(ld.lang, ld.unpaired) for ld in data.languages if ld.unpaired]
        # the task proxies' own sides (FLORES lines the sides above hold already: cache hits)
        src_sides += [side for row in rows if row.lines == "task" for ld in data.languages
                      for side in registry.task(row.task).sides(*data.task_proxies[(row.column, ld.lang)])]
        total = len(tgt_lines) + sum(len(s) for _, s in src_sides)
        update = None
        if progress:  # the cost before the first forward pass: each distinct sentence, as the pass encodes it
            n_distinct, n_cached = enc.lookups([(target, tgt_lines), *src_sides])
            update = progress(f"encoding ({enc.label})", total, rate_key=enc.rate_key,
                              cost=cost_line(enc.label, n_distinct, n_cached, read_rate(enc.rate_key)))
        t0 = time.perf_counter()
        # The study's encoding pass fills the encoder's cache (one forward pass for the members of a
        # shared model): the target once (one call: the shared pass batches it best), then each
        # language's sources. The runner then reads every vector of every cell from that cache.
        enc.vectors(tgt_lines, target, update)
        for lang, sents in src_sides:
            enc.vectors(sents, lang, update)
        t_enc = time.perf_counter() - t0
        member = enc.runner_encoder()
        run = RunOptions(cache=enc.cache, engine=engine)
        t1 = time.perf_counter()
        for ld in data.languages:
            # Every row, the proxies and the ground truth: a registered task through the runner.
            inputs = functools.partial(row_input, cfg=cfg, data=data, ld=ld, mining_settings=mining, run=run,
                                       label=enc.label)
            cell, kept, per_sentence = run_rows(rows, inputs, member)
            if per_sentence:
                outcomes.append({"system": enc.label, "lang": ld.lang, **per_sentence})
            cells.append({"system": enc.label, "family": enc.spec.family, "lang": ld.lang,
                          "direction": f"{ld.lang}-{target}", **cell})
            records += kept
        t_score = time.perf_counter() - t1
        group = enc.group
        costs.append({"encoder": enc.label, "encoded": enc.cost.encoded, "requested": enc.cost.requested,
                      "encode_seconds": round(t_enc, 2), "score_seconds": round(t_score, 2),
                      "shared_pass": enc.cost.shared_with,
                      "shared_pass_encoded": group.cost.encoded if group else None,
                      "shared_pass_seconds": round(group.cost.seconds, 2) if group else None})
    notes = list(data.notes)
    lower = {row.column: lower_is_better(row) for row in ranked}
    rankings = _rank_all(cells, proxies, lower, cfg, notes)
    tatoeba_rankings = {}
    for row in rows:  # ranked with the proxies on the languages that have its lines
        if row.role == "tatoeba" and cfg.tatoeba:
            tatoeba_rankings = _rank_all([c for c in cells if row.column in c], proxies + [row.column],
                                         {**lower, row.column: lower_is_better(row)}, cfg, notes)
    return StudyResult(cfg, cells, proxies, lower, rankings, tatoeba_rankings, records, costs, data_summary(data),
                       notes, time.perf_counter() - t_start, outcomes)


def _rank_all(cells: list[dict], proxies: list[str], lower: dict[str, bool], cfg: StudyConfig,
              notes: list[str]) -> dict[str, Any]:
    """Each ground truth's ranking report, the proxies ordered best first (PERM-BOTH: the best
    against each other proxy, two-sided)."""
    import pandas as pd

    out = {}
    frame = pd.DataFrame(cells)
    for gt in GROUND_TRUTHS:
        if gt not in frame.columns or frame[gt].isna().all():
            continue
        sub = frame[frame[gt].notna()].reset_index(drop=True)
        if sub.groupby("direction")["system"].nunique().max() < 2:
            notes.append(f"{gt}: no language has two encoders; no ranking")
            continue
        kw = dict(n_bootstrap=cfg.bootstrap, n_permutations=cfg.permutations, confidence=cfg.confidence,
                  seed=cfg.seed)
        first = evaluate_table(RankingTable(sub, list(proxies), dict(lower), reference=gt), compare=[], **kw)
        order = sorted(first.proxies, key=lambda p: (-np.nan_to_num(p.accuracy.accuracy, nan=-1), proxies.index(p.proxy)))
        ordered = [p.proxy for p in order]
        out[gt] = evaluate_table(RankingTable(sub, ordered, dict(lower), reference=gt), **kw)
    return out


def data_summary(data: StudyData) -> dict[str, Any]:
    target = {"target": data.target} if data.target != ENGLISH else {}  # English: as before targets existed
    return {
        **target,
        "languages": [{"lang": ld.lang, "flores": len(ld.flores), "flores_split": ld.flores.split,
                       **({"proxy_split": ld.proxy.split} if ld.proxy is not None else {}),
                       "ntrex": len(ld.ntrex) if ld.ntrex is not None else 0, "unpaired": len(ld.unpaired),
                       "tatoeba": len(ld.tatoeba) if ld.tatoeba is not None else 0,
                       # only where asked: earlier studies' summaries stay as they were
                       **({"ntrex_split": ld.ntrex.split} if ld.ntrex is not None and "seeded" in ld.ntrex.split
                          else {}),
                       **({"tatoeba_gold": len(ld.tatoeba_gold)} if ld.tatoeba_gold is not None else {})}
                      for ld in data.languages],
        "augmented": {s: {"lines": len(a.lines), "checksum": a.checksum} for s, a in data.augmented.items()},
        "distractors": {"lines": len(data.distractors.lines), "per_source": data.distractors.per_source,
                        "available": data.distractors.available, "checksum": data.distractors.checksum},
        "checksum": data.checksum,
    }


def check_encoders_cover(encoders: list[StudyEncoder]) -> None:
    if len(encoders) < 2:
        raise BadInputError(f"only {len(encoders)} encoder could be loaded; a study ranks at least two")
