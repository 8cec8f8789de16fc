"""Both screens of the branch floor (issue 28): a real kiosk and a real operator console (two
Textual apps driven by their pilots, in one event loop) on one real daemon with the tiny model.

1. The customer asks for a person, and the console's live list shows it within a second.
2. The operator takes over and replies; the kiosk shows the reply within a second, labelled as staff,
   and no model answer was generated meanwhile.
3. The operator hands back, and the model's next answer has the operator's turn in its context.

Also, without a daemon: the live list's rows as events change them (pure functions), and the
screenshots of both screens for the docs (``python -m tests.test_floor_tui docs``).
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.widgets import Input, Static

from appliance.config import TuiSettings
from appliance.tui.app import ApplianceTUI
from appliance.tui.client import DaemonClient
from appliance.tui.floor import FloorRow, FloorScreen, apply, cells, ordered, rows_from_sessions
from appliance.tui.widgets import AnswerProgress, TurnView

from .support import eventually_async
from .test_daemon import Daemon, needs_model, start_daemon

OPERATOR, KIOSK = "tok-floor-operator-1", "tok-floor-kiosk-1"
SIZE = (140, 40)


# the live list, pure --------------------------------------------------------------------------------


class TestRows:
    def test_events_keep_the_rows_and_needs_person_comes_first(self):
        rows = rows_from_sessions(
            [
                {"id": "a", "title": "kiosk", "floor_state": "bot", "floor_since": 0, "last_at": 100.0},
                {"id": "b", "title": "", "floor_state": "bot", "floor_since": 0, "last_at": 200.0},
            ]
        )
        rows = apply(rows, "turn", {"session_id": "a", "at": 300.0, "by": "model", "stage": "mid", "flags": 2})
        rows = apply(rows, "floor", {"session_id": "b", "at": 310.0, "state": "needs_person", "since": 310.0})
        rows = apply(rows, "session", {"session_id": "c", "at": 320.0, "title": "[red]x[/red]"})
        assert [r.session_id for r in ordered(rows)] == ["b", "c", "a"]
        assert rows["a"] == FloorRow("a", "kiosk", "bot", 0.0, 300.0, "mid", 2)
        state, wait, last, stage, flags, name = cells(rows["b"], now=400.0)
        assert (state.plain, wait.plain, last.plain) == ("NEEDS PERSON", "1 min", "3 min ago")
        assert cells(rows["c"], now=400.0)[5].plain == "c · [red]x[/red]"  # a title is text, never markup
        assert "c" not in apply(rows, "erased", {"session_id": "c", "at": 330.0})

    def test_the_longest_waiting_comes_first(self):
        rows = {
            "new": FloorRow("new", state="needs_person", since=50.0),
            "old": FloorRow("old", state="needs_person", since=10.0),
            "held": FloorRow("held", state="with_person", since=5.0),
        }
        assert [r.session_id for r in ordered(rows)] == ["old", "new", "held"]


def test_the_kiosk_status_line_says_calmly_who_is_coming():
    from appliance.tui.kiosk import kiosk_status
    from appliance.tui.render import Status

    def line(floor: str, notice: str = "", connected: bool = True) -> str:
        return kiosk_status(Status(connected, None, None, "s", False, floor, notice)).plain

    assert line("needs_person", "Gleich kommt jemand.") == "Gleich kommt jemand."  # the daemon's, in their language
    assert line("needs_person") == "A member of staff will be with you shortly."
    assert line("with_person") == "A member of staff is with you."
    assert (line("bot"), line("with_person", connected=False)) == ("Ready", "Please wait…")


# two apps on one daemon -------------------------------------------------------------------------------


def start_floor_daemon(folder: Path) -> Daemon:
    """A daemon with an operator and a kiosk token, its files in ``folder``."""
    (folder / "kiosk.token").write_text(KIOSK + "\n")
    return start_daemon(
        folder,
        max_tokens=16,
        token=OPERATOR,
        server=f'tokens = {{ "{folder / "kiosk.token"}" = "kiosk" }}\n',
        env={"APPLIANCE__CONTEXT__POLICY": "raw"},  # no summaries: these tests are about the floor
    )


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    started = start_floor_daemon(tmp_path_factory.mktemp("floor-tui"))
    yield started
    assert started.stop() == 0, started.output()


def answers(daemon: Daemon) -> float:
    text = httpx.get(f"{daemon.url}/metrics", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30).text
    found = re.search(r"^appliance_answers_total (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


@asynccontextmanager
async def floor_pair(daemon: Daemon) -> AsyncIterator[tuple[Any, Any]]:
    """A kiosk and a console, each with its own token, both connected and following the daemon."""
    kiosk = ApplianceTUI(DaemonClient(daemon.url, token=KIOSK), TuiSettings(poll_s=5), kiosk=True)
    console = ApplianceTUI(DaemonClient(daemon.url, token=OPERATOR), TuiSettings(poll_s=5))
    async with kiosk.run_test(size=SIZE) as kp, console.run_test(size=SIZE) as cp:
        await eventually_async(lambda: kiosk.connected and console.connected, "both apps connected", pause=kp.pause)
        yield kp, cp


async def ask_for_person(kp: Any, cp: Any) -> tuple[str, float]:
    """The customer presses the button; the seconds until the console's list shows the session waiting."""
    kiosk, console = kp.app, cp.app
    await kp.click("#talk-to-person")
    await eventually_async(lambda: kiosk.floor_state == "needs_person", "the kiosk's request", pause=kp.pause)
    asked = time.monotonic()
    session = kiosk.session_id
    await eventually_async(
        lambda: console.floor_rows.get(session, FloorRow("")).state == "needs_person",
        "the session in the console's list",
        pause=cp.pause,
        every=0.005,
    )
    return session, time.monotonic() - asked


