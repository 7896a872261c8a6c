"""What the wheel holds: the embedded data is package data (CI builds the wheel, installs it in
place of the checkout and runs the README's main job from another folder)."""

from __future__ import annotations

import sys
from pathlib import Path

import xsimpp
from xsimpp.paths import repo_data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_the_embedded_data_is_inside_the_package_and_declared_as_package_data():
    package = Path(xsimpp.__file__).resolve().parent
    assert repo_data_dir().resolve().parent == package
    for needed in ("demo/eng_Latn.dev", "demo/dev_augmented/eng_Latn_augmented.dev", "entity_pool/entities.tsv"):
        assert (repo_data_dir() / needed).is_file(), needed
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "data/**/*" in config["tool"]["setuptools"]["package-data"]["xsimpp"]
    assert "graft tests" in (ROOT / "MANIFEST.in").read_text(encoding="utf-8")


def test_the_changelog_names_this_version():
    """One version, in xsimpp/version.py; the changelog's newest release and CITATION.cff say it too."""
    import re

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    newest = re.search(r"^## \[(\d+\.\d+\.\d+)\]", changelog, re.M)
    assert newest and newest.group(1) == xsimpp.__version__
    assert f"version: {xsimpp.__version__}" in (ROOT / "CITATION.cff").read_text(encoding="utf-8")
