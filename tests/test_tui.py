"""The terminal UI: driven with Textual's pilot against a real daemon (SmolLM2-135M), and snapshots
of its main screens rendered from canned data (FakeClient) so that they are deterministic."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Coroutine, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.text import Text
from textual import events
from textual.widgets import DataTable, Input, OptionList, Static, TextArea

from appliance.config import ROOT, TuiSettings
from appliance.terminal import one_line, visible
from appliance.tui.app import ApplianceTUI
from appliance.tui.client import (
    DaemonClient,
    DaemonError,
    DaemonUnreachable,
    Health,
    StreamEvent,
    health_from,
    parse_metrics,
)
from appliance.tui.kiosk import KIOSK_RESTART_STATUS, NEW_CONVERSATION_LABEL
from appliance.tui.render import (
    as_text,
    finding_lines,
    gauge_text,
    highlight_findings,
    ledger_rows,
    manifest_notes,
    summarizer_state,
    summary_head,
)
from appliance.tui.screens import HelpScreen, RestoreScreen, SessionsScreen
from appliance.tui.widgets import ConversationView, TurnView

from .support import (
    MODELS_DIR,
    TEST_MODEL,
    eventually_async,
    free_port,
    stop_process,
    wait_until_ready,
    write_config,
)

KIOSK_SIZE = (160, 45)
SMALL_SIZE = (80, 24)


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Textual's pilot is async; plain pytest runs it here (no asyncio plugin needed)."""
    return asyncio.run(coro)


# canned data: the API's shapes, as GET /v1/sessions/{id} returns them -----------------------------

T0 = 1_800_000_000.0


def manifest(**extra: Any) -> dict[str, Any]:
    return {
        "policy": "rolling",
        "budget": 1536,
        "total_tokens": 412,
        "parts": [
            {"name": "system", "tokens": 33, "turns": [], "note": ""},
            {"name": "summary", "tokens": 96, "turns": [0, 1, 2, 3], "note": ""},
            {"name": "ledger", "tokens": 41, "turns": [0, 2], "note": ""},
            {"name": "recent", "tokens": 127, "turns": [4, 5], "note": ""},
            {"name": "question", "tokens": 40, "turns": [], "note": ""},
            {"name": "instruction", "tokens": 35, "turns": [], "note": ""},
            {"name": "template", "tokens": 40, "turns": [], "note": "chat template and section markers"},
        ],
        "verbatim_turns": [4, 5],
        "summarized_turns": [0, 1, 2, 3],
        "recalled_turns": [1],
        "cut_turns": [],
        "cuts": ["dropped 1 recalled turn(s) to fit 1536 tokens"],
        "fallback": False,
        **extra,
    }


def record(index: int, stage: str, findings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "index": index,
        "stage": stage,
        "model": "smollm2-135m-instruct",
        "manifest": manifest(),
        "prompt_tokens": 412,
        "completion_tokens": 31,
        "timings": {
            "context_ms": 4.0,
            "ttft_s": 0.4,
            "generate_s": 1.9,
            "check_ms": 1.0,
            "store_ms": 2.0,
            "total_s": 2.0,
        },
        "check": {
            "findings": findings or [],
            "action": "flag" if findings else "none",
            "checked": 2,
            "ok": not findings,
        },
    }


def turn(index: int, role: str, text: str) -> dict[str, Any]:
    return {"session_id": "cafe01", "index": index, "role": role, "text": text, "created_at": T0 + index}


WRONG_ORDER = "Your order A-12346 ships on 3 May."


def canned_session() -> dict[str, Any]:
    flagged = {
        "entity": {"kind": "order_id", "text": "A-12346", "start": 11, "end": 18, "norm": "A12346"},
        "status": "contradiction",
        "expected": "A-12345",
    }
    return {
        "session": {
            "id": "cafe01",
            "created_at": T0,
            "title": "counter 2",
            "policy": "rolling",
            "summary_paused": False,
        },
        "turns": [
            turn(0, "customer", "Hello, my order A-12345 has not arrived."),
            turn(1, "agent", "Sorry to hear that. Let me check order A-12345."),
            turn(2, "customer", "I paid 49.90 EUR on 2 May."),
            turn(3, "agent", "Thank you, I see the payment of 49.90 EUR."),
            turn(4, "customer", "When will it ship?"),
            turn(5, "agent", WRONG_ORDER),
            turn(6, "customer", "Can a person help me?"),
            turn(7, "agent", "Of course, this is Maria from the counter. I will call the courier now."),
        ],
        "summary": {
            "session_id": "cafe01",
            "version": 2,
            "author": "model",
            "status": "accepted",
            "reason": "",
            "covers_to": 3,
            "created_at": T0 + 3.5,
            "text": "Customer's order A-12345 has not arrived; paid 49.90 EUR on 2 May.",
        },
        "summaries": [
            {
                "session_id": "cafe01",
                "version": 1,
                "author": "model",
                "status": "accepted",
                "reason": "",
                "covers_to": 1,
                "created_at": T0 + 1.5,
                "text": "Customer's order A-12345 has not arrived.",
            },
            {
                "session_id": "cafe01",
                "version": 2,
                "author": "model",
                "status": "accepted",
                "reason": "",
                "covers_to": 3,
                "created_at": T0 + 3.5,
                "text": "Customer's order A-12345 has not arrived; paid 49.90 EUR on 2 May.",
            },
        ],
        "ledger": [
            {"kind": "order_id", "value": "A-12345", "turn": 0, "speaker": "customer", "slot": "", "norm": "A12345"},
            {"kind": "amount", "value": "49.90 EUR", "turn": 2, "speaker": "customer", "slot": "", "norm": "49.90 EUR"},
            {"kind": "date", "value": "2 May", "turn": 2, "speaker": "customer", "slot": "", "norm": "05-02"},
        ],
        "records": [record(1, "early"), record(3, "early"), record(5, "mid", [flagged])],
    }


