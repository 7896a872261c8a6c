"""What `xsimpp train` records in a checkpoint (``xsimpp_training.json``) and what encoders read
from it: the layer and prompt it was trained with, and the frozen side of a self-trained checkpoint."""

from __future__ import annotations

from pathlib import Path

from ...errors import BadInputError, MissingResourceError

# The parts of a checkpoint's xsimpp_training.json that xsimpp reads, each with its type: an edited
# or foreign file is refused naming the part, never read as something else.
_MANIFEST_TYPES = {("use", "layer"): (int,), ("use", "prompt"): (str, type(None)), ("use", "frozen"): (dict,),
                   ("data", "sources"): (dict,), ("data", "hold_out_dev"): (int,)}


def training_manifest(folder: Path) -> dict:
    """A checkpoint's ``xsimpp_training.json`` (what `xsimpp train` recorded: ``use``, ``data``, ...),
    type-checked where xsimpp reads it; {} for a folder without that file. A file that is there but
    unreadable is an error: its layer and prompt change every vector, so they are never silently dropped."""
    from ...textio import parse_json

    path = Path(folder) / "xsimpp_training.json"
    if not path.is_file():
        return {}
    try:
        meta = parse_json(path.read_bytes(), path)
    except OSError as e:
        raise MissingResourceError(f"{path} cannot be read ({e.strerror or e})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("use", {}), dict) \
            or not isinstance(meta.get("data", {}), dict):
        raise BadInputError(f"{path} has no 'use' table; it was not written by `xsimpp train`")
    for (table, key), types in _MANIFEST_TYPES.items():
        value = meta.get(table, {}).get(key)
        if key in meta.get(table, {}) and (not isinstance(value, types) or isinstance(value, bool)):
            raise BadInputError(f"{path}: {table}.{key} is {value!r}, not the {' or '.join(t.__name__ for t in types)} "
                                "`xsimpp train` writes; the file was edited or is not xsimpp's")
    frozen = meta.get("use", {}).get("frozen")
    if isinstance(frozen, dict) and not (isinstance(frozen.get("languages", []), list)
                                         and all(isinstance(x, str) for x in frozen.get("languages", []))):
        raise BadInputError(f"{path}: use.frozen.languages must be a list of language codes")
    return meta


def training_use(folder: Path) -> dict:
    """The ``use`` of a checkpoint's ``xsimpp_training.json`` (what `xsimpp train` says the model
    is to be used with); {} for a folder without that file."""
    return training_manifest(folder).get("use", {})


def trained_defaults(folder: Path) -> dict:
    """The layer and prompt a checkpoint of `xsimpp train` was trained with (its
    ``xsimpp_training.json``: ``use``), which become its defaults; {} for any other folder."""
    use = training_use(folder)
    return {k: use[k] for k in ("layer", "prompt") if k in use}


def frozen_side(folder: Path) -> dict | None:
    """The frozen encoder of a `xsimpp train self-train` checkpoint (``use.frozen`` of its
    ``xsimpp_training.json``: the base model, its revision and the languages it encodes), or None."""
    frozen = training_use(folder).get("frozen")
    if not isinstance(frozen, dict) or not {"model", "revision", "languages"} <= set(frozen):
        return None
    return frozen


def language_base(code: str | None) -> str:
    """The language part of a code, lower case: ``eng_Latn`` -> ``eng``, ``en-US`` -> ``en``."""
    return (code or "").replace("-", "_").split("_")[0].lower()


def refuse_frozen_side(folder: Path, adapter: str) -> None:
    """One clear error instead of silently encoding every language with the trained copy."""
    if frozen_side(folder) is not None:
        raise BadInputError(f"{adapter}: {folder} is a self-trained checkpoint whose languages "
                            f"{', '.join(frozen_side(folder)['languages'])} are encoded by its frozen base; "
                            "load it with --encoder hf --model FOLDER")
