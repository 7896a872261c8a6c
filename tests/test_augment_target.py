"""xsim++ negatives for a non-English target (issue 25): script-keeping numerals, entity projection
through the FLORES alignment, causality only from curated rules, `xsimpp augment --lang` and
`xsimpp eval --target` with them, and the English default output unchanged.

The curated causality rules (``xsimpp.augment.causality_rules``) come from another branch: every
test here puts a fake module in its place, so the rules are this file's, not the real ones.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import types
import unicodedata
from pathlib import Path

import pytest
from test_augment import nlp  # noqa: F401  (the spaCy English model, or a skip saying it is missing)

from xsimpp.augment import EnglishAnalysis, build_target_augmented, target_pool
from xsimpp.augment.edits import apply_edits
from xsimpp.augment.number import Slot, number_slots
from xsimpp.augment.numerals import ascii_digits, english_values, numeral_variants, target_numerals
from xsimpp.augment.pool import PoolEntry
from xsimpp.augment.target import projected_mentions
from xsimpp.errors import BadInputError

REPO = Path(__file__).resolve().parent.parent
# The last commit before issue 25: the English output of `xsimpp augment` it writes is the reference.
BASE_COMMIT = "7b637e2"


class FakeRules:
    """Curated-rules stand-in: negates "est" and swaps "grand" for "petit"."""

    def variants(self, sentence):
        out = []
        if " est " in sentence:
            out.append((sentence.replace(" est ", " n'est pas ", 1), "negation"))
        if "grand" in sentence:
            out.append((sentence.replace("grand", "petit", 1), "antonym"))
        return out


@pytest.fixture
def fake_rules(monkeypatch):
    mod = types.ModuleType("xsimpp.augment.causality_rules")
    mod.RULES_VERSION = "fake-rules-1"
    mod.rules_for = lambda lang: FakeRules() if lang == "fra_Latn" else None
    monkeypatch.setitem(sys.modules, "xsimpp.augment.causality_rules", mod)
    return mod


def variants_of(text, lang, english, k=6, seed=0):
    nums = target_numerals(text, lang, english)
    return nums, [apply_edits(text, e, fix_articles=False) for e in numeral_variants(nums, lang, random.Random(seed), k)]


# --- numbers ------------------------------------------------------------------------------------

ENGLISH = "In 2019 he paid 1,500 dollars for COVID-19 tests."
ENGLISH_SLOTS = [Slot(3, 7, "year", "2019", (False,)), Slot(16, 21, "number", "1,500", (False,))]


def _digit_script(ch):
    return unicodedata.name(ch).split(" DIGIT")[0]


@pytest.mark.parametrize("lang,text,script", [
    ("hin_Deva", "२०१९ में उसने COVID-19 परीक्षणों के लिए १,५०० डॉलर दिए।", "DEVANAGARI"),
    ("arb_Arab", "في عام ٢٠١٩ دفع ١٬٥٠٠ دولار لاختبارات COVID-19.", "ARABIC-INDIC"),
    ("fra_Latn", "En 2019, il a payé 1 500 dollars pour des tests COVID-19.", "DIGIT"),
])
def test_numerals_keep_their_script_and_grouping_and_change_value(lang, text, script):
    english = english_values(ENGLISH, ENGLISH_SLOTS)
    nums, variants = variants_of(text, lang, english)
    assert [n.slot.kind for n in nums] == ["year", "number"]  # "19" of COVID-19 is part of a name
    assert len(variants) == 12
    for v in variants:
        changed = [(a, b) for a, b in zip(text, v) if a != b]
        assert len(v) == len(text) and changed, v  # same width and grouping, another value
        for _, new in changed:
            assert unicodedata.decimal(new) is not None
            assert unicodedata.name(new).startswith(script) if script != "DIGIT" else new.isascii()
        assert "COVID-19" in v
    years = [int(ascii_digits(re.search(r"\d{4}", v).group())) for v in variants[::2]]  # interleaved: year first
    assert len(years) == 6 and all(1989 <= y <= 2049 and y != 2019 for y in years)


def test_a_year_the_english_tagger_calls_a_count_stays_a_year_near_it(nlp):  # noqa: F811
    """FLORES devtest line 425: spaCy tags "1624" in "In 1624,Dutch ..." CARDINAL; xlang-2 gave the
    French and German lines 2528 ... 9903. xlang-3 moves it by at most 30, as a DATE year."""
    english = "In 1624,Dutch East India Company establishes a base in southwestern Taiwan."
    values = english_values(english, number_slots(nlp(english), strict=True))
    assert values["1624"].kind == "year"
    for lang, text in (("fra_Latn", "En 1624, la Compagnie néerlandaise des Indes orientales établit une base à Taïwan."),
                       ("deu_Latn", "1624 gründete die Niederländische Ostindien-Kompanie einen Stützpunkt in Taiwan.")):
        _, variants = variants_of(text, lang, values, k=6)
        years = [int(re.search(r"\d{4}", v).group()) for v in variants]
        assert len(years) == 6 and all(0 < abs(y - 1624) <= 30 for y in years), (lang, years)


def test_only_numbers_the_english_states_change():
    english = english_values("Three people and 12 cats.", [Slot(0, 5, "word", "Three"), Slot(17, 19, "number", "12", (False,))])
    nums, variants = variants_of("Trois personnes, 12 chats et un livre neuf.", "fra_Latn", english)
    assert [n.text for n in nums] == ["Trois", "12"]  # "neuf" (new) is no 9 the English states; "un" is never a count
    words = {v.split()[0] for v in variants}
    assert words - {"Trois"} and all(w[0].isupper() for w in words)  # a French number word, capital kept
    assert all(v.endswith("livre neuf.") for v in variants)
    # Turkish "İki" lowered keeps a combining dot; a lowercase prefix before a hyphen is a noun class
    # (Zulu "ngo-12"), a capitalised one a name ("COVID-19")
    english = english_values("Two cats, 12 dogs and 19 birds.", [Slot(0, 3, "word", "Two"),
                                                                  Slot(10, 12, "number", "12", (False,)),
                                                                  Slot(22, 24, "number", "19", (False,))])
    nums, variants = variants_of("İki kedi, ngo-12 ve COVID-19.", "tur_Latn", english)
    assert [n.text for n in nums] == ["İki", "12"] and all("COVID-19" in v for v in variants)
    assert {v.split()[0] for v in variants[::2]} <= {"Üç", "Dört", "Beş", "Altı", "Yedi", "Sekiz", "Dokuz"}
    # a language num2words does not cover: digits only
    nums, _ = variants_of("Watu watatu na paka 12.", "swh_Latn", english)
    assert [n.text for n in nums] == ["12"]


def test_english_compound_number_words_and_times():
    text = "at 10:30 with twenty-five people"
    english = english_values(text, [Slot(3, 8, "time", "10:30", (False,)), Slot(14, 20, "word", "twenty"),
                                    Slot(21, 25, "word", "five")])
    assert {"1030", "25", "20", "5"} <= set(english)
    nums, variants = variants_of("à 10:30 avec vingt-cinq personnes", "fra_Latn", english)
    assert [n.text for n in nums] == ["10:30", "vingt-cinq"]
    for v in variants:
        hh, mm = v.split()[1].split(":")
        assert 0 <= int(hh) <= 23 and 0 <= int(mm) <= 59 and len(mm) == 2


# --- entities -----------------------------------------------------------------------------------

def test_projection_of_a_hand_made_english_french_pair():
    names = [("Angela Merkel", "PERSON"), ("Paris", "PLACE"), ("Berlin", "PLACE")]
    fr = "Angela Merkel est allée de Paris-Saclay à Paris, puis à Paris encore."
    ms = projected_mentions(names, fr)
    assert [fr[m.start:m.end] for m in ms] == ["Angela Merkel", "Paris", "Paris"]  # not Paris-Saclay; no Berlin
    assert [m.label for m in ms] == ["PERSON", "PLACE", "PLACE"]
    zu = "U-Angela Merkel uvakashele e-Paris naseBerlin-Nord."  # Zulu noun-class prefixes; Berlin-Nord is longer
    assert [zu[m.start:m.end] for m in projected_mentions(names, zu)] == ["Angela Merkel", "Paris"]

    analysis = EnglishAnalysis([names], [{}], {"spacy_model": "test"})
    # xlang-2: a name replaces a mention only where the pool saw it after the same token (the
    # line start for Angela Merkel, "à" for Paris); items carry those left contexts
    pool = [("PERSON", "Olaf Scholz", False, ("<s>",)), ("PERSON", "Emmanuel Macron", False, ("<s>", "et")),
            ("PLACE", "Lyon", False, ("à",)), ("PLACE", "Madrid", False, ("à", "de")),
            ("PLACE", "Berlin", False, ("de",)), ("ORG", "UNESCO", False, ("l'",))]

    def build(seed):
        return build_target_augmented([fr], analysis, "fra_Latn", seed=seed, categories=["entity"], pool_items=pool,
                                      pool_info={"files": ["test"]}, swaps_per_entity=2)

    aug = build(0)
    assert aug.errtype == ["entity"] * 4
    for v in aug.variants:
        swapped_person = "Angela Merkel" not in v
        assert swapped_person == (v.count("Paris,") + v.count("Paris encore") == 2)  # one name changed per variant
        if not swapped_person:  # both mentions of Paris replaced together, by a place
            assert v.count("Lyon") == 2 or v.count("Madrid") == 2
        assert "Paris-Saclay" in v and "UNESCO" not in v and "Berlin" not in v  # Berlin: seen after "de" only
    assert build(0).variants == aug.variants
    assert any(build(s).variants != aug.variants for s in range(1, 6))


def test_target_pool_keeps_names_standing_in_both_lines():
    entries = [PoolEntry("spacy", "GPE", "Lyon", 3, 0, ("ntrex128",)),
               PoolEntry("spacy", "PERSON", "Olaf Scholz", 2, 0, ("ntrex128",)),
               PoolEntry("spacy", "GPE", "London", 5, 0, ("ntrex128",)),      # "Londres" in French: not verbatim
               PoolEntry("spacy", "GPE", "Madrid", 4, 0, ("tatoeba",)),       # not recognised in this corpus
               PoolEntry("spacy", "ORG", "UNESCO", 1, 0, ("ntrex128",))]      # seen once: not strict
    corpora = {"ntrex128": (["Olaf Scholz visited Lyon and London.", "Madrid and UNESCO."],
                            ["Olaf Scholz a visité Lyon et Londres.", "Madrid et l'UNESCO."])}
    items, info = target_pool(entries, corpora)
    assert items == [("PERSON", "Olaf Scholz", False, ("<s>",)), ("PLACE", "Lyon", False, ("visité",))]
    assert info["files"] == ["ntrex128"] and info["entries"] == 2 and info["contexts"] == 2
    with pytest.raises(BadInputError, match="line-aligned"):
        target_pool(entries, {"ntrex128": (["a"], [])})


# --- causality ----------------------------------------------------------------------------------

def test_causality_only_from_curated_rules(fake_rules):
    sents = ["Le musée est grand.", "Le pont est vieux."]
    analysis = EnglishAnalysis([[], []], [{}, {}], {"spacy_model": "test"})
    aug = build_target_augmented(sents, analysis, "fra_Latn")
    assert aug.info["categories"] == ["causality", "entity", "number"]
    assert aug.info["causality_rules"] == "fake-rules-1"
    assert aug.by_category("causality") == [("Le musée est grand.", "Le musée n'est pas grand."),
                                            ("Le musée est grand.", "Le musée est petit."),
                                            ("Le pont est vieux.", "Le pont n'est pas vieux.")]
    assert aug.info["causality_subtypes"] == {"antonym": 1, "negation": 2}
    swh = build_target_augmented(["Daraja ni kubwa."], EnglishAnalysis([[]], [{}], {"spacy_model": "test"}), "swh_Latn")
    assert swh.info["categories"] == ["entity", "number"] and "no curated rules" in swh.info["absent"]
    with pytest.raises(BadInputError, match="no curated causality rules for swh_Latn"):
        build_target_augmented(["Daraja ni kubwa."], EnglishAnalysis([[]], [{}], {"spacy_model": "t"}), "swh_Latn",
                               categories=["causality"])


# --- FLORES slices through the CLI --------------------------------------------------------------

SLICE = 30


def _slice_root(real_data: Path, tmp_path: Path, langs) -> Path:
    """A data root with the first SLICE dev lines of `langs`; devtest and NTREX (the pool's
    corpora) as they are."""
    root = tmp_path / "data"
    dev = root / "flores200" / "dev"
    dev.mkdir(parents=True)
    for code in langs:
        lines = (real_data / "flores200" / "dev" / f"{code}.dev").read_text(encoding="utf-8").splitlines()[:SLICE]
        (dev / f"{code}.dev").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "flores200" / "devtest").symlink_to(real_data / "flores200" / "devtest")
    (root / "ntrex128").symlink_to(real_data / "ntrex128")
    return root


def test_flores_slice_for_two_targets_and_eval(real_data, nlp, fake_rules, tmp_path, isolated_home, capsys):
    from xsimpp.cli import main

    root = str(_slice_root(real_data, tmp_path, ["eng_Latn", "fra_Latn", "swh_Latn", "kea_Latn"]))
    out = isolated_home / "augmented" / "flores200" / "dev_augmented" / "strict"
    for lang, cats in (("fra_Latn", ["causality", "entity", "number"]), ("swh", ["entity", "number"])):
        assert main(["augment", "flores200", "--lang", lang, "--split", "dev", "--data-dir", root, "--no-progress"]) == 0
        code = "swh_Latn" if lang == "swh" else lang
        meta = json.loads((out / f"{code}_augmented.dev.meta.json").read_text(encoding="utf-8"))
        assert meta["style"] == "strict" and meta["originals"] == SLICE
        assert meta["info"]["lang"] == code and meta["info"]["generator"] == "xlang-3"
        assert meta["info"]["categories"] == cats
        assert meta["counts"]["entity"] > 0 and meta["counts"]["number"] > 0
        assert "flores200/devtest" in meta["info"]["entity_pool"]["files"]
        variants = (out / f"{code}_augmented.dev").read_text(encoding="utf-8").splitlines()
        errtypes = json.loads((out / f"{code}_errtype.dev.json").read_text(encoding="utf-8"))
        target = (Path(root) / "flores200" / "dev" / f"{code}.dev").read_text(encoding="utf-8").splitlines()
        assert len(variants) == meta["variants"] == len(errtypes)
        assert all(errtypes[v]["src"] in target and v not in target for v in variants)
    printed = capsys.readouterr().out
    assert "absent: causality (no curated rules for swh_Latn)" in printed and "number words: num2words 'fr'" in printed

    base = ["eval", "--encoder", "chargram", "--split", "dev", "--langs", "kea_Latn", "--data-dir", root,
            "--augmented", "auto", "--no-progress", "--no-cache"]
    assert main(base + ["--target", "swh_Latn"]) == 0
    table = capsys.readouterr().out
    assert "kea_Latn-swh_Latn" in table and "swh_Latn negatives: entity, number (generator xlang-3)" in table
    row = next(ln for ln in table.splitlines() if ln.startswith("| kea_Latn-swh_Latn") and "-  " in ln)
    assert row.split("|")[2].strip() == "-"  # the causality column: no negatives of that type
    assert main(base + ["--target", "fra_Latn", "--json"]) == 0
    recs = [json.loads(ln) for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")]
    pp = next(r for r in recs if r["metric"] == "xsim++")
    assert pp["tgt_lang"] == "fra_Latn" and pp["n"] == SLICE
    for part in ("negatives:strict", "negatives_categories:causality+entity+number", "negatives_generator:xlang-3",
                 "negatives_causality_rules:fake-rules-1"):
        assert part in pp["signature_string"]


def _tiny_root(tmp_path: Path, langs) -> str:
    dev = tmp_path / "data" / "flores200" / "dev"
    dev.mkdir(parents=True)
    for code in langs:
        (dev / f"{code}.dev").write_text("".join(f"{code} sentence {i}.\n" for i in range(8)), encoding="utf-8")
    return str(tmp_path / "data")


def test_bad_input_is_one_sentence_and_exit_2(tmp_path, capsys, fake_rules):
    from xsimpp.cli import main

    root = _tiny_root(tmp_path, ["eng_Latn", "fra_Latn", "kea_Latn", "deu_Latn"])
    plain = tmp_path / "plain.txt"
    plain.write_text("Une phrase.\n", encoding="utf-8")
    cases = [
        (["augment", "flores200", "--lang", "xyz_Latn", "--split", "dev", "--data-dir", root], "Unknown language code"),
        (["augment", "flores200", "--lang", "fra", "--style", "paper", "--split", "dev", "--data-dir", root],
         "strict style only"),
        (["augment", str(plain), "--lang", "fra", "--out", str(tmp_path / "o")], "no aligned English"),
        (["augment", "flores200", "--lang", "fra", "--entity-pool", str(plain), "--split", "dev", "--data-dir", root],
         "--entity-pool gives English candidates"),
        (["eval", "--encoder", "chargram", "--split", "dev", "--langs", "fra", "--target", "fra_Latn", "--data-dir",
          root, "--no-progress"], "--langs lists fra_Latn, the target"),
        (["eval", "--encoder", "chargram", "--split", "dev", "--langs", "kea", "--target", "qqq", "--data-dir", root,
          "--no-progress"], "Unknown language code"),
        (["eval", "--encoder", "chargram", "--split", "dev", "--langs", "kea", "--target", "deu_Latn", "--data-dir",
          root, "--augmented", "auto", "--no-progress"], "xsimpp augment flores200 --split dev --lang deu_Latn"),
        (["eval", "--encoder", "chargram", "--split", "dev", "--langs", "kea", "--target", "deu_Latn", "--data-dir",
          root, "--augmented", "auto", "--protocol", "xsimpp-paper", "--no-progress"], "the paper's method is English-only"),
    ]
    for argv, says in cases:
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert says in err and len(err.splitlines()) == 1, (argv, err)


# --- English: the default output is what it was ----------------------------------------------

def test_english_default_output_is_byte_identical_to_before_issue_25(real_data, nlp, tmp_path):
    """`xsimpp augment flores200` (no --lang) on a FLORES dev slice, run by this tree and by the
    tree of the last commit before issue 25: the same bytes (the sidecar: the same JSON but for
    the toolkit version and the generator it names since 0.7)."""
    git = shutil.which("git")
    if git is None or subprocess.run([git, "-C", str(REPO), "cat-file", "-e", f"{BASE_COMMIT}^{{commit}}"],
                                     capture_output=True).returncode != 0:
        pytest.skip(f"no git history holding {BASE_COMMIT} (the reference tree) here")
    old = tmp_path / "old"
    old.mkdir()
    archive = subprocess.run([git, "-C", str(REPO), "archive", BASE_COMMIT, "xsimpp", "data/entity_pool"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(old, filter="data")
    dev = tmp_path / "data" / "flores200" / "dev"
    dev.mkdir(parents=True)
    lines = (real_data / "flores200" / "dev" / "eng_Latn.dev").read_text(encoding="utf-8").splitlines()[:12]
    (dev / "eng_Latn.dev").write_text("\n".join(lines) + "\n", encoding="utf-8")
    outs = [tmp_path / "out-before", tmp_path / "out-now"]
    runs = [subprocess.Popen([sys.executable, "-m", "xsimpp", "augment", "flores200", "--split", "dev", "--data-dir",
                              str(tmp_path / "data"), "--out", str(out), "--no-progress"], cwd=tree,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(tree)})
            for tree, out in zip((old, REPO), outs)]  # side by side: each spends most of its time loading models
    try:
        for run in runs:
            _, err = run.communicate(timeout=600)  # seconds when idle; a loaded shared machine is far slower
            assert run.returncode == 0, err.decode(errors="replace")
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
    for name in ("eng_Latn_augmented.dev", "eng_Latn_errtype.dev.json"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    metas = [json.loads((o / "eng_Latn_augmented.dev.meta.json").read_text(encoding="utf-8")) for o in outs]
    for m in metas:
        m.pop("xsimpp")
    # since 0.7 the sidecar names its generator (strict-2 moves bare year-shaped numbers as years;
    # these 12 lines have none, so their bytes stay)
    assert metas[1]["info"].pop("generator") == "strict-2" and "generator" not in metas[0]["info"]
    assert metas[0] == metas[1] and metas[0]["variants"] > 0
