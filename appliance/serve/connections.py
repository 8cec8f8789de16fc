"""Slow and oversized clients: deadlines, rates and caps on the daemon's connections.

One machine on the branch network must not be able to hold the daemon's files open or its memory
busy before any token is checked. So every connection meets, in its HTTP protocol:

- a cap on open connections per client address (``server.max_connections_per_client``: 429) and in
  all (``server.max_connections``: 503), below the unit's ``LimitNOFILE``, the refused connection
  answered and closed at once while the others are served;
- a header deadline (``server.header_timeout_s``: 408 and closed): a request's line and headers must
  arrive within it of the connection, or of the previous answer on a kept-alive one;
- a header size cap (``server.max_header_bytes``: 431), counted as the bytes arrive, before parsing;
- a minimum body rate: after ``server.body_grace_s``, a body must have arrived at
  ``server.min_body_bytes_per_s`` on average, else the connection is closed (a body the app is not
  reading yet, with the transport paused, does not count against the client).

Why here: an ASGI middleware sees a request only once its headers are complete, so it can neither
time them nor count connections; uvicorn has only a keep-alive timeout for idle connections, and its
h11 size limit answers 400. A small subclass of uvicorn's own h11 protocol (``http="h11"`` pinned)
knows when a connection opens and closes, and h11's state of the client (``their_state``) says
whether headers or a body are awaited, so the rules need a few timers and counters and no parser of
their own. With TLS, a :class:`TLSDoor` counts the connection before its handshake (the handshake
and the first headers share the header deadline), so that connections that never finish one are
capped like the rest. Each refusal is counted in ``/metrics`` by its reason.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from appliance.config import ServerSettings

OnRefuse = Callable[[str, int], None]  # (reason, status; 0 when no answer could be written)

log = logging.getLogger("appliance.daemon")


@dataclass(frozen=True)
class Rules:
    """The connection rules, from ``settings.server``."""

    header_timeout_s: float
    max_header_bytes: int
    min_body_bytes_per_s: int
    body_grace_s: float

    @classmethod
    def of(cls, cfg: ServerSettings) -> Rules:
        return cls(cfg.header_timeout_s, cfg.max_header_bytes, cfg.min_body_bytes_per_s, cfg.body_grace_s)


# Files the daemon needs besides its connections: models, database and WAL, logs, sockets, libraries.
FILES_RESERVED = 256


def total_cap(max_connections: int) -> int:
    """``server.max_connections``, lowered (with a warning) to fit this process's open-file limit, so
    that a flood of connections is refused before the daemon runs out of files."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or max_connections <= soft - FILES_RESERVED:
        return max_connections
    fits = max(1, soft - FILES_RESERVED)
    log.warning(
        "server.max_connections (%d) does not fit the open-file limit of %d (LimitNOFILE, ulimit -n): "
        "at most %d connections are accepted",
        max_connections,
        soft,
        fits,
    )
    return fits


@dataclass(frozen=True)
class Refusal:
    """Why a connection is turned away: the reason counted in ``/metrics``, the status and message of
    its answer."""

    reason: str
    status: int
    message: str


class Gate:
    """Open connections by client address and in all (the event loop's thread only: no lock)."""

    def __init__(self, per_client: int, total: int) -> None:
        self.per_client = per_client
        self.total = total
        self.open = 0
        self._by_client: dict[str, int] = {}

    def admit(self, client: str | None) -> Refusal | None:
        """Count a new connection from ``client`` (None: the Unix socket, not capped per client), or say why not."""
        if self.open >= self.total:
            why = "the daemon holds as many connections as it may (server.max_connections)"
            return Refusal("connections_total", 503, why)
        if client is not None:
            held = self._by_client.get(client, 0)
            if held >= self.per_client:
                why = f"{held} connections from your address are open (server.max_connections_per_client)"
                return Refusal("connections_per_client", 429, why)
            self._by_client[client] = held + 1
        self.open += 1
        return None

    def release(self, client: str | None) -> None:
        self.open -= 1
        if client is not None:
            left = self._by_client[client] - 1
            if left:
                self._by_client[client] = left
            else:
                del self._by_client[client]


