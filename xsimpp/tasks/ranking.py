"""Proxy-vs-BLEU ranking tables: read them, complete them, evaluate every proxy on them.

A ranking table has one row per (language direction, system): ``direction`` (or ``src_lang`` +
``tgt_lang``), ``system`` (or ``encoder``), optional ``family`` (or ``model_family``), proxy
columns and ``bleu``. BLEU may instead come from ``hyp`` / ``ref`` file columns, scored with
sacrebleu. Error-type counts (``err_causality``, ``err_entity``, ``err_number``,
``err_misaligned``, as the leaderboard exports them) with ``n`` give xsim++ restricted to any
set of error types (Chen et al. 2023, Table 4) without re-encoding anything.

The table can also be built from the results store (or a leaderboard CSV) plus a BLEU file.
This module does the I/O; the statistics are in :mod:`xsimpp.scoring.ranking`. Which proxies are
error rates is read from the task registry's metric descriptions, then from the column name.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import BadInputError, MissingResourceError
from ..scoring import ranking as R
from .base import MetricInfo
from . import registry
from .xsim import restricted_name

# Accepted spellings -> canonical column. The first spelling is what we write.
ALIASES = {
    "direction": ("direction", "lang_pair", "pair"),
    "system": ("system", "encoder", "model"),
    "family": ("family", "model_family"),
    "bleu": ("bleu", "spbleu", "chrf_bleu"),
    "n": ("n", "nbex"),
}
RESERVED = {"direction", "src_lang", "tgt_lang", "system", "family", "bleu", "hyp", "ref", "n", "errors"}
# Proxies that are error rates: negated before ranking. Any other column counts as higher-better
# unless the user says otherwise (--lower-better), and the orientation is always printed.
LOWER_BETTER_PREFIXES = ("xsim", "err_")


@dataclass
class RankingTable:
    frame: Any  # pandas DataFrame: direction, system, family, the reference, proxies...
    proxies: list[str]
    lower_is_better: dict[str, bool]
    bleu_signature: str | None = None
    notes: list[str] = field(default_factory=list)
    # the column every proxy is ranked against, higher is better: BLEU in `xsimpp rank`'s tables,
    # a study's ground truth under its own name (mining_f1, ...)
    reference: str = "bleu"


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

def _read_csv_with_comments(path: Path):
    """CSV whose leading ``#`` lines are comments (citations in xsimpp/data/examples)."""
    import pandas as pd

    if not path.is_file():
        raise MissingResourceError(f"File not found: {path}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise BadInputError(f"{path} is not valid UTF-8 ({e.reason})") from None
    # Only whole lines starting with '#' are comments: pandas' comment='#' would also cut a cell
    # that contains '#' (a file path, a system name).
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    if not body.strip():
        raise BadInputError(f"{path} has no rows")
    try:
        df = pd.read_csv(io.StringIO(body), skipinitialspace=True)
    except pd.errors.ParserError as e:
        raise BadInputError(f"{path} is not a valid CSV table ({str(e).strip()})") from None
    df.columns = [str(c).strip() for c in df.columns]
    return df


def _canonical_columns(df, path: Path):
    lower = {c.lower(): c for c in df.columns}
    rename = {}
    for canon, spellings in ALIASES.items():
        found = [lower[s] for s in spellings if s in lower]
        if len(found) > 1:
            raise BadInputError(f"{path} has both {found[0]!r} and {found[1]!r} columns; keep one")
        if found:
            rename[found[0]] = canon
    for c in df.columns:
        if c.lower() in ("src_lang", "tgt_lang", "hyp", "ref", "errors") or c.lower().startswith("err_"):
            rename[c] = c.lower()
    df = df.rename(columns=rename)
    if "direction" not in df.columns:
        if {"src_lang", "tgt_lang"} <= set(df.columns):
            df["direction"] = df["src_lang"].astype(str).str.strip() + "-" + df["tgt_lang"].astype(str).str.strip()
        else:
            raise BadInputError(f"{path} needs a 'direction' column or 'src_lang' and 'tgt_lang' columns")
    if "system" not in df.columns:
        raise BadInputError(f"{path} needs a 'system' (or 'encoder') column")
    df["direction"] = df["direction"].astype(str).str.strip()
    df["system"] = df["system"].astype(str).str.strip()
    if "family" in df.columns:
        df["family"] = df["family"].astype(str).str.strip()
    return df


def corpus_bleu(hyp_path: Path, ref_path: Path, tokenize: str | None = None) -> tuple[float, str]:
    """sacrebleu corpus BLEU of one hypothesis file against one reference file, and its signature."""
    try:
        from sacrebleu.metrics import BLEU
    except ImportError:
        raise MissingResourceError("BLEU from hyp/ref files needs sacrebleu: pip install 'sacrebleu>=2.3'") from None
    from ..textio import read_lines

    hyps = read_lines(hyp_path, allow_empty_lines=True)  # an MT system may output an empty line
    refs = read_lines(ref_path, allow_empty_lines=True)
    if len(hyps) != len(refs):
        raise BadInputError(f"{hyp_path} has {len(hyps)} lines but its reference {ref_path} has {len(refs)}")
    try:
        metric = BLEU(tokenize=tokenize) if tokenize else BLEU()
        score = metric.corpus_score(hyps, [refs])
    except Exception as e:  # e.g. tokenize=flores200 must download its sentencepiece model
        raise MissingResourceError(f"sacrebleu could not score {hyp_path} with tokenize={tokenize or '13a'} ({e})") from None
    return float(score.score), str(metric.get_signature())


def _fill_bleu(df, base: Path, tokenize: str | None, where: Path) -> str | None:
    """Compute BLEU from hyp/ref for rows whose bleu cell is empty; returns sacrebleu's signature."""
    import pandas as pd

    if "bleu" not in df.columns:
        df["bleu"] = np.nan
    numeric = pd.to_numeric(df["bleu"], errors="coerce")
    # A cell that holds text is a mistake to name, not a missing BLEU to compute from hyp/ref.
    written = df["bleu"].notna() & (df["bleu"].astype(str).str.strip() != "")
    bad = written & numeric.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise BadInputError(f"{where}: BLEU {str(df['bleu'].iloc[i])!r} on CSV line {i + 2} is not a number")
    df["bleu"] = numeric
    need = df["bleu"].isna()
    if not need.any():
        return None
    if not {"hyp", "ref"} <= set(df.columns):
        rows = (np.flatnonzero(need.to_numpy()) + 2)[:5].tolist()
        raise BadInputError(f"{where}: BLEU is missing (CSV lines {rows}) and there are no 'hyp'/'ref' columns to compute it")
    signatures = set()
    cache: dict[tuple[Path, Path], float] = {}
    for idx in df.index[need]:
        hyp, ref = df.at[idx, "hyp"], df.at[idx, "ref"]
        if pd.isna(hyp) or pd.isna(ref):
            raise BadInputError(f"{where}: row {df.at[idx, 'direction']}/{df.at[idx, 'system']} has neither bleu nor hyp and ref")
        hp, rp = (base / str(hyp).strip()), (base / str(ref).strip())
        if (hp, rp) not in cache:
            cache[(hp, rp)], sig = corpus_bleu(hp, rp, tokenize)
            signatures.add(sig)
        df.at[idx, "bleu"] = cache[(hp, rp)]
    return " ; ".join(sorted(signatures))


def _add_restricted(df, error_type_sets: Iterable[Sequence[str]], where: str) -> list[str]:
    """Add xsim++ restricted to each set of error types; returns the new column names."""
    import pandas as pd

    names = []
    for types in error_type_sets:
        types = [t.strip().lower() for t in types if t.strip()]
        if not types:
            continue
        cols = [f"err_{t}" for t in types]
        missing = [c for c in cols if c not in df.columns]
        if missing:
            have = sorted(c for c in df.columns if c.startswith("err_")) or ["none"]
            raise BadInputError(f"{where} has no {', '.join(missing)} column(s) for --error-types (has: {', '.join(have)})")
        all_err = [c for c in df.columns if c.startswith("err_")]
        counts = df[all_err].apply(pd.to_numeric, errors="coerce")
        # The leaderboard writes only the error types that occurred: an empty cell is a 0, unless
        # a row has no counts at all while its xsim++ says it made errors.
        no_counts = counts.isna().all(axis=1)
        if "xsim++" in df.columns:
            no_counts &= pd.to_numeric(df["xsim++"], errors="coerce").fillna(1) > 0
        if no_counts.any():
            bad = df.loc[no_counts, ["direction", "system"]].astype(str).agg("/".join, axis=1).tolist()[:5]
            raise BadInputError(f"{where}: rows {bad} have no error-type counts; --error-types needs them for every row")
        total = counts[cols].fillna(0).sum(axis=1)
        if "n" in df.columns:
            n = pd.to_numeric(df["n"], errors="coerce")
            if n.isna().any() or (n <= 0).any():
                raise BadInputError(f"{where}: column 'n' must be a positive count in every row")
            total = 100.0 * total / n
        name = restricted_name(types)
        df[name] = total
        names.append(name)
    return names


def _finish(df, proxies: Sequence[str] | None, lower_better: Iterable[str], higher_better: Iterable[str],
            restricted: list[str], where: str) -> tuple[list[str], dict[str, bool]]:
    import pandas as pd

    dup = df.duplicated(["direction", "system"], keep=False)
    if dup.any():
        bad = df.loc[dup, ["direction", "system"]].astype(str).agg("/".join, axis=1).unique()[:5].tolist()
        raise BadInputError(f"{where} lists the same (direction, system) more than once: {bad}")
    if proxies:
        missing = [p for p in proxies if p not in df.columns]
        if missing:
            raise BadInputError(f"{where} has no proxy column(s) {missing} (columns: {', '.join(map(str, df.columns))})")
        chosen = list(dict.fromkeys(list(proxies) + restricted))
    else:
        chosen = [c for c in df.columns if c not in RESERVED and not c.startswith("err_") and c not in restricted
                  and pd.api.types.is_numeric_dtype(df[c])] + restricted
    if not chosen:
        raise BadInputError(f"{where} has no proxy columns (e.g. 'xsim', 'xsim++'); name them with --proxy")
    for c in ["bleu", *chosen]:
        if c not in df.columns:
            continue
        df[c] = pd.to_numeric(df[c], errors="coerce")
        bad_rows = np.flatnonzero(~np.isfinite(df[c].to_numpy(dtype=np.float64)))
        if len(bad_rows):
            # 1-based data rows (the header is not counted), with the cell's direction/system
            cells = [f"row {i + 1} ({df.iloc[i]['direction']}/{df.iloc[i]['system']})" for i in bad_rows[:5]]
            what = "ground truth" if c == "bleu" else "proxy"
            raise BadInputError(f"{where}: {what} column {c!r} is missing, not a number or infinite in "
                                f"{', '.join(cells)}{' ...' if len(bad_rows) > 5 else ''}; fill those cells or drop "
                                "the rows")
    lower_better, higher_better = set(lower_better), set(higher_better)
    orient = {c: (c in lower_better) or (c not in higher_better and _lower_is_better(c)) for c in chosen}
    return chosen, orient


def _lower_is_better(column: str) -> bool:
    """A registered metric's own orientation; else error-rate-like names (xsim..., err_...)."""
    info = registry.METRICS.get(column)
    return info.lower_is_better if info is not None else column.lower().startswith(LOWER_BETTER_PREFIXES)


def read_table(
    path: str | Path,
    *,
    proxies: Sequence[str] | None = None,
    error_type_sets: Iterable[Sequence[str]] = (),
    lower_better: Iterable[str] = (),
    higher_better: Iterable[str] = (),
    tokenize: str | None = None,
) -> RankingTable:
    """Read a ranking table CSV (see the module docstring); hyp/ref paths are relative to it."""
    path = Path(path)
    df = _canonical_columns(_read_csv_with_comments(path), path)
    sig = _fill_bleu(df, path.parent, tokenize, path)
    restricted = _add_restricted(df, error_type_sets, str(path))
    chosen, orient = _finish(df, proxies, lower_better, higher_better, restricted, str(path))
    if "family" not in df.columns:
        df["family"] = df["system"]
    return RankingTable(df.reset_index(drop=True), chosen, orient, sig)


# --------------------------------------------------------------------------------------------
# From the results store / a leaderboard CSV
# --------------------------------------------------------------------------------------------

def _norm_lang(code: str) -> str:
    from ..datasets.languages import resolve_language

    code = str(code).strip()
    try:
        return resolve_language(code)
    except Exception:  # not a FLORES language: compare the raw code
        return code.lower()


def _split_direction(direction: str) -> tuple[str, str]:
    for sep in ("-", ">", "→"):
        parts = direction.replace("->", ">").split(sep)
        if len(parts) == 2 and all(parts):
            return parts[0], parts[1]
    raise BadInputError(f"cannot read direction {direction!r}; write it as SRC-TGT (e.g. fra_Latn-eng_Latn)")


def _direction_key(direction: str) -> str:
    s, t = _split_direction(direction)
    return f"{_norm_lang(s)}-{_norm_lang(t)}"


def _pick_one(lb, column: str, wanted: str | None, flag: str):
    values = sorted(lb[column].dropna().astype(str).unique())
    if wanted is not None:
        sub = lb[lb[column].astype(str) == str(wanted)]
        if sub.empty:
            raise BadInputError(f"no results with {column} {wanted!r} (have: {', '.join(values) or 'none'})")
        return sub
    if len(values) > 1:
        raise BadInputError(f"the results hold several {column}s ({', '.join(values)}); choose one with {flag}")
    return lb


def table_from_leaderboard(
    lb,
    bleu_path: str | Path,
    *,
    dataset: str | None = None,
    split: str | None = None,
    margin: str | None = None,
    error_type_sets: Iterable[Sequence[str]] = (),
    tokenize: str | None = None,
) -> RankingTable:
    """Wide ranking table from a leaderboard frame (``results.leaderboard_frame``) + a BLEU file.

    The BLEU file has ``system`` (or ``encoder``), ``direction`` (or ``src_lang`` + ``tgt_lang``),
    ``bleu`` (or ``hyp`` + ``ref``) and optional ``family``. Directions match after language-code
    resolution (``fra-eng`` matches ``fra_Latn-eng_Latn``).
    """
    import pandas as pd

    bleu_path = Path(bleu_path)
    if lb is None or len(lb) == 0:
        raise BadInputError("the results store is empty; run `xsimpp eval` first")
    lb = lb[lb["metric"].isin(["xsim", "xsim++"])]
    if lb.empty:
        raise BadInputError("the results hold no xsim or xsim++ numbers; run `xsimpp eval` first")
    lb = _pick_one(lb, "dataset", dataset, "--dataset")
    lb = _pick_one(lb, "split", split, "--split")
    lb = _pick_one(lb, "margin", margin, "--margin")
    for col in ("k", "mode"):
        if lb[col].astype(str).nunique() > 1:
            raise BadInputError(f"the results mix several {col} settings; keep one setting per encoder in the store")
    revs = lb.groupby("encoder")["encoder_revision"].nunique()
    if (revs > 1).any():
        raise BadInputError(f"encoder(s) {revs[revs > 1].index.tolist()} have results from several revisions; "
                            "keep one per encoder in the results folder")
    lb = lb.assign(direction=lb["src_lang"].astype(str) + "-" + lb["tgt_lang"].astype(str))
    wide = lb.pivot_table(index=["encoder", "direction"], columns="metric", values="value", aggfunc="first")
    wide = wide.reset_index().rename(columns={"encoder": "system"})
    wide.columns.name = None
    pp = lb[lb["metric"] == "xsim++"]
    err_cols = [c for c in lb.columns if c.startswith("err_")]
    if not pp.empty:
        extra = pp[["encoder", "direction", "n"] + err_cols].rename(columns={"encoder": "system"})
        wide = wide.merge(extra, on=["system", "direction"], how="left")
    else:
        wide = wide.merge(lb[["encoder", "direction", "n"]].drop_duplicates(["encoder", "direction"])
                          .rename(columns={"encoder": "system"}), on=["system", "direction"], how="left")

    bleu = _canonical_columns(_read_csv_with_comments(bleu_path), bleu_path)
    sig = _fill_bleu(bleu, bleu_path.parent, tokenize, bleu_path)
    bleu["_key"] = bleu["direction"].map(_direction_key)
    wide["_key"] = wide["direction"].map(_direction_key)
    keep = ["system", "_key", "bleu"] + (["family"] if "family" in bleu.columns else [])
    merged = wide.merge(bleu[keep], on=["system", "_key"], how="inner")
    notes = []
    if merged.empty:
        ours = sorted({f"{s}/{k}" for s, k in zip(wide["system"], wide["_key"])})[:4]
        theirs = sorted({f"{s}/{k}" for s, k in zip(bleu["system"], bleu["_key"])})[:4]
        raise BadInputError(f"no (system, direction) of {bleu_path} matches the results: results have {ours}, "
                            f"the BLEU file has {theirs} (systems must be encoder names; directions SRC-TGT)")
    have = set(zip(wide["system"], wide["_key"]))
    lost = [(s, d) for s, d, k in zip(bleu["system"], bleu["direction"], bleu["_key"]) if (s, k) not in have]
    if lost:
        named = ", ".join(f"{s}/{d}" for s, d in lost[:5]) + (" …" if len(lost) > 5 else "")
        ids = ", ".join(sorted({str(s) for s in wide["system"]}))
        notes.append(f"{len(lost)} row(s) of {bleu_path.name} have no matching results and are left out ({named}); "
                     f"the results have systems {ids}")
    dropped = len(wide) - len(merged)
    if dropped:
        notes.append(f"{dropped} (encoder, direction) result(s) have no BLEU and are left out")
    merged = merged.drop(columns=["_key"])
    where = f"the results joined with {bleu_path}"
    restricted = _add_restricted(merged, error_type_sets, where)
    proxies = [p for p in ("xsim", "xsim++") if p in merged.columns]
    chosen, orient = _finish(merged, proxies, (), (), restricted, where)
    if "family" not in merged.columns:
        merged["family"] = merged["system"]
    merged["bleu"] = pd.to_numeric(merged["bleu"], errors="coerce")
    return RankingTable(merged.reset_index(drop=True), chosen, orient, sig, notes)


def table_from_results(records, bleu_path: str | Path, **kw) -> RankingTable:
    from ..results import leaderboard_frame

    return table_from_leaderboard(leaderboard_frame(records), bleu_path, **kw)


# --------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------

@dataclass
class ProxyReport:
    proxy: str
    lower_is_better: bool
    accuracy: R.PairwiseAccuracy
    ci: tuple[float, float]
    chance: float  # this proxy's values dealt at random (keeps its ties)
    correlations: dict[str, float]
    ties: R.TieAwareAccuracy  # ties as 1/2 and tie-calibrated, beside ``accuracy``'s mt-metrics-eval rule
    split_ties: dict[str, R.TieAwareAccuracy]  # the same over "within"- and "across"-family pairs only
    p_chance: float = float("nan")  # sign test against a random proxy
    within_ci: tuple[float, float] = (float("nan"), float("nan"))  # over within-model pairs only
    across_ci: tuple[float, float] = (float("nan"), float("nan"))  # over across-model pairs only


@dataclass
class RankingReport:
    n_directions: int
    n_systems: int
    n_rows: int
    pairs: int
    within_pairs: int
    across_pairs: int
    chance: float  # a continuous random proxy (0.5 unless BLEU has ties)
    proxies: list[ProxyReport]
    comparisons: list[tuple[str, str, R.PermutationResult]]
    settings: dict[str, Any]
    # the same tests over within-model / across-model pairs only (empty without both kinds of pair)
    within_comparisons: list[tuple[str, str, R.PermutationResult]] = field(default_factory=list)
    across_comparisons: list[tuple[str, str, R.PermutationResult]] = field(default_factory=list)
    bleu_signature: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def f(x):
            return None if x is None or (isinstance(x, float) and not np.isfinite(x)) else x

        return {
            "n_directions": self.n_directions, "n_systems": self.n_systems, "n_rows": self.n_rows,
            "pairs": self.pairs, "within_pairs": self.within_pairs, "across_pairs": self.across_pairs,
            "chance": f(self.chance), "settings": self.settings, "bleu_signature": self.bleu_signature,
            "notes": self.notes,
            "proxies": [{
                "proxy": p.proxy, "lower_is_better": p.lower_is_better, "accuracy": f(p.accuracy.accuracy),
                "agreements": p.accuracy.agreements, "pairs": p.accuracy.pairs,
                "within_accuracy": f(p.accuracy.within_accuracy), "within_agreements": p.accuracy.within_agreements,
                "across_accuracy": f(p.accuracy.across_accuracy), "across_agreements": p.accuracy.across_agreements,
                "ci_low": f(p.ci[0]), "ci_high": f(p.ci[1]), "chance_given_ties": f(p.chance),
                "within_ci_low": f(p.within_ci[0]), "within_ci_high": f(p.within_ci[1]),
                "across_ci_low": f(p.across_ci[0]), "across_ci_high": f(p.across_ci[1]),
                "p_vs_chance": f(p.p_chance),
                "per_direction": {str(k): list(v) for k, v in p.accuracy.per_direction.items()},
                **{k: f(v) for k, v in p.correlations.items()},
                "proxy_ties": p.ties.proxy_ties, "proxy_tie_share": f(p.ties.tie_share),
                "accuracy_ties_half": f(p.ties.half_accuracy), "pairs_ties_half": p.ties.half_pairs,
                "accuracy_tie_calibrated": f(p.ties.calibrated_accuracy), "tie_epsilon": f(p.ties.epsilon),
                "tie_calibrated_ties": p.ties.calibrated_ties,
                **{f"{kind}_{key}": value for kind, t in p.split_ties.items() for key, value in (
                    ("proxy_ties", t.proxy_ties), ("proxy_tie_share", f(t.tie_share)),
                    ("accuracy_ties_half", f(t.half_accuracy)), ("pairs_ties_half", t.half_pairs),
                    ("accuracy_tie_calibrated", f(t.calibrated_accuracy)), ("tie_epsilon", f(t.epsilon)))},
            } for p in self.proxies],
            **{key: [{"a": a, "b": b, "delta": f(r.delta), "p_value": f(r.p_value),
                      "n_permutations": r.n_permutations, "alternative": r.alternative} for a, b, r in tests]
               for key, tests in (("comparisons", self.comparisons), ("within_comparisons", self.within_comparisons),
                                  ("across_comparisons", self.across_comparisons))},
        }


def evaluate_table(
    table: RankingTable,
    *,
    compare: Sequence[tuple[str, str]] | None = None,
    n_bootstrap: int = 1000,
    n_permutations: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    scale: str = "rank",
) -> RankingReport:
    """Accuracy, CI, chance and correlations per proxy; PERM-BOTH for each compared pair.

    Without ``compare`` the first proxy is tested against each other one, two-sided; with
    ``compare=[(a, b), ...]`` each test is one-sided (is a better than b?).
    """
    for name, value in (("--bootstrap", n_bootstrap), ("--permutations", n_permutations)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise BadInputError(f"{name} must be a positive number of resamples, got {value!r}")
    df = table.frame
    gold = df[table.reference].to_numpy(dtype=np.float64)
    groups = df["direction"].tolist()
    families = df["family"].tolist()
    reports = []
    for p in table.proxies:
        lib = table.lower_is_better[p]
        values = df[p].to_numpy(dtype=np.float64)
        acc = R.pairwise_accuracy(values, gold, groups, families, lower_is_better=lib)
        boot = dict(n_resamples=n_bootstrap, confidence=confidence, seed=seed)
        ci = R.bootstrap_ci(acc.agreement_vector, **boot)
        split = {kind: R.bootstrap_ci(acc.agreement_vector[mask], **boot) if mask.any() and not mask.all()
                 else (float("nan"), float("nan"))
                 for kind, mask in (("within", acc.same_family), ("across", ~acc.same_family))}
        reports.append(ProxyReport(p, lib, acc, ci, R.chance_accuracy(gold, groups, values),
                                   R.correlations(values, gold, groups, lower_is_better=lib),
                                   ties=R.tie_aware_accuracy(values, gold, groups, lower_is_better=lib),
                                   split_ties={kind: R.tie_aware_accuracy(values, gold, groups, lower_is_better=lib,
                                                                          pair_mask=mask)
                                               for kind, mask in (("within", acc.same_family),
                                                                  ("across", ~acc.same_family))},
                                   p_chance=R.sign_test(values, gold, groups, lower_is_better=lib),
                                   within_ci=split["within"], across_ci=split["across"]))
    if compare is None:
        # Every proxy against the first-listed one (xsim when present: the baseline the paper beats),
        # not all pairs: with --all-error-subsets that would be 136 tests of little interest.
        pairs = [(table.proxies[0], other) for other in table.proxies[1:]]
        alternative = "two-sided"
    else:
        pairs = list(compare)
        alternative = "greater"
        for a, b in pairs:
            for x in (a, b):
                if x not in table.proxies:
                    raise BadInputError(f"--compare names {x!r}, which is not a proxy here ({', '.join(table.proxies)})")
    first = reports[0].accuracy if reports else None
    same = first.same_family if first is not None else np.zeros(0, bool)
    both_kinds = bool(same.any() and not same.all())
    masks = {"all": None, **({"within": same, "across": ~same} if both_kinds else {})}
    tests: dict[str, list] = {kind: [] for kind in masks}
    for a, b in pairs:
        for kind, mask in masks.items():
            res = R.perm_both_test(df[a].to_numpy(np.float64), df[b].to_numpy(np.float64), gold, groups,
                                   lower_is_better_a=table.lower_is_better[a], lower_is_better_b=table.lower_is_better[b],
                                   n_permutations=n_permutations, seed=seed, scale=scale, alternative=alternative,
                                   pair_mask=mask)
            tests[kind].append((a, b, res))
    return RankingReport(
        n_directions=df["direction"].nunique(), n_systems=df["system"].nunique(), n_rows=len(df),
        pairs=first.pairs if first else 0, within_pairs=first.within_pairs if first else 0,
        across_pairs=first.across_pairs if first else 0, chance=R.chance_accuracy(gold, groups),
        proxies=reports, comparisons=tests["all"], bleu_signature=table.bleu_signature, notes=list(table.notes),
        within_comparisons=tests.get("within", []), across_comparisons=tests.get("across", []),
        settings={"seed": seed, "n_bootstrap": n_bootstrap, "n_permutations": n_permutations,
                  "confidence": confidence, "scale": scale, "alternative": alternative},
    )


# What `xsimpp rank` computes (it ranks tables of proxies and encodes nothing, so it is a command over
# ``evaluate_table``, not a task of the runner); registered with the metrics in ``xsimpp.tasks``.
RANKING_METRICS = {"pairwise_accuracy": MetricInfo("accuracy", lower_is_better=False,
                                                   description="pairwise ranking accuracy of a proxy against "
                                                               "downstream quality (Kocmi et al. 2021)"),
                   "pairwise_accuracy_ties_half": MetricInfo(
                       "accuracy", lower_is_better=False,
                       description="pairwise ranking accuracy with a proxy tie counted as 1/2, over the pairs "
                                   "whose downstream quality differs"),
                   "pairwise_accuracy_tie_calibrated": MetricInfo(
                       "accuracy", lower_is_better=False,
                       description="pairwise ranking accuracy with tie calibration (Deutsch et al. 2023, "
                                   "mt-metrics-eval's acc_eq)")}
