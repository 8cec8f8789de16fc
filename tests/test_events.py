"""Live events (issue 28) against a real daemon on loopback with the tiny model: an event reaches a
listener within a second of being stored; a dropped connection, and a restart of the daemon, lose
and repeat nothing (``Last-Event-ID``); a stalled listener is dropped while answers go on; erasure
reaches the listeners that are open and leaves nothing of the conversation; no answer is generated
while a person holds a session, and the operator's replies reach the session's listener.

Every loop here is bounded in count and time; each listener is a thread reading one real HTTP
stream, closed at the end of its test.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from appliance.config import ROOT

from .support import eventually
from .test_daemon import Daemon, needs_model, start_daemon

pytestmark = [pytest.mark.real_model, pytest.mark.daemon, needs_model]

OPERATOR, OPERATOR2, KIOSK, KIOSK2 = "tok-op-a1b2c3", "tok-op-d4e5f6", "tok-kiosk-a1b2", "tok-kiosk-c3d4"
MARKER = "Zebra-Quartz-4417"


@dataclass
class Listener:
    """One SSE stream read by a thread: each event with the time it arrived."""

    url: str
    token: str
    last_event_id: int | None = None
    events: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)
    status: int = 0
    ended: threading.Event = field(default_factory=threading.Event)
    opened: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.client = httpx.Client(timeout=httpx.Timeout(30, read=None))
        threading.Thread(target=self._read, daemon=True).start()
        assert self.opened.wait(30), "the stream did not open"

    def _read(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        if self.last_event_id is not None:
            headers["Last-Event-ID"] = str(self.last_event_id)
        try:
            with self.client.stream("GET", self.url, headers=headers) as reply:
                self.status = reply.status_code
                self.opened.set()
                kind, data = "message", ""
                for line in reply.iter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: "):
                        data = line[6:]
                    elif not line and data:
                        self.events.append((time.monotonic(), kind, json.loads(data)))
                        kind, data = "message", ""
        except httpx.HTTPError:
            pass  # closed by the test, or by the daemon
        finally:
            self.opened.set()
            self.ended.set()

    def wait_for(self, found: Any, what: str, timeout: float = 30) -> tuple[float, str, dict[str, Any]]:
        def first() -> tuple[float, str, dict[str, Any]] | None:
            return next((e for e in list(self.events) if found(e[1], e[2])), None)

        eventually(lambda: first() is not None, what, timeout=timeout, every=0.01)
        hit = first()
        assert hit is not None
        return hit

    def ids(self) -> list[int]:
        return [data["id"] for _, kind, data in self.events if "id" in data and kind not in ("behind", "closing")]

    def close(self) -> None:
        self.client.close()
        self.ended.wait(10)


@dataclass
class Box:
    daemon: Daemon
    listeners: list[Listener] = field(default_factory=list)

    def http(self, token: str = OPERATOR) -> httpx.Client:
        return httpx.Client(base_url=self.daemon.url, headers={"Authorization": f"Bearer {token}"}, timeout=300)

    def listen(self, path: str, token: str = OPERATOR, last_event_id: int | None = None) -> Listener:
        listener = Listener(self.daemon.url + path, token, last_event_id)
        self.listeners.append(listener)
        assert listener.status == 200, listener.status
        return listener

    def session(self, token: str = KIOSK) -> str:
        with self.http(token) as http:
            reply = http.post("/v1/sessions", json={"title": "kiosk"})
        assert reply.status_code == 201, reply.text
        return str(reply.json()["id"])

    def record(self, session_id: str, text: str, role: str = "agent") -> dict[str, Any]:
        with self.http() as http:
            reply = http.post(f"/v1/sessions/{session_id}/turns", json={"role": role, "text": text})
        assert reply.status_code == 201, reply.text
        return dict(reply.json())

    def metric(self, name: str) -> float:
        with self.http() as http:
            found = re.search(rf"^{re.escape(name)} (\S+)$", http.get("/metrics").text, re.M)
        return float(found.group(1)) if found else 0.0


def start(tmp: Path, extra: str = "") -> Daemon:
    table = []
    for token, role in ((OPERATOR2, "operator"), (KIOSK, "kiosk"), (KIOSK2, "kiosk")):
        (tmp / f"{token}.token").write_text(token + "\n")
        table.append(f'"{tmp / f"{token}.token"}" = "{role}"')
    return start_daemon(
        tmp,
        token=OPERATOR,
        server=f"max_body_bytes = 2000000\ntokens = {{ {', '.join(table)} }}\n",
        extra="[chat]\nmax_message_chars = 100000\n[floor]\nlistener_queue = 8\nping_s = 1\n" + extra,
        # Sessions of the raw policy: no summary is made of the large turns these tests store.
        env={"APPLIANCE__CONTEXT__POLICY": "raw"},
    )


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Box]:
    box = Box(start(tmp_path_factory.mktemp("floor")))
    yield box
    for listener in box.listeners:
        listener.close()
    assert box.daemon.stop() == 0, box.daemon.output()
    assert MARKER not in box.daemon.output()


@pytest.fixture(autouse=True)
def _close_listeners(floor: Box) -> Iterator[None]:
    yield
    for listener in floor.listeners:
        listener.close()
    floor.listeners.clear()


class TestDelivery:
    def test_an_event_arrives_within_a_second_and_a_dropped_connection_misses_nothing(self, floor: Box):
        watcher = floor.listen("/v1/events")
        session = floor.session()
        for i in range(3):
            floor.record(session, f"reply {i}")
            stored = time.monotonic()
            arrived, _, data = watcher.wait_for(
                lambda k, d, i=i: k == "turn" and d["text"] == f"reply {i}", f"the event of reply {i}"
            )
            assert arrived - stored < 1.0, f"event {data['id']} took {arrived - stored:.2f} s"
        seen = watcher.ids()
        watcher.close()  # the connection drops; the conversation goes on
        for i in range(3, 6):
            floor.record(session, f"reply {i}")
        again = floor.listen("/v1/events", last_event_id=seen[-1])
        again.wait_for(lambda k, d: k == "turn" and d["text"] == "reply 5", "the events after the drop")
        everything = floor.listen(f"/v1/sessions/{session}/events?after=0")
        everything.wait_for(lambda k, d: k == "turn" and d["text"] == "reply 5", "the session's whole log")
        resumed = seen + again.ids()
        assert len(resumed) == len(set(resumed)) and resumed == sorted(resumed)  # nothing twice, in order
        mine = [i for i in resumed if i in set(everything.ids())]
        assert mine == everything.ids()  # nothing of the session missed
        assert [d["text"] for _, k, d in everything.events if k == "turn"] == [f"reply {i}" for i in range(6)]

    def test_a_kiosk_follows_its_own_session_only(self, floor: Box):
        mine, theirs = floor.session(KIOSK), floor.session(KIOSK2)
        listener = floor.listen(f"/v1/sessions/{mine}/events", KIOSK)
        with floor.http(KIOSK) as http:
            assert http.get(f"/v1/sessions/{theirs}/events").status_code == 404
            assert http.get("/v1/events").status_code == 403
        floor.record(theirs, "not for you")
        floor.record(mine, "for you")
        listener.wait_for(lambda k, d: k == "turn" and d["text"] == "for you", "its own turn")
        assert all(d["session_id"] == mine for _, _, d in listener.events)

    def test_a_stalled_listener_is_dropped_and_the_others_and_the_answers_go_on(self, floor: Box):
        session, asking = floor.session(), floor.session()
        healthy = floor.listen("/v1/events")
        dropped = floor.metric("appliance_event_listeners_dropped_total")
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
        stalled.connect(("127.0.0.1", int(floor.daemon.url.rsplit(":", 1)[1])))
        stalled.sendall(
            f"GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {OPERATOR}\r\n\r\n".encode()
        )
        try:
            eventually(lambda: floor.metric("appliance_event_listeners") >= 2, "the stalled listener to open")
            big = "word " * 19_000  # 95 kB a turn: the socket's buffers fill after a few dozen
            deadline = time.monotonic() + 180
            sent = 0
            into = session
            while floor.metric("appliance_event_listeners_dropped_total") <= dropped:
                assert time.monotonic() < deadline and sent < 400, "the stalled listener was never dropped"
                if sent and sent % 5 == 0:  # storing a turn reads its session's turns: keep each session short
                    into = floor.session(KIOSK2)  # (a token of its own: sessions_per_minute is per token)
                floor.record(into, f"{sent} {big}")
                sent += 1
            # An answer is generated and stored meanwhile, and the healthy listener has every event.
            with floor.http(KIOSK) as http:
                answer = http.post(f"/v1/sessions/{asking}/messages", json={"text": "Hello"})
            assert answer.status_code == 200 and answer.json()["answered_by"] == "model"
            healthy.wait_for(lambda k, d: k == "turn" and d["by"] == "model", "the answer's event", timeout=120)
            texts = [d["text"].split(" ", 1)[0] for _, k, d in healthy.events if k == "turn" and d["by"] == "person"]
            assert texts == [str(i) for i in range(sent)]
            eventually(lambda: floor.metric("appliance_event_listeners") == 1, "the stalled stream to be closed")
        finally:
            stalled.close()


class TestErasure:
    def test_erasure_reaches_open_listeners_and_leaves_one_event_without_content(self, floor: Box):
        session = floor.session()
        kiosk = floor.listen(f"/v1/sessions/{session}/events", KIOSK)
        watcher = floor.listen("/v1/events")
        floor.record(session, f"My code word is {MARKER}.", role="customer")
        kiosk.wait_for(lambda k, d: k == "turn", "the turn")
        with floor.http() as http:
            assert http.delete(f"/v1/sessions/{session}").status_code == 204
        kiosk.wait_for(lambda k, d: k == "erased", "the erasure on the session's stream")
        watcher.wait_for(lambda k, d: k == "erased" and d["session_id"] == session, "the erasure on the floor")
        assert kiosk.ended.wait(10), "the session's stream ends after its erasure"
        replay = floor.listen(f"/v1/sessions/{session}/events?after=0")
        replay.wait_for(lambda k, d: k == "erased", "the erasure in the log")
        assert [k for _, k, _ in replay.events] == ["erased"]
        assert MARKER not in json.dumps(replay.events)
        db = floor.daemon.database
        for path in (db, db.with_name(db.name + "-wal")):
            if path.exists():
                assert MARKER.encode() not in path.read_bytes()


class TestHeldByAPerson:
    def test_no_answer_while_a_person_holds_it_and_their_replies_reach_the_kiosk(self, floor: Box):
        session = floor.session()
        kiosk = floor.listen(f"/v1/sessions/{session}/events", KIOSK)
        with floor.http(KIOSK) as customer, floor.http() as operator, floor.http(OPERATOR2) as other:
            assert customer.post(f"/v1/sessions/{session}/person").json()["floor"]["state"] == "needs_person"
            kiosk.wait_for(lambda k, d: k == "floor" and d["state"] == "needs_person", "needs_person")
            assert operator.post(f"/v1/sessions/{session}/take").status_code == 200
            assert other.post(f"/v1/sessions/{session}/take").status_code == 409
            answers = floor.metric("appliance_answers_total")
            held = customer.post(f"/v1/sessions/{session}/messages", json={"text": "My card 4821 is stuck."})
            assert held.json()["answered_by"] == "person" and held.json()["agent"] is None
            operator.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": "I ordered card RC-5521."})
            stored = time.monotonic()
            arrived, _, reply = kiosk.wait_for(lambda k, d: k == "turn" and d["by"] == "person", "the operator's reply")
            assert arrived - stored < 1.0
            assert floor.metric("appliance_answers_total") == answers  # nothing generated meanwhile
            assert operator.post(f"/v1/sessions/{session}/hand-back").json()["floor"]["state"] == "bot"
            answer = customer.post(f"/v1/sessions/{session}/messages", json={"text": "When will it come?"})
            assert answer.json()["answered_by"] == "model"
            parts = answer.json()["manifest"]
            assert reply["index"] in parts["verbatim_turns"]  # the operator's turn is in the answer's context
        assert [d["state"] for _, k, d in kiosk.events if k == "floor"] == ["needs_person", "with_person", "bot"]


def test_events_survive_a_restart_of_the_daemon(tmp_path: Path):
    """A stopping daemon ends open streams with ``closing``; after its restart a listener resumes
    from the last event it saw and gets exactly what came after."""
    first = start(tmp_path)
    try:
        with httpx.Client(base_url=first.url, headers=first.headers, timeout=60) as http:
            session = http.post("/v1/sessions", json={}).json()["id"]
            http.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": "before"})
            last = http.get(f"/v1/sessions/{session}").json()["last_event_id"]
        open_stream = Listener(first.url + "/v1/events", OPERATOR)
    finally:
        assert first.stop() == 0  # an open event stream does not hold the daemon up
    try:
        closing = open_stream.wait_for(lambda k, d: k == "closing", "the stream's closing event")[2]
        assert closing["last_event_id"] == last and open_stream.ended.wait(10)
    finally:
        open_stream.close()
    second = start(tmp_path)
    try:
        with httpx.Client(base_url=second.url, headers=second.headers, timeout=60) as http:
            http.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": "after"})
        listener = Listener(second.url + "/v1/events", OPERATOR, last)
        try:
            listener.wait_for(lambda k, d: k == "turn" and d["text"] == "after", "the event after the restart")
            assert [d["text"] for _, k, d in listener.events if k == "turn"] == ["after"]
            assert min(listener.ids()) > last
        finally:
            listener.close()
    finally:
        assert second.stop() == 0


def test_the_bench_reports_what_listeners_cost_on_a_real_daemon(floor: Box):
    """``appliance bench events``, small: both sides answered in alternation, events timed from the
    store's own stamp (within a second, and never later than timed from the request that stored
    them), and the daemon's memory with a crowd of listeners held by the bench's child process."""
    token_file = floor.daemon.database.parent / "token"
    done = subprocess.run(
        [sys.executable, "-m", "appliance", "bench", "events", "--url", floor.daemon.url, "--token-file",
         str(token_file), "--rounds", "2", "--listeners", "3", "--many", "6", "--settle", "0.2",
         "--pid", str(floor.daemon.proc.pid)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["rounds"] == 2 and report["listeners"] == 3 and report["many"] == 6
    for side in ("ttft_s_without", "ttft_s_with", "daemon_ttft_s_without", "daemon_ttft_s_with"):
        assert 0 < report[side] < 60, side
    # the daemon's own TTFT is inside what the client waited for
    assert report["daemon_ttft_s_without"] <= report["ttft_s_without"]
    stored, requested = report["event_latency_ms_from_store"], report["event_latency_ms_from_request"]
    assert 0 <= stored["p50"] <= stored["max"] < 1000
    assert stored["p50"] <= requested["p50"] + 1  # the store's stamp comes after the request was sent
    assert report["rss_mb_with_many"] > 0 and report["rss_mb_extra"] is not None
    eventually(lambda: floor.metric("appliance_event_listeners") == 0, "the bench's listeners to be closed")
