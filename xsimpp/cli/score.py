"""`xsimpp score`: xsim / xsim++ of precomputed embeddings (.npy, or LASER's raw float32/float16)."""

from __future__ import annotations

from ..tasks.tables import errtype_table, xsim_table
from ..tasks.xsim import XsimSettings
from ..textio import path
from .common import add_engine_options, engine_config
from .knobs import add_knobs, given

# The xsim settings that apply to arrays (P-xSIM needs an encoder; a protocol also picks negatives).
ARRAY_ONLY = ("rerank", "alpha", "protocol")


def register(sub) -> None:
    p = sub.add_parser("score", help="score precomputed embeddings, as LASER's xSIM() does",
                       description="xsim of source vs target embedding files; xsim++ with --errtype-json.")
    p.add_argument("--src-emb", required=True, type=path, help="source embeddings: .npy, or raw float32 (LASER) with --dim")
    p.add_argument("--tgt-emb", required=True, type=path, help="target embeddings (gold first, then augmented for xsim++)")
    p.add_argument("--tgt-text", type=path, help="target sentences, one a line (needed for --mode text and xsim++)")
    p.add_argument("--errtype-json", type=path, help="LASER errtype JSON of the augmented targets (xsim++)")
    p.add_argument("--allow-errtype", action="append", default=[], metavar="NAME",
                   help="accept this error type name in --errtype-json besides causality, entity, number (repeatable)")
    p.add_argument("--dim", type=int, help="vector size for raw files (LASER default 1024)")
    p.add_argument("--fp16", action="store_true", help="raw files hold float16")
    add_knobs(p, XsimSettings, skip=ARRAY_ONLY)
    add_engine_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..api import score

    res = score(args.src_emb, args.tgt_emb, tgt_text=args.tgt_text, errtypes=args.errtype_json,
                allow_errtypes=args.allow_errtype, dim=args.dim, fp16=args.fp16, engine=engine_config(args),
                **given(args, XsimSettings, skip=ARRAY_ONLY))
    params = res.records[0].signature.params
    res, text_sum, with_pp = res.report.result, res.report.text_checksum, res.report.with_pp
    name = "src-tgt"
    print(xsim_table("embeddings", [(name, res.error_rate, res.n, res.error_rate if with_pp else None)],
                     (res.error_rate, res.n, res.error_rate if with_pp else None), with_pp)
          if not with_pp else
          xsim_table("embeddings", [(name, float("nan"), res.n, res.error_rate)], (float("nan"), res.n, res.error_rate), True)
          .replace("nan", "-"))
    if with_pp:
        print(f"\nAbsolute error under augmented transformations:\n{errtype_table({name: res.error_types})}")
    print(f"\nerrors: {res.errors} / {res.n}  margin:{params['margin']} k:{params['k']} mode:{params['mode']}"
          + (f"  tgt-text sha256:{text_sum[:12]}" if text_sum else ""))
    return 0
