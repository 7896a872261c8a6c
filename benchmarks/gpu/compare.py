"""The GPU run held against the CPU reference: per command, whether it ran and how long it took, and
whether its records equal the CPU's (values, error counts, signatures less the fields the device's
numerics change); the fidelity table (FLORES-200 errors per language, GPU float32 and bf16 against
the CPU's float32); the engine's and the encoder's figures against the GPU's GEMM bound.

    python benchmarks/gpu/compare.py collect --gpu RUN_DIR --cpu RUN_DIR [--cpu RUN_DIR] [--extra DIR]
    python benchmarks/gpu/compare.py summary     # benchmarks/results/gpu/summary.json from the files below
    python benchmarks/gpu/compare.py table       # the docs' tables and figures, printed
    python benchmarks/gpu/compare.py docs        # ... written into docs/scaling.md (tests/test_gpu_results.py checks)

``collect`` copies the small files (records as JSON lines, commands.json, the engine JSONs) into
benchmarks/results/gpu/{gpu,cpu}/; ``summary`` and ``table`` read only those committed files.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "results" / "gpu"
# Signature fields a device may change: the encoder's config names its numerics (device, CUDA, GPU
# model), so its fingerprint differs; every other field must be equal.
NUMERICS_FIELDS = ("encoder_fingerprint",)
E5_SMALL_DIMS = (384, 1536, 12)  # hidden, feed-forward, layers: what runs before 0.16.0 encoded, unrecorded


def recounted(encoder: dict | None) -> dict | None:
    """The encoder figures of a run, with its tokens and GEMM work as ``encoder_flops`` counts them.
    Runs before 0.16.0 (no ``token_count`` field) added each sentence's <s> and </s> to ids that
    already held them: 2 tokens too many a sentence. Recounted exactly from the totals, since a
    width w counted as w + 2 adds 4 h^2 + 2 h ff per token and (w + 2)^2 - w^2 = 4 w + 4 to attention."""
    if not encoder or encoder.get("token_count") == "ids":
        return encoder
    h, ff, layers = E5_SMALL_DIMS
    n, secs = encoder["sentences"], encoder["encode_s"]
    tokens = encoder["tokens"] - 2 * n
    extra = 2 * layers * (2 * n * (4 * h * h + 2 * h * ff) + 2 * h * (4 * tokens + 4 * n))
    gflop = round(encoder["model_gflop"] - extra / 1e9, 1)
    return {**encoder, "tokens": tokens, "tokens_per_s": round(tokens / secs), "model_gflop": gflop,
            "achieved_tflops": round(gflop / secs / 1e3, 2), "token_count": "ids (recounted from a run that added 2)"}


def read_records(folder: Path) -> dict[str, list[dict]]:
    out = {}
    for p in sorted((folder / "records").glob("*.jsonl")):
        out[p.stem] = [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.startswith("{")]
    return out


def record_key(r: dict) -> str:
    sig = r.get("signature", {})
    params = {k: v for k, v in sig.get("params", {}).items() if k != "rerank"}  # the reranker's cfg names numerics
    return json.dumps([r.get("metric"), r.get("src_lang"), r.get("tgt_lang"), sig.get("dataset"), sig.get("split"),
                       params], sort_keys=True)


def shorten(arg: str) -> str:
    """A run's own paths (its data, model and work folders) as the names the docs use."""
    if arg.count(",") >= 9:  # a long language list: the fidelity table names them
        return f"<{arg.count(',') + 1} languages>"
    if "/" not in arg:
        return arg
    name = arg.rstrip("/").rsplit("/", 1)[-1]
    if name.startswith("multilingual-e5-small"):
        return "E5_SMALL_FOLDER"
    return {"augmented": "AUGMENTED_DIR"}.get(name, name if "." in name else name.upper().replace("-", "_"))


