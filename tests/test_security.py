"""Trust (issue 12): each attack on the daemon, and its safe result.

Against a real daemon on loopback with the tiny model (marked ``real_model`` and ``daemon``): a DNS
rebinding Host, a foreign Origin, missing, wrong and misspelled tokens, a kiosk or integration token
reaching for what is not its own, oversized bodies, transcripts, titles, summaries and sessions, a
flood of sessions, a client hogging the queue, hostile text (lone surrogates, NUL, controls, bidi,
line separators in streamed events), and an erasure checked in the raw bytes of the database and
its WAL, by request and by retention.

In-process, over fakes, where a fake makes the point exactly (each role's refusals and their counts,
a queue held full by a gated model, a model that answers with line separators, CORS for a configured
origin, the retention sweep), and
property-based fuzzing of every operation of the OpenAPI schema with hypothesis: no 500, no hang.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.app import Appliance, build
from appliance.config import load_settings
from appliance.serve import retention
from appliance.serve.api import create_app
from appliance.store import Store
from appliance.tui.client import DaemonClient

from .fakes import FakeResponder
from .support import eventually, eventually_async, metric, refusals_in, write_config
from .test_api_inprocess import GatedResponder
from .test_daemon import Daemon, needs_model, start_daemon, wait_idle

real_daemon = [pytest.mark.real_model, pytest.mark.daemon, needs_model]

# Every role's token, by name: two kiosks, two integrations, one integration that hogs the queue,
# and one kiosk that floods session starts (each its own client, so the tests do not share limits).
ROLES = {
    "kiosk": "kiosk",
    "kiosk2": "kiosk",
    "integration": "integration",
    "integration2": "integration",
    "greedy": "integration",
    "flood": "kiosk",
}
TOKENS = {name: f"tok-{name}-7c1e9a40" for name in ROLES} | {"operator": "tok-operator-5b2d8f13"}
MARKER = "Zebra-Quartz-4417"  # a string that appears nowhere but in what a test stores


def error_of(reply: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert error["type"] == kind and error["message"], error
    return error


# a real daemon with every role -------------------------------------------------------------------


@dataclass
class Box:
    """The module's daemon and a client per role."""

    daemon: Daemon
    socket: Path

    def as_(self, name: str | None, **headers: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {TOKENS[name]}"} if name else {}
        return httpx.Client(base_url=self.daemon.url, headers={**auth, **headers}, timeout=120)

    def unix(self, name: str | None = None) -> httpx.Client:
        auth = {"Authorization": f"Bearer {TOKENS[name]}"} if name else {}
        transport = httpx.HTTPTransport(uds=str(self.socket))
        return httpx.Client(transport=transport, base_url="http://appliance", headers=auth, timeout=120)

    @property
    def port(self) -> int:
        return int(self.daemon.url.rsplit(":", 1)[1])

    def session(self, name: str, title: str = "") -> str:
        with self.as_(name) as http:
            reply = http.post("/v1/sessions", json={"title": title})
        assert reply.status_code == 201, reply.text
        return str(reply.json()["id"])

    def refusals(self) -> dict[str, float]:
        with self.as_("operator") as http:
            text = http.get("/metrics").text
        return refusals_in(text)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Box]:
    tmp = tmp_path_factory.mktemp("trust")
    table = []
    for name, role in ROLES.items():
        (tmp / f"{name}.token").write_text(TOKENS[name] + "\n")
        table.append(f'"{tmp / f"{name}.token"}" = "{role}"')
    server = (
        "queue_max = 4\nqueue_share = 0.5\nmax_turns_per_session = 4\nsessions_per_minute = 20\n"
        f"tokens = {{ {', '.join(table)} }}\n"
    )
    sock = tmp / "run" / "appliance.sock"
    daemon = start_daemon(
        tmp,
        token=TOKENS["operator"],
        server=server,
        args=("--socket", str(sock)),
        # Every answer is 48 tokens long, so that a queue builds up behind one the same way each run.
        env={"APPLIANCE__RESPONDER__IGNORE_EOS": "true"},
    )
    yield Box(daemon, sock)
    assert daemon.stop() == 0, daemon.output()
    log = daemon.output()
    for secret in [*TOKENS.values(), "tok-wrong-00000000"]:
        assert secret not in log  # no token material in the log, right or wrong
    assert MARKER not in log  # nor any customer text


