"""Shared fixtures: an isolated xsimpp home per test, and the real data folder when present."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path | None:
    """Real evaluation data: $XSIMPP_DATA_DIR, else ../shared/data beside the checkout."""
    env = os.environ.get("XSIMPP_DATA_DIR")
    for cand in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if (cand / "flores200").is_dir():
            return cand
    return None


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """Every test gets its own cache and results folders; real data stays reachable."""
    home = tmp_path / "xsimpp-home"
    monkeypatch.setenv("XSIMPP_HOME", str(home))
    monkeypatch.delenv("XSIMPP_CACHE_DIR", raising=False)
    monkeypatch.delenv("XSIMPP_RESULTS_DIR", raising=False)
    return home


@pytest.fixture
def real_data() -> Path:
    d = shared_data_dir()
    if d is None:
        pytest.skip("real data not found: set XSIMPP_DATA_DIR to the shared data folder (../shared/data)")
    return d
