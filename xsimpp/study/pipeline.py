"""`xsimpp.study(...)`, the Python entry of `xsimpp study`: the configuration checked, the data and
encoders loaded, the grid run with progress bars, the report folder written (atomically)."""

from __future__ import annotations

from ..tasks.cost import EncodeClock, say, write_rate
from ..tasks.runner import progress_bar


def study(config=None, *, preset: str | None = None, data_dir=None, cache=True, out=None, overwrite: bool = False,
          progress: bool = False, engine=None):
    """The proxy-validation study of `xsimpp study`: ``config`` is a TOML file (or a parsed
    ``xsimpp.study.config.StudyConfig``), ``preset`` a built-in one ("small", "large"). Every
    input is checked (languages, data, distractor pool, encoders) before any encoding. Returns
    ``xsimpp.study.run.StudyResult``; ``out``: also write the report folder (atomically), claimed
    for the whole run (``textio.claimed``) so that a second study naming it at once is refused."""
    import contextlib

    from ..textio import claimed
    from .config import StudyConfig, load_config

    cfg = config if isinstance(config, StudyConfig) else load_config(config, preset)
    with claimed(out, "--out") if out is not None else contextlib.nullcontext():
        if out is not None:
            from .output import check_out_dir

            check_out_dir(out, overwrite)  # under the claim: no other run can fill it before the rename
        result = _run(cfg, data_dir, cache, progress, engine)
        if out is not None:
            from .output import write_study

            write_study(result, out, overwrite)
    return result


def _run(cfg, data_dir, cache, progress: bool, engine):
    """The study of a checked configuration: data and encoders loaded, the grid run with progress bars."""
    from .data import load_study_data
    from .encoders import build_encoders
    from .run import check_encoders_cover, run_study

    data = load_study_data(cfg, data_dir)
    notes: list[str] = []
    encoders = build_encoders(cfg.encoders, cache=cache if cache else False, notes=notes)
    check_encoders_cover(encoders)
    data.notes += notes

    bars = []  # the open bar, with the clock timing its encoding and the key its rate is kept under

    def close_bar():
        ctx, clock, rate_key = bars.pop()
        ctx.__exit__(None, None, None)
        measured = clock.rate()
        if measured is not None:
            write_rate(rate_key, measured)

    def open_bar(desc, total, *, rate_key, cost):
        if bars:
            close_bar()
        say(cost, progress)
        clock = EncodeClock()
        ctx = progress_bar(total, desc, enabled=progress, clock=clock)
        update = ctx.__enter__()
        bars.append((ctx, clock, rate_key))
        return update

    try:
        result = run_study(cfg, data, encoders, progress=open_bar, engine=engine)
    finally:
        while bars:
            close_bar()
        for e in encoders:
            if e.cache is not None:
                e.cache.close()
    return result
