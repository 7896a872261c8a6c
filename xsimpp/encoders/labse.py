"""LaBSE (Feng et al. 2022) as the xsim++ paper evaluates it: the sentence-transformers port
``sentence-transformers/LaBSE`` = BERT -> [CLS] pooling -> Dense(768, 768, tanh) -> L2 normalise.

Same code path as ``sbert``; this preset only fixes the name and checks that the loaded model has
LaBSE's module stack, so ``--encoder labse`` means the paper's setting and nothing else (a folder
with mean pooling passed by mistake is refused instead of silently scoring a different model).
"""

from __future__ import annotations

from ..errors import BadInputError
from .sbert import SBert


class LaBSE(SBert):
    name = "labse"
    description = "LaBSE (sentence-transformers/LaBSE: CLS pooling + dense tanh + L2 norm), the xsim++ paper's setting"
    default_model = "sentence-transformers/LaBSE"

    def check_modules(self) -> None:
        cfg = self.config()
        expected = ["Transformer", "Pooling", "Dense", "Normalize"]
        if self.modules != expected or cfg["pooling"] != "cls":
            raise BadInputError(f"labse: {self.folder} is not LaBSE-shaped (modules {self.modules}, pooling "
                                f"{cfg['pooling']}; expected {expected} with cls pooling); use --encoder sbert for it")

    @property
    def id(self) -> str:
        return "labse" if self.model_name == self.default_model else super().id
