"""The model's queue as the routes use it: every job in its lane, within its caller's share, under a deadline.

Every job that touches a session's transcript (an answer, an operator's recorded turn, an erasure)
runs in that session's lane, so one session's turns are written in order and nothing lands between
an answer's snapshot and its write; a transcript sent whole is answered in its client's own lane. A
request is validated before it is queued (nothing is queued, nor stored, for a bad one), and a
session's turn limit is checked inside its lane, just before the turn is made. Each call waits for
the job's first piece of text (or its failure), so that a failure before the answer starts is
answered with its own status.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from fastapi import Request

from appliance.app import Appliance
from appliance.protocols import OnToken
from appliance.serve.auth import Principal
from appliance.serve.bodies import last_user_text
from appliance.serve.limits import Limits, QueueShare
from appliance.serve.streaming import Run
from appliance.turn.floor import Desk, DeskSettings, FloorAction, Reply
from appliance.types import Floor, Message, Role, Sampling, Turn, TurnResult

T = TypeVar("T")

Started = tuple[Run[T], str | None]  # the job, and its first piece of text (None: it is already done)


class Lanes:
    """Queue the routes' jobs: answers, recorded turns, erasures."""

    def __init__(self, appliance: Appliance, limits: Limits, share: QueueShare, timeout_s: float) -> None:
        self.queue = appliance.queue
        self.pipeline = appliance.pipeline
        self.sessions = appliance.sessions
        self.store = appliance.store
        self.limits = limits
        self.share = share
        self.timeout_s = timeout_s
        # Whether the model may answer a session, decided in its lane (appliance.turn.floor).
        self.desk = Desk(appliance.sessions, appliance.pipeline, DeskSettings.of(appliance.settings))

    async def run(
        self, request: Request, who: Principal, key: str, work: Callable[[threading.Event, OnToken], T]
    ) -> Started[T]:
        """Queue ``work`` in lane ``key`` within the caller's share, and wait for its first piece (or its failure)."""
        release = self.share.claim(who.client)
        run: Run[T] = Run(self.queue, time.monotonic() + self.timeout_s)
        run.start(key, work, on_start=release, owner=who.client)
        return run, await run.first(request)

    async def answer(self, request: Request, who: Principal, session_id: str, text: str) -> Started[TurnResult]:
        """Validate the text (no store access), then queue the answer in the session's lane; refused
        while a person is asked for or holds the session (the OpenAI endpoint has no place to say so)."""
        message = self.sessions.validate_message(text)

        def answer(cancel: threading.Event, on_token: OnToken) -> TurnResult:
            self._room_for(session_id, 2)
            return self.desk.answer(session_id, message, on_token=on_token, cancel=cancel)

        return await self.run(request, who, session_id, answer)

    async def talk(self, request: Request, who: Principal, session_id: str, text: str) -> Started[Reply]:
        """A customer message in the session's lane: answered, or stored for the person who has it."""
        message = self.sessions.validate_message(text)

        def talk(cancel: threading.Event, on_token: OnToken) -> Reply:
            self._room_for(session_id, 2)
            return self.desk.reply(session_id, message, on_token=on_token, cancel=cancel)

        return await self.run(request, who, session_id, talk)

    async def floor(
        self, request: Request, who: Principal, session_id: str, action: FloorAction
    ) -> Started[tuple[Floor, Floor]]:
        """A change of the session's state, in its lane: after any answer in progress, before the next."""
        reason = "button" if action == "ask" else ""
        return await self.run(
            request,
            who,
            session_id,
            lambda cancel, on_token: self.desk.change(session_id, action, who.role, who.client, reason),
        )

    async def transcript(
        self, request: Request, who: Principal, messages: Sequence[Message], sampling: Sampling
    ) -> Started[TurnResult]:
        """A transcript sent whole, answered under the ``raw`` policy in the caller's lane; nothing stored."""
        self.sessions.validate_message(last_user_text(messages))
        return await self.run(
            request,
            who,
            f"client:{who.client}",
            lambda cancel, on_token: self.pipeline.answer_transcript(
                messages, sampling=sampling, on_token=on_token, cancel=cancel
            ),
        )

    async def record(self, request: Request, who: Principal, session_id: str, role: Role, text: str) -> Started[Turn]:
        """Validate the text, then store the turn in the session's lane, behind any answer in progress."""
        valid = self.sessions.validate_message(text)

        def record(cancel: threading.Event, on_token: OnToken) -> Turn:
            self._room_for(session_id, 1)
            return self.sessions.record_turn(session_id, role, valid)

        return await self.run(request, who, session_id, record)

    def _room_for(self, session_id: str, adding: int) -> None:
        """In the session's lane, before a turn is made: refuse one past ``server.max_turns_per_session``."""
        self.limits.turns(self.store.turn_count(session_id), adding)
