"""A record's wrong decisions as a text table, a TSV/JSONL file and a self-contained HTML page
(`xsimpp explain`, `eval --dump`); most confident mistakes first."""

from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Sequence

from ..results import ResultRecord
from ..tasks.explain import Decision
from ..textio import atomic_write_text, write_rows
from ..version import __version__
from .html import PAGE_CSS, PAGE_JS

FIELDS = ("metric", "pair", "line", "error_type", "gold_score", "chosen_score", "gap", "source", "gold", "chosen")


def rows(record: ResultRecord, decisions: Sequence[Decision]) -> list[dict]:
    return [{"metric": record.metric, "pair": f"{record.src_lang}-{record.tgt_lang}", "line": d.line,
             "error_type": d.error_type, "gold_score": d.gold_score, "chosen_score": d.chosen_score, "gap": d.gap,
             "source": d.source, "gold": d.gold, "chosen": d.chosen} for d in decisions]


def write_dump(path, explained: Sequence[tuple[ResultRecord, Sequence[Decision]]]) -> int:
    """Every wrong decision of every record, one row each (TSV, or JSONL for .jsonl/.json); returns
    how many."""
    all_rows = [row for record, decisions in explained for row in rows(record, decisions)]
    write_rows(path, all_rows, FIELDS)
    return len(all_rows)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render(record: ResultRecord, decisions: Sequence[Decision], top: int = 10) -> str:
    from tabulate import tabulate

    s = record.signature
    head = (f"{record.metric} {s.dataset}/{s.split} {record.src_lang}-{record.tgt_lang}, {s.encoder}: "
            f"{len(decisions)} wrong of {record.n} ({record.metric} {record.value:.2f}), most confident first")
    body = [[d.line, d.error_type, f"{d.chosen_score:.4f}", f"{d.gold_score:.4f}", _cut(d.source, 40),
             _cut(d.gold, 40), _cut(d.chosen, 40)] for d in decisions[:top]]
    table = tabulate(body, headers=["line", "type", "chosen", "gold", "source", "gold target", "chosen target"],
                     tablefmt="psql", disable_numparse=True)
    more = f"\n... {len(decisions) - top} more (--top N, or --tsv FILE for all)" if len(decisions) > top else ""
    return f"{head}\n{table}{more}"


def page(explained: Sequence[tuple[ResultRecord, Sequence[Decision]]], title: str = "xsimpp: wrong decisions") -> str:
    """One sortable table per record: every wrong decision with its sentences and scores."""
    parts = []
    for n, (record, decisions) in enumerate(explained):
        s = record.signature
        parts.append(f"<h2>{html.escape(record.metric)} — {html.escape(s.dataset)}/{html.escape(s.split)} "
                     f"{html.escape(record.src_lang)}-{html.escape(record.tgt_lang)}, {html.escape(s.encoder)}: "
                     f"{len(decisions)} wrong of {record.n}</h2>"
                     f"<p class=meta><code>{html.escape(s.format())}</code></p>")
        head = "".join(f'<th data-key="{k}"{" class=t" if k in ("error_type", "source", "gold", "chosen") else ""}>'
                       f"{k.replace('_', ' ')}</th>" for k in ("line", "error_type", "chosen_score", "gold_score", "gap",
                                                               "source", "gold", "chosen"))
        body = []
        for d in decisions:
            nums = "".join(f'<td data-v="{v!r}">{v:.4f}</td>' for v in (d.chosen_score, d.gold_score, d.gap))
            texts = "".join(f'<td class="t" style="white-space:normal">{html.escape(t)}</td>'
                            for t in (d.source, d.gold, d.chosen))
            body.append(f'<tr><td data-v="{d.line}">{d.line}</td><td class="t">{html.escape(d.error_type)}</td>'
                        f"{nums}{texts}</tr>")
        parts.append(f'<table class="sortable" id="t{n}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}'
                     "</tbody></table>")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>{html.escape(title)}</title><style>{PAGE_CSS}</style></head>\n<body><h1>{html.escape(title)}</h1>"
            f"<p class=meta>Written {stamp} by xsimpp {html.escape(__version__)}. Scores are the margin (or cosine, or "
            "P-xSIM's blend) of the chosen and of the gold target; gap = chosen - gold, the most confident mistakes "
            "first (a gold outside the k candidates can outscore the chosen one: LASER rescores only those).</p>"
            + "\n".join(parts) + f"<script>{PAGE_JS}</script></body></html>\n")


def write_page(path, explained) -> None:
    atomic_write_text(path, page(explained))
