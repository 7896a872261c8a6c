"""The in-memory OpenVINO float32 backend (``path=openvino-float32`` of the ``hf`` and ``onealigner``
adapters, and so of the study's shared forward pass and of `xsimpp train distill`'s teacher): hidden
states of any BERT-family model.

The loaded torch model, truncated above the deepest layer asked for (``layers.drop_blocks_above``), is
converted in memory (``openvino.convert_model``: about 3 s for e5-small's 118 M parameters, no IR
on disk, so a study of eight checkpoints does not write eight 470 MB folders) into a graph whose
outputs are the token states of the requested layers, and compiled with the settings of the
e5-small path (float32 throughout, one stream). Float32 conversion copies the weights as they are
and does no arithmetic on them, so the graph is a function of the weights and the OpenVINO
version alone; what else decides the vectors (the kernels' ISA) is in the config's ``numerics``
(``openvino_cpu.kernel_numerics``).

Why: on 2 AMD EPYC cores OpenVINO float32 ran a distilled e5-small checkpoint 2.20x faster than
torch float32 (``benchmarks/bench_e5_paths.py speed --model``), about the e5-small path's ratio,
and a saturated-regime study of nine such models gave the same value in every cell as on torch
(``benchmarks/regime.py --path``; docs/performance.md).

Invariance (tests/test_openvino_hidden.py): a layer's states are the same bits whatever other
layers the graph also outputs (measured: layers 4 and 8 of a [4, 8, 12] graph equal those of
graphs truncated at 8 and at 6), and whatever batch, order or token budget a sentence ran in, since
each sentence runs padded to its own bucket width (``batching.padded_batches``). So one pass serves every
layer a study needs and each member's cache holds what its own ``encode`` gives.

The default (``backend.default_path``): the bundled multilingual-e5-small on an x86-64 CPU runs this
path, as ``--encoder e5-small`` does (the gates were measured on exactly those weights); every other
model runs torch float32 unless asked (``path=openvino-float32``), because no gate has been run
on it.
"""

from __future__ import annotations

import contextlib
from typing import Sequence

import numpy as np

from ...errors import BadInputError, MissingResourceError
from ..openvino_cpu import COMPILE_CONFIG, kernel_numerics, require_openvino
from .backend import Backend, Identity
from .batching import pad_id, padded_batches
from .layers import drop_blocks_above, masked_mean
from .models import shared_transformer

# model types whose layer k is block k's output and whose blocks drop_blocks_above can cut
FAMILIES = ("bert", "roberta", "xlm-roberta")


@contextlib.contextmanager
def _quiet_tracing():
    """Tracing a transformers model warns about Python control flow and unset config fields that
    do not apply to a fixed inference graph; the user would see them on every conversion."""
    import warnings

    import transformers

    level = transformers.utils.logging.get_verbosity()
    transformers.utils.logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        transformers.utils.logging.set_verbosity(level)


class HiddenStates:
    """A torch model's token states at ``layers`` as one compiled OpenVINO float32 graph; ``model``
    is cut above the deepest of them (``layers.drop_blocks_above``) by the caller."""

    def __init__(self, model, layers: Sequence[int]):
        import openvino
        import torch

        self.layers = tuple(sorted(set(layers)))

        class Hidden(torch.nn.Module):
            def __init__(self, bert, wanted):
                super().__init__()
                self.bert, self.wanted = bert, wanted

            def forward(self, input_ids, attention_mask):
                hs = self.bert(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
                return tuple(hs.hidden_states[k] for k in self.wanted)

        example = {"input_ids": torch.ones(2, 16, dtype=torch.long),
                   "attention_mask": torch.ones(2, 16, dtype=torch.long)}
        shapes = [("input_ids", [-1, -1], openvino.Type.i64), ("attention_mask", [-1, -1], openvino.Type.i64)]
        try:
            with torch.inference_mode(False), torch.no_grad(), _quiet_tracing():
                graph = openvino.convert_model(Hidden(model, self.layers).eval(), example_input=example, input=shapes)
            self.compiled = openvino.Core().compile_model(graph, "CPU", dict(COMPILE_CONFIG))
        except Exception as e:  # noqa: BLE001 - any converter or plugin failure: one sentence
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:240]
            raise MissingResourceError(f"OpenVINO could not convert this model ({first}); use path=torch-float32") from None
        self.request = self.compiled.create_infer_request()

    def infer(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> dict[int, np.ndarray]:
        """{layer: (rows, width, d) float32 states} of one padded batch (``batching.padded_batches``)."""
        out = self.request.infer({"input_ids": input_ids, "attention_mask": attention_mask})
        # copies: the request reuses its output buffers on the next call
        return {k: np.array(out[n]) for n, k in enumerate(self.layers)}


class OpenVINOGraph(Backend):
    """The shared torch weights converted in memory, one compiled graph per set of layers asked for."""

    identity_fields = ("path", "numerics")

    def __init__(self, path, spec):
        super().__init__(path, spec)
        self._graphs: dict[tuple, HiddenStates] = {}
        self._tokenizer, self._hidden_size = None, 0
        self._held = None  # the weights, from their first use until the first graph is compiled

    @classmethod
    def refuse(cls, path, *, adapter, model_type, device, autocast):
        if device != "cpu" or autocast:
            raise BadInputError(f"{adapter}: path {path} runs on the CPU in float32; --device {device}"
                                f"{' and --autocast' if autocast else ''} need path=torch-float32")
        if model_type not in FAMILIES:
            raise BadInputError(f"{adapter}: path {path} runs BERT-family models ({', '.join(FAMILIES)}); this one is "
                                f"{model_type or 'of an unknown type'}: use path=torch-float32")
        require_openvino(f"{adapter} path {path}")

    def identity(self) -> Identity:
        return Identity(self.path, {"path": self.path, "numerics": kernel_numerics()})

    def _load(self):
        """The torch weights, needed only to build a graph: the backend keeps their tokenizer and
        width but not the weights themselves, so they are freed once the graphs are compiled (a
        study of eight checkpoints does not hold eight copies). Held weakly, they must not be asked
        for per call: 0.14.0 reloaded the model (random init, the weights, the tokenizer's JSON) three
        times per 1 024-sentence chunk, which halved the study's encoding rate."""
        weights = self._held or shared_transformer(self.spec.folder, adapter=self.spec.adapter)
        self._tokenizer, self._hidden_size = weights.tok, int(weights.model.config.hidden_size)
        self._held = None if self._graphs else weights
        return weights

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            self._load()
        return self._tokenizer

    @property
    def hidden_size(self) -> int:
        if self._tokenizer is None:
            self._load()
        return self._hidden_size

    def graph(self, layers) -> HiddenStates:
        """The compiled graph that outputs ``layers`` (each at most the encoder's layer), made once."""
        key = tuple(sorted(set(layers)))
        if key not in self._graphs:
            self._graphs[key] = HiddenStates(drop_blocks_above(self._load().model, max(key)), key)
            self._held = None
        return self._graphs[key]

    def batches(self, ids, specials, layers, max_tokens, batch_size):
        hidden = self.graph(layers)
        for idx, x, att in padded_batches(ids, pad_id(self.tokenizer), max_tokens, batch_size):
            yield idx, att, hidden.infer(x, att)

    def pooled(self, h, att, pooling: str) -> np.ndarray:
        return h[:, 0] if pooling == "cls" else masked_mean(h, att)

    def to_numpy(self, h) -> np.ndarray:
        return h
