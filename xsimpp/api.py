"""The Python API: every evaluation the CLI runs, callable from a notebook or a training loop.

    import xsimpp
    res = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", augmented="auto")
    res.frame                       # pandas DataFrame, one row per record (the leaderboard's columns)
    res.records[0].signature.format()

Each function takes an encoder as a registered name (``"e5-small"``, with constructor
``options``), an ``xsimpp.encoders.Encoder``, any object with ``encode(list[str]) -> array``
(a ``SentenceTransformer``; see ``xsimpp.encoders.pyobject`` for the id and revision such an
object signs its records with) or an mteb 2.x model (``mteb.get_model(name)``, fed as mteb feeds
it and signed with MTEB's name and revision: ``xsimpp.encoders.mteb_model``); ``score`` takes
precomputed arrays. Each
returns ``Results``: the result records (with the CLI's signatures), a DataFrame of them and the
task's full report. The CLI is a thin shell over these functions, so a number here equals the
number `xsimpp` prints for the same settings.

Every function is one line over ``xsimpp.tasks.runner.run_task``: its keywords are the task's
knobs by name -- the fields of its ``Source`` (which data), its ``Settings`` (what changes the
number; they sign the records) and ``RunOptions`` (cache, save, progress, engine, ray, options,
revision, encoder_name, encode_kwargs) -- or those objects themselves (``settings=``, ``run=``).
``xsimpp.run(task, encoder, ...)`` runs any registered task (``xsimpp.tasks.TASKS``) the same way.

Unlike the CLI, nothing is stored by default (``save=True`` writes to the results store, as the
CLI does); the embedding cache is used as the CLI uses it (``cache=False`` turns it off).
Errors in input raise ``xsimpp.errors.XsimppError`` subclasses with one sentence each; their
wording names the CLI flag that corresponds to the argument (``--langs`` for ``langs``).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from dataclasses import MISSING, dataclass, fields
from typing import Any

import numpy as np

from .errors import BadInputError
from .results import ResultRecord, Results
from .study.pipeline import study  # the proxy-validation study (the package xsimpp.study calls it too)
from .tasks.registry import task as registered_task
from .tasks.runner import RunOptions, check_numbers, make_encoder, run_task, save_records


def _knob_signature(task: str):
    """Give the decorated function the signature it really takes: its own parameters, then every
    knob of the task's ``Source`` and ``Settings`` and every ``RunOptions`` field as a keyword with
    its default (``**knobs`` hides them from ``help()`` and IDEs otherwise)."""

    def decorate(fn):
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        have = {p.name for p in params}
        t = registered_task(task)
        for cls in (t.Source, t.Settings, RunOptions):
            for f in fields(cls):
                if f.name in have:
                    continue
                have.add(f.name)
                default = f.default if f.default is not MISSING else None
                params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default))
        fn.__signature__ = sig.replace(parameters=params)
        return fn

    return decorate


def run(task: str, encoder, *, settings=None, run: RunOptions | None = None, **knobs) -> Results:
    """Run the registered task ``task`` (``xsimpp.tasks.TASKS``: xsim, tatoeba, bucc, filter, mining-f1, ...)."""
    return run_task(registered_task(task), encoder, settings=settings, run=run, **knobs)


@_knob_signature("xsim")
def evaluate(encoder, langs=None, *, dataset: str = "flores200", split: str | None = None, target: str | None = None,
             augmented=None, settings=None, run: RunOptions | None = None, **knobs) -> Results:
    """xsim (and xsim++ with ``augmented="auto"`` or a folder) of an encoder, as `xsimpp eval`.

    ``langs``: source languages ("kea,fur" or a list; any code `xsimpp eval --langs` takes), or
    "all": every language of the dataset but the target, less ``exclude`` ("kea,fur" or a list);
    ``dataset``: flores200 / tatoeba / demo, or ``src_file`` + ``tgt_file`` (line-aligned files,
    ``langs``/``target`` then name their sides). Other knobs (``xsimpp.tasks.xsim``): data --
    ``src_file``, ``tgt_file``, ``name``, ``style`` (strict / paper negatives), ``allow_errtypes``,
    ``both_directions``, ``nway``, ``data_dir``, ``limit`` (the first N lines of each pair; the
    split is recorded as ``dev[:N]``); settings -- ``margin``, ``k``, ``mode``, ``protocol``
    (laser / xsimpp-paper) and P-xSIM's ``rerank`` (an auxiliary encoder, name or object, with
    ``rerank_options``), ``alpha``, ``rerank_k``; run options as in the module docstring."""
    return run_task(registered_task("xsim"), encoder, langs=langs, dataset=dataset, split=split, target=target,
                    augmented=augmented, settings=settings, run=run, **knobs)


@_knob_signature("tatoeba")
def tatoeba(encoder, langs=None, *, set: str | None = None, source: str = "v1", settings=None,
            run: RunOptions | None = None, **knobs) -> Results:
    """Tatoeba accuracy xx->eng and eng->xx, text and index mode, as `xsimpp tatoeba`
    (``langs`` or ``set``: "tatoeba36" or "all", the latter less ``exclude``; ``source``: "v1" (LASER) or
    "challenge"; knobs: ``margin``,
    ``k``, ``limit``, ``data_dir`` and the run options)."""
    return run_task(registered_task("tatoeba"), encoder, langs=langs, set=set, source=source, settings=settings, run=run,
                    **knobs)


@_knob_signature("bucc")
def bucc(encoder, pair: str = "zh-en", *, tune: str = "sample", apply: str | None = None, protocol: str = "laser",
         settings=None, run: RunOptions | None = None, **knobs) -> Results:
    """BUCC 2018 mining precision / recall / F1, as `xsimpp bucc`.

    ``protocol="laser"`` (default): candidates both ways, threshold tuned on ``tune``'s gold and
    applied to ``apply`` (or set by ``keep_fraction``), filters before the threshold.
    ``protocol="keung"``: Keung et al. (2020) — forward retrieval, ``keep_fraction`` (default 0.02)
    counted before the filters, then the ASCII digit filter and the edit filter (0.5). Other knobs
    (``xsimpp.tasks.bucc``): ``margin``, ``k``, ``one_to_one``, ``digits`` ("ascii", "unicode" --
    NFKC, a deviation from Keung et al. -- or "none"), ``max_edit_similarity`` (or ``edit_filter``:
    True = 0.5, False = none), ``digit_filter`` (= ``digits="unicode"``), ``keep_fraction``, ``cv``,
    ``seed``, ``sample``, ``head``, ``data_dir``."""
    if settings is None:
        knobs["protocol"] = protocol
    return run_task(registered_task("bucc"), encoder, pair=pair, tune=tune, apply=apply, settings=settings, run=run, **knobs)


@_knob_signature("mining-f1")
def mining_f1(encoder, langs=None, *, settings=None, run: RunOptions | None = None, **knobs) -> Results:
    """Mining F1 on general text, as `xsimpp mining-f1` (``xsimpp.tasks.mining``): each language's
    FLORES-200 devtest and NTREX-128 gold hidden among ``distractors`` real target-language lines
    (plus ``unpaired_sources`` FLORES dev sources with no translation), mined with the margin kNN
    both ways; F1 / precision / recall with cross-validated and fixed thresholds, one record each --
    the ground truth `xsimpp study` ranks proxies by."""
    return run_task(registered_task("mining-f1"), encoder, langs=langs, settings=settings, run=run, **knobs)


@_knob_signature("filter")
def filter_corpus(src, tgt, out, encoder="e5-small", *, src_lang: str, tgt_lang: str, budget=None,
                  run: RunOptions | None = None, **knobs):
    """Filter two line-aligned files with an encoder (`xsimpp filter`, Tan & Koehn 2022): duplicates,
    > 90 % overlap and wrong-language lines dropped, the rest ranked by LASER's ``--mode score``
    margin and kept up to ``budget`` English tokens ("2M"). Writes ``out`` atomically; returns
    ``tasks.filter.FilterReport``. ``knobs``: the other ``FilterSettings`` fields and run options."""
    res = run_task(registered_task("filter"), encoder, src=src, tgt=tgt, out=out, src_lang=src_lang, tgt_lang=tgt_lang,
                   budget=budget, run=run, **knobs)
    return res.report.filtered


# -- precomputed embeddings ---------------------------------------------------------------------


def load_embeddings(path, dim: int | None = None, fp16: bool = False) -> np.ndarray:
    """Vectors from a .npy file, or LASER's raw float32 / float16 file with ``dim``."""
    from .textio import check_input_file, os_failure

    p = check_input_file(path, "embedding file")
    if p.suffix == ".npy":
        try:
            arr = np.load(p, allow_pickle=False)
        except OSError as e:
            raise os_failure(e, "read", p) from None
        except ValueError as e:
            raise BadInputError(f"{p} is not a readable .npy file ({e})") from None
        if arr.ndim != 2:
            raise BadInputError(f"{p} holds an array of shape {arr.shape}; expected (sentences, dim)")
        return arr.astype(np.float32, copy=False)
    if dim is None:
        raise BadInputError(f"{p} is a raw embedding file: give its vector size with --dim (LASER: 1024)")
    if dim < 1:
        raise BadInputError(f"--dim must be a positive vector size, got {dim}")
    dtype = np.dtype(np.float16 if fp16 else np.float32)
    size = p.stat().st_size
    if size == 0 or size % (dim * dtype.itemsize):
        raise BadInputError(f"{p} holds {size} bytes, not a whole number of {dim}-d vectors "
                            f"({dtype.name}, {dim * dtype.itemsize} bytes each; wrong --dim or --fp16?)")
    try:
        flat = np.fromfile(p, dtype=dtype)
    except OSError as e:
        raise os_failure(e, "read", p) from None
    return flat.reshape(-1, dim).astype(np.float32)


