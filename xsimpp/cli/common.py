"""Pieces shared by the subcommands: common options, the run options, printing a report."""

from __future__ import annotations

import argparse

from ..textio import path


def add_engine_options(p: argparse.ArgumentParser, blocks: bool = True) -> None:
    """How the kNN engine computes. None of these changes a result (the engine's exactness
    contract), so none is part of a signature. ``blocks=False``: the command sizes its own blocks."""
    g = p.add_argument_group("engine (speed only: results are identical for every setting)")
    g.add_argument("--threads", type=int, help="threads for the selection (default: every CPU this process may use)")
    g.add_argument("--gemm", choices=("numpy", "torch"), default="numpy",
                   help="who computes the candidate similarities: numpy's BLAS (default) or torch")
    g.add_argument("--gemm-device", help="torch device for the candidate GEMM, e.g. cuda (implies --gemm torch)")
    g.add_argument("--selection", choices=("auto", "cpu", "device"), default="auto",
                   help="where candidates are chosen: on the torch device (only candidates come back; auto: when "
                        "--gemm-device is not the CPU) or on the CPU")
    if blocks:
        g.add_argument("--block-memory", default="256MB",
                       help="bound on the GEMM values held at once: one block, or every thread's tiles together "
                            "(default 256MB)")


def engine_config(args):
    from ..engine import EngineConfig
    from ..engine.mining import parse_memory

    device = getattr(args, "gemm_device", None)
    return EngineConfig(block_bytes=parse_memory(getattr(args, "block_memory", "256MB")),
                        threads=getattr(args, "threads", None),
                        gemm="torch" if device else getattr(args, "gemm", "numpy"), device=device or "cpu",
                        selection=getattr(args, "selection", "auto"))


def add_data_dir_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", type=path, help="data root (default: $XSIMPP_DATA_DIR, then the user data dir)")


def add_encoder_options(p: argparse.ArgumentParser, default: str = "e5-small") -> None:
    """The encoder flags every encoding command shares: the encoder's name, one flag per CLI option
    of ``EncoderOptions`` (declared there once, with its type and help) and --encoder-opt."""
    from ..encoders import EncoderOptions
    from .knobs import add_knobs

    p.add_argument("--encoder", default=default, help="registered encoder name (see `xsimpp encoders`)")
    add_knobs(p, EncoderOptions)
    p.add_argument("--encoder-opt", action="append", default=[], metavar="KEY=VALUE",
                   help="any other constructor option of the encoder (repeatable)")
    p.add_argument("--rerank-k", dest="retired_rerank_k", action=_RetiredRerankK, help=argparse.SUPPRESS)


class _RetiredRerankK(argparse.Action):
    """``--rerank-k`` meant two things (onealigner's two-stage K, and P-xSIM's K with --rerank):
    refused with the two flags that replace it, so no old command line silently means the other."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error("--rerank-k is two options now: --pxsim-k K (P-xSIM's margin candidates, with --rerank) or "
                     "--two-stage-k K (onealigner's two-stage rescoring)")


def _parse_value(text: str):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def encoder_options(args) -> dict:
    """Keyword arguments for ``create_encoder`` from the flags that were given (others untouched)."""
    from ..encoders import EncoderOptions
    from ..errors import BadInputError
    from .knobs import given

    opts = given(args, EncoderOptions)
    for item in getattr(args, "encoder_opt", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise BadInputError(f"--encoder-opt takes KEY=VALUE, got '{item}'")
        name, parsed = key.strip().replace("-", "_"), _parse_value(value.strip())
        if name in opts and opts[name] != parsed:  # the last one would silently win
            raise BadInputError(f"the encoder option {name} is given twice ({opts[name]!r} and {parsed!r}); give it once")
        opts[name] = parsed
    return opts


def add_cache_options(p: argparse.ArgumentParser) -> None:
    """The embedding-cache and progress flags of every command that encodes."""
    p.add_argument("--cache-dir", type=path, help="embedding cache folder (default: user cache)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(caches_embeddings=True)


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Cache, results and output flags of every command that encodes and stores results: the
    command is marked ``stores_results``, which is what the shared code below reads (``declares``)
    -- never the presence of one of these flags."""
    add_cache_options(p)
    p.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    p.add_argument("--no-save", action="store_true", help="print only; do not write results")
    p.add_argument("--json", action="store_true", help="print the result records as JSON lines")
    p.set_defaults(stores_results=True)


def declares(args, marker: str) -> bool:
    """Whether the command that parsed ``args`` declared ``marker`` (``stores_results``,
    ``caches_embeddings``) with ``set_defaults``; a command that never declared it has none."""
    return bool(vars(args).get(marker, False))


