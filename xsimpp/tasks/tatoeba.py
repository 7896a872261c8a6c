"""The Tatoeba task (Artetxe & Schwenk 2019; XTREME, Hu et al. 2020): line-aligned xx-eng test sets
-> encoder (cached) -> nearest neighbours both ways -> accuracy records, text and index mode.

No printing here; the CLI renders what this returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..cache import EmbeddingCache
from ..datasets.base import Bitext
from ..encoders.base import Encoder
from ..errors import BadInputError
from ..results import Outcomes, ResultRecord
from ..engine import MARGINS
from ..engine.knn import check_k
from ..scoring import EngineConfig
from ..scoring.tatoeba import MODES, TatoebaResult, macro_average, tatoeba_accuracy
from ..textio import path
from .base import (MAX_K, IntervalSettings, MetricInfo, Task, TaskReport, bitext_sides, check_margin_k, embedder_for,
                   exclude_knob, knob, pair_scores_for, sign)
from .retrieval import sample_knob, sample_seed_knob

# The 36 Tatoeba languages of XTREME (Hu et al. 2020, "XTREME: A Massively Multilingual Multi-task
# Benchmark for Evaluating Cross-lingual Generalization", ICML; Table 5 / the LASER v1 codes of its
# preprocessing), which OneAligner (Niu et al. 2022) reports as "Tatoeba-36". LASER v1 codes.
TATOEBA36 = (
    "afr", "ara", "ben", "bul", "cmn", "deu", "ell", "est", "eus", "fin", "fra", "heb", "hin", "hun", "ind", "ita",
    "jav", "jpn", "kat", "kaz", "kor", "mal", "mar", "nld", "pes", "por", "rus", "spa", "swh", "tam", "tel", "tgl",
    "tha", "tur", "urd", "vie",
)
# Where the Tatoeba Challenge names the same language differently from LASER v1.
V1_TO_CHALLENGE = {"cmn": "cmn_Hans", "swh": "swa"}

DIRECTIONS = {"fwd": "xx2en", "bwd": "en2xx"}


def tatoeba36(source: str, available: Sequence[str]) -> list[str]:
    """Language codes of XTREME's 36 in a source's spelling ('v1' or 'challenge')."""
    codes = [V1_TO_CHALLENGE.get(c, c) if source == "challenge" else c for c in TATOEBA36]
    missing = [c for c in codes if c not in available]
    if missing:
        raise BadInputError(f"the tatoeba36 set needs {', '.join(missing)}, which this {source} copy lacks")
    return codes


# ----------------------------------------------------------------------------------------------
# Tatoeba


@dataclass
class TatoebaLang:
    lang: str
    bitext: Bitext  # src = xx, tgt = eng
    result: TatoebaResult


@dataclass(frozen=True)
class TatoebaSettings(IntervalSettings):
    """absolute = cosine nearest neighbour (XTREME, LASER); ratio/distance = margin with k neighbours."""

    margin: str = knob("absolute", "absolute = cosine nearest neighbour, as XTREME/LASER; ratio/distance = margin",
                       choices=MARGINS)
    k: int = knob(4, "neighbours for the margin averages", type=int, min=1, max=MAX_K)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_margin_k(self.margin, self.k)

    def signed_values(self) -> dict:
        return {"k": 1 if self.margin == "absolute" else self.k}  # the absolute margin has no neighbours


@dataclass
class TatoebaReport(TaskReport):
    dataset: str
    split: str
    encoder_id: str
    settings: TatoebaSettings
    langs: list[TatoebaLang] = field(default_factory=list)

    @property
    def margin(self) -> str:
        return self.settings.margin

    @property
    def k(self) -> int:
        return self.settings.params()["k"]

    def average(self, direction: str, mode: str) -> float:
        """Macro average over languages (XTREME); ``direction`` is fwd, bwd or mean."""
        vals = [(r.result.mean(mode) if direction == "mean" else getattr(r.result, direction).accuracy(mode))
                for r in self.langs]
        return macro_average(vals)


def _tatoeba_records(bt: Bitext, res: TatoebaResult, encoder: Encoder, settings: TatoebaSettings) -> list[ResultRecord]:
    out = []
    for mode in MODES:  # both views of one run: a record each, told apart by their signatures
        entries = [("tatoeba_acc_xx2en", res.fwd.accuracy(mode), res.fwd.n, res.fwd.n - res.fwd.n_correct(mode)),
                   ("tatoeba_acc_en2xx", res.bwd.accuracy(mode), res.bwd.n, res.bwd.n - res.bwd.n_correct(mode)),
                   ("tatoeba_acc_mean", res.mean(mode), res.fwd.n + res.bwd.n,
                    res.fwd.n + res.bwd.n - res.fwd.n_correct(mode) - res.bwd.n_correct(mode))]
        outcomes = {"tatoeba_acc_xx2en": _outcomes([res.fwd], mode), "tatoeba_acc_en2xx": _outcomes([res.bwd], mode),
                    "tatoeba_acc_mean": _outcomes([res.fwd, res.bwd], mode)}
        for metric, value, n, errors in entries:
            sig = sign(encoder, bt.dataset, bt.split, bt.checksum, metric, settings, mode=mode)
            out.append(ResultRecord(metric, value, n, bt.src_lang, bt.tgt_lang, sig, errors=errors,
                                    extra={"unit": "accuracy %"}, outcomes=outcomes[metric]))
    return out


def _outcomes(directions, mode: str) -> Outcomes:
    """Each query's outcome; the mean's queries are both directions', query i of each having sentence
    pair i as its gold, so a resample moves a pair's two queries together."""
    cat = np.concatenate
    return Outcomes.build("accuracy", cat([d.correct(mode) for d in directions]), cat([d.pred for d in directions]),
                          cat([np.arange(d.n) for d in directions]), cat([d.pred_score for d in directions]),
                          cat([d.gold_score for d in directions]))


