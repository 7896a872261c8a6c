"""int8 variants of e5-small, chosen on FLORES-200 *dev* (never devtest, Tatoeba test or a study's
pools): how often each one's xsim and xsim++ decisions disagree with torch float32's, and how fast
it runs (issue 52 item 2).

The statistical gates (``bench_e5_paths.py gates``) compare a path with torch float32 sentence by
sentence, and the xsim++ gate's interval is as wide as the paths' disagreements make it: the number
to drive down is the count of disagreeing decisions, and dev is where a variant may be chosen.

Variants are built with OpenVINO's and NNCF's own tools:

- ``MODE[+IGNORED]@GROUP``: ``nncf.compress_weights`` (``sym`` = INT8_SYM per output channel, what
  ``path=openvino-int8-dynamic`` ships; ``asym`` = INT8_ASYM), with an ignored scope kept in float32
  (``emb`` the embedding tables, ``ffnout`` every feed-forward output projection, ``emb-ffnout``
  both, ``last`` / ``first`` / ``firstlast`` whole blocks), run with OpenVINO's dynamic activation
  quantisation in groups of GROUP channels (``0``: weights only, activations in float32);
- ``ac:DROP@0``: static int8 by NNCF's accuracy-aware quantisation (``quantize_with_accuracy_control``,
  SmoothQuant on as for transformers) on xsimpp's versioned calibration set, its validation metric the
  mean cosine of each sentence vector to torch float32's on 6 lines of every FLORES dev file (lines
  900-905, 1 224 sentences, hash printed), quantised operations reverted to float32 until the metric
  drops by at most DROP;
- ``float32``: ``path=openvino-float32`` itself (the floor: it must disagree on nothing);
- ``bf16`` / ``f16``: the same float32 IR compiled with OpenVINO's ``INFERENCE_PRECISION_HINT`` at
  that precision (what OpenVINO itself picks on CPUs with AMX or AVX-512 FP16 when not told f32): no
  int8 anywhere, the half-precision matrix units' speed against the same decisions;
- ``torch-autocast-bf16``: ``path=torch-float32 --autocast bf16``, torch's own mixed precision (its
  matrix products in bf16 on the CPU's bf16 units; layer norms, softmax and the residual stream in
  float32), a different split of the same precision than OpenVINO's hint.

The evaluation: the ten xsim++ languages' 997 dev lines each -> English dev, xsim and xsim++ against
the strict negatives ``xsimpp augment flores200 --split dev`` builds (in ``XSIMPP_HOME``).

    python benchmarks/int8_variants.py --work DIR VARIANT...   # appends to DIR/results.json
    python benchmarks/int8_variants.py --work DIR --speed 3 VARIANT...   # interleaved speed -> DIR/speed.json
    python benchmarks/int8_variants.py --markdown RESULTS.json SPEED.json   # the docs' table rows

The evaluation's own timings are printed but are not a speed comparison (variants run one after
another, under whatever else runs); ``--speed R`` times the variants (already built) interleaved, R
rounds over the first 50 dev lines of each of the ten languages and English (550 sentences), median.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

LANGS = "fao_Latn kea_Latn tpi_Latn kik_Latn fur_Latn ibo_Latn ltz_Latn swh_Latn zul_Latn bem_Latn".split()
IGNORED = {"emb": [r".*embeddings.*"], "ffnout": [r".*layer\.\d+\.output\.dense.*"],
           "emb-ffnout": [r".*embeddings.*", r".*layer\.\d+\.output\.dense.*"],
           "last": [r".*layer\.11\..*"], "first": [r".*layer\.0\..*"], "firstlast": [r".*layer\.(0|11)\..*"]}


HALF = ("bf16", "f16")  # float32 IR, half-precision inference hint
TORCH_AUTOCAST = "torch-autocast-bf16"


def dev_lines(lang: str) -> list[str]:
    return (Path(os.environ["XSIMPP_DATA_DIR"]) / "flores200" / "dev" / f"{lang}.dev").read_text(
        encoding="utf-8").splitlines()


class DevSet:
    """The ten languages' dev lines, English dev and its strict negatives, and each encoder's
    per-sentence xsim / xsim++ outcomes on them."""

    def __init__(self):
        from xsimpp.datasets.base import load_augmented
        from xsimpp.paths import augmented_dir

        self.aug = load_augmented(augmented_dir() / "flores200" / "dev_augmented" / "strict", "eng_Latn", "dev")
        self.eng = dev_lines("eng_Latn")
        self.src = {lang: dev_lines(lang) for lang in LANGS}
        self.sentences = self.eng + self.aug.lines + [s for lang in LANGS for s in self.src[lang]]

    def outcomes(self, v: np.ndarray) -> dict:
        from xsimpp.scoring.xsim import xsim

        ye, yn = v[:len(self.eng)], v[len(self.eng):len(self.eng) + len(self.aug.lines)]
        off, res = len(self.eng) + len(self.aug.lines), {}
        for lang in LANGS:
            x = v[off:off + len(self.src[lang])]
            off += len(self.src[lang])
            res[lang] = (xsim(x, ye, tgt_text=self.eng).correct,
                         xsim(x, np.vstack([ye, yn]), tgt_text=self.eng + self.aug.lines,
                              errtypes=self.aug.errtypes).correct)
        return res


def build_compressed(name: str, weights: Path, out: Path) -> None:
    import nncf
    import openvino

    from xsimpp.encoders.e5_openvino import convert

    kind, _, ignore = name.partition("+")
    mode = {"sym": nncf.CompressWeightsMode.INT8_SYM, "asym": nncf.CompressWeightsMode.INT8_ASYM}[kind]
    scope = {"ignored_scope": nncf.IgnoredScope(patterns=IGNORED[ignore], validate=False)} if ignore else {}
    ir = nncf.compress_weights(convert(weights, 12)[1], mode=mode, **scope)
    out.mkdir(parents=True, exist_ok=True)
    openvino.save_model(ir, str(out / "model.xml"), compress_to_fp16=False)


def build_accuracy_controlled(max_drop: float, float_ir: Path, work: Path, out: Path) -> dict:
    import nncf
    import openvino

    from xsimpp.encoders import create_encoder
    from xsimpp.encoders import e5_openvino as E
    from xsimpp.encoders.backbone.batching import tokenize
    from xsimpp.encoders.e5_weights import PROMPT

    root = Path(os.environ["XSIMPP_DATA_DIR"]) / "flores200" / "dev"
    val = [line for f in sorted(root.glob("*.dev")) for line in f.read_text(encoding="utf-8").splitlines()[900:906]]
    val_sha = hashlib.sha256("\n".join(val).encode()).hexdigest()[:16]
    ref_file = work / "ac_validation_torch.npy"
    if not ref_file.exists():
        np.save(ref_file, create_encoder("e5-small", path="torch-float32").encode(val))
    ref = np.load(ref_file)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    tok = create_encoder("e5-small", path="openvino-float32").backend.tokenizer

    def items(sentences):
        ids, _, _ = tokenize(tok, sentences, max_length=512, prompt=PROMPT)
        return [{"input_ids": np.asarray([x], np.int64), "attention_mask": np.ones((1, len(x)), np.int64)} for x in ids]

    val_items = items(val)
    for i, it in enumerate(val_items):  # NNCF validates subsets: each item carries its row of ``ref``
        it["_i"] = i

    def validate(compiled, subset):
        cos = []
        for it in subset:
            h = compiled({"input_ids": it["input_ids"], "attention_mask": it["attention_mask"]})[0][0].mean(0)
            cos.append(float(h @ ref[it["_i"]] / np.linalg.norm(h)))
        return float(np.mean(cos)), cos

    cal = items(E.calibration_sentences())
    t = time.time()
    q = nncf.quantize_with_accuracy_control(
        openvino.Core().read_model(str(float_ir / "model.xml")), nncf.Dataset(cal),
        nncf.Dataset(val_items, lambda it: {"input_ids": it["input_ids"], "attention_mask": it["attention_mask"]}),
        validate, max_drop=max_drop, model_type=nncf.ModelType.TRANSFORMER, subset_size=len(cal))
    out.mkdir(parents=True, exist_ok=True)
    openvino.save_model(q, str(out / "model.xml"), compress_to_fp16=False)
    return {"validation_sha256_16": val_sha, "validation_lines": len(val), "calibration_sha256": E.CALIBRATION_SHA256,
            "build_seconds": round(time.time() - t, 1)}


def variant_encoder(v: str, work: Path, enc):
    """The encoder that runs one built variant: ``enc`` (an ``openvino-int8-dynamic`` e5-small) with
    the variant's compiled IR in place of its own, or ``path=openvino-float32`` itself."""
    from xsimpp.encoders import create_encoder
    from xsimpp.encoders import e5_openvino as E

    if v in HALF:  # the float32 IR compiled at a half-precision hint (refused if the plugin declines it)
        use = create_encoder("e5-small", path="openvino-float32")
        use.backend._model = E.OpenVINOModel(use.backend.folder, hint=v)
        return use
    if v == "float32":
        return create_encoder("e5-small", path="openvino-float32")
    if v == TORCH_AUTOCAST:
        return create_encoder("e5-small", path="torch-float32", autocast="bf16")
    name, _, group = v.partition("@")
    folder = work / "ir" / name.replace(":", "-")
    # @0: no run-time activation quantisation (without the setting the plugin's default would apply)
    enc.backend._model = E.OpenVINOModel(folder, dynamic_group=int(group))
    return enc


