"""`xsimpp mine`: exact margin kNN both ways over large embedding files, sharded and resumable.
Its flags are the mine task's knobs (``xsimpp.tasks.mine``), the engine's and --ray."""

from __future__ import annotations

import re


def register(sub) -> None:
    from ..tasks.mine import MineSettings, MineSource
    from .common import add_engine_options, add_ray_option
    from .knobs import add_knobs

    p = sub.add_parser("mine", help="margin kNN both ways over large .npy embedding sets (sharded, resumable)",
                       description="Exact margin kNN of --src-emb over --tgt-emb and back, in shards under --out. "
                                   "A killed run resumes from its complete shards and gives identical results.")
    # a negative margin in exponent form (--threshold -1e308) is a value, not an option: argparse's
    # own pattern knows only -1 and -1.5 (no flag of this parser looks like a number)
    p._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
    add_knobs(p, MineSource)
    add_knobs(p, MineSettings)
    # keep_shards (default True) as the flag that turns it off
    p.add_argument("--delete-shards", action="store_true", help="remove shard files once the result is written")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    add_engine_options(p, blocks=False)
    add_ray_option(p, "run the shards as Ray tasks (same manifest, markers and resume rules; --out must be on "
                      "storage every node sees)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..tasks.mine import MineSettings, MineSource
    from ..tasks.registry import task
    from ..tasks.runner import run_task
    from .common import engine_config
    from .knobs import given

    mine = task("mine")
    res = run_task(mine, None, **given(args, MineSource), **given(args, MineSettings), keep_shards=not args.delete_shards,
                   progress=not args.no_progress, engine=engine_config(args), ray=args.ray)
    print(mine.render(res.report))
    return 0
