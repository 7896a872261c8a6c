"""The strict style's audit corpus (issue 14): hand-written tricky sentences, at least 60 per
category, with the exact variants the strict generators must produce -- the failure cases found
in the FLORES audit among them ("Fill your home", "round trip", "three different directions",
"No one was inside", "haven't yet agreed", "one year ago", "one of", "1995-96", "340 million",
"Formula 1", "Karenia brevis", "the United States" / "the U.S.").

Entities are drawn from a tiny pool with one name per form (so each output is exact: the strict
style replaces like with like in group *and* form: a plural demonym by a plural one, a name that
takes "the" by one that does); numbers use one new value per slot with a fixed seed. An empty list
means the sentence must be left alone in that category. How to extend this corpus:
docs/guides/negatives.md, "Auditing the negatives".
"""

from __future__ import annotations

import random

import pytest

from test_augment import nlp  # noqa: F401  (fixture: spaCy's English model, or skip/fail clearly)
from xsimpp.augment.causality import causality_sites, strict_antonym
from xsimpp.augment.edits import apply_edits
from xsimpp.augment.entity import EntityPool, same_referent, strict_entity_variants, strict_mentions
from xsimpp.augment.lexicon import FIXED_PHRASES, STRICT_ANTONYMS
from xsimpp.augment.number import number_slots, number_variants, plural

POOL = EntityPool([("PERSON", "Ada Lovelace", False), ("PERSON", "Federer", False), ("PLACE", "Peru", False),
                   ("PLACE", "China", False), ("PLACE", "Gobi Desert", True), ("PLACE", "Philippines", True),
                   ("ORG", "Nintendo", False), ("ORG", "UNESCO", False), ("ORG", "World Bank", True),
                   ("NORP", "Danish", False), ("NORP", "Danes", False)])

