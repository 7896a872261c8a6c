"""Build ``xsimpp/data/calibration/e5_calibration.tsv``: the fixed calibration set of the static-int8 e5-small.

Source: the example sentences spaCy ships for each of its languages (``spacy/lang/*/examples.py``,
MIT licence): natural sentences in 68 languages and 20-odd scripts (Latin, Cyrillic, Greek, Arabic,
Hebrew, Devanagari, Bengali, Gujarati, Tamil, Telugu, Kannada, Malayalam, Sinhala, Ethiopic,
Tibetan, Armenian, Han, Kana, Hangul, ...), inside a package every xsimpp install already has, and
part of no evaluation set. Any sentence that also occurs (whitespace- and case-folded) in a file of
the evaluation data (``$XSIMPP_DATA_DIR``: FLORES-200 dev and devtest, Tatoeba, the Tatoeba
Challenge, BUCC, NTREX, the OLDI seed) is left out, and so is every repeat, so the calibration set is
disjoint from every split on disk (tests/test_e5_openvino.py checks it again by hash).

Run once, from the repository root, with the data beside it:
    XSIMPP_DATA_DIR=../shared/data python benchmarks/build_e5_calibration.py
The output is committed; its sha256 is ``xsimpp.encoders.e5_openvino.CALIBRATION_SHA256``.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "xsimpp" / "data" / "calibration" / "e5_calibration.tsv"
HEADER = """\
# Calibration sentences of xsimpp's static-int8 multilingual-e5-small (one per line: language TAB sentence).
# Taken from spaCy {version}'s spacy/lang/*/examples.py by benchmarks/build_e5_calibration.py; sentences that
# occur in any evaluation file on disk, and repeats, left out. spaCy's licence, verbatim:
#
{licence}
"""


def folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def evaluation_lines(root: Path) -> set[str]:
    """Every line (and every tab-separated field) of every evaluation file under ``root``, folded."""
    seen: set[str] = set()
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix != ".md":
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    seen.update(folded(part) for part in line.rstrip("\n").split("\t"))
    return seen


def spacy_examples() -> list[tuple[str, str]]:
    import spacy.lang

    out = []
    for module in sorted(pkgutil.iter_modules(spacy.lang.__path__), key=lambda m: m.name):
        try:
            examples = importlib.import_module(f"spacy.lang.{module.name}.examples")
        except ImportError:
            continue
        out += [(module.name, " ".join(s.split())) for s in getattr(examples, "sentences", None) or []]
    return out


def spacy_licence() -> str:
    from importlib.metadata import distribution

    dist = distribution("spacy")
    path = next(f for f in dist.files or [] if f.name in ("LICENSE", "LICENSE.txt"))
    return Path(dist.locate_file(path)).read_text(encoding="utf-8").strip()


def main() -> int:
    import spacy

    data = os.environ.get("XSIMPP_DATA_DIR")
    if not data or not Path(data).is_dir():
        print("set XSIMPP_DATA_DIR to the evaluation data, so the calibration set can leave it out", file=sys.stderr)
        return 2
    taken = evaluation_lines(Path(data))
    kept, seen = [], set()
    for lang, sentence in spacy_examples():
        key = folded(sentence)
        if sentence and key not in taken and key not in seen:
            seen.add(key)
            kept.append(f"{lang}\t{sentence}\n")
    licence = "\n".join(("# " + line).rstrip() for line in spacy_licence().splitlines())
    OUT.write_text(HEADER.format(version=spacy.__version__, licence=licence) + "".join(kept), encoding="utf-8")
    print(f"{OUT}: {len(kept)} sentences in {len({k.split(chr(9))[0] for k in kept})} languages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
