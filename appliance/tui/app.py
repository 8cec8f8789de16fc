"""`appliance tui`: the operator's and the kiosk's terminal UI, a client of the daemon's HTTP API.

This module is the app: its layout, its keys, and the workers that poll the daemon and stream
answers. It never opens the database or a model: every fact on screen comes from
:mod:`appliance.tui.client`, so what an operator sees is exactly what the daemon stored. HTTP runs
in Textual workers; failures become notifications, and an unreachable daemon becomes a banner
while a poll reconnects. Typed text stays in the input until the daemon has accepted it. Every
notification goes through :meth:`ApplianceTUI.notify`, which reads no markup and shows terminal
controls as visible stand-ins: a daemon's error may quote what a customer typed.

What it draws is in :mod:`~appliance.tui.render` (pure), :mod:`~appliance.tui.widgets` and
:mod:`~appliance.tui.screens`; what differs in the kiosk is one :class:`~appliance.tui.kiosk.Mode`;
the operator's summary controls are :class:`~appliance.tui.summary.SummaryControls`, and sending a
message is :class:`~appliance.tui.sending.Sending`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.widgets import Button, Footer, Input, Static

from appliance.config import Settings, TuiSettings
from appliance.terminal import visible
from appliance.tui.client import JSON, DaemonClient, DaemonError, DaemonUnreachable, Health, connect, daemon_url
from appliance.tui.drafts import DraftAhead
from appliance.tui.kiosk import KIOSK_RESTART_STATUS, NEW_CONVERSATION_LABEL, TALK_TO_PERSON_LABEL, mode_for
from appliance.tui.live import FloorControls
from appliance.tui.render import Status, as_text
from appliance.tui.screens import HelpScreen, SessionsScreen, binding_rows
from appliance.tui.sending import Sending
from appliance.tui.summary import SummaryControls
from appliance.tui.widgets import ContextPanel, ConversationView

__all__ = ["ApplianceTUI", "daemon_url", "run_tui"]  # the command imports these from here


class ApplianceTUI(Sending, FloorControls, SummaryControls, DraftAhead):
    """The operator console (default) or the customer kiosk (``kiosk=True``)."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses may live elsewhere
    TITLE = "appliance"
    ENABLE_COMMAND_PALETTE = False  # a kiosk must offer no way around its locked-down keys
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help", key_display="F1"),
        Binding("ctrl+n", "new_session", "New session", key_display="^N"),
        Binding("f2,ctrl+f", "find_session", "Find/resume session", key_display="F2"),
        Binding("f3,ctrl+e", "edit_summary", "Edit summary", key_display="F3"),
        Binding("f4,ctrl+r", "restore_summary", "Restore version", key_display="F4"),
        Binding("f5,ctrl+y", "toggle_pause", "Pause/resume summarizing", key_display="F5"),
        Binding("f6,ctrl+t", "take_over", "Take over (type agent replies)", key_display="F6"),
        Binding("f7,ctrl+b", "toggle_context", "Show/hide context panel", key_display="F7"),
        Binding("f8,ctrl+g", "hand_back", "Hand back to the model", key_display="F8"),
        Binding("f9,ctrl+o", "floor", "The floor: every session, live", key_display="F9"),
        Binding("ctrl+l", "refresh", "Reload session", show=False),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        client: DaemonClient,
        settings: TuiSettings | None = None,
        *,
        kiosk: bool = False,
        session_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.client = client
        self.settings = settings or TuiSettings()
        self.mode = mode_for(self.settings, kiosk=kiosk)
        self.session_id = session_id
        self.clock = clock
        self.payload: JSON | None = None
        self.health: Health | None = None
        self.connected: bool | None = None
        self.sending = False
        self.takeover = False
        self.last_activity = clock()
        self.goodbye_at: float | None = None  # when the last answer was a goodbye (``late``)
        self.floor_rows = {}
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        if self.mode.operator_key:
            self.bind(self.mode.operator_key, "leave_kiosk", description="Operator", show=False)
        if self.mode.new_conversation_key:
            self.bind(self.mode.new_conversation_key, "new_conversation", description="New conversation", show=False)

    # layout ------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="banner")
        if self.mode.panels:
            yield Static("", id="floor-alert")
        with Horizontal(id="body"):
            with Vertical(id="left"):
                if self.mode.welcome is not None:
                    yield Static(as_text(self.mode.welcome), id="welcome")
                yield ConversationView(
                    plain=self.mode.plain_conversation, sources=self.mode.show_sources, id="conversation"
                )
                if self.mode.new_conversation_key:
                    with Horizontal(id="entry"):
                        yield Input(placeholder=self._placeholder(), id="message")
                        yield Button(TALK_TO_PERSON_LABEL, id="talk-to-person")
                        yield Button(NEW_CONVERSATION_LABEL, id="new-conversation")
                else:
                    yield Input(placeholder=self._placeholder(), id="message")
            if self.mode.panels:
                yield ContextPanel(id="context")
        yield Static("connecting…", id="status")
        if self.mode.panels:
            yield Footer()

    def on_mount(self) -> None:
        self.screen.add_class(*self.mode.screen_classes)
        self.query_one("#banner").display = False
        for alert in self.query("#floor-alert"):
            alert.display = False
        self.query_one("#message", Input).focus()
        self.set_interval(self.settings.poll_s, self.poll)
        if self.mode.idle_reset_s is not None or self.mode.goodbye_reset_s is not None:
            self.set_interval(1.0, self.reset_if_due)
        self.poll()
        if self.session_id:
            self.reload()
        self.start_following()

    async def on_event(self, event: events.Event) -> None:
        """A paste may hold terminal controls (a clipboard filled by a web page): they arrive visible."""
        if isinstance(event, events.Paste):
            event.text = visible(event.text)
        await super().on_event(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The mode's blocked actions are off: in the kiosk every operator action and quitting key."""
        return action not in self.mode.blocked_actions

    def _placeholder(self) -> str:
        return self.mode.takeover_placeholder if self.takeover else self.mode.placeholder

    # connection --------------------------------------------------------------------------------

    @work(exclusive=True, group="poll")
    async def poll(self) -> None:
        """Status for the bar; on failure a banner, and on recovery the session again."""
        try:
            await self._poll()
        except NoMatches:
            pass  # the app is closing and its widgets are gone: nothing left to show

    async def _poll(self) -> None:
        try:
            health = await self.client.health()
        except DaemonUnreachable as exc:
            self.set_connection(
                False,
                f"Daemon unreachable ({exc}). Reconnecting every {self.settings.poll_s:g} s; your typing is kept.",
            )
            return
        except DaemonError as exc:
            self.set_connection(False, f"Daemon error: {exc}. Retrying every {self.settings.poll_s:g} s.")
            return
        self.health = health
        was = self.connected
        if health.ready:
            self.set_connection(True, "")
        else:
            failing = ", ".join(k for k, ok in health.checks.items() if not ok) or "starting"
            self.set_connection(False, f"Daemon not ready ({failing}): it may be loading or restarting. Waiting…")
        if self.session_id and not self.sending:
            await self._load(quiet=was is not False)
        self.update_status()

    def set_connection(self, ok: bool, why: str) -> None:
        banner = self.query_one("#banner", Static)
        banner.update(as_text(self.mode.away_banner or why))
        banner.display = not ok
        if ok and self.connected is False:
            self.notify("Connected to the daemon again.", title="Reconnected")
        self.connected = ok
        if not ok:
            self.update_status()

    def update_status(self) -> None:
        status = Status(
            self.connected, self.health, self.payload, self.session_id, self.takeover, self.floor_state, self.notice
        )
        self.query_one("#status", Static).update(self.mode.status(status))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification, the dialogs' too, as plain text: no markup, no terminal controls."""
        super().notify(visible(message), title=visible(title), severity=severity, timeout=timeout, markup=False)

    def report(self, exc: DaemonUnreachable | DaemonError) -> None:
        """A failure as a notification: the daemon's words for operators, a plain apology for customers."""
        if self.mode.apology is not None:
            self.notify(self.mode.apology, severity="warning")
        else:
            self.notify(str(exc), title=exc.title, severity="error")

    # sessions ------------------------------------------------------------------------------------

    async def _ensure_session(self) -> str:
        if self.session_id is None:
            created = await self.client.new_session(title=self.mode.session_title)
            self.session_id = str(created["id"])
            if not self.mode.panels:
                self.start_following()  # the kiosk follows its own session
        return self.session_id

    async def _load(self, *, quiet: bool = False) -> None:
        """Fetch the session and show it; errors become notifications unless ``quiet``."""
        session_id = self.session_id
        if session_id is None:
            return
        try:
            payload = await self.client.session(session_id)
        except (DaemonUnreachable, DaemonError) as exc:
            if not quiet:
                self.report(exc)
            return
        if self.session_id != session_id:
            return  # cleared for the next customer (or another session chosen) meanwhile
        try:
            self.show(payload)
        except NoMatches:
            pass  # the app closed while the session was fetched: its widgets are gone, nothing left to show

    def show(self, payload: JSON | None) -> None:
        self.floor_of(payload)
        if payload is not None and payload == self.payload:
            self.update_status()
            return  # a poll found nothing new: keep scroll positions and selections
        self.payload = payload
        self.query_one(ConversationView).show(payload)
        for panel in self.query(ContextPanel):  # none in the kiosk
            panel.show(payload)
            panel.border_title = as_text(f"Context · {payload['session']['policy']}") if payload else "Context"
        self.update_status()

    @work(exclusive=True, group="load")
    async def reload(self) -> None:
        await self._load()

    def reset_conversation(self) -> None:
        """Forget the session on screen; the next message starts a new one."""
        self.session_id = None
        self.payload = None
        self.goodbye_at = None
        self.floor_state, self.notice = "bot", ""
        if not self.mode.panels:
            self.start_following()  # stops following the last customer's session
        self.query_one(ConversationView).clear()
        for panel in self.query(ContextPanel):
            panel.show(None)
        self.update_status()

    # the kiosk's hand-over and its operator key ------------------------------------------------------

    def on_key(self) -> None:
        self.last_activity = self.clock()

    def reset_if_due(self) -> None:
        """Hand the screen to the next customer once the mode says this one is gone.

        That is ``goodbye_reset_s`` after a goodbye, or ``idle_reset_s`` after the last key,
        whichever comes first; a key pressed after the goodbye restarts its delay, so a customer
        with one more question is not cut off. Never while an answer streams.
        """
        if self.sending:
            return
        now = self.clock()
        idle = now - self.last_activity
        due = self.mode.idle_reset_s is not None and idle >= self.mode.idle_reset_s
        if self.goodbye_at is not None and self.mode.goodbye_reset_s is not None:
            due = due or now - max(self.goodbye_at, self.last_activity) >= self.mode.goodbye_reset_s
        if due and (self.session_id is not None or self.query_one("#message", Input).value):
            self.new_conversation()

    def new_conversation(self) -> None:
        """A clean screen: no turns, no typed text, no dialog, no notification, no answer still streaming."""
        while len(self.screen_stack) > 1:
            self.pop_screen()
        self.workers.cancel_group(self, "send")
        self.sending = False
        self.query_one("#message", Input).value = ""
        self.clear_notifications()
        self.reset_conversation()
        self.last_activity = self.clock()

    @on(Button.Pressed, "#new-conversation")
    def action_new_conversation(self) -> None:
        self.new_conversation()
        self.query_one("#message", Input).focus()

    def action_leave_kiosk(self) -> None:
        """Leave for a fresh kiosk: the unit restarts on this status (tty1 is never left blank)."""
        self.exit(KIOSK_RESTART_STATUS)

    # operator actions ----------------------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.key_rows()))

    def key_rows(self) -> list[tuple[str, str]]:
        """Every key this mode answers to: its own rows, then those generated from the bindings."""
        rows = list(self.mode.help_rows)
        if self.mode.help_lists_bindings:
            rows += binding_rows(ApplianceTUI.BINDINGS)
        return rows

    def action_toggle_context(self) -> None:
        context = self.query_one("#context")
        context.display = not context.display

    def action_refresh(self) -> None:
        self.reload()

    @work(exclusive=True, group="action")
    async def action_new_session(self) -> None:
        self.reset_conversation()
        try:
            await self._ensure_session()
        except (DaemonUnreachable, DaemonError) as exc:
            self.notify(
                f"{exc} (a session will be created with the first message)", title=exc.title, severity="warning"
            )
            return
        self.notify(f"New session {self.session_id}.")
        await self._load()

    def action_find_session(self) -> None:
        self.push_screen(
            SessionsScreen(self.client), lambda session_id: self.resume(session_id) if session_id else None
        )

    def action_help_quit(self) -> None:
        """Ctrl+C does not quit (Textual's own hint is markup, which :meth:`notify` would show raw)."""
        self.notify("Press Ctrl+Q to quit.", title="Do you want to quit?")

    async def action_quit(self) -> None:
        if "quit" not in self.mode.blocked_actions:  # also when called directly, not by a key
            self.exit(0)

    async def on_unmount(self) -> None:
        await self.client.aclose()


def run_tui(settings: Settings, *, url: str | None = None, kiosk: bool = False, session_id: str | None = None) -> int:
    """Run the app until the operator quits: 0; in kiosk mode until the operator key: 75, to be restarted."""
    client = connect(settings, url)
    app = ApplianceTUI(client, settings.tui, kiosk=kiosk, session_id=session_id)
    return app.run() or 0