CAUSALITY = [
    ('He went to the market.', ['He did not go to the market.']),
    ("She doesn't know the answer yet.", ['She knows the answer already.']),
    ("They haven't yet agreed on a date.", ['They have already agreed on a date.']),
    ('We have already signed the contract.', ['We have not yet signed the contract.']),
    ('He already knew the truth.', []),
    ('No one was inside the building.', []),
    ('Nothing was left in the fridge.', []),
    ('None of the passengers were injured.', []),
    ('He never visits his parents.', ['He visits his parents.']),
    ('Nobody answered the phone.', []),
    ('The committee did not approve any changes.', ['The committee approved some changes.']),
    ("They didn't find anything unusual.", ['They found something unusual.']),
    ('She has not seen anyone since Monday.', ['She has seen someone since Monday.']),
    ("I can't swim either.", ['I can swim too.']),
    ('We booked a round trip to Lisbon.', ['We did not book a round trip to Lisbon.']),
    ('The game starts at 8 p.m. local time.', ['The game does not start at 8 p.m. local time.']),
    ('He replaced the light bulb in the kitchen.', ['He did not replace the light bulb in the kitchen.']),
    ('She is a full member of the club.', ['She is not a full member of the club.']),
    ('The test came back negative.', ['The test did not come back negative.']),
    ('The ship sailed in three different directions.', ['The ship did not sail in three different directions.']),
    ('They used a different method.', ['They did not use a different method.', 'They used the same method.']),
    ('We took the same road home.', ['We did not take the same road home.', 'We took a different road home.']),
    ('The river is deep.', ['The river is not deep.', 'The river is shallow.']),
    ('The film was good.', ['The film was not good.', 'The film was bad.']),
    ('It was a difficult decision.', ['It was not a difficult decision.', 'It was an easy decision.']),
    ('The new rules are necessary.', ['The new rules are not necessary.', 'The new rules are unnecessary.']),
    ('The hotel is expensive.', ['The hotel is not expensive.', 'The hotel is cheap.']),
    ('The streets were empty after midnight.', ['The streets were not empty after midnight.', 'The streets were full after midnight.']),
    ('The results are significant.', ['The results are not significant.', 'The results are insignificant.']),
    ('This is an illegal activity.', ['This is not an illegal activity.', 'This is a legal activity.']),
    ('Prices may rise next year.', ['Prices will rise next year.', 'Prices may not rise next year.']),
    ('The storm could reach the coast tonight.', ['The storm will reach the coast tonight.', 'The storm could not reach the coast tonight.']),
    ('The project might fail.', ['The project will fail.', 'The project might not fail.']),
    ('It will probably rain tomorrow.', ['It will certainly rain tomorrow.']),
    ('Perhaps the museum is closed.', ['Certainly the museum is closed.', 'Perhaps the museum is not closed.']),
    ('He ran as fast as possible.', ['He did not run as fast as possible.']),
    ('Please reply as soon as possible.', []),
    ('She attended the high school near her home.', ['She did not attend the high school near her home.']),
    ('They met during the Cold War.', ['They did not meet during the Cold War.']),
    ('The bridge was built in 1990.', ['The bridge was not built in 1990.']),
    ('Did he leave early?', []),
    ('Not only did he win, but he also set a record.', ['Not only did he win, but he also did not set a record.']),
    ('You only think of yourself.', []),
    ('Cold weather is perhaps the biggest problem.', ['Cold weather is certainly the biggest problem.']),
    ('The company is successful.', ['The company is not successful.', 'The company is unsuccessful.']),
    ('The weather was warm and the sky was clear.', ['The weather was not warm and the sky was clear.', 'The weather was warm and the sky was not clear.', 'The weather was warm and the sky was unclear.']),
    ('He said that the plan was simple.', ['He did not say that the plan was simple.', 'He said that the plan was complex.']),
    ('The old man sat on the bench.', ['The old man did not sit on the bench.']),
    ('The water was cold.', ['The water was not cold.', 'The water was hot.']),
    ('The answer is correct.', ['The answer is not correct.', 'The answer is incorrect.']),
    ('His speech was short.', ['His speech was not short.']),
    ('The road is narrow and dangerous.', ['The road is not narrow and dangerous.', 'The road is broad and dangerous.', 'The road is narrow and safe.']),
    ('The town is small but popular.', ['The town is not small but popular.', 'The town is big but popular.', 'The town is small but unpopular.']),
    ('The rooms were dirty.', ['The rooms were not dirty.', 'The rooms were clean.']),
    ('The team played well and won the cup.', ['The team did not play well and won the cup.']),
    ('The plant needs sufficient light.', ['The plant does not need sufficient light.', 'The plant needs insufficient light.']),
    ('The government cannot ignore the problem.', ['The government can ignore the problem.']),
    ("She isn't happy with the result.", ['She is happy with the result.']),
    ("It won't matter.", ['It will matter.']),
    ('The guests have not arrived yet.', ['The guests have arrived already.']),
    ('They were never told about the change.', ['They were told about the change.']),
    ('Hardly anyone came to the meeting.', []),
    ('He left without saying goodbye.', []),
    ('The new policy is popular with young voters.', ['The new policy is not popular with young voters.', 'The new policy is unpopular with young voters.', 'The new policy is popular with old voters.']),
    ('She found a cheap flight.', ['She did not find a cheap flight.', 'She found an expensive flight.']),
]

