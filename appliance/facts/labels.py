"""What tells several values of one kind apart: a label ("checking 11112222 and savings 33334444",
"my mobile is ... and my work number is ...") and a subject ("The Lakeside Hotel can be reached on
01632 960111", "The Riverside Grill's number is ...").

A label is a word of the lexicons' ``ledger.value_labels`` next to the value: the nearest one before
it (after the value before it and the label that value took), else, where a turn gives several
values of the kind, the word right before it ("home 40021178 and business 40021190", "le compte
maison 88120045"), else the first one after it in the same clause ("+33 6 12 34 56 78 c'est mon
portable"). A label of a kind also says the kind of a plain number ("Girokonto 11112222" is an
account), and a count before a kind's label says the kind of the plain numbers after it in the
sentence ("zwei Kundennummern: privat 5520187 und geschäftlich 5520199", :func:`announced`). A subject is what an agent's sentence names before a value: a run of
capitalised words ("Lakeside Hotel", "Hotel Adler"), else a word of a place or service ("taxi",
"Taxizentrale"), in the value's sentence or, when it names none ("Their phone number is ..."),
in an earlier sentence of the same turn. Both are kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from appliance.facts import handles
from appliance.facts.namewords import NAME_WORD, PARTICLES
from appliance.facts.text import capitalised
from appliance.lexicon import LEXICONS, Entities, either
from appliance.lexicon.text import fold
from appliance.types import Entity

# Kinds whose values a label tells apart, and the kinds a plain number may turn out to be by its label.
LABELLED = ("account", "card", "phone", "email", "address", "username", "customer_id", "name")
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
# Words before a value that are no label of it: common words, and the words of kinds and counts.
_NOT_LABEL = _NOT_SUBJECT | frozenset(
    fold(w)
    for lex in LEXICONS.values()
    for w in (*lex.entities.counts, *(p for words in lex.entities.labels.values() for p in words))
    if re.fullmatch(r"[^\W\d_]+", w)
)
_TOKEN = re.compile(r"[^\s,;:()!?]+")
_SENTENCE_START = re.compile(r"(?:^|[.!?\n])\s*$")


@dataclass(frozen=True)
class Label:
    """A value's label: the kind it says, the word as written, and where the word ends."""

    kind: str
    word: str
    end: int


def label(text: str, e: Entity, before: int, after: int, *, several: bool = False) -> Label | None:
    """The label of the value ``e``: a label word of its kind, or for a plain number of the kinds a
    label names, between ``before`` (the end of the value before it, or of the label that value
    took after it) and ``after`` (the start of the next one); where ``several`` values of its kind
    stand in the turn, the word right before it."""
    kinds = (e.kind,) if e.kind in LABELLED else _BY_LABEL if e.kind == "number" else ()
    for kind in kinds:
        near = list(_LABEL[kind].finditer(text, max(before, e.start - 40), e.start))
        if near:
            return Label(kind, near[-1].group(), near[-1].end())
    word = _WORD_BEFORE.search(text, max(before, e.start - 30), e.start) if several and e.kind != "name" else None
    if word is not None and fold(word["word"]) not in _NOT_LABEL:
        return Label(e.kind, word["word"], word.end("word"))
    for kind in kinds if e.kind != "name" else ():  # a part of a name is named before it ("my surname is")
        clause = _CLAUSE_END.search(text, e.end, after)
        later = _LABEL[kind].search(text, e.end, min(after, clause.start() if clause else after, e.end + 40))
        # "0612345678 or my work number 0201234567": a label that opens the next value's words is its own
        if later and (after >= len(text) or _JOIN.search(text, later.end(), after)):
            return Label(kind, later.group(), later.end())
    return None


# What parts a value's words from the next value's ("... is mijn mobiel en 0031 ...").
_JOIN = re.compile(r"(?i)[,;.]|(?<!\w)(?:" + either(lambda lex: lex.secrets.joins) + r")(?!\w)")
# The word right before a value, or before the verb that introduces it ("la cuenta de la luz es 500112233").
_WORD_BEFORE = re.compile(
    r"(?<![\w-])(?P<word>[^\W\d_]{2,})[^\S\n]+(?:(?i:" + either(lambda lex: lex.entities.label_verbs) + r")[^\S\n]+)?$"
)


def _kind_words(pick: Callable[[Entities], Sequence[str]]) -> str:
    return either(lambda lex: pick(lex.entities))