class FakeClient(DaemonClient):
    """Canned answers in the daemon's shapes; records what the app asked for."""

    def __init__(self, payload: dict[str, Any] | None = None, *, reachable: bool = True) -> None:
        super().__init__("http://fake.invalid")
        self.payload = payload or canned_session()
        self.reachable = reachable
        self.calls: list[tuple[str, Any]] = []
        self.drafts: list[tuple[str, str]] = []

    def _check(self) -> None:
        if not self.reachable:
            raise DaemonUnreachable("http://fake.invalid: connection refused")

    async def health(self) -> Health:
        self._check()
        return Health(
            ready=True,
            model="smollm2-135m-instruct",
            checks={"model": True, "database": True, "worker": True},
            queue=0,
            summarizer={"runs": 2.0, "failures": 0.0, "alive": 1.0},
        )

    async def new_session(self, title: str = "") -> dict[str, Any]:
        self._check()
        self.calls.append(("new_session", title))
        return self.payload["session"]

    async def session(self, session_id: str) -> dict[str, Any]:
        self._check()
        return copy.deepcopy(self.payload)

    async def sessions(self, search: str = "", limit: int = 50) -> list[dict[str, Any]]:
        self._check()
        return [{**self.payload["session"], "turns": 8, "last_at": T0 + 7}]

    async def edit_summary(self, session_id: str, text: str) -> dict[str, Any]:
        self.calls.append(("edit_summary", text))
        version = {
            **self.payload["summary"],
            "version": 3,
            "author": "operator",
            "text": text,
            "covers_to": 7,
            "created_at": T0 + 8,
        }
        self.payload["summaries"].append(version)
        self.payload["summary"] = version
        return version

    async def restore_summary(self, session_id: str, version: int) -> dict[str, Any]:
        self.calls.append(("restore_summary", version))
        old = next(v for v in self.payload["summaries"] if v["version"] == version)
        new = {**old, "version": len(self.payload["summaries"]) + 1, "author": "operator", "created_at": T0 + 9}
        self.payload["summaries"].append(new)
        self.payload["summary"] = new
        return new

    async def set_paused(self, session_id: str, paused: bool) -> dict[str, Any]:
        self.calls.append(("set_paused", paused))
        self.payload["session"]["summary_paused"] = paused
        return self.payload["session"]

    async def record_turn(self, session_id: str, role: str, text: str) -> dict[str, Any]:
        self.calls.append(("record_turn", (role, text)))
        return turn(8, role, text)

    async def take_over(self, session_id: str) -> dict[str, Any]:
        self.calls.append(("take_over", session_id))
        self.payload["session"]["floor"] = {"state": "with_person", "reason": "taken", "since": T0 + 8, "by": "op"}
        return {"session_id": session_id, "floor": self.payload["session"]["floor"]}

    async def hand_back(self, session_id: str) -> dict[str, Any]:
        self.calls.append(("hand_back", session_id))
        self.payload["session"]["floor"] = {"state": "bot", "reason": "handed_back", "since": T0 + 9, "by": "op"}
        return {"session_id": session_id, "floor": self.payload["session"]["floor"]}

    async def ask_for_person(self, session_id: str) -> dict[str, Any]:
        self.calls.append(("ask_for_person", session_id))
        floor = {"state": "needs_person", "reason": "button", "since": T0 + 8, "by": ""}
        return {"session_id": session_id, "floor": floor, "notice": "A member of staff will be with you shortly."}

    async def events(self, path: str, after: int | None = None) -> AsyncIterator[StreamEvent]:
        """No live events: canned screens stay as drawn (test_floor_tui.py follows a real daemon)."""
        self.calls.append(("events", path))
        await asyncio.Event().wait()
        yield StreamEvent("never", {})

    async def draft(self, session_id: str, text: str) -> dict[str, Any]:
        self._check()
        self.drafts.append((session_id, text))  # apart from ``calls``: a hint, sent whenever the typist pauses
        return {"warming": True}

    async def stream_message(self, session_id: str, text: str) -> AsyncIterator[StreamEvent]:
        self._check()
        self.calls.append(("message", text))
        yield StreamEvent("accepted", {})
        for piece in ("Certainly", ", one", " moment."):
            yield StreamEvent("token", {"text": piece})
        yield StreamEvent("done", {"text": "Certainly, one moment."})

    async def aclose(self) -> None:
        pass


def canned_app(*, kiosk: bool = False, session: bool = True, **settings: Any) -> ApplianceTUI:
    return ApplianceTUI(FakeClient(), TuiSettings(**settings), kiosk=kiosk, session_id="cafe01" if session else None)


def sending(app: ApplianceTUI) -> bool:
    return any(w.group == "send" and not w.is_finished for w in app.workers)


async def settle(pilot: Any) -> None:
    """Let the first poll and load land, and stop the cursor blinking so snapshots are stable."""
    app = pilot.app
    app.query_one("#message", Input).cursor_blink = False
    await eventually_async(
        lambda: app.health is not None and (app.session_id is None or app.payload is not None),
        "the first poll and load",
        pause=pilot.pause,
    )
    await pilot.pause()


# pure rendering --------------------------------------------------------------------------------


class TestRendering:
    def test_flagged_entity_is_highlighted_and_the_ledger_value_shown(self):
        rec = canned_session()["records"][2]
        text = highlight_findings(WRONG_ORDER, rec["check"])
        assert any(WRONG_ORDER[s.start : s.end] == "A-12346" and "red" in str(s.style) for s in text.spans)
        assert finding_lines(rec["check"])[0] == "⚠ 'A-12346' contradicts the ledger: 'A-12345'"

    def test_highlight_survives_offsets_of_another_draft(self):
        check = {"findings": [{"entity": {"text": "A-12346", "start": 0, "end": 3}, "status": "unsupported"}]}
        text = highlight_findings(WRONG_ORDER, check)
        assert [WRONG_ORDER[s.start : s.end] for s in text.spans] == ["A-12346"]

    def test_gauge_lists_every_part_of_the_manifest(self):
        shown = gauge_text(manifest()).plain
        for part in manifest()["parts"]:
            assert part["name"] in shown
        assert "412 of 1536 tokens" in shown
        assert "nothing has been sent" in gauge_text(None).plain

    def test_notes_say_what_was_cut_and_recalled(self):
        notes = manifest_notes(manifest(cut_turns=[0, 1, 2, 5], fallback=True))
        assert "turns left out: 0-2, 5" in notes
        assert "recalled turns: 1" in notes
        assert any(n.startswith("fallback") for n in notes)

    def test_summary_written_after_the_last_answer_is_marked_unseen(self):
        payload = canned_session()
        assert summary_head(payload)[1] == "In the last prompt (96 tokens)."
        payload["summary"] = {**payload["summary"], "version": 3, "author": "operator", "created_at": T0 + 99}
        head, seen = summary_head(payload)
        assert head.startswith("Summary v3 · operator")
        assert "has not seen" in seen

    def test_ledger_rows_say_what_the_last_prompt_carried(self):
        payload = canned_session()
        payload["ledger"].append({"kind": "name", "value": "Maria", "turn": 7, "speaker": "agent"})
        payload["records"][-1]["manifest"]["parts"][2]["turns"] = [2]  # the ledger part carried turn 2's facts only
        sent = [row[3] for row in ledger_rows(payload)]
        assert sent == ["cut", "yes", "yes", "later"]

    def test_ledger_rows_count_both_ledger_parts_of_rolling(self):
        payload = canned_session()
        parts = payload["records"][-1]["manifest"]["parts"]
        parts[2]["turns"] = [2]
        parts.append({"name": "ledger-latest", "tokens": 9, "turns": [0]})
        assert [row[3] for row in ledger_rows(payload)] == ["yes", "yes", "yes"]

    def test_summarizer_state(self):
        payload = canned_session()
        live = Health(ready=True, checks={"worker": True}, summarizer={"alive": 1.0})
        assert summarizer_state(live, payload) == "idle"
        assert summarizer_state(Health(ready=True), payload) == "off"
        payload["summaries"].append(
            {**payload["summary"], "version": 3, "status": "rejected", "reason": "invented A-9"}
        )
        assert summarizer_state(live, payload) == "failed: invented A-9"
        payload["session"]["summary_paused"] = True
        assert summarizer_state(live, payload) == "paused"

    def test_metrics_parsing(self):
        text = (
            '# HELP x\nappliance_queue_waiting{model="m"} 3\nappliance_answering 1\nappliance_summarizer_runs_total 4\n'
        )
        health = health_from({"ready": True, "model": "m", "checks": {}}, parse_metrics(text))
        assert (health.queue, health.answering, health.summarizer) == (3, True, {"runs": 4.0})


