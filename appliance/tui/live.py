"""The branch floor in the app: live events, the operator's take-over and hand-back, and the
kiosk's "Talk to a person" (issue 28).

A base of :class:`~appliance.tui.app.ApplianceTUI`, apart so that the app's module stays readable.
One worker follows the daemon's events: the console all of them (``/v1/events``: the live list of
:mod:`~appliance.tui.floor`, its alert, and the open session reloaded as its turns are stored), the
kiosk its own session's (an operator's reply appears as it is stored, and the status line says when
a person is asked for or is with the customer). It reconnects after a drop with ``Last-Event-ID``,
so nothing is missed; the poll keeps everything right meanwhile anyway.

The take-over is the daemon's: F6 asks it to hold the session for this operator (409 if another
holds it) and the model answers no more; F8 hands it back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ClassVar

from textual import on, work
from textual.app import App
from textual.css.query import NoMatches
from textual.widgets import Button, Input, Static

from appliance.tui.client import JSON, DaemonClient, DaemonError, DaemonUnreachable, StreamEvent
from appliance.tui.floor import FloorRow, FloorScreen, alert_text, apply, rows_from_sessions, waiting
from appliance.tui.kiosk import Mode
from appliance.tui.widgets import ConversationView


class FloorControls(App[int]):
    """Live events, ``take_over`` (F6), ``hand_back`` (F8), ``floor`` (F9) and the kiosk's button."""

    client: DaemonClient
    session_id: str | None
    payload: JSON | None
    mode: Mode
    takeover: bool
    sending: bool
    retry_s: ClassVar[float] = 2.0

    floor_rows: dict[str, FloorRow]
    floor_state: str = "bot"  # the state of the session on screen
    notice: str = ""  # what the daemon said to tell the customer while they wait
    last_event_id: int | None = None

    def report(self, exc: DaemonUnreachable | DaemonError) -> None:
        raise NotImplementedError  # the app's

    reload: Callable[[], object]  # the app's: load the session on screen again

    def update_status(self) -> None:
        raise NotImplementedError  # the app's

    async def _ensure_session(self) -> str:
        raise NotImplementedError  # the app's

    # following the daemon --------------------------------------------------------------------------

    def start_following(self) -> None:
        """(Re)start the event worker: the console's floor, or the kiosk's session once it has one."""
        self.last_event_id = None
        if self.mode.panels or self.session_id is not None:
            self.follow()
        else:
            self.workers.cancel_group(self, "follow")

    @work(exclusive=True, group="follow")
    async def follow(self) -> None:
        if self.mode.panels:
            await self._load_floor()
        while True:
            path = "/v1/events" if self.mode.panels else f"/v1/sessions/{self.session_id}/events"
            after = self.last_event_id if self.last_event_id is not None else (None if self.mode.panels else 0)
            try:
                async for event in self.client.events(path, after):
                    if isinstance(event.data.get("id"), int):
                        self.last_event_id = event.data["id"]
                    self.on_floor_event(event)
            except (DaemonUnreachable, DaemonError):
                pass  # the poll shows the banner; try again
            except NoMatches:
                return  # the app is closing
            await asyncio.sleep(self.retry_s)

    async def _load_floor(self) -> None:
        try:
            sessions = await self.client.sessions(limit=200)
        except (DaemonUnreachable, DaemonError):
            return
        self.floor_rows = {**rows_from_sessions(sessions), **getattr(self, "floor_rows", {})}
        self._floor_changed(0)

    def on_floor_event(self, event: StreamEvent) -> None:
        data = event.data
        sid = str(data.get("session_id", ""))
        if self.mode.panels:
            before = waiting(self.floor_rows)
            self.floor_rows = apply(self.floor_rows, event.kind, data)
            self._floor_changed(before)
        if sid and sid == self.session_id:
            if event.kind == "floor":
                self.floor_state = str(data.get("state", "bot"))
                if self.floor_state != "needs_person":
                    self.notice = ""
                self.update_status()
            if event.kind == "erased" and not self.mode.panels:
                self.call_later(self.action_new_conversation)  # type: ignore[attr-defined]
            elif not self.sending:
                self.reload()

    def _floor_changed(self, waited_before: int) -> None:
        count = waiting(self.floor_rows)
        for alert in self.query("#floor-alert").results(Static):
            alert.update(alert_text(count))
            alert.display = count > 0
        if count > waited_before:
            self.notify("A customer is asking for a person (F9 opens the floor).", title="Needs a person")
        if isinstance(self.screen, FloorScreen):
            self.screen.show(self.floor_rows)

    # the operator's keys -----------------------------------------------------------------------------

    def resume(self, session_id: str) -> None:
        """Show another session (its events are followed with the floor's)."""
        self.session_id = session_id
        self.payload = None
        if self.takeover:
            self.set_takeover(False)  # the daemon still holds the other one for this operator: F8 there
        self.query_one(ConversationView).clear()
        self.reload()

    def action_floor(self) -> None:
        def resume(session_id: str | None) -> None:
            if session_id:
                self.resume(session_id)

        self.push_screen(FloorScreen(self.floor_rows), resume)

    @work(exclusive=True, group="action")
    async def action_take_over(self) -> None:
        """Hold the session on screen: the model answers no more, and typed replies are recorded."""
        if self.session_id is None:
            self.notify("No session yet: open one from the floor (F9) first.", severity="warning")
            return
        try:
            body = await self.client.take_over(self.session_id)
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        self.floor_state = str(body.get("floor", {}).get("state", "with_person"))
        self.set_takeover(True)
        self.notify("You hold this conversation: your replies are recorded as the agent's. F8 hands it back.")

    @work(exclusive=True, group="action")
    async def action_hand_back(self) -> None:
        if self.session_id is None:
            return
        try:
            body = await self.client.hand_back(self.session_id)
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        self.floor_state = str(body.get("floor", {}).get("state", "bot"))
        self.set_takeover(False)
        self.notify("Back to the model: it answers the next message, with your replies in its context.")

    def set_takeover(self, on: bool) -> None:
        self.takeover = on
        box = self.query_one("#message", Input)
        box.placeholder = self.mode.takeover_placeholder if on else self.mode.placeholder
        box.set_class(on, "-takeover")
        self.update_status()

    # the kiosk's button ------------------------------------------------------------------------------

    @on(Button.Pressed, "#talk-to-person")
    def talk_to_person(self) -> None:
        self.ask_for_person()

    @work(exclusive=True, group="action")
    async def ask_for_person(self) -> None:
        try:
            session_id = await self._ensure_session()  # a new one is followed from its start
            body = await self.client.ask_for_person(session_id)
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        self.floor_state = str(body.get("floor", {}).get("state", "needs_person"))
        self.notice = str(body.get("notice", ""))
        self.update_status()

    def floor_of(self, payload: JSON | None) -> None:
        """The state of a loaded session: a hand-back by another client ends this one's take-over."""
        state = str(((payload or {}).get("session") or {}).get("floor", {}).get("state", "bot"))
        self.floor_state = state
        if state != "needs_person":
            self.notice = ""
        if self.takeover and state != "with_person" and self.mode.panels:
            self.set_takeover(False)
