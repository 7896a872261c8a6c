"""Whole runs of ``xsimpp eval`` on FLORES-200, cold then warm, as a user types them (issue 24).

Runs:

* ``ten``: the cold ten-language xsim++ run: ``--langs fao,kea,tpi,kik,fur,ibo,ltz,swh,zul,bem
  --augmented auto`` (strict negatives, which must already be built: ``xsimpp augment flores200``);
* ``all``: the cold xsim run of every FLORES-200 devtest language into English (``--langs all``,
  203 sources + English: 206 448 sentences).

Each run starts on an empty embedding cache and results store of its own (a fresh folder), then runs
the same command again warm. Beside each wall time: the load average before and after, the peak RSS
of the command (``ru_maxrss`` of the child) and the float32 GEMM rate of this machine measured just
before and just after (the shape of an e5-small feed-forward product), so the encoding rate can be
read against it. The command's own output (its records as JSON lines: errors and sentences per
language, the signature) is saved, and with ``--json FILE`` everything lands in one file beside the
machine it ran on (docs/performance.md's cold-run table is printed from those files by a test).

    python benchmarks/bench_flores_runs.py --runs ten,all [--encoder e5-small] [--encoder-opt path=torch-float32] \
        [--out DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_info, git_commit

TEN = "fao_Latn,kea_Latn,tpi_Latn,kik_Latn,fur_Latn,ibo_Latn,ltz_Latn,swh_Latn,zul_Latn,bem_Latn"
LABELS = {"ten": "ten languages, xsim + xsim++ (strict negatives)", "all": "`--langs all`, xsim ({n} languages)"}
RUNS = {
    "ten": ["--langs", TEN, "--augmented", "auto"],
    "all": ["--langs", "all"],
}


def gemm_rate() -> float:
    """float32 GFLOP/s of torch's GEMM on 4096x384 @ 384x1536, median of 5 timings."""
    import statistics

    import torch

    a, b = torch.randn(4096, 384), torch.randn(384, 1536)
    for _ in range(3):
        a @ b
    rates = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(10):
            a @ b
        rates.append(2 * 4096 * 384 * 1536 * 10 / (time.perf_counter() - t) / 1e9)
    return statistics.median(rates)


