"""`xsimpp filter` on a noisy Friulian-English corpus built from the shared data, with known clean pairs.

The corpus (seeded, ``--clean`` pairs plus noise, shuffled together; a label per line in
``labels.txt``):

- clean: OLDI seed fur-eng pairs (a seeded sample of ``--clean`` lines);
- mismatch: an OLDI fur line with the English of another OLDI line (not in the clean sample);
- duplicate: an exact repeat of a clean pair (the first occurrence is clean, repeats are noise);
- italian: the OLDI Italian of a line in the fur column, with its English (a true translation in
  the wrong language);
- german / french: FLORES-200 dev Friulian with the German or French of the same sentence on the
  English side.

Precision = clean pairs among the kept pairs; recall = kept clean pairs / all clean pairs. Two
budgets: half of, and all of, the clean pairs' English tokens. Two rule sets: the paper's (English
side identified as English) and both sides (``--lid both --reject-lang ita``). The encoding is
done once and cached, so the four runs cost one encoding.

``--memory``: peak RSS of the whole `xsimpp filter` process (chargram, no cache, ``--max-memory``, 1 024 pairs
encoded at a time) on the corpus and
on a 10x larger one (ten copies, each pair made distinct by a copy number on both sides), each in
a fresh process, interleaved: memory should stay flat while the input grows tenfold.

    python benchmarks/bench_filter.py --encoder e5-small --cache-dir DIR
    python benchmarks/bench_filter.py --memory-only
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bounds  # benchmarks/bounds.py: the bounds of every number typed here

DATA = Path(os.environ.get("XSIMPP_DATA_DIR") or Path(__file__).resolve().parents[2] / "shared" / "data")


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def build(out: Path, n_clean: int, n_mismatch: int, n_dup: int, n_ita: int, n_deu: int, n_fra: int,
          seed: int = 0) -> tuple[Path, Path, Path]:
    """Write fur.txt, eng.txt, labels.txt under ``out``; returns their paths."""
    seed_dir, flores = DATA / "oldi-seed", DATA / "flores200" / "dev"
    fur, eng, ita = lines(seed_dir / "fur_Latn"), lines(seed_dir / "eng_Latn"), lines(seed_dir / "ita_Latn")
    ffur, fdeu, ffra = lines(flores / "fur_Latn.dev"), lines(flores / "deu_Latn.dev"), lines(flores / "fra_Latn.dev")
    rng = random.Random(seed)
    idx = list(range(len(fur)))
    rng.shuffle(idx)
    clean, rest = idx[:n_clean], idx[n_clean:]
    rows = [(fur[i], eng[i], "clean") for i in clean]
    for a, b in zip(rest[:n_mismatch], rest[n_mismatch : 2 * n_mismatch]):
        rows.append((fur[a], eng[b], "mismatch"))
    rows += [(fur[i], eng[i], "duplicate") for i in rng.sample(clean, n_dup)]
    rows += [(ita[i], eng[i], "italian") for i in rest[2 * n_mismatch : 2 * n_mismatch + n_ita]]
    fl = list(range(len(ffur)))
    rng.shuffle(fl)
    rows += [(ffur[i], fdeu[i], "german") for i in fl[:n_deu]]
    rows += [(ffur[i], ffra[i], "french") for i in fl[n_deu : n_deu + n_fra]]
    rng.shuffle(rows)
    # a duplicate's first occurrence must be the clean one: relabel so the earliest copy is "clean"
    seen: dict[tuple[str, str], int] = {}
    for j, (s, t, lab) in enumerate(rows):
        if lab in ("clean", "duplicate"):
            if (s, t) in seen:
                rows[j] = (s, t, "duplicate")
            else:
                seen[(s, t)] = j
                rows[j] = (s, t, "clean")
    out.mkdir(parents=True, exist_ok=True)
    paths = out / "fur.txt", out / "eng.txt", out / "labels.txt"
    for p, col in zip(paths, range(3)):
        p.write_text("".join(r[col] + "\n" for r in rows), encoding="utf-8")
    return paths


def scale_up(paths, out: Path, copies: int) -> tuple[Path, Path]:
    """``copies`` copies of the corpus, each pair made distinct by its copy number on both sides."""
    out.mkdir(parents=True, exist_ok=True)
    src, tgt = out / "fur.txt", out / "eng.txt"
    a, b = lines(paths[0]), lines(paths[1])
    with open(src, "w", encoding="utf-8") as fs, open(tgt, "w", encoding="utf-8") as ft:
        for c in range(copies):
            for s, t in zip(a, b):
                fs.write(f"{s} ({c})\n")
                ft.write(f"{t} ({c})\n")
    return src, tgt


def run_filter(src, tgt, out, encoder: str, extra: list[str], cache: list[str]) -> tuple[dict, float, int]:
    """(report, seconds, peak RSS in bytes of the filter process)."""
    cmd = [sys.executable, "-m", "xsimpp", "filter", "--src", str(src), "--tgt", str(tgt), "--src-lang", "fur",
           "--tgt-lang", "eng", "--out", str(out), "--encoder", encoder, "--no-progress", *cache, *extra]
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage: its peak RSS alone
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - t
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"filter failed: {err.read().strip()}")
    rss = usage.ru_maxrss * 1024  # Linux: kilobytes
    return json.loads((Path(out) / "report.json").read_text(encoding="utf-8")), seconds, rss


def precision(out: Path, labels: list[str]) -> tuple[float, float, int]:
    rows = [ln.split("\t") for ln in (out / "scores.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    kept = [labels[int(r[0]) - 1] for r in rows if r[1] == "kept"]
    n_clean = labels.count("clean")
    good = kept.count("clean")
    return (good / len(kept) if kept else float("nan")), good / n_clean, len(kept)


def measure_precision(args, work: Path) -> None:
    paths = build(work / "corpus", args.clean, args.mismatch, args.dup, args.ita, args.deu, args.fra)
    labels = lines(paths[2])
    counts = {lab: labels.count(lab) for lab in dict.fromkeys(labels)}
    eng = lines(paths[1])
    clean_tokens = sum(len(eng[i].split()) for i, lab in enumerate(labels) if lab == "clean")
    print(f"corpus: {len(labels)} pairs {counts}; clean English tokens {clean_tokens}")
    cache = ["--cache-dir", args.cache_dir] if args.cache_dir else ["--no-cache"]
    rules = {"paper (English side lid)": ["--lid", "english"],
             "both sides (--lid both --reject-lang ita)": ["--lid", "both", "--reject-lang", "ita"]}
    print(f"encoder {args.encoder}; load before: {os.getloadavg()[0]:.2f}")
    print("| rules | budget (English tokens) | kept | precision | recall | dropped by rule | s |")
    print("|---|---|---|---|---|---|---|")
    for name, extra in rules.items():
        for share in (0.5, 1.0):
            budget = int(clean_tokens * share)
            out = work / f"out-{len(extra)}-{share}"
            rep, sec, _ = run_filter(paths[0], paths[1], out, args.encoder, extra + ["--budget", str(budget)], cache)
            p, r, n = precision(out, labels)
            drops = ", ".join(f"{k} {v}" for k, v in rep["dropped"].items() if v and k != "over budget")
            print(f"| {name} | {budget} ({share:.0%} of clean) | {n} | {p:.3f} | {r:.3f} | {drops} | {sec:.0f} |")
    print(f"load after: {os.getloadavg()[0]:.2f}")


def measure_memory(args, work: Path) -> None:
    paths = build(work / "corpus", args.clean, args.mismatch, args.dup, args.ita, args.deu, args.fra)
    big = scale_up(paths, work / "big", 10)
    small = scale_up(paths, work / "small", 1)
    print(f"memory: chargram, no cache, --max-memory {args.max_memory} --chunk 1024; load before {os.getloadavg()[0]:.2f}")
    print("| input | pairs | peak RSS | s |")
    print("|---|---|---|---|")
    for rnd in range(args.rounds):
        for name, (s, t) in (("1x", small), ("10x", big)):
            n = sum(1 for _ in open(s, encoding="utf-8"))
            rep, sec, rss = run_filter(s, t, work / f"mem-{name}", "chargram", ["--max-memory", args.max_memory, "--chunk", "1024"], ["--no-cache"])
            print(f"| {name} (round {rnd + 1}) | {n} | {rss / 2**20:.0f} MiB | {sec:.1f} |")
    print(f"load after: {os.getloadavg()[0]:.2f}")


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--encoder", default="e5-small")
    ap.add_argument("--cache-dir", help="embedding cache for the precision runs (default: none)")
    ap.add_argument("--clean", type=bounds.rows, default=1500)
    ap.add_argument("--mismatch", type=bounds.count(0, bounds.MAX_ROWS), default=400)
    ap.add_argument("--dup", type=bounds.count(0, bounds.MAX_ROWS), default=300)
    ap.add_argument("--ita", type=bounds.count(0, bounds.MAX_ROWS), default=300)
    ap.add_argument("--deu", type=bounds.count(0, bounds.MAX_ROWS), default=150)
    ap.add_argument("--fra", type=bounds.count(0, bounds.MAX_ROWS), default=150)
    ap.add_argument("--rounds", type=bounds.repeats, default=2, help="interleaved rounds of the memory test")
    ap.add_argument("--max-memory", type=bounds.memory, default="64MB", help="the kNN engine's bound in the memory test")
    ap.add_argument("--memory-only", action="store_true")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--work", help="working folder (default: a temporary one)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        if not args.memory_only:
            measure_precision(args, work)
        if not args.no_memory:
            measure_memory(args, work)


if __name__ == "__main__":
    main()
