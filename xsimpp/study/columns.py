"""The names of a study's columns, made here and nowhere else: a cell's own keys, the built-in
proxies' columns (``xsim[margin]``, ``xsim++[style]``, ``xsim++[style,margin]``,
``xsim++[style:types]``, ``tatoeba``) and their error-type counts (``err_<key>_<type>``), and
which names a ``[[proxies.task]]`` column may not take."""

from __future__ import annotations

CELL_KEYS = ("system", "family", "lang", "direction")
TATOEBA = "tatoeba"
# the built-in proxies' prefixes, the error-type counts', the ground truth's (mining_*, n_*)
TAKEN_PREFIXES = ("xsim[", "xsim++[", "err_", "mining_", "n_")


def xsim_column(margin: str) -> str:
    return f"xsim[{margin}]"


def xsimpp_key(style: str, margin: str | None = None) -> str:
    """xsim++'s name for a style, and for another margin than ``[proxies] xsimpp_margin``."""
    return style if margin is None else f"{style},{margin}"


def xsimpp_column(key: str, types: tuple[str, ...] = ()) -> str:
    """xsim++ of ``key`` (``xsimpp_key``), or counting only the error ``types``."""
    return f"xsim++[{key}:{'+'.join(types)}]" if types else f"xsim++[{key}]"


def count_column(key: str, error_type: str) -> str:
    return f"err_{key}_{error_type}"


def column_taken(column: str) -> bool:
    """A cell's own key, a built-in column, or a name with a built-in or ground-truth prefix."""
    return column in (*CELL_KEYS, TATOEBA) or column.startswith(TAKEN_PREFIXES)
