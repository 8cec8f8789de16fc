"""Digits as customers say them: spaced, dashed or dotted ("4 4 3 1", "4-4-3-1", "4.4.3.1"), or in
words ("four four three one", "double four three one", "vier vier drei eins", "cuatro cuatro tres
uno"), read back as the run of digits they say ("4431").

A secret said this way is still a secret (:mod:`appliance.facts.secrets` masks the whole span as
said), but the same shapes are everyday text too ("one or two", "12 34"), so a run is read only where
a secret is asked for or named; here it is only found. The words of each language are in its
lexicon (``numbers``).

Pure functions over text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from appliance.lexicon import LEXICONS

# word (lower case) → its digit, and the words that say the next digit again ("double" → 2)
_DIGIT_OF = {w: str(d) for lex in LEXICONS.values() for d, words in enumerate(lex.numbers.digits) for w in words}
_REPEATS = {w: n for lex in LEXICONS.values() for w, n in lex.numbers.repeats.items()}
# words said for a pair of digits: "fourteen" → 14, "forty" → 4 (then a digit word, or 0)
_TEEN_OF = {w: str(10 + i) for lex in LEXICONS.values() for i, w in enumerate(lex.numbers.teens)}
_TEN_OF = {w: str(2 + i) for lex in LEXICONS.values() for i, w in enumerate(lex.numbers.tens)}


def _alternation(words: Iterator[str] | list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w))) or "(?!)"


_WORD = rf"(?:{_alternation(list(_DIGIT_OF))})"
_UNIT = rf"(?:{_alternation([w for w, d in _DIGIT_OF.items() if d != '0'])})"
_REPEAT = rf"(?:{_alternation(list(_REPEATS))})"
_TEEN = rf"(?:{_alternation(list(_TEEN_OF))})"
_TENS = rf"(?:{_alternation(list(_TEN_OF))})"
# One token: a pair of digits in words ("forty-four", "forty", "fourteen"), a digit word (after a word
# of repeating), or a group of one to three digits.
_TOKEN = rf"(?:{_TENS}(?:[\s-]+{_UNIT}(?![\w-]))?|{_TEEN}|(?:(?:{_REPEAT})\s+)?(?:{_WORD}|\d{{1,3}}))"
# Between tokens: spaces, or one dash, dot or comma with spaces around it. Dots and commas join single
# digits only (below).
_SEP = r"(?:\s*[-–.,]\s*|\s+)"
# A run of two tokens or more, not inside a longer word or number.
RUN = rf"(?<![\w.,:/+€$£-])(?:{_TOKEN})(?:{_SEP}(?:{_TOKEN}))+(?![\w]|[-.,:/]\d)"
_RUN = re.compile(RUN, re.IGNORECASE)
_PIECE = re.compile(
    rf"(?P<tens>{_TENS})(?:[\s-]+(?P<unit>{_UNIT})(?![\w-]))?|(?P<teen>{_TEEN})|"
    rf"(?P<repeat>{_REPEAT})\s+(?P<word>{_WORD})|(?P<single>{_WORD})|(?P<digits>\d+)",
    re.IGNORECASE,
)
# A dot or a comma next to a group of digits: a date ("12.03.24"), an amount ("1,500").
_DOTTED_GROUP = re.compile(r"\d{2,}\s*[.,]|[.,]\s*\d{2,}")
_HINT = re.compile(rf"\d|(?<!\w)(?:{_WORD}|{_TEEN}|{_TENS})(?!\w)", re.IGNORECASE)


@dataclass(frozen=True)
class Run:
    """A run of digits said one way or another: its span in the text, and the digits it says."""

    start: int
    end: int
    digits: str


def fold(said: str) -> str | None:
    """The digits ``said`` says, or None if it is not a run of them: "4-4-3-1" and "double four three
    one" are "4431"."""
    if not _RUN.fullmatch(said):
        return None
    if _DOTTED_GROUP.search(said):
        return None
    out: list[str] = []
    for m in _PIECE.finditer(said):
        if m["tens"]:
            out.append(_TEN_OF[m["tens"].casefold()] + (_DIGIT_OF[m["unit"].casefold()] if m["unit"] else "0"))
        elif m["teen"]:
            out.append(_TEEN_OF[m["teen"].casefold()])
        elif m["repeat"]:
            out.append(_DIGIT_OF[m["word"].casefold()] * _REPEATS[m["repeat"].casefold()])
        elif m["single"]:
            out.append(_DIGIT_OF[m["single"].casefold()])
        else:
            out.append(m["digits"])
    return "".join(out)


def runs(text: str, lo: int = 3, hi: int = 8) -> tuple[Run, ...]:
    """Every run of ``text`` said apart or in words that holds ``lo`` to ``hi`` digits, with at least
    one word or separator in it (a plain "4431" is not said apart; the callers read those)."""
    if not _HINT.search(text):
        return ()
    found = []
    for m in _RUN.finditer(text):
        said = fold(m.group())
        if said is not None and lo <= len(said) <= hi:
            found.append(Run(m.start(), m.end(), said))
    return tuple(found)


def run_at(text: str, pos: int, lo: int = 3, hi: int = 8) -> Run | None:
    """The run that starts at ``pos`` in ``text``, if one does."""
    m = _RUN.match(text, pos)
    if m is None:
        return None
    said = fold(m.group())
    return Run(m.start(), m.end(), said) if said is not None and lo <= len(said) <= hi else None
