"""Warm each session's next prompt prefix while the responder is idle, off the customer's time.

On a CPU the time to first token is the prompt's evaluation. Between two answers only the newest
exchange is new, and every ``summarizer.every_turns`` turns the summary moves and most of the
prompt with it: that answer would pay its whole prompt (about five times the median). Yet all of
the next prompt except the customer's message is known as soon as the previous turn is stored
and the summary worker is done with it. This thread builds it then (``Pipeline.next_prefix``) and
has the backend evaluate it (``PrefixWarmer.prepare``), which keeps the state under the session:
the next answer evaluates the message and what depends on it.

Like the summary worker it yields: it starts only when no answer is being generated and the worker
is idle, and stops between two chunks as soon as an answer starts (what it evaluated is kept).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from appliance.turn.pipeline import Pipeline
from appliance.types import PrefixWarmer, Warmed

log = logging.getLogger(__name__)

_POLL_S = 0.05


@dataclass(frozen=True)
class PrewarmStats:
    """Counts for metrics and the bench; ``seconds`` is idle time spent evaluating prefixes."""

    runs: int = 0
    complete: int = 0
    interrupted: int = 0
    evaluated_tokens: int = 0
    reused_tokens: int = 0
    seconds: float = 0.0
    errors: int = 0


class _AnswerWaiting:
    """The ``cancel`` flag handed to the backend: set while an answer wants the model, or at stop."""

    def __init__(self, answering: Callable[[], bool], stopping: threading.Event) -> None:
        self._answering = answering
        self._stopping = stopping

    def is_set(self) -> bool:
        return self._stopping.is_set() or self._answering()


class Prewarmer:
    """One background thread; wire it as ``pipeline.after_store.append(prewarmer.notify)`` after the
    summary worker's hook. ``answering`` says an answer is being generated; ``background_idle`` says
    the summary worker has nothing queued or running (a summary update changes the prefix, so warming
    before it would be wasted)."""

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        answering: Callable[[], bool],
        background_idle: Callable[[], bool] = lambda: True,
        start: bool = True,
    ) -> None:
        self.pipeline = pipeline
        self._answering = answering
        self._background_idle = background_idle
        self._cond = threading.Condition()
        self._pending: dict[str, None] = {}  # an ordered set: oldest notification first
        self._running = False
        self._stopping = threading.Event()
        self._cancel = _AnswerWaiting(answering, self._stopping)
        self._stats = PrewarmStats()
        self.last: dict[str, Warmed] = {}  # session -> its latest warm-up (the bench reads it)
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    def start(self) -> Prewarmer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="prewarm", daemon=True)
            self._thread.start()
        return self

    def notify(self, session_id: str) -> None:
        """A turn was stored for this session: warm its next prefix when idle. Never blocks."""
        with self._cond:
            self._pending.pop(session_id, None)
            self._pending[session_id] = None  # the newest notification is warmed last, so it stays in the live context
            self.last.pop(session_id, None)
            self._cond.notify_all()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or running; False if ``timeout`` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._running, timeout)

    def stop(self, timeout: float | None = 10.0) -> None:
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def stats(self) -> PrewarmStats:
        with self._cond:
            return self._stats

    def _idle(self) -> bool:
        return not self._answering() and self._background_idle()

    def _loop(self) -> None:
        while not self._stopping.is_set():
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._stopping.is_set())
                while not self._stopping.is_set() and not self._idle():
                    self._cond.wait(_POLL_S)
                if self._stopping.is_set():
                    return
                session_id = next(iter(self._pending))
                del self._pending[session_id]
                self._running = True
            try:
                self.warm(session_id)
            except Exception:  # noqa: BLE001 - warming is an optimisation: a failure costs the next answer time, never the thread
                log.exception("prewarm: session %s", session_id)
                self._count(PrewarmStats(errors=1))
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()

    def warm(self, session_id: str) -> Warmed | None:
        """Warm one session's next prefix now, in this thread (None: nothing to warm); then, if no
        answer has started, embed the turns recall may choose from (``Pipeline.embed_ahead``)."""
        warmed = self._prefix(session_id)
        if not self._cancel.is_set():
            self.pipeline.embed_ahead(session_id)
        return warmed

    def _prefix(self, session_id: str) -> Warmed | None:
        found = self.pipeline.next_prefix(session_id)
        if found is None:
            return None
        model, messages = found
        if not isinstance(model, PrefixWarmer):
            return None  # a remote server keeps its own cache
        warmed = model.prepare(messages, cache_key=session_id, cancel=self._cancel)
        with self._cond:
            self.last[session_id] = warmed
        self._count(
            PrewarmStats(
                runs=1,
                complete=int(warmed.complete),
                interrupted=int(not warmed.complete),
                evaluated_tokens=warmed.evaluated,
                reused_tokens=warmed.reused,
                seconds=warmed.seconds,
            )
        )
        return warmed

    def _count(self, more: PrewarmStats) -> None:
        with self._cond:
            s = self._stats
            self._stats = PrewarmStats(*(getattr(s, f.name) + getattr(more, f.name) for f in dataclasses.fields(s)))