def evaluate_tatoeba(
    encoder: Encoder,
    bitexts: Sequence[Bitext],
    settings: TatoebaSettings | None = None,
    *,
    cache: EmbeddingCache | None = None,
    progress: Callable[[int], None] | None = None,
    config: EngineConfig | None = None,
) -> TatoebaReport:
    """Accuracy xx->eng and eng->xx for every bitext (src = xx, tgt = eng).

    Vectors go through the embedding cache, so an English sentence shared by several languages'
    test sets (or by an earlier run) is encoded once.
    """
    st = settings or TatoebaSettings()
    if not bitexts:
        raise BadInputError("no Tatoeba languages to evaluate")
    first = bitexts[0]
    report = TatoebaReport(first.dataset, first.split, encoder.id, st)
    embed = embedder_for(encoder, cache, progress)
    pairs = pair_scores_for(encoder, cache, progress)
    for bt in bitexts:
        texts = dict(src_text=bt.src, tgt_text=bt.tgt, margin=st.margin, k=st.k, config=config)
        if embed is not None:
            res = tatoeba_accuracy(embed(bt.src, bt.src_lang), embed(bt.tgt, bt.tgt_lang), **texts)
        else:
            res = tatoeba_accuracy(similarity=pairs(bt.src, bt.tgt, bt.src_lang, bt.tgt_lang), **texts)
        report.langs.append(TatoebaLang(bt.src_lang, bt, res))
        report.records.extend(_tatoeba_records(bt, res, encoder, st))
    report.count_encoding(embed or pairs)
    return report


DUMP_FIELDS = ("dataset", "lang", "direction", "line", "source", "gold", "predicted", "predicted_line", "gold_score",
               "predicted_score", "text_correct")


def tatoeba_error_rows(report: TatoebaReport) -> list[dict]:
    """Every retrieval whose index is wrong; ``text_correct`` marks those that text mode forgives
    (the retrieved sentence is a duplicate of the gold). Lines are 1-based, as in the files."""
    rows = []
    for tl in report.langs:
        bt = tl.bitext
        for which, queries, targets in (("fwd", bt.src, bt.tgt), ("bwd", bt.tgt, bt.src)):
            d = getattr(tl.result, which)
            for i in np.flatnonzero(~d.correct_index):
                p = int(d.pred[i])
                rows.append({"dataset": bt.dataset, "lang": tl.lang, "direction": DIRECTIONS[which], "line": int(i) + 1,
                             "source": queries[i], "gold": targets[i], "predicted": targets[p],
                             "predicted_line": p + 1, "gold_score": round(float(d.gold_score[i]), 6),
                             "predicted_score": round(float(d.pred_score[i]), 6),
                             "text_correct": bool(d.correct_text[i])})
    return rows


SOURCES = ("v1", "challenge")


@dataclass(frozen=True)
class TatoebaSource:
    """Which Tatoeba test sets: ``langs`` or a named ``set``, from LASER's v1 or the Challenge."""

    langs: Any = knob(None, "comma-separated languages (deu,fra or de,fr), or all: every language of --source")
    exclude: Any = exclude_knob()
    set: str | None = knob(None, "tatoeba36: the 36 XTREME languages (Hu et al. 2020); all: every language of "
                                 "--source", choices=("tatoeba36", "all"))
    source: str = knob("v1", "LASER Tatoeba v1 or the Tatoeba Translation Challenge test sets", choices=SOURCES)
    limit: int | None = knob(None, "use only the first N lines of each language (quick looks)", type=int)
    sample: int | None = sample_knob()
    sample_seed: int = sample_seed_knob()
    data_dir: Any = knob(None, "data root (default: $XSIMPP_DATA_DIR, then the user data dir)", type=path)


