"""A [[proxies.task]] table's column: left out, the metric's name; blank, one sentence and exit 2
(it silently became the metric's name, so the tables named a column the file did not)."""

from __future__ import annotations

import re

import pytest

from xsimpp.cli import main
from xsimpp.errors import BadInputError
from xsimpp.study.config import PRESETS, TaskProxy, check_config, parse_config


def _with_proxy(entry: str) -> str:
    return PRESETS["small"].replace("[mining]", f"[[proxies.task]]\n{entry}\n\n[mining]")


@pytest.mark.parametrize("column", ['""', '"   "'])
def test_a_blank_column_is_one_sentence(column):
    with pytest.raises(BadInputError, match=re.escape("column is blank; give the proxy a name, or leave column out "
                                                      "for the metric's ('xsim')")):
        parse_config(_with_proxy(f'task = "xsim"\nmetric = "xsim"\ncolumn = {column}\noptions = {{ k = 3 }}'))


def test_a_blank_column_ends_the_study_command_with_exit_2(tmp_path, capsys):
    config = tmp_path / "blank-column.toml"
    config.write_text(_with_proxy('task = "xsim"\nmetric = "xsim"\ncolumn = ""\noptions = { k = 3 }'), encoding="utf-8")
    out = tmp_path / "study-out"
    assert main(["study", str(config), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("xsimpp: error: ") and "column is blank" in err and "Traceback" not in err
    assert len(err.splitlines()) == 1
    assert not out.exists()  # refused before any work


def test_a_left_out_column_is_the_metrics_name_in_toml_and_in_the_api():
    cfg = parse_config(_with_proxy('task = "xsim"\nmetric = "xsim"\noptions = { k = 3 }'))
    assert [tp.column for tp in cfg.task_proxies] == ["xsim"]
    assert TaskProxy("xsim", "xsim").column == "xsim"
    assert TaskProxy("xsim", "xsim", "my-xsim").column == "my-xsim"


def test_a_blank_column_given_through_the_api_is_refused_too():
    import dataclasses

    cfg = dataclasses.replace(parse_config(PRESETS["small"]), task_proxies=[TaskProxy("xsim", "xsim", " ")])
    with pytest.raises(BadInputError, match="column is blank"):
        check_config(cfg)
