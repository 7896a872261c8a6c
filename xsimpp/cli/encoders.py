"""`xsimpp encoders`: every registered encoder with its kind and installed / missing parts."""

from __future__ import annotations

from tabulate import tabulate


def register(sub) -> None:
    p = sub.add_parser("encoders", help="list encoders and what each needs")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..encoders import registry

    rows = []
    for name, entry in sorted(registry().items()):
        try:
            cls = entry.load_class()
            reqs = cls.requirements()
            status = "ready" if all(r.installed for r in reqs) else "missing: " + "; ".join(
                f"{r.name} ({r.how_to_get})" for r in reqs if not r.installed)
            rows.append([name, cls.kind, status, entry.source, cls.description])
        except ImportError as e:
            rows.append([name, "?", f"cannot load: {e}", entry.source, ""])
    print(tabulate(rows, headers=["encoder", "kind", "status", "from", "description"], tablefmt="simple"))
    return 0
