"""`xsimpp encoders`: every registered encoder with its kind and installed / missing parts."""

from __future__ import annotations

from tabulate import tabulate


def register(sub) -> None:
    p = sub.add_parser("encoders", help="list encoders and what each needs",
                       description="Every registered encoder (built in or from a package's xsimpp.encoders entry "
                                   "point) with what it needs and whether that is installed.")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..encoders import registry

    rows, hints = [], []
    for name, entry in sorted(registry().items()):
        try:
            cls = entry.load_class()
            missing = [r for r in cls.requirements() if not r.installed]
            status = "ready" if not missing else "missing: " + ", ".join(r.name for r in missing)
            hints += [f"{name}: {r.name}: {r.how_to_get}" for r in missing]
            rows.append([name, cls.kind, status, entry.source, cls.description])
        except ImportError as e:
            rows.append([name, "?", "cannot load", entry.source, ""])
            hints.append(f"{name}: {e}")
    print(tabulate(rows, headers=["encoder", "kind", "status", "from", "description"], tablefmt="simple",
                   maxcolwidths=[None, None, 36, None, 70]))
    if hints:
        print("\nto get the missing parts:")
        for h in hints:
            print(f"  {h}")
    return 0
