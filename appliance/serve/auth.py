"""Who may call, and what: the Host and Origin a request arrives with, its bearer token, its role.

The API holds what customers told a bank counter, so three doors are checked before any route runs,
as pure ASGI middleware (not Starlette's BaseHTTPMiddleware, so that streamed responses and client
disconnects pass through untouched):

- :class:`Gate`: a Host header that names neither this appliance (the address the connection came
  in on, ``localhost``, a loopback address) nor ``server.allowed_hosts`` is refused with 421. That is
  what defeats DNS rebinding: a web page whose name was re-pointed at 127.0.0.1 still sends its own
  name. A browser ``Origin`` that is not in ``server.allowed_origins`` is refused with 403 (CORS is
  answered only for configured origins, by Starlette's middleware placed behind this gate).
- :class:`BearerAuth`: the ``Authorization: Bearer`` token (the scheme in any case) is compared in
  constant time with every configured token, and names the caller's :class:`Principal`. Without any
  configured token every caller is an operator (development on loopback; the daemon refuses any other
  address without tokens). A request over the Unix socket without a token is an operator: the
  socket's mode (0660) and group admit only the service and the operators' group.
- :class:`Access`: what each role may do (``RIGHTS``), and which sessions a kiosk or integration token
  created: the store keeps the creator's digest with the session (``sessions.owner``), so ownership
  survives a restart; a small cache spares the lookup on every request.

Refusals are counted by reason in ``/metrics``; no token, nor anything derived from one that could
be replayed, is logged or sent back.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from fastapi import Request
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from appliance.errors import ApplianceError, SessionNotFound
from appliance.serve.errors import Forbidden, MisdirectedRequest, Unauthorized, error_response

if TYPE_CHECKING:
    from appliance.store import Store

Role = Literal["operator", "kiosk", "integration"]
Action = Literal[
    "create",
    "list",
    "read",
    "talk",
    "record",
    "summary",
    "erase",
    "openai",
    "knowledge",
    "follow",
    "watch",
    "ask",
    "hold",
]

# What each role may do. Session routes also need the session to be the caller's own (operators: any).
RIGHTS: dict[Role, frozenset[Action]] = {
    "operator": frozenset(
        ("create", "list", "read", "talk", "record", "summary", "erase", "openai", "knowledge", "follow", "watch")
        + ("ask", "hold")
    ),
    # The customer's side may follow its own sessions and ask for a person; taking over is the operators'.
    "kiosk": frozenset(("create", "read", "talk", "follow", "ask")),
    "integration": frozenset(("create", "read", "talk", "record", "openai", "follow", "ask")),
}
WHAT: dict[Action, str] = {
    "create": "start sessions",
    "list": "list or search sessions",
    "read": "read sessions",
    "talk": "send messages",
    "record": "record turns",
    "summary": "change summaries",
    "erase": "erase sessions",
    "openai": "use the OpenAI endpoint",
    "knowledge": "read or change the knowledge base",
    "follow": "follow a session's events",
    "watch": "follow every session's events",
    "ask": "ask for a person",
    "hold": "take over, hand back or close conversations",
}

OnRefuse = Callable[[str, int], None]  # (reason, HTTP status): counted in /metrics
PRINCIPAL = "appliance.principal"  # where BearerAuth leaves the caller in the ASGI scope


@dataclass(frozen=True)
class Principal:
    """The caller: its role, and ``client``, the key its limits and its sessions are kept under.

    ``client`` is ``token:<digest prefix>`` for a token (never the token), ``unix`` for the Unix
    socket, and ``address:<ip>`` for a caller without tokens configured.
    """

    role: Role
    client: str


def principal(request: Request) -> Principal:
    """The caller of a request that came through :class:`BearerAuth`; an operator when it did not
    (an app built without it, in tests)."""
    found = request.scope.get(PRINCIPAL)
    return found if isinstance(found, Principal) else Principal("operator", "local")


# the Host and Origin gate ------------------------------------------------------------------------


class Gate:
    """Refuse a foreign Host (421) and an unconfigured browser Origin (403) before anything runs."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], origins: Iterable[str], on_refuse: OnRefuse) -> None:
        self.app = app
        self.hosts = frozenset(h.lower().rstrip(".") for h in hosts)
        self.origins = frozenset(normal_origin(o) for o in origins)
        self.on_refuse = on_refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self.check(scope)
            if refusal is not None:
                reason, exc = refusal
                self.on_refuse(reason, 421 if isinstance(exc, MisdirectedRequest) else 403)
                await error_response(exc)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def check(self, scope: Scope) -> tuple[str, ApplianceError] | None:
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is not None and not is_unix(scope) and not self.host_allowed(host, scope.get("server")):
            return "host", MisdirectedRequest(
                "this appliance does not answer to that Host name (add it to server.allowed_hosts if it is yours)"
            )
        origin = headers.get("origin")
        if origin is not None:
            if normal_origin(origin) not in self.origins:
                return "origin", Forbidden("requests from this web origin are not allowed (server.allowed_origins)")
        elif headers.get("sec-fetch-site") in ("cross-site", "same-site"):
            # A browser request from another site that carries no Origin (a no-cors GET).
            return "origin", Forbidden("cross-site browser requests are not allowed (server.allowed_origins)")
        return None

    def host_allowed(self, header: str, server: object) -> bool:
        """The Host names this appliance: the address the connection came in on, ``localhost``, a
        loopback address or a configured name (any port: a rebinding page keeps the port anyway)."""
        name = host_name(header)
        bound = str(server[0]).lower() if isinstance(server, tuple | list) and server else None
        if name in self.hosts or name == "localhost" or name == bound:
            return True
        try:
            return ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False


