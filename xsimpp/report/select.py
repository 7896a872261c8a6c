"""Which stored results a command reads: the one selection `compare`, `explain`, `plot` and
`leaderboard` share, by the names users type.

An encoder answers to the name it was run with (``sbert``), its full id
(``sbert:sentence-transformers/all-MiniLM-L6-v2``), the id at its revision and its signed ``enc:``
part (``enc:sbert:...@c4a5...+cfg.7de33da4``, with or without ``enc:``). A list of names is split on
the commas outside brackets, so every split name the toolkit writes (``devtest[sample=200,seed=3]``)
selects itself. Where the selection still holds several tables (metric, dataset, split, encoder
options or settings), the error lists each candidate with the exact flags that pick it. How an
interval was drawn (``ci``) changes no number, so it never tells results apart (as comparisons)."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..errors import BadInputError, XsimppError
from ..results import UNCOMPARED_PARAMS, Outcomes, ResultRecord, ResultStore
from ..tasks.intervals import outcome_units

SHOWN = 6  # candidates listed in one error before "... N more"


def split_names(given: str, flag: str) -> list[str]:
    """A comma-separated list of names; a comma inside brackets belongs to its name
    (``devtest[sample=200,seed=3],dev`` is two splits)."""
    names, depth, start = [], 0, 0
    for i, ch in enumerate(given + ","):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth <= 0:
            names.append(given[start:i].strip())
            start, depth = i + 1, 0
    if depth > 0:  # the name the toolkit writes closes its bracket: "dev[" would match nothing, unexplained
        raise BadInputError(f"--{flag} {given} has a '[' without its ']'")
    names = [n for n in names if n]
    if not names:
        raise BadInputError(f"--{flag} names nothing")
    return names


def signed_encoder(record: ResultRecord) -> str:
    """The signature's ``enc:`` part without its prefix: id@revision+cfg.FINGERPRINT."""
    s = record.signature
    return f"{s.encoder}@{s.encoder_revision}+cfg.{s.encoder_fingerprint[:8]}"


def encoder_names(record: ResultRecord) -> set[str]:
    """Every name a record's encoder answers to."""
    enc = record.signature.encoder
    kind, _, model = enc.partition(":")
    run_name = model if kind == "py" and model else kind  # py:NAME: a Python object's, run by NAME
    signed = signed_encoder(record)
    return {enc, run_name, f"{enc}@{record.signature.encoder_revision}", signed, f"enc:{signed}"}


def compared_settings(record: ResultRecord) -> tuple[tuple[str, str], ...]:
    """The signed settings that tell results apart (all but ``ci``), as sorted (name, value) text."""
    return tuple(sorted((k, str(v)) for k, v in record.signature.params.items() if k not in UNCOMPARED_PARAMS))


def settings_text(signature: str) -> str:
    """The compared settings of a signature string (its parts after the metric, but ``ci``): what
    tells tables apart in a leaderboard frame (the HTML page, the charts)."""
    return "|".join(p for p in str(signature).split("|")[4:] if p.split(":", 1)[0] not in UNCOMPARED_PARAMS)


def _field(record: ResultRecord, flag: str) -> str:
    s = record.signature
    return {"dataset": s.dataset, "metric": record.metric, "split": s.split, "lang": record.src_lang}[flag]


def _listed(values: Iterable[str]) -> str:
    values = sorted(set(values))
    more = f" ... ({len(values) - 12} more)" if len(values) > 12 else ""
    return (", ".join(values[:12]) or "nothing") + more


def parse_settings(given: Sequence[str]) -> dict[str, str]:
    """``--setting KEY=VALUE`` flags as a dict (``KEY=``: results without that setting)."""
    out = {}
    for item in given:
        key, eq, val = item.partition("=")
        if not eq or not key.strip():
            raise BadInputError(f"--setting takes KEY=VALUE (e.g. margin=ratio), not {item!r}")
        out[key.strip()] = val.strip()
    return out


