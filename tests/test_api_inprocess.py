"""The HTTP API in-process, over an appliance built with fake models: every error a request can
trigger, answered with its status and typed JSON body; server-sent events one ``data:`` line each;
one look at the session per turn; operator turns in the session's lane; and the OpenAI endpoint's
stateless path. No model, no process, no socket: httpx's ASGITransport calls the app directly.

The same API against a real daemon and the tiny model is in test_api.py."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from appliance.app import Appliance, build
from appliance.config import load_settings
from appliance.errors import Cancelled, GenerationError
from appliance.protocols import OnToken
from appliance.serve import provenance
from appliance.serve.api import create_app
from appliance.store import Store
from appliance.types import Generation, Message, Sampling

from .fakes import FakeResponder
from .support import eventually_async, metric, write_config

T = TypeVar("T")
TOKEN = "in-process-token"


class GatedResponder(FakeResponder):
    """A FakeResponder whose generations wait for ``gate`` (so that a queue builds up behind one)."""

    def __init__(self, replies: Sequence[str] = ()) -> None:
        super().__init__(replies)
        self.gate = threading.Event()
        self.started = threading.Event()

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        self.started.set()
        while not self.gate.wait(0.01):
            if cancel is not None and cancel.is_set():
                raise Cancelled("cancelled while gated")
        return super().generate(messages, sampling, on_token=on_token, cancel=cancel, cache_key=cache_key)


class InterloperResponder(FakeResponder):
    """A FakeResponder that runs ``during`` while it generates: another writer (a second process, a
    script on the database) storing a turn between the answer's snapshot and its write."""

    during: Callable[[], object] | None = None

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        if self.during is not None:
            self.during()
        return super().generate(messages, sampling, on_token=on_token, cancel=cancel, cache_key=cache_key)


@dataclass
class Served:
    """An app over a built appliance, and ways to call it without a socket."""

    appliance: Appliance
    responder: FakeResponder
    app: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def store(self) -> Store:
        return self.appliance.store

    def run(self, scenario: Callable[[httpx.AsyncClient], Awaitable[T]]) -> T:
        async def main() -> T:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://appliance", headers=self.headers
            ) as http:
                return await scenario(http)

        return asyncio.run(main())

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.run(lambda http: http.request(method, path, **kwargs))

    def new_session(self, policy: str = "rolling") -> str:
        reply = self.request("POST", "/v1/sessions", json={"policy": policy})
        assert reply.status_code == 201, reply.text
        return reply.json()["id"]

    def texts(self, session_id: str) -> list[str]:
        return [t.text for t in self.store.turns(session_id)]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """Build the appliance (fake responder and summarizer, no recall) from a config, and its app."""
    built: list[Appliance] = []

    def make(
        config: str = "", responder: FakeResponder | None = None, *, worker: bool = True, **options: Any
    ) -> Served:
        settings = load_settings(write_config(tmp_path, config), env={})
        responder = responder or FakeResponder()
        appliance = build(
            settings, responder=responder, summarizer=FakeResponder(default="Summary."), recall=False, worker=worker
        )
        built.append(appliance)
        headers = {"Authorization": f"Bearer {options['token']}"} if options.get("token") else {}
        return Served(appliance, responder, create_app(appliance, **options), headers)

    yield make
    for appliance in built:
        appliance.close()


