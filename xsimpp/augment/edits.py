"""Character-span edits on the original sentence.

Variants are built by replacing spans of the source string rather than by re-joining tokens, so
everything outside the edited spans (spacing, quotes, punctuation) stays byte-identical.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Sequence

from .lexicon import indefinite_article, match_case


class Edit(NamedTuple):
    start: int
    end: int
    text: str


_ARTICLE_BEFORE = re.compile(r"(?:^|(?<=\W))(a|an|A|An|AN)(\s+)$")


def apply_edits(source: str, edits: Sequence[Edit], fix_articles: bool = True) -> str:
    """Apply non-overlapping edits; fix English 'a'/'an' in front of a replaced word ("a tiny" -> "an
    enormous") unless ``fix_articles`` is off (other languages: French "a" is a verb)."""
    out = source
    last_start = len(source) + 1
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        if e.end > last_start:
            raise ValueError(f"overlapping edits in {source!r}: {edits!r}")
        last_start = e.start
        head, tail = out[: e.start], out[e.end :]
        m = _ARTICLE_BEFORE.search(head) if fix_articles and e.text[:1].isalnum() else None
        if m:
            wanted = match_case(indefinite_article(e.text), m.group(1))
            head = head[: m.start(1)] + wanted + m.group(2)
        out = head + e.text + tail
    return out
