"""Short dialogues for the fact tests: who said what, and what the ledger made of it."""

from __future__ import annotations

from appliance.facts.ledger import entries
from appliance.types import LedgerEntry, Turn, current_facts

# The kinds the written tables score (dates and times are read by their own tests).
SCORED = ("name", "username", "customer_id", "member_number", "member_level", "ticket", "phone", "account", "card")


def ledger(*said: tuple[str, str]) -> tuple[LedgerEntry, ...]:
    return entries(tuple(Turn("s", i, role, text) for i, (role, text) in enumerate(said)))  # type: ignore[arg-type]


def facts(*said: tuple[str, str], kinds: tuple[str, ...] = SCORED) -> list[tuple[str, str]]:
    """(kind, value) of the ledger's entries of ``kinds``."""
    return [(e.kind, e.value) for e in ledger(*said) if e.kind in kinds]


def every(*said: tuple[str, str], kinds: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(kind, value) of the ledger's entries, without dates and times (or only ``kinds``)."""
    return [(e.kind, e.value) for e in ledger(*said) if (e.kind in kinds if kinds else e.kind not in ("date", "time"))]


def current(found: tuple[LedgerEntry, ...], kind: str) -> list[str]:
    """The values of ``kind`` that are current in ``found``."""
    return [e.value for e in current_facts(found) if e.kind == kind]


def customer(text: str) -> tuple[str, str]:
    return ("customer", text)


def agent(text: str) -> tuple[str, str]:
    return ("agent", text)
