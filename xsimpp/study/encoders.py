"""The study's encoders: each grid entry as cached vectors plus, where the encoder defines one, a
transform of the similarity matrix (OneAligner's in-batch normalisation).

Cost is the point here: every vector goes through the embedding cache, keyed as `xsimpp eval`
keys it, so a study reuses earlier runs and fills caches that later runs reuse. Encoders built on
the same Hugging Face model with the same tokenisation (``hf`` layers, ``onealigner`` with
``scoring = "mean"``) and the same numeric path share ONE forward pass (``SharedForward``): every
hidden state comes out of it, each member pools its own layer, and each member's cache is filled.
On the bundled e5-small that pass runs OpenVINO float32 on x86-64 CPUs, as ``--encoder e5-small``
does (``encoders.backbone.openvino_graph``); any model runs it with ``path = "openvino-float32"`` in its
options. A vector from the shared pass equals the member's own ``encode`` (tests/test_study.py,
tests/test_openvino_hidden.py: bit for bit on the OpenVINO path).

OneAligner with ``scoring = "bertscore"`` is refused: BERTScore is token-level, so scoring 1 000
sources against 50 000 distractors means 5e7 token-matrix products (hours on a CPU). With
``scoring = "mean"`` OneAligner is vector-level: the mean of the content tokens' states (no
specials, no prompt), cosine, then (``normalization = "in-batch"``) S = f − α(row mean + column
mean) + (2α−1)·total mean over the scored matrix (``batch_size = 0``: the whole matrix; tiles of
256 would make a sentence's score depend on which distractors share its tile).
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..cache import (EmbeddingCache, MemoryCache, cache_lang, encode_cached, open_encoder_cache, report_cached,
                     sentence_key)
from ..encoders import create_encoder
from ..encoders.base import PairScorer, VectorEncoder
from ..encoders.backbone.manifest import training_manifest
from ..errors import BadInputError, MissingResourceError, XsimppError
from .config import EncoderSpec

log = logging.getLogger(__name__)


@dataclass
class Cost:
    encoded: int = 0  # sentences encoded in this run
    requested: int = 0  # sentences asked for (encoded + reused from the cache)
    seconds: float = 0.0  # time spent encoding
    shared_with: str = ""  # the labels whose vectors one forward pass computes together


@dataclass
class StudyEncoder:
    """One grid entry: cached vectors, its signing identity, and its similarity transform."""

    spec: EncoderSpec
    encoder: object  # the xsimpp Encoder that signs the records (id, revision, fingerprint)
    cache: object  # EmbeddingCache (MemoryCache without a disk cache): the runner reads the vectors there
    normalize: Callable[[np.ndarray], np.ndarray] | None = None  # similarity-matrix transform
    cost: Cost = field(default_factory=Cost)
    group: "SharedForward | None" = None
    pool: str = "vector"  # vector (the encoder's own), mean (hf mean pooling), content-mean (OneAligner)
    layer: int = -1

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def lang_agnostic(self) -> bool:
        return bool(getattr(self.encoder, "language_agnostic", False))

    def vectors(self, sentences: Sequence[str], lang: str, progress=None, count: bool = True) -> np.ndarray:
        """(n, d) float32 vectors through the cache (the shared pass computes what any member lacks);
        ``count``: whether the cost counts them as asked for (the study's encoding pass) or not (a
        task reading them again)."""
        if self.group is not None:
            return self.group.vectors(self, sentences, progress, count)
        t0 = time.perf_counter()
        vecs, n_new = encode_cached(self.encoder, sentences, cache=self.cache, lang=lang, progress=progress)
        self.cost.seconds += time.perf_counter() - t0
        self.cost.encoded += n_new
        self.cost.requested += len(sentences) if count else 0
        return vecs

    @property
    def rate_key(self) -> str:
        """The id this entry's encoding speed is measured under (``tasks.cost``): the shared pass's
        model where one computes its vectors, else its encoder's (as a run of it records)."""
        return self.group.runner.id if self.group is not None else self.encoder.id

    def lookups(self, sides) -> tuple[int, int | None]:
        """(distinct sentences of ``sides``, how many need no forward pass, None without a cache): for a
        shared pass, those every member's cache holds (it computes what any member lacks)."""
        from ..tasks.cost import distinct_cached

        if self.group is not None:
            caches = [m.cache for m in self.group.members]
            return distinct_cached(sides, [c for c in caches if c is not None], lambda lang: "")
        return distinct_cached(sides, [self.cache] if self.cache is not None else [],
                               lambda lang: cache_lang(self.encoder, lang))

    def runner_encoder(self):
        """What the runner runs for this entry, over ``cache`` (which the study's encoding filled):
        the encoder itself where the study's vectors are its own (a shared pass computes exactly
        its ``encode``), else an adapter that signs as it (OneAligner's content-token mean, a pair
        scorer when its similarity is transformed)."""
        if self.pool != "content-mean":
            return self.encoder
        return (MemberPairs if self.normalize is not None else MemberVectors)(self)

    def similarity(self, x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
        """The scored matrix when the encoder transforms it (None: plain cosine, the engine's own)."""
        if self.normalize is None:
            return None
        return self.normalize(_cosine(x, y))


class _Member:
    """A study entry whose vectors are not its encoder's own (OneAligner's content-token mean) as an
    xsimpp ``Encoder`` over the study's cache, so the registered tasks score it through the runner.
    It signs as the encoder it stands for: the same id, revision and fingerprint."""

    def __init__(self, member: StudyEncoder):
        self.member = member
        self.language_agnostic = member.lang_agnostic

    @property
    def id(self) -> str:
        return self.member.encoder.id

    @property
    def revision(self) -> str:
        return self.member.encoder.revision

    @property
    def fingerprint(self) -> str:
        return self.member.encoder.fingerprint


class MemberVectors(_Member, VectorEncoder):
    def encode(self, sentences, *, lang=None, progress=None) -> np.ndarray:
        return self.member.vectors(sentences, lang, progress, count=False)


class MemberPairs(_Member, PairScorer):
    def similarity(self, sources, targets, *, src_lang=None, tgt_lang=None) -> np.ndarray:
        return self.member.similarity(self.member.vectors(sources, src_lang, count=False),
                                      self.member.vectors(targets, tgt_lang, count=False))


def _cosine(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    def unit(a):
        a = np.asarray(a, dtype=np.float64)
        return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)

    return (unit(x) @ unit(y).T).astype(np.float32)


class SharedForward:
    """One Hugging Face model run once per sentence for several members (hf layers with mean
    pooling, OneAligner content-token means): every member's missing vectors come from one pass."""

    def __init__(self, runner, members: list[StudyEncoder]):
        self.runner = runner  # an HFEncoder at the deepest layer any member needs
        self.members = members
        self.cost = Cost()

    def _pool(self, sentences: Sequence[str]) -> list[np.ndarray]:
        """Every member's vectors for ``sentences`` (in member order) from one forward pass."""
        from ..encoders.backbone.layers import layer_vectors

        return layer_vectors(self.runner, sentences, [(m.layer, m.pool) for m in self.members])

    def fill(self, sentences: Sequence[str], progress=None) -> None:
        """Compute, in one pass, the sentences any member's cache lacks, and store them in every cache."""
        keys = [sentence_key(s) for s in sentences]
        missing: dict[str, str] = {}
        have_all = []
        for mem in self.members:
            have = mem.cache.get_many(keys, "") if mem.cache is not None else {}
            have_all.append(have)
            for k, s in zip(keys, sentences):
                if k not in have:
                    missing.setdefault(k, s)
        report_cached(progress, len(sentences) - len(missing))  # kept out of the bar's rate and the measured one
        items = sorted(missing.items(), key=lambda kv: -len(kv[1]))
        from ..cache import CHUNK_SIZE

        for start in range(0, len(items), CHUNK_SIZE):
            chunk = items[start : start + CHUNK_SIZE]
            t0 = time.perf_counter()
            vecs = self._pool([s for _, s in chunk])
            self.cost.seconds += time.perf_counter() - t0
            self.cost.encoded += len(chunk)
            for n, mem in enumerate(self.members):
                new = [(k, v) for (k, _), v in zip(chunk, vecs[n]) if k not in have_all[n]]
                if new and mem.cache is not None:
                    mem.cache.put_many(new, "")
                mem.cost.encoded += len(new)
            if progress:
                progress(len(chunk))

    def vectors(self, member: StudyEncoder, sentences: Sequence[str], progress=None, count: bool = True) -> np.ndarray:
        self.fill(sentences, progress)
        keys = [sentence_key(s) for s in sentences]
        have = member.cache.get_many(keys, "")
        member.cost.requested += len(sentences) if count else 0
        return np.stack([have[k] for k in keys]).astype(np.float32, copy=False)


def _group_key(spec: EncoderSpec, encoder) -> tuple | None:
    """Specs that can share one forward pass: hf (mean pooling) and onealigner mean scoring over
    the same model, prompt, length limit and numeric path (torch or OpenVINO float32)."""
    o = spec.options
    if spec.name == "hf" and o.get("pooling", "mean") == "mean" and not o.get("autocast"):
        return (str(o.get("model", "e5-small")), o.get("prompt"), int(o.get("max_length", 512)), encoder.path)
    if spec.name == "onealigner":
        return (str(o.get("model", "e5-small")), o.get("prompt"), int(o.get("max_length", 100)), encoder.path)
    return None


def checkpoint_damage(spec: EncoderSpec) -> str | None:
    """What is wrong with the training record of a member's checkpoint folder (``options.model``),
    read before the encoder is built (damage there is the member's, not a bad option of the
    config); None when it reads or there is none."""
    model = spec.options.get("model")
    if not isinstance(model, str) or not Path(model).expanduser().is_dir():
        return None
    try:
        training_manifest(Path(model).expanduser())
    except XsimppError as e:
        return f"its checkpoint is damaged ({e})"
    return None


def build_encoders(specs: Sequence[EncoderSpec], *, cache: bool | str | Path = True,
                   notes: list[str] | None = None) -> list[StudyEncoder]:
    """Load every encoder of the grid; group those that share a forward pass. A member whose
    model folder is absent or whose checkpoint record (``xsimpp_training.json``) is damaged ends
    the study in one sentence, unless it is marked ``optional``: then it is skipped with a note
    (never silently: a study without a member is another study)."""
    from ..encoders.hf import HFEncoder
    from ..encoders.onealigner import OneAligner, in_batch_normalize

    notes = notes if notes is not None else []
    root = None if cache is True else cache
    out: list[StudyEncoder] = []
    groups: dict[tuple, list[StudyEncoder]] = {}
    for spec in specs:
        if spec.name == "onealigner" and spec.options.get("scoring", "bertscore") != "mean":
            raise BadInputError(f"encoder '{spec.label}': OneAligner's BERTScore is token-level, infeasible against "
                                "tens of thousands of distractors on a CPU; use options scoring = \"mean\"")
        damage = checkpoint_damage(spec)
        if damage is None:
            try:
                enc = create_encoder(spec.name, **spec.options)
            except MissingResourceError as e:
                damage = str(e)
            except (TypeError, ValueError) as e:
                raise BadInputError(f"encoder '{spec.label}' ({spec.name}): bad options {spec.options} ({e})") from None
        if damage is not None:
            if spec.optional:
                notes.append(f"encoder '{spec.label}' (optional) skipped: {damage}")
                continue
            raise BadInputError(f"encoder '{spec.label}': {damage}; the study needs every member it lists (mark it "
                                "optional = true to run without it)")
        if enc.kind != "vector" and spec.name != "onealigner":
            raise BadInputError(f"encoder '{spec.label}' ({spec.name}) scores sentence pairs; a study needs vectors "
                                "(a pair scorer over tens of thousands of distractors is out of reach on a CPU)")
        # Without a disk cache the study's vectors live in memory for the run (the runner reads them there).
        key = _group_key(spec, enc)
        if isinstance(enc, OneAligner):
            cache_obj = (EmbeddingCache(enc.id + "-meanpool", enc.states_fingerprint, root) if cache is not False
                         else MemoryCache())
            norm = None
            if enc.normalization == "in-batch":
                alpha, bs = enc.alpha, enc.batch_size
                norm = (lambda f, a=alpha, b=bs: in_batch_normalize(f, a, b))
            se = StudyEncoder(spec, enc, cache_obj, norm, pool="content-mean", layer=enc.layer)
        else:
            vcache = open_encoder_cache(enc, root) if cache is not False else MemoryCache()
            se = StudyEncoder(spec, enc, vcache, pool="mean" if isinstance(enc, HFEncoder) else "vector",
                              layer=getattr(enc, "layer", -1))
        out.append(se)
        if key is not None:
            groups.setdefault(key, []).append(se)
    for key, members in groups.items():
        deepest = max(members, key=lambda m: m.layer)
        runner = next((m.encoder for m in members if isinstance(m.encoder, HFEncoder) and m.layer == deepest.layer), None)
        if runner is None:  # no hf member at the deepest layer: a runner of its own (same tokenisation)
            model, prompt, max_length, path = key
            runner = HFEncoder(model=model, layer=deepest.layer, prompt=prompt, max_length=max_length, path=path)
            if prompt is None:
                runner.prompt = deepest.encoder.prompt
        runner = copy.copy(runner)
        for m in members:
            if getattr(m.encoder, "prompt", runner.prompt) != runner.prompt:
                raise BadInputError(f"encoder '{m.label}' uses prompt {m.encoder.prompt!r} but shares a model with "
                                    f"prompt {runner.prompt!r}; give both the same prompt")
        group = SharedForward(runner, members)
        for m in members:
            m.group = group
            m.cost.shared_with = ", ".join(x.label for x in members) if len(members) > 1 else ""
    return out
