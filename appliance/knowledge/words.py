"""The words of a text as retrieval compares them: a document's title with a transcript that names it.

Speech recognition writes what it hears, so the same name comes out differently in a title and in a
spoken conversation; :func:`words` makes the usual differences vanish on both sides:

* lower case, no accents, apostrophes dropped ("Sutro's" → "sutros"), "&" read as "and";
* spoken numbers as digits, with the lexicons' number words: "nineteen zero six" → "1906",
  "pier thirty nine" → "pier 39", "sixteenth" → "16th" (a title's "Nineteen 06" → "1906" too);
* letters spelled one by one joined ("s f citadel" → "sf citadel"), and a digit with the letter after
  it ("three d" → "3d");
* a plural's final s dropped from words of four letters or more, so "illusions" meets "illusion".

A pure function of the text and the lexicons' number words (:class:`Numbers`, compiled once).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from appliance.lexicon import LEXICONS, KnowledgeCues
from appliance.lexicon.text import fold

_WORD = re.compile(r"\w+")
_APOSTROPHES = re.compile(r"['’`´]")
_ORDINAL_DIGITS = re.compile(r"(\d+)(?:st|nd|rd|th)")


@dataclass(frozen=True)
class Numbers:
    """Number words of every registered language: word → value, and the ordinals' values."""

    values: dict[str, int]
    ordinals: dict[str, int]

    @classmethod
    def build(cls, lexicons: Iterable[KnowledgeCues] | None = None) -> Numbers:
        cues = list(lexicons) if lexicons is not None else [lexicon.knowledge for lexicon in LEXICONS.values()]
        values: dict[str, int] = {}
        ordinals: dict[str, int] = {}
        for c in cues:
            values.update({fold(w): i for i, w in enumerate(c.numbers)})
            values.update({fold(w): 10 * (i + 2) for i, w in enumerate(c.tens)})
            ordinals.update({fold(w): i + 1 for i, w in enumerate(c.ordinals)})
        return cls(values, ordinals)


@lru_cache(maxsize=1)
def numbers() -> Numbers:
    return Numbers.build()


def words(text: str, table: Numbers | None = None) -> list[str]:
    """The words of ``text`` in the form they are compared in (see the module's docstring)."""
    raw = _WORD.findall(_APOSTROPHES.sub("", fold(text).replace("&", " and ")))
    return [key(w) for w in _glue(_spoken(_letters(raw), table or numbers()))]


def key(word: str) -> str:
    """A word without a plural's final s ("illusions" → "illusion"; "class", "bus", "this" kept)."""
    if len(word) >= 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _letters(raw: Sequence[str]) -> list[str]:
    """Runs of two or more single letters joined into one word ("s f" → "sf")."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        j = i
        while j < len(raw) and len(raw[j]) == 1 and raw[j].isalpha():
            j += 1
        if j - i >= 2:
            out.append("".join(raw[i:j]))
            i = j
        else:
            out.append(raw[i])
            i += 1
    return out


def _spoken(raw: Sequence[str], table: Numbers) -> list[str]:
    """Runs of number words and digits as one number: a tens word and a unit add ("thirty nine" → 39),
    the rest are read digit group after digit group ("nineteen zero six" → 1906, "twelve fifty" → 1250);
    an ordinal ends its run ("sixteenth" → "16th")."""
    out: list[str] = []
    run: str | None = None
    open_tens = False  # the run ends in a tens word that a unit may complete
    for word in raw:
        ordinal = _ordinal(word, table)
        if ordinal is not None:
            if run is not None and open_tens and len(ordinal) == 1:
                run = run[:-1]
            out.append((run or "") + ordinal + "th")
            run, open_tens = None, False
            continue
        value = table.values.get(word)
        if value is None and not word.isdigit():
            if run is not None:
                out.append(run)
            out.append(word)
            run, open_tens = None, False
            continue
        if value is None:
            run, open_tens = (run or "") + word, False
        elif run is not None and open_tens and 0 < value < 10:
            run, open_tens = run[:-1] + str(value), False
        else:
            run, open_tens = (run or "") + str(value), value >= 20
    if run is not None:
        out.append(run)
    return out


def _ordinal(word: str, table: Numbers) -> str | None:
    """The digits of an ordinal ("sixteenth" or "16th" → "16"), else None."""
    value = table.ordinals.get(word)
    if value is not None:
        return str(value)
    digits = _ORDINAL_DIGITS.fullmatch(word)
    return digits.group(1) if digits else None


def _glue(raw: Sequence[str]) -> list[str]:
    """A digit group and the single letter after it as one word ("3 d" → "3d")."""
    out: list[str] = []
    for word in raw:
        if out and len(word) == 1 and word.isalpha() and out[-1].isdigit():
            out[-1] += word
        else:
            out.append(word)
    return out
