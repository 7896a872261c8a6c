"""Shared fixtures: an isolated xsimpp home per test, the real data folder, the one rule for
tests whose resources are missing (``missing``), and the check of a docs section printed from
committed files (``assert_section_is``).

``XSIMPP_REQUIRE_DATA=1`` (set by ``.ci/run``) turns a missing *data* resource -- the real data
folder, NLTK data, the spaCy English model, things CI provides -- into a test failure with the same
reason; without it such tests skip with the reason. Resources that are not data (a CUDA GPU, a
headless browser) always skip.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
# What a user types to get the data; CI's copy is named last (its folder beside the checkout).
DATA_HINT = ("fetch it with `xsimpp download flores200` (likewise tatoeba, bucc2018; `xsimpp datasets` says where "
             "the others go), or set XSIMPP_DATA_DIR to a folder that holds it, as CI does with ../shared/data")


def require_data() -> bool:
    """True when XSIMPP_REQUIRE_DATA=1: missing data fails tests instead of skipping them."""
    return os.environ.get("XSIMPP_REQUIRE_DATA", "").strip() == "1"


def missing(reason: str, *, data: bool) -> NoReturn:
    """Leave a test whose resource is missing: skip with `reason`, or -- when the resource is data
    (``data=True``) and XSIMPP_REQUIRE_DATA=1 -- fail with the same reason. Every skip for a missing
    resource goes through here, so the rule is stated once."""
    __tracebackhide__ = True  # reports point at the test or fixture that called this
    if data and require_data():
        pytest.fail(f"{reason} [XSIMPP_REQUIRE_DATA=1: missing data fails instead of skipping]", pytrace=False)
    pytest.skip(reason)


def data_dir_problem() -> str | None:
    """Why no real data folder is usable (None when one is): an explicitly set XSIMPP_DATA_DIR is
    used as given, never replaced by ../shared/data, so a wrong setting is reported, not papered over."""
    env = os.environ.get("XSIMPP_DATA_DIR")
    if env:
        if (Path(env) / "flores200").is_dir():
            return None
        return f"real data not found: XSIMPP_DATA_DIR={env} has no flores200/ ({DATA_HINT})"
    if (SHARED_DATA / "flores200").is_dir():
        return None
    return f"real data not found: XSIMPP_DATA_DIR is unset and {SHARED_DATA} has no flores200/ ({DATA_HINT})"


def shared_data_dir() -> Path | None:
    """Real evaluation data: $XSIMPP_DATA_DIR when set, else ../shared/data beside the checkout;
    None when that folder has no flores200/ (see ``data_dir_problem`` for why)."""
    if data_dir_problem() is not None:
        return None
    env = os.environ.get("XSIMPP_DATA_DIR")
    return Path(env) if env else SHARED_DATA


def pytest_report_header(config):
    d = shared_data_dir()
    mode = ("XSIMPP_REQUIRE_DATA=1: missing data FAILS tests" if require_data()
            else "missing data skips tests (XSIMPP_REQUIRE_DATA=1 makes it fail)")
    return [f"xsimpp real data: {d if d else data_dir_problem()}; NLTK_DATA={os.environ.get('NLTK_DATA') or '(unset)'}",
            f"xsimpp: {mode}"]


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> Path:
    """One folder of built models (the e5-small torch folder, ~0.5 GB, unpacked once) for the
    whole session: rebuilding it in every test's home would cost seconds and disk per test."""
    return Path(os.environ.get("XSIMPP_TEST_MODELS_DIR") or tmp_path_factory.mktemp("models"))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch, models_dir):
    """Every test gets its own cache and results folders; real data and built models stay reachable."""
    home = tmp_path / "xsimpp-home"
    monkeypatch.setenv("XSIMPP_HOME", str(home))
    monkeypatch.setenv("XSIMPP_MODELS_DIR", str(models_dir))
    monkeypatch.delenv("XSIMPP_CACHE_DIR", raising=False)
    monkeypatch.delenv("XSIMPP_RESULTS_DIR", raising=False)
    return home


@pytest.fixture
def real_data() -> Path:
    """The real data folder; skips (fails under XSIMPP_REQUIRE_DATA=1) when there is none."""
    d = shared_data_dir()
    if d is None:
        missing(data_dir_problem() or "real data not found", data=True)
    return d


def assert_section_is(text: str, start: str, end: str, rows) -> None:
    """The one ``start`` ... ``end`` section of a page ``text`` holds every non-blank line of ``rows``
    and no other line: what a docs table printed from committed files must be."""
    assert text.count(start) == 1, f"the page has no single {start} section"
    section = text.split(start)[1].split(end)[0]
    rows = [r for r in rows if r.strip()]
    missing = [r for r in rows if r not in section]
    assert missing == [], missing[:3]
    assert len([r for r in section.splitlines() if r.strip()]) == len(rows), "the section holds lines no file gives"
