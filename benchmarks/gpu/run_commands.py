"""Every xsimpp command on one device, end to end with real weights, as a user types it: one record
file, log and wall time per command, plus the encoder's batch invariance and throughput there.

    python benchmarks/gpu/run_commands.py --device cuda --data DIR --augmented DIR --out OUT
    python benchmarks/gpu/run_commands.py --device cpu ...   # the reference the device run is held to

The data, the hard negatives and e5-small's (vocabulary-cut) weights come from
``benchmarks/gpu/bundle.py``; ``benchmarks/gpu/device.sh`` is the one script the GPU machine runs.
Each command runs in a fresh home (cold embedding cache; only the unpacked model folder is shared,
since unpacking is a one-off), in the order below, and writes its records as JSON lines
(``--json``) to OUT/records/NAME.jsonl. ``--shared-cache`` keeps one cache for every command (the
CPU reference, whose times are not compared, saves re-encoding the same sentences).
``benchmarks/gpu/compare.py`` holds the device's records against the CPU's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: machine.py, bounds.py
sys.path.insert(0, str(HERE))

import bounds
from bundle import LANGS, PAPER_LANGS
from machine import cpu_info

SHORT = LANGS  # FLORES-200 codes: "zho" alone is ambiguous (zho_Hans, zho_Hant)
PAPER = [lang.split("_")[0] for lang in PAPER_LANGS]
THREE = "kea,fur,swh"
STUDY_TOML = """\
# The device run's study: e5-small's layers (one forward pass fills every hf layer's cache) and
# OneAligner's mean pooling, three languages, 20 000 distractors.
[study]
name = "gpu"
languages = ["kea", "fur", "swh"]
flores_lines = 300
ntrex_lines = 200
tatoeba_lines = 300
seed = 0

[proxies]
xsim_margins = ["ratio"]
xsimpp_styles = ["strict"]
xsimpp_margin = "ratio"
xsimpp_extra_margins = []
error_type_subsets = false
tatoeba = true

[mining]
distractors = 20000
whole_sources = ["flores200-dev", "oldi-seed"]
fill_sources = ["tatoeba"]
margin = "ratio"
k = 4
folds = 5
fixed_threshold = 1.06

[analysis]
bootstrap = 200
permutations = 200
confidence = 0.95

[[encoders]]
label = "e5-L4"
name = "hf"
options = {{ layer = 4, device = "{device}" }}
family = "e5-small"

[[encoders]]
label = "e5-L8"
name = "hf"
options = {{ layer = 8, device = "{device}" }}
family = "e5-small"

[[encoders]]
label = "e5-L12"
name = "hf"
options = {{ layer = 12, device = "{device}" }}
family = "e5-small"

