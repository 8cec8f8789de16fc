"""One background thread that works through sessions, off the answer's path.

The summary worker and the prewarmer have this shape, and batched decoding and live event streams
will too: the pipeline calls ``notify(session_id)`` after a stored turn and returns at once; one
thread takes the queued sessions one at a time, when the subclass says one may run now
(``_next_session``: both yield to answers), and calls ``run_one`` on it. A session notified again
while it waits is run once. ``drain`` waits until nothing is queued or running, ``stop`` ends the
thread (``_interrupt`` cancels the run in progress), and ``stats`` reads the counts, kept as one
frozen value (:class:`Tally`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Self, TypeVar

from appliance.store import Logged

POLL_S = 0.05  # how often a loop that waits for an answer to end looks again
# The events after which a session's background work is due: a stored turn, summaries resumed.
WAKING = ("turn", "summary_resumed")


@dataclass(frozen=True)
class LoopStats:
    """What every loop counts: its ``runs`` (each loop says what one is), the ``errors`` of runs that
    ended without their result (an exception that escaped ``run_one`` among them), and the last one."""

    runs: int = 0
    errors: int = 0
    last_error: str = ""

    def failed(self, error: str) -> Self:
        """These counts with one more error, ``error``."""
        return dataclasses.replace(self, errors=self.errors + 1, last_error=error)


S = TypeVar("S", bound=LoopStats)


class Tally(Generic[S]):
    """Counts kept as one frozen value, replaced whole under a lock: a reader gets a consistent copy,
    never one with half a run counted."""

    def __init__(self, zero: S) -> None:
        self._value = zero
        self._lock = threading.Lock()

    def read(self) -> S:
        with self._lock:
            return self._value

    def add(self, **counts: float) -> None:
        """Add to these numeric fields."""
        self.update(lambda s: dataclasses.replace(s, **{name: getattr(s, name) + n for name, n in counts.items()}))

    def update(self, change: Callable[[S], S]) -> None:
        with self._lock:
            self._value = change(self._value)


class SessionLoop(Generic[S]):
    """The queue and the thread; a subclass says what to do with a session (``run_one``) and when
    one may run (``_next_session``). With ``newest_last`` a session notified again while it waits
    moves to the back of the queue (the prewarmer: what was warmed last stays in the live context);
    otherwise it keeps its place (the summary worker: oldest notification first)."""

    def __init__(self, name: str, zero: S, *, newest_last: bool = False) -> None:
        self.name = name
        self._newest_last = newest_last
        self._cond = threading.Condition()
        self._pending: dict[str, None] = {}  # an ordered set
        self._running = False
        self._stopping = threading.Event()
        self._tally = Tally(zero)
        self._log = logging.getLogger(type(self).__module__)
        self._thread: threading.Thread | None = None

    # what a subclass does ---------------------------------------------------------------------------

    def run_one(self, session_id: str) -> object:
        """Do this loop's work for one session now, in the calling thread."""
        raise NotImplementedError

    def _next_session(self) -> str | None:
        """The queued session to run now (by default the first); None: look again in ``POLL_S``.
        Called holding the lock."""
        return next(iter(self._pending), None)

    def _interrupt(self) -> None:
        """Cancel the run in progress, once stopping is set (called holding the lock); by default
        it is left to finish."""

    # control ----------------------------------------------------------------------------------------

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()
        return self

    def on_logged(self, logged: Logged) -> None:
        """The store's hook after a commit: each session with a new turn, or whose summaries were
        resumed, runs soon. Never blocks."""
        for session_id in logged.sessions(*WAKING):
            self.notify(session_id)

    def notify(self, session_id: str) -> None:
        """Run this session soon. Never blocks."""
        with self._cond:
            if self._newest_last:
                self._pending.pop(session_id, None)
            self._pending[session_id] = None
            self._cond.notify_all()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or running; False if ``timeout`` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._running, timeout)

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread after (or, where ``_interrupt`` cancels it, during) the run in progress."""
        with self._cond:
            self._stopping.set()
            self._interrupt()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def is_alive(self) -> bool:
        """Whether the background thread is running (readiness checks ask this)."""
        return self._thread is not None and self._thread.is_alive()

    def stats(self) -> S:
        return self._tally.read()

    # the thread -------------------------------------------------------------------------------------

    def _loop(self) -> None:
        while (session_id := self._take()) is not None:
            try:
                self.run_one(session_id)
            except Exception as exc:  # noqa: BLE001 - the thread must outlive one bad session; it is logged and counted
                self._log.exception("%s: session %s", self.name, session_id)
                self._count_error(f"{type(exc).__name__}: {exc}")
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()

    def _count_error(self, error: str) -> None:
        self._tally.update(lambda s: s.failed(error))

    def _take(self) -> str | None:
        """Wait for a session that may run now and mark it running; None once stopping."""
        with self._cond:
            self._cond.wait_for(lambda: self._pending or self._stopping.is_set())
            session_id = None
            while not self._stopping.is_set() and (session_id := self._next_session()) is None:
                self._cond.wait(POLL_S)
            if self._stopping.is_set() or session_id is None:
                return None
            del self._pending[session_id]
            self._running = True
            return session_id
