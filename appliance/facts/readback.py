"""Read-back questions: which facts a customer asks to hear again, and whether an answer gave them.

"Can you read back the account number I gave you?", "What name did I give you?", "Wie war meine
Kontonummer?": the answer must hold the ledger's value. Small responders often do not give it back
even when it is in the prompt ("Yes, I can read back the account number you gave me."), so the
turn layer puts the asked facts right before the question (``PromptSpec.readback``) and, when the
answer still lacks them, repairs it: a retry with the value named, else a fixed phrase built from
the ledger (:func:`phrase`).

A read-back question has two parts, both found by code: a *topic* (account number, name, date of
birth, phone number, reference...), which says which ledger kinds to read, and a *request* for
something said before ("read back", "remind me", "did I give you", "what was my", "again" after a
question word), in every language of the lexicons (:mod:`appliance.lexicon`; ``facts.readback_cues``
in the settings adds or replaces a language's words, compiled once in
:class:`~appliance.facts.vocabulary.Vocabulary`). A topic without a request ("I need a new card")
is not one, nor is a request without a topic. The request's language is the language of the fixed
phrase.

Pure functions over text and ledger entries; imports only leaves and its own folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from appliance.facts.entities import compact, extract, index_keys, lookup_keys
from appliance.facts.vocabulary import Cues, readback_form, vocabulary
from appliance.lexicon import LEXICONS
from appliance.lexicon.text import sentences
from appliance.types import Entity, Finding, LedgerEntry, current_facts

# The languages of the fixed phrase; any other is answered in English.
LANGUAGES = tuple(code for code, lexicon in LEXICONS.items() if lexicon.readback.labels)

# Most facts read back per topic: the newest ones (a prompt part, and a phrase, stay short).
MAX_FACTS = 3


@dataclass(frozen=True)
class Topic:
    """What can be asked back: the ledger kinds that hold it, best first, and whether the
    customer's own value (slot ``kind:customer``) is meant when there is one."""

    name: str
    kinds: tuple[str, ...]
    fallback: tuple[str, ...] = ()
    own: bool = False


# What each topic reads from the ledger; the topics' matching order is ``appliance.types.READBACK_TOPICS``.
_BY_NAME = {
    t.name: t
    for t in (
        Topic("birthdate", ("birthdate", "dob", "birthday"), fallback=("date",), own=True),
        Topic("email", ("email",), own=True),
        Topic("phone", ("phone",), own=True),
        Topic("postcode", ("postcode",), own=True),
        Topic("address", ("address",), own=True),
        Topic("customer_id", ("customer_id",), fallback=("account", "number"), own=True),
        Topic("member_number", ("member_number",), fallback=("account", "number"), own=True),
        Topic("member_level", ("member_level",), own=True),
        Topic("username", ("username",), own=True),
        Topic("ticket", ("ticket",), fallback=("case", "reference", "number")),
        Topic("card", ("card",), fallback=("account",), own=True),
        Topic("account", ("account",), fallback=("number", "card"), own=True),
        Topic("train", ("train",), fallback=("reference",)),
        Topic("order", ("order",), fallback=("reference", "number")),
        Topic("case", ("case",), fallback=("ticket", "reference", "number")),
        Topic("reference", ("reference",), fallback=("order", "case", "number")),
        Topic("amount", ("amount",)),
        Topic("name", ("name",), own=True),
        Topic("date", ("date",)),
        Topic("time", ("time",)),
    )
}


@dataclass(frozen=True)
class Request:
    """A read-back question: the topics asked for, in the order asked, the question's language,
    whether it asks for the first value given ("what name did I give you at the start?"), and
    whether it points at older values ("the phone number you gave me earlier")."""

    topics: tuple[str, ...]
    language: str = "en"
    first: bool = False
    earlier: bool = False


@dataclass(frozen=True)
class Asked:
    """One topic asked for and the ledger's current facts that answer it, oldest first."""

    topic: str
    facts: tuple[LedgerEntry, ...]


