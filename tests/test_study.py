"""`xsimpp study`: the pipeline on hand-made data with hand-checked accuracies, the shared forward
pass against each member encoder's own vectors, configuration errors, and the output folder."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_augment import nlp  # noqa: F401  (the spaCy English model, or a skip saying it is missing)

from xsimpp.datasets.base import Bitext
from xsimpp.encoders.base import VectorEncoder
from xsimpp.errors import BadInputError
from xsimpp.study.config import PRESETS, EncoderSpec, StudyConfig, parse_config
from xsimpp.study.data import Distractors, LanguageData, StudyData
from xsimpp.study.encoders import StudyEncoder
from xsimpp.study.run import run_study

D = 64  # one basis vector per English line below, and spare ones for confused sources


class Lookup(VectorEncoder):
    """Vectors from a table: sentence -> basis vector index."""

    name = "lookup"
    language_agnostic = True

    def __init__(self, table: dict[str, int]):
        self.table = table

    @property
    def revision(self) -> str:
        return "test"

    def encode(self, sentences, *, lang=None, progress=None):
        out = np.zeros((len(sentences), D), dtype=np.float32)
        for i, s in enumerate(sentences):
            out[i, self.table[s]] = 1.0
        return out


ENG_FLORES = [f"flores english {i}" for i in range(5)]  # basis 0..4
ENG_NTREX = [f"ntrex english {i}" for i in range(5)]  # basis 5..9
DISTRACTORS = [f"distractor {i}" for i in range(8)]  # basis 10..17
ENG_TATOEBA = {lang: [f"{lang} tatoeba english {i}" for i in range(4)] for lang in ("deu", "fra")}  # 18..21, 22..25
SPARE = 40  # basis vectors >= 40 are orthogonal to every English line: a confused Tatoeba source


def _english_table() -> dict[str, int]:
    table = {s: i for i, s in enumerate(ENG_FLORES + ENG_NTREX + DISTRACTORS)}
    table.update({s: 18 + i for i, s in enumerate(ENG_TATOEBA["deu"])})
    table.update({s: 22 + i for i, s in enumerate(ENG_TATOEBA["fra"])})
    return table


def _encoder(wrong: dict[str, dict[str, set[int]]]) -> Lookup:
    """Source i of each set maps onto its gold English vector, unless i is listed as wrong: then a
    FLORES/NTREX source maps onto a distractor of its own (cosine 1 with it, 0 with every gold
    line), and a Tatoeba source onto a spare vector (cosine 0 with every English line)."""
    table = _english_table()
    spare = SPARE
    for lang in ("deu", "fra"):
        d = 0
        for kind, gold_base, n in (("flores", 0, 5), ("ntrex", 5, 5)):
            for i in range(n):
                if i in wrong[lang][kind]:
                    table[f"{lang} {kind} {i}"] = 10 + d
                    d += 1
                else:
                    table[f"{lang} {kind} {i}"] = gold_base + i
        base = 18 if lang == "deu" else 22
        for i in range(4):
            if i in wrong[lang]["tatoeba"]:
                table[f"{lang} tatoeba {i}"] = spare
                spare += 1
            else:
                table[f"{lang} tatoeba {i}"] = base + i
    return Lookup(table)


def _data() -> StudyData:
    langs = []
    for lang in ("deu", "fra"):
        fl = Bitext("flores200", "devtest", lang, "eng_Latn", [f"{lang} flores {i}" for i in range(5)], ENG_FLORES)
        nt = Bitext("ntrex128", "test", lang, "eng_Latn", [f"{lang} ntrex {i}" for i in range(5)], ENG_NTREX)
        tt = Bitext("tatoeba", "test", lang, "eng", [f"{lang} tatoeba {i}" for i in range(4)], ENG_TATOEBA[lang])
        langs.append(LanguageData(lang, fl, nt, tatoeba=tt))
    return StudyData(langs, {}, Distractors(list(DISTRACTORS), {"hand": 8}, {"hand": 8}))


# Wrong sources per encoder (never index 0: a confused source's margins are all 0 and ties go to
# index 0, which would make it right by accident).
#   deu   A: none            B: flores {1}, ntrex {1}      C: flores {1,2}, ntrex {1,2}
#         Tatoeba wrong      A: -   B: {1,2}   C: {1}
#   fra   A: flores {1}      B: ntrex {1,2,3}              C: flores {1,2}, ntrex {1,2}
#         Tatoeba wrong      A: -   B: {1,2,3} C: {1}
WRONG = {
    "A": {"deu": {"flores": set(), "ntrex": set(), "tatoeba": set()},
          "fra": {"flores": {1}, "ntrex": set(), "tatoeba": set()}},
    "B": {"deu": {"flores": {1}, "ntrex": {1}, "tatoeba": {1, 2}},
          "fra": {"flores": set(), "ntrex": {1, 2, 3}, "tatoeba": {1, 2, 3}}},
    "C": {"deu": {"flores": {1, 2}, "ntrex": {1, 2}, "tatoeba": {1}},
          "fra": {"flores": {1, 2}, "ntrex": {1, 2}, "tatoeba": {1}}},
}


def _config(**kw) -> StudyConfig:
    specs = [EncoderSpec(n, "chargram", family=n) for n in "ABC"]
    base = dict(name="tiny", languages=["deu", "fra"], encoders=specs, flores_lines=0, ntrex_lines=0, tatoeba_lines=0,
                xsim_margins=["absolute"], xsimpp_styles=[], folds=2, bootstrap=200, permutations=200, fixed_threshold=3.0)
    base.update(kw)
    return StudyConfig(**base)


def test_pipeline_on_hand_made_vectors_gives_hand_checked_accuracy():
    # Mining (ratio margin, k = 4): a right source and its gold line have cosine 1 and 0 with all
    # else, so margin 1 / ((1/4 + 1/4) / 2) = 4; a wrong source pairs with its distractor at the same
    # 4; every other candidate (a backward best among zeros) scores 0. Every cut falls between 4 and
    # 0, so mining F1 = 2c / (extracted + gold) = 2c / (10 + 10) = c / 10 with c right sources:
    #   deu  A 10/10 = 100   B 8/10 = 80   C 6/10 = 60      (NTREX only: A 100, B 80, C 60)
    #   fra  A  9/10 =  90   B 7/10 = 70   C 6/10 = 60      (NTREX only: A 100, B 40, C 60)
    # xsim, absolute margin (FLORES, 5 lines): a wrong source has cosine 0 with every gold line ->
    # the first maximum, index 0 -> an error (the ratio margin is 0 / 0 there: left out):
    #   deu  A 0 %  B 20 %  C 40 %;   fra  A 20 %  B 0 %  C 40 %
    # Tatoeba (4 lines, both directions): accuracy = right / 4:
    #   deu  A 100  B 50  C 75;       fra  A 100  B 25  C 75
    # Pairwise accuracy against mining_f1 (pairs AB, AC, BC per language):
    #   xsim:    deu 3/3 (A<B<C errors, A>B>C F1); fra: AB disagrees (xsim prefers B), AC, BC agree -> 2/3; 5/6
    #   tatoeba: deu AB, AC agree, BC disagrees (C 75 > B 50 but F1 B > C) -> 2/3; fra the same -> 2/3; 4/6
    # Against mining_f1_ntrex: xsim deu 3/3; fra AB disagrees, AC agrees, BC disagrees (xsim B, ntrex C) -> 1/3; 4/6
    #   tatoeba: deu 2/3; fra AB agrees, AC agrees, BC agrees (C 75 > B 25, ntrex C 60 > B 40) -> 3/3; 5/6
    cfg = _config()
    encoders = [StudyEncoder(EncoderSpec(n, "lookup", family=n), _encoder(WRONG[n]), None) for n in "ABC"]
    res = run_study(cfg, _data(), encoders)
    cell = {(c["system"], c["lang"]): c for c in res.cells}
    f1 = {k: round(v["mining_f1"], 6) for k, v in cell.items()}
    assert f1 == {("A", "deu"): 100, ("B", "deu"): 80, ("C", "deu"): 60, ("A", "fra"): 90, ("B", "fra"): 70,
                  ("C", "fra"): 60}
    assert [round(cell[(n, "fra")]["mining_f1_ntrex"], 6) for n in "ABC"] == [100, 40, 60]
    assert [cell[(n, "deu")]["xsim[absolute]"] for n in "ABC"] == [0, 20, 40]
    assert [cell[(n, "fra")]["xsim[absolute]"] for n in "ABC"] == [20, 0, 40]
    assert [cell[(n, "fra")]["tatoeba"] for n in "ABC"] == [100, 25, 75]

    def acc(report, proxy):
        p = next(p for p in report.proxies if p.proxy == proxy)
        return p.accuracy.agreements, p.accuracy.pairs

    f1_all, f1_ntrex = res.rankings["mining_f1"], res.rankings["mining_f1_ntrex"]
    assert acc(f1_all, "xsim[absolute]") == (5, 6)
    assert acc(f1_ntrex, "xsim[absolute]") == (4, 6)
    tat_all, tat_ntrex = res.tatoeba_rankings["mining_f1"], res.tatoeba_rankings["mining_f1_ntrex"]
    assert acc(tat_all, "tatoeba") == (4, 6)
    assert acc(tat_ntrex, "tatoeba") == (5, 6)
    # the best proxy is listed first and PERM-BOTH compares it with each other one
    assert [p.proxy for p in tat_ntrex.proxies] == ["tatoeba", "xsim[absolute]"]  # best first
    assert {b for _, b, _ in tat_ntrex.comparisons} == {p.proxy for p in tat_ntrex.proxies[1:]}
    # the fixed threshold (3.0 here) keeps exactly the score-4 pairs: precision = recall = c / 10
    assert round(cell[("C", "fra")]["mining_p_fixed"], 6) == 60
    # every record is signed with a registered metric name: the proxies as the registered tasks
    # sign them (the encoder's own identity, the FLORES data, the margin), the ground truths with
    # the study's data and the system
    from xsimpp.tasks import METRICS

    assert {r.metric for r in res.records} <= set(METRICS)
    first = res.records[0]
    assert (first.metric, first.signature.params["margin"]) == ("xsim", "absolute")
    assert first.signature.encoder == encoders[0].encoder.id and first.signature.dataset == "flores200"
    truth = next(r for r in res.records if r.metric == "mining_f1").signature
    assert truth.dataset == "study:tiny" and truth.params["system"] == "A"


def _unpaired_data(unpaired: list[str]) -> StudyData:
    gold = Bitext("flores200", "devtest", "deu", "eng_Latn", [f"s{i}" for i in range(4)], [f"g{i}" for i in range(4)])
    return StudyData([LanguageData("deu", gold, None, unpaired)], {},
                     Distractors([f"d{j}" for j in range(6)], {"hand": 6}, {"hand": 6}))


def test_unpaired_sources_and_fixed_threshold_f1_by_hand():
    # English: gold g0..g3 on basis 0..3, distractors d0..d5 on 10..15. Unpaired sources u0, u1 sit
    # on d0, d1 (cosine 1: a near-copy with no translation on the English side). Encoder A puts
    # every gold source si on gi; B puts s3 on d2; C (another family) puts s1, s2 on d2, d3.
    # Ratio margin, k = 4: every source and every target with a cosine-1 partner has a k-mean of
    # 1/4, so each cosine-1 pair scores 1 / ((1/4 + 1/4) / 2) = 4; the backward bests of the rest
    # (all cosines 0) score 0. The fixed threshold 1.06 keeps exactly the score-4 pairs:
    #   A: 4 gold + u0-d0 + u1-d1 = 6 extracted, 4 right, 4 gold: P 4/6 = 66.67, R 100, F1 8/10 = 80
    #   B: s0-s2 right, s3-d2 wrong, u0, u1 = 6 extracted, 3 right: P 50, R 75, F1 6/10 = 60
    #   C: s0, s3 right, s1-d2, s2-d3, u0, u1 = 6 extracted, 2 right: P 33.33, R 50, F1 4/10 = 40
    # Without the unpaired sources A extracts 4 of 4 (P = R = F1 = 100) and B 3 of 4 (75 each).
    # Cross-validated (2 folds of 3 of A's 6 sources): each training part holds a gold score-4
    # pair, so the tuned cut keeps every score-4 pair: A's CV F1 is 80 as well.
    table = {**{f"g{i}": i for i in range(4)}, **{f"d{j}": 10 + j for j in range(6)}, "u0": 10, "u1": 11}
    moved = {"A": {}, "B": {"s3": 12}, "C": {"s1": 12, "s2": 13}}
    encs = [StudyEncoder(EncoderSpec(n, "lookup", family="other" if n == "C" else "run"),
                         Lookup({**table, **{f"s{i}": i for i in range(4)}, **moved[n]}), None) for n in "ABC"]
    cfg = _config(languages=["deu"], fixed_threshold=1.06, margin="ratio")
    res = run_study(cfg, _unpaired_data(["u0", "u1"]), encs)
    cell = {c["system"]: c for c in res.cells}
    got = {n: tuple(round(cell[n][k], 2) for k in ("mining_p_fixed", "mining_r_fixed", "mining_f1_fixed"))
           for n in "ABC"}
    assert got == {"A": (66.67, 100, 80), "B": (50, 75, 60), "C": (33.33, 50, 40)}
    assert round(cell["A"]["mining_f1"], 2) == 80 and cell["A"]["n_unpaired"] == 2
    rep = res.rankings["mining_f1_fixed"]
    assert (rep.within_pairs, rep.across_pairs) == (1, 2)  # A-B within the family; A-C, B-C across
    assert next(r for r in res.records if r.metric == "mining_f1_fixed").signature.params["unpaired_sources"] == 2
    from xsimpp.study.output import ranking_text

    assert "within(1)" in ranking_text(res, "mining_f1_fixed") and "across(2)" in ranking_text(res, "mining_f1_fixed")
    plain = run_study(cfg, _unpaired_data([]), encs[:2])
    got = {c["system"]: (round(c["mining_p_fixed"], 2), round(c["mining_f1_fixed"], 2)) for c in plain.cells}
    assert got == {"A": (100, 100), "B": (75, 75)}
    assert "unpaired_sources" not in plain.records[-1].signature.params


def test_a_checkpoint_trained_on_the_unpaired_sources_is_refused(tmp_path):
    import json

    from xsimpp.errors import BadInputError
    from xsimpp.study.run import check_unpaired_unseen

    def checkpoint(name, data):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "xsimpp_training.json").write_text(json.dumps({"data": data}), encoding="utf-8")
        return StudyEncoder(EncoderSpec(name, "sbert", options={"model": str(folder)}), Lookup({}), None)

    trained = {"sources": {"flores200-dev:kea_Latn": 997, "flores200-dev:fur_Latn": 997}}
    leaky = checkpoint("leaky", trained)
    short = checkpoint("short", {**trained, "hold_out_dev": 100})
    clean = checkpoint("clean", {**trained, "hold_out_dev": 300})
    other = checkpoint("other", {"sources": {"flores200-dev:fao_Latn": 997}})
    plain = StudyEncoder(EncoderSpec("plain", "sbert"), Lookup({}), None)
    check_unpaired_unseen(300, ["kea_Latn"], [clean, other, plain])  # held out, other languages, no manifest
    check_unpaired_unseen(0, ["kea_Latn"], [leaky])  # no unpaired sources: nothing to learn by heart
    for enc in (leaky, short):
        with pytest.raises(BadInputError, match=r"'(leaky|short)' .*first 300 of kea_Latn.*--hold-out-dev 300"):
            check_unpaired_unseen(300, ["kea_Latn", "ibo_Latn"], [enc])


def test_output_folder_is_complete_and_refuses_to_clobber(tmp_path):
    from xsimpp.study.output import write_study

    encoders = [StudyEncoder(EncoderSpec(n, "lookup", family=n), _encoder(WRONG[n]), None) for n in "ABC"]
    res = run_study(_config(), _data(), encoders)
    out = write_study(res, tmp_path / "study")
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"report.html", "cells.csv", "records.jsonl", "summary.txt", "ranking_mining_f1.json",
            "plots/acc-mining_f1.png"} <= names
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "xsim[absolute]" in html
    assert "within a family % (0 pairs)" in html and "across families % (6 pairs)" in html  # A, B, C: 3 families
    with pytest.raises(BadInputError, match="not empty"):
        write_study(res, out)
    assert write_study(res, out, overwrite=True) == out
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left behind


def test_shared_forward_pass_equals_each_members_own_vectors(tmp_path):
    import tiny_models
    import torch

    from xsimpp.encoders.hf import HFEncoder
    from xsimpp.encoders.onealigner import OneAligner
    from xsimpp.study.encoders import build_encoders

    torch.set_num_threads(1)
    model = str(tiny_models.cached("xlmr"))
    specs = [EncoderSpec("L1", "hf", {"model": model, "layer": 1}),
             EncoderSpec("L2", "hf", {"model": model, "layer": 2}),
             EncoderSpec("oa", "onealigner", {"model": model, "layer": 1, "scoring": "mean", "max_length": 512,
                                              "normalization": "none"})]
    encs = build_encoders(specs, cache=tmp_path / "cache")
    assert encs[0].group is encs[1].group is encs[2].group  # one pass for all three
    sents = ["Una frase di prova.", "A short test sentence, with more words than the first one.", "Short."]
    for se, layer in zip(encs[:2], (1, 2)):
        own = HFEncoder(model=model, layer=layer).encode(sents)
        np.testing.assert_allclose(se.vectors(sents, "eng_Latn"), own, rtol=0, atol=1e-6)
    oa = OneAligner(model=model, layer=1, scoring="mean", normalization="none", max_length=512)
    want = oa.score_states(oa.token_states(sents), oa.token_states(sents))
    got = encs[2].vectors(sents, "eng_Latn")
    g = got / np.linalg.norm(got, axis=1, keepdims=True)
    np.testing.assert_allclose(g @ g.T, want, atol=1e-5)
    # the pass ran once: the second member found its vectors in its cache
    assert encs[0].group.cost.encoded == len(sents)
    # the hf members' caches are the ones `xsimpp eval --encoder hf` reads (same id and fingerprint)
    assert encs[1].cache.path.stem == HFEncoder(model=model, layer=2).fingerprint


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('name = "small"\n', ""), "missing 'name'"),
    (lambda t: t.replace('name = "chargram"', 'name = "no-such-encoder"'), "unknown encoder name 'no-such-encoder'"),
    (lambda t: t.replace("folds = 5", "foldz = 5"), "unknown key 'foldz' in \\[mining\\]"),
    (lambda t: t.replace("k = 4", 'k = "four"'), "\\[mining\\] k must be an integer"),
    (lambda t: t.replace('label = "minilm"', 'label = "chargram"'), "used twice"),
    (lambda t: t + "\n[extra]\n", "unknown table \\[extra\\]"),
    (lambda t: t.replace("[mining]", "[mining"), "not valid TOML"),
    (lambda t: t.replace("unpaired_sources = 0 ", "unpaired_sources = -1 "), "unpaired_sources must be 0"),
    (lambda t: t.replace("unpaired_sources = 0 ", "unpaired_sources = 5 "), "'flores200-dev' cannot also be"),
    (lambda t: t.replace("xsimpp_extra_margins = []", 'xsimpp_extra_margins = ["ratio"]'), "repeats a margin"),
    (lambda t: t.replace("xsimpp_extra_margins = []", 'xsimpp_extra_margins = ["abs"]'), "margin 'abs' is not one of"),
])
def test_config_errors_are_one_sentence(edit, message):
    with pytest.raises(BadInputError, match=message):
        parse_config(edit(PRESETS["small"]), "test.toml")


def test_extra_xsimpp_margins_are_columns_of_their_own():
    from xsimpp.study.proxies import proxy_names

    plain = parse_config(PRESETS["small"])
    assert plain.xsimpp_extra_margins == [] and "xsimpp_extra_margins" not in plain.to_json()  # study.json as before
    cfg = parse_config(PRESETS["small"].replace("xsimpp_extra_margins = []", 'xsimpp_extra_margins = ["absolute"]'))
    names = proxy_names(cfg, ["strict"])
    assert names[-1] == "xsim++[strict,absolute]" and "xsim++[strict]" in names
    assert cfg.to_json()["xsimpp_extra_margins"] == ["absolute"]


def test_presets_parse_and_cli_errors_exit_2(tmp_path, capsys):
    from xsimpp.cli import main

    small = parse_config(PRESETS["small"])
    large = parse_config(PRESETS["large"])
    assert len(small.encoders) >= 8 and len(small.languages) >= 10 and small.distractors >= 50000
    assert len(large.encoders) > len(small.encoders) and "paper" in large.xsimpp_styles
    assert small.unpaired_sources == large.unpaired_sources == 0  # the existing presets' numbers stay
    ckpt = parse_config(PRESETS["checkpoints"])
    distilled = [e for e in ckpt.encoders if e.family == "distill"]
    # the starting student (also the frozen teacher: no model option) and the ten optional checkpoints
    assert distilled[0].label == "distill-00000" and not distilled[0].options and not distilled[0].optional
    assert len(distilled) == 11 and all(e.optional and e.name == "sbert" for e in distilled[1:])
    assert distilled[-1].options["model"] == "distill-checkpoints/step-01000"  # `xsimpp train distill`'s default --out
    assert len({e.family for e in ckpt.encoders}) == 3 and ckpt.unpaired_sources > 0
    assert "flores200-dev" not in ckpt.whole_sources + ckpt.fill_sources and ckpt.xsimpp_styles == ["strict", "paper"]
    bad = tmp_path / "bad.toml"
    bad.write_text(PRESETS["small"].replace('"bem"]', '"bem", "xxq"]'))
    assert main(["study", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "xxq" in err[0]
    assert main(["study", "--preset", "small", str(bad)]) == 2
    assert main(["study", "--preset", "small", "--print-config"]) == 0
    assert "[[encoders]]" in capsys.readouterr().out


def test_ntrex_loader_and_distractor_pool_on_real_data(real_data):
    from xsimpp.datasets.ntrex import Ntrex128
    from xsimpp.datasets.pool import build_distractors

    nt = Ntrex128("test", real_data)
    assert "swh_Latn" in nt.languages()  # the file is newstest2019-ref.swa.txt: swa -> swh_Latn
    bt = nt.bitext("swa", "eng")
    assert len(bt) == 1997 and bt.tgt_lang == "eng_Latn"
    cfg = parse_config(PRESETS["small"].replace("distractors = 50000", "distractors = 3000"))
    gold = {" ".join(t.split()) for t in bt.tgt[:500]}
    pool = build_distractors(cfg.whole_sources, cfg.fill_sources, cfg.distractors, cfg.seed, gold, [real_data])
    assert len(pool.lines) == len(set(pool.lines)) == 3000 and not gold & set(pool.lines)
    # whole sources first (FLORES dev 997 + NTREX minus gold 1497 + OLDI, capped at 3000), nothing sampled
    assert pool.per_source["flores200-dev"] == 997 and pool.per_source["ntrex128"] == 1497
    assert sum(pool.per_source.values()) == 3000
    again = build_distractors(cfg.whole_sources, cfg.fill_sources, cfg.distractors, cfg.seed, gold, [real_data])
    assert again.lines == pool.lines  # seeded


def test_missing_negatives_are_built_not_left_out(real_data, tmp_path, monkeypatch):
    """A style the config asks for and nobody has built is built (as `xsimpp augment flores200`),
    into the folder `--augmented auto` reads, and used: never silently dropped from the study."""
    import xsimpp.study.data as D
    from xsimpp.augment import augment_flores_english, flores_augmented_dir

    monkeypatch.setenv("XSIMPP_HOME", str(tmp_path / "home"))
    calls = []

    def number_only(english, split, **kw):  # the real builder, one category, to keep the test short
        calls.append((split, kw["style"]))
        return augment_flores_english(english, split, categories=["number"], max_per_category=1, **kw)

    monkeypatch.setattr("xsimpp.augment.augment_flores_english", number_only)
    cfg = _config(languages=["deu"], xsimpp_styles=["strict"], flores_lines=50, ntrex_lines=20, tatoeba=False,
                  distractors=2000)
    data = D.load_study_data(cfg, real_data)
    assert calls == [("devtest", "strict")]
    assert (flores_augmented_dir("devtest", "strict") / "eng_Latn_augmented.devtest").is_file()
    aug = data.augmented["strict"]
    assert aug.lines and set(aug.errtypes[ln.strip()]["errtype"] for ln in aug.lines) == {"number"}
    assert any("built the strict-style" in n for n in data.notes)


# --- a non-English target ([study] target, issue 25) -----------------------------------------------

TARGET = "por_Latn"  # no curated causality rules: its strict negatives have entity and number only
TGT_FLORES = [f"flores portuguese {i}" for i in range(5)]  # the same basis vectors as ENG_FLORES
TGT_NTREX = [f"ntrex portuguese {i}" for i in range(5)]
NEGATIVE = "flores portuguese 1, with another number"  # a number negative of TGT_FLORES[1]


class LangLookup(Lookup):
    """A Lookup that remembers the language each sentence was encoded as."""

    def __init__(self, table):
        super().__init__(table)
        self.langs: dict[str, str] = {}

    def encode(self, sentences, *, lang=None, progress=None):
        self.langs.update(dict.fromkeys(sentences, lang))
        return super().encode(sentences, lang=lang, progress=progress)


def _target_encoder(name: str) -> LangLookup:
    """``_encoder``'s geometry with the Portuguese lines in the English ones' places; the negative
    sits on encoder C's confused FLORES source 1 (distractor 0's vector), elsewhere on a spare one."""
    table = _encoder(WRONG[name]).table
    table.update({t: table[e] for t, e in zip(TGT_FLORES + TGT_NTREX, ENG_FLORES + ENG_NTREX)})
    table[NEGATIVE] = 10 if name == "C" else 63
    return LangLookup(table)


def _target_data(target: str = TARGET, negatives: bool = True) -> StudyData:
    from xsimpp.datasets.base import AugmentedTargets

    langs = []
    for lang in ("deu", "fra"):
        fl = Bitext("flores200", "devtest", lang, target, [f"{lang} flores {i}" for i in range(5)], TGT_FLORES)
        nt = Bitext("ntrex128", "test", lang, target, [f"{lang} ntrex {i}" for i in range(5)], TGT_NTREX)
        langs.append(LanguageData(lang, fl, nt))
    aug = AugmentedTargets(target, "devtest", [NEGATIVE], {NEGATIVE: {"src": TGT_FLORES[1], "errtype": "number"}},
                           style="strict", meta={"info": {"categories": ["entity", "number"], "generator": "xlang-3"}})
    return StudyData(langs, {"strict": aug} if negatives else {},
                     Distractors(list(DISTRACTORS), {"hand": 8}, {"hand": 8}), target=target)


def test_a_non_english_target_by_hand():
    # The geometry of the English test above with Portuguese target lines: the same mining F1 and
    # xsim. xsim++ (absolute margin, 5 FLORES lines + 1 negative): a confused source has cosine 0
    # with every target -> index 0, misaligned; except encoder C's FLORES source 1 (both languages),
    # which sits on the negative of its own gold line -> a number error:
    #   deu  A 0  B 20 (misaligned)  C 40 (number + misaligned);  fra  A 20  B 0  C 40 (the same)
    cfg = _config(target="por", xsimpp_styles=["strict"], xsimpp_margin="absolute", tatoeba=False)
    encoders = [StudyEncoder(EncoderSpec(n, "lookup", family=n), _target_encoder(n), None) for n in "ABC"]
    data = _target_data()
    res = run_study(cfg, data, encoders)
    cell = {(c["system"], c["lang"]): c for c in res.cells}
    assert {k: round(v["mining_f1"], 6) for k, v in cell.items()} == {
        ("A", "deu"): 100, ("B", "deu"): 80, ("C", "deu"): 60, ("A", "fra"): 90, ("B", "fra"): 70, ("C", "fra"): 60}
    assert [cell[(n, "fra")]["xsim[absolute]"] for n in "ABC"] == [20, 0, 40]
    assert [cell[(n, "deu")]["xsim++[strict]"] for n in "ABC"] == [0, 20, 40]
    assert [cell[(n, lang)]["xsim++[strict:number]"] for lang in ("deu", "fra") for n in "ABC"] == [0, 0, 20] * 2
    assert [cell[(n, "fra")]["xsim++[strict:misaligned]"] for n in "ABC"] == [20, 0, 20]
    assert {c["direction"] for c in res.cells} == {"deu-por_Latn", "fra-por_Latn"}
    # the error-type subsets are those Portuguese has: no causality column
    assert "xsim++[strict:entity+number+misaligned]" in res.proxies and not any("causality" in p for p in res.proxies)
    assert "tatoeba" not in res.proxies and not res.tatoeba_rankings
    # every target line (gold, negative, distractors) was encoded as Portuguese, every source as itself
    langs = encoders[0].encoder.langs
    assert {langs[t] for t in TGT_FLORES + TGT_NTREX + DISTRACTORS + [NEGATIVE]} == {TARGET}
    assert langs["deu flores 1"] == "deu" and langs["fra ntrex 2"] == "fra"
    # the target is signed: records name it, the mining ones sign it, the data checksum holds it
    assert {r.tgt_lang for r in res.records} == {TARGET}
    truth = next(r for r in res.records if r.metric == "mining_f1")
    assert truth.signature.params["target"] == TARGET
    assert next(r for r in res.records if r.metric == "xsim++").signature.params["negatives_categories"] == "entity+number"
    english_twin = StudyData(data.languages, data.augmented, data.distractors)
    assert data.checksum != english_twin.checksum and truth.signature.data_checksum == data.checksum
    assert res.data_summary["target"] == TARGET
    # the outputs name the target
    from xsimpp.study.output import ranking_text, study_files

    assert "2 languages into por_Latn" in ranking_text(res, "mining_f1")
    html = study_files(res)["report.html"].decode()
    assert "8 por_Latn distractors" in html and "source and por_Latn" in html
    with pytest.raises(BadInputError, match="target is eng_Latn but the data's is por_Latn"):
        run_study(_config(), data, encoders)
    # xsimpp_extra_margins: a column per extra margin, equal to that margin's own xsim++ column
    both = run_study(_config(target="por", xsimpp_styles=["strict"], xsimpp_margin="absolute", tatoeba=False,
                             xsimpp_extra_margins=["distance"]), data, encoders)
    alone = run_study(_config(target="por", xsimpp_styles=["strict"], xsimpp_margin="distance", tatoeba=False),
                      data, encoders)
    assert "xsim++[strict,distance]" in {p.proxy for p in both.rankings["mining_f1"].proxies}
    for b, a, c in zip(both.cells, alone.cells, res.cells):
        assert b["xsim++[strict,distance]"] == a["xsim++[strict]"] and b["xsim++[strict]"] == c["xsim++[strict]"]
        assert b["err_strict,distance_number"] == a["err_strict_number"]
    assert sum(r.metric == "xsim++" for r in both.records) == 2 * sum(r.metric == "xsim++" for r in res.records)


def test_every_column_is_a_task_row_and_a_new_proxy_is_one_toml_row():
    """The built-in proxies are [[proxies.task]]-shaped rows of registered tasks; a new proxy needs
    no file: a TOML row naming a task and metric (here one the xsim task derives from an xsim++
    record's error types) gives the same cells and orientation as the built-in column, and its
    records are the task's own, kept once."""
    from xsimpp.study.columns import column_taken
    from xsimpp.study.proxies import study_rows
    from xsimpp.tasks import METRICS, TASKS
    from xsimpp.tasks.xsim import XsimData, XsimSettings

    cfg = _config(target="por", xsimpp_styles=["strict"], xsimpp_margin="absolute", tatoeba=False)
    data = _target_data()
    rows = study_rows(cfg, data)
    assert [r.column for r in rows if r.role == "proxy"] == [
        "xsim[absolute]", "xsim++[strict]", *(f"xsim++[strict:{t}]" for t in (
            "entity", "number", "misaligned", "entity+number", "entity+misaligned", "number+misaligned",
            "entity+number+misaligned"))]
    assert all(r.task in TASKS and (r.metric is None or r.metric in TASKS[r.task].metrics) for r in rows)
    assert rows[-1].task == "mining-f1" and rows[-1].role == "truth"
    assert METRICS["xsim++[entity+number]"].producer == "xsim" and METRICS["xsim++[entity+number]"].lower_is_better
    assert column_taken("xsim++[mine]") and column_taken("tatoeba") and not column_taken("pp-number")

    text = PRESETS["small"].replace("[mining]", """[[proxies.task]]
task = "xsim"
metric = "xsim++[number+misaligned]"
column = "pp-number"
options = { margin = "absolute", style = "strict" }

[mining]""")
    toml = dataclasses.replace(cfg, task_proxies=parse_config(text).task_proxies)
    # what the study's loading gives the row in each language (load_task_proxies: the task's own load)
    data.task_proxies = {("pp-number", ld.lang): (XsimData([ld.flores], data.augmented["strict"]),
                                                  XsimSettings(margin="absolute")) for ld in data.languages}
    encoders = [StudyEncoder(EncoderSpec(n, "lookup", family=n), _target_encoder(n), None) for n in "ABC"]
    res = run_study(toml, data, encoders)
    assert res.proxies[-1] == "pp-number" and res.lower_is_better["pp-number"] is True
    assert [c["pp-number"] for c in res.cells] == [c["xsim++[strict:number+misaligned]"] for c in res.cells]
    assert [c["pp-number"] for c in res.cells if c["lang"] == "deu"] == [0, 20, 40]
    assert "pp-number" in {p.proxy for p in res.rankings["mining_f1"].proxies}
    # the row's records: the xsim++ record its value is read off, once per cell (the built-in
    # xsim++[strict] keeps an equal one of its own run)
    assert sum(r.metric == "xsim++" for r in res.records) == 2 * len(res.cells)


def test_the_english_default_is_the_study_before_targets():
    """`target` absent or "eng_Latn": the same configuration, data checksum, records and outputs."""
    import json

    small = parse_config(PRESETS["small"])
    explicit = parse_config(PRESETS["small"].replace('name = "small"\n', 'name = "small"\ntarget = "eng_Latn"\n'))
    assert small.target == explicit.target == "eng_Latn" and "target" not in small.to_json()
    assert {**small.to_json(), "source": ""} == {**explicit.to_json(), "source": ""}
    assert parse_config(PRESETS["small"].replace('name = "small"\n', 'name = "small"\ntarget = "kea"\n')
                        ).target == "kea_Latn"  # short codes resolve as everywhere
    data = _data()
    assert data.target == "eng_Latn" and data.checksum == "ffe6e85d9c3d"  # as before issue 25's target
    outs = []
    for cfg in (_config(), _config(target="eng_Latn")):
        encoders = [StudyEncoder(EncoderSpec(n, "lookup", family=n), _encoder(WRONG[n]), None) for n in "ABC"]
        res = run_study(cfg, _data(), encoders)
        recs = [{k: v for k, v in r.to_json().items() if k != "created"} for r in res.records]
        assert {r["tgt_lang"] for r in recs} == {"eng_Latn", "eng"}  # FLORES and mining; Tatoeba v1's own code
        assert not any("target" in r["signature"]["params"] for r in recs)
        outs.append((json.dumps(recs, sort_keys=True), res.data_summary, ranking_text_all(res)))
    assert outs[0] == outs[1] and "target" not in outs[0][1] and " into " not in outs[0][2]


def ranking_text_all(res) -> str:
    from xsimpp.study.output import ranking_text

    return "\n".join(ranking_text(res, gt) for gt in res.rankings)


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('name = "small"\n', 'name = "small"\ntarget = "fra"\n'),
     "languages lists fra, the target fra_Latn: .*leave fra_Latn out"),
    (lambda t: t.replace('name = "small"\n', 'name = "small"\ntarget = "kea"\n').replace(
        'xsimpp_styles = ["strict"]', 'xsimpp_styles = ["strict", "paper"]'),
     "'paper'.*defined on English only; a kea_Latn target has strict negatives only"),
    (lambda t: t.replace('name = "small"\n', 'name = "small"\ntarget = "xxq"\n'), "\\[study\\] target: Unknown"),
    (lambda t: t.replace('name = "small"\n', 'name = "small"\ntarget = 3\n'), "\\[study\\] target must be a string"),
])
def test_target_config_errors_are_one_sentence(edit, message):
    with pytest.raises(BadInputError, match=message):
        parse_config(edit(PRESETS["small"]), "test.toml")


