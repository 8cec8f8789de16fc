"""Text helpers shared by the extractors: matching forms, digits, and calendar words.

One module so that entities, names, secrets and slot answers fold text the same way: a fact is
matched in the form made here (from :func:`appliance.lexicon.text.fold`), and two forms made
differently would never meet.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from appliance.lexicon import LEXICONS
from appliance.lexicon.text import fold


def compact(text: str) -> str:
    """Lower case, letters and digits only, accents removed: the form codes are compared in."""
    return "".join(c for c in fold(text) if c.isalnum())


def spaced(text: str) -> str:
    """Lower-case words and numbers without accents, joined by single spaces (phrases are compared
    in this form, with spaces around them so that "5 days" is not found in "15 days")."""
    return " ".join(re.findall(r"[^\W_]+", fold(text)))


def fold_words(text: str) -> frozenset[str]:
    """The words of ``text``, lower case and without accents (names are looked up word by word)."""
    return frozenset(re.findall(r"[^\W_]+", fold(text)))


def digits(text: str) -> str:
    """ASCII digits of ``text`` (Unicode digits such as ``٣`` or ``３`` included)."""
    return "".join(str(unicodedata.digit(c)) for c in text if c.isdigit())


def alternation(*alternatives: str) -> str:
    """A non-capturing alternation, longest first so that "thursday" wins over "thu"."""
    return "(?:" + "|".join(sorted(alternatives, key=len, reverse=True)) + ")"


def phrases(words: Iterable[str]) -> str:
    """Plain words and phrases of the lexicons as the body of an alternation, longest first: each
    escaped, the spaces between words any run of spaces, an apostrophe either kind ("o'clock",
    "o’clock"); one that matches nothing when there are none."""
    found = sorted({w for w in words if w}, key=len, reverse=True)
    return "|".join(r"\s+".join(re.escape(w) for w in p.split()).replace("'", "['’]") for p in found) or "(?!)"


def whole_words(patterns: Iterable[str]) -> re.Pattern[str]:
    """``patterns`` as one pattern found only as whole words, without case (one that matches nothing
    when there are none)."""
    return re.compile(r"(?<!\w)(?:" + ("|".join(patterns) or "(?!)") + r")(?!\w)", re.IGNORECASE)


def capitalised(word: str) -> bool:
    """Whether ``word`` starts the way a name does: an upper-case letter, or a letter of a script
    without case (Arabic, Chinese, Hindi...), where every word could be a name."""
    first = word[:1]
    return first.isalpha() and (first.isupper() or not first.islower())


# Months and weekdays of every lexicon; dates are compared as month-day numbers, and a weekday by its
# norm, its English name, whatever language said it.
MONTHS: dict[str, int] = {
    spelling: number
    for number in range(1, 13)
    for lexicon in LEXICONS.values()
    if lexicon.entities.months
    for spelling in lexicon.entities.months[number - 1]
}
WEEKDAY_NORMS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAYS: dict[str, str] = {
    spelling: norm
    for day, norm in enumerate(WEEKDAY_NORMS)
    for lexicon in LEXICONS.values()
    if lexicon.entities.weekdays
    for spelling in lexicon.entities.weekdays[day]
}
