"""Data flows one way: datasets -> encoders -> cache -> engine/scoring -> results -> tasks ->
report / CLI. Each package may import only the packages below it (read from the source, so a new
upward import fails here), no module is part of an import circle, nothing inside the package
imports the root package (it re-exports the top-level API), and the engine and metrics load no
torch, no encoder and no CLI."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "xsimpp"
# xsimpp/data is package data, not code: the script beside a data file (entity_pool/build_pool.py,
# which rebuilds it) is run by hand, never imported.
DATA = PACKAGE / "data"


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if DATA not in p.parents)
BASE = {"errors", "options", "paths", "textio", "version"}
# package -> the xsimpp packages it may import (besides itself). "(root)" (xsimpp/__init__.py, the
# top: it re-exports the API) is in no list, so no module inside xsimpp may import it.
ALLOWED = {
    "errors": set(), "paths": {"errors"}, "textio": {"errors"}, "version": set(),
    # knob(): the one declaration of an option (tasks, encoders, the study, the CLI all read it)
    "options": {"errors"},
    "(root)": {"api", "version"},  # xsimpp.evaluate & co.: a lazy re-export (module __getattr__), loaded on first use
    "engine": {"errors", "textio"},
    "scoring": {"errors", "engine"},
    "datasets": BASE,
    "encoders": BASE,
    # augment writes the xsim++ negatives format the datasets layer reads (its STYLES, stated there)
    "augment": BASE | {"datasets"},
    "cache": BASE,
    "results": BASE,
    # Self-training mines with the engine and Keung et al.'s scoring rules, through the cache.
    "training": BASE | {"encoders", "engine", "scoring", "cache"},
    # The runner encodes on a Ray cluster when asked (distributed imports nothing above it).
    "tasks": BASE | {"engine", "scoring", "datasets", "encoders", "cache", "results", "distributed"},
    "report": BASE | {"engine", "scoring", "results", "tasks"},
    # Runs units of work (encoding chunks, mining shards) elsewhere; the engine and tasks take its
    # executors without importing it.
    "distributed": BASE,
    # The Python API: what the CLI does, minus printing (the CLI is a shell over it).
    # It also compares stored results (report.compare), as `xsimpp compare` does.
    "api": BASE | {"engine", "scoring", "datasets", "encoders", "cache", "results", "tasks", "distributed", "study",
                   "report"},
    # The proxy-validation study (`xsimpp study`): runs tasks' pieces over a grid, writes its report.
    # It builds missing xsim++ negatives with the augment package, as `xsimpp augment` would.
    "study": BASE | {"augment", "engine", "scoring", "datasets", "encoders", "cache", "results", "tasks", "report"},
    # Third-party frameworks calling xsimpp (the sentence-transformers evaluator).
    "integrations": BASE | {"api", "datasets", "encoders", "results", "tasks"},
    "cli": None,  # the top: anything
    "__main__": None,
}


def package_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for path in modules():
        rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = rel[:-1] if rel[-1] == "__init__" else rel
        pkg = module if path.name == "__init__.py" else module[:-1]
        top = module[1] if len(module) > 1 else "(root)"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = list(pkg[: len(pkg) - (node.level - 1)])
                    targets = [".".join(base + ([node.module] if node.module else []))]
                else:
                    targets = [node.module or ""]
                if targets[0] == "xsimpp":  # `from .. import augment`: the subpackages named, not the root
                    targets = [f"xsimpp.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                parts = t.split(".")
                if parts[0] == "xsimpp":
                    other = parts[1] if len(parts) > 1 else "(root)"
                    if other != top:
                        found[top].add(other)
    return found


def test_no_package_imports_upward():
    imports = package_imports()
    assert set(imports) <= set(ALLOWED), f"new top-level package(s) {set(imports) - set(ALLOWED)}: place them in ALLOWED"
    for pkg, targets in imports.items():
        allowed = ALLOWED[pkg]
        if allowed is not None:
            assert targets <= allowed, f"xsimpp.{pkg} imports {sorted(targets - allowed)} (allowed: {sorted(allowed)})"


def test_importing_the_metrics_loads_no_torch_encoder_or_cli():
    code = ("import sys, xsimpp.scoring, xsimpp.engine; "
            "print(sorted(m for m in ('torch', 'numba', 'xsimpp.cli', 'xsimpp.tasks', 'xsimpp.encoders') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"  # numba too: the kernels load on first use


def module_graph() -> dict[str, set[str]]:
    """Module -> the xsimpp modules it imports (at module level or inside functions), each import
    resolved to the module it loads: ``from .pkg import name`` loads pkg/__init__ and, when
    ``name`` is a submodule, that submodule too."""
    def exists(mod: str) -> bool:
        rel = Path(*mod.split(".")[1:])
        return (PACKAGE / rel).with_suffix(".py").is_file() or (PACKAGE / rel / "__init__.py").is_file()

    graph: dict[str, set[str]] = {}
    for path in modules():
        rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        pkg = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        edges = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = (".".join(pkg[: len(pkg) - (node.level - 1)] + ([node.module] if node.module else []))
                        if node.level else (node.module or ""))
                if not base.startswith("xsimpp"):
                    continue
                subs = {f"{base}.{a.name}" for a in node.names if exists(f"{base}.{a.name}")}
                edges.update(subs)
                if len(subs) < len(node.names):  # a name defined in base itself: base's code is used
                    edges.add(base)
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name.startswith("xsimpp"))
        edges.discard(module)
    return graph


def test_no_import_circle():
    graph = module_graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                cycle = stack[stack.index(n):] + [n]
                raise AssertionError(f"import circle: {' -> '.join(cycle)}")
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_nothing_inside_imports_the_root_package():
    graph = module_graph()
    importers = sorted(m for m, targets in graph.items() if "xsimpp" in targets and m != "xsimpp")
    assert not importers, f"these modules import the root package xsimpp (the top-level API): {importers}"