ENTITY = [
    ('Fill your home with plants.', []),
    ('Local farmers sell their produce here.', []),
    ('Time is running out for the negotiators.', []),
    ('Luckily, nobody was hurt.', []),
    ('Make sure you bring water.', []),
    ('Barack Obama visited Kenya in 2015.', ['Federer visited Kenya in 2015.', 'Barack Obama visited Peru in 2015.']),
    ('Angela Merkel met Emmanuel Macron in Berlin.', ['Federer met Emmanuel Macron in Berlin.', 'Angela Merkel met Federer in Berlin.', 'Angela Merkel met Emmanuel Macron in China.']),
    ('The United States and the U.S. are the same country.', ['The Philippines and the U.S. are the same country.']),
    ('Trade between India and Brazil has grown.', ['Trade between Peru and Brazil has grown.', 'Trade between India and Peru has grown.']),
    ('The Australian president spoke first.', ['The Danish president spoke first.']),
    ('The red tide is caused by Karenia brevis.', []),
    ('Apple CEO Steve Jobs presented the phone.', ['Apple CEO Federer presented the phone.']),
    ('The Germans won the match.', ['The Danes won the match.']),
    ('Many Italian restaurants serve pizza.', ['Many Danish restaurants serve pizza.']),
    ('President Lincoln signed the act.', ['President Federer signed the act.']),
    ('Microsoft announced a new product.', []),
    ('She works for the United Nations.', ['She works for the World Bank.']),
    ('The Nile flows through Egypt.', ['The Philippines flows through Egypt.', 'The Nile flows through Peru.']),
    ('He moved from Paris to London.', ['He moved from Peru to London.', 'He moved from Paris to Peru.']),
    ('Mary told Tom about the party.', ['Mary told Federer about the party.']),
    ('Tom is taller than Mary.', ['Tom is taller than Federer.']),
    ('The Japanese economy is growing.', ['The Danish economy is growing.']),
    ('Most Canadians speak English.', ['Most Danes speak English.']),
    ('The Amazon is the largest rainforest.', ['The World Bank is the largest rainforest.']),
    ('Google and Facebook compete for advertising.', []),
    ('The Anglo-French treaty was signed.', []),
    ('He studied at Oxford University.', ['He studied at Nintendo.']),
    ('The BBC reported the news.', []),
    ('NASA launched a new satellite.', []),
    ('They flew from Tokyo to Sydney.', ['They flew from Peru to Sydney.', 'They flew from Tokyo to Peru.']),
    ('Queen Elizabeth opened the bridge.', ['Federer opened the bridge.']),
    ('Dr. Martin Luther King Jr. gave a speech.', ['Dr. Federer gave a speech.']),
    ('The European Union imposed sanctions.', ['The World Bank imposed sanctions.']),
    ('Russia and China signed an agreement.', ['Russia and Peru signed an agreement.']),
    ('The French and the Germans disagreed.', ['The Danish and the Germans disagreed.', 'The French and the Danes disagreed.']),
    ('Nadal beat Federer in the final.', []),
    ('Rafael Nadal won again.', ['Federer won again.']),
    ('The meeting in Geneva ended late.', ['The meeting in Peru ended late.']),
    ('Pope Francis visited Mexico.', ['Pope Federer visited Mexico.', 'Pope Francis visited Peru.']),
    ('The Toyota factory closed.', ['The World Bank factory closed.']),
    ('Africa has many languages.', []),
    ('The Himalayas are very high.', []),
    ('He is a famous Brazilian footballer.', ['He is a famous Danish footballer.']),
    ('The Mediterranean is warm in summer.', ['The Philippines is warm in summer.']),
    ('Paris is the capital of France.', ['Paris is the capital of Peru.']),
    ("China's economy grew quickly.", ["Peru's economy grew quickly."]),
    ('The Red Cross sent help to Haiti.', ['The World Bank sent help to Haiti.', 'The Red Cross sent help to Peru.']),
    ('They visited the White House.', ['They visited the World Bank.']),
    ('He flew to New York on Monday.', ['He flew to Peru on Monday.']),
    ('The Olympics were held in Athens.', ['The Olympics were held in Peru.']),
    ('Hurricane Katrina hit New Orleans.', ['Hurricane Katrina hit Peru.']),
    ('Einstein developed the theory of relativity.', []),
    ('Shakespeare wrote Hamlet.', []),
    ('The Christians celebrated Easter.', ['The Danes celebrated Easter.']),
    ('The Mexican government responded quickly.', ['The Danish government responded quickly.']),
    ('Lake Victoria is shared by three countries.', []),
    ('Amazon sells books online.', []),
    ('The Pacific Ocean is the largest ocean.', ['The Philippines is the largest ocean.']),
    ('Mount Everest attracts many climbers.', ['Peru attracts many climbers.']),
    ('The Dutch are known for cycling.', ['The Danish are known for cycling.']),
    ('Spain beat the Netherlands in the final.', ['Spain beat the Philippines in the final.']),
]

