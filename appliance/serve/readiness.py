"""Whether the database can take a write, for ``/readyz``: told truthfully, cheaply, and recovering by itself.

Two sources, and no write of its own. The store remembers how its last write ended (a full disk, a
read-only file system or an I/O error make it fail; a conflict does not count). A cheap check runs
at most every ``CHECK_EVERY_S`` seconds however often ``/readyz`` is asked: the database answers a
query, its file and folder are writable, their file system is not read-only and has room, and SQLite
itself is not read-only or at its page limit. Not ready while the check finds a cause, or while the
last write failed and no check has since seen the cause go away; so a disk that is freed makes the
daemon ready again without waiting for a customer's turn to prove it, and a failure that no check
can see (an I/O error) holds until a write succeeds.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from appliance.errors import StoreError
from appliance.store import Store
from appliance.store.health import WriteOutcome

CHECK_EVERY_S = 5.0
MIN_FREE_BYTES = 1024 * 1024  # less than this free on the database's file system counts as full


@dataclass(frozen=True)
class DatabaseReady:
    """The database's readiness: ``reason`` says why not."""

    ok: bool
    reason: str = ""


class DatabaseReadiness:
    """``/readyz``'s database check over one store (thread-safe; the route runs in a worker thread)."""

    def __init__(
        self, store: Store, every_s: float = CHECK_EVERY_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.every_s = every_s
        self.clock = clock
        self._lock = threading.Lock()
        self._checked_at: float | None = None
        self._cause: str | None = None
        self._cleared: WriteOutcome | None = None  # the failed write whose cause a check saw go away

    def state(self) -> DatabaseReady:
        now = self.clock()
        with self._lock:
            if self._checked_at is None or now - self._checked_at >= self.every_s:
                cause = self._check()
                if cause is None and self._cause is not None:
                    self._cleared = self.store.last_write
                self._cause, self._checked_at = cause, now
            if self._cause is not None:
                return DatabaseReady(False, self._cause)
            last = self.store.last_write
            if last is not None and not last.ok and last is not self._cleared:
                return DatabaseReady(False, f"the last write failed: {last.error}")
            return DatabaseReady(True)

    def _check(self) -> str | None:
        """Why a write cannot succeed now, by reads and file-system calls only; None if no cause is seen."""
        try:
            self.store.sessions(limit=1)
            room = self.store.write_room()
        except (StoreError, sqlite3.Error) as exc:
            return f"the database does not answer: {exc}"
        if room is not None:
            return room
        path = self.store.path
        if path is None:
            return None
        for what, where in (("database file", path), ("database folder", path.parent)):
            if not os.access(where, os.W_OK):
                return f"the {what} {where} is not writable"
        try:
            disk = os.statvfs(path.parent)
        except OSError as exc:
            return f"the database folder cannot be examined: {exc.strerror}"
        if disk.f_flag & os.ST_RDONLY:
            return f"the file system of {path.parent} is read-only"
        if disk.f_bavail * disk.f_frsize < MIN_FREE_BYTES:
            return f"the disk of {path.parent} is full"
        return None
