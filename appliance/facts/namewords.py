"""The words that are no one's name, and the shape of a name's word: what every name finder of
:mod:`appliance.facts.names` tests a word against, from every lexicon.

A name's word is letters with the apostrophes and hyphens inside names ("O'Connor", "Jean-Luc");
particles ("van der", "de la", "El") need no capital. What rules a word out is a list of the words
that start sentences, greetings, weekdays, months, the words of places and products, the common
words of each language (where case cannot tell a name), the words that correct or deny, and the
words of identifiers ("Kundennummer", "Client ID"), never a list of given names or surnames.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from appliance.facts.text import MONTHS, WEEKDAYS, capitalised
from appliance.lexicon import LEXICONS, Names, either
from appliance.lexicon.text import fold

NAME_WORD = r"[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*"
PARTICLES = frozenset(p for lexicon in LEXICONS.values() for p in lexicon.names.particles)
# A word of a name, or a particle written with an apostrophe ("van 't Hek").
NAME_TOKEN = "|".join(
    [*(re.escape(p) for p in sorted(PARTICLES, key=len, reverse=True) if not re.fullmatch(NAME_WORD, p)), NAME_WORD]
)
# Titles before a name, with their case ("Mr", "Frau"), as a pattern.
TITLES = r"(?:" + either(lambda lexicon: lexicon.names.titles) + r")"
# The words that close a message before a signature ("regards", "viele Grüße"): no one's name.
SIGN_OFF_WORD = re.compile(r"(?i)(?:" + either(lambda lexicon: lexicon.names.sign_offs) + r")(?!\w)")


def _words(pick: Callable[[Names], tuple[str, ...]]) -> frozenset[str]:
    return frozenset(w for lexicon in LEXICONS.values() for w in pick(lexicon.names))


# Words that follow "I'm", "this is", "thanks," without being a name.
NOT_NAMES = _words(lambda n: n.not_names)
# Later words of a name may be short words of another language ("Nguyen Van An"), but not these.
NOT_NAMES_AFTER = _words(lambda n: n.not_names_after)
SENTENCE_STARTS = _words(lambda n: n.sentence_starts)
# Capitalised words that are no one's name where a name is expected without a cue: replies and
# fillers, words of time, and the words that make a run of capitals a place, a firm or a product.
# The words of a name's parts ("surname", "Vorname") are among them: "Vorname Jörg" is no full name.
NOT_BARE = frozenset(fold(w) for w in _words(lambda n: n.not_bare)) | frozenset(
    fold(w) for w in _words(lambda n: n.part_labels) if re.fullmatch(r"[^\W\d_]+", w)
)

# The words of identifiers are no one's name: labels and their compounds ("Kunden", "Handynummer",
# "Rechnung Nr", "Client ID").
_ENTITIES = [lexicon.entities for lexicon in LEXICONS.values()]
_COMPOUNDS = "|".join(p for e in _ENTITIES for p in e.compounds) or "(?!)"
IDENTIFIER_WORD = re.compile(
    r"(?i)(?:(?:"
    + "|".join(p for e in _ENTITIES for words in e.labels.values() for p in words)
    + r")(?:"
    + _COMPOUNDS
    + r")?|[^\W\d_]*(?:"
    + _COMPOUNDS
    + r"))(?:s|e|n|en|es|x)?|(?:"
    + "|".join(p for e in _ENTITIES for p in e.number_words)
    + r")"
)

# Where case cannot tell a name, the lexicons' common words end it or rule it out.
COMMON = frozenset(fold(w) for w in _words(lambda n: n.common_words))
NOT_SIGNED = NOT_BARE | frozenset(fold(w) for w in NOT_NAMES | NOT_NAMES_AFTER | SENTENCE_STARTS)
# A word that corrects or denies ("sorry", "perdón", "nee") is no name in any case.
_CORRECTING = frozenset(
    fold(p)
    for lexicon in LEXICONS.values()
    for p in (*lexicon.ledger.corrections, *lexicon.ledger.denials)
    if re.fullmatch(r"[^\W\d_]+", p)
)
# Words of number ("two", "zwei", "twee") are no one's name either: "voor twee personen".
_COUNTS = frozenset(fold(w) for lexicon in LEXICONS.values() for w in lexicon.entities.counts if w.isalpha())
NEVER_LOWER = COMMON | NOT_SIGNED | _CORRECTING | _COUNTS
# The same words with their accents, as the lexicons write them.
_WRITTEN = frozenset(
    w.casefold()
    for lexicon in LEXICONS.values()
    for pick in (
        lambda n: n.common_words,
        lambda n: n.not_bare,
        lambda n: n.not_names,
        lambda n: n.not_names_after,
        lambda n: n.sentence_starts,
        lambda n: n.part_labels,
    )
    for w in pick(lexicon.names)
) | frozenset(
    p.casefold() for lexicon in LEXICONS.values() for p in (*lexicon.ledger.corrections, *lexicon.ledger.denials)
)


def common(word: str, words: frozenset[str] = NEVER_LOWER) -> bool:
    """Whether ``word`` is one of ``words`` (folded: :data:`NEVER_LOWER` unless given), no name where
    case cannot tell one. A word written with accents that the common word lacks is another word
    ("văn" of "nguyễn văn an" is not Dutch "van"); one typed without the accents of a common word is
    that word ("esta" for "está")."""
    folded = fold(word)
    return folded in words and (folded == word.casefold() or word.casefold() in _WRITTEN)


# Where case cannot tell a name, no name starts with a form of a verb or an adverb ("I AM MOVING HOUSE").
WORD_FORM = re.compile(r"(?i)(?:" + either(lambda lexicon: lexicon.names.word_forms) + r")")


# A short lower-case prefix joined to a name's part: "al-Sayed", "d'Arcy", "el-Amin".
_PREFIXED = re.compile(r"[^\W\d_]{1,3}[-'’](?=[^\W\d_])")


# Words that close a name given without a cue: thanks and please ("Grace Hopper thanks").
_CLOSING = re.compile(r"(?i)(?:" + either(lambda lexicon: lexicon.names.after) + r")")


def upper(word: str) -> bool:
    """Whether a word of a name is written capitalised: its first letter, or after a short lower-case
    prefix the part it joins ("al-Sayed", "d'Arcy"), in any script (:func:`capitalised`)."""
    prefix = _PREFIXED.match(word)
    return capitalised(word) or (prefix is not None and capitalised(word[prefix.end() :]))


def caseless(word: str, text: str) -> bool:
    """Whether case says nothing of ``word``: written in lower case, or in a text all in capitals."""
    return not upper(word) or (word.isupper() and text == text.upper())


def bare_word_ok(word: str, first: bool, asked: bool = False) -> bool:
    """Whether a capitalised ``word`` may be part of a name given without a cue (``first``: opening
    it); ``asked``: where a name was asked for, a weekday's or a month's word may be one ("Marta
    Lunes"), and a place's after the first ("Sydney Park")."""
    folded = fold(word)
    if (
        (folded in NOT_BARE and not (asked and not first and not _CLOSING.fullmatch(word)))
        or (folded in WEEKDAYS and not asked)
        or word.casefold() in NOT_NAMES_AFTER
        or IDENTIFIER_WORD.fullmatch(word)
    ):
        return False
    if first and (word.casefold() in NOT_NAMES or word in SENTENCE_STARTS or (month(word) and not asked)):
        return False
    # all capitals of more than 3 letters is shouting or an acronym ("HELP", "ASAP"), not a name
    return not (word.isupper() and len(word) > 3)


def sentence_start_word(word: str) -> bool:
    """Whether ``word`` alone after a cue is a sentence's start or a day, not a name ("I'm Sorry")."""
    return word in SENTENCE_STARTS or word.casefold() in WEEKDAYS or month(word)


def dated(word: str) -> bool:
    """Whether ``word`` is a weekday's or a month's name ("Lunes", "April") in a lexicon."""
    return fold(word) in WEEKDAYS or month(word)


def month(word: str) -> bool:
    """Whether ``word`` is a month's name. A short form ("Jan", "Jun") is one only next to a day,
    where a name never stands: alone it may be a name ("Jan de Vries")."""
    folded = fold(word)
    return len(folded) > 3 and folded in MONTHS


def han(word: str) -> bool:
    """Whether ``word`` is written in Chinese or Japanese characters."""
    return bool(word) and all(unicodedata.name(c, "").startswith("CJK") for c in word if c.isalpha())


def han_cut(name: str) -> int:
    """Chinese and Japanese write no space after a name: keep at most four characters of one."""
    return min(len(name), 4) if han(name) else len(name)
