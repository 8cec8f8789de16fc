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
read by its shape when the customer has given one before, in an earlier turn or earlier in the turn,
and so are a card's last digits, alone or after the words of its ending ("the card ending 4410,
actually no it was 4401", "Korrektur: Endung 4401", "pardon, elle finit par 4401").

A value whose kind the correction does not name (no word of a kind between the cue and the value:
"correction: ending 4401", "sorry, it ends in 4401 not 4410", "actually the 14th") has its kind from
its shape alone, a guess: it corrects the latest value of the same shape instead (a tail of four
digits, a code of the same letters and digits, a date, an amount, a percentage, a time), the customer's own or
one the agent stated just before ("Leaving on March 3rd?" → "Actually, the 2nd"). So the card ending 4410 is corrected rather than an account
begun, and digits a phone's shape fits correct an identifier of as many digits ("account number
40018823 sorry 40018832"). A plain number is no such value: a meter reading is not corrected by
the next number after "sorry".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from appliance.facts import handles, names, uncued
from appliance.facts.matching import family
from appliance.facts.text import compact, phrases
from appliance.lexicon import Lexicon, either, either_joined
from appliance.types import Entity, LedgerEntry

_CUE = re.compile(r"(?i)(?<![\w'’])(?:" + either(lambda lex: lex.ledger.corrections) + r")(?![\w'’])")
_DENIAL = re.compile(r"(?i)^[\W_]*(?:" + either(lambda lex: lex.ledger.denials) + r")(?![\w'’])")
_ADDITION = re.compile(r"(?i)(?<![\w'’])(?:" + either(lambda lex: lex.ledger.additions) + r")(?![\w'’])")
_SENTENCE_END = re.compile(r"[.!?\n](?:\s|$)")
# What opens the value after a cue ("it's", "c'est", "het is", "it's spelled", "no it was").
_LEAD = re.compile(
    r"(?i)[\s:,.-]*(?:(?:"
    + either(lambda lex: (*lex.names.it_is, *lex.requests.leads, *lex.ledger.denials))
    + r")(?!\w)[\s:,]*){0,3}"
)
_SHAPED = ("username", "member_level")
# Kinds read bare after a cue, by their shape alone.
BARE = ("name", *_SHAPED)
# ... and a card's last digits, which correct only a card ("card ending 4410, actually no it was 4401").
_READ_BARE = (*BARE, "card")
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


def target(
    e: Entity, candidates: Sequence[LedgerEntry], agent_turn: int | None, *, named: bool = True
) -> LedgerEntry | None:
    """The latest earlier value that ``e`` corrects, among ``candidates`` (oldest first): the
    customer's own, or one the agent stated in ``agent_turn`` (a read-back). Where the correction
    ``named`` no kind (:func:`names_kind`), the latest value of ``e``'s shape, whatever its kind; where
    it named one, of that kind and shape ("sorry, the date is the 14th")."""
    for c in reversed(candidates):
        mine = c.speaker == "customer"
        own = mine and (c.slot.startswith(f"{c.kind}:customer") or family(c.kind) == "id")
        if (own or c.turn == agent_turn) and _could_correct(e, c):
            return c
        if (mine or c.turn == agent_turn) and _same_shape(e, c) and (not named or e.kind == c.kind):
            return c
    return None


def names_kind(text: str, cue_end: int, e: Entity) -> bool:
    """Whether a word of a kind stands between the cue that ends at ``cue_end`` and the value ``e``
    ("sorry, my account ending 4401", "Korrektur: die Kundennummer ist ..."): then the value is of
    the kind it names, not of the shape it has."""
    return _KIND_WORD.search(text, cue_end, e.start) is not None


def _kind_words(lex: Lexicon) -> tuple[str, ...]:
    """The words of ``lex`` that name a kind of value: the labels of codes, cards, handles, levels,
    phones and postcodes, the nouns of requests and the words that tell values of a kind apart."""
    ent = lex.entities
    return (
        *(p for words in ent.labels.values() for p in words),
        *ent.card_words,
        *ent.username_labels,
        *ent.level_labels,
        phrases((*ent.phone_words, *ent.birth_cues)),
        *(p for words in lex.requests.nouns.values() for p in words),
        *(re.escape(p) for p in lex.requests.cues.get("postcode", ())),
        *lex.secrets.other_facts,
        *(p for words in lex.ledger.value_labels.values() for p in words),
    )


