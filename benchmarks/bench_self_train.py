"""Keung et al. (2020)'s self-training on the BUCC zh-en sample: F1 before and after one round,
hard vs random negatives, and training steps/s on this machine.

    XSIMPP_HOME=... python benchmarks/bench_self_train.py --out-dir /tmp/self-train [--model e5-small]

The sample has no separate training split here, so the model self-trains on the sample's own two
unlabelled sides and is scored on the sample's gold: transductive (no label is used to train or
to pick anything; the gold only scores). F1 is reported under both protocols: Keung et al.'s
(forward retrieval, 2 % kept, then the ASCII digit and edit filters) with its proportion
threshold, and 5-fold cross-validated score thresholds under both protocols. The base's English
and Chinese vectors come from the embedding cache when an earlier run left them there; after
training only the Chinese side is encoded again (the English side is the frozen base's).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def bucc_f1(model: str, protocol: str, data_dir) -> dict:
    import xsimpp

    t0 = time.perf_counter()
    res = xsimpp.bucc("hf", "zh-en", tune="sample", protocol=protocol, cv=5, data_dir=data_dir,
                      options={"model": model}, progress=True)
    out = {"seconds": round(time.perf_counter() - t0, 1), "encoded": res.report.n_encoded,
           "reused": res.report.n_cached}
    for rec in res.records:
        rule = rec.signature.params["threshold"]
        key = "cv5" if rule.startswith("cv") else ("prior" if rule.startswith("keep") else "tuned-on-gold")
        out[key] = {"f1": round(rec.value, 2), "p": round(rec.extra["precision"], 2),
                    "r": round(rec.extra["recall"], 2)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", required=True, help="where the two checkpoints and results.json go")
    ap.add_argument("--model", default="e5-small", help="base model (default e5-small: hf mean pooling, last layer)")
    ap.add_argument("--data-dir", help="data root holding bucc2018/ (default: $XSIMPP_DATA_DIR)")
    ap.add_argument("--negatives", default="hard,random")
    args = ap.parse_args()

    from xsimpp.cache import EmbeddingCache
    from xsimpp.datasets.bucc import Bucc2018
    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.training.self_train import SelfTrainConfig, self_train

    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict = {"model": args.model, "runs": {}}
    print(f"[{load()}] base {args.model}", flush=True)
    results["runs"]["base"] = {p: bucc_f1(args.model, p, args.data_dir) for p in ("keung", "laser")}
    print(json.dumps(results["runs"]["base"]), flush=True)

    split = Bucc2018(args.data_dir).load("zh-en", "sample")  # the two sides only; the gold is never read here
    for neg in args.negatives.split(","):
        cfg = SelfTrainConfig(negatives=neg)
        base = HFEncoder(model=args.model, layer=cfg.layer, prompt=cfg.prompt, max_length=cfg.max_length)
        cache = EmbeddingCache(base.id, base.fingerprint)
        ckpt = out_dir / f"self-train-{neg}"
        before = load()
        try:
            res = self_train(split.src, split.tgt, args.model, ckpt, cfg, src_lang="zh", tgt_lang="en", cache=cache,
                             base=base, log=lambda m: print(m, file=sys.stderr, flush=True),
                             data_info={"bucc": {"pair": "zh-en", "split": "sample", "checksum": split.checksum,
                                                 "gold_used": False}})
        finally:
            cache.close()
        r = res.rounds[0]
        run = {"train": {"positives": r.positives, "examples": r.examples, "retrieved": r.retrieved, "kept": r.kept,
                         "dropped": r.dropped, "steps": res.steps, "seconds": round(res.seconds, 2),
                         "steps_per_second": round(res.steps_per_second, 4), "loss": [r.loss_first, r.loss_last],
                         "load_before": before, "load_after": load()}}
        del base
        run.update({p: bucc_f1(str(ckpt), p, args.data_dir) for p in ("keung", "laser")})
        results["runs"][neg] = run
        print(f"[{load()}] {neg}: {json.dumps(run)}", flush=True)
    (out_dir / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")

    rows = [("run", "keung prior F1", "keung cv5 F1", "laser cv5 F1", "steps", "steps/s")]
    for name, run in results["runs"].items():
        tr = run.get("train", {})
        rows.append((name, run["keung"]["prior"]["f1"], run["keung"]["cv5"]["f1"], run["laser"]["cv5"]["f1"],
                     tr.get("steps", ""), tr.get("steps_per_second", "")))
    for row in rows:
        print(" | ".join(str(c) for c in row))
    base = results["runs"]["base"]
    for name in results["runs"]:
        if name != "base":
            d = results["runs"][name]["keung"]["cv5"]["f1"] - base["keung"]["cv5"]["f1"]
            print(f"{name}: keung cv5 F1 {d:+.2f} against the base in the same run")
    print(f"[{load()}] done; results in {out_dir / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