def compare_records(gpu: list[dict], cpu: list[dict]) -> dict:
    cpu_by = {record_key(r): r for r in cpu}
    same, differ, fields = 0, [], set()
    for r in gpu:
        c = cpu_by.get(record_key(r))
        if c is None:
            differ.append({"key": record_key(r), "cpu": None, "gpu": r.get("value")})
            continue
        if (r.get("value"), r.get("errors"), r.get("n")) == (c.get("value"), c.get("errors"), c.get("n")):
            same += 1
        else:
            differ.append({"key": record_key(r), "cpu": c.get("value"), "gpu": r.get("value"),
                           "cpu_errors": c.get("errors"), "gpu_errors": r.get("errors")})
        sg, sc = r.get("signature", {}), c.get("signature", {})
        fields |= {k for k in set(sg) | set(sc) if sg.get(k) != sc.get(k)}
    return {"records": len(gpu), "cpu_records": len(cpu), "same_values": same, "differ": differ,
            "signature_fields_differing": sorted(fields),
            "signature_differs_beyond_numerics": sorted(fields - set(NUMERICS_FIELDS))}


def errors_by_lang(records: list[dict]) -> dict[str, int]:
    return {r["src_lang"]: r["errors"] for r in records if r.get("metric") == "xsim"}


def summary() -> dict:
    gpu, cpu = read_records(RESULTS / "gpu"), read_records(RESULTS / "cpu")
    run = json.loads((RESULTS / "gpu" / "commands.json").read_text(encoding="utf-8"))
    cmds = []
    for row in run["commands"]:
        name = row["name"]
        entry = {"name": name, "command": " ".join(shorten(a) for a in row["argv"]), "rc": row["rc"],
                 "wall_s": row["wall_s"], "call": row.get("call", 1)}
        if name in cpu and gpu.get(name):
            entry.update(compare_records(gpu[name], cpu[name]))
        cmds.append(entry)
    fid = {}
    if "eval-xsim-24" in gpu and "eval-xsim-24" in cpu:
        c, g = errors_by_lang(cpu["eval-xsim-24"]), errors_by_lang(gpu["eval-xsim-24"])
        b = errors_by_lang(gpu.get("eval-xsim-24-bf16", []))
        fid = {"languages": len(g), "cpu_float32": c, "gpu_float32": g, "gpu_bf16": b,
               "float32_equal_languages": sum(c.get(k) == v for k, v in g.items()),
               "bf16_total_minus_float32": sum(b.values()) - sum(g.values()) if b else None}
    out = {"device": run.get("gemm", {}).get("gpu"), "host": run.get("host"), "gemm": run.get("gemm"),
           "encoder": recounted(run.get("encoder")), "commands": cmds, "fidelity": fid}
    cpu_run = RESULTS / "cpu" / "commands.json"
    if cpu_run.is_file() and "mine_digests" in run:
        out["mine_arrays_equal_cpu"] = json.loads(cpu_run.read_text())["mine_digests"] == run["mine_digests"]
    cells = {side: RESULTS / side / "study_cells.csv" for side in ("gpu", "cpu")}
    if all(p.is_file() for p in cells.values()):
        import csv

        (g_head, *g_rows), (_, *c_rows) = ([tuple(r) for r in csv.reader(p.open(encoding="utf-8"))]
                                           for p in cells.values())
        unequal = [(col, float(a), float(b)) for gr, cr in zip(g_rows, c_rows)
                   for col, a, b in zip(g_head, gr, cr) if a != b]
        out["study_cells"] = {"cells": sum(len(r) for r in g_rows), "equal": sum(len(r) for r in g_rows) - len(unequal),
                              "columns_differing": sorted({col for col, _, _ in unequal}),
                              "max_relative_difference": max((abs(a - b) / abs(b) for _, a, b in unequal), default=0.0)}
    for name in ("device_selection", "mine_device_200k"):
        p = RESULTS / "gpu" / f"{name}.json"
        if p.is_file():
            out[name] = json.loads(p.read_text(encoding="utf-8"))
    return out


