"""The branch floor: who has a conversation, and whether the model may answer it.

    bot ──ask (a cue, the button, the guard)──▶ needs_person ──take──▶ with_person ──hand back──▶ bot
     └──────────────────────────take──────────────────────────────────▲        any ──close──▶ closed

The daemon owns each conversation's state (:class:`~appliance.types.Floor`, stored with the session).
Every customer message goes through :meth:`Desk.reply`, in the session's lane of the model's queue,
so a state change (which runs in the same lane) never lands between the check and the answer: while
a person is asked for or holds the conversation the message is stored and no answer is generated.

Asking for a person is a message with a cue of any language (``floor.person_cues`` over the
lexicons'), the kiosk's button, or, with ``floor.escalate_on_guard``, the guard's last resort twice
in a row (a read-back from the ledger or the documents' not-found text in place of a generated
answer) or an answer that still states unsupported facts after the guard tried to repair it. A cue
is answered with ``floor.waiting_message`` in the cue's language, stored as the answer (its record's
model says so); the button and the guard get that sentence back as a notice, not stored.

Each change is decided by :func:`transition`, a pure function of the state, the action and the
caller, inside the store's transaction that writes it, its audit row and its event.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from appliance import stage
from appliance.config import WAITING_MESSAGE, Settings
from appliance.errors import FloorConflict, PersonHolds
from appliance.protocols import OnToken
from appliance.store.floor import FloorChange
from appliance.summarizer.language import conversation_language
from appliance.turn.pipeline import Pipeline
from appliance.turn.sessions import Sessions
from appliance.types import (
    AnswerSource,
    CheckResult,
    Floor,
    GuardAction,
    Manifest,
    Snapshot,
    Timings,
    Turn,
    TurnRecord,
    TurnResult,
)

FloorAction = Literal["ask", "take", "hand_back", "close"]
# What the guard gives when it cannot get a generated answer right: its last resort.
LAST_RESORTS = (AnswerSource.READBACK, AnswerSource.NOT_FOUND)
# Repairs that may leave findings in the answer they kept (then the guard could not get it right).
REPAIRS = (GuardAction.REGENERATE, GuardAction.REDACT)


@dataclass(frozen=True)
class DeskSettings:
    """What the desk is told, resolved from ``settings.floor`` by the composition root."""

    person_cues: Mapping[str, Sequence[str]]  # floor.person_cues over the lexicons'
    waiting: Mapping[str, str]  # floor.waiting_message, by language
    escalate_on_guard: bool
    languages: Sequence[str]  # summarizer.languages: the conversation's language is one of them

    @classmethod
    def of(cls, settings: Settings) -> DeskSettings:
        f = settings.floor
        cues = stage.cue_table(f.person_cues, stage.PERSON_CUES)
        return cls(
            cues, {**WAITING_MESSAGE, **f.waiting_message}, f.escalate_on_guard, tuple(settings.summarizer.languages)
        )


@dataclass(frozen=True)
class Answered:
    """The model (or the waiting sentence) answered: the stored exchange, the state after it (``bot``
    when it did not change), and the waiting sentence when this answer asked for a person."""

    result: TurnResult
    floor: Floor
    notice: str = ""


@dataclass(frozen=True)
class Held:
    """No answer: a person is asked for or holds the conversation. The customer's stored turn, the
    state, and the waiting sentence while nobody has taken it yet."""

    customer: Turn
    floor: Floor
    notice: str = ""


Reply = Answered | Held


def transition(current: Floor, action: FloorAction, by: str, *, reason: str = "", now: float) -> Floor:
    """The state after ``action`` by client ``by``: the same state when there is nothing to change,
    :class:`FloorConflict` when the action is not allowed from here."""
    if current.state == "closed":
        if action == "close":
            return current
        raise FloorConflict("this conversation is closed; a new one starts with the next session")
    if action == "ask":
        return Floor("needs_person", reason, now, by) if current.state == "bot" else current
    if action == "take":
        if current.state == "with_person":
            if current.by == by:
                return current
            raise FloorConflict("another operator holds this conversation; they must hand it back first")
        return Floor("with_person", "taken", now, by)
    if action == "hand_back":
        if current.state == "bot":
            raise FloorConflict("the model already answers this conversation: there is nothing to hand back")
        if current.state == "with_person" and current.by != by:
            raise FloorConflict("another operator holds this conversation; only they can hand it back")
        return Floor("bot", "handed_back", now, by)
    return Floor("closed", "closed", now, by)


class Desk:
    """Customer messages and state changes, in the session's lane (see the module's docstring)."""

    def __init__(self, sessions: Sessions, pipeline: Pipeline, settings: DeskSettings) -> None:
        self.store = sessions.store
        self.sessions = sessions
        self.pipeline = pipeline
        self.settings = settings

    def reply(
        self,
        session_id: str,
        text: str,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        hold: bool = True,
    ) -> Reply:
        """A customer message: answered with the waiting sentence, answered by the model, or (``hold``)
        stored for the person who has the session. Without ``hold`` a held session raises
        :class:`PersonHolds` and nothing is stored (the OpenAI endpoint has no place to say so). The
        session is read once, here: its floor decides, and the model answers from the same read."""
        snap = self.store.snapshot(session_id)
        floor = snap.session.floor
        if floor.state == "bot":
            language = stage.asks_for_person(text, self.settings.person_cues)
            if language is not None:
                return self._waiting_answer(snap, text, language)
            result = self.pipeline.answer(session_id, text, on_token=on_token, cancel=cancel, snapshot=snap)
            if self._escalates(session_id, result):
                _, after = self.store.change_floor(session_id, self._change("ask", "appliance", "", "guard"))
                return Answered(result, after, self.waiting(session_id))
            return Answered(result, Floor())
        if not hold or floor.state == "closed":
            raise PersonHolds.of(floor.state)
        customer = self.sessions.record_turn(session_id, "customer", text)
        return Held(customer, floor, self.waiting(session_id) if floor.state == "needs_person" else "")

    def answer(
        self, session_id: str, text: str, *, on_token: OnToken | None = None, cancel: threading.Event | None = None
    ) -> TurnResult:
        """A message that must be answered now (the OpenAI endpoint): 409, and nothing stored, while a
        person is asked for or holds the conversation."""
        reply = self.reply(session_id, text, on_token=on_token, cancel=cancel, hold=False)
        assert isinstance(reply, Answered)  # without hold, a held session raised
        return reply.result

    def change(
        self, session_id: str, action: FloorAction, role: str, client: str, reason: str = ""
    ) -> tuple[Floor, Floor]:
        """A state change by the API (``ask``: the button; ``take``, ``hand_back``, ``close``): the
        state before and after."""
        return self.store.change_floor(session_id, self._change(action, role, client, reason))

    def waiting(self, session_id: str, language: str | None = None) -> str:
        """``floor.waiting_message`` in ``language``, else the conversation's, else the first configured."""
        texts = self.settings.waiting
        if language is None and texts:
            language = conversation_language(self.store.turns(session_id), self.settings.languages or ("en",))
        first = self.settings.languages[0] if self.settings.languages else "en"
        return texts.get(language or first) or texts.get(first) or texts.get("en") or next(iter(texts.values()), "")

    def _change(self, action: FloorAction, role: str, client: str, reason: str) -> FloorChange:
        now = time.time()
        return FloorChange(lambda current: transition(current, action, client, reason=reason, now=now), role)

    def _waiting_answer(self, snap: Snapshot, text: str, language: str) -> Answered:
        """The customer asked for a person: their message, the waiting sentence as the answer (no
        generation) and the state change, in one transaction."""
        started = time.monotonic()
        session_id = snap.session.id
        _, message, facts = self.sessions.said(session_id, "customer", text, snapshot=snap)
        answer = self.waiting(session_id, language)
        record = TurnRecord(
            stage=stage.detect(snap.turns, message),
            model="",  # no model wrote it
            manifest=Manifest(
                policy=snap.session.policy,
                budget=0,
                total_tokens=0,
                parts=(),
                cuts=("no prompt: the customer asked for a person",),
            ),
            prompt_tokens=0,
            completion_tokens=0,
            timings=Timings(total_s=time.monotonic() - started),
            check=CheckResult(),
            source=AnswerSource.WAITING,
        )
        change = self._change("ask", "customer", "", "asked")
        result = self.store.append_exchange(session_id, message, answer, record, ledger=facts, floor=change)
        return Answered(result, self.store.floor(session_id), answer)

    def _escalates(self, session_id: str, result: TurnResult) -> bool:
        """The guard could not get this answer right: still unsupported facts after a repair, a span
        redacted where the policy is to regenerate (a checked stream's retry failed too, or a fact
        failed after text was shown), an answer from passages replaced by the not-found text for one,
        or its last resort for the second answer in a row."""
        if not self.settings.escalate_on_guard:
            return False
        check = result.record.check
        fell_back = check.action == GuardAction.REDACT and self.pipeline.settings.guard == "regenerate"
        if check.action == GuardAction.NOT_FOUND or fell_back or (check.action in REPAIRS and check.findings):
            return True
        if not _last_resort(result.record):
            return False
        records = self.store.records(session_id, last=2)  # this answer's and the one before it
        return len(records) == 2 and _last_resort(records[0][1])


def _last_resort(record: TurnRecord) -> bool:
    return record.source in LAST_RESORTS