def _devtest_slice(real_data, tmp_path, langs, n):
    """A data root with the first `n` FLORES devtest lines of `langs` (the negatives are built over
    the whole devtest: a slice keeps that short); FLORES dev, NTREX and OLDI seed as they are."""
    root = tmp_path / "data"
    (root / "flores200" / "devtest").mkdir(parents=True)
    for code in langs:
        lines = (real_data / "flores200" / "devtest" / f"{code}.devtest").read_text(encoding="utf-8").splitlines()[:n]
        (root / "flores200" / "devtest" / f"{code}.devtest").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "flores200" / "dev").symlink_to(real_data / "flores200" / "dev")
    (root / "ntrex128").symlink_to(real_data / "ntrex128")
    (root / "oldi-seed").symlink_to(real_data / "oldi-seed")
    return root


def test_kea_into_french_on_real_data(real_data, nlp, tmp_path, isolated_home):
    """kea -> fra: FLORES gold, a French NTREX pool without the gold, French negatives built as
    `xsimpp augment flores200 --lang fra` builds them (and found, not rebuilt, the second time)."""
    from xsimpp.augment import flores_augmented_dir
    from xsimpp.study.data import load_study_data
    from xsimpp.study.encoders import build_encoders

    root = _devtest_slice(real_data, tmp_path, ["eng_Latn", "fra_Latn", "kea_Latn"], 12)
    cfg = _config(languages=["kea"], target="fra", flores_lines=5, ntrex_lines=0, xsimpp_styles=["strict"],
                  distractors=20, whole_sources=["ntrex128", "oldi-seed"], fill_sources=[])
    data = load_study_data(cfg, root)
    flores = real_data / "flores200" / "devtest"
    kea = (flores / "kea_Latn.devtest").read_text(encoding="utf-8").splitlines()[:5]
    fra = (flores / "fra_Latn.devtest").read_text(encoding="utf-8").splitlines()[:5]
    (ld,) = data.languages
    assert (ld.flores.src, ld.flores.tgt, ld.flores.tgt_lang) == (kea, fra, "fra_Latn") and ld.ntrex is None
    assert ld.tatoeba is None and any("Tatoeba proxy is off" in n for n in data.notes)
    # the pool: the first French NTREX lines, none of them gold; OLDI seed has no French side
    norm = [" ".join(t.split()) for t in (real_data / "ntrex128" / "newstest2019-ref.fra.txt").read_text(
        encoding="utf-8").splitlines()]
    gold = {" ".join(t.split()) for t in fra}
    assert data.distractors.lines == [t for t in dict.fromkeys(norm) if t and t not in gold][:20]
    assert data.distractors.per_source == {"ntrex128": 20, "oldi-seed": 0}
    assert any("'oldi-seed' has no fra_Latn side" in n for n in data.notes)
    # the negatives: French, built where `xsimpp eval --target fra --augmented auto` finds them
    aug = data.augmented["strict"]
    assert aug.lang == "fra_Latn" and aug.lines and aug.style == "strict"
    assert {aug.errtypes[ln.strip()]["src"].strip() for ln in aug.lines} <= {t.strip() for t in fra}
    assert set(aug.categories) == {"causality", "entity", "number"}  # French has curated causality rules
    assert (flores_augmented_dir("devtest", "strict") / "fra_Latn_augmented.devtest").is_file()
    assert any("built the strict-style xsim++ negatives of FLORES devtest fra_Latn" in n for n in data.notes)
    again = load_study_data(cfg, root)
    assert not any("built" in n for n in again.notes) and again.augmented["strict"].lines == aug.lines
    assert again.checksum == data.checksum
    # a pool asked larger than its French sources is what they have, with a note (never English)
    big = load_study_data(dataclasses.replace(cfg, distractors=5000), root)
    assert len(big.distractors.lines) == len(set(norm) - gold - {""}) < 5000
    assert any("fewer than the 5000 distractors asked for" in n for n in big.notes)
    # and the study runs on it: two character n-gram encoders, kea -> fra in every record
    encs = build_encoders([EncoderSpec("cg", "chargram"), EncoderSpec("cg-2", "chargram", {"ngram_max": 2})],
                          cache=False)
    res = run_study(cfg, data, encs)
    assert {r.tgt_lang for r in res.records} == {"fra_Latn"} and {c["direction"] for c in res.cells} == {"kea_Latn-fra_Latn"}
    assert "xsim++[strict:causality]" in res.proxies and res.cells[0]["xsim++[strict]"] >= 0


