"""The HTTP API against a real daemon process with the SmolLM2-135M model: the official OpenAI
client, the native sessions API, server-sent events, and rejected requests storing nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from .test_daemon import Daemon, needs_model, start_daemon

TOKEN = "test-token-3f1c"

# Every class talks to the module's daemon (the same checks on fakes, in-process: test_api_inprocess.py).
real_daemon = [pytest.mark.real_model, pytest.mark.daemon, needs_model]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon for the module, with a bearer token, so that every request below carries it."""
    # Every test starts sessions with the one token: lift the per-client rate (test_security.py tests it).
    d = start_daemon(tmp_path_factory.mktemp("api"), token=TOKEN, server="sessions_per_minute = 1000\n")
    yield d
    assert d.stop() == 0, d.output()


@pytest.fixture
def http(daemon: Daemon) -> Iterator[httpx.Client]:
    with daemon.client() as client:
        yield client


@pytest.fixture
def client(daemon: Daemon) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{daemon.url}/v1", api_key=TOKEN, max_retries=0, timeout=300)


def new_session(http: httpx.Client) -> str:
    reply = http.post("/v1/sessions", json={"title": "test"})
    assert reply.status_code == 201
    return reply.json()["id"]


def turns(http: httpx.Client, session_id: str) -> list[dict[str, Any]]:
    return http.get(f"/v1/sessions/{session_id}").json()["turns"]


def parse_sse(text: str) -> list[tuple[str, str]]:
    """(event, data) pairs; asserts the framing: each event is its lines followed by one blank line."""
    assert text.endswith("\n\n")
    events = []
    for block in text[:-2].split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        assert set(fields) <= {"event", "data"}, block
        events.append((fields.get("event", "message"), fields["data"]))
    return events