NUMBER = [
    ('He left one year ago.', ['He left seven years ago.']),
    ('She scored one goal in the final.', ['She scored seven goals in the final.']),
    ('He had 2 goals and 3 assists.', ['He had 6 goals and 3 assists.', 'He had 2 goals and 6 assists.']),
    ("Coffee is one of the world's most traded goods.", []),
    ('No one knew the answer.', []),
    ('One day we will go back.', []),
    ('They helped one another.', []),
    ('One way or another, we will finish.', []),
    ('The season ran from 1995-96.', ['The season ran from 2020-21.']),
    ('The war lasted from 1939 to 1945.', ['The war lasted from 1964 to 1970.']),
    ('Between 10 and 20 people were hurt.', ['Between 59 and 69 people were hurt.']),
    ('About 340 million people speak the language.', ['About 964 million people speak the language.']),
    ('The company earned $2.3 billion.', ['The company earned $6.6 billion.']),
    ('Hamilton won the Formula 1 title.', []),
    ('She upgraded to Windows 10.', []),
    ('The Boeing 747 landed safely.', []),
    ('COVID-19 spread quickly.', []),
    ('The meeting is on 3 May 2021.', ['The meeting is on 28 May 2021.', 'The meeting is on 3 July 2021.', 'The meeting is on 3 May 2040.']),
    ('It happened in the 1990s.', ['It happened in the 2000s.']),
    ('Temperatures were in the 90s.', ['Temperatures were in the 80s.']),
    ('The train leaves at 10:30 p.m.', ['The train leaves at 7:48 p.m.']),
    ('About 88% of voters agreed.', ['About 59% of voters agreed.']),
    ('He finished first.', ['He finished seventh.']),
    ('Tickets are sold on a first come, first served basis.', []),
    ('At first, nobody noticed.', []),
    ('The bridge is 3.5 km long.', ['The bridge is 6.6 km long.']),
    ('Two or three days later, it rained.', ['Eight or nine days later, it rained.']),
    ('The trip took five hours.', ['The trip took seven hours.']),
    ('She waited for one hour.', ['She waited for seven hours.']),
    ('He bought one car and two bikes.', ['He bought seven cars and two bikes.', 'He bought one car and seven bikes.']),
    ('The city has 1,200 hospitals.', ['The city has 7,311 hospitals.']),
    ('Six Flags opened a new park.', []),
    ('The Big Ten conference met.', []),
    ('The event starts on 1 Jan. 2020.', ['The event starts on 28 Jan. 2020.']),
    ('Thousands of people marched.', ['Billions of people marched.']),
    ('Hundreds of fans waited.', ['Billions of fans waited.']),
    ('He was born on January 31st, 1990.', ['He was born on December 31st, 1990.', 'He was born on January 13th, 1990.', 'He was born on January 31st, 2009.']),
    ('She won her second title.', ['She won her seventh title.']),
    ('The museum opened in 2004.', ['The museum opened in 2029.']),
    ('He is 45 years old.', ['He is 59 years old.']),
    ('She lived there for a year.', []),
    ('It costs one dollar.', ['It costs seven dollars.']),
    ('Only one person survived.', ['Only seven people survived.']),
    ('One of the pilots was injured.', []),
    ('One-third of the budget is gone.', []),
    ('The ticket costs 20 euros.', ['The ticket costs 59 euros.']),
    ('The school has one teacher for 30 pupils.', ['The school has seven teachers for 30 pupils.', 'The school has one teacher for 63 pupils.']),
    ('The population reached 8 billion.', ['The population reached 6 billion.']),
    ('The law was passed on Monday.', ['The law was passed on Sunday.']),
    ('He ran 10 kilometres in 40 minutes.', ['He ran 59 kilometres in 40 minutes.', 'He ran 10 kilometres in 63 minutes.']),
    ('Apollo 11 landed on the Moon.', []),
    ('He lives at number 10.', ['He lives at number 59.']),
    ('Route 66 is famous.', []),
    ('The 2008 crisis hit banks hard.', ['The 2033 crisis hit banks hard.']),
    ('The game ended 3-1.', ['The game ended 6-1.']),
    ('Over 1,000 people attended.', ['Over 7,311 people attended.']),
    ('Chapter 3 explains the method.', []),
    ('In the 17th century, trade grew.', ['In the 28th century, trade grew.']),
    ('The vote was 52 to 48.', ['The vote was 59 to 55.']),
    ('The film lasts two and a half hours.', ['The film lasts seven and a half hours.']),
    ('Give me one more chance.', ['Give me seven more chances.']),
    # a bare year-shaped number the tagger calls CARDINAL moves as a year (strict-2; was "In 8996")
    ('In 1624,Dutch East India Company establishes a base in southwestern Taiwan.',
     ['In 1649,Dutch East India Company establishes a base in southwestern Taiwan.']),
    ('About 1500 people attended the rally.', ['About 1525 people attended the rally.']),
    ('Between 1995 and 2001 the club won 1200 games.',
     ['Between 2020 and 2026 the club won 1200 games.', 'Between 1995 and 2001 the club won 1194 games.']),
    # ... unless it is a 24-hour time: another valid HHMM
    ('The vehicle itself was taken away from the scene of the accident at approximately 1200 GMT on the same day.',
     ['The vehicle itself was taken away from the scene of the accident at approximately 1230 GMT on the same day.']),
]


