"""Acceptance figures of `xsimpp augment` (issue 14): Table 2 of both styles on FLORES-200 dev and
devtest beside the paper's, build times, and the strict style's automatic audits on dev:

- type kept: share of entity variants whose new name spaCy tags (in the variant) with the group of
  the name it replaced (PERSON, GPE/LOC, ORG, NORP);
- sentence-initial common words replaced: entity variants whose replaced span is one capitalised
  sentence-initial word that NLTK's word list has only in lower case and spaCy does not tag as a
  proper noun there ("Fill", "Local"; not "China", which the list also has as "china");
- "five year ago": number variants where "one"/"1" became another number before a singular noun,
  or another number became "one"/"1" before a plural noun.

    XSIMPP_DATA_DIR=../shared/data NLTK_DATA=../shared/nltk_data python benchmarks/audit_augment.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xsimpp.augment import build_augmented, format_stats, load_entity_pool, resources  # noqa: E402
from xsimpp.augment.entity import STRICT_GROUP_OF  # noqa: E402


def flores(split: str) -> list[str]:
    root = Path(os.environ.get("XSIMPP_DATA_DIR", "../shared/data"))
    return (root / "flores200" / split / f"eng_Latn.{split}").read_text(encoding="utf-8").splitlines()


def changed_span(orig: str, var: str) -> tuple[int, int, int]:
    """(start, end in orig, end in var) of the first changed word run (word-aligned)."""
    p = 0
    while p < min(len(orig), len(var)) and orig[p] == var[p]:
        p += 1
    while p > 0 and orig[p - 1].isalnum():
        p -= 1
    q = 0
    while q < min(len(orig), len(var)) - p and orig[-1 - q] == var[-1 - q]:
        q += 1
    while q > 0 and orig[len(orig) - q].isalnum():
        q -= 1
    return p, len(orig) - q, len(var) - q


def audit_entities(nlp, aug) -> dict:
    from nltk.corpus import words

    wordset = set(words.words())
    pairs = aug.by_category("entity")
    kept = total = initial_common = 0
    odocs = {s: d for s, d in zip(dict.fromkeys(o for o, _ in pairs), nlp.pipe(dict.fromkeys(o for o, _ in pairs)))}
    for (orig, var), vdoc in zip(pairs, nlp.pipe([v for _, v in pairs], batch_size=128)):
        p, oe, _ve = changed_span(orig, var)
        odoc = odocs[orig]
        old = next((e for e in odoc.ents if e.start_char <= p < e.end_char), None)
        new = next((e for e in vdoc.ents if e.start_char <= p < e.end_char), None)
        total += 1
        if old is not None and new is not None and STRICT_GROUP_OF.get(old.label_) == STRICT_GROUP_OF.get(new.label_):
            kept += 1
        w = orig[p:oe]
        first = odoc[0]
        if p == 0 and " " not in w and w[:1].isupper() and w.lower() in wordset and w not in wordset \
                and first.text == w and first.pos_ != "PROPN":
            initial_common += 1  # "Fill", "Local": a word the dictionary has in lower case only, not a proper noun here
    return {"entity variants": total, "type kept": kept, "type kept %": 100 * kept / max(total, 1),
            "sentence-initial common words replaced": initial_common}


def audit_numbers(nlp, aug) -> int:
    pairs = aug.by_category("number")
    bad = 0
    odocs = {s: d for s, d in zip(dict.fromkeys(o for o, _ in pairs), nlp.pipe(dict.fromkeys(o for o, _ in pairs)))}
    for orig, var in pairs:
        p, oe, ve = changed_span(orig, var)
        old, new = orig[p:oe].lower(), var[p:ve].lower()
        doc = odocs[orig]
        tok = next((t for t in doc if t.idx == p), None)
        if tok is None or tok.i + 1 >= len(doc) or tok.text.lower() != old:
            continue
        nxt = doc[tok.i + 1]
        if " " in new or nxt.idx < oe:
            continue
        if old in ("one", "1") and new not in ("one", "1") and nxt.tag_ == "NN" and var[ve:].lstrip().startswith(nxt.text + " ") \
                or old not in ("one", "1") and new in ("one", "1") and nxt.tag_ == "NNS":
            bad += 1
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", default="dev,devtest")
    ap.add_argument("--styles", default="paper,strict")
    args = ap.parse_args()
    nlp = resources.load_spacy()[0]
    for split in args.splits.split(","):
        sents = flores(split)
        for style in args.styles.split(","):
            t0 = time.perf_counter()
            pool, info = load_entity_pool((), [f"flores200/{split}"])
            aug = build_augmented(sents, style=style, entity_pool=pool, pool_info=info)
            dt = time.perf_counter() - t0
            print(f"\n== FLORES-200 {split}, style {style}: {dt:.1f} s ==")
            print(format_stats(aug, split))
            if style == "strict" and split == "dev":
                print(audit_entities(nlp, aug))
                print({"'five year ago' kind (number)": audit_numbers(nlp, aug)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
