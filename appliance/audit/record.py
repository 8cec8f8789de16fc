"""Audit records: what happened, by whom, sealed into a hash chain.

A record holds identifiers, fixed words, counts and times; the customer's words only where
``audit.text`` names them. Its line is canonical JSON (sorted keys, no spaces, ASCII with every other
character escaped), so any tool can recompute ``hash = sha256(line without "hash")``; each record's
``prev`` is the hash of the one before, and the first record of a chain has :data:`GENESIS`.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from appliance.types import Floor, TurnRecord

GENESIS = "0" * 64
VERSION = 1
# Customer text a record may carry, by name (``audit.text``); none by default.
TEXTS = ("message", "answer", "reply")

# Who acts, where the store is not told: set by the edge around an operator's call (:func:`acting`).
_ACTOR: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("audit_actor", default=None)


@dataclass(frozen=True)
class AuditEvent:
    """One answer or operator action, before it is numbered and chained. Empty fields are left out of
    the line; ``text`` is only what ``audit.text`` allows."""

    action: str  # answer, reply, floor, summary, summary_paused, summary_resumed, erasure, document
    session: str
    actor: str  # a client key (never a token), or appliance, summarizer, retention
    role: str  # model, operator, kiosk, integration, customer, person, system
    turn: int | None = None
    stage: str = ""
    model: str = ""
    guard: Mapping[str, Any] = field(default_factory=dict)
    sources: tuple[Mapping[str, Any], ...] = ()
    floor: Mapping[str, Any] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)
    erased: Mapping[str, Any] = field(default_factory=dict)
    document: Mapping[str, Any] = field(default_factory=dict)
    text: Mapping[str, str] = field(default_factory=dict)


def canonical(body: Mapping[str, Any]) -> str:
    """The one serialization that is hashed: hostile text stays escaped data, on one ASCII line."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def digest(body: Mapping[str, Any]) -> str:
    """The hash of a record: sha256 over its canonical line without ``hash`` (``prev`` included)."""
    return hashlib.sha256(canonical({k: v for k, v in body.items() if k != "hash"}).encode("ascii")).hexdigest()


def seal(event: AuditEvent, *, seq: int, prev: str, at: float) -> tuple[str, str]:
    """The record's line and hash: ``event`` numbered ``seq``, stamped ``at`` and linked to ``prev``."""
    body: dict[str, Any] = {"v": VERSION, "seq": seq, "at": round(at, 6), "prev": prev}
    for name, value in vars(event).items():
        if value not in ("", None, (), {}):
            body[name] = value if not isinstance(value, tuple) else list(value)
    body["hash"] = digest(body)
    return canonical(body), body["hash"]


@contextmanager
def acting(actor: str, role: str) -> Iterator[None]:
    """Records written in this block (on this thread) name ``actor`` and ``role``: an operator's call."""
    token = _ACTOR.set((actor, role))
    try:
        yield
    finally:
        _ACTOR.reset(token)


def actor(default: tuple[str, str]) -> tuple[str, str]:
    """Who acts: what the edge set with :func:`acting`, else ``default``."""
    return _ACTOR.get() or default


# builders: from what the store writes ---------------------------------------------------------------


def answer(session: str, turn: int, record: TurnRecord, texts: Mapping[str, str]) -> AuditEvent:
    """An answer: its stage, model, what the guard did and where the text came from, and the passages it
    cited (names, not text)."""
    check, grounding = record.check, record.knowledge
    guard: dict[str, Any] = {
        "action": check.action,
        "source": record.source,
        "findings": len(check.findings),
        "checked": check.checked,
    }
    sources: tuple[Mapping[str, Any], ...] = ()
    if grounding is not None:
        guard.update(fetch=grounding.decision.fetch, not_found=grounding.not_found)
        sources = tuple({"doc": c.doc, "chunk": c.chunk_id, "location": c.location} for c in grounding.sources)
    return AuditEvent(
        "answer", session, "appliance", "model", turn, record.stage, record.model, guard, sources, text=texts
    )


def floor_change(session: str, before: Floor, after: Floor, role: str) -> AuditEvent:
    """A change of who has the conversation; its reason is a fixed word."""
    moved = {"from": before.state, "to": after.state, "reason": after.reason}
    return AuditEvent("floor", session, after.by, role, floor=moved)


def summary(session: str, version: int, author: str, status: str, covers_to: int) -> AuditEvent:
    """A summary version: who wrote it and what it covers (never its text)."""
    who = actor(("", "operator")) if author == "operator" else ("summarizer", "model")
    facts = {"version": version, "author": author, "status": status, "covers_to": covers_to}
    return AuditEvent("summary", session, *who, summary=facts)


def erasure(session: str, reason: str, turns: int) -> AuditEvent:
    """An erasure: its own record, without content (the records before it keep only ids and words)."""
    who = ("retention", "system") if reason == "retention" else actor(("", "operator"))
    return AuditEvent("erasure", session, *who, erased={"reason": reason, "turns": turns})


def document(change: str, key: str, sha256: str = "", chunks: int = 0) -> AuditEvent:
    """An operator's document ``added`` (or replaced) or ``removed``: its key and content hash, never its text."""
    facts = {"change": change, "key": key, "sha256": sha256, "chunks": chunks}
    return AuditEvent("document", "", *actor(("", "operator")), document={k: v for k, v in facts.items() if v})