# the app on canned data --------------------------------------------------------------------------


class TestAppWithFakeClient:
    def test_operator_turns_and_stages_are_marked(self):
        async def go() -> None:
            app = canned_app()
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                views = list(app.query(TurnView))
                assert len(views) == 8
                assert "-operator" in views[7].classes
                assert "Operator (human)" in str(views[7].render())
                assert "stage mid · flagged" in str(views[5].render())
                ledger = app.query_one("#ledger", DataTable)
                assert ledger.row_count == 3

        run(go())

    def test_streamed_answer_clears_input_only_once_accepted(self):
        async def go() -> None:
            app = canned_app(session=False)
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                client = app.client
                assert isinstance(client, FakeClient)
                client.reachable = False
                await pilot.click("#message")
                await pilot.press(*"where is my parcel", "enter")
                await eventually_async(lambda: not sending(app), "the send to end", pause=pilot.pause)
                assert app.query_one("#message", Input).value == "where is my parcel"  # kept: daemon away
                client.reachable = True
                await pilot.press("enter")
                await eventually_async(
                    lambda: ("message", "where is my parcel") in client.calls and app.payload is not None,
                    "the message sent and the session loaded",
                    pause=pilot.pause,
                )
                assert app.query_one("#message", Input).value == ""
                assert app.session_id == "cafe01"

        run(go())

    def test_banner_while_the_daemon_is_away_then_reconnects(self):
        async def go() -> None:
            client = FakeClient(reachable=False)
            app = ApplianceTUI(client, TuiSettings(poll_s=0.1), session_id="cafe01")
            async with app.run_test(size=SMALL_SIZE) as pilot:
                banner = app.query_one("#banner", Static)
                await eventually_async(lambda: banner.display, "the banner", pause=pilot.pause)
                assert "Reconnecting" in str(banner.render())
                await pilot.press(*"still here")
                client.reachable = True  # the daemon is back (restarted)
                await eventually_async(
                    lambda: not banner.display and app.payload is not None,
                    "the banner to go and the session to load",
                    pause=pilot.pause,
                )
                assert app.query_one("#message", Input).value == "still here"
                assert len(app.query(TurnView)) == 8

        run(go())

    def test_summary_panel_follows_new_versions_from_the_daemon(self):
        async def go() -> None:
            client = FakeClient()
            app = ApplianceTUI(client, TuiSettings(poll_s=0.1), session_id="cafe01")
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                head = app.query_one("#summary-head", Static)
                assert str(head.render()).startswith("Summary v2 · model")
                # The summarizer stores a version: the next poll shows it, marked as not yet seen by the model.
                v3 = {
                    **client.payload["summary"],
                    "version": 3,
                    "covers_to": 7,
                    "created_at": T0 + 20,
                    "text": "Order A-12345 lost; Maria calls the courier.",
                }
                client.payload["summaries"].append(v3)
                client.payload["summary"] = v3
                await eventually_async(
                    lambda: str(head.render()).startswith("Summary v3 · model"),
                    "summary v3 in the panel",
                    pause=pilot.pause,
                )
                assert "has not seen" in str(app.query_one("#summary-seen", Static).render())

        run(go())

    def test_pause_and_restore(self):
        async def go() -> None:
            client = FakeClient()
            app = ApplianceTUI(client, TuiSettings(), session_id="cafe01")
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                await pilot.press("f5")
                await eventually_async(
                    lambda: ("set_paused", True) in client.calls, "the pause request", pause=pilot.pause
                )
                await eventually_async(
                    lambda: "summarizer paused" in str(app.query_one("#status", Static).render()),
                    "the paused summarizer in the status bar",
                    pause=pilot.pause,
                )
                await pilot.press("f4")
                await pilot.pause()
                await pilot.press("down", "enter")  # the list is newest first: v1 is second
                await eventually_async(
                    lambda: ("restore_summary", 1) in client.calls, "the restore of v1", pause=pilot.pause
                )
                head = app.query_one("#summary-head", Static)
                await eventually_async(
                    lambda: str(head.render()).startswith("Summary v3 · operator"),
                    "the restored version in the panel",
                    pause=pilot.pause,
                )

        run(go())

    def test_find_and_resume_a_session(self):
        async def go() -> None:
            app = canned_app(session=False)
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                await pilot.press("f2")
                found = app.screen.query_one("#found", OptionList)
                await eventually_async(lambda: found.option_count == 1, "one session found", pause=pilot.pause)
                await pilot.press(*"parcel", "enter", "enter")
                await eventually_async(
                    lambda: app.session_id == "cafe01" and app.payload is not None,
                    "the chosen session to load",
                    pause=pilot.pause,
                )
                assert len(app.query(TurnView)) == 8

        run(go())

    def test_take_over_records_an_agent_turn(self):
        async def go() -> None:
            app = canned_app()
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                await pilot.press("f6", *"I am on it", "enter")
                client = app.client
                assert isinstance(client, FakeClient)
                await eventually_async(
                    lambda: ("record_turn", ("agent", "I am on it")) in client.calls,
                    "the agent's turn recorded",
                    pause=pilot.pause,
                )

        run(go())

    def test_help_lists_every_binding(self):
        async def go() -> None:
            app = canned_app()
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                await pilot.press("f1")
                await pilot.pause()
                assert isinstance(app.screen, HelpScreen)
                shown = " ".join(what for _, what in app.screen.rows)
                for binding in ApplianceTUI.BINDINGS:
                    assert binding.description in shown  # type: ignore[union-attr]
                assert "Save as new version" in shown

        run(go())

    def test_kiosk_ignores_quit_keys_and_resets_when_idle(self):
        now = [0.0]

        async def go() -> None:
            app = ApplianceTUI(
                FakeClient(), TuiSettings(kiosk_idle_reset_s=60), kiosk=True, session_id="cafe01", clock=lambda: now[0]
            )
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                await pilot.press("ctrl+q", "ctrl+c", "f3", "ctrl+n")
                await pilot.pause()
                assert app.is_running and app.session_id == "cafe01"
                assert not app.query("#context")
                now[0] = 61.0
                app.reset_if_due()
                await pilot.pause()
                assert app.session_id is None and not app.query(TurnView)
                await pilot.press("f12")
                await pilot.pause()
            assert app.return_value == KIOSK_RESTART_STATUS == 75  # the kiosk unit restarts on it

        run(go())


