"""The encoder protocol. Two kinds behind one registry:

- vector encoders (``kind = "vector"``) map sentences to one vector each;
- pair scorers (``kind = "pair"``) map (sources, targets) to a similarity matrix (OneAligner).

Every encoder has an ``id`` (what results show), a ``revision`` (which weights: a checksum or a
package version) and a ``config`` (every setting that changes its output). Together they key the
embedding cache and sign every result, so two numbers are comparable only if all three agree.

Every encoder also declares ``language_agnostic``: True when its output for a sentence does not
depend on the ``lang`` it is given (most multilingual encoders: LaBSE, e5, USE), False when it does
(encoders that take a language code, e.g. SONAR-style language-specific inputs). The embedding cache
keys vectors by language unless this is True; the default is False, so an encoder that forgets
to declare costs some re-encoding but never gets another language's vector back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar, Iterator, Sequence

import numpy as np

from ..errors import BadInputError, MissingResourceError, XsimppError
from ..options import check_value, knob, metadata


@dataclass(frozen=True)
class EncoderOptions:
    """The constructor options many encoders share, declared once with ``knob`` (type, range, help):
    what ``create_encoder`` checks before the constructor runs, so a bad value is one sentence, never
    a crash deep inside a library, and the encoder flags of every command (``cli=True``; absent =
    the encoder's own default). An encoder's own ``options`` (knobs too) add to or override these;
    any other option reaches a constructor through ``--encoder-opt KEY=VALUE``."""

    model: str | None = knob(None, "model name or local path for adapters that take one", type=str, none_ok=True)
    batch_size: int | None = knob(None, "encoder batch size (e5-small/hf/sbert/labse on a GPU or under --autocast: "
                                        "not used, they run fixed shapes set by the token budget; onealigner: the "
                                        "normalisation tile, which changes scores; 0 = full matrix)", type=int, min=1)
    layer: int | None = knob(None, "hf/onealigner: hidden layer to pool (0 = embeddings, negative from the top)",
                             type=int)
    pooling: str | None = knob(None, "hf: pooling over tokens", type=str, choices=("mean", "cls"))
    device: str | None = knob(None, "torch device for torch encoders (cpu, cuda, cuda:1)", type=str)
    max_length: int | None = knob(None, "truncate inputs to this many tokens (torch encoders)", type=int, min=1)
    rerank_k: int | None = knob(None, "onealigner: two-stage mode, rescore each source's top K targets by mean-pooled "
                                      "cosine with its full scoring (0: off; P-xSIM's candidates are --pxsim-k)",
                                flag="--two-stage-k", metavar="K", type=int, min=0)
    prompt: str | None = knob(None, "e5-small/hf/onealigner: text put before every sentence (default 'query: ' on "
                                    "e5-small, else none; --prompt '' drops it)", type=str, none_ok=True)
    autocast: str | None = knob(None, "sbert/labse/hf: run the model under torch bf16 autocast (faster on bf16 "
                                      "hardware; changes the vectors slightly, so it is part of the cache key and "
                                      "signature)", type=str, choices=("bf16",), none_ok=True)
    encode_batch_size: int | None = knob(None, "sentences per forward pass", type=int, min=1, cli=False)
    max_seq_length: int | None = knob(None, "sentence-transformers' max_seq_length", type=int, min=1, none_ok=True,
                                      cli=False)
    max_tokens: int | None = knob(None, "tokens per batch", type=int, min=1, cli=False)
    threads: int | None = knob(None, "CPU threads of the encoder", type=int, min=1, none_ok=True, cli=False)
    lowercase: bool | None = knob(None, "lowercase before encoding", type=bool, cli=False)
    normalize_tokens: bool | None = knob(None, "normalise tokens before encoding", type=bool, cli=False)


@contextlib.contextmanager
def loading_model(adapter: str, folder) -> Iterator[None]:
    """Around the library calls that read a model folder: whatever safetensors, json, transformers,
    tokenizers or sentence-transformers raise for a damaged or incomplete folder (a cut weights file,
    broken JSON, a missing config, a cut tokenizer) becomes one sentence naming the folder."""
    try:
        yield
    except (XsimppError, ImportError, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - each library raises its own types for a bad file
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:240]
        raise MissingResourceError(f"{adapter}: cannot load the model in {folder}: {first} (a damaged or incomplete "
                                   "model folder: save or download it again)") from None


TORCH_DEVICES = ("cpu", "cuda", "mps")


def check_device(device: str | None, flag: str = "--device") -> None:
    """A torch device that exists here ("auto": the best one there is), checked before any model
    loads: an unknown or absent device is one sentence, not a traceback after minutes of loading."""
    if device is None or device == "auto":
        return
    import torch

    try:
        kind = torch.device(device).type
    except (RuntimeError, ValueError) as e:
        raise BadInputError(f"{flag} {device!r} is not a torch device ({str(e).splitlines()[0]}); use auto, cpu, "
                            "cuda, cuda:N or mps") from None
    if kind not in TORCH_DEVICES:
        raise BadInputError(f"{flag} {device!r}: xsimpp runs on {', '.join(TORCH_DEVICES)} (or auto)")
    here = {"cpu": True, "cuda": torch.cuda.is_available(),
            "mps": bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())}[kind]
    if not here:
        raise BadInputError(f"{flag} {device!r}: this machine has no {kind} device (torch sees none); use auto or cpu")
    if kind == "cuda" and torch.device(device).index is not None and torch.device(device).index >= torch.cuda.device_count():
        raise BadInputError(f"{flag} {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")


def declared_options(cls: type) -> dict[str, Any]:
    """Option name -> its declaration (a ``knob`` field) for encoder class ``cls``."""
    return {**{f.name: f for f in fields(EncoderOptions)}, **getattr(cls, "options", {})}


@dataclass(frozen=True)
class Requirement:
    """A part an encoder needs (a package, a model file) and whether it is here."""

    name: str
    installed: bool
    how_to_get: str


class Encoder(ABC):
    """Base of every encoder. Subclasses set ``name`` (the registry name) and ``kind``."""

    name: str = ""
    kind: str = "vector"
    description: str = ""
    language_agnostic: bool = False  # True only if ``lang`` never changes the output (see the module docstring)
    # knobs of constructor options beyond EncoderOptions (default None: the constructor's own default)
    options: ClassVar[dict[str, Any]] = {}

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """Options checked against their declared types and ranges (``EncoderOptions``, then
        ``options``) and, for undeclared ones, against the type of the constructor's default.
        Subclasses add checks that join options (``ngram_min <= ngram_max``) by overriding and
        calling this."""
        import inspect

        declared = declared_options(cls)
        params = inspect.signature(cls.__init__).parameters
        owner = f"encoder {cls.name or cls.__name__}"
        out = {}
        for key, value in options.items():
            decl = declared.get(key)
            if decl is None and key in params and isinstance(params[key].default, (bool, int, float)):
                decl = {"type": type(params[key].default)}
            flag = metadata(decl).get("flag") if decl is not None else None  # named as the user typed it too
            out[key] = check_value(owner, f"{key} ({flag})" if flag else key, decl, value) if decl is not None else value
        if "device" in out:
            check_device(out["device"], f"{owner}: option device")
        return out

    @property
    def id(self) -> str:
        return self.name

    @property
    @abstractmethod
    def revision(self) -> str:
        """Identity of the weights (checksum or version); changes invalidate the cache."""

    def config(self) -> dict[str, Any]:
        """Settings that change the output (prefixes, pooling, layer, normalisation...)."""
        return {}

    @property
    def fingerprint(self) -> str:
        blob = json.dumps({"id": self.id, "revision": self.revision, "config": self.config()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @classmethod
    def requirements(cls) -> list[Requirement]:
        return []


def weights_digest(module) -> str:
    """sha256 over a torch module's parameters and buffers (names, dtypes, shapes, bytes)."""
    import torch

    h = hashlib.sha256()
    with torch.no_grad():
        for name, tensor in sorted(module.state_dict().items()):
            t = tensor.detach().to("cpu").contiguous()
            h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
            h.update(t.view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes())
    return h.hexdigest()


class VectorEncoder(Encoder):
    kind = "vector"
    # True when the encoder's vectors cannot depend on which sentences share its calls (fixed shapes)
    # and it runs best on many sentences at once: the runner then encodes every side of a task in
    # one pool of length-sorted chunks (``tasks.base.prefill_local``) instead of side by side.
    pools_sides = False

    @abstractmethod
    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        """(n, dim) float32 for n sentences; ``progress(k)`` is called as k more are done."""


class PairScorer(Encoder):
    kind = "pair"

    @abstractmethod
    def similarity(self, sources: Sequence[str], targets: Sequence[str], *, src_lang: str | None = None,
                   tgt_lang: str | None = None) -> np.ndarray:
        """(n_sources, n_targets) float32 similarity matrix."""


def batched(items: Sequence[str], batch_size: int):
    for start in range(0, len(items), batch_size):
        yield start, items[start : start + batch_size]


def length_sorted_batches(sentences: Sequence[str], batch_size: int):
    """Yield (original indices, batch) with similar lengths together, so padding is minimal."""
    order = sorted(range(len(sentences)), key=lambda i: (len(sentences[i]), i))
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        yield idx, [sentences[i] for i in idx]
