"""`appliance serve`: build everything from the config, serve the HTTP API, keep systemd informed.

The order is what systemd's Type=notify relies on: the model files are verified against their
sha256 and loaded and the database is opened and migrated before anything listens, and READY=1 is
sent only once the server accepts connections. The watchdog is pinged from the serving event loop,
and only while the model makes progress, so a blocked loop or a hung generation both let systemd
restart the service. On SIGTERM the daemon stops accepting, fails queued answers (503), lets the
running one finish within ``server.shutdown_grace_s`` (else cancels it, storing nothing), and closes
the database; every session continues after a restart because everything lives in the database.

Bearer tokens are read from their files once, at start (``server.token_file`` is an operator's,
``server.tokens`` maps more files to roles; under systemd they are credentials, see
``systemd/appliance.service``). Conversations quiet for longer than ``retention.days`` are erased
once the daemon is ready and then daily. The access log leaves out query strings, where a search
for a customer's name would otherwise be written to the journal.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
import os
import signal
import socket
import stat
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

from appliance.app import Appliance, build
from appliance.config import ServerSettings, Settings, read_token_file
from appliance.errors import ConfigError
from appliance.serve import retention
from appliance.serve.api import create_app
from appliance.serve.auth import Role
from appliance.serve.sdnotify import Notifier
from appliance.turn.queue import FairQueue

log = logging.getLogger("appliance.daemon")


def serve(
    settings: Settings,
    *,
    host: str | None = None,
    port: int | None = None,
    socket_path: str | None = None,
    notifier: Notifier | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT; options given here override ``settings.server``."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    cfg = settings.server
    base = Path(settings.source).parent if settings.source != "<defaults>" else Path.cwd()
    host = cfg.host if host is None else host
    port = cfg.port if port is None else port
    unix = _path(base, cfg.socket if socket_path is None else socket_path)
    tokens = read_tokens(base, cfg)
    if not host and unix is None:
        raise ConfigError("server.host is empty and no server.socket is set: nothing to listen on")
    if host and not is_loopback(host) and not tokens:
        raise ConfigError(
            f"server.host {host!r} is not a loopback address: set server.token_file (or server.tokens) "
            "to a file holding a bearer token"
        )
    notifier = notifier or Notifier.from_env()
    notifier.status("verifying and loading the models")
    logging.getLogger("uvicorn.access").addFilter(_without_query)
    appliance = build(settings)
    try:
        app = create_app(appliance, tokens=tokens)
        sockets, where = bind(host, port, unix)
        config = uvicorn.Config(
            app,
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
        with _QuietSignals():
            asyncio.run(_run(_Server(config), sockets, where, notifier, appliance, cfg, keep))
    finally:
        notifier.stopping("closing the database")
        appliance.close(timeout=10)  # the queue, the worker, the database; whatever runs stores nothing
        if unix is not None and unix.is_socket():
            unix.unlink()
    log.info("stopped cleanly")


def read_tokens(base: Path, cfg: ServerSettings) -> dict[str, Role]:
    """Each bearer token and its role, read from the files ``server.token_file`` and ``server.tokens`` name.

    A token that two files give different roles is refused: which role would it have?
    """
    files: list[tuple[str, Path, Role]] = [
        (f"server.tokens.{name}", path, role)
        for name, role in cfg.tokens.items()
        if (path := _path(base, name)) is not None
    ]
    token_path = _path(base, cfg.token_file)
    if token_path is not None:
        files.append(("server.token_file", token_path, "operator"))
    tokens: dict[str, Role] = {}
    for key, path, role in files:
        token = read_token_file(path, key)
        if tokens.get(token, role) != role:
            raise ConfigError(f"{key}: {path} holds a token that another file gives the role {tokens[token]!r}")
        tokens[token] = role
    return tokens


def _without_query(record: logging.LogRecord) -> bool:
    """uvicorn's access log line, without the query string (a search for a customer's name)."""
    args = record.args
    if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
        record.args = (args[0], args[1], args[2].split("?", 1)[0], args[3], args[4])
    return True


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost could resolve to anything


def bind(host: str, port: int, unix: Path | None) -> tuple[list[socket.socket], str]:
    """Bound sockets for uvicorn (TCP and/or Unix), and a description of where they listen."""
    sockets: list[socket.socket] = []
    where: list[str] = []
    try:
        if host:
            family, kind, proto, _, address = socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )[0]
            tcp = socket.socket(family, kind, proto)
            sockets.append(tcp)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind(address)
            bound = tcp.getsockname()
            where.append(f"http://{'[' + bound[0] + ']' if family == socket.AF_INET6 else bound[0]}:{bound[1]}")
        if unix is not None:
            _clear_stale_socket(unix)
            unix.parent.mkdir(parents=True, exist_ok=True)
            uds = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sockets.append(uds)
            uds.bind(str(unix))
            os.chmod(unix, 0o660)  # owner and group: the operators' group reaches the API, others do not
            where.append(f"unix:{unix}")
    except OSError as exc:
        for s in sockets:
            s.close()
        raise ConfigError(f"cannot listen on {host or ''}:{port} {unix or ''}: {exc.strerror or exc}") from None
    return sockets, " and ".join(where)


def _clear_stale_socket(path: Path) -> None:
    """Remove a socket file left by a crashed run, but never one that another daemon still serves."""
    if not path.exists():
        return
    if not stat.S_ISSOCK(path.stat().st_mode):
        raise ConfigError(f"server.socket: {path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        path.unlink()
    else:
        raise ConfigError(f"server.socket: {path} is in use by another process")
    finally:
        probe.close()


class _Server(uvicorn.Server):
    """uvicorn's server, telling the appliance when a stop signal arrives."""

    on_exit: Callable[[], None] = staticmethod(lambda: None)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.on_exit()


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


def _path(base: Path, value: str) -> Path | None:
    if not value:
        return None
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p
