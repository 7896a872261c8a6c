"""Command-line flags derived from a task's knobs (``xsimpp.tasks.base.knob``): each field of a
``Source`` or ``Settings`` dataclass is one flag with the field's help, type, choices and default,
so the CLI and the API cannot drift. A flag left out is not passed on, so the task's own default
(and its protocol's preset) decides -- never a second copy of the default here."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, fields
from typing import Any, Iterable


def flag_of(f) -> str:
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def dest_of(f) -> str:
    """Where a knob's value lands in the parsed arguments: named after its flag, so two knobs of
    one name in two declarations (the encoder's ``rerank_k`` and P-xSIM's) cannot share a slot
    once their flags differ -- argparse refuses a flag given twice."""
    return flag_of(f)[2:].replace("-", "_")


def add_knobs(p: argparse.ArgumentParser | Any, cls: type, *, skip: Iterable[str] = (), title: str | None = None) -> None:
    """One flag per CLI knob of ``cls`` (those declared ``cli=False`` or named in ``skip`` have a
    hand-written spelling elsewhere)."""
    target = p.add_argument_group(title) if title else p
    skip = set(skip)
    for f in fields(cls):
        md = f.metadata
        if not md or not md.get("cli", True) or f.name in skip:
            continue
        default = f.default if f.default is not MISSING else None
        shown = "" if default in (None, ()) or isinstance(default, bool) else f" (default: {default})"
        kw: dict[str, Any] = {"dest": dest_of(f), "default": None, "help": md["help"] + shown}
        if md.get("action") == "append":
            kw.update(action="append", metavar=md.get("metavar"))
        elif isinstance(default, bool):
            kw.update(action="store_const", const=True)
        else:
            if md.get("type") is not None:
                kw["type"] = md["type"]
            if md.get("choices") is not None:
                kw["choices"] = tuple(md["choices"])
            if md.get("metavar"):
                kw["metavar"] = md["metavar"]
            if md.get("const") is not None:
                kw.update(nargs="?", const=md["const"])
        target.add_argument(flag_of(f), **kw)


def given(args: argparse.Namespace, cls: type, *, skip: Iterable[str] = ()) -> dict[str, Any]:
    """The knobs of ``cls`` the user set on the command line (absent flags are left out)."""
    skip = set(skip)
    out = {}
    for f in fields(cls):
        if f.name in skip or not f.metadata.get("cli", True):
            continue
        value = getattr(args, dest_of(f), None)
        if value is not None:
            out[f.name] = tuple(value) if f.metadata.get("action") == "append" else value
    return out
