"""``/metrics`` in Prometheus' text format, written by prometheus-client from a registry of the app's own.

The counters are the ones an operator alerts on: answers and their latency, turns recorded by hand,
facts the checker flagged, errors by status, requests refused at the door by reason (a foreign Host
or Origin, a missing or wrong token, a role without the right, a body too large; and from the
connection itself: headers too slow or too large, a body too slow, too many connections from one
address or in all, see ``serve/connections.py``), conversations
erased by reason, the queue's depth, and the summary worker's runs and how far its summaries are
behind. The request handlers count; the queue, the worker and the parts in :attr:`Metrics.more` are
read when the page is asked for. This is the only module that imports prometheus_client.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from appliance.protocols import WorkerStatus
from appliance.turn.queue import FairQueue
from appliance.types import TurnResult

# The page lists each counter and histogram once, as it always has, without a ``_created`` timestamp
# series beside each (a switch of the whole library; this module is its only user in the process).
disable_created_metrics()


@runtime_checkable
class LagStatus(Protocol):
    """A worker that can say how far behind its summaries are (the summary worker)."""

    def max_lag(self) -> int:
        """The most turns any session's current summary is behind."""
        ...


@dataclass(frozen=True)
class Reading:
    """A value another part keeps and the page reads when asked for (the event hub's listeners, the
    sessions by state): a counter (its name ends in ``_total``) or a gauge, with one ``value``, or
    one value per value of its ``label`` (``by``)."""

    name: str
    kind: Literal["counter", "gauge"]
    help: str
    value: float = 0.0
    label: str = ""
    by: Mapping[str, float] = field(default_factory=dict)

    def family(self) -> Metric:
        kind = CounterMetricFamily if self.kind == "counter" else GaugeMetricFamily
        if not self.label:
            return kind(self.name, self.help, value=self.value)
        family = kind(self.name, self.help, labels=[self.label])
        for key, value in self.by.items():
            family.add_metric([key], value)
        return family


class Metrics:
    """The app's counters, on a :class:`CollectorRegistry` of its own (never the library's global one,
    so two apps in one process, as in the tests, count apart); thread-safe, as the library's metrics are."""

    BUCKETS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
    WAIT_BUCKETS = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        on = self.registry
        self._answers = Counter("appliance_answers_total", "Answers generated and stored.", registry=on)
        self._recorded = Counter("appliance_turns_recorded_total", "Turns recorded without generating.", registry=on)
        self._flags = Counter(
            "appliance_checker_flags_total", "Facts in answers that the checker found unsupported.", registry=on
        )
        self._errors = Counter(
            "appliance_http_errors_total", "Requests answered with an error, by status.", ["status"], registry=on
        )
        self._refusals = Counter(
            "appliance_access_refused_total",
            "Requests and connections refused by access control or a limit, by reason.",
            ["reason"],
            registry=on,
        )
        self._erasures = Counter(
            "appliance_erasures_total", "Conversations erased, by reason (request, retention).", ["reason"], registry=on
        )
        self._latency = Histogram(
            "appliance_answer_seconds",
            "Time from request to stored answer, queueing included.",
            buckets=self.BUCKETS,
            registry=on,
        )
        # The branch floor: messages a person held, and how long customers waited for a person.
        self._held = Counter(
            "appliance_messages_held_total",
            "Customer messages stored without a model answer (a person asked for or holding the session).",
            registry=on,
        )
        self._wait = Histogram(
            "appliance_person_wait_seconds",
            "Time from needs_person to with_person.",
            buckets=self.WAIT_BUCKETS,
            registry=on,
        )
        self.open_connections: Callable[[], int] | None = None  # the daemon's connection gate, when it has one
        self.more: list[Callable[[], Sequence[Reading]]] = []  # more values, read when the page is asked for

    def waited(self, seconds: float) -> None:
        """A person took a conversation that had asked for one ``seconds`` before."""
        self._wait.observe(seconds)

    def held_message(self) -> None:
        """A customer message stored without an answer: a person is asked for or holds the session."""
        self._held.inc()

    def answered(self, result: TurnResult, started: float) -> None:
        """An answer given: its time since ``started`` (``time.monotonic()``), and the facts the checker flagged."""
        self._latency.observe(time.monotonic() - started)
        self._answers.inc()
        self._flags.inc(len(result.record.check.findings))

    def recorded(self) -> None:
        self._recorded.inc()

    def failed(self, status: int) -> None:
        self._errors.labels(status=str(status)).inc()

    def refused(self, reason: str) -> None:
        """A request turned away by access control or a size limit (``reason`` is a fixed word)."""
        self._refusals.labels(reason=reason).inc()

    def erased(self, reason: str, count: int = 1) -> None:
        self._erasures.labels(reason=reason).inc(count)

    def render(self, queues: Sequence[FairQueue], answering: bool, worker: WorkerStatus | None) -> str:
        """The page: the registry's counters, then what the queues, the worker and :attr:`more` say now."""
        now = _Now([r.family() for r in self._readings(queues, answering, worker)])
        return (generate_latest(self.registry) + generate_latest(now)).decode()

    def _readings(self, queues: Sequence[FairQueue], answering: bool, worker: WorkerStatus | None) -> Iterator[Reading]:
        waiting = {q.name: float(q.waiting) for q in queues}
        yield Reading("appliance_queue_waiting", "gauge", "Answers waiting for their model.", label="model", by=waiting)
        yield Reading("appliance_answering", "gauge", "1 while an answer is being generated.", int(answering))
        if self.open_connections is not None:
            yield Reading("appliance_connections_open", "gauge", _OPEN_HELP, self.open_connections())
        if worker is not None:
            for name, value in sorted(worker.counters().items()):
                yield Reading(f"appliance_summarizer_{name}_total", "counter", f"Summarizer {name}.", value)
            yield Reading("appliance_summarizer_alive", "gauge", "1 while the summary worker runs.", worker.is_alive())
            if isinstance(worker, LagStatus):
                yield Reading("appliance_summarizer_lag_turns_max", "gauge", _LAG_HELP, worker.max_lag())
        for more in self.more:
            yield from more()


@dataclass(frozen=True)
class _Now:
    """A collector of values read once, for one page."""

    families: list[Metric]

    def collect(self) -> list[Metric]:
        return self.families


_OPEN_HELP = "Open HTTP connections (server.max_connections)."
_LAG_HELP = "The most turns any session's current summary is behind (of the sessions the worker has seen)."