class TestDoors:
    pytestmark = real_daemon

    @pytest.mark.parametrize("host", ["rebind.example:{port}", "evil.example", "127.0.0.1.nip.io:{port}", "10.0.0.7"])
    def test_a_dns_rebinding_host_is_421(self, box: Box, host: str):
        with box.as_("operator", Host=host.format(port=box.port)) as http:
            error_of(http.get("/v1/sessions"), 421, "misdirected_request")
            error_of(http.post("/v1/sessions", json={"title": MARKER}), 421, "misdirected_request")
        with box.as_("operator") as http:
            assert MARKER not in json.dumps(http.get("/v1/sessions").json())
        assert box.refusals()["host"] >= 2

    @pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "LOCALHOST.", "[::1]:{port}"])
    def test_its_own_names_are_served(self, box: Box, host: str):
        with box.as_("operator", Host=host.format(port=box.port)) as http:
            assert http.get("/v1/sessions").status_code == 200

    def test_a_foreign_origin_is_403_without_cors(self, box: Box):
        for headers in [{"Origin": "http://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}]:
            with box.as_("operator", **headers) as http:
                reply = http.post("/v1/sessions", json={"title": MARKER})
                error_of(reply, 403, "forbidden")
                assert "access-control-allow-origin" not in reply.headers
        with box.as_(None, Origin="http://evil.example") as http:  # a CORS preflight is refused too
            preflight = http.options("/v1/sessions", headers={"Access-Control-Request-Method": "POST"})
            assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers
        with box.as_("operator") as http:
            assert MARKER not in json.dumps(http.get("/v1/sessions").json())

    def test_tokens_are_checked_in_constant_form_and_counted(self, box: Box):
        before = box.refusals()
        url = f"{box.daemon.url}/v1/sessions"
        for header in [None, "Bearer tok-wrong-00000000", TOKENS["operator"], f"Basic {TOKENS['operator']}"]:
            reply = httpx.get(url, headers={"Authorization": header} if header else {})
            error_of(reply, 401, "unauthorized")
            assert reply.headers["WWW-Authenticate"] == "Bearer"
            assert "tok-" not in reply.text  # never echoed
        for scheme in ["bearer", "BEARER", "Bearer"]:
            assert httpx.get(url, headers={"Authorization": f"{scheme}  {TOKENS['operator']}"}).status_code == 200
        after = box.refusals()
        assert after["missing_token"] == before.get("missing_token", 0) + 1
        assert after["wrong_token"] == before.get("wrong_token", 0) + 1
        assert after["malformed_token"] == before.get("malformed_token", 0) + 2

    def test_the_unix_socket_is_an_operators_door(self, box: Box):
        with box.unix() as http:
            assert http.get("/v1/sessions").status_code == 200  # its mode and group are the door
        with box.unix("kiosk") as http:
            error_of(http.get("/v1/sessions"), 403, "forbidden")  # a token keeps its role
        with box.unix() as http:
            http.headers["Authorization"] = "Bearer tok-wrong-00000000"
            error_of(http.get("/v1/sessions"), 401, "unauthorized")


class TestRoles:
    pytestmark = real_daemon

    def test_a_kiosk_talks_in_its_own_sessions_only(self, box: Box):
        mine = box.session("kiosk")
        theirs = box.session("kiosk2")
        operators = box.session("operator")
        with box.as_("kiosk") as http:
            assert (
                http.post(f"/v1/sessions/{mine}/messages", json={"text": "Hello, is the branch open?"}).status_code
                == 200
            )
            assert [t["role"] for t in http.get(f"/v1/sessions/{mine}").json()["turns"]] == ["customer", "agent"]
            assert http.get("/readyz").status_code == 200 and http.get("/metrics").status_code == 200
            error_of(http.get("/v1/sessions"), 403, "forbidden")
            error_of(http.get("/v1/sessions", params={"search": "a"}), 403, "forbidden")
            error_of(http.get("/v1/models"), 403, "forbidden")
            for other in (theirs, operators, "nope"):
                error_of(http.get(f"/v1/sessions/{other}"), 404, "not_found")
                error_of(http.post(f"/v1/sessions/{other}/messages", json={"text": "hi"}), 404, "not_found")
            error_of(http.put(f"/v1/sessions/{mine}/summary", json={"text": "x"}), 403, "forbidden")
            error_of(http.post(f"/v1/sessions/{mine}/summary/pause"), 403, "forbidden")
            error_of(http.post(f"/v1/sessions/{mine}/turns", json={"role": "agent", "text": "x"}), 403, "forbidden")
            error_of(http.delete(f"/v1/sessions/{mine}"), 403, "forbidden")
            body = {"messages": [{"role": "user", "content": "hi"}]}
            error_of(http.post("/v1/chat/completions", json=body), 403, "forbidden")
        with box.as_("operator") as http:
            assert http.get(f"/v1/sessions/{theirs}").json()["turns"] == []
            assert http.get(f"/v1/sessions/{operators}").json()["turns"] == []
        assert box.refusals()["not_owner"] >= 6

    def test_an_integration_uses_the_openai_endpoint_and_its_own_sessions(self, box: Box):
        mine = box.session("integration")
        kiosks = box.session("kiosk")
        with box.as_("integration") as http:
            stateless = http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "Hi"}]})
            assert stateless.status_code == 200
            own = {"session_id": mine, "messages": [{"role": "user", "content": "My order is A-1."}]}
            assert http.post("/v1/chat/completions", json=own).status_code == 200
            assert len(http.get(f"/v1/sessions/{mine}").json()["turns"]) == 2
            for field in ("session_id", "user"):
                body = {field: kiosks, "messages": [{"role": "user", "content": "hi"}]}
                error_of(http.post("/v1/chat/completions", json=body), 404, "not_found")
            error_of(http.get(f"/v1/sessions/{kiosks}"), 404, "not_found")
            error_of(http.post(f"/v1/sessions/{kiosks}/turns", json={"role": "agent", "text": "x"}), 404, "not_found")
            error_of(http.post(f"/v1/sessions/{kiosks}/draft", json={"text": "What does it cost?"}), 404, "not_found")
            assert http.post(f"/v1/sessions/{mine}/draft", json={"text": "What does it cost?"}).status_code == 202
            error_of(http.get("/v1/sessions"), 403, "forbidden")
            error_of(http.delete(f"/v1/sessions/{mine}"), 403, "forbidden")
        with box.as_("integration2") as http:
            error_of(http.get(f"/v1/sessions/{mine}"), 404, "not_found")
        with box.as_("operator") as http:
            assert http.get(f"/v1/sessions/{kiosks}").json()["turns"] == []


