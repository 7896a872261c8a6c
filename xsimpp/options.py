"""One way to declare an option: ``knob(default, help, ...)``, a dataclass field whose metadata
holds its help, type, choices, range and how it shows on the command line and in a signature.

Everything a user sets is declared this way, once: a task's data source and settings
(``xsimpp.tasks``), the options every encoder shares (``xsimpp.encoders.base.EncoderOptions``) and
each encoder's own, the study's ``[mining]`` table (the mining task's knobs). The CLI derives its
flags from the declaration (``xsimpp.cli.knobs``), the API its keywords, the study its TOML keys,
and ``check_value`` is the one check of a value against it.
"""

from __future__ import annotations

from dataclasses import Field, field
from typing import Any, Callable, Mapping, Sequence

from .errors import BadInputError


def knob(default: Any, help: str = "", *, flag: str | None = None, type: Callable | None = None,
         choices: Sequence | None = None, metavar: str | None = None, action: str | None = None,
         cli: bool = True, unsigned: str | None = None, signed_in: str | None = None,
         min: float | None = None, max: float | None = None, none_ok: bool = False, const: Any = None) -> Any:
    """One option: its default and help, stated once. The CLI derives ``--name`` (or ``flag``) from
    it; ``cli=False`` keeps it API-only (an object, e.g. a rerank encoder given as a Python object,
    has no command-line spelling beside the one the CLI gives it). ``type`` (int, float, bool, str,
    or a parser), ``choices``, ``min``/``max`` and ``none_ok`` (None, or 'none', means "the owner's
    own default") are what ``check_value`` checks; ``const``: the value of the flag given alone
    (``--ci`` = ``--ci 0.95``).

    In a task's ``Settings`` every knob signs every record unless it says otherwise, once, here:
    ``unsigned`` is the reason it does not (what signs its effect instead, or why it has none);
    ``signed_in`` names the signature key that shows it together with other knobs (BUCC's
    ``filters``), which the settings' ``signed_values`` must then produce."""
    if unsigned is not None and signed_in is not None:
        raise ValueError("a knob is either unsigned or signed in another key, not both")
    if unsigned is not None and not unsigned.strip():
        raise ValueError("an unsigned knob states why it is unsigned")
    return field(default=default, metadata={"help": help, "flag": flag, "type": type, "choices": choices,
                                            "metavar": metavar, "action": action, "cli": cli,
                                            "unsigned": unsigned, "signed_in": signed_in, "min": min, "max": max,
                                            "none_ok": none_ok, "const": const})


def metadata(declared: Field | Mapping) -> Mapping:
    return declared.metadata if isinstance(declared, Field) else declared


_KINDS = {int: "an integer", float: "a number", bool: "true or false", str: "a text"}


def describe(declared: Field | Mapping) -> str:
    """What a value of this option may be, in words (for messages)."""
    md = metadata(declared)
    if md.get("choices"):
        return "one of " + ", ".join(map(str, md["choices"]))
    lo_declared = md.get("min")
    # a parser bounded by integers (a seed) takes an integer
    kind = _KINDS.get(md.get("type"), "an integer" if type(lo_declared) is int else "a value")
    lo, hi = (None if b is None else (int(b) if float(b).is_integer() else b) for b in (md.get("min"), md.get("max")))
    if lo is not None and hi is not None:
        return f"{kind} from {lo} to {hi}"
    if lo is not None:
        return f"{kind} >= {lo}"
    if hi is not None:
        return f"{kind} <= {hi}"
    return kind


def check_value(owner: str, name: str, declared: Field | Mapping, value: Any) -> Any:
    """``value`` as the declared type, or BadInputError naming the owner, the option and its range.
    A type that is a parser rather than int/float/bool/str leaves the value as given."""
    md = metadata(declared)
    kind, none_ok = md.get("type"), md.get("none_ok", False)
    where = f"{owner}: option {name}"
    if value is None or (none_ok and isinstance(value, str) and value.lower() == "none"):
        if none_ok:
            return None
        raise BadInputError(f"{where} takes {describe(md)}, not none")
    v = value
    if kind is bool:
        ok = isinstance(v, bool)
    elif kind is int:
        ok = isinstance(v, int) and not isinstance(v, bool)
    elif kind is float:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")
        v = float(v) if ok else v
    elif kind is str:
        ok, v = True, str(v)
    else:
        ok = True
    choices = md.get("choices")
    if not ok or (choices and v not in choices) or not within_bounds(md, v):
        raise BadInputError(f"{where} takes {describe(md)}, not {value!r}")
    return v


def within_bounds(declared: Field | Mapping, value: Any) -> bool:
    """Whether a number lies within the option's declared ``min``/``max`` (a value that is not a
    number is the type check's to refuse)."""
    md = metadata(declared)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    lo, hi = md.get("min"), md.get("max")
    return (lo is None or value >= lo) and (hi is None or value <= hi)
