"""Any Python object with ``encode(list[str]) -> array`` as a vector encoder: a
``SentenceTransformer``, an mteb 1.x-style model, your own class (``xsimpp.evaluate(model, ...)``).
mteb 2.x encoders (``encode`` over a DataLoader) are ``xsimpp.encoders.mteb_model`` objects.

Such an object has no registry name and no published weights version, so its identity in the
cache and in signatures is stated, never guessed:

- ``id``: ``py:<name>``, the name you give, else the object's class name (``py:SentenceTransformer``);
- a ``SentenceTransformer`` built from a model folder that ``--encoder sbert`` loads too (the
  bundled all-MiniLM-L6-v2, a local folder), its weights unchanged, IS that named encoder
  (``adopt_named``): one id, revision and cache whichever way the model is given. Give ``name``,
  ``revision`` or ``encode_kwargs`` to keep it an object of its own;
- ``revision``: the one you give (``revision="my-ckpt-step-500"``), else one derived from the
  object: for a torch module (a SentenceTransformer is one) ``weights.<sha256 of every parameter
  and buffer>``, so two checkpoints never share a revision; else the object's own string
  ``revision`` attribute if it has one; else ``unversioned``. An unversioned object's vectors are
  never cached (nothing would tell a changed model from the old one) and its records say
  ``@unversioned`` in their signature;
- ``config``: the class's qualified name, the extra ``encode`` keywords, and for a torch module its
  printed structure (pooling, normalisation and sequence length show there).

``encode`` is called with the sentences only (plus ``encode_kwargs``), never with a language, so
the object's output cannot depend on the language: it is cached language-agnostically. A
``SentenceTransformer`` given without ``encode_kwargs`` (a checkpoint in training, as
``XsimEvaluator`` sees it) is encoded as ``--encoder sbert`` encodes a folder
(``sbert.encode_bucketed``: its own preprocess and module stack, each sentence at a width set by its
own length), not through its ``encode``, whose batches pad to their longest sentence: its vectors
then depend on no batch, and a checkpoint gives the same vectors in memory as saved and loaded with
``--encoder sbert --model CKPT``; the config names the torch numerics, as sbert's does.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..errors import BadInputError
from .base import VectorEncoder, weights_digest

UNVERSIONED = "unversioned"


def is_torch_module(obj) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return False
    return isinstance(obj, torch.nn.Module)


def is_sentence_transformer(obj) -> bool:
    """Whether ``obj`` is a sentence-transformers ``SentenceTransformer`` (read from its class name, so
    that an object of another library never imports sentence-transformers)."""
    return type(obj).__name__ == "SentenceTransformer" and is_torch_module(obj)


def as_array(out, n: int, who: str) -> np.ndarray:
    """An encoder's output (numpy array, torch tensor, list or generator of vectors) as (n, dim)
    float32; anything else (text, a dict, vectors of different lengths) is refused naming ``who``."""
    if hasattr(out, "detach"):  # a torch tensor
        out = out.detach().float().cpu().numpy()
    elif isinstance(out, dict):
        raise BadInputError(f"{who}.encode returned a dict (keys {', '.join(map(str, list(out)[:3]))}), not vectors; "
                            "give an object whose encode returns an array (sentences x dimensions)")
    elif isinstance(out, Iterator):  # a generator of vectors: taken as the list it yields
        out = list(out)
    if isinstance(out, (list, tuple)) and out and hasattr(out[0], "detach"):
        out = np.stack([t.detach().float().cpu().numpy() for t in out])
    try:
        arr = np.asarray(out)
    except ValueError:  # numpy refuses a ragged list
        raise BadInputError(f"{who}.encode returned vectors of different lengths for {n} sentences; every sentence "
                            "needs a vector of the same size") from None
    if arr.dtype.kind not in "biuf":  # text or objects: never parsed as numbers
        what = {"U": "text", "S": "bytes", "O": "Python objects"}.get(arr.dtype.kind, arr.dtype.name)
        raise BadInputError(f"{who}.encode returned {what}, not numbers (expected an array of sentences x "
                            "dimensions)")
    if arr.ndim != 2 or arr.shape[0] != n:
        raise BadInputError(f"{who}.encode returned an array of shape {arr.shape} for {n} sentences; "
                            "expected (sentences, dimensions)")
    return arr.astype(np.float32, copy=False)


def adopt_named(model: Any):
    """The named adapter for an object that wraps weights a named adapter loads (a
    ``SentenceTransformer`` built from the bundled MiniLM or a local folder, weights unchanged), so
    one model has one identity and one cache whichever way it is given; None for anything else."""
    if not is_sentence_transformer(model):
        return None
    from .sbert import SBert

    return SBert.adopt(model)


class PyObjectEncoder(VectorEncoder):
    """Wraps an object with ``encode(list[str]) -> array``; see the module docstring."""

    name = "py"
    language_agnostic = True  # encode() is never given the language
    description = "any Python object with encode(list[str]) -> array (SentenceTransformer, your own class)"

    def __init__(self, model: Any, *, name: str | None = None, revision: str | None = None,
                 encode_kwargs: dict | None = None, batch_size: int = 64):
        encode = getattr(model, "encode", None)
        if not callable(encode):
            raise BadInputError(f"encoder object {type(model).__name__} has no encode(list[str]) method; give an "
                                "encoder name, an object with encode(), or precomputed arrays (xsimpp.score)")
        if name is not None and (not str(name).strip() or "|" in str(name)):
            raise BadInputError(f"encoder name {name!r} must be a non-empty text without '|'")
        if revision is not None and (not str(revision).strip() or "|" in str(revision)):
            raise BadInputError(f"encoder revision {revision!r} must be a non-empty text without '|'")
        if batch_size < 1:
            raise BadInputError(f"batch_size must be a positive integer, got {batch_size}")
        self.model = model
        self.label = str(name) if name is not None else type(model).__name__
        self.encode_kwargs = dict(encode_kwargs or {})
        self.batch_size = batch_size
        self._given_revision = None if revision is None else str(revision)
        # a SentenceTransformer without keywords of its own: encoded as sbert encodes (module docstring)
        self.bucketed = is_sentence_transformer(model) and not self.encode_kwargs

    @property
    def id(self) -> str:
        return f"{self.name}:{self.label}"

    @property
    def revision(self) -> str:
        # Derived once per wrapper: the wrapper stands for the model as it was when first used
        # (xsimpp.evaluate and the sentence-transformers evaluator wrap the object anew each call,
        # so a model trained between two calls gets a new revision).
        if self._given_revision is None:
            self._given_revision = self.derived_revision()
        return self._given_revision

    def derived_revision(self) -> str:
        """The revision when none is given (see the module docstring)."""
        own = getattr(self.model, "revision", None)
        if is_torch_module(self.model):
            return "weights." + weights_digest(self.model)[:16]
        if isinstance(own, str) and own.strip() and "|" not in own:
            return own
        return UNVERSIONED

    @property
    def versioned(self) -> bool:
        return self.revision != UNVERSIONED

    def config(self) -> dict:
        cls = type(self.model)
        cfg: dict[str, Any] = {"class": f"{cls.__module__}.{cls.__qualname__}"}
        if self.encode_kwargs:
            cfg["encode_kwargs"] = {k: repr(v) for k, v in sorted(self.encode_kwargs.items())}
        if is_torch_module(self.model):
            cfg["structure"] = hashlib.sha256(str(self.model).encode()).hexdigest()[:16]
        if self.bucketed:
            from .sbert import MAX_TOKENS, bucketed_numerics

            cfg["numerics"] = bucketed_numerics(str(self.model.device), None, MAX_TOKENS)
        return cfg

    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        if self.bucketed:
            from .sbert import MAX_TOKENS, encode_bucketed

            return encode_bucketed(self.model, sentences, device=str(self.model.device), autocast=None,
                                   batch_size=self.batch_size, max_tokens=MAX_TOKENS, progress=progress)
        parts = []
        for start in range(0, len(sentences), self.batch_size):
            batch = list(sentences[start : start + self.batch_size])
            parts.append(as_array(self.model.encode(batch, **self.encode_kwargs), len(batch), type(self.model).__name__))
            if progress:
                progress(len(batch))
        if not parts:
            return np.empty((0, 0), dtype=np.float32)
        return np.concatenate(parts)
