"""The target generator's entity swaps are context-matched and take stand-alone names only
(generator xlang-2, issue 25): a mention is replaced only by pool names seen after the same
previous token in the pool corpora ("en Iran" by names seen after "en", "l’Europe" by names seen
after "l'"), and a name beside another capitalised word ("Garuda Indonesia") is part of a longer
name, neither a pool occurrence nor a mention."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from test_augment import nlp  # noqa: F401  (the spaCy English model, or a skip saying it is missing)

from xsimpp.augment import EnglishAnalysis, build_target_augmented, target_pool
from xsimpp.augment.pool import PoolEntry
from xsimpp.augment.target import left_context, projected_mentions, stand_alone


def _entry(label, text, src="ntrex128"):
    return PoolEntry("spacy", label, text, 3, 0, (src,))


# A tiny aligned corpus: which names the pool sees after which token.
ENTRIES = [_entry("GPE", n) for n in ("Madrid", "Sumatra", "Irak", "Oman", "Manatee", "Indonesia", "Europe")]
CORPUS = {"ntrex128": (
    ["He lives in Madrid.", "Rain fell on Sumatra.", "War in Irak.", "Trade with Oman.", "Rivers of Manatee.",
     "Flights of Garuda Indonesia.", "Europe votes."],
    ["Il vit à Madrid.", "Il a plu sur Sumatra.", "La guerre en Irak.", "Le commerce avec l’Oman.",
     "Les rivières de Manatee.", "Les vols de Garuda Indonesia.", "L'Europe vote."])}


def _variants(sentence, names, items, seed=0):
    analysis = EnglishAnalysis([names], [{}], {"spacy_model": "test"})
    aug = build_target_augmented([sentence], analysis, "fra_Latn", seed=seed, categories=["entity"],
                                 pool_items=items, pool_info={"files": ["test"]}, swaps_per_entity=5)
    assert aug.info["generator"] == "xlang-3" and "context-matched" in aug.info["entity_projection"]
    return aug.variants


def test_left_context_keeps_elision_and_reads_both_apostrophes_alike():
    s = "La France, l’Europe, d'Iran, près du Rwanda, en Iran, e-Paris, (Oman"
    got = {n: left_context(s, s.index(n)) for n in ("France", "Europe", "Iran", "Rwanda", "Paris", "Oman")}
    assert got == {"France": "la", "Europe": "l'", "Iran": "d'", "Rwanda": "du", "Paris": "e-", "Oman": "("}
    assert left_context("Iran vote.", 0) == "<s>" and left_context("En Iran", 3) == "en"


def test_pool_records_left_contexts_of_stand_alone_occurrences():
    items, info = target_pool(ENTRIES, CORPUS)
    got = {name: ctx for _, name, _, ctx in items}
    # (c) "Garuda Indonesia" holds no stand-alone Indonesia: not in the pool at all
    assert got == {"Madrid": ("à",), "Sumatra": ("sur",), "Irak": ("en",), "Oman": ("l'",), "Manatee": ("de",),
                   "Europe": ("l'",)}
    assert info["entries"] == 6
    def alone(text, name):
        i = text.index(name)
        return stand_alone(text, i, i + len(name))

    assert not alone("Les vols de Garuda Indonesia.", "Indonesia")
    assert not alone("la Bank Indonesia vote", "Bank")  # a capitalised word after it: a longer name
    assert alone("Garuda vole.", "Garuda") and alone("En Iran, il pleut.", "Iran")  # sentence-initial "En"
    assert not alone("Selon M. Macron, oui.", "Macron") and not alone("M. Macron dit", "Macron")  # a title
    assert alone("Il vit au Japon. Obama dit non.", "Obama")  # "Japon." ends a sentence


def test_en_iran_takes_only_names_seen_after_en():
    items, _ = target_pool(ENTRIES, CORPUS)
    # (a) "en Iran": only Irak was seen after "en"; Madrid (after "à") and Sumatra (after "sur") never
    assert _variants("Il a voyagé en Iran.", [("Iran", "PLACE")], items) == ["Il a voyagé en Irak."]


def test_elided_article_takes_only_names_seen_after_it():
    items, _ = target_pool(ENTRIES, CORPUS)
    # (b) "l’Europe" (either apostrophe): names seen after "l'"/"l’" -- Oman -- never "l’Manatee"
    # (Manatee was seen after "de" only); the sentence keeps its own apostrophe
    for seed in range(5):
        assert _variants("C’est l’Europe féodale.", [("Europe", "PLACE")], items, seed) == ["C’est l’Oman féodale."]
    # both mentions of a name must match: after "l'" and after "de" no pool name was seen
    assert _variants("L'Europe et le sort de Europe.", [("Europe", "PLACE")], items) == []


def test_no_context_matched_candidate_gives_no_variant():
    items, _ = target_pool(ENTRIES, CORPUS)
    # (d) "près du Rwanda": nothing was seen after "du"
    assert _variants("Il habite près du Rwanda.", [("Rwanda", "PLACE")], items) == []
    # a mention inside a longer name is none: "Bank Indonesia" keeps its Indonesia
    s = "La Bank Indonesia a parlé."
    assert projected_mentions([("Indonesia", "PLACE")], s) == []
    # pool items without contexts (the xlang-1 form) are seen nowhere
    assert _variants("Il a voyagé en Iran.", [("Iran", "PLACE")], [("PLACE", "Irak", False)]) == []


# Elided article or "de" followed by a consonant: "l’Manatee", "d’Francesco Molinari".
_ELIDED_CONSONANT = re.compile(r"\b[ldLD][’']\s?[bcdfgjklmnpqrstvwxzBCDFGJKLMNPQRSTVWXZ]")


def test_french_devtest_variants_never_elide_before_a_consonant(real_data, nlp):
    from xsimpp.augment import analyse_english, load_entity_pool
    from xsimpp.study.target_negatives import pool_corpora

    n = 200
    flores = real_data / "flores200" / "devtest"
    english = (flores / "eng_Latn.devtest").read_text(encoding="utf-8").splitlines()[:n]
    french = (flores / "fra_Latn.devtest").read_text(encoding="utf-8").splitlines()[:n]
    analysis = analyse_english(english, ["flores200/devtest"], categories=["entity"])
    entries, _ = load_entity_pool()
    items, _ = target_pool(entries, pool_corpora("fra_Latn", "devtest", real_data))
    aug = build_target_augmented(french, analysis, "fra_Latn", categories=["entity"], pool_items=items)
    pairs = aug.by_category("entity")
    assert pairs  # the first 200 lines do get entity negatives
    for orig, var in pairs:
        new = Counter(_ELIDED_CONSONANT.findall(var)) - Counter(_ELIDED_CONSONANT.findall(orig))
        assert not new, (orig, var)
