"""The benchmark drivers' command lines: every number typed there has a lowest and a highest value,
checked by argparse before any work starts, and a bad one ends as xsimpp's commands end -- one
sentence on stderr and exit 2, not a traceback minutes into a run (`--n 0` divided by zero after
the model loaded; `--dim 10**9` asked numpy for terabytes).

The bounds are those of the engine where one exists (threads, k, memory) and otherwise what a
benchmark on one machine can mean: sizes up to 10^7 rows (a mining run past it is hours), vector
widths up to 4096 (the widest encoder is 1024), up to 100 repeats or rounds of a timing."""

from __future__ import annotations

import argparse

MAX_ROWS = 10**7  # sentences, vectors, pairs of one benchmark
MAX_DIM = 4096
MAX_REPEATS = 100  # repeats, rounds: best-of or interleaved timings
MAX_THREADS = 1024  # xsimpp.engine.knn.MAX_THREADS
MAX_K = 1024  # neighbours: the engine keeps k per row in its top-k lists
MAX_SEED = 2**63 - 1  # what numpy, torch and Python's random take (xsimpp.textio.MAX_SEED)
MIN_MEMORY, MAX_MEMORY = 2**20, 2**40  # a memory budget: 1 MiB (one tile) to 1 TiB
FLORES_LINES = 1012  # lines per language of FLORES-200 devtest (dev: 997; a slice takes what there is)


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one line naming --help (not the usage block), exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def count(low: int, high: int):
    """An argparse ``type``: an integer from ``low`` to ``high``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"an integer from {low} to {high}, not {text!r}")
        return value

    return parse


def counts(low: int, high: int):
    """An argparse ``type``: a comma-separated list of integers from ``low`` to ``high``."""
    one = count(low, high)

    def parse(text: str) -> list[int]:
        parts = [p.strip() for p in text.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"a comma-separated list of integers, not {text!r}")
        try:
            return [one(p) for p in parts]
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"each of {text!r} is {e}") from None

    return parse


def shape(high: int = MAX_ROWS):
    """An argparse ``type``: ROWSxCOLS, each from 1 to ``high``, as a (rows, cols) pair."""
    side = count(1, high)

    def parse(text: str) -> tuple[int, int]:
        parts = text.lower().split("x")
        if len(parts) != 2:
            raise argparse.ArgumentTypeError(f"ROWSxCOLS (e.g. 1012x45000), not {text!r}")
        try:
            return side(parts[0]), side(parts[1])
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"each side of {text!r} is {e}") from None

    return parse


def memory(text: str) -> str:
    """An argparse ``type``: a memory budget as xsimpp reads it ('4GB', '512MiB'), from 1 MiB to 1 TiB;
    the text is kept, as the drivers hand it on to xsimpp's own flags."""
    from xsimpp.engine.mining import parse_memory
    from xsimpp.errors import BadInputError

    try:
        value = parse_memory(text)
    except BadInputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if not MIN_MEMORY <= value <= MAX_MEMORY:
        raise argparse.ArgumentTypeError(f"a memory budget from 1MiB to 1TiB, not {text!r}")
    return text


rows = count(1, MAX_ROWS)
dim = count(1, MAX_DIM)
repeats = count(1, MAX_REPEATS)
threads = count(1, MAX_THREADS)
k = count(1, MAX_K)
seed = count(0, MAX_SEED)
flores_lines = count(1, FLORES_LINES)