@dataclass(frozen=True)
class _Precomputed:
    """The identity precomputed arrays sign their records with: ``precomputed@arrays.<sha256>``."""

    digest: str
    id: str = "precomputed"
    kind: str = "vector"

    @property
    def revision(self) -> str:
        return f"arrays.{self.digest[:16]}"

    @property
    def fingerprint(self) -> str:
        blob = json.dumps({"id": self.id, "revision": self.revision, "config": {}}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass
class ScoreReport:
    result: Any  # scoring.XsimResult
    text_checksum: str | None
    with_pp: bool


def score(src_emb, tgt_emb, *, tgt_text=None, errtypes=None, allow_errtypes=(), dim: int | None = None,
          fp16: bool = False, engine=None, save=False, settings=None, **knobs) -> Results:
    """xsim (xsim++ with ``errtypes``) of precomputed embeddings, as `xsimpp score` and LASER's xSIM().

    ``src_emb`` / ``tgt_emb``: arrays or files (.npy, LASER raw with ``dim``); ``tgt_text``: the
    target sentences (a list or a file; gold first, then augmented lines for xsim++);
    ``errtypes``: LASER's errtype JSON (a dict or a file); ``knobs``: the xsim settings
    (``margin``, ``k``, ``mode``). The record is signed ``precomputed@arrays.<sha256 of both
    arrays>`` on dataset ``embeddings``."""
    from .datasets.base import AugmentedTargets, check_errtypes, read_errtypes, text_checksum
    from .scoring import xsim
    from .tasks.base import sign
    from .tasks.xsim import XsimSettings
    from .textio import read_lines

    if settings is None:
        settings = XsimSettings.make(**knobs)
    elif knobs:
        raise BadInputError(f"give the settings either as settings= or as keywords ({', '.join(sorted(knobs))})")
    if settings.rerank is not None:
        raise BadInputError("P-xSIM (--rerank) needs an encoder to rescore with; precomputed arrays have none")
    margin, k, mode = settings.margin, settings.k, settings.mode

    def arr(v, what):
        if isinstance(v, (str, os.PathLike)):
            return load_embeddings(v, dim, fp16)
        a = np.asarray(v)
        if a.ndim != 2:
            raise BadInputError(f"{what} must be a 2-D array (sentences x dimensions), got shape {a.shape}")
        return a.astype(np.float32, copy=False)

    x, y = arr(src_emb, "src_emb"), arr(tgt_emb, "tgt_emb")
    text = None
    if tgt_text is not None:
        text = read_lines(tgt_text) if isinstance(tgt_text, (str, os.PathLike)) else [str(t) for t in tgt_text]
    if mode == "text" and text is None:
        raise BadInputError("--mode text (the default) needs --tgt-text; or use --mode index")
    types = None
    if errtypes is not None:
        if text is None:
            raise BadInputError("--errtype-json needs --tgt-text (the gold targets, then the augmented lines)")
        if len(text) != len(y):
            raise BadInputError(f"--tgt-text has {len(text)} lines but --tgt-emb {len(y)} vectors; they must match")
        n = len(x)
        types = (check_errtypes(errtypes, text[n:], "errtypes", allow_errtypes) if isinstance(errtypes, dict)
                 else read_errtypes(errtypes, text[n:], allow_errtypes))
        AugmentedTargets("tgt", "custom", text[n:], types).check_sources(text[:n], f"the first {n} lines of --tgt-text")
    res = xsim(x, y, margin=margin, k=k, mode=mode, tgt_text=text, errtypes=types, config=engine)
    h = hashlib.sha256()
    for a in (x, y):
        h.update(f"{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    ident = _Precomputed(h.hexdigest())
    tsum = text_checksum(text) if text else None
    data = hashlib.sha256((ident.digest + (tsum or "") + json.dumps(types or {}, sort_keys=True)).encode()).hexdigest()
    metric = "xsim++" if types is not None else "xsim"
    sig = sign(ident, "embeddings", "custom", data, metric, settings)
    rec = ResultRecord(metric, res.error_rate, res.n, "src", "tgt", sig, errors=res.errors,
                       error_types=dict(res.error_types))
    check_numbers([rec])  # the runner's rule: no record leaves with a value that is not a number
    save_records([rec], save)
    return Results([rec], ScoreReport(res, tsum, types is not None))


# -- mining and downloads -----------------------------------------------------------------------


@_knob_signature("mine")
def mine(src, tgt, out_dir, *, settings=None, run: RunOptions | None = None, **knobs):
    """Exact margin kNN both ways, sharded and resumable under ``out_dir`` (`xsimpp mine`;
    ``xsimpp.tasks.mine``). ``src`` / ``tgt``: .npy files or arrays. Knobs: ``margin``, ``k``;
    ``pairs_tsv``: also write the mined pairs as LASER's ``mine_bitexts --mode mine`` does
    (``score<TAB>source<TAB>target``, best first; ``retrieval`` and ``threshold`` as its flags, see
    ``scoring.bucc.select_pairs``), reading the sentences from ``src_text``/``tgt_text`` (one per
    embedding row; checked before any mining work); the layout, which changes only the speed:
    ``max_memory``, ``shard_rows``, ``tile_cols``, ``max_shards``, ``keep_shards``. Run options:
    ``progress`` (a callable(done, total), or True for a shard counter on stderr), ``engine`` (an
    ``EngineConfig``), ``ray`` ("auto" or a cluster address to run the shards as Ray tasks; outputs
    byte-identical; ``out_dir`` must then be on storage every node sees). Returns
    ``engine.mining.MiningResult`` (None when ``max_shards`` left work for a rerun)."""
    return run_task(registered_task("mine"), None, src=src, tgt=tgt, out_dir=out_dir, settings=settings, run=run,
                    **knobs).report.result


def compare(baseline, system, *, metric: str | None = None, correction: str = "holm", level: float = 0.95,
            n_resamples: int = 1000, n_trials: int = 10000, seed: int = 12345, bootstrap_method: str = "shift",
            results_dir=None):
    """Is ``system`` better than ``baseline`` (`xsimpp compare`)? Each is a run's ``Results`` (e.g.
    ``xsimpp.evaluate(...)``) or a list of ``ResultRecord`` (e.g. ``ResultStore().records()``, whose
    outcomes are read from ``results_dir``); ``metric`` picks one when the records hold several.
    Returns ``xsimpp.report.compare.Comparison``: per language pair and overall the difference, its
    interval and both paired tests' p-values (corrected across the pairs: ``holm`` or ``bh``)."""
    from .report.compare import compare_records
    from .results import ResultStore

    def records(side, name):
        recs = list(side.records if isinstance(side, Results) else side)
        if not all(isinstance(r, ResultRecord) for r in recs):
            raise BadInputError(f"{name} must be a run's Results or a list of ResultRecord")
        return recs

    base, sys_ = records(baseline, "baseline"), records(system, "system")
    metrics = sorted({r.metric for r in base})
    if metric is None and len(metrics) > 1:
        raise BadInputError(f"the results hold several metrics ({', '.join(metrics)}); choose one with metric=")
    metric = metric or (metrics[0] if metrics else None)
    base, sys_ = [r for r in base if r.metric == metric], [r for r in sys_ if r.metric == metric]
    store = ResultStore(results_dir)
    return compare_records(base, sys_, store.outcomes, correction=correction, level=level, n_resamples=n_resamples,
                           n_trials=n_trials, seed=seed, bootstrap_method=bootstrap_method)


def download(source: str, to=None, **kwargs):
    """Fetch a dataset into a data root (`xsimpp download`); see ``xsimpp.datasets.download``."""
    from .datasets.download import download as run_download

    return run_download(source, to, **kwargs)


__all__ = ["Results", "RunOptions", "bucc", "download", "evaluate", "filter_corpus", "load_embeddings", "make_encoder",
           "mine", "mining_f1", "run", "score", "study", "tatoeba"]
