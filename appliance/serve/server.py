"""The daemon's HTTP server: the API app on uvicorn, over sockets the daemon bound, with systemd told.

Split from :mod:`appliance.serve.daemon` so that FastAPI and uvicorn import while the models load
(see there). READY=1 is sent only once uvicorn accepts connections; the watchdog is pinged from the
serving loop while the model makes progress.

uvicorn would serve every socket with one TLS setting and no handshake deadline, so the server here
starts its listeners itself: the TCP socket with the TLS context of :mod:`appliance.serve.tls`,
through a door that counts each connection before its handshake, the Unix socket plain; each
connection is held to the limits of :mod:`appliance.serve.connections`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import signal
import socket
import ssl
from collections.abc import Callable, Coroutine
from types import FrameType
from typing import TYPE_CHECKING, Any

import uvicorn

from appliance.config import ServerSettings, Settings
from appliance.serve import retention
from appliance.serve.api import create_app
from appliance.serve.connections import Gate, Guard, GuardedH11Protocol, Rules, TLSDoor, total_cap
from appliance.serve.sdnotify import Notifier
from appliance.serve.tls import server_context
from appliance.turn.queue import FairQueue

if TYPE_CHECKING:
    from appliance.app import Appliance
    from appliance.serve.auth import Role

log = logging.getLogger("appliance.daemon")  # the daemon's name: its journal lines read as before the split


def run(
    appliance: Appliance,
    settings: Settings,
    tokens: dict[str, Role],
    sockets: list[socket.socket],
    where: str,
    notifier: Notifier,
) -> None:
    """Serve the API on ``sockets`` until SIGTERM or SIGINT, erasing quiet conversations daily."""
    cfg = settings.server
    app = create_app(appliance, tokens=tokens)
    config = uvicorn.Config(
        app,
        http="h11",  # pinned: the protocol the daemon's connection limits are written for
        h11_max_incomplete_event_size=cfg.max_header_bytes + 4,  # a backstop: the guard answers 431 first
        lifespan="off",
        log_level="info",
        server_header=False,
        proxy_headers=False,  # no proxy in front: X-Forwarded-For must not choose whose limits apply
        timeout_graceful_shutdown=math.ceil(cfg.shutdown_grace_s),
    )

    def erased(session_id: str) -> None:
        app.state.access.forget(session_id)
        app.state.metrics.erased("retention")

    keep = retention.keep(appliance.store, appliance.queue, settings.retention.days, on_erased=erased)
    metrics = app.state.metrics

    def refused(reason: str, status: int) -> None:
        metrics.refused(reason)
        if status:
            metrics.failed(status)

    server = _Server(config)
    server.tls = server_context(cfg)
    gate = Gate(cfg.max_connections_per_client, total_cap(cfg.max_connections))
    metrics.open_connections = lambda: gate.open
    server.guard = Guard(Rules.of(cfg), gate, refused)
    with _QuietSignals():
        asyncio.run(_run(server, sockets, where, notifier, appliance, cfg, keep))


class _Server(uvicorn.Server):
    """uvicorn's server, telling the appliance when a stop signal arrives."""

    on_exit: Callable[[], None] = staticmethod(lambda: None)
    tls: ssl.SSLContext | None = None
    guard: Guard | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.on_exit()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start without its listeners, then each socket served here: TLS on TCP only."""
        await super().startup(sockets=[])
        self.started = False  # not before every socket accepts
        loop = asyncio.get_running_loop()
        for sock in sockets or []:
            tls = None if sock.family == socket.AF_UNIX else self.tls
            factory = self.protocol if tls is None else functools.partial(self.door, tls)
            server = await loop.create_server(factory, sock=sock, backlog=self.config.backlog)
            self.servers.append(server)
        self.started = True

    def protocol(self, opened_at: float | None = None) -> asyncio.Protocol:
        """One connection's HTTP protocol: uvicorn's h11 protocol, held to the guard's limits."""
        assert self.guard is not None, "run() sets the guard"
        state = self.lifespan.state
        return GuardedH11Protocol(self.config, self.server_state, state, guard=self.guard, opened_at=opened_at)

    def door(self, tls: ssl.SSLContext) -> asyncio.Protocol:
        """One TCP connection before its TLS handshake, counted from its first moment."""
        assert self.guard is not None, "run() sets the guard"
        return TLSDoor(self.guard, tls, self.protocol)


async def _run(
    server: _Server,
    sockets: list[socket.socket],
    where: str,
    notifier: Notifier,
    appliance: Appliance,
    cfg: ServerSettings,
    keep: Coroutine[Any, Any, None],
) -> None:
    loop = asyncio.get_running_loop()
    queue = appliance.queue

    def stopping() -> None:
        notifier.stopping("finishing answers in progress")
        queue.stop_accepting()

    def on_exit() -> None:
        # handle_exit runs as a signal handler: hand the work to the loop rather than take locks there.
        loop.call_soon_threadsafe(stopping)

    server.on_exit = on_exit
    serving = asyncio.create_task(server.serve(sockets=sockets))
    while not server.started:
        if serving.done():
            keep.close()
            await serving  # startup failed: raise its error
            return
        await asyncio.sleep(0.05)
    notifier.ready(f"serving on {where}")
    log.info("ready: serving on %s", where)
    watchdog = asyncio.create_task(_watchdog(notifier, queue, cfg.hung_after_s))
    sweeping = asyncio.create_task(keep)
    try:
        await serving
    finally:
        watchdog.cancel()
        sweeping.cancel()


async def _watchdog(notifier: Notifier, queue: FairQueue, hung_after_s: float) -> None:
    """Ping systemd's watchdog from the serving loop while the model makes progress."""
    if notifier.watchdog_interval is None:
        return
    warned = False
    while True:
        if queue.stalled(hung_after_s):
            if not warned:
                log.error("the model produced nothing for %.0f s: no more watchdog pings", hung_after_s)
                warned = True
        else:
            notifier.watchdog()  # rate-limited to half the window inside
            warned = False
        await asyncio.sleep(min(1.0, notifier.watchdog_interval / 2))


class _QuietSignals:
    """While serving, SIGTERM/SIGINT must only stop the server, never kill the process mid-cleanup.

    uvicorn restores the handlers it found and re-raises the signal after a graceful stop; with
    the default handlers that would kill us before the database is closed. These do nothing.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __enter__(self) -> None:
        self.saved = {sig: signal.signal(sig, lambda *_: None) for sig in self.SIGNALS}

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
