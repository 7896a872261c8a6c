"""Small English word tables: antonyms (fallback when WordNet is absent) and verb inflection.

Written for xsimpp; kept deliberately small and explicit so that what is measured is auditable.
"""

from __future__ import annotations

import functools

# Adjective antonym pairs; the table is made symmetric below. Only pairs whose swap flips the
# meaning in (almost) every context: gradable opposites and complementary pairs.
_ANTONYM_PAIRS = """
able unable; absent present; active inactive; alive dead; ancient modern; angry calm; asleep awake;
bad good; beautiful ugly; big small; bitter sweet; black white; bright dark; broad narrow;
busy idle; cheap expensive; clean dirty; clear unclear; clever stupid; close distant; closed open;
cold hot; common rare; complete incomplete; complex simple; correct incorrect; cruel kind;
current former; dangerous safe; deep shallow; difficult easy; domestic foreign; dry wet; early late;
east west; empty full; equal unequal; false true; famous unknown; fast slow; fat thin; female male;
few many; final initial; first last; formal informal; fresh stale; friendly hostile; happy sad;
hard soft; healthy sick; heavy light; high low; honest dishonest; huge tiny; illegal legal;
important unimportant; impossible possible; inner outer; innocent guilty; internal external;
large small; lazy diligent; left right; likely unlikely; long short; loose tight; loud quiet;
lower upper; major minor; maximum minimum; natural artificial; necessary unnecessary;
negative positive; new old; noisy silent; normal abnormal; north south; official unofficial;
older younger; online offline; optimistic pessimistic; past future; peaceful violent; permanent temporary;
physical mental; polite rude; poor rich; popular unpopular; powerful weak; private public;
professional amateur; proper improper; proud ashamed; pure impure; regular irregular;
relevant irrelevant; responsible irresponsible; rural urban; secure insecure; senior junior;
serious trivial; significant insignificant; similar different; single multiple; smooth rough;
stable unstable; strong weak; successful unsuccessful; sufficient insufficient; superior inferior;
thick thin; upstairs downstairs; useful useless; valid invalid; visible invisible; warm cool;
wealthy poor; wide narrow; wise foolish; young old; wrong right; local global; live recorded;
northern southern; eastern western; ordinary extraordinary; maximal minimal; severe mild
"""