def speed(dev: DevSet, work: Path, variants: list[str], rounds: int) -> int:
    import statistics

    from machine import cpu_info

    from xsimpp.encoders import create_encoder

    sents = dev.eng[:50] + [s for lang in LANGS for s in dev.src[lang][:50]]
    encoders = {v: variant_encoder(v, work, create_encoder("e5-small", path="openvino-int8-dynamic"))
                for v in variants}
    for enc in encoders.values():
        enc.encode(sents[:8])  # compile and warm up outside the timings
    head, seconds = cpu_info(), {v: [] for v in variants}
    for _ in range(rounds):
        for v, enc in encoders.items():
            t = time.perf_counter()
            enc.encode(sents)
            seconds[v].append(round(time.perf_counter() - t, 3))
    base = statistics.median(seconds["float32"]) if "float32" in seconds else None
    out = {"machine": {**head, "load_after": round(os.getloadavg()[0], 2)}, "sentences": len(sents), "rounds": rounds,
           "variants": {v: {"seconds": s, "sent_per_s": round(len(sents) / statistics.median(s), 1),
                            **({"vs_openvino_float32": round(base / statistics.median(s), 2)} if base else {})}
                        for v, s in seconds.items()}}
    (work / "speed.json").write_text(json.dumps(out, indent=1) + "\n")
    for v, r in out["variants"].items():
        print(v, r)
    return 0