def test_a_checkpoint_trained_on_the_dev_gold_is_refused(tmp_path):
    """FLORES dev gold past the unpaired sources: the checkpoint must have held out every dev line
    the study mines, gold included."""
    import json

    from xsimpp.errors import BadInputError
    from xsimpp.study.config import parse_config
    from xsimpp.study.run import check_unpaired_unseen, dev_lines_used

    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "xsimpp_training.json").write_text(json.dumps(
        {"data": {"sources": {"flores200-dev:kea_Latn": 997}, "hold_out_dev": 300}}), encoding="utf-8")
    enc = StudyEncoder(EncoderSpec("ckpt", "sbert", options={"model": str(folder)}), Lookup({}), None)
    cfg = parse_config("""[study]
name = "g"
languages = ["kea"]
tatoeba_lines = 0
flores_gold_lines = 300
[proxies]
tatoeba = false
[mining]
unpaired_sources = 300
whole_sources = ["ntrex128"]
flores_gold_split = "dev"
flores_gold_offset = 300
[[encoders]]
label = "a"
name = "chargram"
[[encoders]]
label = "b"
name = "chargram"
""", "test")
    assert dev_lines_used(cfg) == (600, "as gold and as sources without a translation")
    check_unpaired_unseen(300, ["kea_Latn"], [enc])  # the unpaired sources alone: held out
    with pytest.raises(BadInputError, match=r"mines as gold .*first 600 of kea_Latn.*--hold-out-dev 600.*devtest"):
        used, what = dev_lines_used(cfg)
        check_unpaired_unseen(used, ["kea_Latn"], [enc], what)
    assert {"flores_gold_split", "flores_gold_lines", "flores_gold_offset"} <= set(cfg.to_json())
    assert "ntrex_sample" not in cfg.to_json() and "tatoeba_gold" not in cfg.to_json()  # defaults: as before
    with pytest.raises(BadInputError, match="cannot also be a proxy"):
        parse_config(cfg.text.replace("tatoeba = false", "tatoeba = true").replace(
            'flores_gold_offset = 300', 'flores_gold_offset = 300\ntatoeba_gold = true'), "test")
