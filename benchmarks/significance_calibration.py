"""Calibration of xsimpp's confidence intervals and paired tests by simulation (issue 37).

On synthetic outcomes with a known error rate: how often the 95 % interval covers the truth; on two
equally good systems: how often each paired test says p < 0.05 (its size); on a known difference:
how often it is found (power). Writes benchmarks/results/significance_calibration.json, which the
docs quote (tests/test_docs.py checks the quoted figures against it).

    python benchmarks/significance_calibration.py [--reps 2000] [--parts coverage,size,power,overlap]

``--parts`` recomputes only those parts and keeps the others already in the output file (``seconds``
is the last run's wall time). ``overlap``: the power rows where B fixes part of A's errors (issue 54).
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np

from xsimpp.scoring import significance as S

import bounds  # benchmarks/bounds.py: the bounds of every number typed here

OUT = Path(__file__).resolve().parent / "results" / "significance_calibration.json"


def units(correct):
    g = np.arange(len(correct))
    return S.Units.of("error_rate", correct, g, g)


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=bounds.count(1, 10**6), default=2000)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--parts", default="coverage,size,power,overlap")
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    reps, started = args.reps, time.time()
    out: dict = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() and parts != {
        "coverage", "size", "power", "overlap"} else {}
    out.update({"reps": reps, "alpha": 0.05, "level": 0.95, "resamples": S.BOOTSTRAP_RESAMPLES,
                "ar_trials": S.AR_TRIALS, "cpu": platform.processor() or platform.machine()})
    if "coverage" in parts:
        out["coverage_95"] = coverage(np.random.default_rng(20261125), reps)
    if "size" in parts:
        out["size_at_0.05"] = size(np.random.default_rng(20261126), reps)
    if "power" in parts:
        out["power_at_0.05"] = out.get("power_at_0.05", {}) | power(np.random.default_rng(20261127), reps)
    if "overlap" in parts:
        # the overlap rows draw from their own generator so the first two power rows keep their stream
        out["power_at_0.05"] = out.get("power_at_0.05", {}) | overlap_power(np.random.default_rng(20261128), reps)
    out["seconds"] = round(time.time() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


def rejections(rng, reps: int, draw) -> dict:
    """How often each paired test says p < 0.05 on ``draw(rng) -> (A, B)`` pairs of outcomes."""
    found = {"shift": 0, "sacrebleu": 0, "randomization": 0}
    for rep in range(reps):
        a, b = draw(rng)
        sb, ss = S.paired_bootstrap_samples([a], [b], S.BOOTSTRAP_RESAMPLES, rep)
        for method in S.BOOTSTRAP_P:
            found[method] += S.paired_bootstrap_p(sb, ss, b.value() - a.value(), method) < 0.05
        found["randomization"] += S.paired_randomization([a], [b], seed=rep) < 0.05
    return {k: v / reps for k, v in found.items()}


def coverage(rng, reps: int) -> dict:
    """How often the 95 % interval of a sample's error rate covers the true rate."""
    out = {}
    for n, rate in ((1012, 0.05), (500, 0.10), (200, 0.20)):
        hits = 0
        for rep in range(reps):
            lo, hi = S.confidence_interval([units(rng.random(n) >= rate)], seed=rep)
            hits += lo <= 100 * rate <= hi
        out[f"n={n},error={rate:.2f}"] = hits / reps
    return out


def size(rng, reps: int) -> dict:
    """Two equally good systems (independent errors at one rate): the tests' false positives."""
    return {f"n={n},error={rate:.2f}": rejections(rng, reps, lambda r, n=n, rate=rate: (
        units(r.random(n) >= rate), units(r.random(n) >= rate))) for n, rate in ((1012, 0.05), (400, 0.10))}


def power(rng, reps: int) -> dict:
    """A real difference: B makes A's errors and 1 % more (correlated, as two checkpoints are), or
    independent errors at 5 % and 7 %."""
    def more(r, n=1012):
        wa = r.random(n) < 0.05
        return units(~wa), units(~(wa | (r.random(n) < 0.01)))

    def independent(r, n=1012):
        return units(r.random(n) >= 0.05), units(r.random(n) >= 0.07)

    return {"n=1012,A 5%,B A's errors and 1% more": rejections(rng, reps, more),
            "n=1012,A 5%,B 7% independent": rejections(rng, reps, independent)}


FIXED_SHARES = (0.10, 0.20, 0.40)


def overlap_power(rng, reps: int) -> dict:
    """Realistic overlap: B fixes a share of A's errors and still makes 1 point more errors net.
    Per line: A errs with probability 5 %; each of A's errors is fixed by B with probability
    ``share``; each line A gets right becomes a B error with probability (1 % + share * 5 %) / 95 %,
    so B's expected error rate is 6 % (A's 5 % + 1 point) at every share."""
    def overlap(r, share, n=1012):
        wa = r.random(n) < 0.05
        fixed = wa & (r.random(n) < share)
        new = ~wa & (r.random(n) < (0.01 + share * 0.05) / 0.95)
        return units(~wa), units(~((wa & ~fixed) | new))

    return {f"n=1012,A 5%,B fixes {share:.0%} of A's errors, 1 point more net": rejections(
        rng, reps, lambda r, share=share: overlap(r, share)) for share in FIXED_SHARES}


if __name__ == "__main__":
    main()
