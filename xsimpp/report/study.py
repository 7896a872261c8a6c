"""The proxy-validation study's report: a self-contained HTML page (tables rendered in Python, plots
embedded as PNG) and the plots on their own. Takes the study's plain outputs (cells as dicts,
ranking reports of ``tasks.ranking``), so it imports nothing above the tasks."""

from __future__ import annotations

import base64
import html
import io
import math
from typing import Sequence

import numpy as np

from ..version import __version__
from ..tasks import registry
from ..tasks.mining import MiningTask
from .html import PAGE_CSS, PAGE_JS

MARKERS = "osD^vP*Xh<>p"


def _pyplot():
    from .plots import _pyplot as get

    return get()


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return buf.getvalue()


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{100 * x:.1f}"


def accuracy_plot(report, title: str) -> bytes:
    """Pairwise accuracy with its bootstrap CI per proxy (best first), chance marked."""
    plt = _pyplot()
    ps = report.proxies
    fig, ax = plt.subplots(figsize=(7.5, 0.26 * len(ps) + 1.4))
    y = np.arange(len(ps))[::-1]
    acc = np.array([100 * p.accuracy.accuracy for p in ps])
    lo = np.array([100 * p.ci[0] for p in ps])
    hi = np.array([100 * p.ci[1] for p in ps])
    colors = ["#2b6cb0" if p.proxy.startswith("xsim++") else "#c05621" if p.proxy.startswith("xsim[") else "#2f855a"
              for p in ps]
    ax.errorbar(acc, y, xerr=[acc - lo, hi - acc], fmt="none", ecolor="#888", capsize=2, lw=1)
    ax.scatter(acc, y, c=colors, s=22, zorder=3)
    ax.axvline(100 * report.chance, color="#aaa", ls="--", lw=1)
    ax.set_yticks(y)
    ax.set_yticklabels([p.proxy for p in ps], fontsize=7)
    ax.set_xlabel(f"pairwise ranking accuracy, % ({report.pairs} encoder pairs; dashed: chance)")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def proxy_vs_truth_plot(cells: Sequence[dict], proxy: str, truth: str, lower_is_better: bool) -> bytes:
    """One panel per language: each encoder's proxy (x, reversed for error rates) against the ground truth (y)."""
    plt = _pyplot()
    langs = list(dict.fromkeys(c["lang"] for c in cells))
    systems = list(dict.fromkeys(c["system"] for c in cells))
    cols = min(5, len(langs))
    rows = math.ceil(len(langs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 2.4 * rows + 0.6), squeeze=False)
    cmap = plt.get_cmap("tab10").colors
    for a, lang in enumerate(langs):
        ax = axes[a // cols][a % cols]
        sub = [c for c in cells if c["lang"] == lang and proxy in c and truth in c]
        for c in sub:
            s = systems.index(c["system"])
            ax.scatter(c[proxy], c[truth], color=cmap[s % 10], marker=MARKERS[s % len(MARKERS)], s=30,
                       edgecolors="white", linewidths=0.5)
        if lower_is_better:
            ax.invert_xaxis()
        ax.set_title(lang, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.25)
    for a in range(len(langs), rows * cols):
        axes[a // cols][a % cols].axis("off")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=cmap[i % 10], marker=MARKERS[i % len(MARKERS)], ls="", label=s)
               for i, s in enumerate(systems)]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(systems), 6), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, -0.02))
    fig.suptitle(f"{proxy} (x{', reversed: lower is better' if lower_is_better else ''}) vs {truth} (y), per language",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return _png(fig)


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" style="max-width:100%" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _ranking_table(report, table_id: str, truth_label: str) -> str:
    best = report.proxies[0].proxy if report.proxies else ""
    pvals = {b: r.p_value for a, b, r in report.comparisons}
    split_p = {kind: {b: r.p_value for _, b, r in tests} for kind, tests in
               (("within", report.within_comparisons), ("across", report.across_comparisons))}
    head = ("<tr><th class=t data-key=proxy>proxy</th><th data-key=acc>accuracy %</th><th data-key=ci>CI</th>"
            "<th data-key=agree>agree / pairs</th><th data-key=p>PERM-BOTH p vs best</th>"
            "<th data-key=pearson>Pearson</th><th data-key=spearman>Spearman</th><th data-key=kendall>Kendall</th>"
            f"<th data-key=within>within a family % ({report.within_pairs} pairs) [CI] PERM-BOTH p</th>"
            f"<th data-key=across>across families % ({report.across_pairs} pairs) [CI] PERM-BOTH p</th>"
            "<th data-key=ties>proxy ties % of pairs</th><th data-key=half>ties as ½ % (pairs)</th>"
            "<th data-key=tiecal>tie-calibrated % (ε)</th></tr>")
    rows = []
    for p in report.proxies:
        acc = p.accuracy
        pv = pvals.get(p.proxy)
        cells = [f'<td class=t>{html.escape(p.proxy)}{" ↓" if p.lower_is_better else ""}</td>',
                 f'<td data-v="{acc.accuracy:.6f}"{" class=best" if p.proxy == best else ""}>{_pct(acc.accuracy)}</td>',
                 f'<td data-v="{p.ci[0]:.6f}">[{_pct(p.ci[0])}, {_pct(p.ci[1])}]</td>',
                 f'<td data-v="{acc.agreements}">{acc.agreements} / {acc.pairs}</td>',
                 f'<td data-v="{"" if pv is None else f"{pv:.6f}"}">{"best" if pv is None else f"{pv:.3f}"}</td>']
        nums = [(p.correlations.get(key, float("nan")), "{:.3f}") for key in ("pearson", "spearman", "kendall")]
        for v, fmt in nums:
            cells.append(f'<td data-v="{"" if not np.isfinite(v) else f"{v:.6f}"}">{"–" if not np.isfinite(v) else fmt.format(v)}</td>')
        for kind, v, ci in (("within", acc.within_accuracy, p.within_ci), ("across", acc.across_accuracy, p.across_ci)):
            text = "–" if not np.isfinite(v) else f"{100 * v:.1f}"
            if np.isfinite(ci[0]):
                sp = split_p[kind].get(p.proxy)
                text += f" [{_pct(ci[0])}, {_pct(ci[1])}]" + (" best" if sp is None else f" p {sp:.3f}")
            cells.append(f'<td data-v="{"" if not np.isfinite(v) else f"{v:.6f}"}">{text}</td>')
        t = p.ties
        for v, text in ((t.tie_share, _pct(t.tie_share)), (t.half_accuracy, f"{_pct(t.half_accuracy)} ({t.half_pairs})"),
                        (t.calibrated_accuracy, f"{_pct(t.calibrated_accuracy)} (ε {t.epsilon:.4g})")):
            cells.append(f'<td data-v="{"" if not np.isfinite(v) else f"{v:.6f}"}">{text}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div style="overflow-x:auto"><table class=sortable id="{table_id}"><thead>{head}</thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>'
            f'<p class=meta>{truth_label}: {report.n_systems} encoders × {report.n_directions} directions, '
            f'{report.pairs} pairs; chance {_pct(report.chance)} %. Correlations: within-direction averages '
            f'(tasks.ranking). ↓ = lower is better (negated before ranking). Ties as ½: over the pairs whose '
            f'ground truth differs, a proxy tie scores ½; tie-calibrated (Deutsch et al. 2023): a proxy difference '
            f'up to ε is a tie, right when the ground truth ties too, ε fitted to maximise it.</p>')


def _cells_table(cells: Sequence[dict], columns: Sequence[str]) -> str:
    head = "".join(f"<th{' class=t' if c in ('system', 'lang') else ''} data-key={html.escape(c)}>{html.escape(c)}</th>"
                   for c in columns)
    rows = []
    for c in cells:
        tds = []
        for col in columns:
            v = c.get(col)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                tds.append(f'<td data-v="{v}">{v:.2f}</td>' if isinstance(v, float) else f'<td data-v="{v}">{v}</td>')
            else:
                tds.append(f"<td class=t>{html.escape('' if v is None else str(v))}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return (f'<div style="overflow-x:auto"><table class=sortable id=cells><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def study_html(result, plots: dict[str, bytes], truths: dict[str, str]) -> str:
    """The whole page: what was run, the ranking table per ground truth, plots, every cell, costs."""
    cfg = result.config
    target = result.data_summary.get("target")  # only a non-English target is named (English: as before)
    tgt = html.escape(target or "English")
    parts = [f"<h1>Which proxy predicts mining? — study “{html.escape(cfg.name)}”"
             f"{f' into {tgt}' if target else ''}</h1>",
             f'<p class=meta>xsimpp {__version__} · {len(result.costs)} encoders × {len(result.data_summary["languages"])} '
             f'languages{f" → {tgt}" if target else ""} · {result.data_summary["distractors"]["lines"]} {tgt} '
             'distractors · data checksum '
             f'<code>{result.data_summary["checksum"]}</code> · {result.seconds:.0f} s</p>']
    ds = result.data_summary
    src = ", ".join(f"{k} {v}" for k, v in ds["distractors"]["per_source"].items())
    parts.append(
        f"<p>Ground truth: each language's gold pairs (FLORES-200 devtest and NTREX-128 lines, source and {tgt}) "
        f"hidden among {ds['distractors']['lines']} distinct real {tgt} lines ({html.escape(src)}; no gold line), "
        f"mined with the {cfg.margin} margin (k = {cfg.k}) both ways (BUCC candidates), F1 with the threshold "
        f"cross-validated over sources ({cfg.folds} folds), and precision at the fixed threshold {cfg.fixed_threshold}. "
        "Proxies are computed on FLORES devtest (and Tatoeba v1); <b>mining_f1</b> shares its FLORES gold sentences "
        "with the proxies, <b>mining_f1_ntrex</b> uses NTREX sentences only, which no proxy saw.</p>")
    parts.append(
        "<p class=meta>How to read: for every pair of encoders within one language, a proxy <i>agrees</i> when it "
        "orders the two as the ground truth does (Kocmi et al. 2021; ties as mt-metrics-eval). Accuracy = agreements "
        "/ pairs over all languages, with a bootstrap CI over pairs; PERM-BOTH p tests whether the best proxy's "
        "accuracy differs from this one's (two-sided; pairs within a language are not independent, so treat CIs "
        "as optimistic). Proxy names: xsim[margin], xsim++[style] and xsim++[style:types] (counting only errors "
        "of those types; misaligned = any other wrong neighbour), xsim++[style,margin] (xsim++ with another "
        "margin).</p>")
    for note in result.notes:
        parts.append(f"<p class=meta>Note: {html.escape(note)}</p>")
    for gt, rep in result.rankings.items():
        parts.append(f"<h2>Proxies ranked against {html.escape(truths.get(gt, gt))}</h2>")
        parts.append(_ranking_table(rep, f"rank-{gt}", gt))
        if f"acc-{gt}" in plots:
            parts.append(_img(plots[f"acc-{gt}"], f"accuracy per proxy against {gt}"))
    for gt, rep in result.tatoeba_rankings.items():
        parts.append(f"<h2>Languages with Tatoeba v1 only, against {html.escape(truths.get(gt, gt))}</h2>")
        parts.append(_ranking_table(rep, f"rank-tatoeba-{gt}", gt))
    for key, png in plots.items():
        if key.startswith("scatter-"):
            parts.append(f"<h2>{html.escape(key[len('scatter-'):])} per language</h2>")
            parts.append(_img(png, key))
    main_cols = ["system", "lang"] + [p for p in result.proxies if ":" not in p] + (
        ["tatoeba"] if any("tatoeba" in c for c in result.cells) else []) + [
        *(m for m, info in registry.METRICS.items() if info.producer == MiningTask.name),
        "mining_threshold_cv", "n_gold", "n_candidates"] + (["n_unpaired"] if any("n_unpaired" in c for c in result.cells)
                                                           else [])
    parts.append("<h2>Every cell (encoder × language)</h2>")
    parts.append(_cells_table(result.cells, main_cols))
    parts.append("<h2>Cost</h2>")
    parts.append(_cells_table(result.costs, list(result.costs[0].keys()) if result.costs else []).replace("id=cells",
                                                                                                         "id=costs"))
    body = "\n".join(parts)
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>xsimpp study {html.escape(cfg.name)}</title>"
            f"<style>{PAGE_CSS}</style></head><body>{body}<script>{PAGE_JS}</script></body></html>")


def study_plots(result, truths: Sequence[str]) -> dict[str, bytes]:
    """Accuracy-with-CI per proxy for each ground truth; proxy vs mining F1 per language for the
    best proxy and xsim (ratio) against mining_f1 and mining_f1_ntrex."""
    plots: dict[str, bytes] = {}
    for gt, rep in result.rankings.items():
        plots[f"acc-{gt}"] = accuracy_plot(rep, f"pairwise accuracy against {gt} (95% bootstrap CI)")
    for gt in ("mining_f1", "mining_f1_ntrex"):
        rep = result.rankings.get(gt)
        if rep is None or not rep.proxies:
            continue
        shown = list(dict.fromkeys([rep.proxies[0].proxy] + [p for p in ("xsim[ratio]",) if p in result.proxies]))
        for proxy in shown:
            plots[f"scatter-{proxy} vs {gt}"] = proxy_vs_truth_plot(result.cells, proxy, gt,
                                                                    result.lower_is_better.get(proxy, True))
    return plots