async def take_and_reply(kp: Any, cp: Any, session: str, reply: str) -> float:
    """The operator opens the session from the floor, takes it and replies; seconds until the kiosk shows it."""
    kiosk, console = kp.app, cp.app
    await cp.press("f9")
    await eventually_async(lambda: isinstance(console.screen, FloorScreen), "the floor screen", pause=cp.pause)
    screen = console.screen
    assert isinstance(screen, FloorScreen)
    row = [r.session_id for r in ordered(screen.rows)].index(session)  # earlier tests' sessions wait too
    for _ in range(row):
        await cp.press("down")
    await cp.press("enter")
    await eventually_async(lambda: console.session_id == session, "the session opened", pause=cp.pause)
    await cp.press("f6")
    await eventually_async(lambda: console.takeover, "the take-over", pause=cp.pause)
    console.query_one("#message", Input).value = reply
    await cp.press("enter")
    await eventually_async(lambda: not console.sending, "the reply recorded", pause=cp.pause)
    sent = time.monotonic()

    def shown() -> bool:
        return any(reply in str(v.render()) and "Staff" in str(v.render()) for v in kiosk.query(TurnView))

    await eventually_async(shown, "the reply on the kiosk", pause=kp.pause, every=0.005)
    return time.monotonic() - sent


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class RecordingKiosk(ApplianceTUI):
    """A kiosk that also keeps each text it showed of an answer while it streamed (Textual calls the
    base class's handler after this one, which shows it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.progressed: list[str] = []

    def on_answer_progress(self, message: AnswerProgress) -> None:
        self.progressed.append(message.text)


@pytest.mark.real_model
@pytest.mark.daemon
@needs_model
class TestBothScreens:
    def test_the_customer_asks_and_the_console_shows_it_within_a_second(self, daemon: Daemon):
        async def go() -> None:
            async with floor_pair(daemon) as (kp, cp):
                session, took = await ask_for_person(kp, cp)
                assert took < 1.0, f"the console showed the request {took:.2f} s after it was stored"
                alert = cp.app.query_one("#floor-alert", Static)
                assert alert.display and "waiting for a person" in str(alert.render())
                await cp.press("f9")
                await eventually_async(lambda: isinstance(cp.app.screen, FloorScreen), "the floor", pause=cp.pause)
                first = ordered(cp.app.screen.rows)[0]
                assert (first.session_id, first.state) == (session, "needs_person")
                status = str(kp.app.query_one("#status", Static).render())
                assert "member of staff" in status

        run(go())

    def test_the_operator_replies_and_the_kiosk_shows_it_within_a_second(self, daemon: Daemon):
        async def go() -> None:
            async with floor_pair(daemon) as (kp, cp):
                session, _ = await ask_for_person(kp, cp)
                before = answers(daemon)
                took = await take_and_reply(kp, cp, session, "This is Maria at the counter; I will help you.")
                assert took < 1.0, f"the kiosk showed the reply {took:.2f} s after it was stored"
                await eventually_async(
                    lambda: "with you" in str(kp.app.query_one("#status", Static).render()),
                    "the kiosk's calm status line",
                    pause=kp.pause,
                )
                await kp.click("#message")
                await kp.press(*"Thank you, I will wait.", "enter")
                await eventually_async(lambda: not kp.app.sending, "the customer's message", pause=kp.pause)
                stored = httpx.get(
                    f"{daemon.url}/v1/sessions/{session}", headers={"Authorization": f"Bearer {OPERATOR}"}, timeout=30
                ).json()
                assert [t["role"] for t in stored["turns"]] == ["agent", "customer"]
                assert answers(daemon) == before  # no model answer while a person held the session

        run(go())

    def test_the_kiosk_shows_only_text_the_guard_kept(self, daemon: Daemon):
        """Every text the kiosk showed of an answer as it streamed is the start of the stored answer,
        and the last is the stored answer (the checked stream: guard.stream's default). The tiny
        model may say nothing the guard must repair here; the repairs as each client reads them are
        tested with a fake responder (test_checked_stream.py) and counted by ``bench stream``."""

        async def go() -> None:
            kiosk = RecordingKiosk(DaemonClient(daemon.url, token=KIOSK), TuiSettings(poll_s=5), kiosk=True)
            async with kiosk.run_test(size=SIZE) as kp:
                await eventually_async(lambda: kiosk.connected, "the kiosk connected", pause=kp.pause)
                questions = (
                    "How much is the monthly fee, in dollars?",
                    "What is the phone number of your head office?",
                )
                for n, question in enumerate(questions, 1):
                    kiosk.progressed.clear()
                    await kp.click("#message")
                    await kp.press(*question, "enter")

                    def answered(n: int = n) -> bool:
                        return not kiosk.sending and bool(kiosk.payload) and len(kiosk.payload["records"]) >= n

                    await eventually_async(answered, "the model's answer", pause=kp.pause, timeout=240)
                    stored = kiosk.payload["turns"][-1]["text"]
                    assert kiosk.progressed and kiosk.progressed[-1] == stored
                    assert all(stored.startswith(text) for text in kiosk.progressed), (kiosk.progressed, stored)

        run(go())

    def test_handing_back_puts_the_operators_turn_in_the_models_context(self, daemon: Daemon):
        async def go() -> None:
            async with floor_pair(daemon) as (kp, cp):
                session, _ = await ask_for_person(kp, cp)
                await take_and_reply(kp, cp, session, "Your new card RC-5521 is ordered.")
                await cp.press("f8")
                await eventually_async(lambda: not cp.app.takeover, "the hand-back", pause=cp.pause)
                await eventually_async(lambda: kp.app.floor_state == "bot", "the kiosk told", pause=kp.pause)
                await kp.click("#message")
                await kp.press(*"When will the card arrive?", "enter")
                await eventually_async(
                    lambda: bool(kp.app.payload and kp.app.payload["records"]),
                    "the model's answer",
                    pause=kp.pause,
                    timeout=240,
                )
                record = kp.app.payload["records"][-1]
                assert 0 in record["manifest"]["verbatim_turns"]  # turn 0 is the operator's reply
                assert record["source"] == "model"  # generated: not the waiting sentence

        run(go())


# screenshots for the docs --------------------------------------------------------------------------


def write_screenshots(folder: Path) -> None:
    """The console's floor and a kiosk with a staff reply, on a real daemon started for the purpose
    (``python -m tests.test_floor_tui docs``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        box = start_floor_daemon(Path(tmp))
        try:

            async def go() -> None:
                async with floor_pair(box) as (kp, cp):
                    session, _ = await ask_for_person(kp, cp)
                    await cp.press("f9")
                    await eventually_async(lambda: isinstance(cp.app.screen, FloorScreen), "floor", pause=cp.pause)
                    await cp.pause(0.5)
                    (folder / "floor.svg").write_text(cp.app.export_screenshot(title="appliance tui · the floor"))
                    await cp.press("escape")
                    await take_and_reply(kp, cp, session, "This is Maria at the counter; I will help you.")
                    await kp.pause(0.5)
                    (folder / "kiosk-staff.svg").write_text(kp.app.export_screenshot(title="appliance tui --kiosk"))

            run(go())
        finally:
            box.stop()


if __name__ == "__main__":
    write_screenshots(Path(sys.argv[1] if len(sys.argv) > 1 else "docs"))
