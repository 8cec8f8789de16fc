"""One queue per model: turns run on its worker threads (``parallel`` of them), sessions taken in turn.

Every turn that touches a session's transcript (an answer, an operator's recorded turn) goes
through its session's lane, so turns of one session are written in order and an operator's turn
can never land between an answer's snapshot and its store: a lane runs one job at a time. A single
llama.cpp context serves one generation at a time, so with ``parallel`` = 1 one thread loses nothing;
a batched responder (``responder.parallel``) decodes that many answers together, so as many jobs of
different sessions run at once, each holding one of its sequences.
"""

from __future__ import annotations

import concurrent.futures
import math
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from appliance.errors import Busy, Cancelled, ShuttingDown

T = TypeVar("T")


class Job(Generic[T]):
    """One piece of model work waiting in, or taken from, a :class:`FairQueue`."""

    def __init__(self, key: str, fn: Callable[[Job[T]], T], owner: str | None = None) -> None:
        self.key = key
        self.owner = owner or key  # the client whose share it counts against
        self.fn = fn
        self.cancel = threading.Event()
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self.last_progress = time.monotonic()

    def progress(self) -> None:
        """Called by the work as it advances (each token), so that a hung model can be told apart."""
        self.last_progress = time.monotonic()


class FairQueue:
    """The jobs for one model, run on ``parallel`` worker threads, sessions taken in turn.

    Each key (a session) has its own lane; a free worker takes the first job of the first lane
    whose session has no job running, and moves that lane to the back, so ten queued turns of one
    session do not delay another session's single turn by ten answers, and one session never holds
    two of the model's sequences. Within a lane jobs keep their order. A job's owner (its client)
    that already runs ``share`` of the ``parallel`` jobs waits while another owner's job can run
    instead: no client fills every sequence while others wait.
    """

    def __init__(
        self, name: str, *, max_waiting: int, retry_after: float, parallel: int = 1, share: float = 1.0
    ) -> None:
        self.name = name
        self.owner_cap = max(1, math.floor(max(1, parallel) * share))
        self.max_waiting = max_waiting
        self.retry_after = retry_after
        self._lanes: OrderedDict[str, deque[Job[Any]]] = OrderedDict()
        self._waiting = 0
        self._running: list[Job[Any]] = []
        self._closed = False
        self._cond = threading.Condition()
        self._threads = [
            threading.Thread(target=self._work, name=f"model-{name}" + (f"-{i}" if i else ""), daemon=True)
            for i in range(max(1, parallel))
        ]

    def start(self) -> FairQueue:
        for thread in self._threads:
            thread.start()
        return self

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def running(self) -> bool:
        return bool(self._running)

    def alive(self) -> bool:
        return all(t.is_alive() for t in self._threads) and not self._closed

    def stalled(self, limit_s: float) -> bool:
        """True if a running job has made no progress for ``limit_s`` seconds (a hung model)."""
        now = time.monotonic()
        return any(now - job.last_progress > limit_s for job in list(self._running))

    def submit(self, key: str, fn: Callable[[Job[T]], T], owner: str | None = None) -> Job[T]:
        with self._cond:
            if self._closed:
                raise ShuttingDown("the appliance is shutting down; try again after it restarts")
            if self._waiting >= self.max_waiting:
                raise Busy(
                    f"the {self.name} queue is full ({self._waiting} answers waiting; server.queue_max)",
                    retry_after=self.retry_after,
                )
            job = Job(key, fn, owner)
            self._lanes.setdefault(key, deque()).append(job)
            self._waiting += 1
            self._cond.notify()
        return job

    def withdraw(self, job: Job[Any]) -> None:
        """Cancel a job: drop it if it still waits, else ask the running work to stop."""
        job.cancel.set()
        with self._cond:
            lane = self._lanes.get(job.key)
            if lane is not None and any(j is job for j in lane):
                lane.remove(job)
                self._waiting -= 1
                if not lane:
                    del self._lanes[job.key]
                job.future.set_exception(Cancelled("withdrawn before it started"))

    def stop_accepting(self) -> None:
        """Refuse new jobs and fail the waiting ones; the running one may finish."""
        with self._cond:
            self._closed = True
            for lane in self._lanes.values():
                for job in lane:
                    job.cancel.set()
                    job.future.set_exception(ShuttingDown("the appliance is shutting down"))
            self._lanes.clear()
            self._waiting = 0
            self._cond.notify_all()

    def close(self, timeout: float | None = None) -> None:
        """Stop accepting, cancel the running job, and wait for the worker thread to end."""
        self.stop_accepting()
        with self._cond:
            for job in self._running:
                job.cancel.set()
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            if thread.is_alive():
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def _next(self) -> str | None:
        """The first lane whose session has no job running (one session, one sequence at a time),
        an owner under its share first; over it only when no other can run (nothing stays idle)."""
        busy = {job.key for job in self._running}
        held = Counter(job.owner for job in self._running)
        ready = [key for key in self._lanes if key not in busy]
        under = (key for key in ready if held[self._lanes[key][0].owner] < self.owner_cap)
        return next(under, ready[0] if ready else None)

    def _work(self) -> None:
        while True:
            with self._cond:
                while (key := self._next()) is None and not self._closed:
                    self._cond.wait()
                if key is None:
                    return
                lane = self._lanes[key]
                job = lane.popleft()
                self._waiting -= 1
                if lane:
                    self._lanes.move_to_end(key)
                else:
                    del self._lanes[key]
                self._running.append(job)
                job.progress()
            try:
                if job.future.set_running_or_notify_cancel():
                    try:
                        result = job.fn(job)
                    except Exception as exc:  # handed to the waiting request, which translates it
                        job.future.set_exception(exc)
                    else:
                        job.future.set_result(result)
            finally:
                with self._cond:
                    self._running.remove(job)
                    self._cond.notify_all()  # its session's next job may run now