def request(message: str, cues: Cues = None) -> Request | None:
    """The read-back request in ``message``, if it is one: a topic and a request in one sentence
    (which ends at ``;`` too, so that a topic and a request in two clauses do not make one)."""
    patterns = vocabulary(cues).readback
    topics: list[str] = []
    language = ""
    first = earlier = False
    for sentence in sentences(readback_form(message), ".?!;"):
        lang = patterns.language(sentence)
        if lang is None:
            continue
        found = [m.lastgroup for m in patterns.topics.finditer(sentence) if m.lastgroup]
        if found:
            topics.extend(t for t in found if t not in topics)
            language = language or lang
            first = first or bool(patterns.first.search(sentence))
            earlier = earlier or bool(patterns.earlier.search(sentence))
    return Request(tuple(topics), language or "en", first, earlier or first) if topics else None


def wanted(req: Request | None, ledger: Sequence[LedgerEntry]) -> tuple[Asked, ...]:
    """For each topic of ``req``, the ledger's facts that answer it: its current facts
    (``appliance.types.current_facts``), or, when the question asks for the first value given, the
    first entry of each slot (a corrected or later name does not hide the one given at the start).

    A topic reads its own kinds first and its fallback kinds only when those hold nothing (a bare
    8-digit run is a ``number`` until something says it is an account); for the customer's own
    things (name, phone, account...) their own value is meant when there is one, not the agent's
    name or a shop's phone. Several current values of a kind (two accounts, each with its label) are
    all given, up to :data:`MAX_FACTS`: the newest, or the oldest when the question points back
    ("earlier", "at the start"). Topics with nothing in the ledger are left out.
    """
    if req is None:
        return ()
    if req.first:
        ordered = sorted(ledger, key=lambda e: e.turn)
        facts: Sequence[LedgerEntry] = list({(e.slot or f"{e.kind}={e.norm}"): e for e in reversed(ordered)}.values())
        facts = sorted(facts, key=lambda e: e.turn)
    else:
        facts = current_facts(ledger)
    out: list[Asked] = []
    taken: set[tuple[str, str]] = set()
    for name in req.topics:
        topic = _BY_NAME[name]
        chosen: list[LedgerEntry] = []
        for kinds in (topic.kinds, topic.fallback):
            chosen = [e for e in facts if e.kind in kinds or e.slot.split(":")[0].split("=")[0] in kinds]
            if chosen:
                break
        if topic.own:
            own = [e for e in chosen if _owned(e)]
            chosen = own or chosen
        chosen = [e for e in chosen if (e.kind, e.norm or e.value) not in taken]
        chosen = list({(e.kind, e.norm or e.value): e for e in chosen}.values())  # a value restated once
        chosen = chosen[:1] if req.first else chosen[:MAX_FACTS] if req.earlier else chosen[-MAX_FACTS:]
        if chosen:
            taken.update((e.kind, e.norm or e.value) for e in chosen)
            out.append(Asked(name, tuple(chosen)))
    return tuple(out)


def _owned(e: LedgerEntry) -> bool:
    """Whether ``e`` is the customer's own value (slot ``kind:customer``, with or without a label)."""
    return e.slot.split("=")[0].split(":")[1:2] == ["customer"]


def facts_of(asked: Sequence[Asked]) -> tuple[LedgerEntry, ...]:
    """The facts of every topic asked, by turn (the prompt's read-back part)."""
    return tuple(sorted({e: None for a in asked for e in a.facts}, key=lambda e: e.turn))


def states(answer: str, fact: LedgerEntry) -> bool:
    """Whether ``answer`` states ``fact``: its characters (without case, spaces, punctuation or
    accents), or an entity the normaliser equates ("$500" and "500 dollars", "10/08/1980" and
    "October 8, 1980")."""
    value = compact(fact.value)
    if value and value in compact(answer):
        return True
    return bool(fact.norm) and any(same_value(fact.kind, fact.norm, e) for e in extract(answer))


