"""The Python API: every evaluation the CLI runs, callable from a notebook or a training loop.

    import xsimpp
    res = xsimpp.evaluate("chargram", "deu,fra", dataset="demo", augmented="auto")
    res.frame                       # pandas DataFrame, one row per record (the leaderboard's columns)
    res.records[0].signature.format()

Each function takes an encoder as a registered name (``"e5-small"``, with constructor
``options``), an ``xsimpp.encoders.Encoder``, or any object with ``encode(list[str]) -> array``
(a ``SentenceTransformer``, an MTEB model wrapper; see ``xsimpp.encoders.pyobject`` for the id
and revision such an object signs its records with); ``score`` takes precomputed arrays. Each
returns ``Results``: the result records (with the CLI's signatures), a DataFrame of them and the
task's full report. The CLI is a thin shell over these functions, so a number here equals the
number `xsimpp` prints for the same settings.

Unlike the CLI, nothing is stored by default (``save=True`` writes to the results store, as the
CLI does); the embedding cache is used as the CLI uses it (``cache=False`` turns it off).
Errors in input raise ``xsimpp.errors.XsimppError`` subclasses with one sentence each; their
wording names the CLI flag that corresponds to the argument (``--langs`` for ``langs``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from .errors import BadInputError
from .results import ResultRecord

log = logging.getLogger(__name__)


@dataclass
class Results:
    """What an API call returns: ``records`` (``ResultRecord``, each with its signature),
    ``frame`` (a pandas DataFrame of them) and ``report`` (the task's report: per-pair details,
    error types, cache counts)."""

    records: list[ResultRecord]
    report: Any = field(repr=False)

    @functools.cached_property
    def frame(self):
        from .results import leaderboard_frame

        return leaderboard_frame(self.records)

    def to_frame(self):
        return self.frame

    @property
    def signature(self) -> str:
        """The first record's signature string (every record carries its own)."""
        return self.records[0].signature.format() if self.records else ""

    def __iter__(self) -> Iterator[ResultRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return f"Results({len(self.records)} records; .frame for a DataFrame)"


# -- shared pieces ------------------------------------------------------------------------------


@contextlib.contextmanager
def progress_bar(total: int, desc: str, enabled: bool = True) -> Iterator:
    """A tqdm bar on stderr (hidden when not a terminal unless forced), yielding an update callable."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit="sent", disable=not enabled, file=sys.stderr, dynamic_ncols=True,
               mininterval=0.5)
    try:
        yield bar.update
    finally:
        bar.close()


def make_encoder(encoder, options: dict | None = None, *, name: str | None = None, revision: str | None = None,
                 encode_kwargs: dict | None = None):
    """An ``Encoder`` from a registered name (+ constructor options), an Encoder, or an object
    with ``encode``."""
    from .encoders import Encoder, create_encoder
    from .encoders.pyobject import PyObjectEncoder

    if isinstance(encoder, str):
        if name is not None or revision is not None or encode_kwargs:
            raise BadInputError("name, revision and encode_kwargs describe an encoder object; a registered encoder "
                                f"('{encoder}') has its own id and revision")
        return create_encoder(encoder, **(options or {}))
    if options:
        raise BadInputError("options are constructor options of a registered encoder name; "
                            f"this encoder is already built ({type(encoder).__name__})")
    if isinstance(encoder, Encoder):
        return encoder
    return PyObjectEncoder(encoder, name=name, revision=revision, encode_kwargs=encode_kwargs)


def open_cache(encoder, cache):
    """The embedding cache (``cache``: True = the default folder, a path = that folder, False/None =
    none): vectors of a vector encoder, token states of a pair scorer that keeps them (keyed by what
    changes the states, so a scoring knob such as alpha reuses them); None for other pair scorers
    and for unversioned objects, whose vectors nothing could tell apart from a changed model's."""
    from .cache import EmbeddingCache, open_encoder_cache

    if cache is False or cache is None:
        return None
    root = None if cache is True else cache
    if encoder.kind != "vector":
        states = getattr(encoder, "states_fingerprint", None)
        return EmbeddingCache(encoder.id + "-states", states, root) if states else None
    if getattr(encoder, "versioned", True) is False:
        log.warning("encoder %s has no revision (give revision=...), so its vectors are not cached", encoder.id)
        return None
    return open_encoder_cache(encoder, root)


def save_records(records: Sequence[ResultRecord], save) -> None:
    """Store records all or nothing (``save``: True = the default results folder, a path = that folder)."""
    from .results import ResultStore

    if save:
        ResultStore(None if save is True else save).put_many(records)


def _factory(encoder, options):
    """A picklable callable that builds a registered encoder (what each distributed worker runs); None for objects."""
    from .encoders import create_encoder

    return functools.partial(create_encoder, encoder, **(options or {})) if isinstance(encoder, str) else None


def _langs(langs) -> list[str]:
    if langs is None:
        return []
    items = langs.split(",") if isinstance(langs, str) else list(langs)
    return [str(c).strip() for c in items if str(c).strip()]


@contextlib.contextmanager
def _executor(ray):
    """A Ray executor for ``ray`` (``"auto"`` or a cluster address), else None."""
    if not ray:
        yield None
        return
    from .distributed.ray_backend import RayExecutor

    ex = RayExecutor(ray)
    try:
        yield ex
    finally:
        ex.close()


def _run_encoding(encoder, factory, sides, cache, embed_run, *, ray, progress, total):
    """Run ``embed_run(cache, update)`` (a task over the cache), encoding ``sides`` on a Ray cluster
    first when ``ray`` is given: each worker builds the encoder with ``factory`` and the cluster
    fills the cache with exactly the chunks a sequential run would encode, so the task then reads
    every vector and its results are the same. Returns the task's report with the sequential
    run's encoded / reused counts."""
    from .cache import MemoryCache
    from .tasks.base import prefill_cache

    with progress_bar(total, f"encoding ({encoder.id})", enabled=progress) as update:
        if ray and encoder.kind != "vector":
            log.warning("--ray distributes vector encoders; %s scores sentence pairs, so it runs in this process",
                        encoder.id)
        if not ray or encoder.kind != "vector":
            return embed_run(cache, update)
        if factory is None:
            raise BadInputError("--ray needs a registered encoder name: each worker builds its own copy of the "
                                "encoder from the name and options")
        store = cache if cache is not None else MemoryCache()
        with _executor(ray) as ex:
            n_new = prefill_cache(encoder, sides, store, ex, factory, progress=update)
        report = embed_run(store, lambda n: None)
        report.n_cached -= n_new
        report.n_encoded += n_new
        return report


# -- xsim / xsim++ ------------------------------------------------------------------------------


def _bitexts(dataset, langs, *, target, nway, both_directions, files: bool):
    if files:
        return [dataset.bitext()]
    if not langs:
        raise BadInputError("give --langs (e.g. --langs kea,fur) or --src-file/--tgt-file")
    tgt = dataset.resolve(target or dataset.default_target)
    codes = list(dict.fromkeys(dataset.resolve(c) for c in langs))
    if nway:
        if len(codes) < 2:
            raise BadInputError(f"--nway needs at least two languages in --langs, got {', '.join(codes)}")
        return [dataset.bitext(s, t) for s in codes for t in codes if s != t]
    pairs = [dataset.bitext(lang, tgt) for lang in codes if lang != tgt]
    if both_directions:
        pairs += [dataset.bitext(tgt, lang) for lang in codes if lang != tgt]
    if not pairs:
        raise BadInputError(f"no language pair to score: every --langs entry is the target {tgt}")
    return pairs


def xsim_data(langs=None, *, dataset: str = "flores200", split: str | None = None, target: str | None = None,
              src_file=None, tgt_file=None, name: str | None = None, augmented=None, allow_errtypes=(),
              both_directions: bool = False, nway: bool = False, data_dir=None, limit: int | None = None,
              style: str | None = None):
    """The bitexts and augmented targets (or None) an xsim run scores, read and checked before any
    model is loaded; ``style`` (strict / paper / None: any) picks which build of `xsimpp augment`
    ``augmented`` takes; ``limit`` keeps the first N lines of each side (and the augmented lines made
    from those targets), recorded in the split name (``dev[:40]``) so it never passes for the whole."""
    import dataclasses

    from .datasets import ParallelFiles, get_dataset
    from .tasks.xsim import find_augmented

    langs_list = _langs(langs)
    files = bool(src_file or tgt_file)
    if files:
        if not (src_file and tgt_file):
            raise BadInputError("--src-file and --tgt-file go together")
        # With files, langs / target only name the two sides (for results and for finding
        # <target>_augmented.<split> with augmented).
        src_lang = langs if isinstance(langs, str) else ",".join(langs_list)
        ds = ParallelFiles(src_file, tgt_file, src_lang=src_lang or "src", tgt_lang=target or "tgt",
                           split=split or "custom", name=name)
    else:
        if name:
            raise BadInputError("--name names a corpus given by --src-file/--tgt-file; a --dataset has its own name")
        ds = get_dataset(dataset, split, data_dir)
    bitexts = _bitexts(ds, langs_list, target=target, nway=nway, both_directions=both_directions, files=files)
    aug = find_augmented(augmented, ds, bitexts[0].tgt_lang, allow_errtypes, style) if augmented else None
    if limit is not None:
        if limit < 1:
            raise BadInputError(f"limit must be a positive number of lines, got {limit}")
        bitexts = [dataclasses.replace(bt, split=f"{bt.split}[:{limit}]", src=bt.src[:limit], tgt=bt.tgt[:limit])
                   if len(bt) > limit else bt for bt in bitexts]
        if aug is not None:
            kept = {t.strip() for bt in bitexts if bt.tgt_lang == aug.lang for t in bt.tgt}
            lines = [ln for ln in aug.lines if aug.errtypes[ln.strip()]["src"].strip() in kept]
            aug = dataclasses.replace(aug, split=bitexts[0].split, lines=lines,
                                      errtypes={ln.strip(): aug.errtypes[ln.strip()] for ln in lines})
    for bt in bitexts:
        if aug is not None and bt.tgt_lang == aug.lang:
            aug.check_sources(bt.tgt, f"the {bt.tgt_lang} target text")
    return bitexts, aug


def evaluate(encoder, langs=None, *, dataset: str = "flores200", split: str | None = None, target: str | None = None,
             src_file=None, tgt_file=None, name: str | None = None, augmented=None, allow_errtypes=(),
             both_directions: bool = False, nway: bool = False, margin: str = "ratio", k: int = 4, mode: str = "text",
             data_dir=None, cache=True, save=False, progress: bool = False, engine=None, ray: str | None = None,
             options: dict | None = None, revision: str | None = None, encoder_name: str | None = None,
             encode_kwargs: dict | None = None, limit: int | None = None, style: str | None = None,
             rerank=None, rerank_options: dict | None = None, alpha: float = 0.5, rerank_k: int = 16) -> Results:
    """xsim (and xsim++ with ``augmented="auto"`` or a folder) of an encoder, as `xsimpp eval`.

    ``style``: which negatives ``augmented`` takes (strict / paper; None: strict where both exist);
    ``rerank``: an auxiliary encoder (name or object, ``rerank_options``) for P-xSIM -- each source's
    ``rerank_k`` margin candidates rescored and blended ``alpha * margin + (1 - alpha) * aux``; the
    records are then p-xsim / p-xsim++ (see ``xsimpp.scoring.pxsim``).

    ``langs``: source languages ("kea,fur" or a list; any code `xsimpp eval --langs` takes);
    ``dataset``: flores200 / tatoeba / demo, or ``src_file`` + ``tgt_file`` (line-aligned files,
    ``langs``/``target`` then name their sides); ``engine``: an ``EngineConfig`` (speed only);
    ``ray``: "auto" or a cluster address to encode on Ray (registered encoder names only);
    ``revision`` / ``encoder_name`` / ``encode_kwargs``: for encoder objects (module
    ``xsimpp.encoders.pyobject``); ``limit``: the first N lines of each pair only (a quick look; the
    split is recorded as ``dev[:N]``)."""
    from .tasks.xsim import Rerank, XsimSettings, count_sentences, encoding_sides, evaluate_bitexts

    settings = XsimSettings(margin=margin, k=k, mode=mode)  # every knob checked before any work
    if rerank is None and rerank_options:
        raise BadInputError("--rerank-opt sets an option of the --rerank encoder; give --rerank too")
    bitexts, aug = xsim_data(langs, dataset=dataset, split=split, target=target, src_file=src_file, tgt_file=tgt_file,
                             name=name, augmented=augmented, allow_errtypes=allow_errtypes,
                             both_directions=both_directions, nway=nway, data_dir=data_dir, limit=limit, style=style)
    enc = make_encoder(encoder, options, name=encoder_name, revision=revision, encode_kwargs=encode_kwargs)
    aux = None
    if rerank is not None:
        if ray:
            raise BadInputError("--ray does not distribute P-xSIM's auxiliary encoder yet; drop --ray or --rerank")
        aux_enc = make_encoder(rerank, rerank_options)
        aux = Rerank(aux_enc, alpha=alpha, k=rerank_k, cache=open_cache(aux_enc, cache))
    store = open_cache(enc, cache)
    try:
        report = _run_encoding(
            enc, _factory(encoder, options), encoding_sides(bitexts, aug), store,
            lambda c, update: evaluate_bitexts(enc, bitexts, settings, augmented=aug, cache=c, progress=update,
                                               config=engine, rerank=aux),
            ray=ray, progress=progress, total=count_sentences(bitexts, aug) * (2 if aux else 1))
    finally:
        for c in (store, aux.cache if aux else None):
            if c is not None:
                c.close()
    report.encoder_note = getattr(enc, "note", "")
    save_records(report.records, save)
    return Results(report.records, report)


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
    if not dim:
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


def score(src_emb, tgt_emb, *, tgt_text=None, errtypes=None, allow_errtypes=(), margin: str = "ratio", k: int = 4,
          mode: str = "text", dim: int | None = None, fp16: bool = False, engine=None, save=False) -> Results:
    """xsim (xsim++ with ``errtypes``) of precomputed embeddings, as `xsimpp score` and LASER's xSIM().

    ``src_emb`` / ``tgt_emb``: arrays or files (.npy, LASER raw with ``dim``); ``tgt_text``: the
    target sentences (a list or a file; gold first, then augmented lines for xsim++);
    ``errtypes``: LASER's errtype JSON (a dict or a file). The record is signed
    ``precomputed@arrays.<sha256 of both arrays>`` on dataset ``embeddings``."""
    from .datasets.base import AugmentedTargets, check_errtypes, read_errtypes, text_checksum
    from .scoring import xsim
    from .tasks.base import sign
    from .tasks.xsim import XsimSettings
    from .textio import read_lines

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
    settings = XsimSettings(margin=margin, k=k, mode=mode)
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
    save_records([rec], save)
    return Results([rec], ScoreReport(res, tsum, types is not None))


# -- Tatoeba ------------------------------------------------------------------------------------


def tatoeba_bitexts(langs=None, *, set: str | None = None, source: str = "v1", limit: int | None = None,
                    data_dir=None) -> list:
    """The Tatoeba bitexts (src = xx, tgt = eng) of ``langs`` or a named ``set``."""
    import dataclasses

    from .datasets.tatoeba import TatoebaV1
    from .datasets.tatoeba_challenge import TatoebaChallenge
    from .tasks.tatoeba import tatoeba_set

    if source not in ("v1", "challenge"):
        raise BadInputError(f"source must be 'v1' or 'challenge', got '{source}'")
    ds = (TatoebaV1 if source == "v1" else TatoebaChallenge)("test", data_dir=data_dir)
    if set:
        codes = tatoeba_set(set, source, ds.languages())
    else:
        codes = list(dict.fromkeys(ds.resolve(c) for c in _langs(langs)))
    codes = [c for c in codes if c != "eng"]
    if not codes:
        raise BadInputError("no language to evaluate (English is the pivot of every Tatoeba pair)")
    if limit is not None and limit < 1:
        raise BadInputError(f"--limit must be a positive number of lines, got {limit}")
    out = []
    for lang in codes:
        bt = ds.bitext(lang, "eng")
        if limit and len(bt) > limit:
            # A different split name keeps a partial run from overwriting the full one in the store.
            bt = dataclasses.replace(bt, split=f"{bt.split}[:{limit}]", src=bt.src[:limit], tgt=bt.tgt[:limit])
        out.append(bt)
    return out


def tatoeba(encoder, langs=None, *, set: str | None = None, source: str = "v1", margin: str = "absolute", k: int = 4,
            limit: int | None = None, data_dir=None, cache=True, save=False, progress: bool = False, engine=None,
            options: dict | None = None, revision: str | None = None, encoder_name: str | None = None,
            encode_kwargs: dict | None = None) -> Results:
    """Tatoeba accuracy xx->eng and eng->xx, text and index mode, as `xsimpp tatoeba`
    (``set``: "tatoeba36" or "all"; ``source``: "v1" (LASER) or "challenge")."""
    from .tasks.tatoeba import TatoebaSettings, evaluate_tatoeba

    settings = TatoebaSettings(margin=margin, k=k)  # every knob checked before any work
    bitexts = tatoeba_bitexts(langs, set=set, source=source, limit=limit, data_dir=data_dir)
    enc = make_encoder(encoder, options, name=encoder_name, revision=revision, encode_kwargs=encode_kwargs)
    store = open_cache(enc, cache)
    try:
        with progress_bar(sum(2 * len(bt) for bt in bitexts), f"encoding ({enc.id})", enabled=progress) as update:
            report = evaluate_tatoeba(enc, bitexts, settings, cache=store, progress=update, config=engine)
    finally:
        if store is not None:
            store.close()
    save_records(report.records, save)
    return Results(report.records, report)


# -- BUCC ---------------------------------------------------------------------------------------


def _bucc_subset(split, head: int | None, sample: str | None, seed: int):
    if head is not None:
        if head < 1:
            raise BadInputError(f"--head must be a positive number of lines, got {head}")
        split = split.head(head)
    if sample:
        try:
            n_src, n_tgt = (int(v) for v in str(sample).lower().split("x"))
        except ValueError:
            raise BadInputError(f"--sample takes NSRCxNTGT, e.g. 1000x1500, not '{sample}'") from None
        split = split.sample(n_src, n_tgt, seed)
    return split


def bucc(encoder, pair: str = "zh-en", *, tune: str = "sample", apply: str | None = None, margin: str = "ratio",
         k: int = 4, one_to_one: bool = False, keep_fraction: float | None = None, digit_filter: bool = False,
         edit_filter: float | bool | None = None, keung: bool = False, cv: int | None = None, seed: int = 0,
         sample: str | None = None, head: int | None = None, data_dir=None, cache=True, save=False,
         progress: bool = False, engine=None, options: dict | None = None, revision: str | None = None,
         encoder_name: str | None = None, encode_kwargs: dict | None = None, protocol: str = "laser",
         digits: str | None = None) -> Results:
    """BUCC 2018 mining precision / recall / F1, as `xsimpp bucc`.

    ``protocol="laser"`` (default): candidates both ways, threshold tuned on ``tune``'s gold and
    applied to ``apply`` (or set by ``keep_fraction``), filters before the threshold.
    ``protocol="keung"``: Keung et al. (2020) — forward retrieval, ``keep_fraction`` (default 0.02)
    counted before the filters, then the ASCII digit filter and the edit filter (0.5).
    ``digits``: "ascii", "unicode" (NFKC, any decimal digit; a deviation from Keung et al.) or
    "none"; ``digit_filter=True`` is ``digits="unicode"``. ``edit_filter``: the similarity cut,
    ``False`` for none. ``keung=True`` (the two filters under the LASER protocol in earlier
    versions) is refused with the two ways to say what is meant."""
    from .datasets.bucc import Bucc2018
    from .tasks.bucc import KEUNG_MAX_EDIT_SIMILARITY, BuccSettings, evaluate_bucc, keung_settings

    if keung:
        raise BadInputError("--keung no longer exists: for Keung et al.'s protocol (forward retrieval, 2 % kept, then "
                            "the filters) use --protocol keung; for the two filters alone under the LASER protocol use "
                            "--digit-filter --edit-filter")
    if digit_filter and digits not in (None, "unicode"):
        raise BadInputError(f"--digit-filter is --digits unicode; it cannot be combined with --digits {digits}")
    edit = None if edit_filter is False else (0.5 if edit_filter is True else edit_filter)
    rule = "unicode" if digit_filter else digits
    # every knob checked before any data is read or model loaded
    if protocol == "keung":
        settings = keung_settings(keep_fraction=keep_fraction, digits="ascii" if rule is None else rule,
                                  max_edit_similarity=KEUNG_MAX_EDIT_SIMILARITY if edit_filter is None else edit,
                                  margin=margin, k=k, cv=cv, seed=seed, one_to_one=one_to_one)
    else:
        settings = BuccSettings(margin=margin, k=k, one_to_one=one_to_one, digits=rule, max_edit_similarity=edit,
                                keep_fraction=keep_fraction, cv=cv, seed=seed, protocol=protocol)
    keep_fraction = settings.keep_fraction
    ds = Bucc2018(data_dir)
    splits = ds.splits(pair)
    apply_name = apply or ("test" if "test" in splits else tune)
    apply_split = _bucc_subset(ds.load(pair, apply_name), head, sample, seed)
    tune_split = None
    if keep_fraction is None:
        tune_split = apply_split if tune == apply_name else _bucc_subset(ds.load(pair, tune), head, sample, seed)
    enc = make_encoder(encoder, options, name=encoder_name, revision=revision, encode_kwargs=encode_kwargs)
    store = open_cache(enc, cache)
    total = len(set(apply_split.src)) + len(set(apply_split.tgt))
    if tune_split is not None and tune_split is not apply_split:
        total += len(set(tune_split.src)) + len(set(tune_split.tgt))
    try:
        with progress_bar(total, f"encoding ({enc.id})", enabled=progress) as update:
            report = evaluate_bucc(enc, apply_split, tune_split, settings, cache=store, progress=update, config=engine)
    finally:
        if store is not None:
            store.close()
    save_records(report.records, save)
    return Results(report.records, report)


# -- mining and downloads -----------------------------------------------------------------------


def mine(src, tgt, out_dir, *, margin: str = "ratio", k: int = 4, max_memory="4GB", keep_shards: bool = True,
         progress=None, engine=None, ray: str | None = None, shard_rows: int | None = None,
         tile_cols: int | None = None, max_shards: int | None = None):
    """Exact margin kNN both ways, sharded and resumable under ``out_dir`` (`xsimpp mine`);
    ``ray``: "auto" or a cluster address to run the shards as Ray tasks (outputs byte-identical;
    ``out_dir`` must then be on storage every node sees). Returns ``engine.mining.MiningResult``."""
    from .engine.mining import mine as run_mine

    with _executor(ray) as ex:
        return run_mine(src, tgt, out_dir, margin=margin, k=k, max_memory=max_memory, keep_shards=keep_shards,
                        progress=progress, config=engine, executor=ex, shard_rows=shard_rows, tile_cols=tile_cols,
                        max_shards=max_shards)


def filter_corpus(src, tgt, out, encoder="e5-small", *, src_lang: str, tgt_lang: str, budget=None,
                  options: dict | None = None, cache=True, engine=None, progress: bool = False, **settings):
    """Filter two line-aligned files with an encoder (`xsimpp filter`, Tan & Koehn 2022): duplicates,
    > 90 % overlap and wrong-language lines dropped, the rest ranked by LASER's ``--mode score``
    margin and kept up to ``budget`` English tokens ("2M"). Writes ``out`` atomically; returns
    ``tasks.filter.FilterReport``. ``settings``: the other ``FilterSettings`` fields."""
    from .tasks.filter import FilterSettings, filter_corpus as run_filter, parse_budget

    enc = make_encoder(encoder, options)
    if enc.kind != "vector":
        raise BadInputError(f"filter needs a vector encoder (margin kNN over sentence vectors); {enc.id} is a pair scorer")
    cfg = FilterSettings(src_lang=src_lang, tgt_lang=tgt_lang, budget=parse_budget(budget), **settings)
    store = open_cache(enc, cache)

    bars = []

    def bar(total: int, desc: str):
        if not progress:
            return None
        from tqdm import tqdm

        bars.append(tqdm(total=total, desc=desc, unit="pair", file=sys.stderr, dynamic_ncols=True, mininterval=0.5))
        return bars[-1].update

    try:
        return run_filter(src, tgt, out, enc, cfg, cache=store, engine=engine, progress=bar)
    finally:
        for b in bars:
            b.close()
        if store is not None:
            store.close()


def download(source: str, to=None, **kwargs):
    """Fetch a dataset into a data root (`xsimpp download`); see ``xsimpp.datasets.download``."""
    from .datasets.download import download as run_download

    return run_download(source, to, **kwargs)


# -- proxy-validation study ---------------------------------------------------------------------


def study(config=None, *, preset: str | None = None, data_dir=None, cache=True, out=None, overwrite: bool = False,
          progress: bool = False, engine=None):
    """The proxy-validation study of `xsimpp study`: ``config`` is a TOML file (or a parsed
    ``xsimpp.study.config.StudyConfig``), ``preset`` a built-in one ("small", "large"). Every
    input is checked (languages, data, distractor pool, encoders) before any encoding. Returns
    ``xsimpp.study.run.StudyResult``; ``out``: also write the report folder (atomically)."""
    from .study.config import StudyConfig, load_config
    from .study.data import load_study_data
    from .study.encoders import build_encoders
    from .study.run import check_encoders_cover, run_study

    cfg = config if isinstance(config, StudyConfig) else load_config(config, preset)
    if out is not None:
        from .study.output import check_out_dir

        check_out_dir(out, overwrite)
    data = load_study_data(cfg, data_dir)
    notes: list[str] = []
    encoders = build_encoders(cfg.encoders, cache=cache if cache else False, notes=notes)
    check_encoders_cover(encoders)
    data.notes += notes

    bars = []

    def open_bar(desc, total):
        if bars:
            bars.pop().__exit__(None, None, None)
        ctx = progress_bar(total, desc, enabled=progress)
        update = ctx.__enter__()
        bars.append(ctx)
        return update

    try:
        result = run_study(cfg, data, encoders, progress=open_bar, engine=engine)
    finally:
        while bars:
            bars.pop().__exit__(None, None, None)
        for e in encoders:
            if e.cache is not None:
                e.cache.close()
    if out is not None:
        from .study.output import write_study

        write_study(result, out, overwrite)
    return result


__all__ = ["Results", "bucc", "download", "evaluate", "load_embeddings", "make_encoder", "mine", "score", "study", "tatoeba"]