# hostile text: shown as written, never obeyed (issue 12, item 4) ---------------------------------

# Anything a terminal could obey; an independent oracle, not the module under test.
TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
CLICK = "[@click=app.quit]x"
ESCAPES = (
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"  # OSC 8: a hidden hyperlink
    "\x1b]52;c;ZXZpbA==\x07"  # OSC 52: write the clipboard
    "\x9b31m\x90q\x9c"  # C1 CSI, DCS and ST
    "\u202eevil\u202c\u2066iso\u2069"  # bidi override and isolate
    "\rover\u2028ls\u2029ps\x85nel\x00nul\x7f\x08\x07\ud800"  # CR, separators, NUL, DEL, BS, BEL, a lone surrogate
)
HOSTILE = f"[/] {CLICK} [bold red]not red[/bold red] {ESCAPES} [link=http://evil.example]y[/link]"


def screen_text(app: ApplianceTUI) -> str:
    """The text the terminal would be sent for the whole screen, dialogs and toasts included.

    Textual's compositor is private, but it is what the driver writes out; a headless test has no
    terminal to read back.
    """
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def assert_safe(app: ApplianceTUI) -> str:
    shown = screen_text(app)
    assert not TERMINAL_CONTROL.findall(shown), TERMINAL_CONTROL.findall(shown)
    assert app.is_running
    return shown


def hostile_session() -> dict[str, Any]:
    payload = canned_session()
    payload["session"]["title"] = f"[bold red]T[/] {CLICK}"
    payload["turns"][0]["text"] = HOSTILE
    payload["turns"][5]["text"] = f"{CLICK} answer {ESCAPES}"
    payload["turns"][7]["text"] = "[/]"
    payload["summary"]["text"] = f"{CLICK} {ESCAPES}"
    payload["summaries"][0]["text"] = HOSTILE
    payload["summaries"].append({**payload["summary"], "version": 3, "status": "rejected", "reason": f"[/] {ESCAPES}"})
    payload["ledger"][0]["value"] = "[/]"
    payload["ledger"][1]["value"] = CLICK
    payload["ledger"][2]["value"] = ESCAPES
    finding = payload["records"][2]["check"]["findings"][0]
    finding["entity"]["text"] = "\x1b[2J"
    finding["expected"] = "[bold red]"
    payload["records"][2]["manifest"]["cuts"] = ["[/]", ESCAPES]
    return payload


class HostileClient(FakeClient):
    """The canned session with hostile text in every field, and errors that quote it."""

    def __init__(self) -> None:
        super().__init__(hostile_session())
        self.answer = f"{CLICK} {ESCAPES}"

    async def set_paused(self, session_id: str, paused: bool) -> dict[str, Any]:
        raise DaemonError(f"no session '[/]' {CLICK} {ESCAPES}", status=404, kind="not_found")

    async def stream_message(self, session_id: str, text: str) -> AsyncIterator[StreamEvent]:
        self.calls.append(("message", text))
        yield StreamEvent("accepted", {})
        for piece in (self.answer[:9], self.answer[9:20], self.answer[20:]):  # escapes cut across tokens
            yield StreamEvent("token", {"text": piece})
            await asyncio.sleep(0.05)  # as a daemon would: the app draws each piece
        yield StreamEvent("done", {"text": self.answer, "stage": "mid"})


async def click_every(pilot: Any, literal: str) -> int:
    """Click the last character of each place ``literal`` is shown: as markup it would be a link."""
    clicks = 0
    for y, line in enumerate(screen_text(pilot.app).splitlines()):
        for match in re.finditer(re.escape(literal), line):
            await pilot.click(offset=(match.end() - 1, y))
            clicks += 1
    return clicks


class TestDraftAhead:
    """What the customer types goes to the daemon once they pause (tui.draft_pause_s), as a draft."""

    def test_a_pause_sends_the_text_typed_so_far_and_only_the_newest(self):
        async def go() -> None:
            app = canned_app(kiosk=True, draft_pause_s=0.2)
            client: FakeClient = app.client  # type: ignore[assignment]
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                await pilot.click("#message")
                await pilot.press(*"What does it cost")  # no pause between keys: one draft at the end
                await eventually_async(lambda: client.drafts, "a draft", pause=pilot.pause)
                assert client.drafts == [("cafe01", "What does it cost")]
                await pilot.press(*" abroad?")
                await eventually_async(lambda: len(client.drafts) == 2, "the second draft", pause=pilot.pause)
                assert client.drafts[-1] == ("cafe01", "What does it cost abroad?")
                await pilot.press("enter")
                await eventually_async(lambda: ("message", "What does it cost abroad?") in client.calls, "sent")
                await pilot.pause(0.4)
                assert len(client.drafts) == 2  # the emptied box sends nothing

        run(go())

    def test_nothing_is_sent_for_a_few_letters_in_a_take_over_or_when_off(self):
        async def go(pause_s: float, take_over: bool, text: str) -> list[tuple[str, str]]:
            app = canned_app(draft_pause_s=pause_s)
            client: FakeClient = app.client  # type: ignore[assignment]
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                if take_over:
                    await pilot.press("f6")
                    await eventually_async(lambda: app.takeover, "the take-over", pause=pilot.pause)
                await pilot.click("#message")
                await pilot.press(*text)
                await pilot.pause(0.5)
            return client.drafts

        assert run(go(0.1, False, "Where is my parcel?")) == [("cafe01", "Where is my parcel?")]  # the control
        assert run(go(0.1, False, "Hi there")) == []
        assert run(go(0.1, True, "Your parcel is on its way.")) == []
        assert run(go(0.0, False, "Where is my parcel?")) == []