_YEAR = re.compile(r"(?:19|20)\d\d")
# A date of birth is a date in another role: "born on October 8, 1980" states "10/08/1980".
_DATE_KINDS = {"birthdate": "date", "dob": "date", "birthday": "date"}


def same_value(kind: str, norm: str, entity: Entity) -> bool:
    """Whether ``entity`` is the value ``kind``/``norm`` in another form, as the checker matches a
    quoted fact (:func:`~appliance.facts.entities.lookup_keys` against ``index_keys``); two dates
    that both carry a year must agree on it."""
    said = set(index_keys(_DATE_KINDS.get(kind, kind), norm))
    keys = [k for k in lookup_keys(_DATE_KINDS.get(entity.kind, entity.kind), entity.norm) if k in said]
    if not keys:
        return False
    said_year, its_year = _YEAR.search(norm), _YEAR.search(entity.norm)
    if keys[0].startswith("date:") and said_year and its_year:
        return said_year.group() == its_year.group()
    return True


def lacking(answer: str, asked: Sequence[Asked]) -> tuple[Asked, ...]:
    """The topics of which ``answer`` states none of the ledger's values."""
    return tuple(a for a in asked if not any(states(answer, e) for e in a.facts))


def findings(asked: Sequence[Asked]) -> tuple[Finding, ...]:
    """One ``missing`` finding per fact an answer should have read back; the entity is the ledger's
    value (``start``/``end`` -1: it is not in the answer)."""
    return tuple(
        Finding(Entity(e.kind, e.value, -1, -1, e.norm), "missing", expected=e.value) for a in asked for e in a.facts
    )


def phrase(asked: Sequence[Asked], language: str = "en") -> str:
    """The ledger's answer in a fixed phrase: "Your account number is 95381901." (in ``language``
    when it is one of :data:`LANGUAGES`, else English); the values exactly as they were said."""
    words = LEXICONS[language if language in LANGUAGES else "en"].readback
    one, many = words.verbs
    out = []
    for a in asked:
        singular, plural = words.labels[a.topic]
        values = [shown(e) for e in a.facts]
        listed = values[0] if len(values) == 1 else f"{', '.join(values[:-1])} {words.conjunction} {values[-1]}"
        label = singular if len(values) == 1 else plural
        if "{}" in label:  # a phrase of its own around the values ("Your card ends in {}.")
            out.append(label.format(listed))
        else:
            out.append(f"{label} {one if len(values) == 1 else many} {listed}.")
    return " ".join(out)


def shown(e: LedgerEntry) -> str:
    """A value as a read-back gives it: with what tells it apart, "11112222 (checking)"."""
    extra = ", ".join(x for x in (e.label, e.subject) if x)
    return f"{e.value} ({extra})" if extra else e.value


def instruction(asked: Sequence[Asked]) -> str:
    """The line added to a read-back question's instruction: the values asked for, to be stated.

    Said of the customer in the third person ("the customer's name: Brian White"): with "your name"
    a small responder answers "My name is Brian White.", and with "read back what they gave" it
    repeats the instruction ("Sure, I can read back what the customer gave earlier."). "Not a yes
    or no": greedy, it answered "Can you read back my account number?" with "Yes, I can read back
    the account number you gave me."
    """
    values = "; ".join(f"{_about(a.topic)}: {', '.join(shown(e) for e in a.facts)}" for a in asked)
    return f"Reply with the values themselves, not a yes or no, written exactly as here: {values}."


def _about(topic: str) -> str:
    label = LEXICONS["en"].readback.labels[topic][0].split(" ", 1)[1]  # "Your account number" -> "account number"
    label = label.split(" ")[0] if "{}" in label else label  # "Your card ends in {}." -> "card"
    return f"the customer's {label}" if _BY_NAME[topic].own else f"the {label}"
