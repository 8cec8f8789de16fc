"""A conversation's privacy in the store: everything stored about it exported (a subject-access
request), its erasure (gone from the database file and the WAL, an audit row without content left),
and the sessions that ``retention.days`` expires.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

import sqlite_utils

from appliance.audit import record as audit
from appliance.errors import SessionNotFound
from appliance.types import Snapshot, SummaryVersion, TurnRecord, to_dict


class PrivacyTables:
    """The :class:`~appliance.store.Store`'s methods for export, erasure and expiry (a part of it, kept here)."""

    db: sqlite_utils.Database
    _lock: threading.RLock
    _tx: Callable[[], AbstractContextManager[sqlite_utils.Database]]
    _rows: Callable[..., list[dict[str, Any]]]
    _event: Callable[[sqlite_utils.Database, str, str, Mapping[str, Any]], None]
    _audit: Callable[[sqlite_utils.Database, audit.AuditEvent], None]
    snapshot: Callable[[str], Snapshot]
    summaries: Callable[[str], tuple[SummaryVersion, ...]]
    records: Callable[..., list[tuple[int, TurnRecord]]]

    def export(self, session_id: str) -> dict[str, Any]:
        """Everything stored about one conversation, JSON-ready (a subject-access request, the API's view)."""
        with self._lock:
            snap = self.snapshot(session_id)
            return {
                "session": to_dict(snap.session),
                "turns": [to_dict(t) for t in snap.turns],
                "summary": to_dict(snap.summary) if snap.summary else None,
                "summaries": [to_dict(s) for s in self.summaries(session_id)],
                "ledger": [to_dict(e) for e in snap.ledger],
                "records": [
                    {"index": index, **to_dict(record), "check": {**to_dict(record.check), "ok": record.check.ok}}
                    for index, record in self.records(session_id)
                ],
            }

    def erase(self, session_id: str, *, reason: str = "request") -> int:
        """Erase a conversation: its turns, records, summaries, ledger and embeddings, then the session.

        The text is overwritten in the database file (``secure_delete``) and the WAL is checkpointed
        and truncated, so no copy is left in either. An audit row keeps the id, the time, the reason
        and the number of turns, nothing of the content. Returns that number.
        """
        with self._tx() as db:
            row = db.execute("SELECT COUNT(*) FROM sessions WHERE id = ?", [session_id]).fetchone()
            if not row[0]:
                raise SessionNotFound(f"no session with id {session_id!r}")
            (turns,) = db.execute("SELECT COUNT(*) FROM turns WHERE session_id = ?", [session_id]).fetchone()
            db.execute("UPDATE sessions SET erasing = 1 WHERE id = ?", [session_id])
            for table in ("embeddings", "ledger", "summaries", "turn_records", "turns", "events"):
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", [session_id])
            db.execute("DELETE FROM sessions WHERE id = ?", [session_id])
            erased_at = time.time()
            db.table("erasures").insert(
                {"session_id": session_id, "erased_at": erased_at, "reason": reason, "turns": int(turns)}
            )
            self._event(db, session_id, "erased", {"reason": reason, "erased_at": erased_at})
            self._audit(db, audit.erasure(session_id, reason, int(turns)))
        self.checkpoint()
        return int(turns)

    def expired(self, older_than_s: float, *, now: float | None = None) -> list[str]:
        """Sessions whose last turn (or creation, without turns) is older than ``older_than_s`` seconds."""
        cutoff = (time.time() if now is None else now) - older_than_s
        rows = self._rows(
            """SELECT s.id FROM sessions s LEFT JOIN turns t ON t.session_id = s.id
               GROUP BY s.id HAVING COALESCE(MAX(t.created_at), s.created_at) < ?""",
            [cutoff],
        )
        return [r["id"] for r in rows]

    def erasures(self) -> list[dict[str, Any]]:
        """The audit trail of erasures, oldest first (ids, times, reasons and turn counts only)."""
        return self._rows("SELECT session_id, erased_at, reason, turns FROM erasures ORDER BY id")

    def checkpoint(self) -> None:
        """Copy the WAL into the database file and truncate it to nothing."""
        with self._lock:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