class TestHostileText:
    def test_sanitizer_keeps_length_and_line_breaks(self):
        for text in (HOSTILE, ESCAPES, "plain words\nand lines\tand tabs", "\r\n", "\r"):
            shown = visible(text)
            assert len(shown) == len(text) and not TERMINAL_CONTROL.findall(shown)
        assert visible("a\x1b[2Jb\x7f") == "a␛[2Jb␡"
        assert visible("a\r\nb\rc\u2028d\x85e") == "a \nb␍c\nd\ne"
        assert visible("\u202eab\u202c\ud800\x9b") == "\ufffdab\ufffd\ufffd\ufffd"
        assert visible("Grüße, 你好, مرحبا 👋🏽") == "Grüße, 你好, مرحبا 👋🏽"  # ordinary text is untouched
        line = one_line(HOSTILE)
        assert "\n" not in line and "\r" not in line and not TERMINAL_CONTROL.findall(line)

    def test_markup_is_text_in_rendering(self):
        text = as_text("[bold red]x[/] [@click=app.quit]y")
        assert text.plain == "[bold red]x[/] [@click=app.quit]y" and not text.spans

    def test_operator_console_shows_every_field_literally(self):
        async def go() -> None:
            client = HostileClient()
            app = ApplianceTUI(client, TuiSettings(), session_id="cafe01")
            async with app.run_test(size=KIOSK_SIZE, notifications=True) as pilot:  # toasts are drawn
                await settle(pilot)
                views = list(app.query(TurnView))
                assert str(views[0].render()).endswith(visible(HOSTILE))
                assert str(views[7].render()).endswith("[/]")
                assert "⚠ '\\x1b[2J' contradicts the ledger: '[bold red]'" in str(views[5].render())
                assert str(app.query_one("#summary-text", Static).render()) == visible(f"{CLICK} {ESCAPES}")
                assert "cut: [/]" in str(app.query_one("#notes", Static).render())
                ledger = app.query_one("#ledger", DataTable)
                assert [ledger.get_row_at(i)[1].plain for i in range(3)] == ["[/]", CLICK, visible(ESCAPES)]
                shown = assert_safe(app)
                assert CLICK in shown and "[bold red]" in shown and "␛[2J" in shown
                assert "failed: [/]" in shown  # the rejected version's reason, in the status bar
                assert await click_every(pilot, CLICK) >= 2
                await pilot.pause()
                assert app.is_running

                # The daemon's error quotes hostile text: a notification shows it as written.
                await pilot.press("f5")
                await eventually_async(
                    lambda: "no session '[/]'" in screen_text(app), "the error on screen", pause=pilot.pause, every=0.05
                )
                assert f"no session '[/]' {CLICK}" in assert_safe(app)
                await click_every(pilot, CLICK)
                app.clear_notifications()

                # Session search: the title is an option.
                await pilot.press("f2")
                await eventually_async(
                    lambda: isinstance(app.screen, SessionsScreen), "the sessions screen", pause=pilot.pause
                )
                found = app.screen.query_one("#found", OptionList)
                await eventually_async(lambda: found.option_count == 1, "one session found", pause=pilot.pause)
                prompt = found.get_option_at_index(0).prompt
                assert isinstance(prompt, Text) and prompt.plain.endswith(f"[bold red]T[/] {CLICK}")
                assert "[bold red]T[/]" in assert_safe(app)
                await pilot.press("escape")
                await pilot.pause()

                # Restore: each version's text and reason is an option.
                await pilot.press("f4")
                await eventually_async(
                    lambda: isinstance(app.screen, RestoreScreen), "the restore screen", pause=pilot.pause
                )
                versions = app.screen.query_one("#versions", OptionList)
                prompts = [str(versions.get_option_at_index(i).prompt) for i in range(versions.option_count)]
                assert any("rejected ([/] " in p for p in prompts) and any("'[/] [@click" in p for p in prompts)
                assert_safe(app)
                await pilot.press("escape")
                await pilot.pause()

                # The summary editor starts from the text with its controls made visible.
                await pilot.press("f3")
                await pilot.pause()
                editor = app.screen.query_one(TextArea)
                assert editor.text == visible(f"{CLICK} {ESCAPES}")
                assert_safe(app)
                await pilot.press("escape")
                await pilot.pause()
                assert app.is_running

        run(go())

    def test_a_paste_arrives_with_its_controls_visible(self):
        async def go() -> None:
            app = canned_app()
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                app.post_message(events.Paste(f"one {ESCAPES}"))  # as the terminal's bracketed paste
                await pilot.pause()
                box = app.query_one("#message", Input)
                assert box.value.startswith("one ␛[2J␛[H") and not TERMINAL_CONTROL.findall(box.value)
                assert_safe(app)
                box.value = ""
                await pilot.press("f3")
                await pilot.pause()
                app.post_message(events.Paste(f"two\n{ESCAPES}"))
                await pilot.pause()
                editor = app.screen.query_one(TextArea)
                assert editor.text.startswith(f"two\n{visible(ESCAPES)}")
                assert_safe(app)

        run(go())

    def test_a_hostile_streamed_answer_and_banner(self):
        async def go() -> None:
            client = HostileClient()
            app = ApplianceTUI(client, TuiSettings(poll_s=0.1), kiosk=True)
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                progress: list[str] = []
                original = ConversationView.progress

                def spy(self: ConversationView, text: str) -> None:
                    original(self, text)
                    if self.pending is not None:
                        progress.append(str(self.pending.render()))  # what the next frame draws

                ConversationView.progress = spy  # type: ignore[method-assign]
                try:
                    await pilot.press(*"[/] hello", "enter")
                    await eventually_async(
                        lambda: ("message", "[/] hello") in client.calls and not sending(app),
                        "the message sent and answered",
                        pause=pilot.pause,
                    )
                finally:
                    ConversationView.progress = original  # type: ignore[method-assign]
                assert progress
                for shown in progress:  # every state of the streamed answer, half escapes included
                    assert not TERMINAL_CONTROL.findall(shown)
                assert progress[-1].endswith(visible(client.answer))
                await pilot.pause()
                shown = assert_safe(app)  # the stored session, loaded after the answer
                assert CLICK in shown and "␛]52;c;ZXZpbA==␇" in shown

                # A daemon that answers with an error quoting hostile text: the banner shows it literally.
                async def broken() -> Health:
                    raise DaemonError(f"[/] {ESCAPES}")

                client.health = broken  # type: ignore[method-assign]
                app.mode = replace(app.mode, away_banner=None)  # the operator's wording, the daemon's words
                banner = app.query_one("#banner", Static)
                await eventually_async(lambda: banner.display, "the banner", pause=pilot.pause)
                assert "Daemon error: [/]" in str(banner.render())
                assert_safe(app)

        run(go())


