"""Is encoder B better than A? Paired comparison of stored results on the same sentences
(`xsimpp compare`, ``xsimpp.compare``): per language pair and over all of them, the difference, its
confidence interval, the paired bootstrap and paired approximate-randomisation p-values, both
corrected across the language pairs (Holm or Benjamini-Hochberg), and a one-line verdict.

Two records are compared only when their signatures agree on everything but the encoder (its id,
revision and options' fingerprint): data, checksum, split, metric and every setting; the first
field that differs is named. Every record needs its per-sentence outcomes, checked against the
digest it carries (``ResultStore.outcomes``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..errors import BadInputError
from ..results import Outcomes, ResultRecord
from ..scoring.significance import AR_TRIALS, BOOTSTRAP_RESAMPLES, DEFAULT_SEED, PairedResult, compare, correct
from ..tasks.intervals import outcome_units
from .select import check_value
from ..tasks import registry

ENCODER_FIELDS = ("encoder", "encoder_revision", "encoder_fingerprint")


@dataclass(frozen=True)
class PairComparison:
    pair: str  # "kea_Latn-eng_Latn", or "all (N pairs)"
    result: PairedResult
    p_bootstrap_adjusted: float | None = None  # None for the overall row (one test, nothing to correct)
    p_randomization_adjusted: float | None = None
    verdict: str = ""


@dataclass
class Comparison:
    """One system against the baseline on one metric (``rows``: each pair, then all of them)."""

    metric: str
    dataset: str
    split: str
    baseline: str
    system: str
    lower_is_better: bool
    correction: str
    level: float
    alpha: float
    settings: dict = field(default_factory=dict)
    rows: list[PairComparison] = field(default_factory=list)

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        for row, d in zip(self.rows, out["rows"]):
            d["difference"] = row.result.difference
        return out


def _encoder_label(r: ResultRecord) -> str:
    s = r.signature
    return f"{s.encoder}@{s.encoder_revision}+cfg.{s.encoder_fingerprint[:8]}"


def check_comparable(a: ResultRecord, b: ResultRecord) -> None:
    """Same data, split, metric and settings; only the encoder may differ (else: the field, named)."""
    sa = dataclasses.replace(b.signature, **{f: getattr(a.signature, f) for f in ENCODER_FIELDS})
    ok, diff = a.signature.comparable_with(sa)
    if a.src_lang != b.src_lang or a.tgt_lang != b.tgt_lang:
        diff = ["language pair"] + diff
    if not ok or diff:
        field_name = diff[0]
        va = a.signature.params.get(field_name, getattr(a.signature, field_name, None))
        vb = b.signature.params.get(field_name, getattr(b.signature, field_name, None))
        raise BadInputError(f"cannot compare the {a.metric} of {a.src_lang}-{a.tgt_lang}: the results differ in "
                            f"{field_name} ({va!r} vs {vb!r}), not only in the encoder")


def verdict(row: PairedResult, p_bs: float, p_ar: float, alpha: float, lower_is_better: bool, system: str,
            baseline: str) -> str:
    d = row.difference
    if d == 0 and row.ci_low == row.ci_high == 0:
        return f"no difference: the two agree on every resample (no significant difference at p < {alpha:g})"
    if p_bs < alpha and p_ar < alpha and d != 0:
        better = (d < 0) == lower_is_better
        return f"{system} is {'better' if better else 'worse'} than {baseline} (both tests, p < {alpha:g})"
    if p_bs < alpha or p_ar < alpha:
        return f"unclear: one test finds a difference at p < {alpha:g}, the other does not"
    return f"no significant difference at p < {alpha:g}"


def compare_records(baseline: Sequence[ResultRecord], system: Sequence[ResultRecord],
                    outcomes: Callable[[ResultRecord], Outcomes], *, correction: str = "holm", level: float = 0.95,
                    n_resamples: int = BOOTSTRAP_RESAMPLES, n_trials: int = AR_TRIALS, seed: int = DEFAULT_SEED,
                    bootstrap_method: str = "shift") -> Comparison:
    """``system``'s records against ``baseline``'s, matched by language pair (one metric, one set of
    settings); ``outcomes`` reads a record's outcomes (the store's, checked)."""
    if not baseline or not system:
        raise BadInputError("nothing to compare: each side needs at least one result")
    by_pair = {}
    for side, records in (("baseline", baseline), ("system", system)):
        for r in records:
            key = (r.src_lang, r.tgt_lang)
            if key in by_pair.get(side, {}):
                raise BadInputError(f"two {side} results for {r.src_lang}-{r.tgt_lang}; select one setting")
            by_pair.setdefault(side, {})[key] = r
    base_pairs, sys_pairs = by_pair["baseline"], by_pair["system"]
    if set(base_pairs) != set(sys_pairs):
        only = sorted(set(base_pairs) ^ set(sys_pairs))
        raise BadInputError(f"the two encoders' results cover different language pairs ({', '.join('-'.join(p) for p in only)} "
                            "on one side only); evaluate both on the same languages")
    pairs = sorted(base_pairs)
    first = base_pairs[pairs[0]]
    for p in pairs:
        r = base_pairs[p]
        s1, s2 = first.signature, r.signature
        if (r.metric, s2.dataset, s2.split, s2.encoder) != (first.metric, s1.dataset, s1.split, s1.encoder) \
                or not s1.comparable_with(dataclasses.replace(s2, data_checksum=s1.data_checksum))[0]:
            raise BadInputError("the baseline's results mix metrics, datasets or settings; select one of each")
        check_comparable(r, sys_pairs[p])
    metric = first.metric
    if first.outcomes_digest is not None and metric == "bucc_f1":
        raise BadInputError("compare does not pair BUCC results yet: two encoders extract different pairs, so their "
                            "outcomes share no items to pair (their --ci intervals still apply)")
    info = registry.METRICS.get(metric)
    lower = info.lower_is_better if info is not None else False
    base_units, sys_units = [], []
    for p in pairs:
        a, b = outcomes(base_pairs[p]), outcomes(sys_pairs[p])
        for r, o in ((base_pairs[p], a), (sys_pairs[p], b)):
            check_value(r, o, f"the {r.metric} {'-'.join(p)} result of {r.signature.encoder}")
        if not (np.array_equal(a.gold, b.gold) and len(a) == len(b)):
            raise BadInputError(f"the outcomes of {'-'.join(p)} are not on the same sentences")
        base_units.append(outcome_units(a))
        sys_units.append(outcome_units(b))
    kw = dict(level=level, n_resamples=n_resamples, n_trials=n_trials, seed=seed, bootstrap_method=bootstrap_method)
    per_pair = [compare([a], [b], **kw) for a, b in zip(base_units, sys_units)]
    adj_bs = correct([r.p_bootstrap for r in per_pair], correction)
    adj_ar = correct([r.p_randomization for r in per_pair], correction)
    alpha = 1.0 - level
    base_name, sys_name = _encoder_label(first), _encoder_label(sys_pairs[pairs[0]])
    cmp = Comparison(metric, first.signature.dataset, first.signature.split, base_name, sys_name, lower, correction,
                     level, alpha, {k: v for k, v in first.signature.params.items() if k != "ci"})
    short = (first.signature.encoder, sys_pairs[pairs[0]].signature.encoder)
    if short[0] == short[1]:  # one model, two revisions or option sets: the full labels tell them apart
        short = (base_name, sys_name)
    for p, r, pb, pa in zip(pairs, per_pair, adj_bs, adj_ar):
        cmp.rows.append(PairComparison("-".join(p), r, float(pb), float(pa),
                                       verdict(r, pb, pa, alpha, lower, short[1], short[0])))
    if len(pairs) > 1:
        overall = compare(base_units, sys_units, **kw)
        cmp.rows.append(PairComparison(f"all ({len(pairs)} pairs)", overall, None, None,
                                       verdict(overall, overall.p_bootstrap, overall.p_randomization, alpha, lower,
                                               short[1], short[0])))
    return cmp


def render(cmp: Comparison) -> str:
    from tabulate import tabulate

    body = []
    for row in cmp.rows:
        r = row.result
        adj = (f"{row.p_bootstrap_adjusted:.4f}", f"{row.p_randomization_adjusted:.4f}") \
            if row.p_bootstrap_adjusted is not None else ("-", "-")
        body.append([row.pair, f"{r.baseline:.2f}", f"{r.system:.2f}", f"{r.difference:+.2f}",
                     f"[{r.ci_low:+.2f}, {r.ci_high:+.2f}]", f"{r.p_bootstrap:.4f}", adj[0], f"{r.p_randomization:.4f}",
                     adj[1], r.n_units])
    direction = "lower is better" if cmp.lower_is_better else "higher is better"
    heads = ["pair", "baseline", "system", "diff", f"{cmp.level:.0%} CI", "p (bootstrap)", f"adj. ({cmp.correction})",
             "p (AR)", f"adj. ({cmp.correction})", "n"]
    table = tabulate(body, headers=heads, tablefmt="psql", disable_numparse=True)
    verdicts = "\n".join(f"  {row.pair}: {row.verdict}" for row in cmp.rows)
    method = cmp.rows[0].result.bootstrap_method
    return (f"{cmp.metric} on {cmp.dataset}/{cmp.split} ({direction}); baseline {cmp.baseline}, system {cmp.system}\n"
            f"{table}\n{verdicts}\n"
            f"paired bootstrap ({method} p-value) and paired approximate randomisation; p-values corrected across the "
            f"{len([r for r in cmp.rows if r.p_bootstrap_adjusted is not None])} pair(s) by "
            f"{'Holm' if cmp.correction == 'holm' else 'Benjamini-Hochberg'}")