@dataclass(frozen=True)
class Selection:
    """What the flags ask for: each field a comma-separated list (None: anything), ``settings``
    from ``--setting``; ``encoder`` only where it filters (the leaderboard's --encoder)."""

    metric: str | None = None
    dataset: str | None = None
    split: str | None = None
    lang: str | None = None
    encoder: str | None = None
    settings: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, args, *, encoder: bool = False) -> "Selection":
        """From parsed CLI flags (those a command lacks count as not given)."""
        return cls(*(getattr(args, f, None) for f in ("metric", "dataset", "split", "lang")),
                   encoder=getattr(args, "encoder", None) if encoder else None,
                   settings=parse_settings(getattr(args, "setting", None) or []))

    def apply(self, records: Iterable[ResultRecord]) -> list[ResultRecord]:
        """The records every given filter keeps; one sentence naming what the store has otherwise."""
        kept = list(records)
        for flag in ("dataset", "metric", "split", "lang"):
            given = getattr(self, flag)
            if given is None:
                continue
            wanted = set(split_names(given, flag))
            if flag == "lang":
                keep = [r for r in kept if r.src_lang in wanted or r.src_lang.split("_")[0] in wanted]
            else:
                keep = [r for r in kept if _field(r, flag) in wanted]
            if not keep:
                raise BadInputError(f"no stored result matches --{flag} {given} (the store has: "
                                    f"{_listed(_field(r, flag) for r in kept)})")
            kept = keep
        if self.encoder is not None:  # a filter: a name shared by several encoder ids keeps them all
            wanted = set(split_names(self.encoder, "encoder"))
            keep = [r for r in kept if encoder_names(r) & wanted]
            if not keep:
                raise BadInputError(f"no stored result matches --encoder {self.encoder} (the store has: "
                                    f"{_listed(r.signature.encoder for r in kept)})")
            kept = keep
        for key, val in self.settings.items():
            keep = [r for r in kept if str(r.signature.params.get(key, "")) == val]
            if not keep:
                have = _listed(str(r.signature.params.get(key, "")) or "(none)" for r in kept)
                raise BadInputError(f"no stored result has the setting {key}={val} (the selection has {key}: {have})")
            kept = keep
        return kept


def of_encoder(records: Sequence[ResultRecord], name: str, flag: str) -> list[ResultRecord]:
    """The records of the encoder ``name`` (any name it answers to); several encoder ids under one
    name are listed with the flag that picks each."""
    if not name.strip():
        raise BadInputError(f"{flag} names no encoder; give the name it ran with (e.g. {flag} e5-small)")
    mine = [r for r in records if name in encoder_names(r)]
    ids = sorted({r.signature.encoder for r in mine})
    if len(ids) > 1:
        raise BadInputError(f"{name} names several encoders in the store; pick one: "
                            + " or ".join(f"{flag} {shlex.quote(i)}" for i in ids))
    if not mine:
        raise BadInputError(f"no stored result of {name} matches (the selection has: "
                            f"{_listed(r.signature.encoder for r in records)}); evaluate it first, e.g. "
                            f"`xsimpp eval --encoder {name} --langs ...`")
    return mine


def table_of(record: ResultRecord) -> tuple:
    """(metric, dataset, split, settings): what results must share to compare with each other."""
    s = record.signature
    return record.metric, s.dataset, s.split, compared_settings(record)


def _groups(records: Iterable[ResultRecord]) -> dict[tuple, list[ResultRecord]]:
    """Records by table and signed encoder (id, revision and options)."""
    out: dict[tuple, list[ResultRecord]] = {}
    for r in records:
        out.setdefault((table_of(r), signed_encoder(r)), []).append(r)
    return out


def _flags(keys: Sequence[tuple], chosen: tuple, encoder_flag: str) -> str:
    """The fewest flags, in a fixed order, that pick ``chosen`` among ``keys`` ((table, signed
    encoder) pairs): a part's flag only where it still tells the candidates left apart."""
    def parts(key):
        (metric, dataset, split, settings), signed = key
        out = [("--metric", metric), ("--dataset", dataset), ("--split", split), (encoder_flag, signed)]
        names = sorted({n for k in keys for n, _ in k[0][3]})
        return out + [("--setting", f"{n}={dict(settings).get(n, '')}") for n in names]  # KEY=: without KEY

    left, flags = list(keys), []
    for i, (flag, value) in enumerate(parts(chosen)):
        if len(left) == 1:
            break
        if len({parts(k)[i][1] for k in left}) > 1:
            flags.append(f"{flag} {shlex.quote(value)}")
            left = [k for k in left if parts(k)[i][1] == value]
    return " ".join(flags)


def _choices(keys: Sequence[tuple], encoder_flag: str) -> str:
    shown = " | ".join(_flags(keys, k, encoder_flag) for k in sorted(keys)[:SHOWN])
    return shown + (f" | ... ({len(keys) - SHOWN} more; `xsimpp leaderboard` lists them)" if len(keys) > SHOWN else "")


