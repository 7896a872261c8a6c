"""Hidden states of any BERT-family model through OpenVINO float32: ``path=openvino-float32`` of the
``hf`` and ``onealigner`` adapters, and so of the study's shared forward pass and of `xsimpp train
distill`'s teacher.

The loaded torch model, truncated above the deepest layer asked for (``hf.drop_blocks_above``), is
converted in memory (``openvino.convert_model``: about 3 s for e5-small's 118 M parameters, no IR
on disk, so a study of eight checkpoints does not write eight 470 MB folders) into a graph whose
outputs are the token states of the requested layers, and compiled with the settings of the
e5-small path (float32 throughout, one stream). Float32 conversion copies the weights as they are
and does no arithmetic on them, so the graph is a function of the weights and the OpenVINO
version alone; what else decides the vectors (the kernels' ISA) is in ``numerics``.

Why: on 2 AMD EPYC cores (idle) OpenVINO float32 ran a distilled e5-small checkpoint 2.2x faster
than torch float32 on 400 FLORES lines (vectors at cosine >= 0.9999998 of torch's), the same
ratio as the e5-small path, which passed every fidelity gate (benchmarks/bench_e5_paths.py).

Invariance (tests/test_openvino_hidden.py): a layer's states are the same bits whatever other
layers the graph also outputs (measured: layers 4 and 8 of a [4, 8, 12] graph equal those of
graphs truncated at 8 and at 6), and whatever batch, order or token budget a sentence ran in, since
each sentence runs padded to its own bucket width (``hf.padded_batches``). So one pass serves every
layer a study needs and each member's cache holds what its own ``encode`` gives.

The default (``default_path``): the bundled multilingual-e5-small on an x86-64 CPU runs this path,
as ``--encoder e5-small`` does (the gates were measured on exactly those weights); every other
model runs torch float32 unless asked (``path=openvino-float32``), because no gate has been run
on it.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Sequence

import numpy as np

from ..errors import BadInputError

PATHS = ("torch-float32", "openvino-float32")
# model types whose layer k is block k's output and whose blocks drop_blocks_above can cut
FAMILIES = ("bert", "roberta", "xlm-roberta")
# OpenVINO CPU settings of every OpenVINO path. INFERENCE_PRECISION_HINT f32: OpenVINO would pick bf16
# on CPUs that have it, a silent change of what is measured. CPU_RUNTIME_CACHE_CAPACITY: the compiled
# kernels kept per input shape; OpenVINO's default (5000) grew the process by ~40 MB a FLORES language
# (every bucket width x batch height is a shape: 4.3 GB peak over all 204); 100 kept it flat at the
# same speed, 0 cost 8 % (measured).
COMPILE_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1", "PERFORMANCE_HINT": "LATENCY",
                  "CPU_RUNTIME_CACHE_CAPACITY": "100"}


def default_path(bundled: bool, device: str, autocast: str | None) -> str:
    """The bundled e5-small's weights run its default path (``e5_small.default_path``: OpenVINO
    float32 on an x86-64 CPU); any other model the torch reference."""
    if not bundled:
        return "torch-float32"
    from .e5_small import default_path as e5_default

    return e5_default(device, autocast)


def check_path(path: str, *, adapter: str, model_type: str, device: str, autocast: str | None) -> str:
    """``path`` if this model can run it here; one sentence otherwise."""
    if path not in PATHS:
        raise BadInputError(f"{adapter}: path must be one of {', '.join(PATHS)}, not {path!r}")
    if path == "openvino-float32":
        if device != "cpu" or autocast:
            raise BadInputError(f"{adapter}: path {path} runs on the CPU in float32; --device {device}"
                                f"{' and --autocast' if autocast else ''} need path=torch-float32")
        if model_type not in FAMILIES:
            raise BadInputError(f"{adapter}: path {path} runs BERT-family models ({', '.join(FAMILIES)}); this one is "
                                f"{model_type or 'of an unknown type'}: use path=torch-float32")
        from .e5_openvino import require_openvino

        require_openvino(f"{adapter} path {path}")
    return path


def numerics() -> str:
    """The OpenVINO build and the kernels' ISA (the float32 results' last bits depend on both)."""
    from .e5_openvino import numerics as ov_numerics

    return ov_numerics("float32")


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
    """``model``'s token states at ``layers`` as one compiled OpenVINO float32 graph."""

    def __init__(self, model, layers: Sequence[int]):
        import openvino
        import torch

        from ..errors import MissingResourceError
        from .hf import drop_blocks_above

        self.layers = tuple(sorted(set(layers)))
        view = drop_blocks_above(model, max(self.layers))

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
                graph = openvino.convert_model(Hidden(view, self.layers).eval(), example_input=example, input=shapes)
            self.compiled = openvino.Core().compile_model(graph, "CPU", dict(COMPILE_CONFIG))
        except Exception as e:  # noqa: BLE001 - any converter or plugin failure: one sentence
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:240]
            raise MissingResourceError(f"OpenVINO could not convert this model ({first}); use path=torch-float32") from None
        self.request = self.compiled.create_infer_request()

    def batches(self, ids: Sequence[Sequence[int]], pad: int, max_tokens: int, batch_size: int
                ) -> Iterator[tuple[list[int], np.ndarray, dict[int, np.ndarray]]]:
        """(indices, attention mask, {layer: (rows, width, d) float32 states}) per bucket batch."""
        from .hf import padded_batches

        for idx, x, att in padded_batches(ids, pad, max_tokens, batch_size):
            out = self.request.infer({"input_ids": x, "attention_mask": att})
            # copies: the request reuses its output buffers on the next call
            yield idx, att, {k: np.array(out[n]) for n, k in enumerate(self.layers)}
