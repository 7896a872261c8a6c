"""`xsimpp eval`: xsim / xsim++ of an encoder on FLORES-200, Tatoeba, the demo corpus or your files."""

from __future__ import annotations

import argparse

from ..tasks import TASKS
from .common import (add_encoder_options, add_engine_options, add_ray_option, add_run_options, check_outputs,
                     encoder_options, run_and_print)
from .knobs import add_knobs, given

TASK = TASKS["xsim"]


def register(sub) -> None:
    p = sub.add_parser("eval", help="xsim / xsim++ error rates of an encoder",
                       description="Encode (with cache) and score xsim, and xsim++ with --augmented.")
    add_encoder_options(p)
    add_knobs(p, TASK.Source)
    add_knobs(p, TASK.Settings)
    p.add_argument("--rerank-opt", action="append", metavar="KEY=VALUE",
                   help="an option of the --rerank encoder (repeatable), e.g. layer=8")
    add_engine_options(p)
    add_run_options(p)
    add_ray_option(p, "encode on a Ray cluster: one task per encoder x language x chunk of 256 sentences, gathered "
                      "into the same cache and results")
    p.set_defaults(func=run)


def run(args) -> int:
    check_outputs(args)  # every output path before any work
    settings = given(args, TASK.Settings)
    if args.rerank_opt:
        settings["rerank_options"] = encoder_options(argparse.Namespace(encoder_opt=args.rerank_opt))
    if args.rerank and args.rerank_k is not None:  # with --rerank, --rerank-k is P-xSIM's; else onealigner's option
        settings["rerank_k"], args.rerank_k = args.rerank_k, None
    run_and_print(args, TASK, settings, given(args, TASK.Source), ray=True)
    return 0