[[encoders]]
label = "oa-mean-L6"
name = "onealigner"
options = {{ layer = 6, scoring = "mean", normalization = "none", device = "{device}" }}
family = "e5-small"
"""


def commands(device: str, augmented: Path, e5_folder: Path, work: Path) -> dict[str, list[str]]:
    """name -> xsimpp argv. On the CPU, e5-small runs its torch float32 path: the one the GPU runs."""
    enc = ["--device", device, "--encoder-opt", "path=torch-float32"]
    eng = [] if device == "cpu" else ["--gemm-device", device]
    e5 = ["--encoder", "e5-small", *enc, *eng]
    out = {
        "eval-xsim-24": ["eval", *e5, "--langs", ",".join(SHORT)],
        "eval-xsimpp-10": ["eval", *e5, "--langs", ",".join(PAPER), "--augmented", str(augmented)],
        "eval-pxsim": ["eval", *e5, "--langs", THREE, "--rerank", "onealigner", "--pxsim-k", "8",
                       "--rerank-opt", f"device={device}"],
        "tatoeba": ["tatoeba", *e5, "--langs", "deu,fra,swh"],
        "bucc": ["bucc", *e5, "--pair", "zh-en", "--cv", "5"],
        "mteb-bitext": ["mteb-bitext", *e5, "--langs", "kea,fur,deu", "--both-directions"],
        "mining-f1": ["mining-f1", *e5, "--langs", "kea,fur", "--distractors", "20000",
                      "--whole-sources", "flores200-dev,ntrex128,oldi-seed", "--fill-sources", "tatoeba"],
        "mine": ["mine", "--src-emb", str(work / "src.npy"), "--tgt-emb", str(work / "tgt.npy"),
                 "--out", str(work / "mined"), *eng],
        "eval-hf-L8": ["eval", "--encoder", "hf", "--model", "e5-small", "--layer", "8", "--device", device, *eng,
                       "--langs", THREE],
        "eval-onealigner": ["eval", "--encoder", "onealigner", "--device", device, *eng, "--langs", THREE],
        "study": ["study", str(work / "study.toml"), "--out", str(work / "study")],
        "train-distill": ["train", "distill", "--langs", "kea,fur", "--teacher", "e5-small", "--student",
                          str(e5_folder), "--steps", "20", "--batch-size", "16", "--device", device,
                          "--out", str(work / "distill")],
        "eval-sbert": ["eval", "--encoder", "sbert", "--model", str(work / "e5-sbert"), "--device", device, *eng,
                       "--langs", THREE],
    }
    if device != "cpu":  # bf16 is the GPU's opt-in numerics; on a CPU it is slow and not the question
        out["eval-xsim-24-bf16"] = ["eval", "--encoder", "e5-small", "--device", device, "--autocast", "bf16", *eng,
                                    "--langs", ",".join(SHORT)]
    return out


def sbert_folder(e5_folder: Path, out: Path) -> None:
    """e5-small as a sentence-transformers model (its files linked, mean pooling): the sbert adapter
    on the same weights on both devices."""
    out.mkdir()
    for p in e5_folder.iterdir():
        (out / p.name).symlink_to(p)
    dim = json.loads((e5_folder / "config.json").read_text())["hidden_size"]
    (out / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (out / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 512, "do_lower_case": False}))
    (out / "1_Pooling").mkdir()
    (out / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": dim,
                                                               "pooling_mode_mean_tokens": True}))


def mine_inputs(work: Path, n: int = 50000, dim: int = 384) -> None:
    rng = np.random.default_rng(0)
    for name in ("src", "tgt"):
        x = rng.standard_normal((n, dim), dtype=np.float32)
        np.save(work / f"{name}.npy", x / np.linalg.norm(x, axis=1, keepdims=True))


def run_one(name: str, argv: list[str], env: dict, out: Path, timeout_s: float) -> dict:
    (out / "records").mkdir(parents=True, exist_ok=True)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    stores_results = argv[0] not in ("mine", "study", "train")
    full = [sys.executable, "-m", "xsimpp", *argv, "--no-progress"]
    if stores_results:
        full += ["--json", "--results-dir", str(out / "store" / name)]
    t = time.perf_counter()
    with open(out / "records" / f"{name}.jsonl", "w") as so, open(out / "logs" / f"{name}.log", "w") as se:
        try:
            rc = subprocess.run(full, env=env, stdout=so, stderr=se, timeout=timeout_s, check=False).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    wall = time.perf_counter() - t
    n = sum(line.startswith("{") for line in (out / "records" / f"{name}.jsonl").read_text().splitlines())
    row = {"name": name, "argv": ["xsimpp", *argv], "rc": rc, "wall_s": round(wall, 2), "records": n}
    print(f"{name:22} rc={rc} {wall:7.1f} s  {n} records", flush=True)
    return row


def probe_encoder(device: str, data: Path, out: Path | None = None) -> dict:
    """e5-small on the device: are a sentence's float32 vectors the same in any batch, and how fast
    does it encode FLORES devtest (24 languages + English) once the model is loaded."""
    import torch

    from xsimpp.encoders import create_encoder

    lines = [s for lang in LANGS + ["eng_Latn"]
             for s in (data / "flores200" / "devtest" / f"{lang}.devtest").read_text(encoding="utf-8").splitlines()]
    probe = lines[::97][:300]
    vecs = {}
    for bs in (1, 7, 256):
        enc = create_encoder("e5-small", device=device, path="torch-float32", batch_size=bs)
        vecs[bs] = enc.encode(probe)
    invariant = {f"batch_{bs}_equals_256": bool(np.array_equal(vecs[bs], vecs[256])) for bs in (1, 7)}
    invariant["max_abs_diff_1_vs_256"] = float(np.abs(vecs[1] - vecs[256]).max())
    # each sentence encoded with no companion at all (its batch filled to the fixed shape by copies)
    alone = np.stack([enc.encode([s])[0] for s in probe[:24]])
    invariant["alone_equals_256"] = bool(np.array_equal(alone, vecs[256][:24]))
    invariant["max_abs_diff_alone_vs_256"] = float(np.abs(alone - vecs[256][:24]).max())
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    budgets = {}  # seconds for all the lines at each token budget (the default's is the headline)
    for max_tokens in (4096, 16384, 65536):
        enc = create_encoder("e5-small", device=device, path="torch-float32", max_tokens=max_tokens)
        enc.encode(lines[:2000])  # warm-up: kernels, allocator
        sync()
        t = time.perf_counter()
        enc.encode(lines)
        sync()
        budgets[max_tokens] = time.perf_counter() - t
    secs = budgets[4096]
    profile = profile_encoding(device, lines[:4000], out) if out else None
    ids, _, _ = enc.tokens(lines)
    lengths = np.array([len(i) for i in ids])  # the ids hold <s> and </s> already
    tokens = int(lengths.sum())
    from encoder_flops import dims, gemm_flops
    from xsimpp.encoders.e5_weights import ensure_folder

    flops = gemm_flops(lengths, *dims(ensure_folder()))  # the sentences' own widths, no padding
    return {**invariant, "sentences": len(lines), "tokens": tokens, "token_count": "ids", "encode_s": round(secs, 3),
            "encode_s_by_max_tokens": {str(k): round(v, 3) for k, v in budgets.items()},
            "sentences_per_s": round(len(lines) / secs, 1), "tokens_per_s": round(tokens / secs),
            "model_gflop": round(flops / 1e9, 1), "achieved_tflops": round(flops / secs / 1e12, 2),
            **({"profile": profile} if profile else {})}


def profile_encoding(device: str, lines: list[str], out: Path) -> dict:
    """One encode of ``lines`` at the default budget under torch's profiler: how much of its wall
    time the device's kernels were busy (the rest the device waited on the host), and the kernels
    and host calls that took the most (the table in OUT/logs/encode_profile.txt)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from xsimpp.encoders import create_encoder

    cuda = device.startswith("cuda")
    enc = create_encoder("e5-small", device=device, path="torch-float32")
    enc.encode(lines[:500])  # warm-up outside the trace
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    with profile(activities=activities) as prof:
        t = time.perf_counter()
        enc.encode(lines)
        sync()
        wall = time.perf_counter() - t
    events = prof.key_averages()
    busy = sum(e.self_device_time_total for e in events) / 1e6 if cuda else None  # microseconds
    sort = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    (out / "logs").mkdir(parents=True, exist_ok=True)
    (out / "logs" / "encode_profile.txt").write_text(events.table(sort_by=sort, row_limit=25) + "\n", encoding="utf-8")
    return {"sentences": len(lines), "wall_s": round(wall, 3),
            "device_busy_s": None if busy is None else round(busy, 3),
            "device_busy_share": None if busy is None else round(busy / wall, 3)}