def error_of(reply: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    """The typed error body, after checking the status and its type."""
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert error["type"] == kind and error["message"]
    return error


def parse_sse(text: str) -> list[tuple[str, Any]]:
    """(event, JSON data) pairs; asserts the framing: each event is at most one ``event:`` line and
    exactly one ``data:`` line, followed by one blank line."""
    assert text.endswith("\n\n")
    events = []
    for block in text[:-2].split("\n\n"):
        lines = block.split("\n")
        names = [line.split(": ", 1)[0] for line in lines]
        assert names in (["data"], ["event", "data"]), block
        fields = dict(line.split(": ", 1) for line in lines)
        data = fields["data"]
        events.append((fields.get("event", "message"), data if data == "[DONE]" else json.loads(data)))
    return events


# each error a request can trigger ----------------------------------------------------------------


class TestErrorStatuses:
    """Each typed error a request can trigger, with its status and body; nothing stored for any."""

    def test_unknown_session_is_404_for_every_route(self, serve: Callable[..., Served]):
        served = serve()
        for method, path, body in [
            ("POST", "/v1/sessions/nope/messages", {"text": "hi"}),
            ("POST", "/v1/sessions/nope/messages", {"text": "hi", "stream": True}),
            ("POST", "/v1/sessions/nope/turns", {"role": "agent", "text": "hi"}),
            ("POST", "/v1/sessions/nope/draft", {"text": "hi"}),
            ("GET", "/v1/sessions/nope", None),
            ("PUT", "/v1/sessions/nope/summary", {"text": "x"}),
            ("POST", "/v1/sessions/nope/summary/restore", {"version": 1}),
            ("POST", "/v1/sessions/nope/summary/pause", None),
            ("POST", "/v1/chat/completions", {"user": "nope", "messages": [{"role": "user", "content": "hi"}]}),
            ("GET", "/v1/no-such-route", None),
        ]:
            reply = served.request(method, path, json=body)
            error_of(reply, 404, "not_found")
            assert reply.headers["content-type"] == "application/json", path
        assert served.responder.prompts == []  # the model never ran
        assert served.store.sessions() == []

    @pytest.mark.parametrize(
        ("path", "body"),
        [
            ("messages", {"text": "x" * 51}),
            ("messages", {"text": "x" * 51, "stream": True}),
            ("turns", {"role": "agent", "text": "x" * 51}),
            ("draft", {"text": "x" * 51}),
        ],
    )
    def test_too_long_text_is_413_naming_the_limit(self, serve: Callable[..., Served], path: str, body: dict):
        served = serve("[chat]\nmax_message_chars = 50\n")
        session = served.new_session()
        error = error_of(served.request("POST", f"/v1/sessions/{session}/{path}", json=body), 413, "message_too_long")
        assert error["field"] == "text" and error["limit"] == 50 and "chat.max_message_chars" in error["message"]
        assert served.texts(session) == [] and served.responder.prompts == []

    @pytest.mark.parametrize("session", [True, False])
    def test_too_long_openai_message_is_413(self, serve: Callable[..., Served], session: bool):
        served = serve("[chat]\nmax_message_chars = 50\n")
        extra = {"session_id": served.new_session()} if session else {}
        body = {"model": "x", "messages": [{"role": "user", "content": "x" * 51}], **extra}
        error = error_of(served.request("POST", "/v1/chat/completions", json=body), 413, "message_too_long")
        assert error["limit"] == 50 and served.responder.prompts == []

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
            ("turns", b'{"role": "agent", "text": ""}', "text"),
            ("turns", b'["role", "agent"]', "body"),
            ("summary", b'{"text": 1}', "text"),
            ("summary/restore", b'{"version": 0}', "version"),
            ("summary/restore", b'{"version": 7}', "version"),
        ],
    )
    def test_invalid_body_is_422_naming_the_field(
        self, serve: Callable[..., Served], path: str, content: bytes, field: str
    ):
        served = serve()
        session = served.new_session()
        reply = served.request(
            "POST", f"/v1/sessions/{session}/{path}", content=content, headers={"Content-Type": "application/json"}
        )
        assert error_of(reply, 422, "invalid_request")["field"] == field
        assert served.texts(session) == [] and served.store.summaries(session) == ()

    def test_invalid_new_session_is_422_and_creates_nothing(self, serve: Callable[..., Served]):
        served = serve()
        assert error_of(served.request("POST", "/v1/sessions", json={"policy": "all"}), 422, "invalid_request")[
            "field"
        ] == ("policy")
        assert error_of(served.request("POST", "/v1/sessions", json={"title": 7}), 422, "invalid_request")["field"] == (
            "title"
        )
        assert served.store.sessions() == []

    def test_openai_messages_that_end_with_no_question_are_422(self, serve: Callable[..., Served]):
        served = serve()
        session = served.new_session()
        for body in [
            {"model": "x", "messages": []},
            {"model": "x", "messages": [{"role": "robot", "content": "x"}]},
            {"model": "x", "session_id": session, "messages": [{"role": "assistant", "content": "x"}]},
            {"model": "x", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]},
        ]:
            reply = served.request("POST", "/v1/chat/completions", json=body)
            assert error_of(reply, 422, "invalid_request")["field"].startswith("messages")
        assert served.texts(session) == [] and served.responder.prompts == []

    def test_full_queue_is_429_with_retry_after_and_stores_nothing(self, serve: Callable[..., Served]):
        responder = GatedResponder()
        served = serve("[server]\nqueue_max = 1\nretry_after_s = 4\n", responder)
        queue = served.appliance.queue
        ids = [served.new_session() for _ in range(3)]

        async def scenario(http: httpx.AsyncClient) -> tuple[list[httpx.Response], list[httpx.Response]]:
            first = asyncio.create_task(http.post(f"/v1/sessions/{ids[0]}/messages", json={"text": "one"}))
            await asyncio.to_thread(responder.started.wait, 10)
            second = asyncio.create_task(http.post(f"/v1/sessions/{ids[1]}/messages", json={"text": "two"}))
            await eventually_async(lambda: queue.waiting == 1, "the second answer to wait in the queue")
            refused = [
                await http.post(f"/v1/sessions/{ids[2]}/messages", json={"text": "three"}),
                await http.post(f"/v1/sessions/{ids[2]}/turns", json={"role": "agent", "text": "hello"}),
                await http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "four"}]}),
            ]
            responder.gate.set()
            return [await first, await second], refused

        answered, refused = served.run(scenario)
        assert [r.status_code for r in answered] == [200, 200]
        for reply in refused:
            error_of(reply, 429, "busy")
            assert reply.headers["Retry-After"] == "4"
        assert served.texts(ids[2]) == []

    @pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}])
    def test_missing_or_wrong_token_is_401(self, serve: Callable[..., Served], headers: dict[str, str]):
        served = serve(token=TOKEN)
        session = served.new_session()  # with the right token
        served.headers = headers
        for method, path in [
            ("POST", f"/v1/sessions/{session}/messages"),
            ("POST", "/v1/sessions"),
            ("GET", "/healthz"),
        ]:
            reply = served.request(method, path, json={"text": "hi"})
            error_of(reply, 401, "unauthorized")
            assert reply.headers["WWW-Authenticate"] == "Bearer"
        assert served.texts(session) == [] and len(served.store.sessions()) == 1

    def test_shutting_down_is_503_and_not_ready(self, serve: Callable[..., Served]):
        served = serve()
        session = served.new_session()
        served.appliance.queue.stop_accepting()  # what SIGTERM does
        for path, body in [
            (f"/v1/sessions/{session}/messages", {"text": "hi"}),
            (f"/v1/sessions/{session}/messages", {"text": "hi", "stream": True}),
            (f"/v1/sessions/{session}/turns", {"role": "agent", "text": "hi"}),
            ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
        ]:
            error_of(served.request("POST", path, json=body), 503, "shutting_down")
        ready = served.request("GET", "/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["model"] is False
        assert served.texts(session) == []

    def test_a_failed_generation_is_502(self, serve: Callable[..., Served]):
        served = serve()
        session = served.new_session()
        served.responder.fail_with = GenerationError("the model ran out of memory")
        error_of(
            served.request("POST", f"/v1/sessions/{session}/messages", json={"text": "hi"}), 502, "generation_failed"
        )
        assert served.texts(session) == []

    def test_an_answer_past_the_request_timeout_is_504(self, serve: Callable[..., Served]):
        served = serve(responder=GatedResponder(), request_timeout_s=0.2)  # never opened: it can only time out
        session = served.new_session()
        error_of(served.request("POST", f"/v1/sessions/{session}/messages", json={"text": "hello"}), 504, "timeout")
        assert served.texts(session) == []

    @pytest.mark.parametrize("stream", [False, True])
    def test_a_turn_stored_by_another_writer_mid_answer_is_409(self, serve: Callable[..., Served], stream: bool):
        responder = InterloperResponder()
        served = serve(responder=responder)
        session = served.new_session()
        responder.during = lambda: served.store.append_turn(session, "agent", "Another writer's turn.")
        reply = served.request("POST", f"/v1/sessions/{session}/messages", json={"text": "hi", "stream": stream})
        if stream:  # the tokens went out before the write: the stream ends with the error
            assert reply.status_code == 200
            kind, data = parse_sse(reply.text)[-1]
            assert kind == "error" and data["error"]["type"] == "conflict"
        else:
            error_of(reply, 409, "conflict")
        assert served.texts(session) == ["Another writer's turn."]  # the answer stored nothing


# server-sent events -------------------------------------------------------------------------------


class TestServerSentEvents:
    def test_tokens_then_done_each_on_one_data_line(self, serve: Callable[..., Served]):
        # A reply with newlines in it: JSON escapes them, so every event still has one data line.
        served = serve(responder=FakeResponder(["Line one\nline two.\n\nDone."]))
        session = served.new_session()
        reply = served.request("POST", f"/v1/sessions/{session}/messages", json={"text": "Hello!", "stream": True})
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
        assert reply.headers["cache-control"] == "no-cache"
        events = parse_sse(reply.text)
        kinds = [kind for kind, _ in events]
        assert kinds[-1] == "done" and set(kinds[:-1]) == {"token"} and len(kinds) > 2
        done = events[-1][1]
        assert "".join(data["text"] for _, data in events[:-1]) == done["text"] == "Line one\nline two.\n\nDone."
        assert {"stage", "check", "manifest", "timings"} <= set(done)
        assert served.texts(session) == ["Hello!", done["text"]]

    def test_openai_chunks_each_on_one_data_line_then_done(self, serve: Callable[..., Served]):
        served = serve(responder=FakeResponder(["Hi\nthere."]))
        body = {"model": "x", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
        events = parse_sse(served.request("POST", "/v1/chat/completions", json=body).text)
        assert all(kind == "message" for kind, _ in events)
        assert events[-1][1] == "[DONE]"
        chunks = [data for _, data in events[:-1]]
        assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "Hi\nthere."
        assert len({c["id"] for c in chunks}) == 1
        last = chunks[-1]
        assert last["choices"][0]["finish_reason"] == "stop"
        assert last["appliance"]["session_id"] is None and last["appliance"]["manifest"]["policy"] == "raw"


# one look at the session per turn ---------------------------------------------------------------


class TestOneLookupPerTurn:
    def test_an_answer_reads_the_session_once(self, serve: Callable[..., Served], monkeypatch: pytest.MonkeyPatch):
        served = serve(worker=False)  # the worker reads sessions on its own schedule
        session = served.new_session()
        calls: list[str] = []
        real = Store.session

        def counting(self: Store, session_id: str) -> Any:
            calls.append(session_id)
            return real(self, session_id)

        monkeypatch.setattr(Store, "session", counting)
        assert served.request("POST", f"/v1/sessions/{session}/messages", json={"text": "Hi"}).status_code == 200
        assert calls == [session]  # the job's snapshot, nothing before it
        calls.clear()
        error_of(served.request("POST", "/v1/sessions/nope/messages", json={"text": "Hi"}), 404, "not_found")
        assert calls == ["nope"]

    def test_a_rejected_text_never_reads_the_store(self, serve: Callable[..., Served], monkeypatch: pytest.MonkeyPatch):
        served = serve("[chat]\nmax_message_chars = 5\n", worker=False)
        monkeypatch.setattr(Store, "snapshot", lambda *a: pytest.fail("the store was read for a rejected text"))
        error_of(
            served.request("POST", "/v1/sessions/nope/messages", json={"text": "too long"}), 413, "message_too_long"
        )
        assert served.appliance.queue.waiting == 0


class TestDraft:
    def test_a_draft_is_warmed_ahead_and_nothing_is_stored(self, serve: Callable[..., Served]):
        from .test_prewarm import FakeWarmer

        served = serve(responder=FakeWarmer())
        session = served.new_session()
        warmed: list[tuple[str, str]] = []
        prewarmer = served.appliance.prewarmer
        assert prewarmer is not None
        prewarmer.draft = lambda sid, text: warmed.append((sid, text))  # type: ignore[method-assign]
        reply = served.request("POST", f"/v1/sessions/{session}/draft", json={"text": "  What does a transfer "})
        assert reply.status_code == 202 and reply.json() == {"warming": True}
        assert warmed == [(session, "What does a transfer")]
        assert served.texts(session) == [] and served.responder.prompts == []
        error_of(served.request("POST", f"/v1/sessions/{session}/draft", json={"text": " "}), 422, "invalid_request")

    def test_without_a_prewarmer_it_says_so(self, serve: Callable[..., Served]):
        served = serve()  # a responder that cannot warm (a remote server keeps its own cache)
        session = served.new_session()
        reply = served.request("POST", f"/v1/sessions/{session}/draft", json={"text": "What does it cost?"})
        assert reply.status_code == 202 and reply.json() == {"warming": False}


# operator turns in the session's lane -------------------------------------------------------------


class TestOperatorTurns:
    def test_a_turn_posted_during_an_answer_is_stored_after_it(self, serve: Callable[..., Served]):
        responder = GatedResponder(["Let me check that order."])
        served = serve(responder=responder)
        session = served.new_session()

        async def scenario(http: httpx.AsyncClient) -> tuple[httpx.Response, httpx.Response, list[str]]:
            answer = asyncio.create_task(http.post(f"/v1/sessions/{session}/messages", json={"text": "Order A-1?"}))
            await asyncio.to_thread(responder.started.wait, 10)
            turn = asyncio.create_task(
                http.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": "An operator here."})
            )
            lane = served.appliance.queue
            await eventually_async(lambda: lane.waiting == 1, "the operator's turn to wait in the session's lane")
            waiting = served.texts(session)  # the operator's turn waits behind the answer
            responder.gate.set()
            return await answer, await turn, waiting

        answer, turn, waiting = served.run(scenario)
        assert waiting == []
        assert answer.status_code == 200 and answer.json()["agent"]["index"] == 1
        assert turn.status_code == 201 and turn.json()["index"] == 2
        assert served.texts(session) == ["Order A-1?", "Let me check that order.", "An operator here."]

    def test_recorded_turns_count_in_metrics(self, serve: Callable[..., Served]):
        served = serve()
        session = served.new_session()
        reply = served.request("POST", f"/v1/sessions/{session}/turns", json={"role": "customer", "text": " Hi "})
        assert reply.status_code == 201 and reply.json()["text"] == "Hi" and reply.json()["index"] == 0
        assert metric(served.request("GET", "/metrics").text, "appliance_turns_recorded_total") == 1


# the OpenAI endpoint without a session ----------------------------------------------------------


class TestStatelessCompletion:
    def test_the_answer_carries_its_manifest_and_nothing_is_stored(self, serve: Callable[..., Served]):
        served = serve(responder=FakeResponder(["Happy to help with that."]))
        body = {"model": "x", "messages": [{"role": "user", "content": "Can you help?"}]}
        reply = served.request("POST", "/v1/chat/completions", json=body)
        assert reply.status_code == 200, reply.text
        data = reply.json()
        assert data["object"] == "chat.completion" and data["model"] == "fake-responder"
        assert data["choices"][0]["message"] == {"role": "assistant", "content": "Happy to help with that."}
        assert data["choices"][0]["finish_reason"] == "stop"
        usage = data["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
        extra = data["appliance"]
        assert extra["session_id"] is None and extra["stage"] in ("early", "mid", "late") and "ok" in extra["check"]
        assert extra["manifest"]["policy"] == "raw" and extra["manifest"]["cut_turns"] == []
        assert served.store.sessions() == []
        assert metric(served.request("GET", "/metrics").text, "appliance_answers_total") == 0  # answered, not stored

    def test_a_too_long_transcript_drops_its_oldest_turns(self, serve: Callable[..., Served]):
        served = serve("[context]\nbudget_tokens = 160\n")
        history = [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn{i} " + "words " * 20} for i in range(8)
        ]
        body = {"model": "x", "messages": [*history, {"role": "user", "content": "And now?"}]}
        reply = served.request("POST", "/v1/chat/completions", json=body)
        assert reply.status_code == 200, reply.text
        manifest = reply.json()["appliance"]["manifest"]
        assert manifest["cut_turns"] and manifest["cut_turns"][0] == 0 and manifest["total_tokens"] <= 160
        cut = set(manifest["cut_turns"])
        assert cut == set(range(len(cut)))  # oldest first
        prompt = "\n".join(m.content for m in served.responder.prompts[-1])
        assert "turn0 " not in prompt and "turn7 " in prompt and "And now?" in prompt

    def test_system_and_developer_messages_replace_the_system_prompt(self, serve: Callable[..., Served]):
        served = serve()
        body = {
            "model": "x",
            "messages": [{"role": "developer", "content": "You are a pirate."}, {"role": "user", "content": "Hi"}],
        }
        assert served.request("POST", "/v1/chat/completions", json=body).status_code == 200
        first = served.responder.prompts[-1][0]
        assert first.role == "system" and "You are a pirate." in first.content

    @pytest.mark.parametrize(("max_tokens", "reason"), [(3, "length"), (100, "stop")])
    def test_an_answer_that_used_every_token_allowed_finished_by_length(
        self, serve: Callable[..., Served], max_tokens: int, reason: str
    ):
        served = serve(responder=FakeResponder(["One two three four."]))
        body = {"model": "x", "max_tokens": max_tokens, "messages": [{"role": "user", "content": "Count."}]}
        assert served.request("POST", "/v1/chat/completions", json=body).json()["choices"][0]["finish_reason"] == reason

    def test_a_session_named_by_user_is_answered_and_stored(self, serve: Callable[..., Served]):
        served = serve(responder=FakeResponder(["Noted."]))
        session = served.new_session()
        body = {"model": "x", "user": session, "messages": [{"role": "user", "content": "Order A-5521."}]}
        extra = served.request("POST", "/v1/chat/completions", json=body).json()["appliance"]
        assert extra["session_id"] == session and extra["text"] == "Noted."
        assert served.texts(session) == ["Order A-5521.", "Noted."]


# Every family on /metrics and its kind, as the page had them when it was written by hand (before
# prometheus-client wrote it): dashboards and alerts name these, so a change here is a change for them.
METRICS_PAGE = {
    "appliance_answers_total": "counter",
    "appliance_turns_recorded_total": "counter",
    "appliance_checker_flags_total": "counter",
    "appliance_http_errors_total": "counter",
    "appliance_access_refused_total": "counter",
    "appliance_erasures_total": "counter",
    "appliance_answer_seconds": "histogram",
    "appliance_messages_held_total": "counter",
    "appliance_person_wait_seconds": "histogram",
    "appliance_queue_waiting": "gauge",
    "appliance_answering": "gauge",
    "appliance_connections_open": "gauge",
    "appliance_summarizer_accepted_total": "counter",
    "appliance_summarizer_errors_total": "counter",
    "appliance_summarizer_failures_total": "counter",
    "appliance_summarizer_forced_total": "counter",
    "appliance_summarizer_rejected_total": "counter",
    "appliance_summarizer_runs_total": "counter",
    "appliance_summarizer_timeouts_total": "counter",
    "appliance_summarizer_alive": "gauge",
    "appliance_summarizer_lag_turns_max": "gauge",
    "appliance_event_listeners": "gauge",
    "appliance_event_listeners_dropped_total": "counter",
    "appliance_events_sent_total": "counter",
    "appliance_sessions": "gauge",
}


class TestHealth:
    def test_the_metrics_page_keeps_its_names_and_kinds(self, serve: Callable[..., Served]):
        served = serve(responder=FakeResponder(["Noted."]))
        served.app.state.metrics.open_connections = lambda: 2  # the daemon's connection gate, not in-process
        session = served.new_session()
        assert served.request("POST", f"/v1/sessions/{session}/messages", json={"text": "Hi"}).status_code == 200
        assert served.request("GET", "/v1/sessions/nope").status_code == 404
        text = served.request("GET", "/metrics").text
        kinds = dict(line.split()[2:4] for line in text.splitlines() if line.startswith("# TYPE "))
        assert kinds == METRICS_PAGE
        # Each sample belongs to a family above (a histogram's by its three suffixes): no series was added.
        allowed = {f"{name}{part}" for name in METRICS_PAGE for part in ("", "_bucket", "_count", "_sum")}
        names = {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}
        assert names <= allowed, names - allowed
        assert metric(text, "appliance_answers_total") == 1 and metric(text, "appliance_answer_seconds_count") == 1
        assert metric(text, "appliance_http_errors_total", status="404") == 1
        assert metric(text, "appliance_connections_open") == 2

    def test_ready_with_model_database_and_worker(self, serve: Callable[..., Served]):
        responder = FakeResponder()
        responder.device = "gpu (NVIDIA L4, 29 layers)"
        served = serve(responder=responder)
        ready = served.request("GET", "/readyz")
        assert ready.status_code == 200
        assert ready.json() == {
            "ready": True,
            "checks": {"model": True, "database": True, "worker": True},
            "model": "fake-responder",
            "bundle": provenance.UNSIGNED,  # run from a checkout, not installed from a signed bundle
            "devices": {"responder": "gpu (NVIDIA L4, 29 layers)", "summarizer": "cpu"},  # where each model runs
        }
        metrics = served.request("GET", "/metrics").text
        assert metric(metrics, "appliance_summarizer_alive") == 1
        assert metric(metrics, "appliance_queue_waiting", model="fake-responder") == 0