def table(s: dict) -> str:
    lines = ["| call | command | exit | wall (s) | values equal to the CPU's | signature fields that differ |",
             "|---|---|---|---|---|---|"]
    for c in s["commands"]:
        if "records" in c:
            eq = f"{c['same_values']} of {c['records']} records"
            sig = ", ".join(c["signature_fields_differing"]) or "none"
        elif c["name"] == "study" and c["rc"] == 0 and "study_cells" in s:
            sc = s["study_cells"]
            eq = f"{sc['equal']} of {sc['cells']} cells" + (
                f" ({', '.join(sc['columns_differing'])} differ by up to {sc['max_relative_difference']:.0e} of "
                f"their value)" if sc["columns_differing"] else "")
            sig = "-"
        elif c["name"] == "mine":
            eq, sig = "not compared (its arrays' digests were lost with call 1's time limit)", "-"
        else:
            eq, sig = "-", "-"
        lines.append(f"| {c['call']} | `{c['command']}` | {c['rc']} | {c['wall_s']:.1f} | {eq} | {sig} |")
    return "\n".join(lines)


def fidelity_table(s: dict) -> str:
    f = s["fidelity"]
    lines = ["| source -> eng_Latn | CPU float32 | GPU float32 | GPU bf16 autocast |", "|---|---|---|---|"]
    for lang, errors in f["gpu_float32"].items():
        lines.append(f"| {lang} | {f['cpu_float32'][lang]} | {errors} | {f['gpu_bf16'].get(lang, '-')} |")
    lines.append(f"| all {f['languages']} | {sum(f['cpu_float32'].values())} | {sum(f['gpu_float32'].values())} | "
                 f"{sum(f['gpu_bf16'].values())} |")
    return "\n".join(lines)


def figures(s: dict) -> str:
    """The encoder's and the engine's figures against the GPU's float32 GEMM rate, as the docs say them."""
    g, e = s["gemm"], s["encoder"]
    sel = {r["shape"]: r for r in s["device_selection"]["runs"]}
    m = s["mine_device_200k"]
    rate = g["fp32_gemm_tflops"] * 1e12

    def bound_ms(shape: str) -> float:
        rows, cols, dim = (int(v) for v in shape.split("x"))
        return 2 * rows * cols * dim / rate * 1e3

    mine_bound = 2 * m["n"] * m["n"] * m["dim"] / rate
    out = [f"- GPU: {g['gpu']}, torch {g['torch']} (CUDA {g['cuda']}), float32 matmul precision "
           f"'{g['matmul_precision']}' (no TF32); its float32 GEMM: {g['fp32_gemm_tflops']} TFLOP/s "
           f"(8192 x 8192 x 8192, median of 10). Host: {s['host']['cpu']}, {s['host']['cores']} cores.",
           f"- Encoding (e5-small, torch float32, batch 256, FLORES-200 devtest of 24 languages and English): "
           f"{e['sentences']} sentences, {e['tokens']} tokens in {e['encode_s']} s once loaded = "
           f"{e['sentences_per_s']:.0f} sentences/s; its GEMM work ({e['model_gflop'] / 1e3:.1f} TFLOP) ran at "
           f"{e['achieved_tflops']} TFLOP/s, {e['achieved_tflops'] / g['fp32_gemm_tflops']:.0%} of the GEMM rate.",
           f"- Batch invariance on the GPU: a sentence's float32 vector in a batch of 1 or 7 equals its vector "
           f"in a batch of 256: {'yes' if e['batch_1_equals_256'] and e['batch_7_equals_256'] else 'no'} "
           f"(largest difference {e['max_abs_diff_1_vs_256']:.1e}).",
           ]
    if "encode_s_by_max_tokens" in e:  # runs since 0.15.0: the token budget's effect
        shares = ", ".join(f"{k} tokens {e['model_gflop'] / v / 1e3 / g['fp32_gemm_tflops']:.0%}"
                           for k, v in e["encode_s_by_max_tokens"].items())
        out.append(f"- The same encoding's share of the GEMM rate by token budget (`max_tokens`): {shares}.")
    if e.get("profile", {}).get("device_busy_share") is not None:  # runs since 0.16.0
        pr = e["profile"]
        out.append(f"- Under torch's profiler, {pr['sentences']} sentences at the default budget: the GPU's kernels "
                   f"were busy {pr['device_busy_s']} s of {pr['wall_s']} s ({pr['device_busy_share']:.0%}); the rest it "
                   f"waited on the host.")
    if "alone_equals_256" in e:  # runs since the fixed shapes (0.15.0)
        out.append(f"- A sentence encoded alone equals its vector among 256: "
                   f"{'yes' if e['alone_equals_256'] else 'no'} (largest difference {e['max_abs_diff_alone_vs_256']:.1e}).")
    for shape, r in sel.items():
        ms = r["torch cuda gemm, device selection s"] * 1e3
        held = r.get("torch cuda gemm, device selection, targets held s")  # runs since 0.16.0
        held_text = (f" ({held * 1e3:.1f} ms with the targets held on the device, {held * 1e3 / bound_ms(shape):.0f}x)"
                     if held is not None else "")
        out.append(f"- Exact top-4 both ways, {shape}, selection on the device: {ms:.1f} ms{held_text} against "
                   f"{bound_ms(shape):.2f} ms of GEMM at that rate ({ms / bound_ms(shape):.0f}x); outputs identical "
                   f"to the CPU engine's: {'yes' if r['identical'] else 'no'}.")
    out.append(f"- Mining {m['n']} x {m['n']} x {m['dim']} both ways (`bench_mine_device.py --only device`, "
               f"{m['shards']} shards at --max-memory {m['max_memory']}): {m['device_s']} s against {mine_bound:.2f} s "
               f"of GEMM ({m['device_s'] / mine_bound:.0f}x).")
    return "\n".join(out)