@dataclass(frozen=True)
class Guard:
    """What every connection's protocol shares: the rules, the gate, and where refusals are counted."""

    rules: Rules
    gate: Gate
    on_refuse: OnRefuse


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, held to the :class:`Guard`'s rules."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
        *,
        guard: Guard,
        opened_at: float | None = None,
    ) -> None:
        """``opened_at``: the loop's time when a :class:`TLSDoor` accepted the connection (and the gate
        counted it), before its handshake: the first request's headers are due from then."""
        super().__init__(config, server_state, app_state, _loop)
        self.guard = guard
        self.rules = guard.rules
        self._counted = opened_at is not None
        self._opened_at = opened_at
        self._admitted = False
        self._peer: str | None = None
        self._head = bytearray()  # the current request's line and headers, until they are complete
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._body_started = 0.0
        self._body_bytes = 0

    # the connection ---------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        self._peer = str(peer[0]) if isinstance(peer, tuple) else None  # a Unix socket's peer has no address
        refusal = None if self._counted else self.guard.gate.admit(self._peer)
        if refusal is not None:
            self._refuse(refusal.reason, refusal.status, refusal.message, retry_after=1)
            return
        self._admitted = True
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._cancel_timers()
        if self._admitted:
            self._admitted = False
            self.guard.gate.release(self._peer)

    def data_received(self, data: bytes) -> None:
        if not self._admitted:
            return  # refused: the answer is on its way and the connection closing
        if self.conn.their_state is h11.IDLE and self._head_too_large(data):
            limit = self.rules.max_header_bytes
            self._refuse(
                "headers_too_large", 431, f"the request's headers exceed {limit} bytes (server.max_header_bytes)"
            )
            return
        super().data_received(data)
        if self.conn.their_state is h11.SEND_BODY:
            self._body_bytes += len(data)  # counted from the chunk after the headers (_follow starts at 0)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._admitted:
            self._follow()

    # the rules --------------------------------------------------------------------------------

    def _head_too_large(self, data: bytes) -> bool:
        """Add ``data`` to the awaited headers; whether they are now over ``max_header_bytes``."""
        start = max(0, len(self._head) - 3)  # the end marker may straddle two chunks
        self._head += data
        end = self._head.find(b"\r\n\r\n", start)
        size = end + 4 if end >= 0 else len(self._head)
        if end >= 0:
            self._head.clear()  # complete: h11 parses them
        return size > self.rules.max_header_bytes

    def _follow(self) -> None:
        """Arm or disarm the deadlines for what the client is to send next."""
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._header_timer is None:
                since = self.loop.time() if self._opened_at is None else self._opened_at
                self._opened_at = None  # later requests: from the previous answer
                self._header_timer = self.loop.call_at(since + self.rules.header_timeout_s, self._headers_late)
            return
        self._cancel(header=True)
        if state is h11.SEND_BODY:
            if self._body_timer is None:
                self._body_started, self._body_bytes = self.loop.time(), 0
                self._schedule_body_check()
        else:
            self._cancel(body=True)

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._refuse(
                "header_timeout", 408, f"the request's headers took longer than {self.rules.header_timeout_s:g} s"
            )

    def _schedule_body_check(self) -> None:
        """Check again when the body would fall below the minimum rate if nothing more arrived."""
        rate = self.rules.min_body_bytes_per_s
        due = self._body_started + self.rules.body_grace_s + (self._body_bytes + 1) / rate
        self._body_timer = self.loop.call_at(max(due, self.loop.time() + 0.05), self._check_body)

    def _check_body(self) -> None:
        self._body_timer = None
        if self.conn.their_state is not h11.SEND_BODY or self.transport.is_closing():
            return
        now = self.loop.time()
        if self.flow.read_paused:  # the app has not read what came: the client is not the slow one
            self._body_started += 1.0
            self._body_timer = self.loop.call_at(now + 1.0, self._check_body)
            return
        owed = (now - self._body_started - self.rules.body_grace_s) * self.rules.min_body_bytes_per_s
        if self._body_bytes < owed:
            rate = self.rules.min_body_bytes_per_s
            self._refuse("body_too_slow", 408, f"the request's body arrived slower than {rate} bytes per second")
            return
        self._schedule_body_check()

    # refusing ---------------------------------------------------------------------------------

    def _refuse(self, reason: str, status: int, message: str, retry_after: int | None = None) -> None:
        """Count the refusal, answer it if no answer has started on this connection, and close."""
        self._cancel_timers()
        can_answer = self.cycle is None or self.cycle.response_complete or not self.cycle.response_started
        self.guard.on_refuse(reason, status if can_answer else 0)
        if can_answer and not self.transport.is_closing():
            self.transport.write(_answer(status, reason, message, retry_after))
        self.transport.close()

    def _cancel(self, *, header: bool = False, body: bool = False) -> None:
        if header and self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if body and self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _cancel_timers(self) -> None:
        self._cancel(header=True, body=True)


