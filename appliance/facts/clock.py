"""Clock times: "19:45", "7.30pm", "5 p.m.", "8 o'clock in the evening", "18h30", "20:15 Uhr".

The norm is 24-hour ``HH:MM``; a 12-hour clock time with nothing to say am or pm ("at 4:30") keeps
both readings (``04:30|16:30``). The words after a time that say its half of the day, and the words
of "o'clock", are each lexicon's (``times.day_parts``, ``times.oclock``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from appliance.facts.text import digits, phrases
from appliance.lexicon import LEXICONS, Times, each
from appliance.lexicon.text import fold


def _said(pick: Callable[[Times], Iterable[str]]) -> str:
    return phrases(each(lambda lexicon: pick(lexicon.times)))


_AMPM = r"(?P<ampm>(?:[ap]\.\s?m\.|[ap]\s?m)(?!\w))"  # "5pm." ends a sentence; "5 p.m." keeps its dot
# The words after a clock time that say its half of the day ("in the evening"), or a 24-hour clock ("Uhr").
_DAY_PARTS = {fold(p): half for lexicon in LEXICONS.values() for p, half in lexicon.times.day_parts.items()}
_PART = phrases(_DAY_PARTS)
_HALF = phrases(p for p, half in _DAY_PARTS.items() if half != "24h")
_TIME = re.compile(
    rf"(?i)(?<![\w:.,])(?P<h>[01]?\d|2[0-3])(?:(?P<sep>[:h])(?P<mi>[0-5]\d)|\.(?P<mi2>[0-5]\d)(?=\s?[ap]\.?m))"
    rf"(?:\s?{_AMPM}|\s*(?P<part>{_PART})(?!\w))?(?![\w:]|[.,]\d)"
)
_TIME_WORDS = re.compile(
    rf"(?i)(?<![\w:.,])(?P<h>1[0-2]|0?[1-9])(?:\s?(?:{_AMPM}|(?P<oclock>{_said(lambda t: t.oclock)})(?!\w))"
    rf"(?:\s+(?P<part>{_HALF})(?!\w))?"
    rf"|\s+(?P<part2>{_HALF})(?!\w))"
)


def find(text: str, add: Callable[[str, int, int, str], None]) -> None:
    """``add("time", start, end, norm)`` for each clock time in ``text``, written or said."""
    for m in _TIME.finditer(text):
        hour, minute = int(digits(m["h"])), int(digits(m["mi"] or m["mi2"]))
        add("time", m.start(), m.end(), _time_norm(m["h"], hour, minute, m["ampm"], m["part"]))
    for m in _TIME_WORDS.finditer(text):
        hour = int(digits(m["h"]))
        add("time", m.start(), m.end(), _time_norm(m["h"], hour, 0, m["ampm"], m["part"] or m["part2"]))


def _time_norm(raw_hour: str, hour: int, minute: int, ampm: str | None, part: str | None) -> str:
    """24-hour ``HH:MM``; a 12-hour clock time with nothing to say am or pm keeps both readings."""
    marker = (ampm or "").casefold().replace(".", "").replace(" ", "")
    half = _DAY_PARTS.get(" ".join(fold(part or "").split()), "")
    if marker == "pm" or half == "pm":
        if hour < 12:
            hour += 12
    elif marker == "am" or half == "am":
        if hour == 12:
            hour = 0
    elif 1 <= hour <= 12 and not raw_hour.startswith("0") and half != "24h":
        other = hour + 12 if hour < 12 else 0
        return f"{min(hour, other):02d}:{minute:02d}|{max(hour, other):02d}:{minute:02d}"
    return f"{hour:02d}:{minute:02d}"
