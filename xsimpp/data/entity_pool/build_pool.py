"""Build xsimpp/data/entity_pool/entities.tsv: the default entity candidate pool of `xsimpp augment`.

Usage (from the repository root; a few minutes on 2 cores):

    XSIMPP_DATA_DIR=../shared/data NLTK_DATA=../shared/nltk_data python xsimpp/data/entity_pool/build_pool.py

Reads the English text of the shared data folder (see README.md here for the corpora and their
licences), runs the paper's recogniser (NLTK's binary chunker) and spaCy's typed NER over it, and
writes every entity with its count and the corpora it was seen in (xsimpp.augment.pool). The output
is deterministic: the same input files give the same bytes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from xsimpp.augment import pool as P  # noqa: E402
from xsimpp.augment import resources  # noqa: E402

# source tag -> files (globs) under the data root; the tag is what `without_sources` excludes.
SOURCES = {
    "flores200/dev": ["flores200/dev/eng_Latn.dev"],
    "flores200/devtest": ["flores200/devtest/eng_Latn.devtest"],
    "ntrex128": ["ntrex128/newstest2019-src.eng.txt"],
    "oldi-seed": ["oldi-seed/eng_Latn"],
    "tatoeba": ["tatoeba/v1/tatoeba.*-eng.eng", "tatoeba-challenge/testsets/*-eng/*.eng",
                "tatoeba-challenge/testsets/eng-*/*.eng"],
}


def read_source(root: Path, patterns: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for pat in patterns:
        for path in sorted(root.glob(pat)):
            for line in path.read_text(encoding="utf-8").splitlines():
                line = " ".join(line.split())
                if line:
                    seen.setdefault(line, None)
    return list(seen)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("XSIMPP_DATA_DIR", str(HERE.parent.parent.parent / "shared" / "data")))
    ap.add_argument("--out", default=str(HERE / "entities.tsv"))
    ap.add_argument("--limit", type=int, default=0, help="sentences per source (0: all; for a quick try)")
    args = ap.parse_args()
    root = Path(args.data_dir)
    resources.require_nltk()
    nlp, model = resources.load_spacy()
    col = P.Collector()
    counts = {}
    for tag, patterns in SOURCES.items():
        sents = read_source(root, patterns)
        if args.limit:
            sents = sents[: args.limit]
        if not sents:
            raise SystemExit(f"no sentences for {tag} under {root}")
        t0 = time.time()
        P.collect(sents, tag, P.RECOGNISERS, col, nlp=nlp)
        counts[tag] = len(sents)
        print(f"{tag}: {len(sents)} sentences, {time.time() - t0:.0f} s", file=sys.stderr)
    entries = col.finalise()
    comments = ["built by xsimpp/data/entity_pool/build_pool.py (see README.md there for sources and licences)",
                f"recognisers: NLTK maxent binary chunker; spaCy {model}",
                "sentences: " + ", ".join(f"{t} {n}" for t, n in counts.items())]
    Path(args.out).write_text(P.pool_text(entries, comments), encoding="utf-8")
    by = {}
    for e in entries:
        by[(e.recogniser, e.label)] = by.get((e.recogniser, e.label), 0) + 1
    print(f"wrote {args.out}: {len(entries)} entries", by, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
