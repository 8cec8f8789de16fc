"""``/metrics`` in Prometheus' text format, counted in-process without a client library.

The counters are the ones an operator alerts on: answers and their latency, turns recorded by hand,
facts the checker flagged, errors by status, requests refused at the door by reason (a foreign Host
or Origin, a missing or wrong token, a role without the right, a body too large; and from the
connection itself: headers too slow or too large, a body too slow, too many connections from one
address or in all, see ``serve/connections.py``), conversations
erased by reason, the queue's depth, and the summary worker's runs and how far its summaries are
behind. The request handlers count; the queue and the worker are read when the page is asked for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from appliance.protocols import WorkerStatus
from appliance.turn.queue import FairQueue
from appliance.types import TurnResult


@runtime_checkable
class LagStatus(Protocol):
    """A worker that can say how far behind its summaries are (the summary worker)."""

    def max_lag(self) -> int:
        """The most turns any session's current summary is behind."""
        ...


class _Histogram:
    """One histogram in Prometheus' text format: cumulative counts under each bound, their sum and
    count. Not locked: :class:`Metrics` holds its lock around every use."""

    def __init__(self, name: str, help: str, bounds: Sequence[float]) -> None:
        self.name, self.help, self.bounds = name, help, tuple(bounds)
        self.buckets = [0] * len(self.bounds)
        self.sum = 0.0
        self.count = 0

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.sum += seconds
        for i, bound in enumerate(self.bounds):
            if seconds <= bound:
                self.buckets[i] += 1

    def lines(self) -> list[str]:
        return [
            f"# HELP {self.name} {self.help}",
            f"# TYPE {self.name} histogram",
            *(f'{self.name}_bucket{{le="{b}"}} {n}' for b, n in zip(self.bounds, self.buckets)),
            f'{self.name}_bucket{{le="+Inf"}} {self.count}',
            f"{self.name}_sum {self.sum:.6f}",
            f"{self.name}_count {self.count}",
        ]


class Metrics:
    """Counters for ``/metrics`` in Prometheus' text format; thread-safe, no dependency."""

    BUCKETS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
    WAIT_BUCKETS = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.answers = 0
        self.turns_recorded = 0
        self.checker_flags = 0
        self.errors: dict[int, int] = {}
        self.refusals: dict[str, int] = {}
        self.erasures: dict[str, int] = {}
        self.latency = _Histogram(
            "appliance_answer_seconds", "Time from request to stored answer, queueing included.", self.BUCKETS
        )
        self.open_connections: Callable[[], int] | None = None  # the daemon's connection gate, when it has one
        # The branch floor: how long customers waited for a person, and messages a person held.
        self.wait = _Histogram(
            "appliance_person_wait_seconds", "Time from needs_person to with_person.", self.WAIT_BUCKETS
        )
        self.held = 0
        self.more: list[Callable[[], list[str]]] = []  # more lines, read when the page is asked for

    def waited(self, seconds: float) -> None:
        """A person took a conversation that had asked for one ``seconds`` before."""
        with self._lock:
            self.wait.observe(seconds)

    def held_message(self) -> None:
        """A customer message stored without an answer: a person is asked for or holds the session."""
        with self._lock:
            self.held += 1

    def answered(self, result: TurnResult, started: float) -> None:
        """An answer given: its time since ``started`` (``time.monotonic()``), and the facts the checker flagged."""
        seconds = time.monotonic() - started
        flags = len(result.record.check.findings)
        with self._lock:
            self.answers += 1
            self.checker_flags += flags
            self.latency.observe(seconds)

    def recorded(self) -> None:
        with self._lock:
            self.turns_recorded += 1

    def failed(self, status: int) -> None:
        with self._lock:
            self.errors[status] = self.errors.get(status, 0) + 1

    def refused(self, reason: str) -> None:
        """A request turned away by access control or a size limit (``reason`` is a fixed word)."""
        with self._lock:
            self.refusals[reason] = self.refusals.get(reason, 0) + 1

    def erased(self, reason: str, count: int = 1) -> None:
        with self._lock:
            self.erasures[reason] = self.erasures.get(reason, 0) + count

    def _floor_lines(self) -> list[str]:
        """The branch floor's counters (under the lock)."""
        return [
            *_metric(
                "appliance_messages_held_total",
                "counter",
                "Customer messages stored without a model answer (a person asked for or holding the session).",
                self.held,
            ),
            *self.wait.lines(),
        ]

    def render(self, queues: Sequence[FairQueue], answering: bool, worker: WorkerStatus | None) -> str:
        with self._lock:
            lines = [
                *_metric("appliance_answers_total", "counter", "Answers generated and stored.", self.answers),
                *_metric(
                    "appliance_turns_recorded_total",
                    "counter",
                    "Turns recorded without generating.",
                    self.turns_recorded,
                ),
                *_metric(
                    "appliance_checker_flags_total",
                    "counter",
                    "Facts in answers that the checker found unsupported.",
                    self.checker_flags,
                ),
                "# HELP appliance_http_errors_total Requests answered with an error, by status.",
                "# TYPE appliance_http_errors_total counter",
                *(f'appliance_http_errors_total{{status="{s}"}} {n}' for s, n in sorted(self.errors.items())),
                "# HELP appliance_access_refused_total Requests and connections refused by access control or a limit, by reason.",
                "# TYPE appliance_access_refused_total counter",
                *(f'appliance_access_refused_total{{reason="{r}"}} {n}' for r, n in sorted(self.refusals.items())),
                "# HELP appliance_erasures_total Conversations erased, by reason (request, retention).",
                "# TYPE appliance_erasures_total counter",
                *(f'appliance_erasures_total{{reason="{r}"}} {n}' for r, n in sorted(self.erasures.items())),
                *self.latency.lines(),
                *self._floor_lines(),
            ]
        lines += [
            "# HELP appliance_queue_waiting Answers waiting for their model.",
            "# TYPE appliance_queue_waiting gauge",
            *(f'appliance_queue_waiting{{model="{q.name}"}} {q.waiting}' for q in queues),
            *_metric("appliance_answering", "gauge", "1 while an answer is being generated.", int(answering)),
        ]
        if self.open_connections is not None:
            lines += _metric("appliance_connections_open", "gauge", _OPEN_HELP, self.open_connections())
        if worker is not None:
            for name, value in sorted(worker.counters().items()):
                lines += _metric(f"appliance_summarizer_{name}_total", "counter", f"Summarizer {name}.", value)
            lines += _metric(
                "appliance_summarizer_alive", "gauge", "1 while the summary worker runs.", int(worker.is_alive())
            )
            if isinstance(worker, LagStatus):
                lines += _metric(
                    "appliance_summarizer_lag_turns_max",
                    "gauge",
                    "The most turns any session's current summary is behind (of the sessions the worker has seen).",
                    worker.max_lag(),
                )
        for more in self.more:
            lines += more()
        return "\n".join(lines) + "\n"


_OPEN_HELP = "Open HTTP connections (server.max_connections)."


def _metric(name: str, kind: str, help_text: str, value: float) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name} {value}"]