# server-sent events: one event per blank-line-ended block, whatever the text holds ---------------


class TestServerSentEvents:
    """The daemon's event streams as the TUI reads them (httpx-sse), cut into chunks anywhere."""

    TEXT = "a\u2028b\u2029c\x85d\x0be\x1cf\rg"  # every separator str.splitlines knows, raw in the JSON

    def stream(self, eol: str) -> str:
        token = json.dumps({"text": self.TEXT}, ensure_ascii=False)
        done = json.dumps({"text": "done"}, ensure_ascii=False)
        # An id is kept after its event, so the blank line after the ping ends an event without data.
        return (
            f"id: 7{eol}event: token{eol}data: {token}{eol}{eol}: ping{eol}{eol}event: done{eol}data: {done}{eol}{eol}"
        )

    def answer(self, body: bytes, size: int, content_type: str = "text/event-stream") -> list[StreamEvent]:
        class Trickle(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                for i in range(0, len(body), size):  # cuts UTF-8 sequences and CRLFs in half too
                    yield body[i : i + size]

        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, stream=Trickle(), headers={"content-type": content_type})

        async def go() -> list[StreamEvent]:
            client = DaemonClient("http://fake.invalid")
            await client.aclose()
            client._http = httpx.AsyncClient(base_url="http://fake.invalid", transport=httpx.MockTransport(handler))
            try:
                return [event async for event in client.stream_message("s1", "hi")]
            finally:
                await client.aclose()

        return run(go())

    @pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
    @pytest.mark.parametrize("size", [1, 2, 3, 7, 10_000])
    def test_events_split_only_at_cr_and_lf(self, eol: str, size: int):
        events = self.answer(self.stream(eol).encode(), size)
        assert [(e.kind, e.data) for e in events] == [
            ("accepted", {}),
            ("token", {"text": self.TEXT}),
            ("done", {"text": "done"}),
        ]

    def test_an_answer_that_is_no_event_stream_is_a_daemon_error(self):
        with pytest.raises(DaemonError, match="text/event-stream"):
            self.answer(b'{"text": "hi"}', 100, content_type="application/json")


# the kiosk's hand-over from one customer to the next (issue 12, item 6) ---------------------------


class KioskClient(FakeClient):
    """A daemon with sessions made on demand, each its own transcript, answered with ``stage``."""

    def __init__(self, *, stage: str = "mid") -> None:
        super().__init__()
        self.stage = stage
        self.stored: dict[str, dict[str, Any]] = {}
        self.gate = asyncio.Event()
        self.gate.set()
        self.held = 0  # loads waiting at the closed gate now

    async def new_session(self, title: str = "") -> dict[str, Any]:
        sid = f"s{len(self.stored) + 1}"
        self.calls.append(("new_session", sid))
        session = {"id": sid, "created_at": T0, "title": title, "policy": "rolling", "summary_paused": False}
        self.stored[sid] = {
            "session": session,
            "turns": [],
            "summary": None,
            "summaries": [],
            "ledger": [],
            "records": [],
        }
        return session

    async def session(self, session_id: str) -> dict[str, Any]:
        self.held += 1
        try:
            await self.gate.wait()  # closed: a load in flight
        finally:
            self.held -= 1  # the caller goes on at once, in the same step: nothing runs in between
        return copy.deepcopy(self.stored[session_id])

    async def stream_message(self, session_id: str, text: str) -> AsyncIterator[StreamEvent]:
        self.calls.append(("message", (session_id, text)))
        answer = f"Answer to {text}"
        yield StreamEvent("accepted", {})
        yield StreamEvent("token", {"text": answer})
        stored = self.stored[session_id]
        n = len(stored["turns"])
        stored["turns"] += [turn(n, "customer", text), turn(n + 1, "agent", answer)]
        stored["records"].append(record(n + 1, self.stage))
        yield StreamEvent("done", {"text": answer, "stage": self.stage})


def kiosk_app(client: KioskClient, now: list[float], **settings: Any) -> ApplianceTUI:
    return ApplianceTUI(client, TuiSettings(poll_s=0.1, **settings), kiosk=True, clock=lambda: now[0])


async def say(pilot: Any, text: str) -> None:
    app = pilot.app
    await pilot.press(*text, "enter")
    await eventually_async(
        lambda: not sending(app) and app.payload is not None and len(app.query(TurnView)) >= 2,
        "the answer and the session shown",
        pause=pilot.pause,
    )
    assert text in screen_text(app)


def assert_clean(app: ApplianceTUI, *secrets: str) -> None:
    """Nothing of the last customer: no turn, no typed text, no session, none of their words on screen."""
    shown = screen_text(app)
    assert app.session_id is None and app.payload is None and not app.query(TurnView)
    assert app.query_one("#message", Input).value == ""
    for secret in secrets:
        assert secret not in shown
    assert "Welcome!" in shown