def check_outputs(args, files: dict[str, str] | None = None, dirs: dict[str, str] | None = None,
                  inputs: dict[str, str] | None = None, replaced: dict[str, str] | None = None) -> None:
    """Validate every output path of a command before any work (attribute -> flag name): a file
    path that is a folder, a folder path that is a file, an unwritable place: one sentence, exit 2.
    ``dirs`` are folders the command writes files into, ``replaced`` folders it replaces as a whole.
    The results and cache folders of a command with ``add_run_options`` / ``add_cache_options`` are
    checked unless --no-save / --no-cache. Then no output may alias another path of the run
    (``textio.check_paths_apart``): an input (``inputs``, attribute -> flag), another output, or a
    place inside the results store or the embedding cache (whenever the command has those flags:
    a file written there would replace a record)."""
    from ..paths import cache_dir, results_dir
    from ..textio import check_output_dir, check_output_file, check_paths_apart

    for attr, flag in (files or {}).items():
        check_output_file(getattr(args, attr, None), flag)
    for attr, flag in {**(dirs or {}), **(replaced or {})}.items():
        check_output_dir(getattr(args, attr, None), flag)
    if declares(args, "stores_results") and not args.no_save:
        check_output_dir(args.results_dir or results_dir(), "--results-dir")
    if declares(args, "caches_embeddings") and not args.no_cache:
        check_output_dir(args.cache_dir or cache_dir(), "--cache-dir")
    # a folder replaced as a whole (study, filter, train --out) must not be or hold a store, even where
    # the command names none: `study --out <results> --overwrite` deleted every stored record
    stores = {}
    if hasattr(args, "results_dir") or replaced:
        stores["the results store"] = getattr(args, "results_dir", None) or results_dir()
    if hasattr(args, "cache_dir") or replaced:
        stores["the embedding cache"] = getattr(args, "cache_dir", None) or cache_dir()

    def named(attrs):
        return {flag: getattr(args, attr, None) for attr, flag in (attrs or {}).items()}

    check_paths_apart(inputs=named(inputs), files=named(files), folders=named(dirs), replaced=named(replaced),
                      stores=stores)


def run_options(args, ray: bool = False):
    """The runner's ``RunOptions`` from the shared flags (cache, results, progress, engine, encoder)."""
    from ..tasks.runner import RunOptions

    return RunOptions(cache=cache_arg(args), save=save_arg(args) if declares(args, "stores_results") else False,
                      progress=not args.no_progress, engine=engine_config(args),
                      ray=getattr(args, "ray", None) if ray else None, options=encoder_options(args))


def run_and_print(args, task, settings: dict, spec: dict, ray: bool = False):
    """Run ``task`` through the runner with the knobs the user gave (``settings``, ``spec``:
    name -> value) and print its report (the records as JSON lines with --json) and the signature
    footer; returns the Results."""
    from ..tasks.runner import run_task

    st = task.Settings.make(**settings)
    res = run_task(task, args.encoder, spec=task.Source(**spec), settings=st, run=run_options(args, ray=ray))
    rendered = task.render(res.report)
    if res.report.intervals:
        from ..tasks.intervals import render_intervals

        rendered += "\n\n" + render_intervals(res.report.intervals, st.ci, st.ci_resamples, st.ci_seed)
    if declares(args, "stores_results"):
        print_report(args, res.report.records, rendered)
        save_and_sign(args, res.report)
    else:
        print(rendered)
    return res


def cache_arg(args):
    """The API's ``cache`` argument from --no-cache / --cache-dir."""
    return None if args.no_cache else (args.cache_dir or True)


def save_arg(args):
    """The API's ``save`` argument from --no-save / --results-dir (the CLI stores by default)."""
    return False if args.no_save else (args.results_dir or True)


def add_ray_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--ray", metavar="auto|ADDRESS",
                   help=f"{what}; results are identical to a run without it. 'auto': the cluster of $RAY_ADDRESS "
                        "or `ray start` on this machine, else a local one (needs the ray extra: "
                        "pip install 'xsimpp[ray]')")


def print_report(args, records, rendered: str) -> None:
    """The result records as JSON lines (--json), else the rendered table."""
    import json

    if args.json:
        for r in records:
            print(json.dumps(r.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        print(rendered)


def save_and_sign(args, report) -> None:
    """Print the signature and cache footer (the records were stored by the API call, before any printing)."""
    from ..results import ResultStore

    store = ResultStore(args.results_dir)
    if not args.json:
        more = " (first record; --json shows all)" if len(report.records) > 1 else ""
        print(f"\nsignature: {report.records[0].signature.format()}{more}")
        if getattr(report, "encoder_note", ""):
            print(f"encoder: {report.encoder_note}")
        print(f"sentences encoded: {report.n_encoded}, reused from cache: {report.n_cached}"
              + ("" if args.no_save else f"; results in {store.root}"))