BLOCKS = {"gpu-commands": table, "gpu-fidelity": fidelity_table, "gpu-figures": figures}
DOCS = RESULTS.parent.parent.parent / "docs" / "scaling.md"


def write_docs() -> None:
    """Rewrite each ``<!-- block -->`` of docs/scaling.md (the text up to the next blank line)."""
    page, s = DOCS.read_text(encoding="utf-8"), summary()
    for name, render in BLOCKS.items():
        head = f"<!-- {name} -->\n\n"
        start = page.index(head) + len(head)
        end = page.index("\n\n", start)
        page = page[:start] + render(s) + page[end:]
    DOCS.write_text(page, encoding="utf-8")


def collect(gpu: Path, cpus: list[Path], extra: Path | None) -> None:
    for side, folders in (("gpu", [gpu]), ("cpu", cpus)):
        dest = RESULTS / side
        shutil.rmtree(dest, ignore_errors=True)
        (dest / "records").mkdir(parents=True)
        merged = None
        for f in folders:
            for p in sorted((f / "records").glob("*.jsonl")):
                shutil.copy(p, dest / "records" / p.name)
            run = json.loads((f / "commands.json").read_text(encoding="utf-8"))
            if merged is None:
                merged = run
            else:
                merged["commands"] += run["commands"]
                merged.update({k: v for k, v in run.items() if k != "commands" and k not in merged})
        (dest / "commands.json").write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
    if extra:
        for p in sorted(extra.glob("*.json")):
            if p.name != "commands.json":
                shutil.copy(p, RESULTS / "gpu" / p.name)
    for side, folders in (("gpu", [gpu]), ("cpu", cpus)):
        for f in folders:
            if (f / "work" / "study" / "cells.csv").is_file():
                shutil.copy(f / "work" / "study" / "cells.csv", RESULTS / side / "study_cells.csv")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--gpu", type=Path, required=True)
    c.add_argument("--cpu", type=Path, action="append", required=True)
    c.add_argument("--extra", type=Path)
    sub.add_parser("summary")
    sub.add_parser("table")
    sub.add_parser("docs")
    args = ap.parse_args(argv)
    if args.cmd == "collect":
        collect(args.gpu, args.cpu, args.extra)
    elif args.cmd == "docs":
        write_docs()
    elif args.cmd == "summary":
        (RESULTS / "summary.json").write_text(json.dumps(summary(), indent=1) + "\n", encoding="utf-8")
    else:
        s = summary()
        print(table(s), fidelity_table(s), figures(s), sep="\n\n")


if __name__ == "__main__":
    main()
