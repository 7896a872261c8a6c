"""PNG charts (matplotlib, Agg backend: no display needed).

* :func:`plot_error_types` - one encoder's xsim++ errors per language, stacked by error type;
* :func:`plot_xsim_vs_xsimpp` - xsim and xsim++ per language, side by side for several encoders;
* :func:`plot_proxy_vs_bleu` - a proxy against BLEU, one line per direction joining its systems,
  with the pairwise ranking accuracy in the title.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import BadInputError, MissingResourceError
from .select import settings_text

ERROR_TYPE_ORDER = ("causality", "entity", "number", "misaligned")
TYPE_COLORS = {"causality": "#d1495b", "entity": "#edae49", "number": "#00798c", "misaligned": "#8d99ae"}


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise MissingResourceError("plots need matplotlib: pip install 'matplotlib>=3.7'") from None
    matplotlib.use("Agg")  # files only; never try to open a window (CI, ssh)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | Path, extra_artists: Sequence = ()) -> Path:
    """Render to memory, then write atomically (a reader never sees half a PNG)."""
    import io

    from ..textio import _atomic_write_bytes

    buf = io.BytesIO()
    # legends placed outside the axes must be named, or the tight box cuts them off
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight", bbox_extra_artists=list(extra_artists) or None)
    _pyplot().close(fig)
    path = Path(path)
    _atomic_write_bytes(path, buf.getvalue())
    return path


def select(df, *, dataset: str | None = None, split: str | None = None):
    """Rows of one dataset and split (asking the user to choose when the store holds several)."""
    for col, wanted, flag in (("dataset", dataset, "--dataset"), ("split", split, "--split")):
        values = sorted(df[col].dropna().astype(str).unique())
        if wanted is not None:
            df = df[df[col].astype(str) == wanted]
            if df.empty:
                raise BadInputError(f"no results with {col} {wanted!r} (have: {', '.join(values) or 'none'})")
        elif len(values) > 1:
            raise BadInputError(f"the results hold several {col}s ({', '.join(values)}); choose one with {flag}")
    return df


def _short_pair(src: str, tgt: str) -> str:
    """deu_Latn-eng_Latn -> deu-eng (the script rarely matters on an axis label)."""
    return f"{str(src).split('_')[0]}-{str(tgt).split('_')[0]}"


def _pair_labels(src, tgt) -> list[str]:
    """Axis labels of language pairs: short (deu-eng) unless two pairs would read the same
    (zho_Hans-eng and zho_Hant-eng), which keep their full codes."""
    full = [f"{a}-{b}" for a, b in zip(src, tgt)]
    short = [_short_pair(a, b) for a, b in zip(src, tgt)]
    clash = {x for x in short if len({f for f, s in zip(full, short) if s == x}) > 1}
    return [f if s in clash else s for f, s in zip(full, short)]


def _one_setting(sub, what: str):
    """One table's worth of results per metric: every signed setting alike (margin, k, mode, the
    xsim++ negatives, ...), read from the signatures as the leaderboard reads them; how an interval
    was drawn (ci) changes no number, so it is not compared (as ``Signature.comparable_with``)."""
    for metric, g in sub.groupby("metric"):
        settings = sorted(set(g["signature"].map(settings_text)))
        if len(settings) > 1:
            differ = sorted(set.union(*map(set, (x.split("|") for x in settings))) -
                            set.intersection(*map(set, (x.split("|") for x in settings))))
            raise BadInputError(f"{what} has {metric} results under several settings ({', '.join(differ)}); keep "
                                "one in the store (or plot from a --results-dir that holds one)")


def plot_error_types(df, encoder: str, path: str | Path, *, dataset: str | None = None,
                     split: str | None = None) -> Path:
    """Stacked bars: per language pair, the xsim++ errors of each type as % of the sentences.

    The stack height is the xsim++ error rate, so the chart shows both how often an encoder is
    fooled and by what (a wrong antonym, entity or number, or a plainly misaligned sentence).
    """
    plt = _pyplot()
    mine = df[(df["encoder"] == encoder) & (df["metric"] == "xsim++")]
    elsewhere = sorted({f"{d}/{sp}" for d, sp in zip(mine["dataset"], mine["split"])})
    if elsewhere and (dataset is None or split is None) and len(elsewhere) == 1:
        # the encoder's xsim++ results pick the dataset when the store holds others too
        dataset, split = (dataset or elsewhere[0].split("/")[0]), (split or elsewhere[0].split("/", 1)[1])
    df = select(df, dataset=dataset, split=split)
    sub = df[(df["encoder"] == encoder) & (df["metric"] == "xsim++")]
    if sub.empty:
        have = sorted(df.loc[df["metric"] == "xsim++", "encoder"].unique())
        where = (f"; {encoder} has xsim++ results on {', '.join(elsewhere)} (choose with --dataset/--split)"
                 if elsewhere else "; run `xsimpp eval --augmented auto` first")
        raise BadInputError(f"no xsim++ results for encoder {encoder!r} here (have: {', '.join(have) or 'none'}){where}")
    _one_setting(sub, f"encoder {encoder!r}")
    sub = sub.sort_values(["src_lang", "tgt_lang"])
    labels = _pair_labels(sub["src_lang"], sub["tgt_lang"])
    n = sub["n"].to_numpy(float)
    cols = [c for c in sub.columns if c.startswith("err_")]
    types = [t for t in ERROR_TYPE_ORDER if f"err_{t}" in cols] + sorted(
        c[4:] for c in cols if c[4:] not in ERROR_TYPE_ORDER)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(labels) + 2.5), 4.2))
    x = np.arange(len(labels))
    bottom = np.zeros(len(labels))
    for t in types:
        # the store writes only the types that occurred: a missing count is a 0
        share = 100.0 * sub[f"err_{t}"].fillna(0).to_numpy(float) / n
        ax.bar(x, share, 0.65, bottom=bottom, label=t, color=TYPE_COLORS.get(t))
        bottom += share
    for xi, total in zip(x, bottom):
        ax.text(xi, total, f"{total:.1f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, labels, rotation=45 if len(labels) > 8 else 0, ha="right" if len(labels) > 8 else "center")
    ax.set_ylabel("xsim++ errors (% of sentences)")
    ax.set_ylim(0, max(1.0, bottom.max()) * 1.15)
    ds = f"{sub['dataset'].iloc[0]}/{sub['split'].iloc[0]}"
    ax.set_title(f"xsim++ errors by type: {encoder} on {ds}")
    leg = ax.legend(title="error type", frameon=False, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path, extra_artists=(leg,))


def plot_xsim_vs_xsimpp(df, encoders: Sequence[str] | None, path: str | Path, *, dataset: str | None = None,
                        split: str | None = None) -> Path:
    """Two panels (xsim, xsim++) of grouped bars: per language pair, one bar per encoder.

    Separate y axes: xsim++ errors are several times xsim's, and a shared axis would flatten xsim.
    """
    plt = _pyplot()
    df = select(df, dataset=dataset, split=split)
    df = df[df["metric"].isin(["xsim", "xsim++"])]
    have = sorted(df["encoder"].unique())
    encoders = list(encoders) if encoders else have
    missing = [e for e in encoders if e not in have]
    if missing:
        raise BadInputError(f"no xsim/xsim++ results for {', '.join(missing)} (have: {', '.join(have) or 'none'})")
    df = df[df["encoder"].isin(encoders)]
    for e in encoders:
        _one_setting(df[df["encoder"] == e], f"encoder {e!r}")
    df = df.assign(pair=_pair_labels(df["src_lang"], df["tgt_lang"]))
    pairs = sorted(df["pair"].unique())
    metrics = [m for m in ("xsim", "xsim++") if (df["metric"] == m).any()]
    fig, axes = plt.subplots(1, len(metrics), figsize=(max(6.0, 1.1 * len(pairs) * len(metrics) + 3), 4.2),
                             squeeze=False)
    width = 0.8 / len(encoders)
    colors = plt.get_cmap("tab10").colors
    x = np.arange(len(pairs))
    for ax, metric in zip(axes[0], metrics):
        sub = df[df["metric"] == metric]
        top = 0.0
        for k, enc in enumerate(encoders):
            vals = sub[sub["encoder"] == enc].set_index("pair")["value"].reindex(pairs).to_numpy(float)
            pos = x - 0.4 + width * (k + 0.5)
            ax.bar(pos, np.nan_to_num(vals), width * 0.95, label=enc, color=colors[k % 10])
            for p, v in zip(pos, vals):
                # label every bar, so a 0.00 (an encoder that makes no error) is visible as such
                if np.isfinite(v):
                    ax.text(p, v, f"{v:.1f}", ha="center", va="bottom", fontsize=7)
            top = max(top, np.nanmax(vals) if np.isfinite(vals).any() else 0.0)
        ax.set_xticks(x, pairs, rotation=45 if len(pairs) > 6 else 0, ha="right" if len(pairs) > 6 else "center")
        ax.set_ylim(0, max(1.0, top) * 1.18)
        ax.set_title(metric)
        ax.set_ylabel(f"{metric} error rate (%) - lower is better")
        ax.spines[["top", "right"]].set_visible(False)
    leg = axes[0][-1].legend(title="encoder", frameon=False, bbox_to_anchor=(1.01, 1), loc="upper left")
    ds = f"{df['dataset'].iloc[0]}/{df['split'].iloc[0]}"
    title = fig.suptitle(f"xsim vs xsim++ per language pair ({ds})")
    return _save(fig, path, extra_artists=(leg, title))  # named, or the tight box cuts the title off


def plot_proxy_vs_bleu(frame, proxy: str, path: str | Path, *, lower_is_better: bool,
                       accuracy=None, ci: tuple[float, float] | None = None, confidence: float = 0.95) -> Path:
    """Scatter of a proxy (x) against BLEU (y): one colour per direction, one marker per system,
    a line joining the systems of each direction (only those pairs are ranked).

    For an error rate the x axis is reversed, so "better" is up and to the right for both axes and
    an agreeing pair is a line that rises to the right.
    """
    plt = _pyplot()
    from ..scoring.ranking import pairwise_accuracy

    if accuracy is None:
        accuracy = pairwise_accuracy(frame[proxy].to_numpy(float), frame["bleu"].to_numpy(float),
                                     frame["direction"].tolist(), frame["family"].tolist(),
                                     lower_is_better=lower_is_better)
    fig, ax = plt.subplots(figsize=(6.8, 4.8))
    directions = list(dict.fromkeys(frame["direction"]))
    systems = list(dict.fromkeys(frame["system"]))
    colors = plt.get_cmap("tab10").colors
    markers = "osD^vP*Xh<>p"
    for d_i, d in enumerate(directions):
        sub = frame[frame["direction"] == d].sort_values(proxy)
        c = colors[d_i % 10]
        ax.plot(sub[proxy], sub["bleu"], "-", color=c, alpha=0.45, lw=1.2, zorder=1)
        for _, r in sub.iterrows():
            ax.scatter(r[proxy], r["bleu"], color=c, marker=markers[systems.index(r["system"]) % len(markers)],
                       s=46, zorder=2, edgecolors="white", linewidths=0.6)
    if lower_is_better:
        ax.invert_xaxis()
    # two legends: colour = direction, marker = system
    from matplotlib.lines import Line2D

    dir_handles = [Line2D([], [], color=colors[i % 10], lw=2, label=d) for i, d in enumerate(directions[:12])]
    sys_handles = [Line2D([], [], color="#555", marker=markers[i % len(markers)], ls="", label=s)
                   for i, s in enumerate(systems[:12])]
    leg = ax.legend(handles=dir_handles, title="direction", frameon=False, fontsize=8, title_fontsize=8,
                    bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.add_artist(leg)
    leg2 = ax.legend(handles=sys_handles, title="system", frameon=False, fontsize=8, title_fontsize=8,
              bbox_to_anchor=(1.01, 0), loc="lower left")
    ax.set_xlabel(f"{proxy} ({'lower is better, axis reversed' if lower_is_better else 'higher is better'})")
    ax.set_ylabel("BLEU")
    acc = accuracy.accuracy
    title = f"{proxy} vs BLEU: pairwise accuracy {100 * acc:.1f}% ({accuracy.agreements}/{accuracy.pairs} pairs)"
    if ci is not None and all(np.isfinite(ci)):
        title += f"\n{round(100 * confidence)}% bootstrap CI [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.25)
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, path, extra_artists=(leg, leg2))
