"""A static, self-contained HTML leaderboard: opens from disk, no server, no CDN.

Tables are rendered here in Python, so the page reads fine with JavaScript off; a small inline
script only adds sorting (click a header; ``#sort=TABLE:COLUMN:asc|desc`` in the URL sorts on
load, which also lets a headless browser test check that the script ran).
"""

from __future__ import annotations

import hashlib
import html
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..version import __version__
from ..errors import BadInputError
from ..tasks import registry
from ..textio import atomic_write_text
from .select import settings_text

ERROR_TYPE_ORDER = ("causality", "entity", "number", "misaligned")

# The page style and the sorting script every HTML report (results, study, explain) shares. A wide
# table (8 language pairs and more) scrolls inside the page, its headers wrap at the pair's hyphen,
# and the first column (the encoder) and the last (the average) stay in view while it scrolls.
PAGE_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2em auto;max-width:1200px;
 padding:0 1em;color:#1b1f24}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin:1.8em 0 .4em}
.meta{color:#57606a;font-size:.9em}
table{border-collapse:collapse;margin:.4em 0 1em;font-variant-numeric:tabular-nums;display:block;max-width:100%;
 overflow-x:auto}
th,td{border:1px solid #d0d7de;padding:.3em .6em;text-align:right;white-space:nowrap;background:#fff}
th{background:#f6f8fa;cursor:pointer;user-select:none;white-space:normal;min-width:4.5em}
td.t{white-space:normal;overflow-wrap:anywhere;min-width:8em;max-width:18em}
th:first-child,td:first-child{position:sticky;left:0;z-index:1}
th:last-child,td:last-child{position:sticky;right:0;z-index:1}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.t,th.t{text-align:left}tr:nth-child(even) td{background:#fbfcfd}
td.best{font-weight:700;background:#e6f4ea!important}
.bar{display:inline-block;height:.8em;vertical-align:middle}
.b-causality{background:#d1495b}.b-entity{background:#edae49}.b-number{background:#00798c}
.b-misaligned{background:#8d99ae}
code{font-size:.85em;color:#57606a}
"""

# Sorting: numbers by data-v (empty cells last in either direction), text otherwise.
PAGE_JS = """
(function(){
 function key(td){var v=td.getAttribute('data-v');
  if(v===null){return {n:false,s:td.textContent.trim().toLowerCase()};}
  if(v===''){return {n:true,x:null};}return {n:true,x:parseFloat(v)};}
 function sortTable(table,col,dir){
  var ths=table.tHead.rows[0].cells,idx=-1;
  for(var i=0;i<ths.length;i++){if(ths[i].getAttribute('data-key')===col){idx=i;}
   ths[i].removeAttribute('aria-sort');}
  if(idx<0){return false;}
  ths[idx].setAttribute('aria-sort',dir==='asc'?'ascending':'descending');
  var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows),s=dir==='asc'?1:-1;
  rows.forEach(function(r,i){r._i=i;});
  rows.sort(function(a,b){var ka=key(a.cells[idx]),kb=key(b.cells[idx]);
   if(ka.n){if(ka.x===null&&kb.x===null){return a._i-b._i;}if(ka.x===null){return 1;}
    if(kb.x===null){return -1;}return (ka.x-kb.x)*s||a._i-b._i;}
   return (ka.s<kb.s?-1:ka.s>kb.s?1:0)*s||a._i-b._i;});
  rows.forEach(function(r){body.appendChild(r);});
  table.setAttribute('data-sorted',col+':'+dir);return true;}
 var tables=document.querySelectorAll('table.sortable');
 Array.prototype.forEach.call(tables,function(t){
  Array.prototype.forEach.call(t.tHead.rows[0].cells,function(th){
   th.addEventListener('click',function(){
    var dir=th.getAttribute('aria-sort')==='ascending'?'desc':'asc';
    sortTable(t,th.getAttribute('data-key'),dir);});});});
 var m=/^#sort=([^:]+):(.+):(asc|desc)$/.exec(decodeURIComponent(location.hash));
 if(m){var t=document.getElementById(m[1]);if(t){sortTable(t,m[2],m[3]);}}
 document.body.setAttribute('data-ready','1');
})();
"""


def _slug(*parts: Any) -> str:
    s = "-".join(str(p) for p in parts if p is not None and str(p) != "nan")
    return "t-" + re.sub(r"[^A-Za-z0-9_.+-]+", "_", s).replace("+", "p")


def _table_id(dataset: str, split: str, metric: str, settings: str) -> str:
    p = dict(part.split(":", 1) for part in settings.split("|") if ":" in part)
    return _slug(dataset, split, metric, p.get("margin"), f"k{p['k']}" if "k" in p else None, p.get("mode"))


def _num(v, integer: bool = False) -> tuple[str, str]:
    """(data-v, shown text) of a number cell; empty for missing; counts shown without decimals."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "", ""
    if f != f:  # NaN
        return "", ""
    return repr(f), (f"{f:.0f}" if integer else f"{f:.2f}")


def _cell(value, cls: str = "", best: bool = False, integer: bool = False, ci=None) -> str:
    """A number cell; ``ci`` (low, high): its confidence interval, shown small under it."""
    dv, text = _num(value, integer)
    c = " ".join(x for x in (cls, "best" if best else "") if x)
    if ci is not None and all(x == x for x in ci):  # not NaN: the record has an interval
        text += f'<br><small class="ci" title="confidence interval (--ci)">[{ci[0]:.2f}, {ci[1]:.2f}]</small>'
    return f'<td data-v="{dv}"{f" class={chr(34)}{c}{chr(34)}" if c else ""}>{text}</td>'


def _th(key: str, label: str, text: bool = False, title: str = "") -> str:
    t = f' title="{html.escape(title)}"' if title else ""
    return f'<th data-key="{html.escape(key)}"{" class=t" if text else ""}{t}>{html.escape(label)}</th>'


def _metric_table(sub, table_id: str, lower_is_better: bool, unit: str = "error %") -> str:
    """Rows: encoders; columns: language pairs + an average over them, the one the metric has: an
    error rate's micro average (all errors / all sentences, as LASER prints it), an accuracy's micro
    average (all correct / all sentences: the n-weighted mean), else (F1) the plain mean over pairs."""
    import pandas as pd

    sub = sub.assign(pair=sub["src_lang"].astype(str) + "-" + sub["tgt_lang"].astype(str))
    # One row per encoder as signed: two revisions or option sets of one encoder id are two rows
    # (named by their signature's enc: part), never one row holding whichever came first.
    signed = sub["signature"].map(lambda sig: str(sig).split("|")[1].removeprefix("enc:"))
    if (signed.groupby(sub["encoder"]).nunique() > 1).any():
        sub = sub.assign(encoder=[e if signed[sub["encoder"] == e].nunique() == 1 else f"{e} ({s.split('@', 1)[1]})"
                                  for e, s in zip(sub["encoder"], signed)])
    pairs = sorted(sub["pair"].unique())
    encoders = sorted(sub["encoder"].unique())
    wide = sub.pivot_table(index="encoder", columns="pair", values="value", aggfunc="first")
    ci = {}
    if "x_ci_low" in sub.columns:
        for _, r in sub.iterrows():
            ci[(r["encoder"], r["pair"])] = (float(r["x_ci_low"]), float(r["x_ci_high"]))
    err = pd.to_numeric(sub["errors"], errors="coerce")
    if unit == "error %" and err.notna().all():
        how, title = "micro", "micro average: all errors / all sentences"
    elif unit.startswith("accuracy"):
        how, title = "weighted", "micro average: all correct / all sentences (the mean weighted by n)"
    else:
        how, title = "mean", "mean over the language pairs (unweighted)"
    avg = {}
    for enc, g in sub.groupby("encoder"):
        if len(g) != len(pairs):  # an encoder without every pair has no average to compare
            avg[enc] = float("nan")
        elif how == "micro":
            avg[enc] = 100.0 * pd.to_numeric(g["errors"]).sum() / g["n"].sum()
        elif how == "weighted":
            avg[enc] = float((g["value"] * g["n"]).sum() / g["n"].sum())
        else:
            avg[enc] = float(g["value"].mean())
    best = {}
    for p in pairs + ["average"]:
        col = wide[p] if p != "average" else pd.Series(avg)
        col = col.dropna()
        if len(col) > 1:
            best[p] = col.min() if lower_is_better else col.max()
    sigs = {enc: g["signature"].iloc[0] for enc, g in sub.groupby("encoder")}
    head = _th("encoder", "encoder", text=True) + "".join(_th(p, p) for p in pairs) + _th(
        "average", "average", title=title)
    body = []
    for enc in encoders:
        cells = [f'<td class="t" title="{html.escape(str(sigs[enc]))}">{html.escape(str(enc))}</td>']
        for p in pairs:
            v = wide.at[enc, p] if p in wide.columns and enc in wide.index else None
            cells.append(_cell(v, best=p in best and v is not None and v == best[p], ci=ci.get((enc, p))))
        cells.append(_cell(avg.get(enc), best="average" in best and avg.get(enc) == best["average"]))
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def _error_type_table(sub, table_id: str) -> str:
    """Rows: encoder x language pair; columns: errors per type, total, and a stacked bar."""
    import pandas as pd

    cols = [c for c in sub.columns if c.startswith("err_")]
    types = [t for t in ERROR_TYPE_ORDER if f"err_{t}" in cols] + sorted(
        c[4:] for c in cols if c[4:] not in ERROR_TYPE_ORDER)
    head = (_th("encoder", "encoder", text=True) + _th("pair", "src-tgt", text=True)
            + "".join(_th(t, t) for t in types) + _th("total", "total") + _th("n", "n")
            + '<th data-key="share" class="t">errors by type (share of n)</th>')
    body = []
    for _, r in sub.sort_values(["encoder", "src_lang", "tgt_lang"]).iterrows():
        # The store writes only the types that occurred: a missing count is a 0.
        counts = {t: float(pd.to_numeric(r.get(f"err_{t}"), errors="coerce")) for t in types}
        counts = {t: (0.0 if c != c else c) for t, c in counts.items()}
        total = sum(counts.values())
        n = float(r["n"]) if r["n"] else float("nan")
        bars = "".join(
            f'<span class="bar b-{html.escape(t)}" style="width:{300 * c / n:.1f}px" title="{html.escape(t)}: '
            f'{int(c)}"></span>' for t, c in counts.items() if c and n == n and n > 0)
        body.append("<tr>" + f'<td class="t">{html.escape(str(r["encoder"]))}</td>'
                    + f'<td class="t">{html.escape(str(r["src_lang"]))}-{html.escape(str(r["tgt_lang"]))}</td>'
                    + "".join(_cell(counts[t], integer=True) for t in types) + _cell(total, integer=True)
                    + _cell(n, integer=True)
                    + f'<td class="t">{bars}</td></tr>')
    return (f'<table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def leaderboard_html(df, title: str = "xsimpp leaderboard") -> str:
    """The whole page for a leaderboard frame (``results.leaderboard_frame``)."""
    if df is None or df.empty:
        raise BadInputError("no results to show yet; run `xsimpp eval` first")
    sections, toc = [], []
    # One table per dataset, split, metric and settings: every signed setting (the part of each
    # signature after the metric: margin, k, mode, a BUCC threshold rule, xsim++ negatives, ...), so
    # numbers meet only where they compare, and a record without a margin (MTEB's F1) has its table.
    # How an interval was drawn (ci) changes no number: it splits no table.
    keyed = df.assign(settings=df["signature"].map(settings_text))
    groups = list(keyed.groupby(["dataset", "split", "metric", "settings"], sort=True))
    # A table's id (the page's #sort=ID:COLUMN:DIR links) names dataset, split, metric, margin, k and
    # mode, as it always has; tables those share are told apart by a digest of their other settings.
    ids = [_table_id(dataset, split, metric, settings) for (dataset, split, metric, settings), _ in groups]
    for ((dataset, split, metric, settings), sub), tid in zip(groups, ids):
        if ids.count(tid) > 1:
            tid += "-" + hashlib.sha256(settings.encode()).hexdigest()[:6]
        info = registry.METRICS.get(metric)
        lower = info.lower_is_better if info is not None else metric.startswith("xsim")
        unit = info.unit if info is not None else ""
        shown = ", ".join(part.replace(":", " ", 1) for part in settings.split("|") if part) or "no settings"
        heading = (f"{dataset} / {split} — {metric} ({unit + ', ' if unit else ''}"
                   f"{'lower' if lower else 'higher'} is better) — {shown}")
        toc.append(f'<li><a href="#h-{tid}">{html.escape(heading)}</a></li>')
        part = [f"<h2 id=\"h-{tid}\">{html.escape(heading)}</h2>",
                '<p class="meta">best per column in bold; hover an encoder for its signature; click a header to '
                "sort</p>", _metric_table(sub, tid, lower, unit)]
        if any(c.startswith("err_") for c in sub.columns) and sub.filter(like="err_").notna().any().any():
            eid = tid + "-errtypes"
            part.append(f"<h2>{html.escape(dataset)} / {html.escape(split)} — {html.escape(metric)} errors by type</h2>")
            part.append('<p class="meta">absolute error counts under the augmented transformations; '
                        '<span class="bar b-causality" style="width:1em"></span> causality&nbsp; '
                        '<span class="bar b-entity" style="width:1em"></span> entity&nbsp; '
                        '<span class="bar b-number" style="width:1em"></span> number&nbsp; '
                        '<span class="bar b-misaligned" style="width:1em"></span> misaligned</p>')
            part.append(_error_type_table(sub, eid))
        sections.append("\n".join(part))
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        f"<title>{html.escape(title)}</title><style>{PAGE_CSS}</style></head>\n"
        f"<body><h1>{html.escape(title)}</h1><p class=\"meta\">{len(df)} results, written {stamp} by xsimpp "
        f"{html.escape(__version__)}. Numbers compare only within a table (same data, metric and settings).</p>"
        f"<ul>{''.join(toc)}</ul>\n{''.join(sections)}\n<script>{PAGE_JS}</script></body></html>\n"
    )


def write_leaderboard_html(records, path: str | Path, title: str = "xsimpp leaderboard") -> int:
    """Write the page for result records; returns the number of results shown."""
    from ..results import leaderboard_frame

    df = leaderboard_frame(records)
    atomic_write_text(path, leaderboard_html(df, title))
    return len(df)
