"""The fact ledger: every identifier, amount, date, name and commitment said in a conversation, by code.

The ledger is what keeps exact facts alive when older turns are summarised: it is extracted from
each turn with :mod:`appliance.entities` (never by a model), so an order number from turn 3 is still
character for character in the prompt at turn 90.

Slots say which facts replace one another. Things a customer has only one of at a time (their name,
phone number, email, postcode, account or card) have one slot per speaker, e.g. ``phone:customer``:
a corrected number supersedes the old one in ``appliance.types.current_facts``, while both stay stored. Everything
else (references, amounts, dates, a restaurant's phone number...) is many-valued: a customer can
hold two bookings, so each distinct value has its own slot, ``reference=w9945xis``; repeating a
value only moves it to its latest mention.
"""

from __future__ import annotations

from collections.abc import Iterable

from appliance.facts.entities import extract, introduces_self
from appliance.types import LedgerEntry, Role, Turn

# Kinds of which a speaker has one current value (a correction replaces the previous one).
SINGLE_VALUED = frozenset({"name", "phone", "email", "postcode", "account"})


def slot_for(kind: str, norm: str, speaker: Role) -> str:
    """``kind:speaker`` for single-valued personal facts, else ``kind=norm`` (one slot per value).

    An agent states many phone numbers and postcodes (of shops, hotels, taxis), so only the
    customer's own are single-valued; the agent's own name is single-valued too.
    """
    if kind in SINGLE_VALUED and (speaker == "customer" or kind == "name"):
        return f"{kind}:{speaker}"
    return f"{kind}={norm}"


def entries_for(turn: Turn) -> tuple[LedgerEntry, ...]:
    """The ledger entries of one turn, in the order they occur in its text.

    A name is filed under the person it names: the speaker's own ("my name is Dana") or the other
    party's ("Thanks, Dana" from the agent names the customer).
    """
    out = []
    for e in extract(turn.text):
        owner: Role = turn.role
        if e.kind == "name" and not introduces_self(turn.text, e):
            owner = "agent" if turn.role == "customer" else "customer"
        out.append(
            LedgerEntry(
                kind=e.kind,
                value=e.text,
                turn=turn.index,
                speaker=turn.role,
                slot=slot_for(e.kind, e.norm, owner),
                norm=e.norm,
            )
        )
    return tuple(out)


def entries(turns: Iterable[Turn]) -> tuple[LedgerEntry, ...]:
    """All entries of a transcript, oldest first."""
    return tuple(entry for turn in turns for entry in entries_for(turn))


def superseded(entries: Iterable[LedgerEntry]) -> tuple[LedgerEntry, ...]:
    """Entries replaced by a later, different value of their slot (the old phone number)."""
    items = list(entries)
    last = {e.slot: e.norm for e in items}
    return tuple(e for e in items if last[e.slot] != e.norm)


def render(entries: Iterable[LedgerEntry]) -> str:
    """One line per fact, as the prompt's ledger part shows them: ``- reference: W9945XIS (turn 5, agent)``."""
    return "\n".join(f"- {e.kind}: {e.value} (turn {e.turn}, {e.speaker})" for e in entries)