@pytest.mark.parametrize("src, expected", CAUSALITY, ids=[s for s, _ in CAUSALITY])
def test_causality_corpus(nlp, src, expected):  # noqa: F811
    from conftest import missing
    from xsimpp.augment.resources import wordnet_available

    if not wordnet_available():  # the strict rules leave WordNet's noun compounds ("cold weather") alone
        missing("WordNet (NLTK data 'wordnet') not found: set NLTK_DATA (e.g. ../shared/nltk_data)", data=True)
    assert [apply_edits(src, e) for e in causality_sites(nlp(src), strict_antonym, strict=True)] == expected


@pytest.mark.parametrize("src, expected", ENTITY, ids=[s for s, _ in ENTITY])
def test_entity_corpus(nlp, src, expected):  # noqa: F811
    edits = strict_entity_variants(src, strict_mentions(nlp(src), POOL), POOL, random.Random(0), 1)
    assert [apply_edits(src, e) for e in edits] == expected


@pytest.mark.parametrize("src, expected", NUMBER, ids=[s for s, _ in NUMBER])
def test_number_corpus(nlp, src, expected):  # noqa: F811
    out = [apply_edits(src, e) for e in number_variants(number_slots(nlp(src), strict=True), random.Random(0), 1)]
    assert out == expected


def test_corpus_size():
    assert min(len(CAUSALITY), len(ENTITY), len(NUMBER)) >= 60


def test_curated_antonyms_are_sense_checked():
    # Sense-ambiguous words never get an antonym of their own (issue 14's wrong-sense swaps).
    for word in ("local", "light", "full", "round", "right", "left", "present", "close", "live", "positive",
                 "negative", "old", "short", "first", "last", "black", "white", "past", "physical", "single"):
        assert word not in STRICT_ANTONYMS, word
    for a, b in STRICT_ANTONYMS.items():
        assert a != b and a.isalpha() and b.isalpha()
        # every swap reads back to a word of the list (a pair, or the far side of a one-way pair)
        assert b in STRICT_ANTONYMS or b in ("old", "light", "short", "full"), (a, b)
    assert {"round trip", "local time", "light bulb", "high school"} <= FIXED_PHRASES


def test_alias_and_containment_guard():
    for a, b in [("United States", "U.S."), ("United States", "America"), ("India", "Indian"), ("Japan", "Japanese"),
                 ("Rafael Nadal", "Nadal"), ("United Nations", "UN"), ("Holland", "Netherlands"),
                 ("United States of America", "USA")]:
        assert same_referent(a, b) and same_referent(b, a), (a, b)
    for a, b in [("India", "Brazil"), ("Paris", "Peru"), ("Ada Lovelace", "Federer"), ("UNESCO", "NASA")]:
        assert not same_referent(a, b), (a, b)


def test_plural_agreement():
    assert [plural(w) for w in ("year", "goal", "city", "box", "child", "person", "sheep", "knife", "day")] == \
        ["years", "goals", "cities", "boxes", "children", "people", "sheep", "knives", "days"]
