"""Handles and cards by their label: a username, a membership level, a card named by its last digits.

"my username is rkowalski77", "Benutzername: jbecker_91", "I'm a gold member", "membership level:
Platinum", "my card ending 4821", "la carte qui finit par 3390", "last four digits of my visa are
7710". Codes with a digit after a label (a customer id, a membership or ticket number) are read by
the extractor's labelled codes (:mod:`appliance.facts.entities`); a bare reply to a request for one
of these is read in :mod:`appliance.facts.slots` with :func:`username_at` and :func:`level_at`.

A value's shape is checked: a username is one token of letters, digits and ``._-`` that is not a
common word; a level is one or two words; a card's last digits are two to six digits. The words of
each language are in its lexicon (:mod:`appliance.lexicon`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from appliance.lexicon import LEXICONS, Lexicon, either
from appliance.lexicon.text import fold

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

_USERNAME = r"(?P<value>[^\W_][\w.\-]{1,31}[^\W_]|[^\W_]{3})"
_VERB = r"(?:\s*(?P<verb>(?:is|ist|lautet|est|es)(?!\w)|[:=]))?\s*['\"“]?"
# What the username is of, before its verb: "username on the portal is j.okafor_88".
_OF = (
    r"(?:\s+(?:"
    + either(lambda lex: lex.entities.qualifiers)
    + r")\s+(?:[^\W\d_]+\s+){0,2}?[^\W\d_]+(?=\s+(?:is|ist|lautet|est|es)\s))?"
)
_USERNAME_LABEL = re.compile(
    r"(?i)(?<![\w-])(?:"
    + either(lambda lex: lex.entities.username_labels)
    + r")"
    + _OF
    + _VERB
    + _USERNAME
    + r"(?![\w@])"
)
_ASKED = re.compile(r"[^\S\n]*\?")
_LEVEL_LABEL = re.compile(
    r"(?i)(?<![\w-])(?:"
    + either(lambda lex: lex.entities.level_labels)
    + r")"
    + _VERB
    + r"(?P<value>[^\W\d_]{2,20}(?:\s+(?:plus|\+|elite|premier))?)(?!\w)"
)


def _level_nouns(lex: Lexicon) -> re.Pattern[str]:
    """A level next to a word of membership, in either order ("premium tier", "Platin-Mitglied",
    "socio oro", "Gold-abonnement"), in one word where the language joins nouns ("Goldkunde")."""
    levels, nouns = "|".join(lex.entities.levels), "|".join(lex.entities.level_nouns)
    levels = rf"(?:{levels})(?:\s+(?:plus|\+))?"  # "Gold Plus member"
    join = r"[\s-]?" if lex.compounding else r"[\s-]+"
    return re.compile(
        rf"(?i)(?<![\w-])(?:(?P<before>{levels}){join}(?:{nouns})|(?:{nouns}){join}(?P<after>{levels}))(?![\w-])"
    )


# Each language's levels with its own nouns: "or" is a level in French, a conjunction in English.
_LEVEL_NOUNS = tuple(_level_nouns(lex) for lex in LEXICONS.values() if lex.entities.levels and lex.entities.level_nouns)
# A cheap test first: no level without one of these nouns (as plain text: "cliente?" is "client").
_LEVEL_HINTS = tuple(
    {re.sub(r".\?", "", noun) for lex in LEXICONS.values() if lex.entities.levels for noun in lex.entities.level_nouns}
)
_CARD_WORD = r"(?:" + either(lambda lex: lex.entities.card_words) + r")"
# "card ending 4821", "Karte mit der Endung 4821", "the card that ends in 0937": a few words may stand
# between the card word and the tail ("my Visa debit ending in 7710").
_CARD_TAIL = re.compile(
    r"(?i)(?<!\w)"
    + _CARD_WORD
    + r"s?(?:[\s,]+[^\W\d_]+){0,2}?\s*[,(]?\s*(?:"
    + either(lambda lex: lex.entities.card_tails)
    + r")\s*:?\s*(?P<value>\d{2,6})(?!\w|[.,]\d)"
)
_CARD_LAST = re.compile(
    r"(?i)(?<!\w)(?:" + either(lambda lex: lex.entities.card_last) + r")\s*(?P<value>\d{2,6})(?!\w|[.,]\d)"
)
# German and Dutch put the verb of ending after the digits: "die visa, die auf 1358 endet".
_CARD_ENDS = re.compile(
    r"(?i)(?<!\w)"
    + _CARD_WORD
    + r"(?:[\s,]+[^\W\d_]+){0,3}?[\s,]+(?:"
    + (either(lambda lex: lex.entities.card_ends_before) or "(?!)")
    + r")\s+(?P<value>\d{2,6})\s+(?:"
    + (either(lambda lex: lex.entities.card_ends) or "(?!)")
    + r")(?!\w)"
)
# The last digits without a card word ("the one that ends with 0077"): a card's where the agent
# asked about a card (:func:`tail_at`).
_TAIL = re.compile(
    r"(?i)(?<!\w)(?:(?:"
    + either(lambda lex: lex.entities.card_tails)
    + r")\s*:?\s*(?P<value>\d{2,6})|(?:"
    + (either(lambda lex: lex.entities.card_ends_before) or "(?!)")
    + r")\s+(?P<value2>\d{2,6})\s+(?:"
    + (either(lambda lex: lex.entities.card_ends) or "(?!)")
    + r"))(?!\w|[.,]\d)"
)
_ANY_DIGIT = re.compile(r"\d")

# Words that are no username or level: every lexicon's common words and fillers.
COMMON = frozenset(fold(w) for lex in LEXICONS.values() for w in (*lex.names.common_words, *lex.names.not_names))


def find(text: str, add: Add) -> None:
    """``add(kind, start, end, norm)`` for each labelled username and level and each card's last digits."""
    if _ANY_DIGIT.search(text):
        for pattern in (_CARD_LAST, _CARD_TAIL, _CARD_ENDS):
            for m in pattern.finditer(text):
                add("card", m.start("value"), m.end("value"), m["value"])
    for m in _USERNAME_LABEL.finditer(text):
        # without "is" or ":" a word after the label says something of it ("login failed"), unless it
        # ends a question about it ("Is your username kmiller?")
        if username(m["value"]) and (m["verb"] or not m["value"].isalpha() or _ASKED.match(text, m.end())):
            add("username", m.start("value"), m.end("value"), m["value"].casefold())
    for m in _LEVEL_LABEL.finditer(text):
        if m["verb"] and fold(m["value"].split()[0]) not in COMMON:
            add("member_level", m.start("value"), m.end("value"), fold(m["value"]))
    folded = text.casefold()
    for pattern in _LEVEL_NOUNS if any(h in folded for h in _LEVEL_HINTS) else ():
        for m in pattern.finditer(text):
            group = "before" if m["before"] else "after"
            add("member_level", m.start(group), m.end(group), fold(m[group]))


