"""One run of the summarizer model: what it summarizes, what it came to, how runs are counted, and
the watcher that cancels it when it stops making progress or an answer starts.

The summary worker (:mod:`appliance.turn.worker`) decides by these values, never by the words of a
stored version's ``reason``, which are for operators.
"""

from __future__ import annotations

import dataclasses
import enum
import statistics
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from appliance import summarizer
from appliance.config import SummarizerSettings
from appliance.protocols import Busy, TokenCounter
from appliance.turn.loop import POLL_S, LoopStats
from appliance.types import SummaryVersion, Turn

KEEP_DURATIONS = 1000  # the median of the latest runs is enough for metrics; a daemon runs for months


class Outcome(enum.Enum):
    """What one step of a run came to. The worker decides by this; the stored version's ``reason``
    says it in words, for operators."""

    ACCEPTED = "accepted"  # the new current version
    REJECTED = "rejected"  # the validator refused the text, or the next turn does not fit the window
    STALE = "stale"  # made from a version that an operator replaced meanwhile
    FAILED = "failed"  # the model raised
    TIMEOUT = "timeout"  # no progress within the time limit
    YIELDED = "yielded"  # an answer started: queued again, nothing stored
    STOPPED = "stopped"  # the worker is stopping: nothing stored


@dataclass(frozen=True)
class Plan:
    """What one step summarizes, chosen from the session's snapshot before the model runs."""

    session_id: str
    turns: tuple[Turn, ...]  # the whole transcript (the validator reads it)
    base: SummaryVersion | None  # the current version when chosen
    previous: SummaryVersion | None  # the version the prompt rolls on from; None: afresh from the transcript
    chunk: tuple[Turn, ...]  # the turns the new version adds; empty: the first of them does not fit the window
    first_pending: int  # the first turn that no version covers yet
    language: str

    @property
    def covers_to(self) -> int:
        return self.chunk[-1].index


@dataclass(frozen=True)
class Ran:
    """What running the model came to: its text (``outcome`` None, the text still to be validated),
    or the outcome that left none, with the stored ``reason`` of a failure."""

    outcome: Outcome | None
    duration_s: float = 0.0
    text: str = ""
    reason: str = ""


def longest_fitting(
    counter: TokenCounter,
    previous: SummaryVersion | None,
    turns: Sequence[Turn],
    language: str,
    *,
    room: int,
    max_words: int,
) -> list[Turn]:
    """The longest prefix of ``turns`` whose summary prompt, rolling on from ``previous``, is at most
    ``room`` tokens."""

    def fits(k: int) -> bool:
        prompt = summarizer.summary_prompt(previous, turns[:k], language, max_words=max_words)
        return counter.count(prompt) <= room

    if fits(len(turns)):
        return list(turns)
    lo, hi = 0, len(turns)  # fits(lo) is assumed, fits(hi) is false
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return list(turns[:lo])


@dataclass(frozen=True)
class WorkerStats(LoopStats):
    """Counts for metrics and the bench. ``runs`` are generations of a summary; ``failures`` are runs
    that ended without an accepted version."""

    accepted: int = 0
    rejected: int = 0
    timeouts: int = 0
    stale: int = 0
    yielded: int = 0
    forced: int = 0  # runs that did not yield, after ``max_yields`` yields in a row
    skipped_paused: int = 0
    durations_s: tuple[float, ...] = ()

    @property
    def failures(self) -> int:
        return self.rejected + self.errors + self.timeouts

    @property
    def median_s(self) -> float:
        return statistics.median(self.durations_s) if self.durations_s else 0.0

    def after(self, outcome: Outcome, duration_s: float, error: str = "") -> WorkerStats:
        """These counts after one more run that came to ``outcome`` in ``duration_s``."""
        name = _COUNTED_AS[outcome]
        return dataclasses.replace(
            self,
            runs=self.runs + 1,
            durations_s=(*self.durations_s[-(KEEP_DURATIONS - 1) :], duration_s),
            last_error=error or self.last_error,
            **{name: getattr(self, name) + 1},
        )


_COUNTED_AS = {
    Outcome.ACCEPTED: "accepted",
    Outcome.REJECTED: "rejected",
    Outcome.STALE: "stale",
    Outcome.FAILED: "errors",
    Outcome.TIMEOUT: "timeouts",
}


def progress_deadline(started: float, last_token: float | None, *, timeout_s: float, stall_s: float) -> float:
    """When a summary is cancelled: ``timeout_s`` after it started, or later while tokens keep coming,
    ``stall_s`` after the last one."""
    first = started + timeout_s
    return first if last_token is None else max(first, last_token + stall_s)


class Progress:
    """The tokens of one summary as they come (the model's thread writes, the watcher reads)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.last_token: float | None = None
        self.tokens = 0

    def on_token(self, piece: str) -> None:
        self.last_token = time.monotonic()
        self.tokens += 1

    def deadline(self, settings: SummarizerSettings) -> float:
        return progress_deadline(self.started, self.last_token, timeout_s=settings.timeout_s, stall_s=settings.stall_s)

    def timeout_reason(self, settings: SummarizerSettings) -> str:
        """The stored reason of a summary cancelled at its deadline."""
        if self.last_token is None:
            return f"timeout after {settings.timeout_s:g} s"
        took = time.monotonic() - self.started
        return f"timeout after {took:.1f} s: no token for {settings.stall_s:g} s after {self.tokens} tokens"


class Cut(enum.Enum):
    """Why the watcher cancelled a summary."""

    TIMEOUT = "timeout"
    ANSWER = "answer"


class Watcher:
    """Watches one summary from a thread of its own, for the length of a ``with`` block: cancels it
    once it stops making progress (:func:`progress_deadline`) or, given ``answering``, as soon as an
    answer starts. ``cut`` says which; it is set once, before ``cancel``."""

    def __init__(self, settings: SummarizerSettings, answering: Busy | None) -> None:
        self.cancel = threading.Event()
        self.cut: Cut | None = None
        self.progress = Progress()
        self._settings = settings
        self._answering = answering
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="summary-watch", daemon=True)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(min(POLL_S, max(0.0, self._deadline() - time.monotonic()))):
            if time.monotonic() >= self._deadline():
                cut = Cut.TIMEOUT
            elif self._answering is not None and self._answering.busy:
                cut = Cut.ANSWER
            else:
                continue
            self.cut = cut
            self.cancel.set()
            return

    def _deadline(self) -> float:
        return self.progress.deadline(self._settings)
