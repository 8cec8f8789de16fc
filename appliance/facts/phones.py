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
from appliance.lexicon import either

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

# Possessive groups: a long run of digits must not make the engine try every way to split it.
_PHONE = re.compile(
    r"(?<![\w+@.,/:-])(?P<num>(?:\+|00)?(?:\(\d{1,5}\)\s?)?\d++(?:[ .\-\u00a0/](?:\(\d{1,5}\)\s?)?\d++){0,6}+)"
    r"(?![\w@]|[.,:/]\d)"
)
_CUES = either(lambda lex: lex.entities.phone_cues)
_CUE_BEFORE = re.compile(r"(?i)(?:" + _CUES + r")\W*(?:\w+\W+){0,3}$")
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
        international = raw.startswith(("+", "00"))
        trunk = raw.startswith(("0", "("))
        if "/" in raw and (not raw.startswith("0") or raw.count("/") > 1):
            continue  # "2024/0012" is an invoice, "030/1234567" a Berlin number
        shaped = bool(_SHAPES.fullmatch(raw))
        cued = bool(_CUE_BEFORE.search(text[max(0, m.start() - 40) : m.start()]))
        cued = cued or bool(_CUE_AFTER.search(text[m.start() + len(raw) : m.start() + len(raw) + 30]))
        if not (international or trunk or shaped or cued):
            continue
        if " " in raw and not (international or trunk or shaped or cued):
            continue  # "5 2010 3" is a list of numbers, not a phone
        norm = "+" + (number[2:] if raw.startswith("00") else number) if international else number
        add("phone", m.start("num"), m.start("num") + len(raw), norm)
