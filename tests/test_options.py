"""One way to declare an option (``xsimpp.options.knob``), each default stated once: the study's
[mining] keys are the mining task's knobs, the presets show the defaults they keep through
placeholders, and every command's encoder flags come from ``EncoderOptions``."""

from __future__ import annotations

import re
import sys
from dataclasses import MISSING, fields

import pytest

from xsimpp.encoders import EncoderOptions
from xsimpp.study import config as C
from xsimpp.tasks import mining as M
from xsimpp.tasks.mining import MiningSettings, MiningSource

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _default(f):
    return f.default if f.default is not MISSING else (f.default_factory() if f.default_factory is not MISSING else None)


def test_the_mining_table_is_the_mining_tasks_knobs():
    knobs = {f.name: f for cls in (MiningSource, MiningSettings) for f in fields(cls)}
    study = C.StudyConfig.__dataclass_fields__
    assert set(C.TABLES["mining"]) <= set(knobs)
    for name in C.TABLES["mining"] + ("seed", "flores_lines", "ntrex_lines"):
        a, b = _default(study[name]), _default(knobs[name])
        if name == "whole_sources":  # the task's None is this pool (less FLORES dev with unpaired sources)
            b = M.WHOLE_SOURCES
        assert (list(a) if isinstance(a, tuple) else a) == (list(b) if isinstance(b, tuple) else b), name


@pytest.mark.parametrize("template", [C._SMALL, C._CHECKPOINTS], ids=["small", "checkpoints"])
def test_no_preset_writes_a_default_again(template):
    """A preset line whose value equals the key's default must be a placeholder, not a copy."""
    study = C.StudyConfig.__dataclass_fields__
    table = None
    for line in template.splitlines():
        head = re.match(r"^\[(\[?)(\w+)\]", line)
        if head:
            table = None if head.group(1) else head.group(2)
            continue
        m = re.match(r"^(\w+) = (.+?)(\s+#.*)?$", line)
        if not m or table is None or m.group(1) not in study:
            continue
        key, value = m.group(1), m.group(2)
        if value.startswith("<"):
            assert value == f"<{key}>"
            continue
        default = _default(study[key])
        given = tomllib.loads(f"x = {value}")["x"]
        assert given != (list(default) if isinstance(default, tuple) else default), f"[{table}] {key} copies the default"


def test_presets_render_to_valid_configurations():
    for name, text in C.PRESETS.items():
        assert "<" not in re.sub(r"#.*", "", text), name
        assert C.parse_config(text, name).name == name


def test_every_encoding_command_takes_the_declared_encoder_flags():
    from xsimpp.cli import build_parser
    from xsimpp.cli.knobs import dest_of

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    declared = [f for f in fields(EncoderOptions) if f.metadata.get("cli", True)]
    for command in ("eval", "tatoeba", "bucc", "mteb-bitext", "mining-f1", "filter"):
        flags = {a.dest: a for a in sub.choices[command]._actions}
        for f in declared:
            assert dest_of(f) in flags, (command, f.name)
            assert flags[dest_of(f)].help.startswith(f.metadata["help"])


def test_encoder_options_are_checked_from_their_declaration():
    from xsimpp.encoders import create_encoder
    from xsimpp.errors import BadInputError

    with pytest.raises(BadInputError, match=r"encoder chargram: option n_features takes an integer from 1 to 16777216"):
        create_encoder("chargram", n_features=0)
    with pytest.raises(BadInputError, match="option pooling takes one of mean, cls"):
        create_encoder("hf", pooling="max")
