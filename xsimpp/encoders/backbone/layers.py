"""Layer views and pooling: a model cut above the layer it is read at (``drop_blocks_above``), its
hidden states (``hidden_layer``, ``token_states``), sentence vectors pooled from them (``pool_states``
in torch, ``masked_mean`` in numpy) and several layers' vectors from one pass (``layer_vectors``)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .batching import content_tokens, mark_prompt, pad_batch, pad_id, tokenize


def drop_blocks_above(model, layer: int):
    """A view of the model without the transformer blocks above ``layer`` (BERT-family layouts
    only, where block k's output *is* hidden state k: no final norm after the stack); others are
    returned whole. The view shares every tensor with ``model``, which stays whole, so encoders at
    several layers of one loaded model (``shared_transformer``) hold one copy of the weights."""
    enc = getattr(model, "encoder", None)
    blocks = getattr(enc, "layer", None)
    if model.config.model_type in ("bert", "roberta", "xlm-roberta") and blocks is not None and layer < len(blocks):
        import copy

        import torch

        _hook_once(model)

        view, enc_view = copy.copy(model), copy.copy(enc)
        view._modules, enc_view._modules = dict(model._modules), dict(enc._modules)  # own module tables
        enc_view.layer = torch.nn.ModuleList(list(blocks)[:layer])
        view._modules["encoder"] = enc_view
        return view
    return model


def _hook_once(model) -> None:
    """Install transformers' hidden-state capturing hooks on ``model`` now, before a view copies it.

    transformers >= 5 records ``hidden_states`` with forward hooks, installed on a model's modules
    at its first capturing forward and marked by an attribute of the model object. A view made
    before that copies the unmarked attribute and, run first, hooks the blocks it shares; the
    whole model would then hook them a second time and return every shared layer twice, so
    ``hidden_states[k]`` would silently be another layer (measured: layer 6 of e5-small off by
    6.3 after a layer-6 view had run). Hooked first, every view inherits the mark and the one set
    of hooks (tests/test_openvino_hidden.py)."""
    try:
        from transformers.utils.output_capturing import maybe_install_capturing_hooks
    except ImportError:  # transformers < 5 returns hidden states without hooks
        return
    maybe_install_capturing_hooks(model)


def hidden_layer(model, input_ids, attention_mask, layer: int):
    """Hidden states of ``layer`` (0 = embeddings)."""
    blocks = getattr(getattr(model, "encoder", None), "layer", None)
    if blocks is not None and len(blocks) == layer:  # the top block is `layer` (also after drop_blocks_above)
        return model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    return model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states[layer]


def token_states(model, tokenizer, sentences: Sequence[str], *, layer: int, max_length: int, device: str,
                 prompt: str = ""):
    """(hidden (B, L, d), attention mask (B, L), special-or-prompt mask (B, L)) for one batch."""
    ids, specials, n_prompt = tokenize(tokenizer, sentences, max_length=max_length, prompt=prompt)
    specials = [mark_prompt(sp, n_prompt) for sp in specials]
    input_ids, att, spec = pad_batch(ids, specials, pad_id(tokenizer), device)
    return hidden_layer(model, input_ids, att, layer), att, spec


def pool_states(h, att, pooling: str):
    """Sentence vectors from token states: ``cls`` (first token) or ``mean`` over every real token,
    specials and prompt included (as e5 and XTREME pool); differentiable."""
    if pooling == "cls":
        return h[:, 0]
    m = att.unsqueeze(-1).to(h.dtype)
    return (h * m).sum(1) / m.sum(1)


def masked_mean(h: np.ndarray, att: np.ndarray) -> np.ndarray:
    """Mean of every real token's state (specials and prompt included), in float32: the OpenVINO
    paths' mean pooling (``pool_states`` is torch's)."""
    m = att[:, :, None].astype(np.float32)
    return (h * m).sum(1) / m.sum(1)


def layer_vectors(encoder, sentences: Sequence[str], heads: Sequence[tuple[int, str]]) -> list[np.ndarray]:
    """Several sentence vectors from ONE forward pass of an ``hf`` encoder's backend: one (n, d)
    float32 array per head (layer, pooling), where pooling is ``mean`` (``HFEncoder.encode``'s: every
    real token) or ``content-mean`` (OneAligner's mean scoring: content tokens only -- no specials, no
    prompt -- averaged in float64). Each head's vectors equal what an encoder at that layer and
    pooling gives alone, on every backend (tests/test_study.py); the study uses this to fill
    several encoders' caches with one pass (``xsimpp.study.encoders.SharedForward``)."""
    backend = encoder.backend
    ids, specials, n_prompt = encoder.tokens(sentences)
    out = [np.empty((len(sentences), backend.hidden_size), dtype=np.float32) for _ in heads]
    layers = sorted({layer for layer, _ in heads})
    for idx, att, hs in backend.batches(ids, specials, layers, encoder.max_tokens, encoder.batch_size):
        for n, (layer, pool) in enumerate(heads):
            if pool == "mean":
                out[n][idx] = backend.pooled(hs[layer], att, "mean")
                continue
            h = backend.to_numpy(hs[layer])
            for row, i in enumerate(idx):
                keep = content_tokens(specials[i], n_prompt)
                out[n][i] = h[row, : len(ids[i])][keep].astype(np.float64).mean(0)
    return out