def _symmetric(pairs: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for pair in pairs.replace("\n", " ").split(";"):
        words = pair.split()
        if not words:
            continue
        a, b = words
        # First listed pair wins, so e.g. "old" maps to "new" (listed before "young old").
        table.setdefault(a, b)
        table.setdefault(b, a)
    return table


BUILTIN_ANTONYMS: dict[str, str] = _symmetric(_ANTONYM_PAIRS)

# Strict style: adjective pairs whose swap flips the meaning in the adjective's main sense, checked
# one by one (tests/test_augment_strict.py pins the list). Left out on purpose: words whose common
# senses disagree ("light" bulb / weight, "right" side / correct, "present" day / here, "close"
# friend / shut, "local" time, "full" member, "live" show, "positive" test, "old" friend / man,
# "first"/"last", "black"/"white", "past"/"future", "physical"/"mental", "single").
_STRICT_PAIRS = """
able unable; active inactive; alive dead; ancient modern; asleep awake; bad good; beautiful ugly;
big small; bitter sweet; broad narrow; cheap expensive; clean dirty; clear unclear; cold hot;
common rare; complete incomplete; complex simple; correct incorrect; cruel kind; dangerous safe;
deep shallow; difficult easy; dry wet; early late; empty full; equal unequal; false true;
famous unknown; fast slow; friendly hostile; happy sad; healthy sick; heavy light; honest dishonest;
huge tiny; illegal legal; important unimportant; impossible possible; innocent guilty; large small;
likely unlikely; long short; loud quiet; major minor; maximum minimum; necessary unnecessary;
noisy silent; optimistic pessimistic; peaceful violent; permanent temporary; polite rude; poor rich;
popular unpopular; powerful weak; private public; proud ashamed; rural urban; safe dangerous;
secure insecure; significant insignificant; similar different; smooth rough; stable unstable;
strong weak; successful unsuccessful; sufficient insufficient; thick thin; useful useless;
valid invalid; visible invisible; wealthy poor; wide narrow; wise foolish; young old; cheaper dearer;
increasing decreasing; higher lower; larger smaller; easier harder; better worse; more less;
northern southern; eastern western; hard easy; high low; short tall; wrong correct;
same different
"""

# Adjective + noun phrases whose adjective is not a property to negate ("round trip" is no trip that
# is round). WordNet's noun compounds ("local_time", "high_school") are refused as well when
# WordNet is present (xsimpp.augment.wordnet.noun_compound).
FIXED_PHRASES = frozenset("""
round trip; local time; light bulb; full moon; high school; high court; old man; old woman;
short story; hot dog; black market; real estate; public school; private sector; public sector;
main road; good faith; new year; big bang; cold war; free trade; open source; small business;
good morning; good night; high tide; low tide; high street; big data; small talk; long run;
short term; long term; high speed; low cost; full time; part time; early years; late night;
hard drive; soft drink; hard copy; dry season; wet season; hot spring; deep sea; high seas;
major league; minor league; common law; common sense; public health; private school; strong suit;
heavy metal; light year; high jump; long jump; simple past; true story; young adult; late afternoon;
early morning; rare earth; big toe; fast food; slow motion; safe haven; good luck; bad luck;
wide range; broad range; vast majority; great deal; full stop; empty nest; rich text
""".replace("\n", " ").split(";")) - {""}
FIXED_PHRASES = frozenset(" ".join(p.split()) for p in FIXED_PHRASES)


# Listed as the far side of a pair only: their own swap depends on the sense ("old" friend -> new,
# "old" man -> young; "light" weight / colour; "short" film / person; "full" member).
_ONE_WAY = {"old", "light", "short", "full"}
STRICT_ANTONYMS: dict[str, str] = {a: b for a, b in _symmetric(_STRICT_PAIRS).items() if a not in _ONE_WAY}

# Past tense of irregular verbs (needed for "did not go" -> "went"). Regular verbs use rules.
_IRREGULAR_PAST = """
arise arose; awake awoke; be was; bear bore; beat beat; become became; begin began; bend bent;
bet bet; bind bound; bite bit; bleed bled; blow blew; break broke; breed bred; bring brought;
build built; burn burned; burst burst; buy bought; cast cast; catch caught; choose chose;
cling clung; come came; cost cost; creep crept; cut cut; deal dealt; dig dug; do did; draw drew;
dream dreamed; drink drank; drive drove; eat ate; fall fell; feed fed; feel felt; fight fought;
find found; flee fled; fling flung; fly flew; forbid forbade; forecast forecast; forget forgot;
forgive forgave; freeze froze; get got; give gave; go went; grind ground; grow grew; hang hung;
have had; hear heard; hide hid; hit hit; hold held; hurt hurt; keep kept; kneel knelt; know knew;
lay laid; lead led; lean leaned; leave left; lend lent; let let; lie lay; light lit; lose lost;
make made; mean meant; meet met; mislead misled; overcome overcame; pay paid; put put; quit quit;
read read; ride rode; ring rang; rise rose; run ran; say said; see saw; seek sought; sell sold;
send sent; set set; shake shook; shed shed; shine shone; shoot shot; show showed; shrink shrank;
shut shut; sing sang; sink sank; sit sat; sleep slept; slide slid; speak spoke; speed sped;
spend spent; spin spun; split split; spread spread; spring sprang; stand stood; steal stole;
stick stuck; sting stung; stink stank; strike struck; strive strove; swear swore; sweep swept;
swim swam; swing swung; take took; teach taught; tear tore; tell told; think thought; throw threw;
understand understood; undertake undertook; upset upset; wake woke; wear wore; weave wove; weep wept;
win won; wind wound; withdraw withdrew; write wrote; undergo underwent; withstand withstood;
outnumber outnumbered; broadcast broadcast; forsee foresaw; foresee foresaw; uphold upheld
"""
IRREGULAR_PAST: dict[str, str] = dict(p.split() for p in _IRREGULAR_PAST.replace("\n", " ").split(";") if p.strip())

_VOWELS = set("aeiou")


def _doubles_final_consonant(verb: str) -> bool:
    """stop -> stopped, plan -> planned; but visit -> visited, fix -> fixed, play -> played.

    English doubles a final consonant after a single stressed vowel; without stress data we only
    double in one-syllable consonant-vowel-consonant verbs, which covers the common cases.
    """
    if len(verb) < 3 or verb[-1] in "wxy" or verb[-1] in _VOWELS:
        return False
    c1, v, c2 = verb[-3], verb[-2], verb[-1]
    if not (c1 not in _VOWELS and v in _VOWELS and c2 not in _VOWELS):
        return False
    return sum(ch in _VOWELS for ch in verb) == 1


@functools.lru_cache(maxsize=4096)
def past_tense(lemma: str) -> str:
    if lemma in IRREGULAR_PAST:
        return IRREGULAR_PAST[lemma]
    if lemma.endswith("e"):
        return lemma + "d"
    if lemma.endswith("y") and len(lemma) > 1 and lemma[-2] not in _VOWELS:
        return lemma[:-1] + "ied"
    if _doubles_final_consonant(lemma):
        return lemma + lemma[-1] + "ed"
    return lemma + "ed"


@functools.lru_cache(maxsize=4096)
def third_person(lemma: str) -> str:
    special = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if lemma in special:
        return special[lemma]
    if lemma.endswith(("s", "x", "z", "ch", "sh", "o")):
        return lemma + "es"
    if lemma.endswith("y") and len(lemma) > 1 and lemma[-2] not in _VOWELS:
        return lemma[:-1] + "ies"
    return lemma + "s"


def indefinite_article(word: str) -> str:
    """'a' or 'an' for the word that follows (spelling heuristic with the usual exceptions)."""
    w = word.lower()
    if w.startswith(("hour", "honest", "honor", "honour", "heir")):
        return "an"
    if w.startswith(("uni", "use", "usu", "one", "once", "eu", "ure", "uti")):
        return "a"
    return "an" if w[:1] in _VOWELS else "a"


def match_case(new: str, old: str) -> str:
    """Give `new` the capitalisation pattern of `old` (lower, Capitalised or UPPER)."""
    if old.isupper() and len(old) > 1:
        return new.upper()
    if old[:1].isupper():
        return new[:1].upper() + new[1:]
    return new
