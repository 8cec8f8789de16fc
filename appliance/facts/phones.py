"""Phone numbers in the common national and international formats, anywhere in a message.

E.164 and ``00`` prefixes ("+44 20 7946 0958", "0049 30 1234567"), a trunk 0 (UK "01223 842725",
German "030 1234567" or "0151/23456789", French "06 12 34 56 78", Dutch "06-12345678"), NANP with
parentheses, spaces, dots or dashes ("(415) 555-0199", "415.555.0142", "1-800-555-0199"), and
Spanish numbers, which have no trunk prefix ("612 345 678", "91 123 45 67"). A run of digits in no
such shape is a phone only after a phone word ("call me on 5551234567") or before one ("5551234567
is my cell").

Tested patterns rather than the ``phonenumbers`` library: its matcher costs milliseconds per text
and region on the checker's per-answer path, must guess the region of a national number, and its
validity data rejects the reserved ranges that fictional and test numbers use ("555-0199",
"07700 900123"), which a kiosk's customers and its test sessions type all the same. Dates, amounts
and labelled codes are extracted before phones, so "12.03.2024", "1,234.50" and "order 48213377"
never become one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from appliance.facts.text import digits
from appliance.lexicon import LEXICONS, either
from appliance.lexicon.text import fold

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

# Possessive groups: a long run of digits must not make the engine try every way to split it.
_PHONE = re.compile(
    r"(?<![\w+@.,/:-])(?P<num>(?:\+|00)?(?:\(\d{1,5}\)\s?)?\d++"
    r"(?:(?: ?[-–] ?|[ .\u00a0/])(?:\(\d{1,5}\)\s?)?\d++|\(\d{1,5}\)\s?\d++){0,6}+)"
    r"(?![\w@]|[.,:/]\d)"
)
_CUES = either(lambda lex: lex.entities.phone_cues)
# A cue is a word of its own: "iPhone 15 Pro, bestelnummer 500-2291-7734" names no phone.
_CUE_BEFORE = re.compile(r"(?i)(?<![^\W\d_])(?P<cue>" + _CUES + r")\W*(?:\w+\W+){0,3}$")
# "number" after a noun of its own names something else: "model number 55-887-1234", "numéro de série".
_NUMBER_NOUN = re.compile(r"(?i)(?:" + (either(lambda lex: lex.entities.number_nouns) or "(?!)") + r")")
_NOUN_BEFORE = re.compile(r"(?<![\w-])(?P<word>[^\W\d_]+)\s+$")
_NOUN_AFTER = re.compile(r"\s+(?:de|of|del)\s+(?P<word>[^\W\d_]+)")
# Words that may stand next to "number" in a phone's cue: every lexicon's common words and phone cues.
_PLAIN = frozenset(fold(w) for lex in LEXICONS.values() for w in (*lex.names.common_words, *lex.names.not_names))
_CUE_AFTER = re.compile(r"(?i)^\W{0,3}(?:\w+\W+){0,2}(?:" + _CUES + r")(?!\w)")
# National shapes without a trunk 0: NANP ("415.555.0142", "1-800-555-0199") and Spanish ones.
_SHAPES = re.compile(
    r"(?:1[ .-])?\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}"
    r"|[6789]\d{2}(?:[ .]\d{3}[ .]\d{3}|[ .]\d{2}[ .]\d{2}[ .]\d{2})"
    r"|[89]\d[ .]\d{3}[ .]\d{2}[ .]\d{2}"
)


def find(text: str, add: Add) -> None:
    """``add("phone", start, end, norm)`` for each phone number of ``text``; the norm is its digits,
    with ``+`` and the country code for an international one (``+441223842725``)."""
    for m in _PHONE.finditer(text):
        raw = m["num"].rstrip(" .-/")
        number = digits(raw)
        if not 7 <= len(number) <= 15:
            continue
        # "00" is an international prefix before eight digits or more; "00418827" is a code
        international = raw.startswith("+") or (raw.startswith("00") and len(number) >= 10)
        trunk = raw.startswith(("0", "(")) and not raw.startswith("00")
        if "/" in raw and (not raw.startswith("0") or raw.count("/") > 1):
            continue  # "2024/0012" is an invoice, "030/1234567" a Berlin number
        shaped = bool(_SHAPES.fullmatch(raw))
        cued = _cued_before(text[max(0, m.start() - 40) : m.start()])
        cued = cued or bool(_CUE_AFTER.search(text[m.start() + len(raw) : m.start() + len(raw) + 30]))
        if not (international or trunk or shaped or cued):
            continue
        if " " in raw and not (international or trunk or shaped or cued):
            continue  # "5 2010 3" is a list of numbers, not a phone
        norm = "+" + (number[2:] if raw.startswith("00") else number) if international else number
        add("phone", m.start("num"), m.start("num") + len(raw), norm)


def _cued_before(window: str) -> bool:
    """Whether a phone cue stands in ``window``, the text just before a number. "number" counts
    only after a common word or a phone word ("my number", "mobile number"), not after another noun."""
    m = _CUE_BEFORE.search(window)
    if m is None:
        return False
    if not _NUMBER_NOUN.fullmatch(m["cue"]):
        return True
    before = _NOUN_BEFORE.search(window, 0, m.start())
    after = _NOUN_AFTER.match(window, m.end())
    nouns = [x["word"] for x in (before, after) if x is not None]
    return all(fold(w) in _PLAIN or _CUE_WORD.fullmatch(w) for w in nouns)


_CUE_WORD = re.compile(r"(?i)(?:" + _CUES + r")")