class TLSDoor(asyncio.Protocol):
    """A TCP connection before its TLS handshake: counted by the gate from its first moment, so that
    connections that never finish a handshake are capped like the others, given
    ``header_timeout_s`` for the handshake and the first request's headers together, and handed to the
    HTTP protocol ``http`` makes.

    The door is the protocol above TLS until then: what the client sends with its last handshake
    message is kept and handed on. A refused connection is closed at once (before a handshake, no
    answer could be read).
    """

    def __init__(self, guard: Guard, tls: ssl.SSLContext, http: Callable[[float], asyncio.Protocol]) -> None:
        self.guard = guard
        self.tls = tls
        self.http = http
        self._peer: str | None = None
        self._held = False  # counted by the gate, and not yet handed on or released
        self._early = bytearray()  # decrypted bytes that came before the hand-over
        self._opened_at = 0.0
        self._task: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        self._peer = str(peer[0]) if isinstance(peer, tuple) else None
        refusal = self.guard.gate.admit(self._peer)
        if refusal is not None:
            self.guard.on_refuse(refusal.reason, 0)
            transport.abort()
            return
        self._held = True
        loop = asyncio.get_running_loop()
        self._opened_at = loop.time()
        # Kept until it ends: the loop holds only weak references to its tasks.
        self._task = loop.create_task(self._handshake(transport))

    def data_received(self, data: bytes) -> None:
        self._early += data  # only between the handshake's end and the hand-over: one read at most

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()  # gone before the hand-over

    async def _handshake(self, transport: asyncio.Transport) -> None:
        if transport.is_closing():
            return  # gone already: connection_lost released it
        loop = asyncio.get_running_loop()
        timeout = self.guard.rules.header_timeout_s
        started = self._opened_at
        try:
            secure = await loop.start_tls(transport, self, self.tls, server_side=True, ssl_handshake_timeout=timeout)
        except (OSError, TimeoutError, RuntimeError):  # ssl.SSLError and the connection errors are OSErrors
            # A plain-HTTP client, a certificate the client refused, a client that went away, or a
            # handshake too slow (asyncio aborts it): the connection is closed.
            late = loop.time() - started >= timeout
            self.guard.on_refuse("handshake_timeout" if late else "handshake_failed", 0)
            self._release()
            transport.abort()
            return
        if secure is None or not self._held:
            return  # lost right after the handshake
        self._held = False  # the HTTP protocol releases it when the connection closes
        protocol = self.http(started)  # the headers are due within the deadline of the accept
        secure.set_protocol(protocol)
        protocol.connection_made(secure)
        if self._early:
            protocol.data_received(bytes(self._early))

    def _release(self) -> None:
        if self._held:
            self._held = False
            self.guard.gate.release(self._peer)


def _answer(status: int, kind: str, message: str, retry_after: int | None) -> bytes:
    """A whole HTTP/1.1 response, written outside h11 (whose state may not allow one), then the close."""
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    lines = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
        *([f"retry-after: {retry_after}"] if retry_after is not None else []),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body