class TestLimits:
    pytestmark = real_daemon

    def test_an_oversized_body_is_413_before_it_is_parsed(self, box: Box):
        big = json.dumps({"title": MARKER, "x": "y" * 300_000}).encode()
        with box.as_("operator") as http:
            for content in (big, iter([big[:100_000], big[100_000:]])):  # declared, then chunked
                started = time.monotonic()
                reply = http.post("/v1/sessions", content=content, headers={"Content-Type": "application/json"})
                error = error_of(reply, 413, "too_large")
                assert time.monotonic() - started < 2
                assert (
                    error["field"] == "body"
                    and error["limit"] == 262_144
                    and "server.max_body_bytes" in error["message"]
                )
            assert MARKER not in json.dumps(http.get("/v1/sessions").json())

    def test_3001_messages_are_refused_fast_while_another_customer_is_served(self, box: Box):
        session = box.session("kiosk")
        flood = {"messages": [{"role": "user", "content": "hi"}] * 3001}
        with ThreadPoolExecutor(1) as pool, box.as_("integration") as attacker:
            other = pool.submit(
                lambda: box.as_("kiosk").post(f"/v1/sessions/{session}/messages", json={"text": "Opening hours?"})
            )
            started = time.monotonic()
            error = error_of(attacker.post("/v1/chat/completions", json=flood), 413, "too_large")
            assert time.monotonic() - started < 2
            assert error["field"] == "messages" and error["limit"] == 256
            assert "server.max_chat_messages" in error["message"]
            assert other.result(120).status_code == 200
        long = {"messages": [{"role": "user", "content": "x" * 1900}] * 40}  # 76,000 characters
        with box.as_("integration") as http:
            error = error_of(http.post("/v1/chat/completions", json=long), 413, "too_large")
            assert error["limit"] == 64_000 and "server.max_chat_chars" in error["message"]

    def test_title_summary_and_turns_are_capped(self, box: Box):
        with box.as_("operator") as http:
            error = error_of(http.post("/v1/sessions", json={"title": "t" * 201}), 422, "invalid_request")
            assert error["field"] == "title" and error["limit"] == 200
            session = box.session("operator")
            error = error_of(http.put(f"/v1/sessions/{session}/summary", json={"text": "s" * 2001}), 413, "too_large")
            assert error["field"] == "text" and error["limit"] == 2000  # 8 characters per token of 250
            assert http.put(f"/v1/sessions/{session}/summary", json={"text": "s" * 2000}).status_code == 201
            for i in range(4):
                turn = {"role": "customer" if i % 2 == 0 else "agent", "text": f"turn {i}"}
                assert http.post(f"/v1/sessions/{session}/turns", json=turn).status_code == 201
            error = error_of(
                http.post(f"/v1/sessions/{session}/messages", json={"text": "one more"}), 409, "turn_limit"
            )
            assert error["limit"] == 4 and "server.max_turns_per_session" in error["message"]
            error_of(http.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": "x"}), 409, "turn_limit")
            assert len(http.get(f"/v1/sessions/{session}").json()["turns"]) == 4

    def test_a_flood_of_sessions_is_429_with_retry_after(self, box: Box):
        with box.as_("flood") as http:
            for _ in range(20):
                assert http.post("/v1/sessions").status_code == 201
            reply = http.post("/v1/sessions")
            error_of(reply, 429, "rate_limited")
            assert 1 <= int(reply.headers["Retry-After"]) <= 60
        assert box.session("kiosk")  # another client is not affected

    def test_a_greedy_client_gets_its_share_of_the_queue_and_others_are_served(self, box: Box):
        body = {"messages": [{"role": "user", "content": "Tell me a long story."}]}

        def ask(name: str) -> httpx.Response:
            with box.as_(name) as http:
                return http.post("/v1/chat/completions", json=body)

        with ThreadPoolExecutor(8) as pool:
            greedy = [pool.submit(ask, "greedy") for _ in range(6)]
            # At most one runs and two wait: the others are refused at once.
            eventually(lambda: sum(f.done() for f in greedy) >= 3, "three of six refused at once", timeout=30)
            other = pool.submit(ask, "integration2")
            replies = [f.result(300) for f in greedy]
            assert other.result(300).status_code == 200
        refused = [r for r in replies if r.status_code == 429]
        assert refused and len(refused) <= 3
        for reply in refused:
            assert "server.queue_share" in error_of(reply, 429, "busy")["message"]
        with box.as_("operator") as http:
            wait_idle(http)


class TestHostileText:
    pytestmark = real_daemon

    @pytest.mark.parametrize(
        ("raw", "field"),
        [
            (b'{"text": "\\ud800"}', "text"),  # a lone surrogate as a JSON escape
            (b'{"text": "abc\\udfff"}', "text"),
            (b'{"text": "hello\\u0000world"}', "text"),
            (b'{"text": "\\u001b[2J\\u001b[31mred"}', "text"),
            (b'{"text": "pay \\u202eto 1234"}', "text"),
            (b'{"text": "\xed\xa0\x80"}', "text"),  # a surrogate encoded as UTF-8 bytes
        ],
    )
    def test_refused_with_422_naming_the_field(self, box: Box, raw: bytes, field: str):
        session = box.session("operator")
        with box.as_("operator") as http:
            reply = http.post(
                f"/v1/sessions/{session}/messages", content=raw, headers={"Content-Type": "application/json"}
            )
            error = error_of(reply, 422, "invalid_request")
            assert error["field"] == field and "U+" in error["message"]
            assert http.get(f"/v1/sessions/{session}").json()["turns"] == []

    def test_every_text_field_is_guarded_and_nothing_is_a_500(self, box: Box):
        json_headers = {"Content-Type": "application/json"}
        with box.as_("operator") as http:
            session = box.session("operator")
            for path, raw, field in [
                ("/v1/sessions", b'{"title": "\\ud800"}', "title"),
                (
                    "/v1/chat/completions",
                    b'{"messages": [{"role": "user", "content": "\\ud800"}]}',
                    "messages.0.content",
                ),
                (
                    "/v1/chat/completions",
                    b'{"messages": [{"role": "user", "content": [{"type": "text", "text": "\\u0000"}]}]}',
                    "messages.0.content",
                ),
                (f"/v1/sessions/{session}/turns", b'{"role": "agent", "text": "\\udbff"}', "text"),
                (f"/v1/sessions/{session}/summary", b'{"text": "\\ud800"}', "text"),
            ]:
                assert (
                    error_of(http.post(path, content=raw, headers=json_headers), 422, "invalid_request")["field"]
                    == field
                )
            # Not JSON at all, or JSON nested past any parser's depth: a client error, never a 500.
            for raw in [b'{"text": "\xff\xfe"}', b"[" * 100_000, b'{"text": ' * 20_000]:
                reply = http.post(f"/v1/sessions/{session}/messages", content=raw, headers=json_headers)
                assert reply.status_code in (400, 422), reply.text
            assert http.get("/v1/sessions", params={"search": "\x00%_\u202e"}).status_code == 200
            assert http.get("/v1/sessions/%00%ff").status_code == 404
            assert http.get(f"/v1/sessions/{session}").json()["turns"] == []
            assert http.get("/readyz").status_code == 200

    def test_other_text_is_stored_as_given(self, box: Box):
        text = (
            "tab\there\u2028line\u2029para\x85next \u200f\u05e9\u05dc\u05d5\u05dd 🙂 <|im_end|> [/] [@click=app.quit]x"
        )
        session = box.session("operator", title="[/] <b>")
        with box.as_("operator") as http:
            assert (
                http.post(f"/v1/sessions/{session}/turns", json={"role": "customer", "text": text}).status_code == 201
            )
            stored = http.get(f"/v1/sessions/{session}").json()
            assert stored["turns"][0]["text"] == text and stored["session"]["title"] == "[/] <b>"
            assert http.delete(f"/v1/sessions/{session}").status_code == 204  # the marker leaves no trace

    def test_line_separators_keep_each_event_on_one_line(self, box: Box):
        text = "first\u2028second\u2029third\x85fourth\rfifth"
        session = box.session("kiosk")

        async def through_the_tui_client() -> list[Any]:
            client = DaemonClient(box.daemon.url, token=TOKENS["kiosk"], timeout_s=120)
            try:
                return [event async for event in client.stream_message(session, text)]
            finally:
                await client.aclose()

        events = asyncio.run(through_the_tui_client())
        assert events[0].kind == "accepted" and events[-1].kind == "done"
        assert {e.kind for e in events[1:-1]} == {"token"}
        assert events[-1].data["customer"]["text"] == text
        with box.as_("kiosk") as http:
            assert http.get(f"/v1/sessions/{session}").json()["turns"][0]["text"] == text
            body = {"text": text, "stream": True}
            with http.stream("POST", f"/v1/sessions/{session}/messages", json=body) as s:
                lines = list(s.iter_lines())  # httpx splits at U+2028, U+2029 and U+0085 too
        assert all(line == "" or line.startswith(("event: ", "data: ")) for line in lines), lines
        data = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
        assert data[-1]["customer"]["text"] == text


class TestErasure:
    pytestmark = real_daemon

    def test_delete_leaves_no_trace_in_the_database_or_its_wal(self, box: Box):
        session = box.session("operator", title=f"About {MARKER}")
        with box.as_("operator") as http:
            answer = http.post(f"/v1/sessions/{session}/messages", json={"text": f"My reference is {MARKER}."})
            assert answer.status_code == 200
            wait_idle(http)
            assert MARKER.encode() in raw_bytes(box.daemon.database)  # the check can see it
            before = erasures(http, "request")
            error_of(
                http.delete(f"/v1/sessions/{session}", headers={"Authorization": f"Bearer {TOKENS['kiosk']}"}),
                403,
                "forbidden",
            )
            assert http.delete(f"/v1/sessions/{session}").status_code == 204
            error_of(http.get(f"/v1/sessions/{session}"), 404, "not_found")
            error_of(http.delete(f"/v1/sessions/{session}"), 404, "not_found")
            assert erasures(http, "request") == before + 1
        assert MARKER.encode() not in raw_bytes(box.daemon.database)
        (audit,) = [row for row in audit_rows(box.daemon.database) if row[0] == session]
        assert audit[1:] == ("request", 2) and MARKER not in repr(audit)


def erasures(http: httpx.Client, reason: str) -> int:
    """``appliance_erasures_total`` for ``reason`` from /metrics (0 before the first)."""
    return int(metric(http.get("/metrics").text, "appliance_erasures_total", reason=reason) or 0)


def raw_bytes(database: Path) -> bytes:
    """The database file, its WAL and its shared memory, byte for byte."""
    return b"".join(p.read_bytes() for p in database.parent.glob(database.name + "*") if p.is_file())


def audit_rows(database: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        return [tuple(r) for r in conn.execute("SELECT session_id, reason, turns FROM erasures")]


@pytest.mark.real_model
@pytest.mark.daemon
@needs_model
def test_retention_erases_quiet_conversations_when_the_daemon_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as past:
        written = time.time() - 60  # a minute ago: older than retention.days = 0.00001 (0.86 s)
        past.setattr(time, "time", lambda: written)
        store = Store.open(tmp_path / "app.db")
        old = store.create_session(policy="raw", title=MARKER)
        store.append_turn(old.id, "customer", f"My card ends {MARKER}.")
        store.close()
    daemon = start_daemon(tmp_path, server="[retention]\ndays = 0.00001\n")
    try:
        eventually(lambda: "retention: erased" in daemon.output(), "the first sweep's log line", every=0.1)
        with daemon.client() as http:
            error_of(http.get(f"/v1/sessions/{old.id}"), 404, "not_found")
            assert erasures(http, "retention") == 1
        assert "retention: erased 1 conversations" in daemon.output()
    finally:
        assert daemon.stop() == 0, daemon.output()
    assert MARKER not in daemon.output() and MARKER.encode() not in raw_bytes(tmp_path / "app.db")
    assert [(r[1], r[2]) for r in audit_rows(tmp_path / "app.db")] == [("retention", 1)]


# in-process, over fakes ----------------------------------------------------------------------------


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., tuple[Appliance, Any]]]:
    """The app over an appliance built with fake models (no recall), from a config body."""
    built: list[Appliance] = []

    def make(config: str = "", responder: FakeResponder | None = None, **options: Any) -> tuple[Appliance, Any]:
        settings = load_settings(write_config(tmp_path, config), env={})
        appliance = build(
            settings, responder=responder or FakeResponder(), summarizer=FakeResponder(default="Summary."), recall=False
        )
        built.append(appliance)
        return appliance, create_app(appliance, **options)

    yield make
    for appliance in built:
        appliance.close()


