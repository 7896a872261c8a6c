"""docs/performance.md's "What a full README line costs" is benchmarks/readme_full_costs.py's
measurement (benchmarks/results/readme_full_costs.json): the table and its sentences are made from
the committed file and must be on the page; the file covers exactly the pages' lines that encode or
train, read as tests/test_readme_lines.py reads them; its sizes are the commands' own counts."""

from __future__ import annotations

import json
import runpy
import shlex
import sys

import pytest
from conftest import REPO, missing, shared_data_dir
from test_readme_lines import PAGES, page_lines

sys.path.insert(0, str(REPO / "benchmarks"))  # the driver imports its neighbours (bounds, machine)
DRIVER = runpy.run_path(str(REPO / "benchmarks" / "readme_full_costs.py"))
RESULT = json.loads(DRIVER["OUT"].read_text(encoding="utf-8"))
PAGE = REPO / "docs" / "performance.md"


def test_the_driver_reads_the_pages_as_the_readme_test_does():
    assert DRIVER["PAGES"] == PAGES
    for page in PAGES:
        assert DRIVER["page_lines"](page) == page_lines(page)


def test_the_measurement_covers_every_line_that_encodes_or_trains():
    lines = DRIVER["costly_lines"]()
    assert len(lines) >= 8  # the pages' encoding and training lines were found at all
    assert [row["line"] for row in RESULT["lines"]] == lines, "readme_full_costs.json is stale: run benchmarks/readme_full_costs.py"
    assert RESULT["full_run"]["line"] in lines


def test_the_docs_table_is_the_measurement():
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## What a full README line costs", 1)[1].split("\n## ", 1)[0]
    rows = DRIVER["table_rows"](RESULT)
    missing_rows = [row for row in rows if row not in section]
    assert not missing_rows, f"docs/performance.md's full-costs table differs from the JSON: {missing_rows[:2]}"
    flowing = " ".join(section.split())
    missing_said = [s for s in DRIVER["summary"](RESULT) if s not in flowing]
    assert not missing_said, missing_said


def test_every_line_has_a_time_from_a_measured_rate():
    for row in RESULT["lines"]:
        assert row["predicted_seconds"] > 0, row["line"]
        assert ("sentences" in row) != ("steps" in row), row["line"]
    full = RESULT["full_run"]
    assert full["predicted_seconds"] == next(r for r in RESULT["lines"] if r["line"] == full["line"])["predicted_seconds"]


@pytest.mark.parametrize("argv, message", [
    (["--rate-limit", "0"], "an integer from 1 to 1012"),
    (["--training-steps", "1000"], "an integer from 1 to 100"),
    (["--full-line", "xsimpp encoders"], "--full-line must be one of the pages' encoding lines"),
])
def test_the_drivers_bad_values_end_in_one_sentence(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        DRIVER["main"](argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_the_sizes_are_the_commands_own_counts():
    """Recount the lines that need no set-up line before them (the augmented ones need `augment`)."""
    if shared_data_dir() is None:
        missing("real data not found: the lines read FLORES-200, Tatoeba, BUCC and NTREX "
                "(run `xsimpp download ...`, or set XSIMPP_DATA_DIR)", data=True)
    for row in RESULT["lines"]:
        argv = shlex.split(row["line"])[1:]
        if "sentences" in row and "--augmented" not in argv:
            assert DRIVER["encoding_size"](argv) == {"encoder": row["encoder"], "sentences": row["sentences"]}, argv
