"""Whether the database can take a write, for the daemon's readiness (``/readyz``), found without a
probe write: the outcome of the last write that could tell, and what SQLite says about the connection
and the file (:meth:`WriteHealth.write_room`). A conflict or a constraint is the caller's fault, not
the database's, and does not count."""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass

import sqlite_utils

# SQLite's primary result codes that say the database cannot take a write at all: READONLY, IOERR,
# FULL, CANTOPEN.
_CANNOT_WRITE = {8, 10, 13, 14}


@dataclass(frozen=True)
class WriteOutcome:
    """How the last write that could tell ended: stored, or refused by the database or its disk."""

    ok: bool
    at: float  # time.monotonic()
    error: str = ""


class WriteHealth:
    """The :class:`~appliance.store.Store`'s part that keeps the last write's outcome (kept here)."""

    db: sqlite_utils.Database
    _lock: threading.RLock
    last_write: WriteOutcome | None

    def _wrote(self, error: sqlite3.Error | None = None) -> None:
        """A write committed (no ``error``), or failed with ``error``."""
        if error is None:
            self.last_write = WriteOutcome(True, time.monotonic())
        elif getattr(error, "sqlite_errorcode", 0) & 0xFF in _CANNOT_WRITE:
            self.last_write = WriteOutcome(False, time.monotonic(), str(error))

    def write_room(self) -> str | None:
        """Why the database cannot take a write now, from what SQLite says without writing; None if nothing.

        The connection may be read-only (``PRAGMA query_only``), or the file at its page limit
        (``PRAGMA max_page_count``) with no free page left. The disk itself is the caller's to check.
        """
        with self._lock:
            pragma = {
                name: self.db.execute(f"PRAGMA {name}").fetchone()[0]
                for name in ("query_only", "page_count", "max_page_count", "freelist_count")
            }
        if pragma["query_only"]:
            return "the database connection is read-only"
        if pragma["page_count"] >= pragma["max_page_count"] and not pragma["freelist_count"]:
            return f"the database is at its size limit ({pragma['max_page_count']} pages)"
        return None
