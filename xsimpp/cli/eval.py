"""`xsimpp eval`: xsim / xsim++ of an encoder on FLORES-200, Tatoeba, the demo corpus or your files."""

from __future__ import annotations

import argparse

from ..errors import BadInputError
from ..tasks.registry import task
from ..textio import path
from .common import (add_encoder_options, add_engine_options, add_ray_option, add_run_options, check_outputs,
                     encoder_options, run_and_print)
from .knobs import add_knobs, given

TASK = task("xsim")


def register(sub) -> None:
    p = sub.add_parser("eval", help="xsim / xsim++ error rates of an encoder",
                       description="Encode (with cache) and score xsim, and xsim++ with --augmented.")
    add_encoder_options(p)
    add_knobs(p, TASK.Source)
    add_knobs(p, TASK.Settings)
    p.add_argument("--rerank-opt", action="append", metavar="KEY=VALUE",
                   help="an option of the --rerank encoder (repeatable), e.g. layer=8")
    p.add_argument("--dump", type=path, metavar="FILE",
                   help="write every wrong decision of the run to FILE (TSV, or JSONL for .jsonl): source, gold and "
                        "chosen target, both scores, the xsim++ error type; see also `xsimpp explain`")
    add_engine_options(p)
    add_run_options(p)
    add_ray_option(p, "encode on a Ray cluster: one task per encoder x language x chunk of 256 sentences, gathered "
                      "into the same cache and results")
    p.set_defaults(func=run)


def run(args) -> int:
    check_outputs(args, files={"dump": "--dump"}, inputs={"src_file": "--src-file", "tgt_file": "--tgt-file"})
    settings = given(args, TASK.Settings)
    if args.rerank_opt:
        settings["rerank_options"] = encoder_options(argparse.Namespace(encoder_opt=args.rerank_opt))
    if args.pxsim_k is not None and not args.rerank:
        raise BadInputError("--pxsim-k sets how many margin candidates --rerank rescores; give --rerank too")
    spec = given(args, TASK.Source)
    res = run_and_print(args, TASK, settings, spec, ray=True)
    if args.dump:
        _dump(args.dump, res, TASK.Source(**spec), TASK.Settings.make(**settings))
    return 0


def _dump(path, res, source, settings) -> None:
    """The run's wrong decisions, its sentences read again as the run read them (and checked)."""
    from ..report.explain import write_dump
    from ..tasks.explain import sentences_of, wrong_decisions

    data = TASK.load(source, settings)
    explained = [(r, wrong_decisions(r.outcomes, *sentences_of(r, TASK, data))) for r in res.records]
    print(f"{write_dump(path, explained)} wrong decisions in {path}")