def one_table(records: Sequence[ResultRecord], what: str, encoder_flag: str = "--encoder") -> list[ResultRecord]:
    """``records`` when they are one table of one signed encoder; else one sentence listing each
    candidate with the flags that pick it (``what`` names the records: "the stored results of sbert")."""
    groups = _groups(records)
    if len(groups) > 1:
        raise BadInputError(f"{what} are of {len(groups)} kinds; pick one with {_choices(list(groups), encoder_flag)}")
    return next(iter(groups.values()), [])


def one_data(records: Sequence[ResultRecord], what: str) -> list[ResultRecord]:
    """``records`` when they share one dataset and split; else one sentence listing the flags that
    pick each (a chart shows one)."""
    keys = sorted({(("", r.signature.dataset, r.signature.split, ()), "") for r in records})
    if len(keys) > 1:
        raise BadInputError(f"{what} are on {len(keys)} datasets or splits; pick one with {_choices(keys, '')}")
    return list(records)


def partnered(base: Sequence[ResultRecord], system: Sequence[ResultRecord], names: tuple[str, str]
              ) -> tuple[list[ResultRecord], list[ResultRecord], str]:
    """The baseline's and the system's records of the one table both have (``compare``): when
    only one choice has a partner on the other side it is taken, and the returned note says so
    ("" when each side held one table); several such tables are listed with the flags that pick
    each, none with what each side has."""
    flags = ("--baseline", "--system")
    same = {signed_encoder(r) for r in base} & {signed_encoder(r) for r in system}
    if same:
        raise BadInputError(f"{names[1]} and {names[0]} name the same encoder ({', '.join(sorted(same))}); compare "
                            "two encoders (or two option sets of one, by their signed enc: part)")
    sides = [_groups(base), _groups(system)]
    if len(sides[0]) == 1 and len(sides[1]) == 1:  # one each: compare_records names a field that differs
        return list(base), list(system), ""
    shared = sorted({k[0] for k in sides[0]} & {k[0] for k in sides[1]})
    if not shared:
        have = [" or ".join(sorted({_table_text(k[0]) for k in g})) for g in sides]
        raise BadInputError(f"{names[0]} and {names[1]} have no stored results in common ({names[0]}: {have[0]}; "
                            f"{names[1]}: {have[1]}); evaluate both with the same data and settings")
    if len(shared) > 1:
        keys = [(t, "") for t in shared]
        raise BadInputError(f"{names[0]} and {names[1]} both have results of {len(shared)} kinds; pick one with "
                            f"{_choices(keys, '')}")
    picked = []
    for side, flag, name in zip(sides, flags, names):
        keys = [k for k in side if k[0] == shared[0]]
        if len(keys) > 1:  # one table under two revisions or option sets of one encoder
            raise BadInputError(f"{name} has {_table_text(shared[0])} results of {len(keys)} encoder versions; pick "
                                f"one with {_choices(keys, flag)}")
        picked.append(side[keys[0]])
    note = (f"comparing the {_table_text(shared[0])} results, the only ones both {names[0]} and {names[1]} have "
                f"(pick another with --metric, --dataset, --split or --setting)")
    return picked[0], picked[1], note


def _table_text(table: tuple) -> str:
    metric, dataset, split, settings = table
    shown = ",".join(f"{k}={v}" for k, v in settings)
    return f"{metric} {dataset}/{split}" + (f" ({shown})" if shown else "")


def check_value(record: ResultRecord, outcomes: Outcomes, where: str) -> None:
    """A stored number is recomputable from its outcomes: one that is not (a value or an error
    count edited by hand) is refused, never served."""
    if not len(outcomes):
        return
    value = outcome_units(outcomes).value()
    errors = int((~outcomes.correct).sum())
    if not math.isclose(value, record.value, rel_tol=1e-9, abs_tol=1e-9) or (
            record.errors is not None and outcomes.statistic != "weighted_f1" and record.errors != errors):
        raise XsimppError(f"{where} says {record.metric} {record.value:g} with {record.errors} errors, but its "
                          f"outcomes give {value:g} with {errors} (edited by hand?); re-run the evaluation")


def checked(store: ResultStore, records: Iterable[ResultRecord], *, keep_outcomes: bool = True) -> list[ResultRecord]:
    """``records`` read again with their outcomes (``ResultStore.load``: one pair, old or new) and
    each number checked against them; ``keep_outcomes=False`` drops the outcomes once checked."""
    out = []
    for r in records:
        now = store.load(r)
        if now.outcomes is not None:
            check_value(now, now.outcomes, f"the result file {store.path(now)}")
            if not keep_outcomes:
                now.outcomes = None
        out.append(now)
    return out
