"""The event hub: every stored event to the listeners allowed to see it, as server-sent events.

The store logs an event in the transaction of what it reports (:mod:`appliance.store.floor`) and
then calls :meth:`EventHub.notify` on the writer's thread, which only schedules a wake-up on the
event loop (``call_soon_threadsafe``): an answer never waits for a listener. One pump task reads the
new events once, off the loop (``asyncio.to_thread``), and hands each to the listeners whose filter
it matches; it also reads every second without a wake-up, so a write by another process (``appliance
sessions erase``) reaches the listeners too, and it ends every stream once the daemon stops
accepting work.

Each listener keeps at most ``floor.listener_queue`` events it has not sent yet. One that falls
further behind gets a final ``behind`` event (its last id, so it resumes with ``Last-Event-ID``)
and is disconnected; one whose connection has stopped taking bytes altogether is cut off after a
short grace (:class:`EventStream`). Either way nothing is lost: events are rows, and a reconnect
with ``Last-Event-ID`` replays from the store exactly what followed (``id > n``), then goes live,
skipping what the replay already sent.

Plain ``StreamingResponse`` with the SSE format written here (``id:``, ``event:``, ``data:``, and
``: ping`` comments), rather than sse-starlette: the answer streams already write SSE this way
(:mod:`appliance.serve.streaming`), and what is special here (a send that gives up on a stalled
peer) needs the response's ``send`` anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from starlette.responses import StreamingResponse
from starlette.types import Message, Send

from appliance.errors import Busy
from appliance.serve.metrics import Reading
from appliance.serve.streaming import SSE_HEADERS, event_json
from appliance.store import Logged, Store
from appliance.types import StoredEvent

REPLAY_PAGE = 500  # events read from the store at a time, for a replay or a wake-up
STALL_S = 2.0  # how long a send may still take once its listener is dropped
POLL_S = 1.0  # how often the pump reads the store without being woken

ListenerState = Literal["live", "behind", "ended"]


class Listener:
    """One open stream: which session it follows (None: all), and the events it has yet to send."""

    def __init__(self, session_id: str | None, size: int) -> None:
        self.session_id = session_id
        self.size = size
        self.pending: deque[tuple[StoredEvent, str]] = deque()  # each event with its frame
        self.state: ListenerState = "live"
        self.wake = asyncio.Event()
        self.dropped = asyncio.Event()  # behind or ended: a send stuck on a stalled peer gives up

    def wants(self, event: StoredEvent) -> bool:
        return self.session_id is None or self.session_id == event.session_id

    def push(self, event: StoredEvent, frame: str) -> bool:
        """Queue an event and its frame; False once the listener is too far behind (it is then dropped)."""
        if self.state != "live":
            return False
        if len(self.pending) >= self.size:
            self.end("behind")
            return False
        self.pending.append((event, frame))
        self.wake.set()
        return True

    def end(self, state: ListenerState) -> None:
        if self.state == "live":
            self.state = state
        self.wake.set()
        self.dropped.set()


class EventHub:
    """The daemon's listeners, woken after each commit that logged events."""

    def __init__(
        self,
        store: Store,
        *,
        queue_size: int,
        max_listeners: int,
        ping_s: float,
        accepting: Callable[[], bool] = lambda: True,
    ) -> None:
        self.store = store
        self.queue_size = queue_size
        self.max_listeners = max_listeners
        self.ping_s = ping_s
        self.accepting = accepting
        self.listeners: set[Listener] = set()
        self.dropped = 0  # listeners disconnected for falling behind or stalling
        self.delivered = 0  # events sent to listeners
        self.wakes = 0  # the pump's wake-ups: a commit's, or the poll's
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dirty: asyncio.Event | None = None
        self._pump: asyncio.Task[None] | None = None
        self._opening = asyncio.Lock()
        self._last = 0

    # from any thread ---------------------------------------------------------------------------------

    def notify(self, logged: Logged) -> None:
        """A commit logged events (any: each listener filters its own): wake the pump (from the
        writer's thread; never blocks)."""
        loop, dirty = self._loop, self._dirty
        if loop is not None and dirty is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(dirty.set)

    # on the loop -------------------------------------------------------------------------------------

    async def open(self, session_id: str | None) -> Listener:
        """A new listener (429 beyond ``floor.max_listeners``); the pump starts with the first."""
        if len(self.listeners) >= self.max_listeners:
            raise Busy(f"{len(self.listeners)} event listeners are open (floor.max_listeners)", retry_after=5)
        async with self._opening:  # one pump, and one reading of where "new" starts
            if self._pump is None or self._pump.done():
                self._loop = asyncio.get_running_loop()
                self._dirty = asyncio.Event()
                self._last = await asyncio.to_thread(self.store.last_event_id)
                self._pump = asyncio.create_task(self._run(), name="event-hub")
            elif not self.listeners:  # nobody listened since the pump last read: "new" starts now
                self._last = await asyncio.to_thread(self.store.last_event_id)
            listener = Listener(session_id, self.queue_size)
            self.listeners.add(listener)
        return listener

    def close(self, listener: Listener) -> None:
        if listener in self.listeners:
            self.listeners.discard(listener)
            self.dropped += listener.state == "behind"

    async def _run(self) -> None:
        assert self._dirty is not None
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._dirty.wait(), POLL_S)
            self._dirty.clear()
            self.wakes += 1
            if not self.accepting():
                for listener in list(self.listeners):
                    listener.end("ended")
            if not self.listeners:
                continue
            try:
                await self._deliver()
            except Exception:  # a failed read is retried at the next wake-up; the streams stay open
                await asyncio.sleep(POLL_S)

    async def _deliver(self) -> None:
        while True:
            batch = await asyncio.to_thread(self.store.events_after, self._last, limit=REPLAY_PAGE)
            for event in batch:
                self._last = event.id
                frame = ""  # made once, for every listener that wants it
                for listener in list(self.listeners):
                    if listener.wants(event):
                        frame = frame or _frame(event)
                        listener.push(event, frame)
            if len(batch) < REPLAY_PAGE:
                return

    async def stream(self, listener: Listener, after: int | None) -> AsyncIterator[str]:
        """The listener's events as SSE: the store's after ``after`` (None: only new ones), then
        live ones, with ``: ping`` comments while idle; a final ``behind`` or ``closing`` event."""
        try:
            last = self._last if after is None else after
            while after is not None:
                page = await asyncio.to_thread(
                    self.store.events_after, last, session_id=listener.session_id, limit=REPLAY_PAGE
                )
                for event in page:
                    last = event.id
                    self.delivered += 1
                    yield _frame(event)
                    if event.kind == "erased" and listener.session_id is not None:
                        return  # nothing follows an erasure
                if len(page) < REPLAY_PAGE:
                    break
            while True:
                while listener.pending:
                    event, frame = listener.pending.popleft()
                    if event.id <= last:
                        continue  # the replay sent it already
                    last = event.id
                    self.delivered += 1
                    yield frame
                    if event.kind == "erased" and listener.session_id is not None:
                        return
                if listener.state == "behind":
                    message = "this listener fell behind; reconnect with Last-Event-ID to resume"
                    yield _sse("behind", {"message": message, "last_event_id": last}, None)
                    return
                if listener.state == "ended":
                    yield _sse("closing", {"message": "the appliance is stopping", "last_event_id": last}, None)
                    return
                listener.wake.clear()
                try:
                    await asyncio.wait_for(listener.wake.wait(), self.ping_s)
                except TimeoutError:
                    yield ": ping\n\n"
        finally:
            self.close(listener)

    def readings(self) -> list[Reading]:
        """The hub's gauge and counters for ``/metrics``."""
        return [
            Reading(
                "appliance_event_listeners",
                "gauge",
                "Open event streams (/v1/events and sessions' events).",
                len(self.listeners),
            ),
            Reading(
                "appliance_event_listeners_dropped_total",
                "counter",
                "Event streams disconnected for falling behind.",
                self.dropped,
            ),
            Reading("appliance_events_sent_total", "counter", "Events sent to listeners.", self.delivered),
        ]