def host_name(header: str) -> str:
    """The name in a Host header, without its port, brackets or a trailing dot, in lower case."""
    value = header.strip().lower()
    if value.startswith("["):  # [::1]:8088
        return value[1:].split("]", 1)[0]
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def normal_origin(origin: str) -> str:
    return origin.strip().lower().rstrip("/")


# bearer tokens and roles -------------------------------------------------------------------------


def client_key(token: str) -> str:
    """The key a token's limits and sessions are kept under: a digest prefix, never the token."""
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:16]


class BearerAuth:
    """Name each request's :class:`Principal` from its bearer token, or refuse it with 401."""

    def __init__(self, app: ASGIApp, tokens: Mapping[str, Role], on_refuse: OnRefuse) -> None:
        self.app = app
        self.known = [
            (hashlib.sha256(token.encode()).digest(), Principal(role, client_key(token)))
            for token, role in tokens.items()
        ]
        self.on_refuse = on_refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            who = self.identify(Headers(scope=scope).get("authorization"), scope)
            if isinstance(who, str):
                self.on_refuse(who, 401)
                await error_response(Unauthorized(REASONS[who]))(scope, receive, send)
                return
            scope[PRINCIPAL] = who
        await self.app(scope, receive, send)

    def identify(self, header: str | None, scope: Scope) -> Principal | str:
        """The caller, or the reason it is refused (a key of ``REASONS``)."""
        if not self.known:
            return anonymous(scope)
        if header is None:
            return anonymous(scope) if is_unix(scope) else "missing_token"
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return "malformed_token"
        given = hashlib.sha256(token.encode()).digest()
        found: Principal | None = None
        for digest, who in self.known:  # every token compared, so the time says nothing of which matched
            if hmac.compare_digest(given, digest):
                found = who
        return found if found is not None else "wrong_token"


REASONS = {
    "missing_token": "missing bearer token",
    "malformed_token": "the Authorization header is not 'Bearer <token>'",
    "wrong_token": "wrong bearer token",
}


def is_unix(scope: Scope) -> bool:
    """A request over the Unix socket: no port of its own, and a peer without an address. No browser
    reaches it by a name, so there is nothing to rebind; its mode and group are its door."""
    server = scope.get("server")
    return (server is None or server[1] is None) and scope.get("client") is None


def anonymous(scope: Scope) -> Principal:
    """A caller without a token: an operator, keyed by where it connects from."""
    if is_unix(scope):
        return Principal("operator", "unix")
    client = scope.get("client")
    return Principal("operator", f"address:{client[0]}" if client else "local")


class Access:
    """What each role may do, and which sessions each kiosk or integration token created."""

    def __init__(self, on_refuse: OnRefuse, store: Store) -> None:
        self.on_refuse = on_refuse
        self.store = store
        self._owners: dict[str, str] = {}
        self._lock = threading.Lock()

    def check(self, who: Principal, action: Action, session_id: str | None = None) -> None:
        """Raise :class:`Forbidden` for an action the role may not take, and :class:`SessionNotFound`
        for another client's session (as for an unknown one: ids are not confirmed to strangers)."""
        if action not in RIGHTS[who.role]:
            self.on_refuse("role", 403)
            raise Forbidden(f"a {who.role} token may not {WHAT[action]}")
        if session_id is not None and who.role != "operator":
            with self._lock:
                owner = self._owners.get(session_id)
            if owner is None:
                owner = self.store.owner(session_id)
                if owner:
                    with self._lock:
                        self._owners[session_id] = owner
            if owner != who.client:
                self.on_refuse("not_owner", 404)
                raise SessionNotFound(f"no session with id {session_id!r}")

    def created(self, who: Principal, session_id: str) -> None:
        if who.role != "operator":
            self.store.set_owner(session_id, who.client)
            with self._lock:
                self._owners[session_id] = who.client

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._owners.pop(session_id, None)
