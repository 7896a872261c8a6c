"""Calibration of xsimpp's confidence intervals and paired tests by simulation (issue 37).

On synthetic outcomes with a known error rate: how often the 95 % interval covers the truth; on two
equally good systems: how often each paired test says p < 0.05 (its size); on a known difference:
how often it is found (power). Writes benchmarks/results/significance_calibration.json, which the
docs quote (tests/test_docs.py checks the quoted figures against it).

    python benchmarks/significance_calibration.py [--reps 2000]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from xsimpp.scoring import significance as S

OUT = Path(__file__).resolve().parent / "results" / "significance_calibration.json"


def units(correct):
    g = np.arange(len(correct))
    return S.Units.of("error_rate", correct, g, g)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    rng = np.random.default_rng(20261125)
    reps, started = args.reps, time.time()
    out: dict = {"reps": reps, "alpha": 0.05, "level": 0.95, "resamples": S.BOOTSTRAP_RESAMPLES,
                 "ar_trials": S.AR_TRIALS, "cpu": platform.processor() or platform.machine()}

    coverage = {}
    for n, rate in ((1012, 0.05), (500, 0.10), (200, 0.20)):
        hits = 0
        for rep in range(reps):
            lo, hi = S.confidence_interval([units(rng.random(n) >= rate)], seed=rep)
            hits += lo <= 100 * rate <= hi
        coverage[f"n={n},error={rate:.2f}"] = hits / reps
    out["coverage_95"] = coverage

    size = {}
    for n, rate in ((1012, 0.05), (400, 0.10)):
        false = {"shift": 0, "sacrebleu": 0, "randomization": 0}
        for rep in range(reps):
            a, b = units(rng.random(n) >= rate), units(rng.random(n) >= rate)
            sb, ss = S.paired_bootstrap_samples([a], [b], S.BOOTSTRAP_RESAMPLES, rep)
            for method in S.BOOTSTRAP_P:
                false[method] += S.paired_bootstrap_p(sb, ss, b.value() - a.value(), method) < 0.05
            false["randomization"] += S.paired_randomization([a], [b], seed=rep) < 0.05
        size[f"n={n},error={rate:.2f}"] = {k: v / reps for k, v in false.items()}
    out["size_at_0.05"] = size

    power = {"shift": 0, "sacrebleu": 0, "randomization": 0}
    n, rate, extra = 1012, 0.05, 0.02  # B makes A's errors and 2 % more
    for rep in range(reps):
        wa = rng.random(n) < rate
        a, b = units(~wa), units(~(wa | (rng.random(n) < extra)))
        sb, ss = S.paired_bootstrap_samples([a], [b], S.BOOTSTRAP_RESAMPLES, rep)
        for method in S.BOOTSTRAP_P:
            power[method] += S.paired_bootstrap_p(sb, ss, b.value() - a.value(), method) < 0.05
        power["randomization"] += S.paired_randomization([a], [b], seed=rep) < 0.05
    out["power_at_0.05"] = {"setting": f"n={n}, A {rate:.0%} errors, B those and {extra:.0%} more",
                            **{k: v / reps for k, v in power.items()}}
    out["seconds"] = round(time.time() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
