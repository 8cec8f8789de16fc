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
for a customer's name would otherwise be written to the journal. An address other than loopback
needs a token and TLS (:mod:`appliance.serve.tls`), both checked before the models load.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from appliance.app import build
from appliance.config import ServerSettings, Settings, read_token_file
from appliance.errors import ConfigError
from appliance.serve.sdnotify import Notifier
from appliance.serve.tls import check_plain_http, server_context

if TYPE_CHECKING:
    from appliance.knowledge import Knowledge
    from appliance.serve.auth import Role

log = logging.getLogger("appliance.daemon")


def serve(settings: Settings, *, notifier: Notifier | None = None) -> None:
    """Serve on ``settings.server``'s address and socket until SIGTERM or SIGINT."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    cfg = settings.server
    host, port = cfg.host, cfg.port
    unix = Path(cfg.socket) if cfg.socket else None
    tokens = read_tokens(cfg)
    if not host and unix is None:
        raise ConfigError("server.host is empty and no server.socket is set: nothing to listen on")
    if host and not is_loopback(host) and not tokens:
        raise ConfigError(
            f"server.host {host!r} is not a loopback address: set server.token_file (or server.tokens) "
            "to a file holding a bearer token"
        )
    check_plain_http(cfg, bool(host) and not is_loopback(host))
    server_context(cfg)  # a certificate or key that cannot be used fails here, before the models load
    notifier = notifier or Notifier.from_env()
    notifier.status("verifying and loading the models")
    logging.getLogger("uvicorn.access").addFilter(_without_query)
    # FastAPI and uvicorn (about half a second of imports on a small box) import beside the model loads.
    appliance = build(settings, imports=("appliance.serve.server",))
    try:
        sync_knowledge(appliance.knowledge, settings, notifier)
        from appliance.serve.server import run

        sockets, where = bind(host, port, unix, scheme="https" if cfg.tls_cert_file else "http")
        run(appliance, settings, tokens, sockets, where, notifier)
    finally:
        notifier.stopping("closing the database")
        appliance.close(timeout=10)  # the queue, the worker, the database; whatever runs stores nothing
        if unix is not None and unix.is_socket():
            unix.unlink()
    log.info("stopped cleanly")


# While the knowledge folders sync before READY, each step of progress asks systemd for this much more.
SYNC_EXTEND_S = 90.0


def sync_knowledge(knowledge: Knowledge | None, settings: Settings, notifier: Notifier) -> None:
    """Sync ``knowledge.paths`` before READY, so that the first answers already have the documents.

    Unchanged folders take seconds. A first ingest can take minutes: each batch of documents read asks
    systemd for ``SYNC_EXTEND_S`` more start-up time (``EXTEND_TIMEOUT_USEC``) and says how far it got,
    so the start limit follows progress, and a sync that hangs still fails the start. The watchdog only
    runs from READY on, when the serving loop pings it; later syncs (``POST /v1/knowledge/sync``) run
    on a worker thread, off that loop.
    """
    if knowledge is None or not settings.knowledge.paths:
        return

    def progress(text: str) -> None:
        notifier.extend(SYNC_EXTEND_S, text)
        log.info("%s", text)

    progress("syncing the knowledge folders")
    report = knowledge.sync_configured(progress)
    log.info(
        "knowledge: %d added, %d replaced, %d removed, %d unchanged in %.1f s",
        len(report.added),
        len(report.replaced),
        len(report.removed),
        len(report.unchanged),
        report.seconds,
    )
    for name, error in report.failed:
        log.warning("knowledge: not taken in: %s", error if error.startswith(name) else f"{name}: {error}")


def read_tokens(cfg: ServerSettings) -> dict[str, Role]:
    """Each bearer token and its role, read from the files ``server.token_file`` and ``server.tokens`` name.

    A token that two files give different roles is refused: which role would it have?
    """
    files: list[tuple[str, Path, Role]] = [
        (f"server.tokens.{name}", Path(name), role) for name, role in cfg.tokens.items()
    ]
    if cfg.token_file:
        files.append(("server.token_file", Path(cfg.token_file), "operator"))
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


def bind(host: str, port: int, unix: Path | None, scheme: str = "http") -> tuple[list[socket.socket], str]:
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
            where.append(f"{scheme}://{'[' + bound[0] + ']' if family == socket.AF_INET6 else bound[0]}:{bound[1]}")
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
