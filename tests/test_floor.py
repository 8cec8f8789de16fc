"""The branch floor (issue 28): the conversation's state, asking for a person, the take-over held by
the daemon, and the event log they are written to.

On the real store in a temporary folder (states, audit rows and events written with what they
report), the pure transition rules, and the API in-process over fake models (the FakeResponder
counts every generation, so "no answer was generated" is checked on the model itself). The same
against a real daemon, with live event streams, is in test_events.py; both screens in
test_floor_tui.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from appliance.errors import Busy, FloorConflict, PersonHolds
from appliance.stage import asks_for_person
from appliance.store import Store
from appliance.store.floor import FloorChange
from appliance.turn.floor import transition
from appliance.types import FLOOR_STATES, Floor, TurnRecord

from . import test_api_inprocess
from .fakes import FakeResponder
from .support import eventually_async, metric
from .test_api_inprocess import Served, error_of

OPERATOR, OTHER, KIOSK, KIOSK2 = "tok-operator-1", "tok-operator-2", "tok-kiosk-1", "tok-kiosk-2"


serve = test_api_inprocess.serve  # the fixture: an app over fake models, in-process
TOKENS = {OTHER: "operator", KIOSK: "kiosk", KIOSK2: "kiosk"}


def as_(served: Served, token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# the rules --------------------------------------------------------------------------------------


class TestTransitions:
    def test_the_customer_asks_and_an_operator_takes_and_hands_back(self):
        asked = transition(Floor(), "ask", "kiosk-a", reason="button", now=10.0)
        assert asked == Floor("needs_person", "button", 10.0, "kiosk-a")
        assert transition(asked, "ask", "kiosk-a", reason="asked", now=11.0) is asked  # already waiting
        taken = transition(asked, "take", "op-1", now=12.0)
        assert taken == Floor("with_person", "taken", 12.0, "op-1")
        assert transition(taken, "take", "op-1", now=13.0) is taken
        assert transition(taken, "hand_back", "op-1", now=14.0).state == "bot"

    def test_a_second_operator_cannot_take_or_hand_back(self):
        taken = transition(Floor(), "take", "op-1", now=1.0)
        with pytest.raises(FloorConflict, match="another operator holds"):
            transition(taken, "take", "op-2", now=2.0)
        with pytest.raises(FloorConflict, match="only they can hand it back"):
            transition(taken, "hand_back", "op-2", now=2.0)

    def test_closed_is_final_and_bot_has_nothing_to_hand_back(self):
        closed = transition(Floor(), "close", "op-1", now=1.0)
        assert closed.state == "closed"
        for action in ("ask", "take", "hand_back"):
            with pytest.raises(FloorConflict, match="closed"):
                transition(closed, action, "op-1", now=2.0)  # type: ignore[arg-type]
        with pytest.raises(FloorConflict, match="nothing to hand back"):
            transition(Floor(), "hand_back", "op-1", now=1.0)


class TestPersonCues:
    @pytest.mark.parametrize(
        ("text", "language"),
        [
            ("Can I speak to someone, please?", "en"),
            ("I want a REAL person", "en"),
            ("Ich möchte einen Mitarbeiter sprechen.", "de"),
            ("Je voudrais parler à quelqu'un.", "fr"),
            ("Quiero hablar con una persona.", "es"),
            ("Kan ik met een medewerker praten?", "nl"),
        ],
    )
    def test_each_language_asks(self, text: str, language: str):
        assert asks_for_person(text) == language

    @pytest.mark.parametrize("text", ["My order A-12345 has not arrived.", "Someone stole my card", "personal loan"])
    def test_other_messages_do_not(self, text: str):
        assert asks_for_person(text) is None

    def test_configured_cues_replace_a_language(self):
        assert asks_for_person("bitte Filialleitung", {"de": ("filialleitung",)}) == "de"
        assert asks_for_person("a real person", {"de": ("filialleitung",)}) is None


# the store --------------------------------------------------------------------------------------


def change(to: Floor, role: str = "operator") -> FloorChange:
    return FloorChange(lambda current: to, role)


class TestEventLog:
    def test_each_write_logs_its_events_in_order(self, store: Store, record: TurnRecord):
        woken: list[int] = []
        store.after_events.append(lambda logged: woken.append(store.last_event_id()))
        s = store.create_session(policy="raw", title="t")
        store.append_exchange(s.id, "my card 4821", "I see.", record)
        store.append_turn(s.id, "agent", "Operator here.")
        store.change_floor(s.id, change(Floor("with_person", "taken", 5.0, "op")))
        events = store.events_after(0)
        assert [(e.kind, e.data.get("role"), e.data.get("by")) for e in events] == [
            ("session", None, None),
            ("turn", "customer", "customer"),
            ("turn", "agent", "model"),
            ("turn", "agent", "person"),
            ("floor", None, "op"),
        ]
        assert [e.id for e in events] == sorted({e.id for e in events})
        assert events[2].data["text"] == "I see." and events[2].data["stage"] == record.stage
        assert events[4].data == {"from": "bot", "state": "with_person", "reason": "taken", "since": 5.0, "by": "op"}
        assert woken == [events[0].id, events[2].id, events[3].id, events[4].id]  # once per commit, after it
        assert store.events_after(events[1].id, session_id=s.id) == events[2:]

    def test_a_failed_write_logs_nothing_and_wakes_nobody(self, store: Store):
        s = store.create_session(policy="raw")
        woken: list[int] = []
        store.after_events.append(lambda logged: woken.append(1))
        before = store.last_event_id()

        def refuse(current: Floor) -> Floor:
            raise FloorConflict("no")

        with pytest.raises(FloorConflict):
            store.append_turn(s.id, "agent", "held back", floor=FloorChange(refuse, "operator"))
        assert store.last_event_id() == before and woken == []
        assert store.turns(s.id) == ()  # the turn went with the refused change

    def test_the_state_is_stored_with_the_session_and_audited(self, store: Store):
        s = store.create_session(policy="raw")
        assert store.session(s.id).floor == Floor()
        store.change_floor(s.id, change(Floor("needs_person", "button", 3.0, "token:k"), "kiosk"))
        store.change_floor(s.id, change(Floor("needs_person", "button", 3.0, "token:k"), "kiosk"))  # no change
        assert store.session(s.id).floor == Floor("needs_person", "button", 3.0, "token:k")
        assert [(a["from_state"], a["to_state"], a["by_role"]) for a in store.floor_changes(s.id)] == [
            ("bot", "needs_person", "kiosk")
        ]
        assert store.floor_counts() == {"needs_person": 1}

    def test_erasure_leaves_one_event_without_content_and_ids_are_never_reused(self, store: Store, tmp_path: Path):
        keep = store.create_session(policy="raw")
        gone = store.create_session(policy="raw")
        store.append_turn(gone.id, "customer", "Zebra-Quartz-4417 is my code word")
        last = store.last_event_id()
        store.erase(gone.id)
        events = store.events_after(0, session_id=gone.id)
        assert [e.kind for e in events] == ["erased"] and events[0].id > last
        assert "Zebra" not in repr(events)
        assert store.floor_changes(gone.id) == []  # it never changed state: nothing to keep
        assert b"Zebra-Quartz" not in (tmp_path / "store.db").read_bytes()
        assert [e.kind for e in store.events_after(0, session_id=keep.id)] == ["session"]


@pytest.fixture
def record(pipeline_record: TurnRecord) -> TurnRecord:
    return pipeline_record


@pytest.fixture
def pipeline_record() -> TurnRecord:
    from appliance.types import CheckResult, Manifest, Timings

    return TurnRecord(
        stage="early",
        model="m",
        manifest=Manifest(policy="raw", budget=1, total_tokens=0, parts=()),
        prompt_tokens=0,
        completion_tokens=0,
        timings=Timings(),
        check=CheckResult(),
    )


# the API in-process -------------------------------------------------------------------------------


def post(served: Served, path: str, token: str = OPERATOR, **kwargs: object):
    return served.request("POST", path, headers=as_(served, token), **kwargs)


class TestAskingForAPerson:
    def test_a_cue_gets_the_waiting_sentence_and_no_generation(self, serve: Callable[..., Served]):
        served = serve()
        session = served.new_session()
        reply = post(served, f"/v1/sessions/{session}/messages", json={"text": "Can I speak to someone please?"})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["answered_by"] == "appliance"
        assert body["text"] == body["notice"] == "A member of staff will be with you shortly."
        assert body["floor"]["state"] == "needs_person" and body["floor"]["reason"] == "asked"
        assert served.responder.prompts == []
        assert served.texts(session) == ["Can I speak to someone please?", body["text"]]

    def test_the_sentence_is_in_the_cues_language_and_configurable(self, serve: Callable[..., Served]):
        served = serve('[floor]\nwaiting_message = { de = "Gleich kommt jemand." }\n')
        session = served.new_session()
        body = post(served, f"/v1/sessions/{session}/messages", json={"text": "Ich will einen Mitarbeiter!"}).json()
        assert body["text"] == "Gleich kommt jemand."
        french = served.new_session()
        body = post(served, f"/v1/sessions/{french}/messages", json={"text": "Je veux parler à quelqu'un"}).json()
        assert body["text"].startswith("Un membre du personnel")

    def test_the_button_asks_and_the_messages_after_it_are_held(self, serve: Callable[..., Served]):
        served = serve()
        session = served.new_session()
        asked = post(served, f"/v1/sessions/{session}/person")
        assert asked.status_code == 200, asked.text
        assert asked.json()["floor"]["state"] == "needs_person" and asked.json()["floor"]["reason"] == "button"
        assert asked.json()["notice"] == "A member of staff will be with you shortly."
        held = post(served, f"/v1/sessions/{session}/messages", json={"text": "Hello? Is anyone there?"}).json()
        assert held["answered_by"] == "person" and held["agent"] is None and held["text"] == ""
        assert held["notice"] and held["floor"]["state"] == "needs_person"
        assert served.responder.prompts == []
        assert served.texts(session) == ["Hello? Is anyone there?"]

    def test_an_answer_the_guard_could_not_repair_asks_for_a_person(self, serve: Callable[..., Served]):
        wrong = "Your refund of $918.00 was sent to account 55501234."
        served = serve('[guard]\npolicy = "regenerate"\n', FakeResponder([wrong, wrong]))
        session = served.new_session()
        body = post(served, f"/v1/sessions/{session}/messages", json={"text": "Where is my refund?"}).json()
        assert body["answered_by"] == "model" and body["check"]["action"] == "redact"  # the retry failed too
        assert body["check"]["original_findings"] and "$918.00" not in body["text"]
        assert body["floor"]["state"] == "needs_person" and body["floor"]["reason"] == "guard"
        assert body["notice"]

    def test_without_escalation_the_model_keeps_the_conversation(self, serve: Callable[..., Served]):
        wrong = "Your refund of $918.00 was sent to account 55501234."
        served = serve(
            '[guard]\npolicy = "regenerate"\n[floor]\nescalate_on_guard = false\n', FakeResponder([wrong, wrong])
        )
        session = served.new_session()
        body = post(served, f"/v1/sessions/{session}/messages", json={"text": "Where is my refund?"}).json()
        assert body["check"]["action"] == "redact" and body["floor"]["state"] == "bot"


class TestTakeOver:
    def test_with_a_person_nothing_is_generated_and_handing_back_shows_their_turns(
        self, serve: Callable[..., Served], tmp_path: Path
    ):
        served = serve(token=OPERATOR, tokens=TOKENS)
        session = served.new_session()
        taken = post(served, f"/v1/sessions/{session}/take")
        assert taken.status_code == 200 and taken.json()["floor"]["state"] == "with_person"
        held = post(served, f"/v1/sessions/{session}/messages", json={"text": "My card 4821 was swallowed."}).json()
        assert held["answered_by"] == "person" and held["notice"] == ""
        streamed = post(served, f"/v1/sessions/{session}/messages", json={"text": "Still there?", "stream": True}).text
        assert "event: token" not in streamed and '"answered_by": "person"' in streamed
        recorded = post(
            served, f"/v1/sessions/{session}/turns", json={"role": "agent", "text": "Card RC-5521 ordered."}
        )
        assert recorded.status_code == 201
        assert served.responder.prompts == []  # no generation while a person held it
        back = post(served, f"/v1/sessions/{session}/hand-back")
        assert back.json()["floor"]["state"] == "bot" and back.json()["previous"] == "with_person"
        answered = post(served, f"/v1/sessions/{session}/messages", json={"text": "When does it arrive?"}).json()
        assert answered["answered_by"] == "model"
        prompt = "\n".join(m.content for m in served.responder.prompts[-1])
        assert "Card RC-5521 ordered." in prompt  # the operator's turn is context like any agent turn
        ledger = served.request("GET", f"/v1/sessions/{session}", headers=as_(served, OPERATOR)).json()["ledger"]
        assert any(e["value"] == "RC-5521" for e in ledger)

    def test_a_second_operator_gets_409_and_the_audit_names_both_steps(
        self, serve: Callable[..., Served], tmp_path: Path
    ):
        served = serve(token=OPERATOR, tokens=TOKENS)
        session = served.new_session()
        assert post(served, f"/v1/sessions/{session}/take").status_code == 200
        error = error_of(post(served, f"/v1/sessions/{session}/take", OTHER), 409, "floor_conflict")
        assert "another operator" in error["message"]
        error_of(post(served, f"/v1/sessions/{session}/hand-back", OTHER), 409, "floor_conflict")
        assert post(served, f"/v1/sessions/{session}/close").json()["floor"]["state"] == "closed"
        error_of(post(served, f"/v1/sessions/{session}/messages", json={"text": "hi"}), 409, "floor_conflict")
        audit = served.store.floor_changes(session)
        assert [(a["to_state"], a["by_role"]) for a in audit] == [("with_person", "operator"), ("closed", "operator")]
        payload = served.request("GET", f"/v1/sessions/{session}", headers=as_(served, OPERATOR)).json()
        assert payload["session"]["floor"]["state"] == "closed" and payload["last_event_id"] > 0

    def test_the_openai_endpoint_refuses_a_held_session_and_stores_nothing(self, serve: Callable[..., Served]):
        served = serve()
        session = served.new_session()
        post(served, f"/v1/sessions/{session}/take")
        reply = post(
            served,
            "/v1/chat/completions",
            json={"session_id": session, "messages": [{"role": "user", "content": "hi"}]},
        )
        error_of(reply, 409, "floor_conflict")
        assert served.texts(session) == [] and served.responder.prompts == []

    def test_the_wait_and_the_states_are_in_the_metrics(self, serve: Callable[..., Served]):
        served = serve()
        waiting, taken = served.new_session(), served.new_session()
        post(served, f"/v1/sessions/{waiting}/person")
        post(served, f"/v1/sessions/{taken}/person")
        post(served, f"/v1/sessions/{taken}/take")
        post(served, f"/v1/sessions/{taken}/messages", json={"text": "hello"})
        text = served.request("GET", "/metrics").text
        sessions = {state: metric(text, "appliance_sessions", state=state) for state in FLOOR_STATES}
        assert sessions == {"bot": 0, "needs_person": 1, "with_person": 1, "closed": 0}
        assert metric(text, "appliance_person_wait_seconds_count") == 1
        assert metric(text, "appliance_messages_held_total") == 1
        assert metric(text, "appliance_event_listeners") == 0


class TestRoles:
    """Every new route, for each role: the customer's side asks, operators hold, strangers see nothing."""

    def test_each_role_on_each_route(self, serve: Callable[..., Served], tmp_path: Path):
        served = serve(token=OPERATOR, tokens=TOKENS)
        mine = served.request("POST", "/v1/sessions", headers=as_(served, KIOSK), json={}).json()["id"]
        for action in ("take", "hand-back", "close"):
            error_of(post(served, f"/v1/sessions/{mine}/{action}", KIOSK), 403, "forbidden")
        error_of(post(served, f"/v1/sessions/{mine}/person", KIOSK2), 404, "not_found")  # not its session
        error_of(served.request("GET", "/v1/events", headers=as_(served, KIOSK)), 403, "forbidden")
        error_of(served.request("GET", f"/v1/sessions/{mine}/events", headers=as_(served, KIOSK2)), 404, "not_found")
        error_of(served.request("GET", f"/v1/sessions/{mine}/events", headers=as_(served, "")), 401, "unauthorized")
        error_of(served.request("GET", "/v1/events", headers=as_(served, "wrong")), 401, "unauthorized")
        for action in ("person", "take", "hand-back", "close"):
            error_of(post(served, f"/v1/sessions/{mine}/{action}", ""), 401, "unauthorized")
        assert post(served, f"/v1/sessions/{mine}/person", KIOSK).status_code == 200
        assert post(served, f"/v1/sessions/{mine}/take", OPERATOR).status_code == 200
        assert served.store.session(mine).floor.state == "with_person"

    def test_an_unknown_session_is_404_and_a_bad_resume_point_names_the_field(self, serve: Callable[..., Served]):
        served = serve()
        for action in ("person", "take", "hand-back", "close"):
            error_of(post(served, f"/v1/sessions/nope/{action}"), 404, "not_found")
        error_of(served.request("GET", "/v1/sessions/nope/events"), 404, "not_found")
        error = error_of(
            served.request("GET", "/v1/events", headers={"Last-Event-ID": "twelve"}), 422, "invalid_request"
        )
        assert error["field"] == "Last-Event-ID"

    def test_a_resume_point_past_the_stores_integer_range_is_refused_before_the_stream(
        self, serve: Callable[..., Served]
    ):
        # Event ids are SQLite rowids (at most 2**63 - 1); a larger one once got a 200 and a dead stream.
        served = serve()
        mine = post(served, "/v1/sessions").json()["id"]

        def get(path: str, **kwargs: Any) -> httpx.Response:
            # bounded: a resume point let through would open an endless stream, which must fail here, not hang
            return served.run(lambda http: asyncio.wait_for(http.get(path, **kwargs), 10))

        for path in ("/v1/events", f"/v1/sessions/{mine}/events"):
            for bad in (str(2**63), str(2**64 + 5), "9" * 400, "-1", "1e3", "+5"):
                error = error_of(get(path, headers={"Last-Event-ID": bad}), 422, "invalid_request")
                assert error["field"] == "Last-Event-ID" and "9223372036854775807" in error["message"]
            for bad in (str(2**63), "9" * 400, "-1"):
                error_of(get(path, params={"after": bad}), 422, "invalid_request")


