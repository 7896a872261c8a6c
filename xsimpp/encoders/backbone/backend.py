"""Numeric backends: what runs a model's forward pass (``path=``), behind one interface, and the one
registry that names them.

A backend is one module with one ``Backend`` subclass plus one line in ``BACKENDS``. It turns token
ids into hidden states (``batches``), pools and converts them (``pooled``, ``to_numpy``), and
declares its numeric identity -- what, beyond the weights and the adapter's settings, decides its
last bits (toolchain version, kernel ISA, precision, a built artifact's checksum) -- in ONE place,
``identity()``. The adapters (``hf``, ``onealigner``, ``e5-small``) copy that declaration into their
``config()`` and revision whatever the backend, so the cache key, the fingerprint and every
signature carry it and no backend can share another's cache entries by forgetting a field:
``open_backend`` refuses a backend whose declaration names no field or leaves a declared one out.

A registry key is the ``path=`` value (every adapter over a loaded model can run it), or
``ADAPTER:path`` for a backend of one adapter only (e5-small's prebuilt OpenVINO IRs), which
replaces the general backend of that name for that adapter.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterator, Sequence

import numpy as np

from ...errors import BadInputError

BACKENDS: dict[str, str] = {
    "torch-float32": "xsimpp.encoders.backbone.torch_backend:Torch",
    "openvino-float32": "xsimpp.encoders.backbone.openvino_graph:OpenVINOGraph",
    "e5-small:openvino-int8": "xsimpp.encoders.e5_openvino:OpenVINOIR",
    "e5-small:openvino-int8-dynamic": "xsimpp.encoders.e5_openvino:OpenVINOIR",
    "e5-small:openvino-float32": "xsimpp.encoders.e5_openvino:OpenVINOIR",
    "e5-small:openvino-bf16": "xsimpp.encoders.e5_openvino:OpenVINOIR",
}


@dataclass(frozen=True)
class Identity:
    """A backend's numeric identity: ``label`` names the path as a revision does (e5-small's
    revision starts with it: ``torch-float32``, ``openvino-int8+ir-<sha12>``); ``fields`` are the
    config entries that name its numerics, exactly the backend's ``identity_fields`` (a value of
    None: does not apply here, left out of the config, as torch's CPU numerics on a GPU)."""

    label: str
    fields: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelSpec:
    """What a backend runs: a model folder read at ``layer`` (the deepest any caller asks for),
    on ``device``, for ``adapter`` (named in its messages), in batches of at most ``max_tokens``
    padded tokens (on a GPU the batch shapes, and so the last bits, follow from it)."""

    folder: Path
    layer: int
    device: str
    autocast: str | None
    adapter: str
    weights_revision: str
    max_tokens: int


class Backend(ABC):
    """One numeric path of a Hugging Face model. Subclasses set ``identity_fields`` (the config keys
    ``identity`` fills) and implement the methods below; ``refuse`` says why a request cannot run."""

    identity_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, path: str, spec: ModelSpec):
        self.path, self.spec = path, spec

    @classmethod
    def refuse(cls, path: str, *, adapter: str, model_type: str, device: str, autocast: str | None) -> None:
        """Raise one ``BadInputError`` sentence when ``path`` cannot run this model here."""

    @abstractmethod
    def identity(self) -> Identity:
        """The numeric identity (see ``Identity``): the one declaration every cache key reads."""

    @property
    @abstractmethod
    def tokenizer(self) -> Any:
        """The model's tokenizer (loaded on first use)."""

    @property
    @abstractmethod
    def hidden_size(self) -> int:
        """The width of a token state."""

    @abstractmethod
    def batches(self, ids: Sequence[Sequence[int]], specials: Sequence[Sequence[int]], layers: Sequence[int],
                max_tokens: int, batch_size: int) -> Iterator[tuple[list[int], Any, dict[int, Any]]]:
        """(sentence indices, attention mask, {layer: (rows, width, d) states}) per ``bucket_batches``
        batch, each sentence padded to its own bucket width; states in the backend's own type."""

    @abstractmethod
    def pooled(self, h: Any, att: Any, pooling: str) -> np.ndarray:
        """(rows, d) float32 sentence vectors: ``mean`` over every real token, or ``cls``."""

    @abstractmethod
    def to_numpy(self, h: Any) -> np.ndarray:
        """Token states as a float32 numpy array."""

    @property
    def pools_sides(self) -> bool:
        """Whether an encoder on this backend should encode a task's sides in one pool
        (``VectorEncoder.pools_sides``): no backend but the torch one off the CPU asks it."""
        return False


def backend_paths(adapter: str) -> tuple[str, ...]:
    """The ``path=`` values ``adapter`` takes: its own backends first, then the general ones."""
    own = [key.split(":", 1)[1] for key in BACKENDS if key.startswith(f"{adapter}:")]
    return tuple(own + [key for key in BACKENDS if ":" not in key and key not in own])


def backend_class(adapter: str, path: str) -> type[Backend]:
    """The backend ``adapter`` runs ``path`` with; one sentence for a path it does not take."""
    key = f"{adapter}:{path}" if f"{adapter}:{path}" in BACKENDS else path
    if path not in backend_paths(adapter):
        raise BadInputError(f"{adapter}: path must be one of {', '.join(backend_paths(adapter))}, not {path!r}")
    module, _, name = BACKENDS[key].partition(":")
    return getattr(importlib.import_module(module), name)


def open_backend(path: str, spec: ModelSpec, *, model_type: str) -> Backend:
    """The backend for ``path``, checked: the request can run here, and its identity declares every
    field it names (a backend that names none, or leaves one out, is a programming error)."""
    cls = backend_class(spec.adapter, path)
    cls.refuse(path, adapter=spec.adapter, model_type=model_type, device=spec.device, autocast=spec.autocast)
    if not cls.identity_fields:
        raise TypeError(f"backend {cls.__name__} declares no identity_fields: the config keys that name its numerics")
    backend = cls(path, spec)
    declared = backend.identity()
    if not isinstance(declared, Identity) or not declared.label or set(declared.fields) != set(cls.identity_fields):
        raise TypeError(f"backend {cls.__name__}'s identity() must give a label and exactly the fields "
                        f"{', '.join(cls.identity_fields)}, not {declared!r}")
    return backend


def identity_config(backend: Backend) -> dict[str, str]:
    """The config entries of ``backend``'s identity (those that apply here), in declared order."""
    fields = backend.identity().fields
    return {key: fields[key] for key in backend.identity_fields if fields[key] is not None}


def default_path(bundled: bool, device: str, autocast: str | None) -> str:
    """The bundled e5-small's weights run its default path (OpenVINO float32 on an x86-64 CPU, as
    ``e5_small.default_path``); any other model the torch reference, since no gate was run on it."""
    from ..openvino_cpu import cpu_default_path

    return cpu_default_path(device, autocast) if bundled else "torch-float32"
