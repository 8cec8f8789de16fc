"""The branch floor's tables (:func:`~appliance.store.migrations.m008_floor`): each conversation's
state, the audit trail of its changes, and the event log of everything stored.

Events are rows, written in the transaction of what they report (a turn, an answer, a summary
version, a state change, an erasure), so an event exists exactly when its fact does: a listener that
resumes after event ``n`` asks for ``id > n`` and misses nothing and gets nothing twice, across a
dropped connection or a restart of the daemon. The store writes through one connection under one
lock, so ids are committed in their order and a reader never sees ``n + 1`` before ``n``. An event
of a turn carries the turn's text (already masked, like the turn): the log is the conversation's
second copy, deleted with it by an erasure, which leaves one ``erased`` event without content.

After a transaction that wrote events, the store calls its ``after_events`` hooks with what it
logged (:class:`Logged`): the only hook after a write. The daemon's event hub wakes its listeners
there, and the summary worker and the warm-up take the sessions with a new turn. A hook must not
block: it runs on the writer's thread.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from appliance.audit.record import AuditEvent, floor_change
from appliance.errors import SessionNotFound
from appliance.types import Floor, StoredEvent, Turn


@dataclass(frozen=True)
class Logged:
    """What one commit logged: each event's session and kind, in order."""

    events: tuple[tuple[str, str], ...]

    def sessions(self, *kinds: str) -> tuple[str, ...]:
        """The sessions with an event of one of ``kinds``, each once, in the order first logged."""
        return tuple(dict.fromkeys(session for session, kind in self.events if kind in kinds))


@dataclass(frozen=True)
class FloorChange:
    """A change of a conversation's state, decided inside the writing transaction: ``decide`` maps
    the current state to the next (the same value: no change) or raises to refuse; ``by_role`` is
    the caller's role, for the audit trail (the next state's ``by`` is its client key)."""

    decide: Callable[[Floor], Floor]
    by_role: str


class FloorTables:
    """The :class:`~appliance.store.Store`'s methods for states and events (a part of it, kept here)."""

    db: sqlite_utils.Database
    _lock: threading.RLock
    _tx: Callable[[], AbstractContextManager[sqlite_utils.Database]]
    _rows: Callable[..., list[dict[str, Any]]]
    after_events: list[Callable[[Logged], None]]
    _logged: list[tuple[str, str]]
    _audit: Callable[[sqlite_utils.Database, AuditEvent], None]

    # events ---------------------------------------------------------------------------------------

    def _event(self, db: sqlite_utils.Database, session_id: str, kind: str, data: Mapping[str, Any]) -> None:
        """Log one event in the caller's transaction; the hooks run once it commits (:meth:`_announce`)."""
        db.execute(
            "INSERT INTO events (session_id, kind, data, created_at) VALUES (?, ?, ?, ?)",
            [session_id, kind, json.dumps(data, ensure_ascii=False), time.time()],
        )
        self._logged.append((session_id, kind))

    def _turn_event(self, db: sqlite_utils.Database, turn: Turn, by: str, **extra: Any) -> None:
        data = {"index": turn.index, "role": turn.role, "text": turn.text, "created_at": turn.created_at, "by": by}
        self._event(db, turn.session_id, "turn", {**data, **extra})

    def _announce(self) -> None:
        """After a commit: wake the listeners if it logged events."""
        if self._logged:
            logged = Logged(tuple(self._logged))
            self._logged.clear()
            for hook in self.after_events:
                hook(logged)

    def events_after(self, after: int, *, session_id: str | None = None, limit: int = 1000) -> list[StoredEvent]:
        """The events with an id above ``after``, oldest first (of one session, or of all)."""
        params: list[Any] = [after, limit]
        sql = "SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?"
        if session_id is not None:
            sql = "SELECT * FROM events WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?"
            params = [session_id, *params]
        return [
            StoredEvent(r["id"], r["session_id"], r["kind"], json.loads(r["data"]), r["created_at"])
            for r in self._rows(sql, params)
        ]

    def last_event_id(self) -> int:
        return int(self._rows("SELECT COALESCE(MAX(id), 0) AS n FROM events")[0]["n"])

    # the conversation's state ------------------------------------------------------------------------

    def floor(self, session_id: str) -> Floor:
        rows = self._rows(
            "SELECT floor_state, floor_reason, floor_since, floor_by FROM sessions WHERE id = ?", [session_id]
        )
        if not rows:
            raise SessionNotFound(f"no session with id {session_id!r}")
        r = rows[0]
        return Floor(r["floor_state"], r["floor_reason"], r["floor_since"], r["floor_by"])

    def floors(self) -> dict[str, Floor]:
        """Every session's state that is not ``bot`` (the operators' queue)."""
        rows = self._rows(
            "SELECT id, floor_state, floor_reason, floor_since, floor_by FROM sessions WHERE floor_state != 'bot'"
        )
        return {r["id"]: Floor(r["floor_state"], r["floor_reason"], r["floor_since"], r["floor_by"]) for r in rows}

    def floor_counts(self) -> dict[str, int]:
        """How many sessions are in each state."""
        rows = self._rows("SELECT floor_state, COUNT(*) AS n FROM sessions GROUP BY floor_state")
        return {r["floor_state"]: int(r["n"]) for r in rows}

    def change_floor(self, session_id: str, change: FloorChange) -> tuple[Floor, Floor]:
        """Apply ``change`` in a transaction of its own: (the state before, the state after)."""
        with self._tx() as db:
            return self._change_floor(db, session_id, change)

    def _change_floor(self, db: sqlite_utils.Database, session_id: str, change: FloorChange) -> tuple[Floor, Floor]:
        """Read, decide, write: the new state, its audit row and its event, in the caller's transaction."""
        row = db.execute(
            "SELECT floor_state, floor_reason, floor_since, floor_by FROM sessions WHERE id = ?", [session_id]
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session with id {session_id!r}")
        before = Floor(*row)
        after = change.decide(before)
        if after == before:
            return before, after
        db.execute(
            "UPDATE sessions SET floor_state = ?, floor_reason = ?, floor_since = ?, floor_by = ? WHERE id = ?",
            [after.state, after.reason, after.since, after.by, session_id],
        )
        db.execute(
            "INSERT INTO floor_changes (session_id, at, from_state, to_state, reason, by_role, by_client) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [session_id, after.since, before.state, after.state, after.reason, change.by_role, after.by],
        )
        self._event(
            db,
            session_id,
            "floor",
            {"from": before.state, "state": after.state, "reason": after.reason, "since": after.since, "by": after.by},
        )
        self._audit(db, floor_change(session_id, before, after, change.by_role))
        return before, after

    def floor_changes(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The audit trail of state changes, oldest first (ids, times, states, reasons and callers only)."""
        where, params = ("WHERE session_id = ?", [session_id]) if session_id else ("", [])
        return self._rows(
            f"SELECT session_id, at, from_state, to_state, reason, by_role, by_client FROM floor_changes {where} ORDER BY id",
            params,
        )
