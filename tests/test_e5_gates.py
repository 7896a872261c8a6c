"""The e5-small paths' statistical fidelity gates (benchmarks/bench_e5_paths.py gates, issue 52):
every figure a committed gates file states -- per-language exact McNemar p-values, Holm's
adjustment, the micro-average's paired interval, the verdict and the power -- recomputed here from
the per-language counts it carries, with the project's own statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xsimpp.scoring import significance as S

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "e5_paths"


def paired_gates():
    out = []
    for p in sorted([*RESULTS.glob("gates_*.json"), *RESULTS.glob("paired_*.json")]):
        gates = json.loads(p.read_text(encoding="utf-8"))["gates"]
        for name in ("flores", "xsimpp"):
            if "paired" in gates.get(name, {}):
                out.append(pytest.param(gates[name]["paired"], id=f"{p.stem}-{name}"))
    return out


@pytest.mark.parametrize("g", paired_gates())
def test_a_committed_paired_gate_recomputes_from_its_counts(g):
    rows = g["per_language"]
    assert len(rows) == g["languages"] and sum(r["n"] for r in rows.values()) == g["sentences"]
    for lang, r in rows.items():
        # the counts hang together: errors differ by exactly the discordant items
        assert r["candidate"] - r["torch_float32"] == r["worse"] - r["better"], lang
        assert r["p"] == pytest.approx(S.mcnemar(r["worse"], r["better"], "greater"), rel=1e-12), lang
    holm = S.holm([r["p"] for r in rows.values()])
    assert [r["p_holm"] for r in rows.values()] == pytest.approx(list(holm), rel=1e-12)
    worse, better = sum(r["worse"] for r in rows.values()), sum(r["better"] for r in rows.values())
    assert (g["worse"], g["better"]) == (worse, better)
    lo, hi = S.paired_difference_interval(worse, better, g["sentences"])
    assert g["interval_95"] == [round(lo, 4), round(hi, 4)]
    significant = sorted(k for k, r in rows.items() if r["p_holm"] < 0.05)
    assert g["significantly_worse"] == significant
    assert g["pass"] == (not significant and -g["bound"] <= lo and hi <= g["bound"])
    d = sorted(r["worse"] + r["better"] for r in rows.values())[len(rows) // 2]
    assert g["power_80"] == {"median_discordant": d,
                             "loss_first_step": S.mcnemar_detectable_loss(d, 0.05 / len(rows)),
                             "loss_last_step": S.mcnemar_detectable_loss(d, 0.05)}


def test_some_gates_file_carries_the_paired_gate():
    assert paired_gates(), "no committed gates file has the statistical (paired) gate"


def test_the_page_quotes_the_203_language_xsimpp_runs():
    """The prose beside the 203-language xsim++ rows is paired_xsimpp_all_<path>'s figures."""
    import json

    from conftest import REPO

    results = REPO / "benchmarks" / "results" / "e5_paths"
    page = " ".join((REPO / "docs" / "performance.md").read_text(encoding="utf-8").split())

    def paired(path):
        run = json.loads((results / f"paired_xsimpp_all_{path}_amd_2cores.json").read_text(encoding="utf-8"))
        return run["gates"]["xsimpp-all"]["paired"]

    ten = json.loads((results / "paired_openvino-int8-dynamic_amd_2cores.json").read_text(encoding="utf-8"))
    ten = ten["gates"]["xsimpp"]["paired"]
    dyn, static = paired("openvino-int8-dynamic"), paired("openvino-int8")
    assert dyn["sentences"] == static["sentences"] and dyn["languages"] == 203
    lo, hi = dyn["interval_95"]
    assert (f"the same test over {dyn['sentences']:,} decisions instead of {ten['sentences']:,}".replace(",", " ")
            in page)
    assert (f"shrinks from {ten['micro_delta']:+.3f} points on the ten languages to {dyn['micro_delta']:+.3f}, "
            f"interval [{lo:+.3f}, {hi:+.3f}]") in page
    assert not dyn["pass"] and not dyn["significantly_worse"] and lo < 0 < hi
    assert f"(the interval passes the bound by {hi - 0.10:.3f} points)" in page
    slo, shi = static["interval_95"]
    assert f"xsim++ ({static['micro_delta']:+.3f}, [{slo:+.3f}, {shi:+.3f}])" in page and shi < 0


def test_the_page_quotes_bf16s_203_language_xsimpp_run():
    """bf16's 203-language xsim++ prose (Intel Xeon with AMX) is its file's figures: the whole, the
    other 193 languages beside the ten of its gates file, and torch float32's one language that
    differs from the AMD run."""
    from conftest import REPO

    results = REPO / "benchmarks" / "results" / "e5_paths"
    page = " ".join((REPO / "docs" / "performance.md").read_text(encoding="utf-8").split())
    run = json.loads((results / "paired_xsimpp_all_openvino-bf16_intel_2cores.json").read_text(encoding="utf-8"))
    assert "amx_bf16" in run["machine"]["isa_extensions"]
    every = run["gates"]["xsimpp-all"]["paired"]
    ten = json.loads((results / "gates_openvino-bf16_intel_2cores.json").read_text(encoding="utf-8"))
    ten = ten["gates"]["xsimpp"]["paired"]
    lo, hi = every["interval_95"]
    assert (f"bf16 is worse on {every['worse']} and better on {every['better']}: micro {every['micro_delta']:+.3f} "
            f"points, 95 % [{lo:+.3f}, {hi:+.3f}], inside ±0.10") in page
    assert every["pass"] and not every["significantly_worse"] and every["sentences"] * 10 == ten["sentences"] * 203
    tlo, thi = ten["interval_95"]
    assert f"({ten['micro_delta']:+.3f}, [{tlo:+.3f}, {thi:+.3f}], the gate bf16 failed)" in page and not ten["pass"]
    # the ten languages are among the 203: the rest's counts are the difference
    per = every["per_language"]
    assert set(ten["per_language"]) < set(per)
    assert all(per[k][c] == ten["per_language"][k][c] for k in ten["per_language"] for c in ("worse", "better"))
    assert (f"the other 193 languages, where bf16 is worse on {every['worse'] - ten['worse']} decisions and better "
            f"on {every['better'] - ten['better']}") in page
    amd = json.loads((results / "paired_xsimpp_all_openvino-int8-dynamic_amd_2cores.json").read_text(encoding="utf-8"))
    amd = amd["gates"]["xsimpp-all"]["paired"]["per_language"]
    differ = {k: (per[k]["torch_float32"], amd[k]["torch_float32"]) for k in per
              if per[k]["torch_float32"] != amd[k]["torch_float32"]}
    assert f"in {203 - len(differ)} of the 203 languages;" in page
    assert [f"in {k} it makes {here} errors here against {there} there" for k, (here, there) in differ.items()][0] in page