def call(app: Any, scenario: Callable[[httpx.AsyncClient], Any], **headers: str) -> Any:
    async def main() -> Any:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8088", headers=headers) as http:
            return await scenario(http)

    return asyncio.run(main())


class TestInProcess:
    def test_a_model_answer_with_line_separators_streams_one_line_per_event(self, serve: Callable[..., Any]):
        reply = "one\u2028two\u2029three\x85four\rfive\nsix"
        appliance, app = serve(responder=FakeResponder([reply, reply]))
        session = appliance.sessions.new_session().id

        async def scenario(http: httpx.AsyncClient) -> list[list[str]]:
            streams = []
            for path, body in [
                (f"/v1/sessions/{session}/messages", {"text": "hi", "stream": True}),
                ("/v1/chat/completions", {"stream": True, "messages": [{"role": "user", "content": "hi"}]}),
            ]:
                async with http.stream("POST", path, json=body) as s:
                    streams.append([line async for line in s.aiter_lines()])
            return streams

        native, openai = call(app, scenario)
        assert all(line == "" or line.startswith(("event: ", "data: ")) for line in native + openai)
        tokens = [json.loads(line[6:]) for line in native if line.startswith("data: ")]
        assert "".join(t["text"] for t in tokens[:-1]) == tokens[-1]["text"] == reply
        chunks = [json.loads(line[6:]) for line in openai if line.startswith("data: {")]
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == reply

    def test_a_greedy_client_is_refused_past_its_share_while_another_is_served(self, serve: Callable[..., Any]):
        responder = GatedResponder()
        appliance, app = serve(
            "[server]\nqueue_max = 4\nqueue_share = 0.5\n",
            responder,
            tokens={"greedy": "integration", "other": "integration"},
        )
        body = {"messages": [{"role": "user", "content": "hi"}]}

        async def scenario(http: httpx.AsyncClient) -> tuple[list[httpx.Response], httpx.Response, httpx.Response]:
            def ask(token: str) -> Any:
                return asyncio.create_task(
                    http.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {token}"})
                )

            first = ask("greedy")
            await asyncio.to_thread(responder.started.wait, 10)
            waiting = [ask("greedy"), ask("greedy")]
            await eventually_async(lambda: appliance.queue.waiting == 2, "two greedy requests to wait")
            refused = await ask("greedy")
            other = ask("other")
            await eventually_async(lambda: appliance.queue.waiting == 3, "the other client's request to wait")
            responder.gate.set()
            return [await first, *[await w for w in waiting]], refused, await other

        served, refused, other = call(app, scenario)
        assert [r.status_code for r in served] == [200, 200, 200] and other.status_code == 200
        assert "server.queue_share" in error_of(refused, 429, "busy")["message"]

    def test_a_configured_origin_gets_cors_and_others_do_not(self, serve: Callable[..., Any]):
        _, app = serve('[server]\nallowed_origins = ["https://kiosk.example"]\nallowed_hosts = ["appliance.bank"]\n')

        async def scenario(http: httpx.AsyncClient) -> list[httpx.Response]:
            preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
            return [
                await http.options("/v1/sessions", headers={"Origin": "https://kiosk.example", **preflight}),
                await http.get("/v1/sessions", headers={"Origin": "https://kiosk.example"}),
                await http.options("/v1/sessions", headers={"Origin": "https://evil.example", **preflight}),
                await http.get("/v1/sessions", headers={"Host": "appliance.bank:8088"}),
                await http.get("/v1/sessions", headers={"Host": "evil.example:8088"}),
            ]

        allowed, simple, evil, named, rebound = call(app, scenario)
        assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "https://kiosk.example"
        assert simple.status_code == 200 and simple.headers["access-control-allow-origin"] == "https://kiosk.example"
        assert evil.status_code == 403 and "access-control-allow-origin" not in evil.headers
        assert named.status_code == 200 and rebound.status_code == 421

    def test_each_role_is_refused_what_is_not_its_own_and_each_refusal_is_counted(self, serve: Callable[..., Any]):
        appliance, app = serve(tokens={"k1": "kiosk", "k2": "kiosk", "i1": "integration"}, token="op")

        def as_(token: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {token}"}

        async def scenario(http: httpx.AsyncClient) -> tuple[dict[str, httpx.Response], str, str, str]:
            mine = (await http.post("/v1/sessions", headers=as_("k1"))).json()["id"]
            theirs = (await http.post("/v1/sessions", headers=as_("k2"))).json()["id"]
            chat = {"messages": [{"role": "user", "content": "hi"}]}
            replies = {
                "list": await http.get("/v1/sessions", headers=as_("k1")),
                "models": await http.get("/v1/models", headers=as_("k1")),
                "chat": await http.post("/v1/chat/completions", json=chat, headers=as_("k1")),
                "summary": await http.put(f"/v1/sessions/{mine}/summary", json={"text": "x"}, headers=as_("k1")),
                "pause": await http.post(f"/v1/sessions/{mine}/summary/pause", headers=as_("k1")),
                "record": await http.post(
                    f"/v1/sessions/{mine}/turns", json={"role": "agent", "text": "x"}, headers=as_("k1")
                ),
                "erase": await http.delete(f"/v1/sessions/{mine}", headers=as_("i1")),
                "read theirs": await http.get(f"/v1/sessions/{theirs}", headers=as_("k1")),
                "talk theirs": await http.post(
                    f"/v1/sessions/{theirs}/messages", json={"text": MARKER}, headers=as_("k1")
                ),
                "chat theirs": await http.post(
                    "/v1/chat/completions", json={**chat, "session_id": theirs}, headers=as_("i1")
                ),
                "user theirs": await http.post(
                    "/v1/chat/completions", json={**chat, "user": theirs}, headers=as_("i1")
                ),
                "read unknown": await http.get("/v1/sessions/nope", headers=as_("k1")),
                "talk mine": await http.post(f"/v1/sessions/{mine}/messages", json={"text": "hi"}, headers=as_("k1")),
                "read mine": await http.get(f"/v1/sessions/{mine}", headers=as_("k1")),
                "operator reads theirs": await http.get(f"/v1/sessions/{theirs}", headers=as_("op")),
            }
            return replies, (await http.get("/metrics", headers=as_("op"))).text, mine, theirs

        replies, metrics, mine, theirs = call(app, scenario)
        forbidden = ["list", "models", "chat", "summary", "pause", "record", "erase"]
        hidden = ["read theirs", "talk theirs", "chat theirs", "user theirs", "read unknown"]
        for name in forbidden:
            error_of(replies[name], 403, "forbidden")
        for name in hidden:
            error_of(replies[name], 404, "not_found")
        assert [replies[name].status_code for name in ("talk mine", "read mine", "operator reads theirs")] == [200] * 3
        assert [t.text for t in appliance.store.turns(theirs)] == [] and len(appliance.store.turns(mine)) == 2
        assert appliance.store.session(mine).summary_paused is False
        assert metric(metrics, "appliance_access_refused_total", reason="role") == len(forbidden)
        assert metric(metrics, "appliance_access_refused_total", reason="not_owner") == len(hidden)
        assert metric(metrics, "appliance_http_errors_total", status="403") == len(forbidden)
        assert metric(metrics, "appliance_http_errors_total", status="404") == len(hidden)

    def test_a_refused_caller_is_refused_before_its_request_is_validated(self, serve: Callable[..., Any]):
        # Access is a dependency, and FastAPI resolves dependencies before it validates the query and body.
        _, app = serve(tokens={"k1": "kiosk"})
        kiosk = {"Authorization": "Bearer k1"}

        async def scenario(http: httpx.AsyncClient) -> list[httpx.Response]:
            return [
                await http.get("/v1/sessions", params={"limit": "many"}, headers=kiosk),
                await http.put("/v1/sessions/nope/summary", json={"text": 5}, headers=kiosk),
                await http.post("/v1/sessions/nope/messages", json={"text": 5}, headers=kiosk),
            ]

        listed, summary, talked = call(app, scenario)
        error_of(listed, 403, "forbidden")
        error_of(summary, 403, "forbidden")
        error_of(talked, 404, "not_found")

    def test_the_retention_sweep_erases_quiet_sessions_only(self, serve: Callable[..., Any]):
        appliance, _ = serve()
        store = appliance.store
        quiet = appliance.sessions.new_session().id
        store.append_turn(quiet, "customer", MARKER)
        busy = appliance.sessions.new_session().id
        erased: list[str] = []
        later = time.time() + 10 * retention.DAY_S
        assert (
            retention.sweep(store, appliance.queue, 5 * retention.DAY_S, clock=lambda: later, on_erased=erased.append)
            == 2
        )
        assert sorted(erased) == sorted([quiet, busy]) and store.sessions() == []
        assert [e["reason"] for e in store.erasures()] == ["retention", "retention"]
        kept = appliance.sessions.new_session().id
        assert retention.sweep(store, appliance.queue, 5 * retention.DAY_S) == 0  # not quiet for long
        assert retention.erase_if_quiet(store, kept, cutoff=time.time() - 60) is False
        assert [s["id"] for s in store.sessions()] == [kept]


# fuzzing the whole OpenAPI schema --------------------------------------------------------------------

# Text that has broken servers: lone surrogates, NUL, controls, bidi, line separators, template markers.
PIECES = ["\ud800", "\udfff", "\x00", "\x1b", "\x85", "\u2028", "\u2029", "\u202e", "\r", "\n", "<|im_end|>", "[/]"]


def hostile_text(max_size: int) -> st.SearchStrategy[str]:
    return st.lists(st.characters() | st.sampled_from(PIECES), max_size=max_size).map("".join)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text(20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def from_schema(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values for a JSON schema as FastAPI writes it (refs, anyOf, enums, the basic types); often
    valid, sometimes just outside its bounds, and its strings drawn from hostile text."""
    if "$ref" in schema:
        return from_schema(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    if "anyOf" in schema:
        return st.one_of([from_schema(s, defs) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "string":
        return hostile_text(min(schema.get("maxLength", 40), 40))
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum", -5) - 1, max_value=schema.get("maximum", 10_000) + 1)
    if kind == "number":
        return st.floats(min_value=-1.0, max_value=3.0, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), defs), max_size=4)
    if kind == "object" and "properties" in schema:
        required = set(schema.get("required", ()))
        props = {name: from_schema(s, defs) for name, s in schema["properties"].items()}
        return st.fixed_dictionaries(
            {k: v for k, v in props.items() if k in required},
            optional={k: v for k, v in props.items() if k not in required},
        )
    return JSON_VALUES


class TestFuzz:
    """Every operation of the OpenAPI schema, fuzzed in-process: bounded in examples and time."""

    def test_no_operation_answers_500_or_hangs(self, serve: Callable[..., Any]):
        appliance, app = serve(
            "[server]\nmax_turns_per_session = 40\nsessions_per_minute = 100000\n", request_timeout_s=10
        )
        schema = app.openapi()
        defs = schema.get("components", {}).get("schemas", {})
        session = appliance.sessions.new_session().id
        operations = [(path, method, op) for path, item in schema["paths"].items() for method, op in item.items()]
        assert len(operations) >= 15
        # Mostly the real session, so that bodies reach the store; sometimes none, or any text.
        ids = st.sampled_from([session, session, session, "nope"]) | st.text(
            st.characters(exclude_categories=("Cs",)), max_size=12
        )
        started = time.monotonic()
        seen: dict[int, int] = {}

        for path, method, op in operations:
            fuzz(app, path, method, op, defs, ids, seen)
        assert time.monotonic() - started < 240
        print(seen)
        assert 200 in seen and 422 in seen  # it reached the routes, and their refusals


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def fuzz(
    app: Any,
    path: str,
    method: str,
    op: dict[str, Any],
    defs: dict[str, Any],
    ids: st.SearchStrategy[str],
    seen: dict[int, int],
) -> None:
    """Up to 30 requests to one operation, each answered within 15 s and never with a 5xx."""
    body_schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    params = [p for p in op.get("parameters", ()) if p["in"] in ("path", "query")]
    values = st.fixed_dictionaries(
        {p["name"]: (ids if p["in"] == "path" else from_schema(p.get("schema", {}), defs)) for p in params}
    )

    # Bodies from the schema (most reach the route), or any JSON at all.
    bodies = (
        st.one_of(from_schema(body_schema, defs), from_schema(body_schema, defs), JSON_VALUES)
        if body_schema
        else st.none()
    )

    @settings(
        max_examples=30,
        deadline=5000,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        database=None,
    )
    @given(values=values, body=bodies)
    def one(values: dict[str, Any], body: Any) -> None:
        url = path
        query = {}
        for p in params:
            value = values[p["name"]]
            if p["in"] == "path":
                url = url.replace("{" + p["name"] + "}", urllib.parse.quote(str(value), safe="") or "x")
            elif isinstance(value, str | int) and not has_surrogate(str(value)):
                query[p["name"]] = value
        content = json.dumps(body).encode() if body is not None else None

        async def scenario(http: httpx.AsyncClient) -> httpx.Response:
            request = http.request(
                method.upper(), url, params=query, content=content, headers={"Content-Type": "application/json"}
            )
            return await asyncio.wait_for(request, 15)

        reply = call(app, scenario)
        seen[reply.status_code] = seen.get(reply.status_code, 0) + 1
        assert reply.status_code < 500, (method, url, body, reply.text)

    one()
