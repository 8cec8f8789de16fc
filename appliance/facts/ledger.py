"""The fact ledger: every identifier, amount, date, name and commitment said in a conversation, by code.

The ledger is what keeps exact facts alive when older turns are summarised: it is extracted from
each turn with :mod:`appliance.facts.entities` (never by a model), so an order number from turn 3 is still
character for character in the prompt at turn 90.

Slots say which facts replace one another. Things a customer has only one of at a time (their name,
phone number, email, postcode, account or card) have one slot per speaker, e.g. ``phone:customer``:
a corrected number supersedes the old one in ``appliance.types.current_facts``, while both stay stored. Everything
else (references, amounts, dates, a restaurant's phone number...) is many-valued: a customer can
hold two bookings, so each distinct value has its own slot, ``reference=w9945xis``; repeating a
value only moves it to its latest mention.

A customer's reply is read with the agent's turn before it (:mod:`appliance.facts.slots`): "Yes,
Sarah Brown." after "Could I get your full name?" is the customer's name. Secrets are never values
here: a PIN (or its placeholder, once masked) is recorded as ``secret: PIN given`` with its turn,
and a full card number by its last four digits.
"""

from __future__ import annotations

from collections.abc import Iterable

from appliance.facts import names, secrets, slots
from appliance.facts.text import digits
from appliance.facts.vocabulary import Cues
from appliance.types import Entity, LedgerEntry, Role, Turn

# Kinds of which a speaker has one current value (a correction replaces the previous one).
SINGLE_VALUED = frozenset({"name", "phone", "email", "postcode", "account", "birthdate", "address"})


def slot_for(kind: str, norm: str, speaker: Role) -> str:
    """``kind:speaker`` for single-valued personal facts, else ``kind=norm`` (one slot per value).

    An agent states many phone numbers and postcodes (of shops, hotels, taxis), so only the
    customer's own are single-valued; the agent's own name is single-valued too.
    """
    if kind in SINGLE_VALUED and (speaker == "customer" or kind == "name"):
        return f"{kind}:{speaker}"
    return f"{kind}={norm}"


def entries_for(turn: Turn, asked: Turn | None = None, *, cues: Cues = None) -> tuple[LedgerEntry, ...]:
    """The ledger entries of one turn, in the order they occur in its text.

    ``asked`` is the turn just before (the agent's request that a customer's reply answers); ``cues``
    the compiled request cues (:class:`~appliance.facts.vocabulary.Vocabulary`; None: the lexicons').
    A name is filed under the person it names: the speaker's own ("my name is Dana", a reply to
    "your name?"), the other party's ("Thanks, Dana" from the agent names the customer), or, for a
    name spoken of ("your appointment with Dr. Johnson"), its own slot like any many-valued fact.
    """
    customer = turn.role == "customer"
    before = asked.text if asked is not None and asked.role != turn.role else None
    reading = slots.read(turn.text, before, customer=customer, cues=cues)
    out = []
    for e in reading.entities:
        kind, value, norm = _recorded(e)
        if kind == "secret":
            slot = f"secret={norm}"
        elif kind == "name" and e.start not in reading.own_names:
            whose = names.role(turn.text, e.start, e.end)
            other: Role = "agent" if customer else "customer"
            slot = f"name={norm}" if whose == "other" else slot_for(kind, norm, turn.role if whose == "self" else other)
        else:
            slot = slot_for(kind, norm, turn.role)
        out.append(LedgerEntry(kind=kind, value=value, turn=turn.index, speaker=turn.role, slot=slot, norm=norm))
    return tuple(out)


def _recorded(e: Entity) -> tuple[str, str, str]:
    """(kind, value, norm) as the ledger keeps an entity: a secret only as the fact that one was given."""
    if e.kind != "secret":
        return e.kind, e.text, e.norm
    if e.norm == "card":
        last4 = digits(e.text)[-4:]
        return "account", f"card ending {last4}", last4
    return "secret", f"{secrets.LABELS.get(e.norm, e.norm)} given", e.norm


def entries(turns: Iterable[Turn], *, cues: Cues = None) -> tuple[LedgerEntry, ...]:
    """All entries of a transcript, oldest first; each turn read with the one before it."""
    out: list[LedgerEntry] = []
    previous: Turn | None = None
    for turn in turns:
        out.extend(entries_for(turn, previous, cues=cues))
        previous = turn
    return tuple(out)


def superseded(entries: Iterable[LedgerEntry]) -> tuple[LedgerEntry, ...]:
    """Entries replaced by a later, different value of their slot (the old phone number)."""
    items = list(entries)
    last = {e.slot: e.norm for e in items}
    return tuple(e for e in items if last[e.slot] != e.norm)


def render(entries: Iterable[LedgerEntry]) -> str:
    """One line per fact, as the prompt's ledger part shows them: ``- reference: W9945XIS (turn 5, agent)``."""
    return "\n".join(f"- {e.kind}: {e.value} (turn {e.turn}, {e.speaker})" for e in entries)
