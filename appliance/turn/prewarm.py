"""Warm each session's next prompt prefix while the responder is idle, off the customer's time.

On a CPU the time to first token is the prompt's evaluation. Between two answers only the newest
exchange is new, and every ``summarizer.every_turns`` turns the summary moves and most of the
prompt with it: that answer would pay its whole prompt (about five times the median). Yet all of
the next prompt except the customer's message is known as soon as the previous turn is stored
and the summary worker is done with it. This thread builds it then (``Warmup.next_prefix``) and
has the backend evaluate it (``PrefixWarmer.prepare``), which keeps the state under the session:
the next answer evaluates the message and what depends on it.

While the customer types, a client may send the draft (:meth:`Prewarmer.draft`): the prefix is then
planned for it as for the message, so the operator's passages it retrieves are evaluated too, and a
message that retrieves the same ones evaluates only itself. Once that prefix is warm, whether those
passages answer the draft is judged too (``Warmup.judge_ahead``): a message sent as drafted is not
judged again.

Like the summary worker it yields: it starts only when no answer is being generated and the worker
is idle, and stops between two chunks as soon as an answer starts (what it evaluated is kept).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from appliance.protocols import Busy, Flag, PrefixWarmer, Warmed
from appliance.turn.loop import LoopStats, SessionLoop
from appliance.turn.warmup import Warmup


@dataclass(frozen=True)
class PrewarmStats(LoopStats):
    """Counts for metrics and the bench: ``runs`` are warm-ups; ``seconds`` is idle time spent
    evaluating prefixes."""

    complete: int = 0
    interrupted: int = 0
    evaluated_tokens: int = 0
    reused_tokens: int = 0
    seconds: float = 0.0


class _AnswerWaiting:
    """The ``cancel`` flag handed to the backend: set while an answer wants the model, or at stop."""

    def __init__(self, answering: Busy, stopping: Flag) -> None:
        self._answering = answering
        self._stopping = stopping

    def is_set(self) -> bool:
        return self._stopping.is_set() or self._answering.busy


class Prewarmer(SessionLoop[PrewarmStats]):
    """One background thread; wire it as ``store.after_events.append(prewarmer.on_logged)`` after the
    summary worker's hook. ``answering`` says an answer is being generated (the pipeline's gauge);
    ``background_idle`` says the summary worker has nothing queued or running (a summary update
    changes the prefix, so warming before it would be wasted)."""

    def __init__(
        self,
        warmup: Warmup,
        *,
        answering: Busy,
        background_idle: Callable[[], bool] = lambda: True,
        start: bool = True,
    ) -> None:
        # The newest notification is warmed last, so that it stays in the live context.
        super().__init__("prewarm", PrewarmStats(), newest_last=True)
        self.warmup = warmup
        self._answering = answering
        self._background_idle = background_idle
        self._cancel = _AnswerWaiting(answering, self._stopping)
        self.last: dict[str, Warmed] = {}  # session -> its latest warm-up (the bench reads it)
        self._drafts: dict[str, str] = {}  # session -> what its customer is typing, newest only
        if start:
            self.start()

    def notify(self, session_id: str) -> None:
        """A turn was stored for this session: warm its next prefix when idle. Never blocks."""
        with self._cond:  # a reentrant lock: the base class takes it again
            self.last.pop(session_id, None)
            self._drafts.pop(session_id, None)  # typed before this turn: stale
            super().notify(session_id)

    def draft(self, session_id: str, text: str) -> None:
        """The customer is typing ``text`` in this session: warm its prefix with the passages the
        text retrieves, when idle (a newer draft replaces a waiting one). Never blocks."""
        with self._cond:
            self.last.pop(session_id, None)
            self._drafts[session_id] = text
            super().notify(session_id)

    def _next_session(self) -> str | None:
        """The first queued session, once no answer is being generated and the worker is idle."""
        if self._answering.busy or not self._background_idle():
            return None
        return super()._next_session()

    def run_one(self, session_id: str) -> Warmed | None:
        return self.warm(session_id)

    def warm(self, session_id: str, draft: str | None = None) -> Warmed | None:
        """Warm one session's next prefix now, in this thread (None: nothing to warm), for ``draft``
        or else the draft waiting for it; then, if no answer has started, embed the turns recall may
        choose from (``Warmup.embed_ahead``)."""
        with self._cond:
            waiting = self._drafts.pop(session_id, "")
        warmed = self._prefix(session_id, waiting if draft is None else draft)
        if not self._cancel.is_set():
            self.warmup.embed_ahead(session_id)
        return warmed

    def _prefix(self, session_id: str, draft: str) -> Warmed | None:
        found = self.warmup.next_prefix(session_id, draft)
        if found is None and draft:  # a draft that gets no generation (not found): the plain prefix
            found = self.warmup.next_prefix(session_id)
        if found is None:
            return None
        model, messages = found
        if not isinstance(model, PrefixWarmer):
            return None  # a remote server keeps its own cache
        warmed = model.prepare(messages, cache_key=session_id, cancel=self._cancel)
        if draft and warmed.complete and not self._cancel.is_set():
            self.warmup.judge_ahead(session_id)
        with self._cond:
            self.last[session_id] = warmed
        self._tally.add(
            runs=1,
            complete=int(warmed.complete),
            interrupted=int(not warmed.complete),
            evaluated_tokens=warmed.evaluated,
            reused_tokens=warmed.reused,
            seconds=warmed.seconds,
        )
        return warmed
