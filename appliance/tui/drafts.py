"""Typing ahead: what the customer types is sent to the daemon once they pause, so that the daemon
evaluates the answer's prompt, the operator's passages included, before they press Enter
(``POST /v1/sessions/{id}/draft``; see :mod:`appliance.turn.prewarm`).

A base of :class:`~appliance.tui.app.ApplianceTUI`, apart so that the app's module stays readable.
A draft is a hint: nothing is stored, a failure is not shown, and none is sent while an answer
streams, while the operator types replies (take-over), or while a person holds the conversation. A
conversation's first message starts its session once the draft has ``MIN_CHARS`` characters: the
prompt that is warmed belongs to a session.
"""

from __future__ import annotations

from textual import work
from textual.app import App
from textual.timer import Timer

from appliance.config import TuiSettings
from appliance.tui.client import DaemonClient, DaemonError, DaemonUnreachable

MIN_CHARS = 12  # less says too little to retrieve by (and a passer-by's keystrokes start no session)


class DraftAhead(App[int]):
    """``typed(text)`` on every change of the message box; the draft goes after ``tui.draft_pause_s``."""

    client: DaemonClient
    session_id: str | None
    sending: bool
    takeover: bool
    floor_state: str
    settings: TuiSettings
    _draft_timer: Timer | None = None

    async def _ensure_session(self) -> str:
        raise NotImplementedError  # the app's

    def typed(self, text: str) -> None:
        """The message box now holds ``text``: send it once the typist pauses (a newer text restarts the wait)."""
        if self._draft_timer is not None:
            self._draft_timer.stop()
            self._draft_timer = None
        text = text.strip()
        if self.settings.draft_pause_s <= 0 or len(text) < MIN_CHARS:
            return
        self._draft_timer = self.set_timer(self.settings.draft_pause_s, lambda: self.send_draft(text))

    @work(exclusive=True, group="draft")
    async def send_draft(self, text: str) -> None:
        if self.sending or self.takeover or self.floor_state != "bot":
            return
        try:
            await self.client.draft(await self._ensure_session(), text)
        except (DaemonUnreachable, DaemonError):
            pass  # a hint only: the message itself is sent as ever, and its failure is shown then
