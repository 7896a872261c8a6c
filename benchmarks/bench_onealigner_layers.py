"""Which layer of e5-small should OneAligner score? And the paper's Table 1 ablation on it.

One forward pass per sentence gives every layer's token states (no layer is run twice); for each
layer and language the four cells {average pooling, BERTScore} x {no normalisation, in-batch
normalisation} are scored as xsim error rates (xx -> eng, LASER's ratio margin, k = 4). Use
``--split dev`` to choose the default layer (the evaluation split stays unseen) and
``--split devtest --layers 8`` for the Table 1 figures. Usage:

    python benchmarks/bench_onealigner_layers.py --split dev --langs kea,fur,swh,zul,ltz --layers 4,6,8,10,12
"""

from __future__ import annotations

import sys
import time

import bounds  # benchmarks/bounds.py: the bounds of every number typed here


def main(argv: list[str] | None = None) -> int:
    ap = bounds.Parser()
    ap.add_argument("--split", default="dev")
    ap.add_argument("--langs", default="kea,fur,swh,zul,ltz")
    ap.add_argument("--layers", type=bounds.counts(1, 48), default="4,6,8,10,12",
                    help="hidden layers (1 to 48; the model refuses one it lacks)")
    ap.add_argument("--n", type=bounds.count(0, bounds.FLORES_LINES), default=0, help="first N sentences only (0 = all)")
    ap.add_argument("--margin", default="ratio")
    args = ap.parse_args(argv)

    from xsimpp.datasets import get_dataset
    from xsimpp.encoders.onealigner import OneAligner, in_batch_normalize
    from xsimpp.scoring import xsim

    layers = args.layers
    langs = args.langs.split(",")
    scorer = OneAligner(layer=max(layers), batch_size=0, device="cpu")  # full-matrix normalisation
    ds = get_dataset("flores200", args.split)
    bitexts = [ds.bitext(lang, "eng") for lang in langs]
    eng = bitexts[0].tgt[: args.n or None]

    def states(sentences):
        """{layer: [(n_tokens, d) per sentence]} from one pass."""
        return scorer.layer_states(sentences, layers)

    t0 = time.perf_counter()
    eng_states = states(eng)
    print(f"encoded {len(eng)} English sentences in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    cells = [("mean", "none"), ("mean", "in-batch"), ("bertscore", "none"), ("bertscore", "in-batch")]
    rows = []
    for bt in bitexts:
        src = bt.src[: args.n or None]
        src_states = states(src)
        for layer in layers:
            raw = {"mean": scorer.mean_scores(src_states[layer], eng_states[layer]),  # BERTScore once per layer
                   "bertscore": scorer.raw_scores(scorer.tensors(src_states[layer]), scorer.tensors(eng_states[layer]))}
            for scoring, norm in cells:
                sim = raw[scoring] if norm == "none" else in_batch_normalize(raw[scoring], scorer.alpha, 0)
                res = xsim(similarity=sim, margin=args.margin, k=4, tgt_text=eng)
                rows.append((bt.src_lang, layer, scoring, norm, res.errors, res.n))
                print(f"{bt.src_lang} layer {layer:2d} {scoring:9s} {norm:8s} errors {res.errors:4d}/{res.n} "
                      f"= {100 * res.errors / res.n:5.2f} %", flush=True)
    print("\nmean xsim error % over languages (rows: layer; columns: pooling x normalisation)")
    print("layer  " + "  ".join(f"{s}+{n:>8s}" for s, n in cells))
    for layer in layers:
        vals = []
        for cell in cells:
            got = [e / n for lang, lay, s, nm, e, n in rows if lay == layer and (s, nm) == cell]
            vals.append(100 * sum(got) / len(got))
        print(f"{layer:5d}  " + "  ".join(f"{v:18.2f}" for v in vals))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