class TestKioskHandOver:
    def test_new_conversation_button_and_key(self):
        now = [0.0]

        async def go() -> None:
            client = KioskClient()
            app = kiosk_app(client, now)
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                assert NEW_CONVERSATION_LABEL in screen_text(app)  # shown on screen, with its key
                await say(pilot, "My PIN is 4711")
                await pilot.press(*"half typed")
                await pilot.click("#new-conversation")
                await pilot.pause()
                assert_clean(app, "4711", "half typed")
                assert app.focused is app.query_one("#message", Input)

                await say(pilot, "Card 5555")
                await pilot.press("f2")
                await pilot.pause()
                assert_clean(app, "5555")

                await say(pilot, "Hello again")
                assert [sid for kind, sid in client.calls if kind == "new_session"] == ["s1", "s2", "s3"]
                assert [t["text"] for t in (app.payload or {})["turns"]] == ["Hello again", "Answer to Hello again"]

                await pilot.press("f1")
                await pilot.pause()
                assert ("F2", "Start a new conversation") in app.screen.rows  # type: ignore[attr-defined]
                now[0] = 1000.0
                app.reset_if_due()  # the help left open: the next customer gets the welcome, not the help
                await pilot.pause()
                assert not isinstance(app.screen, HelpScreen)
                assert_clean(app, "Hello again")

        run(go())

    def test_the_screen_clears_after_a_goodbye(self):
        now = [0.0]

        async def go() -> None:
            client = KioskClient(stage="late")
            app = kiosk_app(client, now, kiosk_goodbye_reset_s=15, kiosk_idle_reset_s=60)
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                await say(pilot, "Thanks, bye")
                assert app.goodbye_at == 0.0
                now[0] = 10.0
                app.reset_if_due()
                assert app.session_id == "s1"  # still reading the goodbye
                now[0] = 12.0
                await pilot.press("o")  # one more thing: the delay starts again
                now[0] = 20.0
                app.reset_if_due()
                assert app.session_id == "s1" and app.query_one("#message", Input).value == "o"
                now[0] = 27.5
                app.reset_if_due()
                await pilot.pause()
                assert_clean(app, "Thanks, bye")
                client.stage = "mid"
                await say(pilot, "Who are you?")
                assert app.session_id == "s2"

        run(go())

    def test_an_answer_that_is_no_goodbye_waits_for_the_idle_delay(self):
        now = [0.0]
        pilots: list[Any] = []

        class Slow(KioskClient):
            async def stream_message(self, session_id: str, text: str) -> AsyncIterator[StreamEvent]:
                async for event in super().stream_message(session_id, text):
                    if event.kind == "done":
                        await pilots[0].pause()  # the app has handled the message's Enter and its cleared input
                        now[0] = 50.0  # the answer took 50 s: the idle delay counts from its arrival
                    yield event

        async def go() -> None:
            app = kiosk_app(Slow(), now, kiosk_goodbye_reset_s=15, kiosk_idle_reset_s=60)
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                pilots.append(pilot)
                await settle(pilot)
                await say(pilot, "Where is my parcel?")
                assert app.goodbye_at is None
                now[0] = 109.0
                app.reset_if_due()
                assert app.session_id == "s1"
                now[0] = 110.0
                app.reset_if_due()  # also what the app's own 1 s timer calls
                await pilot.pause()
                assert_clean(app, "parcel")

        run(go())

    def test_a_load_in_flight_never_brings_the_last_conversation_back(self):
        now = [0.0]

        async def go() -> None:
            client = KioskClient()
            app = kiosk_app(client, now)
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                await say(pilot, "My account is 12345678")
                client.gate.clear()  # the next loads (the poll's, a reload) wait for the daemon
                app.reload()
                await eventually_async(lambda: client.held, "a load to wait for the daemon", pause=pilot.pause)
                await pilot.press("f2")
                await pilot.pause()
                client.gate.set()  # the old session's payload arrives after the hand-over
                await eventually_async(lambda: not client.held, "every load in flight to land", pause=pilot.pause)
                await pilot.pause()
                assert_clean(app, "12345678")

        run(go())

    def test_a_load_that_lands_as_the_app_closes_is_dropped(self):
        """The answer's load can land after quitting has removed the widgets (a CI failure once): it is
        dropped, not a worker error at exit."""
        now = [0.0]

        async def go() -> None:
            client = KioskClient()
            app = kiosk_app(client, now)
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                client.gate.clear()
                await pilot.press(*"Hello", "enter")
                await eventually_async(lambda: client.held, "the answer's load to wait", pause=pilot.pause)
                await app.screen.remove_children()  # what closing does first
                client.gate.set()
                await eventually_async(lambda: not sending(app), "the load to land", pause=pilot.pause)

        run(go())

    def test_new_conversation_during_an_answer_stops_it(self):
        now = [0.0]

        class Stuck(KioskClient):
            async def stream_message(self, session_id: str, text: str) -> AsyncIterator[StreamEvent]:
                yield StreamEvent("accepted", {})
                yield StreamEvent("token", {"text": "Your balance is 9,999"})
                await asyncio.Event().wait()  # the rest never comes

        async def go() -> None:
            app = kiosk_app(Stuck(), now)
            async with app.run_test(size=KIOSK_SIZE) as pilot:
                await settle(pilot)
                await pilot.press(*"balance?", "enter")
                await eventually_async(
                    lambda: "9,999" in screen_text(app), "the streamed piece on screen", pause=pilot.pause, every=0.05
                )
                await pilot.press("f2")
                await eventually_async(lambda: not sending(app), "the send to end", pause=pilot.pause)
                assert_clean(app, "9,999", "balance?")
                assert not app.sending

        run(go())

    def test_operator_console_has_no_new_conversation_button(self):
        async def go() -> None:
            app = canned_app()
            async with app.run_test(size=SMALL_SIZE) as pilot:
                await settle(pilot)
                assert not app.query("#new-conversation")
                assert app.check_action("new_conversation", ()) is False
                assert app.check_action("leave_kiosk", ()) is False

        run(go())


# snapshots (pytest-textual-snapshot) -------------------------------------------------------------


def test_snapshot_operator_80x24(snap_compare):
    assert snap_compare(canned_app(), terminal_size=SMALL_SIZE, run_before=settle)


def test_snapshot_operator_kiosk_size(snap_compare):
    assert snap_compare(canned_app(), terminal_size=KIOSK_SIZE, run_before=settle)


def test_snapshot_kiosk(snap_compare):
    assert snap_compare(canned_app(kiosk=True), terminal_size=KIOSK_SIZE, run_before=settle)


def test_snapshot_help_80x24(snap_compare):
    async def before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("f1")

    assert snap_compare(canned_app(), terminal_size=SMALL_SIZE, run_before=before)


def test_snapshot_edit_summary_80x24(snap_compare):
    async def before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("f3")
        # A loaded box may take more than one pause to mount the editor and lay it out.
        await eventually_async(lambda: bool(pilot.app.screen.query(TextArea)), "the summary editor", pause=pilot.pause)
        pilot.app.screen.query_one(TextArea).cursor_blink = False
        await pilot.wait_for_scheduled_animations()  # a loaded box: the layout and its refresh land late
        await pilot.pause()

    assert snap_compare(canned_app(), terminal_size=SMALL_SIZE, run_before=before)


# the unreachable daemon ---------------------------------------------------------------------------


def test_closed_port_shows_a_banner_and_keeps_typing():
    async def go() -> None:
        client = DaemonClient(f"http://127.0.0.1:{free_port()}")
        app = ApplianceTUI(client, TuiSettings(poll_s=0.2))
        async with app.run_test(size=SMALL_SIZE) as pilot:
            banner = app.query_one("#banner", Static)
            await eventually_async(lambda: banner.display, "the banner", pause=pilot.pause, timeout=20)
            assert "Daemon unreachable" in str(banner.render())
            await pilot.press(*"hello", "enter")
            await eventually_async(lambda: not sending(app), "the send to end", pause=pilot.pause, timeout=20)
            assert app.query_one("#message", Input).value == "hello"
            assert app.is_running

    run(go())