# The label words of identifiers ("account", "Kunden"), by kind, as the extractor reads them.
_KINDS = ("reference", "order", "case", "ticket", "account", "card", "customer_id", "member_number")


def _kind_label(kind: str) -> str:
    return f"(?P<{kind}>{_kind_words(lambda e: e.labels.get(kind, ()))})"


_KIND_LABEL = "|".join(_kind_label(k) for k in _KINDS)
_ANNOUNCED = re.compile(
    r"(?i)(?<!\w)(?:"
    + _kind_words(lambda e: e.counts)
    + r")\s+(?:[^\W\d_]+\s+){0,2}?(?:"
    + _KIND_LABEL
    + r")(?:"
    + _kind_words(lambda e: e.compounds)
    + r")?[^\W\d_]{0,2}(?:\s+(?:"
    + _kind_words(lambda e: e.number_words)
    + r")s?)?(?!\w)"
)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
# A cheap test first: no announcement without a count.
_COUNT_WORDS = tuple(w for lex in LEXICONS.values() for w in lex.entities.counts if w.isalpha())
_USERNAMES = re.compile(
    r"(?i)(?<!\w)(?:"
    + _kind_words(lambda e: e.counts)
    + r")\s+(?:[^\W\d_]+\s+){0,2}?(?:"
    + _kind_words(lambda e: e.username_labels)
    + r")s?(?!\w)"
)
# What a count and a kind make of a value after them: plain numbers and codes, and a number
# written without separators that looked like a phone's.
_PLAIN = frozenset({"number", "reference"})
_LAST_DIGITS = re.compile(r"(?<![\w.,/:-])\d{4}(?![\w/:-]|[.,]\d)")
# A kind's label after the count ends what it announces.
_KIND_WORD = re.compile(r"(?i)(?<!\w)(?:" + _KIND_LABEL + r")")


def announced(text: str, found: Sequence[Entity]) -> list[Entity]:
    """``found`` with the plain numbers after a count and a kind's label, to the end of the
    sentence, read as that kind ("I have two accounts with you: home 40021178 and business 40021190",
    "two tickets open for this: 55012 for the outage and 55087 for the billing error"), and after
    a count of usernames the tokens of a username's shape with a digit or a ``._`` in them ("I have
    two usernames: anna_k and anna.k2")."""
    out = list(found)
    folded = text.casefold()
    if not any(w in folded for w in _COUNT_WORDS):
        return out
    for m in _ANNOUNCED.finditer(text):
        kind = next(k for k in _KINDS if m[k])
        stop = _SENTENCE_END.search(text, m.end())
        end = stop.start() if stop else len(text)
        other = next((x for x in _KIND_WORD.finditer(text, m.end(), end) if not x[kind]), None)
        end = other.start() if other else end  # "4 tickets, reference number 65LWDB9Q": another kind's label
        for i, e in enumerate(out):
            plain = (
                e.kind in _PLAIN or (e.kind == "phone" and e.text.isdigit()) or (kind == "card" and e.kind == "account")
            )
            if plain and m.end() <= e.start < end:
                out[i] = Entity(kind, e.text, e.start, e.end, e.norm)
        if kind == "card":  # "dos tarjetas, una acabada en 1111 y otra en 2222": their last digits
            for d in _LAST_DIGITS.finditer(text, m.end(), end):
                if not any(d.start() < e.end and e.start < d.end() for e in out):
                    out.append(Entity("card", d.group(), d.start(), d.end(), d.group()))
    for m in _USERNAMES.finditer(text):
        stop = _SENTENCE_END.search(text, m.end())
        for token in _TOKEN.finditer(text, m.end(), stop.start() if stop else len(text)):
            span = handles.username_at(text, token.start())
            if span is None or any(span[0] < e.end and e.start < span[1] for e in out):
                continue
            value = text[span[0] : span[1]]
            if any(c.isdigit() or c in "._" for c in value):
                out.append(Entity("username", value, span[0], span[1], fold(value)))
    return sorted(out, key=lambda e: (e.start, e.end))


def name_part(asked: str) -> str:
    """The part of a name an agent's request asks for ("And your surname?"), as written; "" for none
    or for both ("your first and last name")."""
    found = {m.group().casefold() for m in _LABEL["name"].finditer(asked)}
    return next(m.group() for m in _LABEL["name"].finditer(asked)) if len(found) == 1 else ""


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
