"""The worked example of docs/guides/significance.md: e5-small against its int8 x 4-bit engine
(e5-small-nano) and against all-MiniLM-L6-v2 (sbert) on FLORES-200 devtest, kea, fur, swh and deu
into English and back, with 95 % intervals and paired tests. Writes
benchmarks/results/significance_flores.json, which the guide quotes (tests/test_docs.py checks it).

    XSIMPP_DATA_DIR=../shared/data python benchmarks/significance_flores.py

The same numbers from the command line:

    xsimpp eval --encoder e5-small --langs kea,fur,swh,deu --both-directions --ci
    xsimpp eval --encoder e5-small-nano --langs kea,fur,swh,deu --both-directions --ci
    xsimpp compare --baseline e5-small --system e5-small-nano
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import xsimpp

OUT = Path(__file__).resolve().parent / "results" / "significance_flores.json"
LANGS = "kea,fur,swh,deu"
ENCODERS = ("e5-small", "e5-small-nano", "sbert")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    out: dict = {"dataset": "flores200", "split": "devtest", "langs": LANGS, "both_directions": True,
                 "cpu": platform.processor() or platform.machine(), "xsimpp": xsimpp.__version__, "runs": {},
                 "compare": {}}
    runs = {}
    for enc in ENCODERS:
        res = xsimpp.evaluate(enc, LANGS, split="devtest", both_directions=True, ci=0.95, progress=True)
        runs[enc] = res
        out["runs"][enc] = {
            "signature": res.records[0].signature.format(),
            "pairs": {f"{r.src_lang}-{r.tgt_lang}": {"value": r.value, "errors": r.errors, "n": r.n,
                                                    "ci": [r.extra["ci_low"], r.extra["ci_high"]]} for r in res},
            "average": [{"pair": i.pair, "value": i.value, "ci": [i.low, i.high]} for i in res.report.intervals
                        if i.pair.startswith("average")],
        }
    for enc in ENCODERS[1:]:
        for method in ("shift", "sacrebleu"):
            cmp = xsimpp.compare(runs["e5-small"], runs[enc], bootstrap_method=method)
            out["compare"][f"{enc}/{method}"] = cmp.to_json()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