def tails(text: str) -> list[tuple[int, int]]:
    """The spans of last digits named without a card word ("the one that ends with 0077", "celle qui
    se termine par 9034"): a card's, or an account's, where the agent asked for one."""
    return [(m.start(g), m.end(g)) for m in _TAIL.finditer(text) for g in ("value", "value2") if m[g]]


def username(value: str) -> bool:
    """Whether ``value`` has a username's shape: one token, not a common word nor a label's ("What's
    your login username?"), not all digits."""
    return (
        3 <= len(value) <= 32
        and fold(value) not in COMMON
        and not value.isdigit()
        and " " not in value
        and not _LABEL_WORD.fullmatch(value)
    )


_LABEL_WORD = re.compile(r"(?i)(?:" + either(lambda lex: lex.entities.username_labels) + r")")


_TOKEN = re.compile(r"[^\s,;!?]+")


def username_at(text: str, pos: int) -> tuple[int, int] | None:
    """The span of a username given bare at ``pos`` ("sure.  it's rkowalski77" after the lead)."""
    m = _TOKEN.match(text, pos)
    if m is None:
        return None
    value = m.group().rstrip(".")
    return (m.start(), m.start() + len(value)) if value and username(value) and "@" not in value else None


_LEVEL_WORDS = re.compile(r"[^\W\d_]{2,20}(?:\s+(?:plus|elite|premier))?")


def level_at(text: str, pos: int) -> tuple[int, int] | None:
    """The span of a membership level given bare at ``pos`` ("gold", "It's Platinum.")."""
    m = _LEVEL_WORDS.match(text, pos)
    if m is None or fold(m.group().split()[0]) in COMMON:
        return None
    rest = text[m.end() :].strip(" .!,;")
    return (m.start(), m.end()) if len(rest.split()) <= 3 else None
