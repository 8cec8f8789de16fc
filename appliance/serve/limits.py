"""Limits on everything a client sends, so that one client can neither stall nor starve the others.

Each is checked before the work it guards, and cheaply: a body's bytes from ``Content-Length`` and
while it is read, before any JSON parsing (:class:`BodyLimit`); a chat completion's messages by
count, then their characters in one pass, before the model or the context policy sees them; a
summary edit by characters (eight per token of ``summarizer.max_tokens``, more than any real token
needs); a title; a session's turns; the sessions one client starts per minute (:class:`SessionRate`);
and the answers one client may have waiting (:class:`QueueShare`: ``server.queue_share`` of
``server.queue_max``), so that a greedy client is refused (429) while others are still served.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from appliance.config import Settings
from appliance.errors import Busy, InputError
from appliance.serve.errors import RateLimited, TooLarge, TurnLimit, error_response

CHARS_PER_TOKEN = 8  # a summary edit's cap in characters per token of summarizer.max_tokens: generous
DRAIN_CAP_BYTES = 64 * 1024 * 1024  # an oversized body up to this is read and dropped, so the 413 is seen
DRAIN_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Limits:
    """The per-request limits, from the settings."""

    max_body_bytes: int
    max_chat_messages: int
    max_chat_chars: int
    max_title_chars: int
    max_summary_chars: int
    max_turns: int

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        s = settings.server
        return cls(
            max_body_bytes=s.max_body_bytes,
            max_chat_messages=s.max_chat_messages,
            max_chat_chars=s.max_chat_chars,
            max_title_chars=s.max_title_chars,
            max_summary_chars=settings.summarizer.max_tokens * CHARS_PER_TOKEN,
            max_turns=s.max_turns_per_session,
        )

    def chat(self, texts: Sequence[str]) -> None:
        """A chat completion's messages: their number first, then their characters (one pass)."""
        if len(texts) > self.max_chat_messages:
            raise TooLarge(
                f"{len(texts)} messages are more than the limit of {self.max_chat_messages} (server.max_chat_messages)",
                field="messages",
                limit=self.max_chat_messages,
            )
        total = 0
        for text in texts:
            total += len(text)
            if total > self.max_chat_chars:
                raise TooLarge(
                    f"the messages hold more than the limit of {self.max_chat_chars} characters (server.max_chat_chars)",
                    field="messages",
                    limit=self.max_chat_chars,
                )

    def title(self, title: str) -> None:
        _within(title, self.max_title_chars, "a title", "server.max_title_chars", InputError, "title")

    def summary(self, text: str) -> None:
        why = f"{CHARS_PER_TOKEN} per token of summarizer.max_tokens"
        _within(text, self.max_summary_chars, "a summary", why, TooLarge, "text")

    def turns(self, stored: int, adding: int) -> None:
        """Before a turn is stored: the session may hold at most ``max_turns`` turns."""
        if stored + adding > self.max_turns:
            raise TurnLimit(
                f"the session holds {stored} turns and may hold at most {self.max_turns} "
                "(server.max_turns_per_session); start a new session",
                field="session_id",
                limit=self.max_turns,
            )


def _within(text: str, limit: int, what: str, why: str, error: type[InputError], field: str) -> None:
    """Refuse ``text`` over ``limit`` characters; ``why`` names where the limit comes from."""
    if len(text) > limit:
        raise error(
            f"{what} of {len(text)} characters is longer than the limit of {limit} ({why})", field=field, limit=limit
        )


class SessionRate:
    """At most ``per_minute`` new sessions per client in any 60 seconds (a sliding window).

    Not the ``limits`` library's moving window: its in-memory storage times entries by the wall clock,
    so a clock set back by an hour refuses a client for that hour (measured for issue 40); this one
    runs on the monotonic clock, which the tests can also hand in.
    """

    WINDOW_S = 60.0

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._starts: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def take(self, client: str) -> None:
        now = self.clock()
        with self._lock:
            starts = self._starts.setdefault(client, deque())
            while starts and starts[0] <= now - self.WINDOW_S:
                starts.popleft()
            if len(starts) >= self.per_minute:
                wait = starts[0] + self.WINDOW_S - now
                raise RateLimited(
                    f"more than {self.per_minute} new sessions in a minute (server.sessions_per_minute)",
                    retry_after=wait,
                )
            starts.append(now)


