"""Running the CLI inside a test: exit code, stdout and stderr, argparse's own refusals included."""

from __future__ import annotations

from xsimpp.cli import main


def cli(capsys, *argv):
    """``xsimpp ARGV`` in-process; an argparse refusal (a value of the wrong type) exits from parsing,
    so its code is taken from the SystemExit."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err