def half_width(worse: int, better: int, n: int) -> float:
    """The paired 95 % interval's half-width (points) of a micro-average, as the gates compute it."""
    from xsimpp.scoring.significance import paired_difference_interval

    lo, hi = paired_difference_interval(worse, better, n)
    return (hi - lo) / 2


def doc_rows(results: dict, speed_run: dict) -> list[str]:
    """docs/performance.md's table of the variants (tests/test_docs.py checks each row is there)."""
    rows = []
    for v, r in results.items():
        x, f, s = r["xsim++"], r["xsim"], speed_run["variants"].get(v)
        rows.append(f"| `{v}` | {x['worse']} / {x['better']} | {x['worse'] + x['better']} | "
                    f"±{half_width(x['worse'], x['better'], x['n']):.2f} | {f['worse']} / {f['better']} | "
                    f"{r['cos_p1']:.5f} | " + (f"{s['sent_per_s']:.1f} ({s['vs_openvino_float32']:.2f}×)" if s else "–")
                    + " |")
    return rows


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bounds

    ap = bounds.Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--markdown", nargs=2, type=Path, metavar=("RESULTS", "SPEED"), help="print the docs' rows")
    ap.add_argument("--work", type=Path, help="IRs, the torch float32 reference and results.json")
    ap.add_argument("--speed", type=bounds.repeats, metavar="ROUNDS", help="time the built variants interleaved instead")
    ap.add_argument("variants", nargs="*")
    args = ap.parse_args(argv)
    if args.markdown:
        results, speed_run = (json.loads(p.read_text(encoding="utf-8")) for p in args.markdown)
        print("\n".join(doc_rows(results, speed_run)))
        return 0
    if not args.work or not args.variants:
        ap.error("say --work DIR and the variants (or --markdown RESULTS SPEED)")
    from machine import cpu_info

    from xsimpp.encoders import create_encoder

    dev, work = DevSet(), args.work
    work.mkdir(parents=True, exist_ok=True)
    if args.speed:
        return speed(dev, work, args.variants, args.speed)
    ref_file = work / "torch.npy"
    if not ref_file.exists():
        np.save(ref_file, create_encoder("e5-small", path="torch-float32").encode(dev.sentences))
    ref_vec = np.load(ref_file)
    ref = dev.outcomes(ref_vec)
    res_file = work / "results.json"
    results = json.loads(res_file.read_text()) if res_file.exists() else {}
    enc = create_encoder("e5-small", path="openvino-int8-dynamic")
    for v in args.variants:
        built = {}
        name, _, group = v.partition("@")
        folder = work / "ir" / name.replace(":", "-")
        if v not in ("float32", *HALF, TORCH_AUTOCAST) and not (folder / "model.xml").exists():
            if name.startswith("ac:"):
                built = build_accuracy_controlled(float(name[3:]), create_encoder(
                    "e5-small", path="openvino-float32").backend.folder, work, folder)
            else:
                build_compressed(name, enc.backend.spec.folder, folder)
        use = variant_encoder(v, work, enc)
        t = time.time()
        vec = use.encode(dev.sentences)
        secs = time.time() - t
        got = dev.outcomes(vec)
        row = {"sentences": len(dev.sentences), "seconds_all": round(secs, 1),
               "sent_per_s": round(len(dev.sentences) / secs, 1), **cpu_info(), **built}
        for i, what in enumerate(("xsim", "xsim++")):
            row[what] = {"worse": sum(int((ref[lang][i] & ~got[lang][i]).sum()) for lang in LANGS),
                         "better": sum(int((~ref[lang][i] & got[lang][i]).sum()) for lang in LANGS),
                         "torch_errors": sum(int((~ref[lang][i]).sum()) for lang in LANGS),
                         "n": sum(len(ref[lang][i]) for lang in LANGS)}
        cos = (ref_vec * vec).sum(1) / np.linalg.norm(ref_vec, axis=1) / np.linalg.norm(vec, axis=1)
        row["cos_min"], row["cos_p1"] = round(float(cos.min()), 6), round(float(np.percentile(cos, 1)), 6)
        results[v] = row
        print(v, json.dumps(row), flush=True)
        res_file.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