def test_a_held_pipeline_refuses_before_anything_is_generated(pipeline, fake_responder: FakeResponder):
    session = pipeline.sessions.new_session()
    pipeline.store.change_floor(session.id, change(Floor("with_person", "taken", 1.0, "op")))
    with pytest.raises(PersonHolds):
        pipeline.answer(session.id, "hello")
    assert fake_responder.prompts == [] and pipeline.store.turns(session.id) == ()


class TestHub:
    """The hub's bookkeeping without a connection: a listener that falls behind ends with a clear
    final event naming where to resume (the daemon tests cover real streams)."""

    def test_a_listener_behind_gets_its_queue_then_a_final_behind_event(self, store: Store):
        import asyncio

        from appliance.serve.events import EventHub

        session = store.create_session(policy="raw")

        async def scenario() -> list[str]:
            hub = EventHub(store, queue_size=8, max_listeners=2, ping_s=5)
            listener = await hub.open(None)
            for i in range(12):  # a burst larger than its queue, all stored before the hub reads again
                store.append_turn(session.id, "agent", f"reply {i}")
            frames = [frame async for frame in hub.stream(listener, None)]
            assert hub.listeners == set() and hub.dropped == 1
            await hub.open(None)
            await hub.open(None)
            with pytest.raises(Busy):
                await hub.open(None)
            return frames

        frames = asyncio.run(scenario())
        events = store.events_after(0, session_id=session.id)[1:]  # after the session's start
        assert len(frames) == 9 and frames[-1].startswith("event: behind\n")
        assert f'"last_event_id": {events[7].id}' in frames[-1]
        assert all(f.startswith(f"id: {e.id}\nevent: {e.kind}\n") for f, e in zip(frames, events[:8]))

    def test_events_stored_while_nobody_listened_are_not_new_to_the_next_listener(self, store: Store):
        import asyncio

        from appliance.serve.events import EventHub

        session = store.create_session(policy="raw")

        async def scenario() -> list[str]:
            hub = EventHub(store, queue_size=8, max_listeners=2, ping_s=5)
            first = await hub.open(None)
            hub.close(first)
            woken = hub.wakes
            for i in range(12):
                store.append_turn(session.id, "agent", f"unheard {i}")
            # the pump wakes with nobody to hand them to
            await eventually_async(lambda: hub.wakes > woken, "the event hub's pump woke", timeout=5)
            listener = await hub.open(None)
            store.append_turn(session.id, "agent", "heard")
            stream = hub.stream(listener, None)
            frame = await asyncio.wait_for(anext(stream), 5)
            await stream.aclose()
            return [frame]

        (frame,) = asyncio.run(scenario())
        assert '"text": "heard"' in frame