def gemm_rate(device: str) -> dict:
    """The device's float32 matrix-product rate (no TF32), the bound encoding and the engine are held to."""
    import torch

    if not device.startswith("cuda"):
        return {}
    n = 8192
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        a @ b
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    return {"fp32_gemm_tflops": round(2 * n ** 3 / float(np.median(times)) / 1e12, 1),
            "matmul_precision": torch.get_float32_matmul_precision(), "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__, "cuda": torch.version.cuda}


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--augmented", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", help="comma-separated command names (default: all)")
    ap.add_argument("--shared-cache", action="store_true")
    ap.add_argument("--skip-probe", action="store_true")
    ap.add_argument("--timeout", type=bounds.count(1, 86400), default=3600, help="seconds one command may run")
    args = ap.parse_args(argv)
    from xsimpp.encoders.e5_weights import ensure_folder

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    mine_inputs(work)
    (work / "study.toml").write_text(STUDY_TOML.format(device=args.device), encoding="utf-8")
    t0 = time.perf_counter()
    e5_folder = ensure_folder()  # the one-off unpacking, outside every command's time
    unpack_s = time.perf_counter() - t0
    models = e5_folder.parent
    sbert_folder(e5_folder, work / "e5-sbert")
    env0 = {**os.environ, "XSIMPP_DATA_DIR": str(args.data.resolve()), "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    rows: list[dict] = []
    result = {"device": args.device, "host": cpu_info(), "unpack_s": round(unpack_s, 1), "commands": rows}
    todo = commands(args.device, args.augmented.resolve(), e5_folder, work)
    only = set(args.only.split(",")) if args.only else set(todo)
    for name, cmd in todo.items():
        if name not in only:
            continue
        home = out / "homes" / ("shared" if args.shared_cache else name)
        home.mkdir(parents=True, exist_ok=True)
        if not (home / "models").exists():
            (home / "models").symlink_to(models, target_is_directory=True)
        rows.append(run_one(name, cmd, {**env0, "XSIMPP_HOME": str(home)}, out, args.timeout))
        if name == "mine" and (work / "mined").is_dir():  # now: a later command's timeout must not lose them
            result["mine_digests"] = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                                      for p in sorted((work / "mined").glob("*.npy"))}
        result["commands"] = rows
        (out / "commands.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.device.startswith("cuda"):
        result["gemm"] = gemm_rate(args.device)
    if not args.skip_probe:
        result["encoder"] = probe_encoder(args.device, args.data.resolve(), out)
        print(json.dumps(result["encoder"]), flush=True)
    (out / "commands.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"{sum(r['rc'] == 0 for r in rows)} of {len(rows)} commands exited 0")


if __name__ == "__main__":
    main()
