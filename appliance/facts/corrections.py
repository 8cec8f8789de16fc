"""Corrections: a customer's value that replaces one given before ("Sorry, I gave you the wrong
one, it's 12345679.", "my customer id is 55120, no wait, 55210", "No, it's 07911 123456." after the
agent read back a wrong one).

A value after a correction cue of the lexicons (``ledger.corrections``; or a denial opening a reply
to an agent's turn that stated a value, "No, ..."), in the same sentence and with no word of
addition between them ("another", "also"), corrects the latest earlier value it could be a
correction of: of the same family (a plain number corrects an account, a customer id...), of a
similar length for codes, given by the customer or read back by the agent just before. The
corrected value keeps its kind and slot, so the new one is current and the old one stays stored,
superseded (:func:`appliance.types.current_facts`). A name, a username or a level given bare after
a cue ("Korrektur: hmueller2", "oops typo, its anna schmitt", "silver member, correction: gold") is
read by its shape when the customer has given one before, in an earlier turn or earlier in the turn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from appliance.facts import handles, names, uncued
from appliance.facts.matching import family
from appliance.lexicon import either
from appliance.types import Entity, LedgerEntry

_CUE = re.compile(r"(?i)(?<![\w'’])(?:" + either(lambda lex: lex.ledger.corrections) + r")(?![\w'’])")
_DENIAL = re.compile(r"(?i)^[\W_]*(?:" + either(lambda lex: lex.ledger.denials) + r")(?![\w'’])")
_ADDITION = re.compile(r"(?i)(?<![\w'’])(?:" + either(lambda lex: lex.ledger.additions) + r")(?![\w'’])")
_SENTENCE_END = re.compile(r"[.!?\n](?:\s|$)")
# What opens the value after a cue ("it's", "c'est", "het is", "it's spelled").
_LEAD = re.compile(
    r"(?i)[\s:,.-]*(?:(?:" + either(lambda lex: (*lex.names.it_is, *lex.requests.leads)) + r")(?!\w)[\s:,]*){0,3}"
)
_SHAPED = ("username", "member_level")
# Kinds read bare after a cue, by their shape alone.
BARE = ("name", *_SHAPED)
# Kinds of a value read by its shape alone, which a correction may turn into the kind it corrects.
_GENERIC = frozenset({"number", "reference"})
# How far a cue reaches to the value it introduces.
_REACH = 80


def cues(text: str, stated: bool) -> tuple[int, ...]:
    """Where correction cues end in ``text``; ``stated``: the agent's turn just before stated a value,
    so that a denial opening the reply is one too."""
    denial = _DENIAL.match(text) if stated else None
    return tuple(sorted({*_cue_ends(text), *([denial.end()] if denial else [])}))


@lru_cache(maxsize=1024)
def _cue_ends(text: str) -> tuple[int, ...]:
    return tuple(m.end() for m in _CUE.finditer(text))


def cue_before(text: str, start: int, ends: Sequence[int]) -> int | None:
    """The end of the cue that introduces the value at ``start``: before it in the same sentence,
    near enough, with no word of addition between them."""
    for end in reversed(ends):
        if end <= start and start - end <= _REACH:
            between = text[end:start]
            if _SENTENCE_END.search(between) or _ADDITION.search(between):
                return None
            return end
    return None


def added(text: str, start: int) -> bool:
    """Whether a word of addition stands before the value at ``start`` in its sentence ("I also
    have a savings account, ...", "ich habe noch ein Konto: ..."): another value, no replacement."""
    sentence = max(text.rfind(c, 0, start) for c in ".!?\n") + 1
    return bool(_ADDITION.search(text, sentence, start))


def target(e: Entity, candidates: Sequence[LedgerEntry], agent_turn: int | None) -> LedgerEntry | None:
    """The latest earlier value that ``e`` corrects, among ``candidates`` (oldest first): the
    customer's own, or one the agent stated in ``agent_turn`` (a read-back)."""
    for c in reversed(candidates):
        own = c.speaker == "customer" and (c.slot.startswith(f"{c.kind}:customer") or family(c.kind) == "id")
        if (own or c.turn == agent_turn) and _could_correct(e, c):
            return c
    return None


def _could_correct(e: Entity, c: LedgerEntry) -> bool:
    if e.kind in BARE or c.kind in BARE:
        return e.kind == c.kind
    fam = family(e.kind)
    if fam != family(c.kind) or c.kind == "number":
        return False
    if e.kind != c.kind and not {e.kind, c.kind} & _GENERIC:
        return False  # "my order is ..., sorry, my account is ...": each has its own label
    if fam == "id":
        return abs(len(e.norm) - len(c.norm)) <= 2
    return fam in ("phone", "email")


def bare(text: str, cue_end: int, given: Sequence[str]) -> Entity | None:
    """A name, username or level given bare after a cue, of a kind the customer ``given`` before
    (their kinds, oldest first): the latest kind whose shape fits. A username of letters only must
    end its clause ("hmueller", not "anna" of "anna schmitt")."""
    lead = _LEAD.match(text, cue_end)
    pos = lead.end() if lead else cue_end
    for kind in dict.fromkeys(reversed([k for k in given if k in BARE])):
        if kind == "name":
            span = uncued.name_at(text, pos)
        elif kind == "username":
            span = handles.username_at(text, pos)
            if span is not None and text[span[0] : span[1]].isalpha() and not _CLAUSE_END.match(text, span[1]):
                span = None
        else:
            span = handles.level_at(text, pos)
        if span is not None:
            value = text[span[0] : span[1]]
            norm = names.norm(value) if kind == "name" else value.casefold()
            return Entity(kind, value, span[0], span[1], norm)
    return None


_CLAUSE_END = re.compile(r"[^\S\n]*(?:$|[\n,.;!?])")
