"""`xsimpp download`: fetch FLORES-200, FLORES+, Tatoeba v1, BUCC 2018 or LASER's published xsim++
negatives into a data root, with resume, sha256 checks and an all-or-nothing install
(xsimpp/datasets/download.py)."""

from __future__ import annotations

import shlex
import sys

from ..textio import finite, path


def register(sub) -> None:
    from ..datasets.download import SOURCES
    from ..datasets.sources import LASER_XSIMPP_SPLITS

    p = sub.add_parser("download", help="download a dataset (resumable, sha256-checked, installed atomically)",
                       description="Fetch a dataset into a data root: resumes partial downloads, checks each file's "
                                   "sha256 against the checksum kept in xsimpp (or --sha256), and installs nothing "
                                   "unless every file checks out.")
    p.add_argument("source", choices=SOURCES, help="what to fetch")
    p.add_argument("--to", type=path, metavar="DIR", help="data root to install into (default: the user data dir's data folder, "
                                               "which every command searches; laser_xsimpp: its augmented folder, "
                                               "where `eval --augmented auto` looks)")
    p.add_argument("--langs", help="flores_plus: languages to fetch (kea,fur or kea_Latn,...); English comes with them")
    p.add_argument("--pair", action="append", default=[], help="bucc2018: a pair to fetch (repeatable; default: all)")
    p.add_argument("--split", action="append", default=[], choices=LASER_XSIMPP_SPLITS,
                   help="laser_xsimpp: a FLORES-200 split to fetch negatives for (repeatable; default: devtest, the "
                        "one LASER's eval.sh fetches)")
    p.add_argument("--sha256", action="append", default=[], metavar="[NAME=]HEX",
                   help="the expected sha256 of a file (repeatable); needed where xsimpp keeps none")
    p.add_argument("--checksums", type=path, metavar="FILE", help="expected sha256 sums in `sha256sum` format")
    p.add_argument("--unverified", action="store_true",
                   help="accept files xsimpp has no checksum for (their sha256 is written to SHA256SUMS.xsimpp)")
    p.add_argument("--mirror", metavar="URL", help="fetch from this base URL instead of the official one")
    p.add_argument("--retries", type=int, default=3,
                   help="resume a dropped connection this many times, 0 to 100 (default 3)")
    p.add_argument("--timeout", type=finite, default=30.0,
                   help="seconds to wait for the server, 0.1 to 3600 (default 30)")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..api import download
    from ..datasets.download import SUMS_FILE, default_root
    from ..datasets.base import KNOWN_ERRTYPES
    from ..datasets.sources import Source

    def progress(name: str, have: int, total: int | None) -> None:
        if not args.no_progress:
            of = f" / {total / 2**20:.1f} MiB" if total else ""
            end = "\n" if total is not None and have >= total else ""
            print(f"\r{name}: {have / 2**20:.1f} MiB{of}", end=end, file=sys.stderr, flush=True)

    res = download(args.source, args.to, langs=(args.langs or "").split(","), pairs=args.pair, splits=args.split,
                   mirror=args.mirror,
                   sha256=args.sha256, checksums_file=args.checksums, unverified=args.unverified,
                   retries=args.retries, timeout=args.timeout, progress=progress)
    src: Source = res.source
    n = len(src.files)
    how = ("sha256 verified" if res.verified else
           f"NOT all verified (--unverified): the sha256 of what was installed is in {src.dest}/{SUMS_FILE}")
    resumed = f", {res.resumed_bytes / 2**20:.1f} MiB of it resumed" if res.resumed_bytes else ""
    print(f"{src.title}: {n} file(s) fetched ({res.fetched_bytes / 2**20:.1f} MiB{resumed}), {how}; "
          f"installed in {(res.root / src.dest).resolve()}")
    if src.negatives:
        for split, counts in res.errtypes.items():
            print(f"{split}: {sum(counts.values())} variants (" + ", ".join(f"{k} {v}" for k, v in counts.items()) + ")")
        if res.unknown_errtypes:
            print(f"error types xsimpp does not know ({', '.join(KNOWN_ERRTYPES)} are known): "
                  f"{', '.join(res.unknown_errtypes)}; `xsimpp eval` takes them with "
                  + " ".join(f"--allow-errtype {shlex.quote(n)}" for n in res.unknown_errtypes))
        split = next(iter(res.errtypes))
        if res.root.resolve() == default_root(src.home).resolve():
            print(f"`xsimpp eval --split {split} --augmented auto --style paper` uses them")
        else:
            print(f"`xsimpp eval --split {split} --augmented auto --style paper` uses them when {res.root / src.dest} "
                  f"holds FLORES-200 ({res.root / src.dest / split}/); else pass --augmented "
                  f"{res.root / src.dest / f'{split}_augmented'}")
    elif res.root.resolve() == default_root(src.home).resolve():
        print("that data root is searched by every command")
    else:
        print(f"use it with --data-dir {res.root} (or XSIMPP_DATA_DIR={res.root})")
    return 0
