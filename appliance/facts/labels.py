"""What tells several values of one kind apart: a label ("checking 11112222 and savings 33334444",
"my mobile is ... and my work number is ...") and a subject ("The Lakeside Hotel can be reached on
01632 960111", "The Riverside Grill's number is ...").

A label is a word of the lexicons' ``ledger.value_labels`` next to the value: the nearest one before
it (after the value before it), else the first one after it in the same clause ("+33 6 12 34 56 78
c'est mon portable"). A label of a kind also says the kind of a plain number ("Girokonto
11112222" is an account). A subject is what an agent's sentence names before a value: a run of
capitalised words ("Lakeside Hotel", "Hotel Adler"), else a word of a place or service ("taxi",
"Taxizentrale"), in the value's sentence or, when it names none ("Their phone number is ..."),
in an earlier sentence of the same turn. Both are kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from appliance.facts.names import NAME_WORD, PARTICLES
from appliance.facts.text import capitalised
from appliance.lexicon import LEXICONS, either
from appliance.lexicon.text import fold
from appliance.types import Entity

# Kinds whose values a label tells apart, and the kinds a plain number may turn out to be by its label.
LABELLED = ("account", "card", "phone", "email", "address")
_BY_LABEL = ("account", "card")
# Kinds of values an agent gives about something (a hotel's phone, a restaurant's address).
SUBJECT_KINDS = frozenset({"phone", "email", "postcode", "address"})


def _labels(kind: str) -> re.Pattern[str]:
    words = either(lambda lex: lex.ledger.value_labels.get(kind, ()))
    return re.compile(r"(?i)(?<![\w-])(?:" + words + r")(?![\w-])")


_LABEL = {kind: _labels(kind) for kind in LABELLED}
_CLAUSE_END = re.compile(r"[.;!?\n]")
_VENUE = re.compile(r"(?i)(?<![\w-])[^\W\d_]*(?:" + either(lambda lex: lex.ledger.subjects) + r")[^\W\d_]*(?![\w-])")
_NOT_SUBJECT = frozenset(
    fold(w) for lex in LEXICONS.values() for w in (*lex.ledger.not_subjects, *lex.names.common_words)
)
_TOKEN = re.compile(r"[^\s,;:()!?]+")
_SENTENCE_START = re.compile(r"(?:^|[.!?\n])\s*$")


def label(text: str, e: Entity, before: int, after: int) -> tuple[str, str] | None:
    """(kind, label) for the value ``e``: a label word of its kind, or for a plain number of the
    kinds a label names, between ``before`` (the end of the value before it) and ``after`` (the
    start of the next one)."""
    kinds = (e.kind,) if e.kind in LABELLED else _BY_LABEL if e.kind == "number" else ()
    for kind in kinds:
        near = list(_LABEL[kind].finditer(text, max(before, e.start - 40), e.start))
        if near:
            return kind, near[-1].group()
    for kind in kinds:
        clause = _CLAUSE_END.search(text, e.end, after)
        later = _LABEL[kind].search(text, e.end, min(after, clause.start() if clause else after, e.end + 40))
        if later:
            return kind, later.group()
    return None


def subject(text: str, e: Entity, taken: Sequence[Entity]) -> str:
    """What an agent's value ``e`` is about, as the turn names it before the value; "" if it does not."""
    start = e.start
    while start > 0:
        sentence = max(text.rfind(c, 0, start - 1) for c in ".!?\n") + 1
        found = _named(text, sentence, start, taken)
        if found:
            return found
        start = sentence
    return ""


def _named(text: str, begin: int, end: int, taken: Sequence[Entity]) -> str:
    """The last subject named in ``text[begin:end]``: a run of capitalised words, else a venue word."""
    runs: list[list[re.Match[str]]] = []
    current: list[re.Match[str]] = []
    last = -2
    for m in _TOKEN.finditer(text, begin, end):
        word = m.group().removesuffix("'s").removesuffix("’s")
        inside = any(t.start <= m.start() < t.end for t in taken)
        name_like = bool(re.fullmatch(NAME_WORD, word)) and capitalised(word) and not inside
        if name_like and fold(word) not in _NOT_SUBJECT:
            if not (current and last + 1 >= m.start()):
                runs.append(current)
                current = []
            current.append(m)
            last = m.end()
        elif current and m.group().casefold() in PARTICLES and last + 1 >= m.start():
            last = m.end()  # "Hotel de la Paix"
        else:
            runs.append(current)
            current = []
    runs.append(current)
    for run in reversed([r for r in runs if r]):
        first = run[0]
        at_start = bool(_SENTENCE_START.search(text, begin, first.start())) or first.start() == begin
        if len(run) == 1 and at_start:
            continue  # "Booked, contact number ...": one capitalised word opening a sentence is no name of a place
        value = text[first.start() : run[-1].end()]
        return value.removesuffix("'s").removesuffix("’s").strip()
    venues = list(_VENUE.finditer(text, begin, end))
    return venues[-1].group() if venues else ""
