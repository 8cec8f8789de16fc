"""The store's audit rows (:func:`~appliance.store.migrations.m010_audit`): sealed in the transaction
of the fact they report, so the chain's head is as durable as the facts, and no record is written
for a fact that was rolled back.

After a transaction that wrote records, the store calls its ``after_audit`` hooks (the shipper's
wake-up); like ``after_events``, they run on the writer's thread and must not block.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

import sqlite_utils

from appliance.audit.record import GENESIS, AuditEvent, seal
from appliance.types import Turn


class AuditTables:
    """The :class:`~appliance.store.Store`'s methods for the audit trail (a part of it, kept here)."""

    _tx: Callable[[], AbstractContextManager[sqlite_utils.Database]]
    _rows: Callable[..., list[dict[str, Any]]]
    auditing: bool  # audit.enabled
    audit_text: frozenset[str]  # the customer text records may carry (audit.text)
    after_audit: list[Callable[[], None]]
    _wrote_audit: bool

    def _audit(self, db: sqlite_utils.Database, event: AuditEvent) -> None:
        """Seal ``event`` after the chain's head and store it, in the caller's transaction."""
        if not self.auditing:
            return
        head = db.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS)
        at = time.time()
        line, digest = seal(event, seq=seq, prev=prev, at=at)
        db.execute("INSERT INTO audit (seq, at, line, hash) VALUES (?, ?, ?, ?)", [seq, at, line, digest])
        self._wrote_audit = True

    def _audit_reply(self, db: sqlite_utils.Database, turn: Turn) -> None:
        """A person's reply: by the operator who holds the conversation (none: a replayed transcript)."""
        (holder,) = db.execute("SELECT floor_by FROM sessions WHERE id = ?", [turn.session_id]).fetchone()
        texts = self._texts({"reply": turn.text})
        self._audit(db, AuditEvent("reply", turn.session_id, holder, "person", turn.index, text=texts))

    def _texts(self, texts: Mapping[str, str]) -> dict[str, str]:
        """The customer text a record may carry: only what ``audit.text`` names."""
        return {name: text for name, text in texts.items() if name in self.audit_text}

    def _ship(self) -> None:
        """After a commit: wake the shipper if it wrote records."""
        if self._wrote_audit:
            self._wrote_audit = False
            for hook in self.after_audit:
                hook()

    def audit_after(self, seq: int, limit: int = 500) -> list[tuple[int, str]]:
        """The sealed lines numbered above ``seq``, oldest first."""
        rows = self._rows("SELECT seq, line FROM audit WHERE seq > ? ORDER BY seq LIMIT ?", [seq, limit])
        return [(int(r["seq"]), str(r["line"])) for r in rows]

    def audit_head(self) -> int:
        """The newest record's seq (0: none yet)."""
        return int(self._rows("SELECT COALESCE(MAX(seq), 0) AS n FROM audit")[0]["n"])

    def prune_audit(self, older_than_s: float, *, now: float | None = None) -> int:
        """Delete records older than ``older_than_s`` seconds but the newest (retention); how many.
        The oldest kept record's ``prev`` is then the chain's anchor."""
        cutoff = (time.time() if now is None else now) - older_than_s
        with self._tx() as db:
            return int(
                db.execute("DELETE FROM audit WHERE at < ? AND seq < (SELECT MAX(seq) FROM audit)", [cutoff]).rowcount
            )
