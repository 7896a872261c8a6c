"""A weight-free baseline: hashed character n-grams (the "how far does surface overlap go" floor).

Character 1-4-grams inside word boundaries, hashed with signed MurmurHash3 into a fixed number of
dimensions (scikit-learn's HashingVectorizer), sublinear tf, L2-normalised. Deterministic across
processes and machines (no salted Python hash).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import MissingResourceError
from ..options import knob
from .base import Requirement, VectorEncoder, batched


class CharGram(VectorEncoder):
    name = "chargram"
    language_agnostic = True  # n-grams of the text alone
    description = "weight-free baseline: hashed character 1-4-grams (scikit-learn HashingVectorizer), 2048-d"
    options = {"n_features": knob(None, "hashed feature dimensions", type=int, min=1, max=2**24),
               "ngram_min": knob(None, "shortest character n-gram", type=int, min=1, max=32),
               "ngram_max": knob(None, "longest character n-gram", type=int, min=1, max=32)}

    @classmethod
    def check_options(cls, options):
        from ..errors import BadInputError

        options = super().check_options(options)
        lo, hi = options.get("ngram_min", 1), options.get("ngram_max", 4)
        if lo > hi:
            raise BadInputError(f"encoder chargram: ngram_min ({lo}) must not be larger than ngram_max ({hi})")
        return options

    def __init__(self, n_features: int = 2048, ngram_min: int = 1, ngram_max: int = 4, lowercase: bool = True,
                 batch_size: int = 2048):
        try:
            import sklearn
            from sklearn.feature_extraction.text import HashingVectorizer
        except ImportError:
            raise MissingResourceError("chargram needs scikit-learn: pip install scikit-learn") from None
        self._sklearn = sklearn.__version__
        self.n_features, self.ngram_range, self.lowercase = n_features, (ngram_min, ngram_max), lowercase
        self.batch_size = batch_size
        self._vec = HashingVectorizer(analyzer="char_wb", ngram_range=self.ngram_range, n_features=n_features,
                                      alternate_sign=True, norm=None, lowercase=lowercase, dtype=np.float32)

    @property
    def revision(self) -> str:
        return "hashing-v1"  # no weights; the algorithm version is the revision

    def config(self) -> dict:
        return {"n_features": self.n_features, "ngram_range": list(self.ngram_range), "lowercase": self.lowercase,
                "analyzer": "char_wb", "tf": "sublinear"}

    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        out = np.zeros((len(sentences), self.n_features), dtype=np.float32)
        for start, batch in batched(list(sentences), self.batch_size):
            m = self._vec.transform(batch)
            m.data = np.sign(m.data) * np.log1p(np.abs(m.data))  # sublinear tf keeps long words from dominating
            out[start : start + len(batch)] = m.toarray()
            if progress:
                progress(len(batch))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    @classmethod
    def requirements(cls) -> list[Requirement]:
        import importlib.util

        return [Requirement("scikit-learn", importlib.util.find_spec("sklearn") is not None, "pip install scikit-learn")]