# against the real daemon ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`appliance serve` with SmolLM2-135M on a free port, as a real subprocess."""
    if not (MODELS_DIR / "MODELS.toml").exists():
        pytest.skip("models/ not set up")
    tmp = tmp_path_factory.mktemp("tui-daemon")
    config = write_config(
        tmp,
        # one thread each: the test process draws the app on the same two cores
        f'[responder]\nmodel = "{TEST_MODEL}"\nn_ctx = 2048\nmax_tokens = 24\ntemperature = 0.0\nn_threads = 1\n'
        # the default summarizer, after the first exchange already; a short cap (a summary of one
        # exchange fits in it, and a longer one is a refused version, which the test also reads)
        '[context]\npolicy = "rolling"\nrecent_pairs = 0\n'
        "[summarizer]\nevery_turns = 2\nn_threads = 1\ntimeout_s = 300\nmax_tokens = 64\n",
    )
    port = free_port()
    log = tmp / "daemon.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "appliance", "--config", str(config), "serve", "--port", str(port)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "APPLIANCE_CONFIG": str(config)},
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, f"{url}/readyz", log)
        yield url
    finally:
        stop_process(proc)


@pytest.mark.real_model
def test_one_conversation_end_to_end(daemon: str):
    """Type, watch the answer stream, see the summarizer's version, edit it, and find the edit in the API."""

    async def go() -> None:
        app = ApplianceTUI(DaemonClient(daemon), TuiSettings(poll_s=0.5))
        async with app.run_test(size=KIOSK_SIZE) as pilot:
            await eventually_async(lambda: app.connected is True, "the connection to the daemon", pause=pilot.pause)
            progress: list[str] = []
            original = ConversationView.progress

            def spy(self: ConversationView, text: str) -> None:
                progress.append(text)
                original(self, text)

            ConversationView.progress = spy  # type: ignore[method-assign]
            try:
                await pilot.click("#message")
                await pilot.press(*"My order A-12345 has not arrived.", "enter")
                await eventually_async(
                    lambda: app.payload is not None and len(app.payload["turns"]) == 2,
                    "the answered turn pair",
                    pause=pilot.pause,
                    timeout=240,
                )
            finally:
                ConversationView.progress = original  # type: ignore[method-assign]
            assert len(progress) >= 1, "no streamed text was shown"
            assert app.payload is not None
            answer = app.payload["turns"][1]["text"]

            def answer_view() -> str:
                views = [v for v in app.query(TurnView) if not v.has_class("-pending")]
                return str(views[1].render()) if len(views) > 1 else ""

            # show() swaps the streamed view for the stored turns; removing and mounting finish a refresh later
            await eventually_async(
                lambda: "stage early" in answer_view(), "the stored answer's view", pause=pilot.pause
            )
            views = list(app.query(TurnView))
            assert (answer.strip().splitlines() or [""])[0] in str(views[1].render())
            assert app.query_one("#message", Input).value == ""
            assert app.query_one("#gauge", Static).render()

            # The summarizer runs after the exchange (off the answer's path) and the panel shows its version.
            def model_version() -> dict | None:
                made = [v for v in (app.payload or {}).get("summaries", []) if v["author"] == "model"]
                return made[-1] if made else None

            await eventually_async(
                lambda: model_version() is not None, "a summary from the model", pause=pilot.pause, timeout=300
            )
            await pilot.pause()
            made = model_version()
            assert made is not None
            if made["status"] == "accepted":
                assert str(app.query_one("#summary-head", Static).render()).startswith(
                    f"Summary v{made['version']} · model"
                )
            else:  # a version the validator refused is shown as a failure with its reason, not as context
                assert made["reason"] and "failed" in str(app.query_one("#status", Static).render())
            # An operator edit is a new version on top of it.
            await pilot.press("f3")
            await pilot.pause()
            editor = app.screen.query_one(TextArea)
            editor.text = "Order A-12345 has not arrived."
            await pilot.press("ctrl+s")
            await eventually_async(
                lambda: bool(app.payload and app.payload["summary"] and app.payload["summary"]["author"] == "operator"),
                "the operator's summary in the session",
                pause=pilot.pause,
                timeout=30,
            )
            head = str(app.query_one("#summary-head", Static).render())
            assert head.startswith(f"Summary v{made['version'] + 1} · operator")
            session_id = app.session_id

        stored = httpx.get(f"{daemon}/v1/sessions/{session_id}", timeout=10).json()
        assert stored["summary"]["author"] == "operator"
        assert stored["summary"]["text"] == "Order A-12345 has not arrived."
        assert [t["role"] for t in stored["turns"]] == ["customer", "agent"]

    run(go())


def test_snapshot_kiosk_80x24(snap_compare):
    assert snap_compare(canned_app(kiosk=True), terminal_size=SMALL_SIZE, run_before=settle)


# the command and the kiosk unit ---------------------------------------------------------------------


def test_default_url_follows_the_server_settings(tmp_path: Path):
    from appliance.config import load_settings
    from appliance.tui.app import daemon_url

    tcp = load_settings(write_config(tmp_path, "[server]\nport = 9123\n"), env={})
    assert daemon_url(tcp) == "http://127.0.0.1:9123"
    assert daemon_url(tcp, "http://box:1") == "http://box:1"
    unix = load_settings(write_config(tmp_path, '[server]\nhost = ""\nsocket = "run/a.sock"\n'), env={})
    assert daemon_url(unix) == f"unix:{tmp_path / 'run' / 'a.sock'}"


def test_cli_has_the_tui_command():
    from click.testing import CliRunner

    from appliance.cli import cli

    result = CliRunner().invoke(cli, ["tui", "--help"])
    assert result.exit_code == 0
    assert "--kiosk" in result.output and "--url" in result.output


def test_kiosk_unit_verifies(tmp_path: Path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None or not (ROOT / ".venv" / "bin" / "appliance").exists():
        pytest.skip("needs systemd-analyze and an installed .venv/bin/appliance")
    for name in ("appliance.service", "appliance-kiosk.service"):
        text = (ROOT / "systemd" / name).read_text().replace("/opt/appliance", str(ROOT))
        (tmp_path / name).write_text(text)
    done = subprocess.run(
        [analyze, "verify", str(tmp_path / "appliance-kiosk.service"), str(tmp_path / "appliance.service")],
        capture_output=True,
        text=True,
        env={**os.environ, "SYSTEMD_LOG_LEVEL": "notice"},
    )
    assert done.returncode == 0, done.stderr
    unit = (ROOT / "systemd" / "appliance-kiosk.service").read_text()
    assert "tui --kiosk" in unit and "TTYPath=/dev/tty1" in unit and "Requires=appliance.service" in unit


def write_screenshot(path: Path, size: tuple[int, int] = (120, 34)) -> None:
    """The README's picture: the operator console on canned data (``python -m tests.test_tui docs/tui.svg``)."""

    async def go() -> None:
        app = canned_app()
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            path.write_text(app.export_screenshot(title="appliance tui"))

    run(go())


if __name__ == "__main__":
    write_screenshot(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/tui.svg"))
