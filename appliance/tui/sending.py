"""Sending from the message box: the customer's message streamed to its answer, or, while the
operator has taken over, the operator's reply recorded as the agent's turn.

A base of :class:`~appliance.tui.app.ApplianceTUI`, apart so that the app's module stays readable.
Typed text stays in the input until the daemon has accepted it; one message is sent at a time.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import App
from textual.widgets import Input

from appliance.tui.client import DaemonClient, DaemonError, DaemonUnreachable
from appliance.tui.widgets import AnswerProgress, ConversationView


class Sending(App[int]):
    """Enter in the message box: ``send`` (an answer streamed) or ``record_agent`` (take-over)."""

    client: DaemonClient
    clock: Callable[[], float]
    sending: bool
    takeover: bool
    last_activity: float
    goodbye_at: float | None
    notice: str
    typed: Callable[[str], None]  # the draft's (typing ahead)

    def report(self, exc: DaemonUnreachable | DaemonError) -> None:
        raise NotImplementedError  # the app's

    def set_connection(self, ok: bool, why: str) -> None:
        raise NotImplementedError  # the app's

    async def _ensure_session(self) -> str:
        raise NotImplementedError  # the app's

    async def _load(self, *, quiet: bool = False) -> None:
        raise NotImplementedError  # the app's

    @on(Input.Changed, "#message")
    def typing(self, event: Input.Changed) -> None:
        self.last_activity = self.clock()
        self.typed(event.value)

    @on(Input.Submitted, "#message")
    def submitted(self, event: Input.Submitted) -> None:
        self.last_activity = self.clock()
        text = event.value.strip()
        if not text:
            return
        if self.sending:
            self.notify("Still answering the previous message.", severity="warning")
            return
        self.sending = True  # now, not in the worker: a second Enter must not start a second answer
        if self.takeover:
            self.record_agent(text)
        else:
            self.send(text)

    def _clear_input(self, sent: str) -> None:
        """Empty the input only if it still holds what was sent (the typist may have moved on)."""
        box = self.query_one("#message", Input)
        if box.value.strip() == sent:
            box.value = ""

    @work(group="send")
    async def send(self, text: str) -> None:
        """Stream one answer; the typed text is cleared only once the daemon has accepted it."""
        conversation = self.query_one(ConversationView)
        answer = ""
        started = False
        try:
            session_id = await self._ensure_session()
            async for event in self.client.stream_message(session_id, text):
                if event.kind == "accepted":
                    started = True
                    self._clear_input(text)
                    conversation.begin(text)
                elif event.kind == "token":
                    answer += str(event.data.get("text", ""))
                    self.post_message(AnswerProgress(answer))
                elif event.kind == "done":  # the stored answer: the guard may have replaced the streamed draft
                    self.post_message(AnswerProgress(str(event.data.get("text", answer))))
                    self.goodbye_at = self.clock() if event.data.get("stage") == "late" else None
                    self.notice = str(event.data.get("notice") or self.notice)  # in the customer's language
                elif event.kind == "error":
                    error = event.data.get("error", {})
                    raise DaemonError(str(error.get("message", "the answer failed")), kind=str(error.get("type", "")))
        except DaemonUnreachable as exc:
            self.set_connection(False, f"Daemon unreachable ({exc}). Reconnecting; your message was kept.")
            self.report(exc)
            if started:
                conversation.interrupted("the daemon went away")
                self.query_one("#message", Input).value = self.query_one("#message", Input).value or text
            return
        except DaemonError as exc:
            self.report(exc)
            if started:
                conversation.interrupted(exc.kind or "error")
            return
        finally:
            self.sending = False
            self.last_activity = self.clock()  # the customer reads the answer from now on
        await self._load()

    def on_answer_progress(self, message: AnswerProgress) -> None:
        self.query_one(ConversationView).progress(message.text)

    @work(group="send")
    async def record_agent(self, text: str) -> None:
        """Take over: the operator's reply is recorded as the agent's turn, not generated."""
        try:
            session_id = await self._ensure_session()
            await self.client.record_turn(session_id, "agent", text)
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        finally:
            self.sending = False
        self._clear_input(text)
        await self._load()
