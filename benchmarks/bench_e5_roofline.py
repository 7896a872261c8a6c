"""How close e5-small's float32 paths encode to the CPU's float32 GEMM rate, and what that bound
allows the cold FLORES-200 runs (issue 52's "every language cold <= 40 % of torch float32's, <= 20
min" and the ten-language target).

Three measurements in one run, on the CPU at hand:

1. **Work**: every FLORES-200 devtest file tokenised as e5-small encodes it (prompt and specials
   included), its GEMM work counted at the sentences' own widths and at the bucket widths the paths
   run (``batching.bucket_width``: a sentence is padded to the next multiple of 8), with
   ``encoder_flops`` (linear layers plus attention's two products; nothing else counted).
2. **Bound**: each path's own float32 GEMM rate at e5-small's linear shapes (4096 rows; Q/K/V/output
   384 -> 384, feed-forward 384 -> 1536 -> 384), weighted by the work each shape does: OpenVINO
   (a one-MatMul model compiled with the encoder's own settings) and torch (``torch.matmul`` into a
   preallocated output). Measured in every round beside that path's encoding; each shape's best
   timing of ten calls in a row over the rounds.
3. **Rate**: both paths encode the same sentences (``--n`` lines of each of the ten xsim++ languages
   and English, as ``bench_e5_paths.py speed``), interleaved, median of ``--rounds``; the padded work
   of those sentences over that time is the rate each path reaches, and its share of its bound.

Also: how many vectors change when a sentence is padded wider (why a width must be a function of
the sentence alone, so padding cannot simply be dropped). From these: the default's share of torch float32's time in this run and what it would be at 100 % of
OpenVINO's GEMM rate (the 40 % target's question, answered by rates measured side by side), and the
shortest time the whole devtest set (the ``--langs all`` run's 206 448 sentences) could take at that
rate, beside the committed cold run on a CPU of the same model (``results/flores_runs/``, another day);
where the other library's float32 GEMM is the faster (torch's MKL on Intel CPUs), what a float32 path
at its rate would take.

    python benchmarks/bench_e5_roofline.py [--n 100] [--rounds 3] [--json OUT]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bounds  # noqa: E402
from bench_e5_paths import RESULTS, data_dir, speed_sentences  # noqa: E402
from bench_flores_runs import path_of  # noqa: E402
from encoder_flops import dims, gemm_flops, linear_shapes  # noqa: E402
from machine import cpu_info, git_commit  # noqa: E402

PATHS = ("torch-float32", "openvino-float32")
FLORES_RUNS = RESULTS.parent / "flores_runs"


def best_rate(run, flops: float, seconds: float = 0.5, calls: int = 10) -> float:
    """GFLOP/s of ``run()`` (``flops`` a call): the best timing of ``calls`` calls in a row over a
    ``seconds`` loop, after a warm-up (a row of calls, so thread wake-ups do not count)."""
    for _ in range(3):
        run()
    best, start = float("inf"), time.perf_counter()
    while time.perf_counter() - start < seconds:
        t = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - t) / calls)
    return flops / best / 1e9


def openvino_matmul(m: int, k: int, n: int):
    import openvino
    from openvino import opset13 as ops

    from xsimpp.encoders.openvino_cpu import COMPILE_CONFIG

    a = ops.parameter([m, k], np.float32)
    w = ops.constant(np.random.default_rng(0).standard_normal((k, n)).astype(np.float32))
    compiled = openvino.Core().compile_model(openvino.Model([ops.matmul(a, w, False, False)], [a]), "CPU",
                                             dict(COMPILE_CONFIG))
    request, x = compiled.create_infer_request(), np.random.default_rng(1).standard_normal((m, k)).astype(np.float32)
    return lambda: request.infer({0: x})


def torch_matmul(m: int, k: int, n: int):
    import torch

    a, w, out = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
    return lambda: torch.matmul(a, w, out=out)


def gemm_bound(rates: list[dict[str, float]], hidden: int, ff: int) -> dict:
    """Each linear shape's best rate over the rounds (``rates``: one {shape: GFLOP/s} a round) and
    their work-weighted rate (total work over total time)."""
    shapes, work, secs = {}, 0.0, 0.0
    for m, k, n, count in linear_shapes(hidden, ff):
        key, flops = f"{m}x{k}x{n}", 2.0 * m * k * n
        shapes[key] = round(max(r[key] for r in rates), 1)
        work += count * flops
        secs += count * flops / shapes[key]
    weighted = [sum(c * 2.0 * m * k * n for m, k, n, c in linear_shapes(hidden, ff)) /
                sum(c * 2.0 * m * k * n / r[f"{m}x{k}x{n}"] for m, k, n, c in linear_shapes(hidden, ff)) for r in rates]
    return {"shapes_gflops": shapes, "gflops": round(work / secs, 1), "by_round": [round(v, 1) for v in weighted]}


def shape_rates(make, hidden: int, ff: int) -> dict[str, float]:
    return {f"{m}x{k}x{n}": best_rate(make(m, k, n), 2.0 * m * k * n) for m, k, n, _ in linear_shapes(hidden, ff)}


def devtest_work(encoder, hidden: int, ff: int, layers: int) -> dict:
    """Sentences, tokens and GEMM work of every FLORES-200 devtest file, unpadded and as run."""
    from xsimpp.encoders.backbone.batching import bucket_width

    files = sorted((data_dir() / "flores200" / "devtest").glob("*.devtest"))
    sentences = [s for f in files for s in f.read_text(encoding="utf-8").splitlines()]
    ids, _, _ = encoder.tokens(sentences)
    own = np.array([len(x) for x in ids])
    run = np.array([bucket_width(int(n)) for n in own])
    return {"files": len(files), "sentences": len(sentences), "tokens": int(own.sum()), "padded_tokens": int(run.sum()),
            "tflop": round(gemm_flops(own, hidden, ff, layers) / 1e12, 2),
            "padded_tflop": round(gemm_flops(run, hidden, ff, layers) / 1e12, 2)}


def width_dependence(encoder, extra: int = 17, per_file: int = 60) -> dict:
    """How many vectors change when their sentence runs padded ``extra`` tokens wider than its own
    length (OpenVINO float32, each sentence alone): why a padded width must be a function of the
    sentence. The first ``per_file`` devtest lines of four scripts."""
    from xsimpp.encoders.backbone.batching import pad_id

    root = data_dir() / "flores200" / "devtest"
    sents = [s for code in ("fao_Latn", "zul_Latn", "bod_Tibt", "jpn_Jpan")
             for s in (root / f"{code}.devtest").read_text(encoding="utf-8").splitlines()[:per_file]]
    backend = encoder.backend
    ids, _, _ = encoder.tokens(sents)
    pad = pad_id(backend.tokenizer)

    def vector(row, width):
        x = np.full((1, width), pad, dtype=np.int64)
        att = np.zeros((1, width), dtype=np.int64)
        x[0, : len(row)], att[0, : len(row)] = row, 1
        return backend.pooled(backend.model.infer(x, att), att, "mean")[0]

    diffs = [float(np.abs(vector(r, len(r)) - vector(r, len(r) + extra)).max()) for r in ids]
    return {"sentences": len(sents), "extra_tokens": extra, "changed": sum(d > 0 for d in diffs),
            "max_abs_difference": max(diffs)}


def committed_cold(cpu: str, command: str = "--langs all") -> dict[str, float]:
    """The fastest committed cold wall time of ``command`` per path on CPUs of this model name
    (results/flores_runs/, every session's folder): another vendor's time is no floor's check."""
    best: dict[str, float] = {}
    for f in sorted(FLORES_RUNS.rglob("*.json")):
        run = json.loads(f.read_text(encoding="utf-8"))
        if run["cpu"] != cpu:
            continue
        for r in run["runs"]:
            if r["phase"] == "cold" and r["command"] == command and r["exit"] == 0:
                path = path_of(r["records"][0])
                best[path] = min(best.get(path, float("inf")), r["wall_s"])
    return best


def measure(args) -> dict:
    import torch

    from xsimpp.encoders import create_encoder
    from xsimpp.encoders.backbone.batching import bucket_width
    from xsimpp.encoders.e5_weights import ensure_folder

    machine = {**cpu_info(), "torch_threads": torch.get_num_threads()}
    hidden, ff, layers = dims(ensure_folder())
    encoders = {p: create_encoder("e5-small", path=p) for p in PATHS}
    work = devtest_work(encoders["openvino-float32"], hidden, ff, layers)
    work["width_dependence"] = width_dependence(encoders["openvino-float32"])
    gemms = {"openvino-float32": openvino_matmul, "torch-float32": torch_matmul}
    sents = speed_sentences(args.n)
    ids, _, _ = encoders["openvino-float32"].tokens(sents)
    sample_tflop = gemm_flops([bucket_width(len(x)) for x in ids], hidden, ff, layers) / 1e12
    for enc in encoders.values():  # load, compile, warm
        enc.encode(sents[:64])
    times: dict[str, list[float]] = {p: [] for p in PATHS}
    rates: dict[str, list[dict[str, float]]] = {p: [] for p in PATHS}
    for r in range(args.rounds):  # each round: each path's GEMMs, then its encoding, paths interleaved
        for p in PATHS if r % 2 == 0 else PATHS[::-1]:
            rates[p].append(shape_rates(gemms[p], hidden, ff))
            t = time.perf_counter()
            encoders[p].encode(sents)
            times[p].append(time.perf_counter() - t)
    bound = {p: gemm_bound(rates[p], hidden, ff) for p in PATHS}
    paths = {}
    for p in PATHS:
        secs = statistics.median(times[p])
        rate = sample_tflop * 1e3 / secs
        paths[p] = {"gemm_bound": bound[p], "seconds": [round(x, 3) for x in times[p]],
                    "sent_per_s": round(len(sents) / secs, 1), "gflops": round(rate, 1),
                    "share_of_bound": round(rate / bound[p]["gflops"], 3),
                    "all_langs_floor_s": round(work["padded_tflop"] * 1e3 / bound[p]["gflops"], 1)}
    machine.update(load_after=round(os.getloadavg()[0], 2))
    return {"machine": machine, "commit": git_commit(), "model": {"hidden": hidden, "ff": ff, "layers": layers},
            "devtest": work, "sample": {"sentences": len(sents), "padded_tflop": round(sample_tflop, 3),
                                        "rounds": args.rounds}, "paths": paths,
            "committed_cold_all_langs_s": committed_cold(machine["cpu"])}


def clock(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:04.1f} s"


def lines(r: dict) -> list[str]:
    """docs/performance.md's roofline block, from a ``--json`` file."""
    w, m, paths = r["devtest"], r["machine"], r["paths"]
    out = [f"- Work: the {w['files']} FLORES-200 devtest files, {w['sentences']:,} sentences, {w['tokens']:,} tokens "
           f"with the prompt and specials ({w['padded_tokens']:,} as run, padded to multiples of 8: "
           f"+{100 * (w['padded_tokens'] / w['tokens'] - 1):.1f} %), {w['padded_tflop']} TFLOP of GEMM work as run "
           f"({w['tflop']} unpadded)."]
    wd = w["width_dependence"]
    out.append(f"- A vector depends on the width it is padded to: {wd['changed']} of {wd['sentences']} FLORES "
               f"sentences' OpenVINO float32 vectors change (by up to {wd['max_abs_difference']:.1e}) when padded "
               f"{wd['extra_tokens']} tokens wider than their own length.")
    for p, row in paths.items():
        b = row["gemm_bound"]
        shapes = ", ".join(f"{k} {v}" for k, v in b["shapes_gflops"].items())
        out.append(f"- {p}: its float32 GEMM at e5-small's shapes {b['gflops']} GFLOP/s ({shapes}; the rounds "
                   f"{min(b['by_round'])}–{max(b['by_round'])}); encoding "
                   f"{row['sent_per_s']} sentences/s = {row['gflops']} GFLOP/s, **{100 * row['share_of_bound']:.0f} % "
                   f"of that bound**.")
    ov, torch = paths["openvino-float32"], paths["torch-float32"]
    out.append(f"- In this run the default took {100 * torch['gflops'] / ov['gflops']:.1f} % of torch float32's time; "
               f"at 100 % of OpenVINO's GEMM rate, torch as measured, it would take "
               f"**{100 * torch['gflops'] / ov['gemm_bound']['gflops']:.1f} %**.")
    fast = max(paths, key=lambda p: paths[p]["gemm_bound"]["gflops"])
    if fast != "openvino-float32":  # the other library's GEMM is this CPU's float32 ceiling
        top = paths[fast]["gemm_bound"]["gflops"]
        out.append(f"- The faster float32 GEMM here is {fast}'s ({top} GFLOP/s, {top / ov['gemm_bound']['gflops']:.2f}x "
                   f"OpenVINO's): a float32 path at 100 % of it would take **{100 * torch['gflops'] / top:.1f} %** of "
                   f"torch float32's time, {top / torch['gflops']:.2f}x its rate.")
    unpadded = w["tflop"] * 1e3 / ov["gemm_bound"]["gflops"]
    cold = r["committed_cold_all_langs_s"].get("openvino-float32")
    out.append(f"- The whole devtest set at 100 % of that rate: {clock(ov['all_langs_floor_s'])} as run, "
               f"{clock(unpadded)} unpadded; 20 minutes needs {100 * ov['all_langs_floor_s'] / 1200:.0f} % of the rate "
               f"over a whole run" + (f" (the committed cold `--langs all` run, another day: {clock(cold)})." if cold
                                      else " (no committed cold `--langs all` run of it on this CPU)."))
    out.append(f"  ({m['cpu']}, {m['isa']}, {m['cores']} cores, load {m['load']} before and {m['load_after']} after; "
               f"{r['sample']['sentences']} sentences, median of {r['sample']['rounds']} interleaved rounds, each "
               f"path's GEMMs timed in every round beside its encoding.)")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=bounds.count(1, 1012), default=100, help="lines of each of the 11 languages timed")
    ap.add_argument("--rounds", type=bounds.repeats, default=3)
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--lines", metavar="JSON", help="print the docs' lines of a --json file and stop")
    args = ap.parse_args(argv)
    if args.lines:
        print("\n".join(lines(json.loads(Path(args.lines).read_text(encoding="utf-8")))))
        return 0
    result = measure(args)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print("\n".join(lines(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
