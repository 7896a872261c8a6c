"""LASER's text preprocessing for its sentencepiece models, in Python.

Same steps, in the same order, as LASER's SPM pipeline (remove-non-printing-char -> Moses
normalize-punctuation -l LANG -> lowercase -> spm_encode):

1. strip the line (LASER reads lines with ``strip()``);
2. every Unicode "Other" character (category C*: controls, format, private use, unassigned) ->
   a space, as Moses' remove-non-printing-char.perl (``\\p{C}``);
3. Moses punctuation normalisation via sacremoses in Perl-parity mode, with the two quote rules
   of the Moses release LASER pins (‘ and ‚ become a double quote, not a single one);
4. lowercase (every LASER model was trained on lowercased text);
5. sentencepiece pieces.
No XML de-escaping (LASER's default for SPM models).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from ..errors import MissingResourceError


def remove_non_printing(text: str) -> str:
    return "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)


class LaserTextPipeline:
    def __init__(self, spm_model: str | Path, lang: str = "en"):
        try:
            import sentencepiece as spm
            from sacremoses import MosesPunctNormalizer
        except ImportError as e:
            raise MissingResourceError(f"laser needs {e.name}: pip install sentencepiece sacremoses") from None
        self.lang = lang
        self._norm = MosesPunctNormalizer(lang, perl_parity=True)
        # Moses release 4.0 (LASER's pinned version) maps ‘ and ‚ to '"'; sacremoses maps them to "'".
        self._norm.substitutions = [(pat, '"') if pat in ("‘", "‚") else (pat, rep)
                                    for pat, rep in self._norm.substitutions]
        self._spm = spm.SentencePieceProcessor(model_file=str(spm_model))

    def normalize(self, text: str) -> str:
        return self._norm.normalize(remove_non_printing(text.strip())).lower()

    def __call__(self, text: str) -> list[str]:
        return self._spm.encode(self.normalize(text), out_type=str)
