"""Digits as customers say them: spaced, dashed or dotted ("4 4 3 1", "4-4-3-1", "4.4.3.1"), or in
words ("four four three one", "double four three one", "forty-four thirty-one", "vier vier drei
eins", "tre tre tre, uno due tre"), read back as the run of digits they say ("4431").

The only importer of ``text2num``, which reads numbers said in words in every language of the
lexicons it knows (English, German, French, Spanish, Dutch, Italian, Portuguese). A run joins the
numbers said one after another, with spaces, or one dash, dot or comma between them; what the
library does not read is each lexicon's data (``numbers``): spellings it lacks ("oh" for zero) and
the words that say the next digit again ("double"). Dots and commas join single digits only, so
dates ("12.03.24") and amounts ("1,500") never fold.

Pure functions over text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from text_to_num import find_numbers

from appliance.lexicon import LEXICONS


def _reads(code: str) -> bool:
    try:
        find_numbers([], code, 0)
    except ValueError:  # a language text2num does not know
        return False
    return True


# The lexicons' languages that text2num reads, in the lexicons' order.
LANGUAGES = tuple(code for code in LEXICONS if _reads(code))
# Spellings text2num lacks ("oh": "0"), and the words that say the next digit again ("double": 2).
_SPELLINGS = {w: d for lex in LEXICONS.values() for w, d in lex.numbers.spellings.items()}
_REPEATS = {w: n for lex in LEXICONS.values() for w, n in lex.numbers.repeats.items()}

# Words (letters, joined by hyphens: "forty-four"), groups of digits, and single marks.
_TOKEN = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*|\d+|[^\w\s]")
_WORD = re.compile(r"[^\W\d_]+")
_PART = re.compile(r"[^\W\d_]+|-")
# What may stand between two numbers of a run: spaces, or one of these marks.
_JOINS = frozenset("-–.,")
# Marks before a run or after it that make it part of something else: "$12 34", "12/34".
_BEFORE = frozenset(".,:/+€$£-")
_AFTER = frozenset("-.,:/")


@dataclass(frozen=True)
class Run:
    """A run of digits said one way or another: its span in the text, and the digits it says."""

    start: int
    end: int
    digits: str
    written: str = ""
    """The digits as a text reads them: the groups said between marks apart ("020 7946 0018");
    empty for a run of digits typed, which is no number said."""


@dataclass(frozen=True)
class View:
    """A text with its runs said in words written as digits ("call me on oh two oh, seven nine four
    six" → "call me on 020 7946"), for finders that read numbers; :meth:`span` maps a span of
    ``text`` back to the text said."""

    text: str
    runs: tuple[tuple[int, int, Run], ...]  # start and end in ``text``, and the run said

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text said that the span ``start``-``end`` of :attr:`text` reads; a span
        that starts or ends inside a run takes the whole run."""
        return self._at(start, False), self._at(end, True)

    def _at(self, pos: int, end: bool) -> int:
        shift = 0
        for start, stop, run in self.runs:
            if pos < start or (end and pos == start):
                break
            if pos < stop or (end and pos == stop):
                return run.end if end else run.start
            shift = run.end - stop
        return pos + shift


def view(text: str) -> View | None:
    """``text`` with its runs of three digits or more said in words written as digits, or None
    when it says none."""
    if not any(_reading(w) or w in _SPELLINGS for w in _WORD.findall(text.casefold())):
        return None  # most texts say no number in words: a look-up a word, before the runs are read
    said = [r for r in _runs(text) if r.written and len(r.digits) >= 3]
    if not said:
        return None
    parts: list[str] = []
    runs: list[tuple[int, int, Run]] = []
    at = length = 0
    for run in said:
        parts.append(text[at : run.start])
        length += run.start - at
        runs.append((length, length + len(run.written), run))
        parts.append(run.written)
        length += len(run.written)
        at = run.end
    parts.append(text[at:])
    return View("".join(parts), tuple(runs))


@dataclass(frozen=True)
class _Token:
    """A token as text2num reads it (its ``Token`` protocol)."""

    word: str
    start: int
    end: int

    def text(self) -> str:
        return self.word

    def nt_separated(self, previous: _Token) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


@dataclass(frozen=True)
class _Piece:
    """One number of a run: the tokens it spans and the digits it says; ``written`` for digits typed."""

    first: int
    last: int
    digits: str
    written: bool = False


def fold(said: str) -> str | None:
    """The digits ``said`` says, or None if it is not one run of them: "4-4-3-1" and "double four
    three one" are "4431"."""
    found = runs(said.strip(), 1, 1000)
    if len(found) != 1 or found[0].start != 0 or found[0].end != len(said.strip()):
        return None
    return found[0].digits


def runs(text: str, lo: int = 3, hi: int = 8) -> tuple[Run, ...]:
    """Every run of ``text`` said apart or in words that holds ``lo`` to ``hi`` digits: two numbers
    or more (a plain "4431" is not said apart; the callers read those)."""
    return tuple(r for r in _runs(text) if lo <= len(r.digits) <= hi)


def run_at(text: str, pos: int, lo: int = 3, hi: int = 8) -> Run | None:
    """The run that starts at ``pos`` in ``text``, if one does."""
    return next((r for r in _runs(text) if r.start == pos and lo <= len(r.digits) <= hi), None)


@lru_cache(maxsize=4096)
def _runs(text: str) -> tuple[Run, ...]:
    tokens = [t for m in _TOKEN.finditer(text) for t in _split(m)]
    pieces = _pieces(tokens)
    out: list[Run] = []
    group: list[_Piece] = []
    for piece in pieces:
        if group and not _joined(text, tokens, group[-1], piece):
            out.extend(_run(text, tokens, group))
            group = []
        group.append(piece)
    out.extend(_run(text, tokens, group))
    return tuple(out)


def _split(m: re.Match[str]) -> list[_Token]:
    """A token, or a hyphenated word that says no number whole as its parts and hyphens: "forty-four"
    stays whole, "deux-deux-neuf" is three numbers."""
    word = m.group()
    if "-" not in word or _reading(word.casefold()):
        return [_Token(word, m.start(), m.end())]
    return [_Token(p.group(), m.start() + p.start(), m.start() + p.end()) for p in _PART.finditer(word)]


def _pieces(tokens: Sequence[_Token]) -> list[_Piece]:
    """The numbers among ``tokens``: groups of one to three digits, numbers said in words in any
    language text2num reads (the longest reading wins, then the first language's), the lexicons' spellings,
    a digit said again after a word of repeating."""
    said: dict[int, _Piece] = {}
    words = [t.word.casefold() for t in tokens]
    found = [
        (o.start, -o.end, rank, o.text)
        for rank, code in enumerate(_languages(tuple(w for w in words if w.isalpha() or "-" in w)))
        for o in find_numbers(list(tokens), code, 0)
        # digits are said one or two at a time: "a hundred" and "miles" (Spanish: thousands) say none
        if not o.is_ordinal and o.text.isdigit() and len(o.text) <= 2
    ]
    taken: set[int] = set()
    for start, neg_end, _, value in sorted(found):  # the longest reading of a token wins, then the first language's
        if not taken & set(range(start, -neg_end)):
            said[start] = _Piece(start, -neg_end - 1, value)
            taken.update(range(start, -neg_end))
    pieces: list[_Piece] = []
    i = 0
    while i < len(tokens):
        word = words[i]
        piece = said.get(i)
        if piece is None and word.isdigit() and len(word) <= 3:
            piece = _Piece(i, i, word, written=True)
        elif piece is None and word in _SPELLINGS:
            piece = _Piece(i, i, _SPELLINGS[word])
        if pieces and pieces[-1].digits == "" and piece is not None and len(piece.digits) == 1:
            repeat = pieces.pop()
            piece = _Piece(repeat.first, piece.last, piece.digits * _REPEATS[words[repeat.first]], piece.written)
        elif piece is None and word in _REPEATS:
            piece = _Piece(i, i, "")  # the next digit says how many of what
        if piece is not None:
            pieces.append(piece)
            i = piece.last + 1
        else:
            if pieces and pieces[-1].digits == "":
                pieces.pop()
            i += 1
    return [p for p in pieces if p.digits]


@lru_cache(maxsize=65536)
def _reading(word: str) -> tuple[str, ...]:
    """The languages in which ``word`` alone says a number."""
    token = _Token(word, 0, len(word))
    return tuple(code for code in LANGUAGES if find_numbers([token], code, 0))


def _languages(words: tuple[str, ...]) -> tuple[str, ...]:
    """The languages whose numbers the ``words`` hold, in the lexicons' order; none for most texts."""
    found = {code for w in words for code in _reading(w)}
    return tuple(code for code in LANGUAGES if code in found)


def _joined(text: str, tokens: Sequence[_Token], a: _Piece, b: _Piece) -> bool:
    """Whether piece ``b`` continues the run that ``a`` ends: next to it on its line, or after one
    joining mark; a dot or a comma only between single digits or numbers said in words."""
    if len(f"|{text[tokens[a.last].end : tokens[b.first].start]}|".splitlines()) > 1:
        return False  # a list, one number a line ("one\ntwo\nthree")
    between = [t.word for t in tokens[a.last + 1 : b.first]]
    if not between:
        return True
    if len(between) != 1 or between[0] not in _JOINS:
        return False
    if between[0] in ".,":
        # "12.03.24", "1,500" and "12, 34" are a date, an amount and a list; "4.4.3.1" and "oh two
        # oh, seven" are runs
        return not ((a.written and len(a.digits) > 1) or (b.written and len(b.digits) > 1))
    return True


def _run(text: str, tokens: Sequence[_Token], group: Sequence[_Piece]) -> list[Run]:
    """``group`` as a run, if it is one: two numbers or more, not part of a longer word or number."""
    if len(group) < 2:
        return []
    start, end = tokens[group[0].first].start, tokens[group[-1].last].end
    if text[start - 1 : start] in _BEFORE or (start and text[start - 1].isalnum()):
        return []
    after = text[end : end + 2]
    if after[:1].isalnum() or (after[:1] in _AFTER and after[1:2].isdigit()):
        return []
    written = "".join(
        (" " if i and tokens[a.last + 1 : b.first] else "") + b.digits
        for i, (a, b) in enumerate(zip((group[0], *group), group, strict=False))
    )
    # said in words: a word in it, and no group of digits typed ("612 345 678 o al ..." is Spanish "or")
    words = not all(p.written for p in group) and not any(p.written and len(p.digits) > 1 for p in group)
    return [Run(start, end, "".join(p.digits for p in group), written if words else "")]
