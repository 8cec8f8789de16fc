"""An asynchronous HTTP client of the daemon's native API, for the terminal UI.

The TUI is a client, not a second backend (DESIGN.md): everything it shows comes through here, so
it never opens the database or a model. Two typed errors tell the edges apart what to do:
:class:`DaemonUnreachable` (connection refused, reset or timed out: show a banner and reconnect) and
:class:`DaemonError` (the daemon answered with an error body: show it as a notification).
Session payloads stay the API's JSON dicts; only the status line is summarised into a dataclass.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import EventSource, SSEError

from appliance.config import Settings, read_token_file
from appliance.errors import ApplianceError
from appliance.tui.trust import client_context

JSON = dict[str, Any]


class DaemonUnreachable(ApplianceError):
    """The daemon did not answer: not running, restarting, or the network is down."""

    title = "Daemon unreachable"


class DaemonError(ApplianceError):
    """The daemon answered a request with an error (its JSON body's ``type`` and ``message``)."""

    title = "Daemon error"

    def __init__(self, message: str, *, status: int = 0, kind: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


@dataclass(frozen=True)
class Health:
    """What the status bar shows, from ``/readyz`` and ``/metrics``.

    ``summarizer`` is None when the daemon exports no summarizer metrics (no worker running).
    """

    ready: bool
    model: str = ""
    checks: Mapping[str, bool] = field(default_factory=dict)
    queue: int = 0
    answering: bool = False
    summarizer: Mapping[str, float] | None = None


@dataclass(frozen=True)
class StreamEvent:
    """One server-sent event of a streamed answer: ``token`` (``text``), ``done`` (the answer body) or ``error``."""

    kind: str
    data: JSON


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text → ``{"name{labels}": value}``; comments and malformed lines are skipped."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, raw = line.rpartition(" ")
        try:
            values[name] = float(raw)
        except ValueError:
            continue
    return values


def health_from(ready: JSON, metrics: Mapping[str, float]) -> Health:
    """Combine the two health endpoints into what the status bar needs."""
    queue = sum(v for k, v in metrics.items() if k.startswith("appliance_queue_waiting"))
    prefix = "appliance_summarizer_"
    summarizer = {k[len(prefix) :].removesuffix("_total"): v for k, v in metrics.items() if k.startswith(prefix)}
    return Health(
        ready=bool(ready.get("ready")),
        model=str(ready.get("model", "")),
        checks=dict(ready.get("checks", {})),
        queue=int(queue),
        answering=bool(metrics.get("appliance_answering", 0)),
        summarizer=summarizer or None,
    )


class DaemonClient:
    """The daemon's sessions API over one pooled :class:`httpx.AsyncClient`."""

    def __init__(
        self, base_url: str, *, token: str | None = None, timeout_s: float = 10.0, tls: ssl.SSLContext | None = None
    ) -> None:
        """``base_url`` is ``http://host:port``, ``https://host:port`` (verified with ``tls``, else the
        system's authorities) or ``unix:/path/to/appliance.sock``."""
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        # Reads of a streamed answer may wait minutes for a queued model; connecting must fail fast.
        self._timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 3.0))
        transport = None
        url = self.base_url
        if url.startswith("unix:"):
            transport = httpx.AsyncHTTPTransport(uds=url.removeprefix("unix:"))
            url = "http://appliance"
        self._http = httpx.AsyncClient(
            base_url=url, headers=headers, timeout=self._timeout, transport=transport, verify=tls or True
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    # plumbing -----------------------------------------------------------------------------------

    async def _request(
        self, method: str, path: str, *, json_body: Any = None, params: Any = None, ok: tuple[int, ...] = (200, 201)
    ) -> JSON:
        try:
            response = await self._http.request(method, path, json=json_body, params=params)
        except httpx.TransportError as exc:
            raise DaemonUnreachable(f"{self.base_url}: {_reason(exc)}") from exc
        if response.status_code not in ok:
            raise _error_of(response.status_code, response.content)
        body = response.json()
        if not isinstance(body, dict):  # every route of the native API answers an object
            raise DaemonError(
                f"HTTP {response.status_code}: the answer is not a JSON object", status=response.status_code
            )
        return body

    # health -------------------------------------------------------------------------------------

    async def health(self) -> Health:
        """Readiness and metrics; a 503 from ``/readyz`` is a not-ready daemon, not an error."""
        ready = await self._request("GET", "/readyz", ok=(200, 503))
        try:
            response = await self._http.get("/metrics")
        except httpx.TransportError as exc:
            raise DaemonUnreachable(f"{self.base_url}: {_reason(exc)}") from exc
        metrics = parse_metrics(response.text) if response.status_code == 200 else {}
        return health_from(ready, metrics)

    # sessions -----------------------------------------------------------------------------------

    async def new_session(self, title: str = "") -> JSON:
        return await self._request("POST", "/v1/sessions", json_body={"title": title} if title else {})

    async def sessions(self, search: str = "", limit: int = 50) -> list[JSON]:
        body = await self._request("GET", "/v1/sessions", params={"search": search, "limit": limit})
        return list(body.get("sessions", []))

    async def session(self, session_id: str) -> JSON:
        """Transcript, summaries, ledger and per-answer records (the API's own shape)."""
        return await self._request("GET", f"/v1/sessions/{session_id}")

    async def record_turn(self, session_id: str, role: str, text: str) -> JSON:
        return await self._request("POST", f"/v1/sessions/{session_id}/turns", json_body={"role": role, "text": text})

    async def edit_summary(self, session_id: str, text: str) -> JSON:
        return await self._request("POST", f"/v1/sessions/{session_id}/summary", json_body={"text": text})

    async def restore_summary(self, session_id: str, version: int) -> JSON:
        return await self._request("POST", f"/v1/sessions/{session_id}/summary/restore", json_body={"version": version})

    async def set_paused(self, session_id: str, paused: bool) -> JSON:
        action = "pause" if paused else "resume"
        return await self._request("POST", f"/v1/sessions/{session_id}/summary/{action}")

    async def draft(self, session_id: str, text: str) -> JSON:
        """What the customer is typing, not sent yet: the daemon warms the answer's prompt for it."""
        return await self._request("POST", f"/v1/sessions/{session_id}/draft", json_body={"text": text}, ok=(202,))

    # the branch floor ------------------------------------------------------------------------------

    async def ask_for_person(self, session_id: str) -> JSON:
        """The customer asks for a person: ``floor`` (the state after) and ``notice`` (what to tell them)."""
        return await self._request("POST", f"/v1/sessions/{session_id}/person")

    async def take_over(self, session_id: str) -> JSON:
        """Hold the session (the daemon then generates no answer in it); 409 if another operator holds it."""
        return await self._request("POST", f"/v1/sessions/{session_id}/take")

    async def hand_back(self, session_id: str) -> JSON:
        return await self._request("POST", f"/v1/sessions/{session_id}/hand-back")

    async def events(self, path: str, after: int | None = None) -> AsyncIterator[StreamEvent]:
        """Live events from ``path`` (``/v1/events`` or a session's), after event ``after`` (None: new
        ones only); each event's data carries its ``id``. Ends when the daemon ends the stream."""
        headers = {"Last-Event-ID": str(after)} if after is not None else {}
        try:
            async with self._http.stream(
                "GET", path, headers=headers, timeout=httpx.Timeout(None, connect=self._timeout.connect)
            ) as response:
                if response.status_code != 200:
                    raise _error_of(response.status_code, await response.aread())
                async for event in _events(response):
                    yield event
        except httpx.TransportError as exc:
            raise DaemonUnreachable(f"{self.base_url}: {_reason(exc)}") from exc

    async def stream_message(self, session_id: str, text: str) -> AsyncIterator[StreamEvent]:
        """A customer message in; its answer out as ``token`` events, then ``done`` (or ``error``).

        The first event is yielded only once the daemon accepted the message (HTTP 200), so a caller
        may keep the typed text until then and lose nothing when the daemon is away.
        """
        try:
            async with self._http.stream(
                "POST",
                f"/v1/sessions/{session_id}/messages",
                json={"text": text, "stream": True},
                timeout=httpx.Timeout(None, connect=self._timeout.connect),
            ) as response:
                if response.status_code != 200:
                    raise _error_of(response.status_code, await response.aread())
                yield StreamEvent("accepted", {})
                async for event in _events(response):
                    yield event
        except httpx.TransportError as exc:
            raise DaemonUnreachable(f"{self.base_url}: {_reason(exc)}") from exc


async def _events(response: httpx.Response) -> AsyncIterator[StreamEvent]:
    """The daemon's server-sent events, read by httpx-sse: ``event:`` names the kind, ``data:`` carries
    JSON. Lines end only at CR, LF or CRLF, as the format says (not also at U+2028 and the other
    separators ``str.splitlines`` knows, which may stand raw inside an event's JSON). An event without
    data (the id a comment's blank line repeats) carries nothing to show."""
    try:
        async for sse in EventSource(response).aiter_sse():
            if sse.data:
                yield StreamEvent(sse.event, json.loads(sse.data))
    except SSEError as exc:  # an answer that is not an event stream: whatever answered is no daemon of ours
        raise DaemonError(f"HTTP {response.status_code}: {exc}", status=response.status_code) from None


def _error_of(status: int, content: bytes) -> DaemonError:
    try:
        body = json.loads(content)["error"]
        return DaemonError(str(body.get("message", "")), status=status, kind=str(body.get("type", "")))
    except (ValueError, KeyError, TypeError):
        return DaemonError(f"HTTP {status}", status=status)


def _reason(exc: httpx.TransportError) -> str:
    if isinstance(exc, httpx.ConnectError):
        # A certificate that fails verification is no refused connection: say so, with the reason.
        cause = exc.__cause__ or exc.__context__
        while cause is not None and not isinstance(cause, ssl.SSLError):
            cause = cause.__cause__ or cause.__context__
        return f"TLS: {cause}" if cause is not None else "connection refused"
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    return str(exc) or type(exc).__name__


# where the daemon is -------------------------------------------------------------------------------


def daemon_url(settings: Settings, url: str | None = None) -> str:
    """``--url``, else ``tui.url``, else the local daemon: its TCP port (https when the config has TLS keys),
    or its Unix socket when it has no host."""
    if url or settings.tui.url:
        return url or settings.tui.url
    server = settings.server
    if not server.host and server.socket:
        return f"unix:{server.socket}"
    # The daemon's own certificate, or a way to trust one, says the daemon speaks TLS.
    secure = server.tls_cert_file or settings.tui.ca_file or settings.tui.cert_fingerprint
    scheme = "https" if secure else "http"
    return f"{scheme}://127.0.0.1:{server.port or 8088}"


def connect(settings: Settings, url: str | None = None) -> DaemonClient:
    """A client of the daemon at ``url`` (see :func:`daemon_url`), with its token and, over https, its trust."""
    where = daemon_url(settings, url)
    return DaemonClient(where, token=read_token(settings), tls=tls_for(settings, where))


def tls_for(settings: Settings, url: str) -> ssl.SSLContext | None:
    """How to verify the daemon at ``url``: a context for ``https://`` (:mod:`appliance.tui.trust`), else None."""
    return client_context(settings) if url.startswith("https:") else None


def read_token(settings: Settings) -> str | None:
    """The bearer token from ``tui.token_file``, or None."""
    if not settings.tui.token_file:
        return None
    return read_token_file(Path(settings.tui.token_file), "tui.token_file")
