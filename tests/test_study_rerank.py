"""benchmarks/study_rerank.py reads a report folder only when it is whole: a cells.csv cut mid-row
(which used to rank fewer encoders, silently) or a foreign study.json is one sentence, exit 2."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "study_rerank.py"


def _module():
    spec = importlib.util.spec_from_file_location("study_rerank", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "study"
    d.mkdir()
    (d / "study.json").write_text(json.dumps({"config": {"bootstrap": 10, "permutations": 10, "seed": 0,
                                                        "confidence": 0.95}, "proxies": ["xsim[ratio]"]}))
    rows = ["system,family,lang,direction,xsim[ratio],mining_f1"]
    for s, base in (("a", 10), ("b", 20)):
        for lang in ("deu", "fra"):
            rows.append(f"{s},{s},{lang},{lang}-eng_Latn,{base + 1.5},{90 - base}")
    (d / "cells.csv").write_text("\n".join(rows) + "\n")
    return d


def test_a_whole_folder_is_read(tmp_path):
    meta, cells = _module().read_study(_folder(tmp_path))
    assert len(cells) == 4 and meta["proxies"] == ["xsim[ratio]"]


@pytest.mark.parametrize("damage, says", [
    (lambda d: (d / "cells.csv").write_text((d / "cells.csv").read_text()[:-9]), "row 5 is incomplete"),
    (lambda d: (d / "cells.csv").write_text((d / "cells.csv").read_text().rsplit("\n", 2)[0] + "\n"),
     "has 1 languages for b but 2 for a"),
    (lambda d: (d / "study.json").write_text("[1]"), "is not a study.json"),
    (lambda d: (d / "cells.csv").unlink(), "cannot read"),
])
def test_a_damaged_folder_is_one_sentence(tmp_path, capsys, damage, says):
    d = _folder(tmp_path)
    damage(d)
    with pytest.raises(SystemExit) as e:
        _module().read_study(d)
    assert e.value.code == 2 and says in capsys.readouterr().err
