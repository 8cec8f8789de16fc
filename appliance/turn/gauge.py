"""Answers in progress: the pipeline's ``answering`` gauge, which background work on the same cores
(summaries, prefix warm-ups) reads to yield to the customer who waits (:class:`~appliance.protocols.Busy`)."""

from __future__ import annotations

import threading


class AnswerGauge:
    """Counts answers in progress; ``busy`` is true while any is."""

    def __init__(self) -> None:
        self._n = 0
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    def __enter__(self) -> None:
        with self._lock:
            self._n += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._n -= 1
            if self._n == 0:
                self._idle.notify_all()

    @property
    def busy(self) -> bool:
        return self._n > 0

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no answer is in progress; False if ``timeout`` passed first."""
        with self._lock:
            return self._idle.wait_for(lambda: self._n == 0, timeout)
