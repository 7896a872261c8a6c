"""Command-line interface (thin: parse, call the library, print, write).

Each subcommand lives in its own module exposing ``register(subparsers)``; its parser sets
``func`` to a ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from ..version import __version__
from ..errors import XsimppError

SUBCOMMANDS = ("eval", "score", "tatoeba", "bucc", "augment", "mine", "filter", "rank", "study", "leaderboard", "compare",
               "explain", "plot",
               "train", "encoders",
               "datasets", "download")


class Parser(argparse.ArgumentParser):
    """argparse with the toolkit's error form: one ``xsimpp: error:`` line (naming the command's
    --help), exit 2 -- not the 20-line usage block; ``--help`` still prints it all."""

    def error(self, message: str):
        command = self.prog.split(" ", 1)[1] + ": " if " " in self.prog else ""
        self.exit(2, f"xsimpp: error: {command}{message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="xsimpp", description="How good is this encoder at mining parallel text? (xsim, xsim++, ...)")
    parser.add_argument("--version", action="version", version=f"xsimpp {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details (cache hits, warnings)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:  # a subcommand whose module is not in this build
            if e.name and e.name.endswith(f"cli.{name}"):
                continue
            raise
        module.register(sub)
    from ..tasks import registry
    from .derived import register_task

    for task in registry.TASKS.values():
        if task.cli:  # a task declared with no CLI module of its own: its subcommand from its knobs
            register_task(sub, task)
    return parser


class Terminated(BaseException):
    """SIGTERM, turned into an exception so that it unwinds like Ctrl-C: atomic writes are
    abandoned whole, committed cache chunks stay."""


def _on_sigterm(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    import signal
    import threading

    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if on_main else None
    try:
        return _main(argv)
    finally:
        if on_main:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="xsimpp: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except XsimppError as e:
        print(f"xsimpp: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a place the library did not name itself: still one sentence with path and cause
        if isinstance(e, BrokenPipeError):  # `xsimpp leaderboard | head`: the reader left; not an error of ours
            sys.stderr.close()
            return 0
        from ..textio import describe_os_error

        print(f"xsimpp: error: {describe_os_error(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("xsimpp: interrupted; cached embeddings and saved results are kept", file=sys.stderr)
        return 130
    except Terminated:
        print("xsimpp: terminated (SIGTERM); cached embeddings and saved results are kept, nothing partial was written",
              file=sys.stderr)
        return 143


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