class QueueShare:
    """Answers one client may have waiting in the model's queue: ``share`` of ``queue_max``, at least one."""

    def __init__(self, queue_max: int, share: float, retry_after: float) -> None:
        self.cap = max(1, math.floor(queue_max * share))
        self.retry_after = retry_after
        self._waiting: dict[str, int] = {}
        self._lock = threading.Lock()

    def claim(self, client: str) -> Callable[[], None]:
        """Count one more waiting job for ``client``, or raise :class:`Busy`; returns the release
        (call it when the job starts or ends; calls after the first do nothing)."""
        with self._lock:
            count = self._waiting.get(client, 0)
            if count >= self.cap:
                raise Busy(
                    f"{count} of your answers are already waiting, your share of the queue "
                    f"(server.queue_share of server.queue_max)",
                    retry_after=self.retry_after,
                )
            self._waiting[client] = count + 1
        released = threading.Event()

        def release() -> None:
            with self._lock:
                if released.is_set():
                    return
                released.set()
                left = self._waiting[client] - 1
                if left:
                    self._waiting[client] = left
                else:
                    del self._waiting[client]

        return release

    def waiting(self, client: str) -> int:
        with self._lock:
            return self._waiting.get(client, 0)


class BodyLimit:
    """Refuse a request body over ``max_bytes`` with 413, before anything parses it.

    A path under one of ``larger``'s prefixes has that limit instead (a document upload, up to
    ``knowledge.max_file_mb``). A declared ``Content-Length`` over the limit is refused at once; a body without one is counted
    as it arrives. The body is read here, whole and bounded, and handed on as one message. The
    rest of an oversized body (up to ``DRAIN_CAP_BYTES``, within ``DRAIN_TIMEOUT_S``) is read and
    dropped, so that a client still sending sees the 413 rather than a reset connection; one that
    waits for ``100 Continue`` is answered at once.
    """

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        on_refuse: Callable[[str, int], None],
        larger: Mapping[str, int] | None = None,
        setting: str = "server.max_body_bytes",
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.on_refuse = on_refuse
        self.larger = dict(larger or {})  # path prefix -> its own limit (a document upload)
        self.setting = setting  # where the limit comes from, for the refusal's message

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        limit = next((n for prefix, n in self.larger.items() if path.startswith(prefix)), self.max_bytes)
        if limit != self.max_bytes:
            await BodyLimit(self.app, limit, self.on_refuse, setting="knowledge.max_file_mb")(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length")
        size = int(declared) if declared is not None and declared.strip().isdigit() else None
        if size is not None and size > self.max_bytes:
            # A client that waits for "100 Continue" has sent nothing yet: answer without asking for it.
            if size <= DRAIN_CAP_BYTES and headers.get("expect", "").lower() != "100-continue":
                await _drain(receive)
            await self.refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away while sending: there is no one to answer
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > self.max_bytes:
                if message.get("more_body", False):
                    await _drain(receive)
                await self.refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.on_refuse("body", 413)
        exc = TooLarge(
            f"the request body is larger than the limit of {self.max_bytes} bytes ({self.setting})",
            field="body",
            limit=self.max_bytes,
        )
        await error_response(exc)(scope, receive, send)


async def _drain(receive: Receive) -> None:
    """Read and drop the rest of a body, up to ``DRAIN_CAP_BYTES`` and ``DRAIN_TIMEOUT_S``."""

    async def drain() -> None:
        dropped = 0
        while dropped <= DRAIN_CAP_BYTES:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                return
            dropped += len(message.get("body", b""))

    try:
        await asyncio.wait_for(drain(), DRAIN_TIMEOUT_S)
    except TimeoutError:
        pass  # answered anyway; the server closes the connection


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands over the body read ahead once, then whatever the connection says next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
