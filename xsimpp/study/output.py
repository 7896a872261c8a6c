"""A study's output folder, written all or nothing: the folder is built beside its destination
under a temporary name and renamed into place when every file is written (an existing folder is
replaced only when asked, and only then)."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
from pathlib import Path

from ..errors import BadInputError
from ..textio import atomic_dir, check_output_dir, json_text, make_dirs, os_failure
from ..tasks import registry
from ..tasks.mining import GROUND_TRUTHS
from .run import StudyResult


def ranking_text(result: StudyResult, truth: str, top: int | None = None) -> str:
    """The table the CLI prints: accuracy, CI, PERM-BOTH p against the best, Kendall's tau, the
    accuracy over pairs of one encoder family (within a model) and of two (across models), per proxy,
    then the tie-aware readings: the share of pairs the proxy ties, ties as 1/2, tie-calibrated."""
    rep = result.rankings[truth]
    pvals = {kind: {b: r.p_value for _, b, r in tests} for kind, tests in
             (("all", rep.comparisons), ("within", rep.within_comparisons), ("across", rep.across_comparisons))}
    target = result.data_summary.get("target")  # only a non-English target is named (English: as before)
    into = f" into {target}" if target else ""
    lines = [f"{truth} ({registry.METRICS[truth].description}): {rep.n_systems} encoders x {rep.n_directions} languages{into}, "
             f"{rep.pairs} pairs, chance {100 * rep.chance:.1f}%; p: PERM-BOTH against the best over the same pairs",
             f"{'proxy':<40} {'acc%':>6} {'CI':>14} {'p':>6} {'kendall':>8} "
             f"{f'within({rep.within_pairs})':>13} {'CI':>14} {'p':>6} {f'across({rep.across_pairs})':>13} {'CI':>14} {'p':>6} "
             f"{'ties%':>6} {'ties½%':>6} {'tiecal%':>7}"]

    def pct(x: float) -> str:  # no pairs of that kind -> '-'
        return "-" if x != x else f"{100 * x:.1f}"

    def ci(c: tuple[float, float]) -> str:
        return "-" if c[0] != c[0] else f"[{100 * c[0]:5.1f}, {100 * c[1]:5.1f}]"

    def pv(kind: str, proxy: str) -> str:
        if not pvals[kind]:
            return "-"
        v = pvals[kind].get(proxy)
        return "best" if v is None else ("-" if v != v else f"{v:.3f}")

    for p in rep.proxies[:top]:
        a = p.accuracy
        lines.append(f"{p.proxy:<40} {100 * a.accuracy:6.1f} {ci(p.ci):>14} {pv('all', p.proxy):>6} "
                     f"{p.correlations.get('kendall', float('nan')):8.3f} "
                     f"{pct(a.within_accuracy):>13} {ci(p.within_ci):>14} {pv('within', p.proxy):>6} "
                     f"{pct(a.across_accuracy):>13} {ci(p.across_ci):>14} {pv('across', p.proxy):>6} "
                     f"{pct(p.ties.tie_share):>6} {pct(p.ties.half_accuracy):>6} {pct(p.ties.calibrated_accuracy):>7}")
    if top is not None and len(rep.proxies) > top:
        lines.append(f"... {len(rep.proxies) - top} more in ranking_{truth}.json")
    return "\n".join(lines)


def _csv(rows: list[dict]) -> bytes:
    cols = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue().encode()


def study_files(result: StudyResult) -> dict[str, bytes]:
    """Every file of the output folder (relative path -> bytes)."""
    from ..report.study import study_html, study_plots

    files: dict[str, bytes] = {
        "config.toml": result.config.text.encode(),
        "cells.csv": _csv(result.cells),
        "costs.csv": _csv(result.costs),
        "records.jsonl": "".join(json.dumps(r.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
                                 for r in result.records).encode(),
        "study.json": json_text({"config": result.config.to_json(), "data": result.data_summary,
                                 "proxies": result.proxies, "notes": result.notes, "seconds": result.seconds,
                                 "costs": result.costs}).encode(),
    }
    summary = []
    for gt, rep in result.rankings.items():
        files[f"ranking_{gt}.json"] = json_text(rep.to_json()).encode()
        summary.append(ranking_text(result, gt))
    for gt, rep in result.tatoeba_rankings.items():
        files[f"ranking_tatoeba-languages_{gt}.json"] = json_text(rep.to_json()).encode()
    files["summary.txt"] = ("\n\n".join(summary) + "\n").encode()
    if result.outcomes:  # per gold sentence, so that the ground truth's own uncertainty can be resampled
        files["mining_outcomes.json.gz"] = gzip.compress(json.dumps(
            {"units": "source sentences; per F1: pairs its fold's threshold kept (extracted), gold ones among them "
                      "(correct); gold: its gold pairs (xsimpp.scoring.bucc.bootstrap_f1)",
             "cells": result.outcomes}, separators=(",", ":")).encode(), mtime=0)
    plots = study_plots(result, list(result.rankings))
    for key, png in plots.items():
        files[f"plots/{key.replace(' ', '_').replace('[', '(').replace(']', ')').replace(':', '-')}.png"] = png
    files["report.html"] = study_html(result, plots, {g: registry.METRICS[g].description for g in GROUND_TRUTHS}).encode()
    return files


def check_out_dir(out: str | os.PathLike, overwrite: bool) -> Path:
    p = check_output_dir(out, "--out")  # a writable place, a name the file system takes
    if os.path.lexists(p):
        if not p.is_dir():
            raise BadInputError(f"--out {p} exists and is not a folder")
        if any(p.iterdir()) and not overwrite:
            raise BadInputError(f"--out {p} exists and is not empty; give another folder or --overwrite")
    make_dirs(p.parent, "--out")
    if not os.access(p.parent, os.W_OK):
        raise BadInputError(f"--out {p}: cannot write in {p.parent}")
    return p


def write_study(result: StudyResult, out: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write the folder atomically (see the module docstring); returns its path."""
    dest = check_out_dir(out, overwrite)
    files = study_files(result)
    with atomic_dir(dest, "--out") as tmp:
        for rel, data in files.items():
            path = tmp / rel
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            except OSError as e:  # a full disk's write error carries no file name: name the report's file
                raise os_failure(e, "write the study report", dest / rel) from None
    return dest
