"""The operator's summary controls (F3 edit, F4 restore a version, F5 pause): each one change through the daemon.

A base of :class:`~appliance.tui.app.ApplianceTUI`, apart so that the app's module stays readable:
it asks the daemon, says what the daemon did, and shows the session again. What it needs of the app
(the client, the session on screen, how a failure is reported and how the session is loaded) is
declared here and provided there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import work
from textual.app import App

from appliance.tui.client import JSON, DaemonClient, DaemonError, DaemonUnreachable
from appliance.tui.screens import EditSummaryScreen, RestoreScreen


class SummaryControls(App[int]):
    """The actions ``edit_summary``, ``restore_summary`` and ``toggle_pause`` (off in the kiosk)."""

    client: DaemonClient
    session_id: str | None
    payload: JSON | None

    def report(self, exc: DaemonUnreachable | DaemonError) -> None:
        """A failure as a notification (the app's)."""
        raise NotImplementedError

    async def _load(self, *, quiet: bool = False) -> None:
        """Fetch the session and show it (the app's)."""
        raise NotImplementedError

    def _need_session(self) -> str | None:
        if self.session_id is None or self.payload is None:
            self.notify("No session yet: send a message or resume one first.", severity="warning")
            return None
        return self.session_id

    def action_edit_summary(self) -> None:
        session_id = self._need_session()
        if session_id is None:
            return
        summary = (self.payload or {}).get("summary")

        def save(text: str | None) -> None:
            if text is not None and text.strip():
                self.change(
                    lambda: self.client.edit_summary(session_id, text),
                    lambda version: f"Saved as summary version {version['version']} (operator).",
                )

        self.push_screen(EditSummaryScreen(summary["text"] if summary else ""), save)

    def action_restore_summary(self) -> None:
        session_id = self._need_session()
        if session_id is None:
            return
        versions = (self.payload or {}).get("summaries", [])
        if not versions:
            self.notify("This session has no summary versions yet.", severity="warning")
            return

        def restore(version: int | None) -> None:
            if version:
                self.change(
                    lambda: self.client.restore_summary(session_id, version),
                    lambda new: f"Version {version} restored as version {new['version']}.",
                )

        self.push_screen(RestoreScreen(versions), restore)

    def action_toggle_pause(self) -> None:
        session_id = self._need_session()
        if session_id is None:
            return
        paused = not (self.payload or {}).get("session", {}).get("summary_paused", False)
        said = "Summarizing paused for this session." if paused else "Summarizing resumed."
        self.change(lambda: self.client.set_paused(session_id, paused), lambda _: said)

    @work(exclusive=True, group="action")
    async def change(self, call: Callable[[], Awaitable[JSON]], said: Callable[[JSON], str]) -> None:
        """One operator change to the session: ask the daemon, say what it did, show the session again."""
        try:
            done = await call()
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        self.notify(said(done))
        await self._load()