def tatoeba_bitexts(source: TatoebaSource) -> list[Bitext]:
    """The Tatoeba bitexts (src = xx, tgt = eng) of ``source``."""
    from ..datasets.tatoeba import TatoebaV1
    from ..datasets.tatoeba_challenge import TatoebaChallenge
    from .retrieval import ALL_LANGUAGES, lang_list, select_lines, source_languages

    if source.source not in SOURCES:
        raise BadInputError(f"source must be 'v1' or 'challenge', got '{source.source}'")
    if bool(source.set) == bool(lang_list(source.langs)):
        raise BadInputError("give the languages: --langs (e.g. deu,fra) or --set (tatoeba36, all), one of the two")
    ds = (TatoebaV1 if source.source == "v1" else TatoebaChallenge)("test", data_dir=source.data_dir)
    if source.set == "tatoeba36":
        if lang_list(source.exclude):
            raise BadInputError("--exclude leaves languages out of all (--langs all or --set all), not of tatoeba36")
        codes = tatoeba36(source.source, ds.languages())
    elif source.set in (None, ALL_LANGUAGES):
        codes = source_languages(ds, source.set or source.langs, source.exclude, "eng")
    else:
        raise BadInputError(f"unknown language set '{source.set}'; use tatoeba36 or all")
    codes = [c for c in codes if c != "eng"]
    if not codes:
        raise BadInputError("no language to evaluate (English is the pivot of every Tatoeba pair)")
    if source.limit is not None and (not isinstance(source.limit, int) or source.limit < 1):
        raise BadInputError(f"--limit must be a positive number of lines, got {source.limit}")
    # A different split name keeps a partial run from overwriting the full one in the store.
    return select_lines([ds.bitext(lang, "eng") for lang in codes], source.limit, source.sample, source.sample_seed)


class TatoebaTask(Task):
    name = "tatoeba"
    description = "Tatoeba bitext retrieval accuracy both ways, text and index mode (LASER, XTREME)"
    metrics = {m: MetricInfo("accuracy %", lower_is_better=False)
               for m in ("tatoeba_acc_xx2en", "tatoeba_acc_en2xx", "tatoeba_acc_mean")}
    Source = TatoebaSource
    Settings = TatoebaSettings

    def load(self, source: TatoebaSource, settings: TatoebaSettings) -> list[Bitext]:
        bitexts = tatoeba_bitexts(source)
        if settings.margin != "absolute":
            for bt in bitexts:
                check_k(settings.k, len(bt), f"Tatoeba {bt.src_lang} set")
        return bitexts

    def sides(self, data: list[Bitext], settings) -> list[tuple[str, list[str]]]:
        return bitext_sides(data)

    def evaluate(self, encoder: Encoder, data: list[Bitext], settings: TatoebaSettings, ctx) -> TatoebaReport:
        return evaluate_tatoeba(encoder, data, settings, cache=ctx.cache, progress=ctx.progress, config=ctx.engine)

    def render(self, report: TatoebaReport) -> str:
        from tabulate import tabulate

        how = "cosine" if report.margin == "absolute" else f"{report.margin} margin, k={report.k}"
        headers = ["lang", "xx->eng (text)", "eng->xx (text)", "mean (text)", "xx->eng (index)", "eng->xx (index)",
                   "mean (index)", "n"]
        body = []
        for tl in report.langs:
            r = tl.result
            body.append([tl.lang] + [f"{v:.2f}" for v in (r.fwd.accuracy("text"), r.bwd.accuracy("text"),
                                                         r.mean("text"), r.fwd.accuracy("index"),
                                                         r.bwd.accuracy("index"), r.mean("index"))] + [r.fwd.n])
        if len(report.langs) > 1:
            body.append(["average"] + [f"{report.average(d, m):.2f}" for m in ("text", "index")
                                       for d in ("fwd", "bwd", "mean")] + [sum(tl.result.fwd.n for tl in report.langs)])
        table = tabulate(body, headers=headers, tablefmt="psql", disable_numparse=True)
        return (f"{report.dataset} accuracy % ({how}); text: a duplicate of the gold sentence counts as correct; "
                f"index: only the gold line does; average = macro over languages\n{table}")
