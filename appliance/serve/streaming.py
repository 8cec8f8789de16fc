"""From the model's thread to the event loop, and out as server-sent events.

Inference never runs on the event loop: a turn is a job in the model's :class:`FairQueue`, whose
worker thread calls back with each token. :class:`Run` carries those tokens to the loop through an
asyncio queue, enforces the request's deadline, and withdraws the job when the client goes away, so
the model stops at its next chunk and the pipeline stores nothing (it writes only complete turns).
Each event goes out as one ``data:`` line of JSON whatever the text: JSON escapes every control
character (line feed and carriage return among them), and :func:`event_json` also escapes U+2028,
U+2029 and U+0085, which ``json.dumps(ensure_ascii=False)`` leaves raw but which line-splitting
clients (httpx's ``iter_lines``, ``str.splitlines``) take as line ends, cutting an event in two.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Generic, TypeVar

from fastapi import Request

from appliance.errors import ApplianceError, Cancelled
from appliance.protocols import OnToken
from appliance.serve.errors import TimedOut, error_body, status_of
from appliance.serve.metrics import Metrics
from appliance.turn.queue import FairQueue, Job

T = TypeVar("T")


_DONE = object()


class Run(Generic[T]):
    """A submitted job seen from the event loop: its tokens as they come, then its result."""

    def __init__(self, queue: FairQueue, deadline: float) -> None:
        self.queue = queue
        self.deadline = deadline
        self.loop = asyncio.get_running_loop()
        self.events: asyncio.Queue[object] = asyncio.Queue()
        self.job: Job[T] | None = None
        self._get: asyncio.Future[object] | None = None
        self._checked = time.monotonic()  # when the client's connection was last looked at

    def start(
        self,
        key: str,
        work: Callable[[threading.Event, OnToken], T],
        on_start: Callable[[], None] = lambda: None,
        owner: str | None = None,
    ) -> Run[T]:
        """Queue ``work`` in lane ``key`` for ``owner`` (its client); ``on_start`` is called when it
        leaves the queue (started, withdrawn or failed), once or more."""

        def fn(job: Job[T]) -> T:
            on_start()

            def on_token(piece: str) -> None:
                job.progress()
                self._post(piece)

            return work(job.cancel, on_token)

        try:
            self.job = self.queue.submit(key, fn, owner)
        except BaseException:
            on_start()
            raise
        self.job.future.add_done_callback(lambda _f: on_start())
        # Done callbacks run after every on_token call was scheduled, so _DONE always comes last.
        self.job.future.add_done_callback(lambda _f: self._post(_DONE))
        return self

    def _post(self, item: object) -> None:
        """Hand an item to the loop from the model's thread; after shutdown there is no one to hand it to."""
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.events.put_nowait, item)

    async def next(self, request: Request | None = None, poll_s: float = 0.5) -> str | None:
        """The next piece of text, or None once the work is over (then call :meth:`result`).

        With ``request``, checks every ``poll_s`` whether the client went away (before a streamed
        response starts; once it has, Starlette cancels the stream on disconnect instead).
        """
        while True:
            now = time.monotonic()
            remaining = self.deadline - now
            if remaining <= 0:
                self.stop()
                raise TimedOut("the answer took longer than server.request_timeout_s; nothing was stored")
            # Checked on a clock, not only when tokens pause: a fast model never pauses for poll_s.
            if request is not None and now - self._checked >= poll_s:
                self._checked = now
                if await request.is_disconnected():
                    self.stop()
                    raise Cancelled("the client went away")
            if self._get is None:
                self._get = asyncio.ensure_future(self.events.get())
            done, _ = await asyncio.wait({self._get}, timeout=min(remaining, poll_s) if request else remaining)
            if done:
                item, self._get = self._get.result(), None
                return None if item is _DONE else str(item)

    async def pieces(self, first: str | None) -> AsyncIterator[str]:
        """The text as it comes, for a stream: ``first`` (from :meth:`first`), then each next piece."""
        piece = first
        while piece is not None:
            yield piece
            piece = await self.next()

    async def first(self, request: Request) -> str | None:
        """The first piece of text, awaited before any response starts.

        A failure before it (an unknown session, a full queue, a timeout) is raised here, so that it
        is answered with its own status rather than inside a stream that already said 200.
        """
        try:
            piece = await self.next(request)
            if piece is None:
                self.result()
            return piece
        except BaseException:
            self.stop()
            raise

    async def finish(self, request: Request, first: str | None) -> T:
        """Wait out the remaining pieces of an answer that is not streamed, then its result."""
        try:
            piece = first
            while piece is not None:
                piece = await self.next(request)
            return self.result()
        finally:
            self.stop()

    def result(self) -> T:
        assert self.job is not None
        return self.job.future.result()

    def stop(self) -> None:
        """Cancel the job unless it is complete; harmless afterwards."""
        if self._get is not None:
            self._get.cancel()
            self._get = None
        if self.job is not None and not self.job.future.done():
            self.queue.withdraw(self.job)


# What JSON leaves raw but line-splitting clients break lines at. Inside JSON these characters can
# only stand in strings, where their escapes mean the same.
_LINE_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def event_json(data: Mapping[str, Any]) -> str:
    """``data`` as JSON on one line, whatever line separators its text holds.

    Text no UTF-8 can hold (a lone surrogate from a model's half-decoded bytes) is sent as JSON
    escapes instead, so that the event can still be sent rather than drop the connection.
    """
    text = json.dumps(data, ensure_ascii=False).translate(_LINE_BREAKS)
    try:
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(data)
    return text


def sse(event: str, data: Mapping[str, Any]) -> str:
    """One server-sent event: an ``event:`` line and one ``data:`` line."""
    return f"event: {event}\ndata: {event_json(data)}\n\n"


def sse_data(data: Mapping[str, Any] | str) -> str:
    """An OpenAI-style event: a bare ``data:`` line (``[DONE]`` as it is)."""
    text = data if isinstance(data, str) else event_json(data)
    return f"data: {text}\n\n"


SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def guarded(
    events: AsyncIterator[str], run: Run[Any], metrics: Metrics, error_event: Callable[[dict[str, Any]], str]
) -> AsyncIterator[str]:
    """``events``; after a typed error, one last event that says it (the stream already said 200).

    The job is stopped however the stream ends: when the client goes away, Starlette cancels it.
    """
    try:
        async for event in events:
            yield event
    except ApplianceError as exc:
        metrics.failed(status_of(exc)[0])
        yield error_event(error_body(exc))
    finally:
        run.stop()
