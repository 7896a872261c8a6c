"""The hand audits of the non-English negatives (benchmarks/audits): every row carries the whole
original and variant, so anyone can judge it again, and the docs' table is what the files say."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AUDITS = ROOT / "benchmarks" / "audits"
COLUMNS = ["id", "category", "original", "variant", "change", "true_negative", "fluent", "note"]
NAMES = {"fra_Latn": "French", "deu_Latn": "German", "spa_Latn": "Spanish"}


def rows(lang: str) -> list[dict]:
    with open(AUDITS / f"xlang2_devtest_{lang}.tsv", encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        assert reader.fieldnames == COLUMNS
        return list(reader)


@pytest.mark.parametrize("lang", sorted(NAMES))
def test_every_row_holds_the_whole_pair_and_a_judgment(lang):
    for r in rows(lang):
        assert r["id"].split("#")[0] == r["category"] in ("causality", "entity", "number"), r["id"]
        assert r["original"] and r["variant"] and r["original"] != r["variant"], r["id"]
        assert r["true_negative"] in ("yes", "no") and r["fluent"] in ("yes", "no"), r["id"]
        assert r["note"] or "no" not in (r["true_negative"], r["fluent"]), f"{r['id']}: a 'no' says why"
        # the reading aid names a span the pair really changes
        space = re.compile(r"\s+")  # the aid may write a narrow no-break space as a space
        new = [space.sub(" ", m.group(1)).strip() for m in re.finditer(r"→ ([^\]]*)\]", r["change"])]
        assert new and all(n in space.sub(" ", r["variant"]) for n in new), r["id"]


@pytest.mark.parametrize("lang", sorted(NAMES))
def test_every_original_is_a_flores_devtest_line(lang, real_data):
    lines = set((real_data / "flores200" / "devtest" / f"{lang}.devtest").read_text(encoding="utf-8").splitlines())
    assert all(r["original"] in lines for r in rows(lang))


def test_the_docs_table_is_what_the_files_say():
    doc = (ROOT / "docs" / "guides" / "negatives.md").read_text(encoding="utf-8")
    for lang, name in NAMES.items():
        rs = rows(lang)
        n, true, fluent = len(rs), sum(r["true_negative"] == "yes" for r in rs), sum(r["fluent"] == "yes" for r in rs)
        row = next(ln for ln in doc.splitlines() if ln.startswith(f"| {name} (`{lang}`"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1:4] == [str(n), f"{true} ({100 * true / n:.0f} %)" if true == n else f"{true} ({100 * true / n:.1f} %)",
                              f"{fluent} ({100 * fluent / n:.1f} %)"], row
    assert "Annotators: 1" in (AUDITS / "README.md").read_text(encoding="utf-8")