def timed(cmd: list[str], env: dict, log: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in MB of the child, exit code); output to ``log``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    with log.open("w", encoding="utf-8") as f:
        code = subprocess.call(cmd, env=env, stdout=f, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(before, peak) // 1024, code


def encoded(log: Path) -> int | None:
    """How many sentences the command encoded, from its own ``cost:`` line (None when it printed none)."""
    m = re.search(r"^cost: .*?(\d+) to encode", log.read_text(encoding="utf-8"), re.MULTILINE)
    return int(m.group(1)) if m else None


def records(log: Path) -> list[dict]:
    """What the command's ``--json`` printed: one record per language and metric, kept to the fields a
    reader of the cold-run table needs (the signature names the path that made the vectors)."""
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            out.append({"metric": r["metric"], "src_lang": r["src_lang"], "errors": r["errors"], "n": r["n"],
                        "signature": r["signature_string"]})
    return out


def clock(seconds: float) -> str:
    m, s = divmod(round(seconds, 1), 60)
    return f"{int(m)} min {s:04.1f} s" if m else f"{s:.1f} s"


def spaced(n: int) -> str:
    """An integer with thin thousands separators, as the docs write them (19 995)."""
    return f"{n:,}".replace(",", " ")


def path_of(record: dict) -> str:
    """The numeric path a record's vectors came from, as its signature names it (``enc:NAME@PATH+...``)."""
    return record["signature"].split("|enc:", 1)[1].split("@", 1)[1].split("+", 1)[0]


def micro(records: list[dict], metric: str) -> float | None:
    """Error rate in % over every sentence of ``metric``'s records (None when there are none)."""
    recs = [r for r in records if r["metric"] == metric]
    return 100 * sum(r["errors"] for r in recs) / sum(r["n"] for r in recs) if recs else None


def table(files: list[Path]) -> list[str]:
    """docs/performance.md's cold-run table and its ratio lines, from ``--json`` files (in their order)."""
    runs = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    # how many sentences a command encodes cold does not depend on the path; files written before
    # the JSON kept the count take it from another run of the same command
    counts = {r["command"]: r["encoded"] for run in runs for r in run["runs"] if r["phase"] == "cold" and r.get("encoded")}
    out = [("| path | run | sentences encoded | cold | sentences/s, cold | warm | peak RSS | load before → after (cold) | "
            "GEMM GFLOP/s before → after | xsim / xsim++ micro-average |"), "|---|---|---|---|---|---|---|---|---|---|"]
    cold: dict[tuple[str, str], list[float]] = {}
    labels: dict[str, str] = {}  # the "all" run's label counts the languages its records cover
    for run in runs:
        by = {(r["run"], r["phase"]): r for r in run["runs"]}
        for name in dict.fromkeys(r["run"] for r in run["runs"]):
            c, w = by[(name, "cold")], by[(name, "warm")]
            path = path_of(c["records"][0])
            cold.setdefault((name, path), []).append(c["wall_s"])
            rates = " / ".join(f"{v:.2f} %" for v in (micro(c["records"], m) for m in ("xsim", "xsim++")) if v is not None)
            n = c.get("encoded") or counts[c["command"]]
            labels[name] = LABELS[name].format(n=len({rec["src_lang"] for rec in c["records"]}))
            out.append(f"| {path} | {labels[name]} | {spaced(n)} | **{clock(c['wall_s'])}** | {n / c['wall_s']:.1f} | {clock(w['wall_s'])} | "
                       f"{c['peak_rss_mb'] / 1024:.2f} GB | {c['load_before']:.1f} → {c['load_after']:.1f} | "
                       f"{c['gemm_gflops_before']} → {c['gemm_gflops_after']} | {rates} |")
    out.append("")
    for name in dict.fromkeys(n for n, _ in cold):
        label = labels[name]
        ref = cold.get((name, "torch-float32"))
        for (n, path), walls in cold.items():
            if n == name and path != "torch-float32" and ref:
                shares = ", ".join(f"{clock(w)} = {100 * w / ref[0]:.1f} %" for w in walls)
                out.append(f"- {label}: {path} cold / torch-float32 cold ({clock(ref[0])}): {shares}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default="ten", help="comma-separated: " + ", ".join(RUNS))
    ap.add_argument("--encoder", default="e5-small")
    ap.add_argument("--encoder-opt", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to xsimpp eval as is (e.g. path=torch-float32 to time the reference path)")
    ap.add_argument("--split", default="devtest")
    ap.add_argument("--out", type=Path, default=None, help="folder for the commands' output (default: a temp folder)")
    ap.add_argument("--json", type=Path, default=None, metavar="FILE",
                    help="write the timings, the machine and every language's errors to FILE")
    ap.add_argument("--table", type=Path, nargs="+", metavar="JSON",
                    help="print the docs' table of these --json files, run nothing")
    args = ap.parse_args()
    if args.table:
        print("\n".join(table(args.table)))
        return 0
    machine, commit = cpu_info(), git_commit()  # the checkout the runs start from
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-flores-"))
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.runs.split(","):
        home = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
        env = dict(os.environ)
        # Fresh cache and results; the unpacked model folder and the negatives stay where they are.
        cmd = [sys.executable, "-m", "xsimpp", "eval", "--encoder", args.encoder, "--dataset", "flores200",
               "--split", args.split, *RUNS[name], *[a for o in args.encoder_opt for a in ("--encoder-opt", o)],
               "--cache-dir", str(home / "cache"),
               "--results-dir", str(home / "results"), "--json"]
        for phase in ("cold", "warm"):
            g0, l0 = gemm_rate(), os.getloadavg()[0]
            wall, rss, code = timed(cmd, env, out / f"{name}-{phase}.txt")
            g1, l1 = gemm_rate(), os.getloadavg()[0]
            log = out / f"{name}-{phase}.txt"
            rows.append((name, phase, wall, rss, code, l0, l1, g0, g1, encoded(log), records(log)))
            print(f"{name} {phase}: {wall:.1f} s, peak RSS {rss} MB, exit {code}, load {l0:.1f}->{l1:.1f}, "
                  f"GEMM {g0:.0f}->{g1:.0f} GFLOP/s  ({out / f'{name}-{phase}.txt'})", flush=True)
    print(f"\n{'run':5} {'phase':5} {'wall':>10} {'peak RSS':>9} {'load before/after':>18} {'GEMM GFLOP/s':>13}")
    for name, phase, wall, rss, code, l0, l1, g0, g1, _, _ in rows:
        m, s = divmod(wall, 60)
        print(f"{name:5} {phase:5} {int(m):4d} m {s:4.1f} s {rss:6d} MB {l0:8.1f} / {l1:<7.1f} {g0:6.0f}/{g1:<6.0f}"
              + ("" if code == 0 else f"  EXIT {code}"))
    print(f"\ncommand: {' '.join(cmd[2:])}\noutput: {out}")
    if args.json:
        from xsimpp import __version__
        from xsimpp.textio import atomic_write_json

        atomic_write_json(args.json, {
            "version": __version__, "commit": commit, **machine, "encoder": args.encoder,
            "encoder_opt": args.encoder_opt, "split": args.split,
            "runs": [{"run": name, "phase": phase, "wall_s": round(wall, 1), "peak_rss_mb": rss, "exit": code,
                      "load_before": round(l0, 2), "load_after": round(l1, 2), "gemm_gflops_before": round(g0),
                      "gemm_gflops_after": round(g1), "command": " ".join(RUNS[name]), "encoded": n_enc,
                      "records": recs}
                     for name, phase, wall, rss, code, l0, l1, g0, g1, n_enc, recs in rows]})
        print(f"json: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