# A word of a kind, with the compounds' "nummer" and a plural ending; in a language that joins nouns,
# at the end of a longer word too ("Handyvertrag").
_KIND_WORD = re.compile(
    r"(?i)(?<![\w-])(?:"
    + "|".join(
        (
            either(_kind_words),
            r"[^\W\d_]+(?:" + either_joined(_kind_words) + ")",
        )
    )
    + r")(?:"
    + either(lambda lex: lex.entities.compounds)
    + r")?(?:s|e?n|es)?(?![\w-])"
)
# Families whose values keep their shape when retyped.
_SHAPED_FAMILIES = frozenset({"id", "phone", "email", "date", "time", "amount", "percent"})


def _shape(kind: str, value: str) -> str:
    """What a value looks like, whatever its kind: a code's letters and digits as ``A`` and ``9``
    ("4401" and "4410" are ``9999``; digits a phone's shape fits too), else its family's name."""
    fam = family(kind)
    if fam == "id" or (fam == "phone" and value.isdigit()):
        return re.sub(r"\d", "9", re.sub(r"[^\W\d_]", "A", compact(value)))
    return fam


def _same_shape(e: Entity, c: LedgerEntry) -> bool:
    if e.kind in BARE or c.kind in BARE or c.kind == "number" or family(c.kind) not in _SHAPED_FAMILIES:
        return False
    return _shape(e.kind, e.text) == _shape(c.kind, c.value)


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
    """A name, username, level or a card's four last digits given bare after a cue, of a kind the
    customer ``given`` before (their kinds, oldest first): the latest kind whose shape fits. A
    username of letters only must end its clause ("hmueller", not "anna" of "anna schmitt"); a name
    may follow a few words later after "it's", closing its clause ("sorry autocorrect lol its Jon
    Smythe")."""
    lead = _LEAD.match(text, cue_end)
    pos = lead.end() if lead else cue_end
    for kind in dict.fromkeys(reversed([k for k in given if k in _READ_BARE])):
        if kind == "name":
            span = uncued.name_at(text, pos) or _name_later(text, pos)
        elif kind == "username":
            span = handles.username_at(text, pos)
            if span is not None and text[span[0] : span[1]].isalpha() and not _CLAUSE_END.match(text, span[1]):
                span = None
        elif kind == "card":
            m = _CARD_DIGITS.match(text, pos)
            span = (m.start(), m.end()) if m is not None else _tail_after(text, pos)
        else:
            span = handles.level_at(text, pos)
        if span is not None:
            value = text[span[0] : span[1]]
            norm = names.norm(value) if kind == "name" else value.casefold()
            return Entity(kind, value, span[0], span[1], norm)
    return None


_CLAUSE_END = re.compile(r"[^\S\n]*(?:$|[\n,.;!?])")
_IT_IS = re.compile(r"(?i)(?<![\w'’])(?:" + either(lambda lex: lex.names.it_is) + r")(?!\w)[^\S\n]*")


def _name_later(text: str, pos: int) -> tuple[int, int] | None:
    """A name after "it's" a few words past ``pos``, in the same clause, closing it."""
    m = _IT_IS.search(text, pos, min(len(text), pos + 40))
    if m is None or any(c in text[pos : m.start()] for c in ".,;!?\n"):
        return None
    span = uncued.name_at(text, m.end())
    return span if span is not None and _CLAUSE_END.match(text, span[1]) else None


# A card's last digits alone in their clause.
_CARD_DIGITS = re.compile(r"\d{4}(?=[^\S\n]*(?:$|[\n,.;!?]))")


def _tail_after(text: str, pos: int) -> tuple[int, int] | None:
    """Last digits named by the words of a card's ending without a card word, in the clause after
    ``pos`` ("Korrektur: Endung 4401", "perdón, termina en 4401"); not where a kind is named
    ("mein Konto mit der Endung 5521")."""
    stop = _CLAUSE_BREAK.search(text, pos)
    end = stop.start() if stop else len(text)
    span = next(((s, e) for s, e in handles.tails(text) if pos <= s and e <= end), None)
    return span if span is not None and _KIND_WORD.search(text, pos, span[0]) is None else None


_CLAUSE_BREAK = re.compile(r"[\n,.;!?]")
