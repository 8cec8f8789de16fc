"""The hot path of one turn: the only place where the stages meet.

The pipeline receives its parts (store, responder, policies) already built; it builds none.
A turn is written only after the answer is complete, in one transaction, so an interrupted or
cancelled turn leaves nothing behind.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import stage
from .context import ContextPolicy, PromptSpec
from .errors import ConfigError, InputError, MessageTooLong
from .responder import ChatModel, OnToken, Sampling
from .store import Store
from .types import ROLES, Session, SummaryVersion, Timings, Turn, TurnRecord, TurnResult


@dataclass(frozen=True)
class PipelineSettings:
    system_prompt: str
    instruction: str
    budget_tokens: int
    max_message_chars: int
    default_policy: str
    sampling: Sampling


class Pipeline:
    def __init__(
        self,
        store: Store,
        responder: ChatModel,
        policies: Mapping[str, ContextPolicy],
        settings: PipelineSettings,
    ) -> None:
        if settings.default_policy not in policies:
            raise ConfigError(f"context.policy: unknown policy {settings.default_policy!r}")
        self.store = store
        self.responder = responder
        self.policies = dict(policies)
        self.settings = settings
        # Called with the session id after every stored turn (the summary worker listens here).
        self.after_store: list[Callable[[str], None]] = []
        # Set while an answer is being generated, so background work can yield to it.
        self.answering = _Gauge()

    def new_session(self, *, policy: str | None = None, title: str = "") -> Session:
        name = policy or self.settings.default_policy
        if name not in self.policies:
            raise InputError(f"unknown policy {name!r} (known: {', '.join(sorted(self.policies))})", field="policy")
        return self.store.create_session(policy=name, title=title)

    def validate_message(self, text: str) -> str:
        """The message as it will be stored, or ``InputError`` naming what is wrong with it."""
        if not isinstance(text, str) or not text.strip():
            raise InputError("empty message: there is nothing to answer", field="text")
        limit = self.settings.max_message_chars
        if len(text) > limit:
            raise MessageTooLong(
                f"message of {len(text)} characters is longer than the limit of {limit} (chat.max_message_chars)",
                field="text",
                limit=limit,
            )
        return text.strip()

    def answer(
        self,
        session_id: str,
        text: str,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
    ) -> TurnResult:
        """Answer a customer message and store the exchange; nothing is stored if anything fails."""
        started = time.perf_counter()
        message = self.validate_message(text)
        snap = self.store.snapshot(session_id)
        turn_stage = stage.detect(snap.turns, message)
        policy = self.policies[snap.session.policy]
        spec = PromptSpec(
            system=self.settings.system_prompt,
            instruction=self.settings.instruction,
            budget=self.settings.budget_tokens,
        )
        t0 = time.perf_counter()
        prompt = policy.build(snap, message, spec, self.responder)
        context_ms = (time.perf_counter() - t0) * 1000
        with self.answering:
            generation = self.responder.generate(
                prompt.messages, self.settings.sampling, on_token=on_token, cancel=cancel
            )
        t1 = time.perf_counter()
        record = TurnRecord(
            stage=turn_stage,
            model=generation.model,
            manifest=prompt.manifest,
            prompt_tokens=generation.prompt_tokens,
            completion_tokens=generation.completion_tokens,
            timings=Timings(
                context_ms=context_ms,
                ttft_s=generation.ttft_s,
                generate_s=generation.total_s,
                total_s=t1 - started,
            ),
        )
        result = self.store.append_exchange(session_id, message, generation.text, record)
        store_ms = (time.perf_counter() - t1) * 1000
        self._stored(session_id)
        # The stored record's timings cannot include the store's own write; the caller's copy does.
        timings = Timings(**{**record.timings.__dict__, "store_ms": store_ms, "total_s": time.perf_counter() - started})
        return TurnResult(
            session_id=result.session_id,
            customer=result.customer,
            agent=result.agent,
            record=TurnRecord(**{**record.__dict__, "timings": timings}),
        )

    # turns without an answer, and operator controls ------------------------------------------------

    def record_turn(self, session_id: str, role: str, text: str) -> Turn:
        """Record a turn without generating: a human agent taking over, or a replayed transcript."""
        if role not in ROLES:
            raise InputError(f"role must be one of {', '.join(ROLES)}, got {role!r}", field="role")
        turn = self.store.append_turn(session_id, role, self.validate_message(text))
        self._stored(session_id)
        return turn

    def edit_summary(self, session_id: str, text: str) -> SummaryVersion:
        """An operator's summary: stored as a new version covering every turn so far."""
        if not text.strip():
            raise InputError("empty summary", field="text")
        covers_to = len(self.store.turns(session_id)) - 1
        return self.store.add_summary(
            SummaryVersion(session_id=session_id, version=0, text=text.strip(), covers_to=covers_to, author="operator")
        )

    def restore_summary(self, session_id: str, version: int) -> SummaryVersion:
        """Make an earlier version current again, as a new version (history is never rewritten)."""
        old = next((s for s in self.store.summaries(session_id) if s.version == version), None)
        if old is None:
            raise InputError(f"session {session_id} has no summary version {version}", field="version")
        return self.store.add_summary(
            SummaryVersion(
                session_id=session_id, version=0, text=old.text, covers_to=old.covers_to, author="operator",
                reason=f"restored version {version}",
            )
        )

    def set_summary_paused(self, session_id: str, paused: bool) -> None:
        self.store.set_summary_paused(session_id, paused)
        if not paused:
            self._stored(session_id)

    def _stored(self, session_id: str) -> None:
        for hook in self.after_store:
            hook(session_id)


class _Gauge:
    """Counts answers in progress; ``busy`` is true while any is."""

    def __init__(self) -> None:
        self._n = 0
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    def __enter__(self) -> None:
        with self._lock:
            self._n += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._n -= 1
            if self._n == 0:
                self._idle.notify_all()

    @property
    def busy(self) -> bool:
        return self._n > 0

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no answer is in progress; False if ``timeout`` passed first."""
        with self._lock:
            return self._idle.wait_for(lambda: self._n == 0, timeout)