def _frame(event: StoredEvent) -> str:
    """A stored event as one SSE frame."""
    data = {"id": event.id, "session_id": event.session_id, "at": event.created_at, **event.data}
    return _sse(event.kind, data, event.id)


def _sse(kind: str, data: dict[str, Any], event_id: int | None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {event_json(data)}\n\n"


class _Stalled(Exception):
    """The peer took no bytes for :data:`STALL_S` after its listener was dropped."""


class EventStream(StreamingResponse):
    """The SSE response of one listener; a send that a stalled peer blocks gives up once the
    listener is dropped, and the connection is closed."""

    def __init__(self, hub: EventHub, listener: Listener, after: int | None) -> None:
        super().__init__(hub.stream(listener, after), media_type="text/event-stream", headers=SSE_HEADERS)
        self.hub = hub
        self.listener = listener

    async def stream_response(self, send: Send) -> None:
        listener = self.listener

        async def guarded(message: Message) -> None:
            sending = asyncio.ensure_future(send(message))
            dropped = asyncio.ensure_future(listener.dropped.wait())
            try:
                await asyncio.wait({sending, dropped}, return_when=asyncio.FIRST_COMPLETED)
                if not sending.done():
                    await asyncio.wait({sending}, timeout=STALL_S)
                if not sending.done():
                    sending.cancel()
                    listener.end("behind")
                    raise _Stalled
                sending.result()
            finally:
                dropped.cancel()

        try:
            await super().stream_response(guarded)
        except _Stalled:
            self.hub.close(listener)  # the generator may never run its own finally
