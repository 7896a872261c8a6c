"""`xsimpp leaderboard`: export stored results (one row per encoder x language x metric)."""

from __future__ import annotations

from ..errors import BadInputError
from ..textio import path


def register(sub) -> None:
    p = sub.add_parser("leaderboard", help="export the results store as a CSV leaderboard",
                       description="The results store as a table (one row per encoder x dataset x pair x metric x "
                                   "settings), a CSV file (--csv) or a self-contained HTML page (--html) with one "
                                   "sortable table per dataset, metric and settings.")
    p.add_argument("--csv", type=path, metavar="FILE", help="write the leaderboard to FILE (CSV)")
    p.add_argument("--html", type=path, metavar="FILE",
                   help="write a self-contained HTML page (sortable tables, error types; opens without a server)")
    p.add_argument("--results-dir", type=path, help="results store folder (default: user data dir)")
    g = p.add_argument_group("filters (each takes a comma-separated list; a record is kept when it matches every "
                             "filter given)")
    for flag, what in FILTERS.items():
        g.add_argument(f"--{flag}", metavar="NAMES", help=f"only results of these {what}")
    p.set_defaults(func=run)


# flag -> what it names; the record field it matches is _field(record, flag)
FILTERS = {"dataset": "datasets (flores200, tatoeba, bucc2018, ...)", "encoder": "encoders (their id: e5-small, ...)",
           "metric": "metrics (xsim, xsim++, tatoeba_acc_mean, bucc_f1, ...)", "split": "splits (devtest, dev[:50], ...)",
           "lang": "source languages (FLORES codes as stored: kea_Latn, ...; or their first part: kea)"}


def _field(record, flag: str) -> str:
    s = record.signature
    return {"dataset": s.dataset, "encoder": s.encoder, "metric": record.metric, "split": s.split,
            "lang": record.src_lang}[flag]


def add_selection_options(p) -> None:
    """Which stored results `compare` and `explain` read: the leaderboard's filters but the encoder
    (each names its encoders itself) and ``--setting``."""
    g = p.add_argument_group("which results (comma-separated lists; needed where the store holds several)")
    for flag in ("metric", "dataset", "split", "lang"):
        g.add_argument(f"--{flag}", metavar="NAMES", help=f"only results of these {FILTERS[flag]}")
    g.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                   help="only results signed with this setting (e.g. margin=ratio, mode=index; repeatable)")


def select_records(records, args) -> list:
    """The records every given filter keeps (a language matches by its full code or its first part)."""
    kept = list(records)
    for flag in FILTERS:
        given = getattr(args, flag, None)
        if not given:
            continue
        wanted = {w.strip() for w in given.split(",") if w.strip()}
        if not wanted:
            raise BadInputError(f"--{flag} names nothing")
        known = {_field(r, flag) for r in kept}
        if flag == "lang":
            keep = [r for r in kept if r.src_lang in wanted or r.src_lang.split("_")[0] in wanted]
        else:
            keep = [r for r in kept if _field(r, flag) in wanted]
        if not keep:
            raise BadInputError(f"no stored result matches --{flag} {given} (the store has: "
                                f"{', '.join(sorted(known)[:12]) or 'nothing'}{' ...' if len(known) > 12 else ''})")
        kept = keep
    return kept


def parse_settings(given: list[str]) -> dict[str, str]:
    """--setting KEY=VALUE flags as a dict."""
    out = {}
    for item in given:
        key, eq, val = item.partition("=")
        if not eq or not key.strip():
            raise BadInputError(f"--setting takes KEY=VALUE (e.g. margin=ratio), not {item!r}")
        out[key.strip()] = val.strip()
    return out


def pick_records(records, encoder: str, settings: dict[str, str]) -> list:
    """``encoder``'s records under the given settings (``--setting``): of one metric, dataset, split
    and set of settings, or one sentence naming what varies (`compare`, `explain`)."""
    mine = [r for r in records if r.signature.encoder in (encoder, f"py:{encoder}")]  # py:NAME: an object's
    if not mine:  # a registered name stands for its id (sbert -> sbert:sentence-transformers/...) when only one
        ids = {r.signature.encoder for r in records if r.signature.encoder.split(":")[0] == encoder}
        if len(ids) > 1:
            raise BadInputError(f"{encoder} names several encoders in the store ({', '.join(sorted(ids))}); give one")
        mine = [r for r in records if r.signature.encoder in ids]
    if not mine:
        have = sorted({r.signature.encoder for r in records})
        raise BadInputError(f"no stored result of {encoder} matches (the selection has: {', '.join(have) or 'nothing'}); "
                            f"evaluate it first, e.g. `xsimpp eval --encoder {encoder} --langs ...`")
    for key, val in settings.items():
        mine = [r for r in mine if str(r.signature.params.get(key)) == val]
        if not mine:
            raise BadInputError(f"no stored result of {encoder} has the setting {key}={val}")
    groups: dict[tuple, list] = {}
    for r in mine:
        s = r.signature
        params = tuple(sorted((k, str(v)) for k, v in s.params.items() if k != "ci"))
        groups.setdefault((r.metric, s.dataset, s.split, s.encoder_fingerprint, params), []).append(r)
    if len(groups) > 1:
        keys = list(groups)
        names = ("metric", "dataset", "split", "encoder options")
        varying = [n for i, n in enumerate(names) if len({k[i] for k in keys}) > 1]
        settings_seen: dict[str, set] = {}
        for k in keys:
            for name, v in k[4]:
                settings_seen.setdefault(name, set()).add(v)
        varying += [f"setting {n} ({', '.join(sorted(v))})" for n, v in settings_seen.items()
                    if len(v) > 1 or any(n not in dict(k[4]) for k in keys)]
        raise BadInputError(f"the stored results of {encoder} differ in {', '.join(varying)}; select one with "
                            "--metric, --dataset, --split or --setting KEY=VALUE")
    return next(iter(groups.values()))


def run(args) -> int:
    from ..results import ResultStore, leaderboard_frame, write_leaderboard_csv
    from .common import check_outputs

    check_outputs(args, files={"csv": "--csv", "html": "--html"})
    records = select_records(ResultStore(args.results_dir).records(), args)
    if args.csv or args.html:
        if args.csv:
            n = write_leaderboard_csv(records, args.csv)
            print(f"wrote {n} rows to {args.csv}")
        if args.html:
            from ..report import write_leaderboard_html

            n = write_leaderboard_html(records, args.html)
            print(f"wrote {n} results to {args.html}")
        return 0
    df = leaderboard_frame(records)
    if df.empty:
        print("no results yet; run `xsimpp eval` first")
        return 0
    from tabulate import tabulate

    cols = ["encoder", "dataset", "split", "src_lang", "tgt_lang", "metric", "value", "n", "margin", "k", "mode"]
    # Settings a metric does not have (BUCC has no mode) show as '-', not nan.
    import pandas as pd

    body = [["-" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v for v in row]
            for row in df[cols].astype(object).values.tolist()]
    print(tabulate(body, headers=cols, tablefmt="simple", floatfmt=".2f"))
    return 0