class TestOpenAIClient:
    pytestmark = real_daemon

    def test_models_lists_the_responder(self, client: openai.OpenAI):
        assert [m.id for m in client.models.list()] == ["smollm2-135m-instruct"]

    def test_completion_without_a_session(self, client: openai.OpenAI):
        reply = client.chat.completions.create(
            model="anything", messages=[{"role": "user", "content": "Say hello."}], max_tokens=8
        )
        assert reply.object == "chat.completion"
        assert reply.choices[0].message.role == "assistant"
        assert reply.choices[0].message.content
        assert reply.choices[0].finish_reason in ("stop", "length")
        assert 0 < reply.usage.completion_tokens <= 8
        extra = reply.model_extra["appliance"]  # answered under the raw policy, checked, not stored
        assert extra["session_id"] is None and extra["manifest"]["policy"] == "raw" and "ok" in extra["check"]

    def test_streaming_without_a_session(self, client: openai.OpenAI):
        chunks = list(
            client.chat.completions.create(
                model="anything",
                stream=True,
                max_tokens=8,
                messages=[{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello."}],
            )
        )
        assert chunks[0].choices[0].delta.role == "assistant"
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        assert text.strip()
        assert chunks[-1].choices[0].finish_reason in ("stop", "length")
        assert len({c.id for c in chunks}) == 1

    def test_a_session_named_by_session_id_goes_through_the_pipeline(self, client: openai.OpenAI, http: httpx.Client):
        session = new_session(http)
        reply = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": "My order is A-5521."}], extra_body={"session_id": session}
        )
        extra = reply.model_extra["appliance"]
        assert extra["session_id"] == session and extra["stage"] in ("early", "mid", "late")
        assert "parts" in extra["manifest"] and "ok" in extra["check"]
        stored = turns(http, session)
        assert [t["text"] for t in stored] == ["My order is A-5521.", reply.choices[0].message.content]

    def test_a_session_named_by_user_streams_and_is_stored(self, client: openai.OpenAI, http: httpx.Client):
        session = new_session(http)
        chunks = list(
            client.chat.completions.create(
                model="x", stream=True, user=session, messages=[{"role": "user", "content": "Hello there."}]
            )
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        stored = turns(http, session)
        assert [t["role"] for t in stored] == ["customer", "agent"]
        assert stored[1]["text"] == text.strip()

    def test_unknown_session_is_a_404_for_the_client(self, client: openai.OpenAI):
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(
                model="x", messages=[{"role": "user", "content": "hi"}], user="no-such-session"
            )

    def test_wrong_key_is_a_401_for_the_client(self, daemon: Daemon):
        bad = openai.OpenAI(base_url=f"{daemon.url}/v1", api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            bad.models.list()


class TestNativeApi:
    pytestmark = real_daemon

    def test_create_list_and_read_sessions(self, http: httpx.Client):
        session = new_session(http)
        listed = http.get("/v1/sessions").json()["sessions"]
        assert session in [s["id"] for s in listed]
        detail = http.get(f"/v1/sessions/{session}").json()
        assert detail["session"]["id"] == session
        assert detail["turns"] == [] and detail["summaries"] == [] and detail["summary"] is None

    def test_message_answer_is_stored_with_its_record(self, http: httpx.Client):
        session = new_session(http)
        answer = http.post(f"/v1/sessions/{session}/messages", json={"text": "I paid 49.90 EUR on 3 March."}).json()
        assert answer["customer"]["index"] == 0 and answer["agent"]["index"] == 1
        assert answer["stage"] in ("early", "mid", "late")
        assert answer["manifest"]["budget"] == 1024 and answer["check"]["ok"] in (True, False)
        detail = http.get(f"/v1/sessions/{session}").json()
        assert detail["turns"][1]["text"] == answer["text"]
        (record,) = detail["records"]
        assert record["index"] == 1 and record["stage"] == answer["stage"]
        assert record["manifest"] == answer["manifest"] and "generate_s" in record["timings"]
        assert record["completion_tokens"] == answer["completion_tokens"]

    def test_turns_are_recorded_without_generating(self, http: httpx.Client):
        session = new_session(http)
        for role, text in [("customer", "Is the shop open on Sunday?"), ("agent", "No, Monday to Saturday.")]:
            assert http.post(f"/v1/sessions/{session}/turns", json={"role": role, "text": text}).status_code == 201
        stored = turns(http, session)
        assert [(t["role"], t["index"]) for t in stored] == [("customer", 0), ("agent", 1)]
        assert http.get(f"/v1/sessions/{session}").json()["records"] == []

    def test_summary_edit_restore_pause_resume(self, http: httpx.Client):
        session = new_session(http)
        http.post(f"/v1/sessions/{session}/turns", json={"role": "customer", "text": "Order A-1 is late."})
        one = http.put(f"/v1/sessions/{session}/summary", json={"text": "Customer: order A-1 late."})
        assert one.status_code == 201 and one.json()["version"] == 1 and one.json()["author"] == "operator"
        two = http.post(f"/v1/sessions/{session}/summary", json={"text": "Second version."}).json()
        assert two["version"] == 2
        three = http.post(f"/v1/sessions/{session}/summary/restore", json={"version": 1}).json()
        assert three["version"] == 3 and three["text"] == "Customer: order A-1 late."
        detail = http.get(f"/v1/sessions/{session}").json()
        assert [s["version"] for s in detail["summaries"]] == [1, 2, 3]
        assert detail["summary"]["version"] == 3
        assert http.post(f"/v1/sessions/{session}/summary/pause").json()["summary_paused"] is True
        assert http.post(f"/v1/sessions/{session}/summary/resume").json()["summary_paused"] is False

    def test_health_readiness_metrics_and_schema(self, http: httpx.Client):
        assert http.get("/healthz").json() == {"status": "ok"}
        ready = http.get("/readyz").json()
        assert ready["ready"] is True and ready["checks"] == {"model": True, "database": True, "worker": True}
        assert ready["devices"] == {"responder": "cpu", "summarizer": "cpu"}  # n_gpu_layers = auto, no GPU here
        metrics = http.get("/metrics")
        assert metrics.headers["content-type"].startswith("text/plain")
        for name in (
            "appliance_answers_total",
            "appliance_answer_seconds_bucket",
            "appliance_queue_waiting",
            "appliance_checker_flags_total",
        ):
            assert name in metrics.text
        paths = http.get("/openapi.json").json()["paths"]
        for path in ("/v1/sessions", "/v1/sessions/{session_id}/messages", "/v1/chat/completions", "/v1/models"):
            assert path in paths


class TestServerSentEvents:
    pytestmark = real_daemon

    def test_tokens_then_done_with_stage_check_and_manifest(self, http: httpx.Client):
        session = new_session(http)
        with http.stream("POST", f"/v1/sessions/{session}/messages", json={"text": "Hello!", "stream": True}) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            events = parse_sse(r.read().decode())
        kinds = [kind for kind, _ in events]
        assert kinds[-1] == "done" and set(kinds[:-1]) == {"token"} and len(kinds) > 1
        text = "".join(json.loads(data)["text"] for _, data in events[:-1])
        done = json.loads(events[-1][1])
        assert done["text"] == text.strip()
        assert {"stage", "check", "manifest", "timings"} <= set(done)
        assert turns(http, session)[1]["text"] == done["text"]

    def test_openai_stream_framing_ends_with_done(self, http: httpx.Client):
        body = {"model": "x", "stream": True, "max_tokens": 4, "messages": [{"role": "user", "content": "Hi"}]}
        with http.stream("POST", "/v1/chat/completions", json=body) as r:
            events = parse_sse(r.read().decode())
        assert all(kind == "message" for kind, _ in events)
        assert events[-1][1] == "[DONE]"
        assert json.loads(events[-2][1])["choices"][0]["finish_reason"] in ("stop", "length")


class TestRejections:
    """Each rejected request names what is wrong, and leaves nothing stored."""

    pytestmark = real_daemon

    @pytest.fixture
    def session(self, http: httpx.Client) -> Iterator[str]:
        session = new_session(http)
        before = http.get("/v1/sessions").json()["sessions"]
        yield session
        assert turns(http, session) == []
        assert http.get("/v1/sessions").json()["sessions"] == before

    @pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}])
    def test_missing_or_wrong_token_is_401(self, daemon: Daemon, session: str, headers: dict[str, str]):
        reply = httpx.post(f"{daemon.url}/v1/sessions/{session}/messages", json={"text": "hi"}, headers=headers)
        assert reply.status_code == 401
        assert reply.headers["WWW-Authenticate"] == "Bearer"
        assert reply.json()["error"]["type"] == "unauthorized"
        assert httpx.post(f"{daemon.url}/v1/sessions", headers=headers).status_code == 401

    def test_unknown_session_is_404(self, http: httpx.Client, session: str):
        for method, path, body in [
            ("POST", "/v1/sessions/nope/messages", {"text": "hi"}),
            ("POST", "/v1/sessions/nope/messages", {"text": "hi", "stream": True}),
            ("POST", "/v1/sessions/nope/turns", {"role": "agent", "text": "hi"}),
            ("GET", "/v1/sessions/nope", None),
            ("PUT", "/v1/sessions/nope/summary", {"text": "x"}),
            ("POST", "/v1/sessions/nope/summary/pause", None),
        ]:
            reply = http.request(method, path, json=body)
            assert reply.status_code == 404, (method, path)
            assert reply.json()["error"]["type"] == "not_found"

    @pytest.mark.parametrize("stream", [False, True])
    def test_oversized_message_is_413_naming_the_limit(self, http: httpx.Client, session: str, stream: bool):
        reply = http.post(f"/v1/sessions/{session}/messages", json={"text": "x" * 2001, "stream": stream})
        assert reply.status_code == 413
        error = reply.json()["error"]
        assert error["field"] == "text" and error["limit"] == 2000 and "chat.max_message_chars" in error["message"]

    def test_oversized_recorded_turn_is_413(self, http: httpx.Client, session: str):
        reply = http.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": "x" * 2001})
        assert reply.status_code == 413 and reply.json()["error"]["limit"] == 2000

    @pytest.mark.parametrize(
        ("path", "content", "field"),
        [
            ("messages", b'{"text": ', "body"),
            ("messages", b'{"text": 42}', "text"),
            ("messages", b'{"text": "hi", "stream": "yes"}', "stream"),
            ("messages", b'{"txt": "hi"}', "text"),
            ("messages", b'{"text": "hi", "extra": 1}', "extra"),
            ("messages", b'{"text": "   "}', "text"),
            ("turns", b'{"role": "robot", "text": "hi"}', "role"),
            ("turns", b'["role", "agent"]', "body"),
        ],
    )
    def test_invalid_body_is_422_naming_the_field(
        self, http: httpx.Client, session: str, path: str, content: bytes, field: str
    ):
        reply = http.post(
            f"/v1/sessions/{session}/{path}", content=content, headers={"Content-Type": "application/json"}
        )
        assert reply.status_code == 422
        error = reply.json()["error"]
        assert error["field"] == field and error["type"] == "invalid_request"

    def test_invalid_session_body_creates_nothing(self, http: httpx.Client, session: str):
        assert http.post("/v1/sessions", json={"policy": "everything"}).status_code == 422
        assert http.post("/v1/sessions", json={"title": 7}).status_code == 422

    def test_openai_invalid_messages_are_422(self, http: httpx.Client, session: str):
        for body in [
            {"model": "x", "messages": []},
            {"model": "x", "messages": [{"role": "robot", "content": "x"}]},
            {"model": "x", "session_id": session, "messages": [{"role": "assistant", "content": "x"}]},
            {"model": "x", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]},
        ]:
            reply = http.post("/v1/chat/completions", json=body)
            assert reply.status_code == 422
            assert reply.json()["error"]["field"].startswith("messages")
