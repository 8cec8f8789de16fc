"""Session services: what the API does to a session besides answering it.

A session is made, a message checked before it is queued, a turn recorded without generating (a
person's reply, a replayed transcript), a summary edited, restored or paused. What follows a write
(the summary worker, the warm-up, the event stream) hangs on the store's one hook after a commit
(``Store.after_events``). The turn itself is
:mod:`~appliance.turn.pipeline`'s; the floor's state changes are :mod:`~appliance.turn.floor`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from appliance.errors import InputError, MessageTooLong
from appliance.facts import ledger, slots
from appliance.facts.vocabulary import Vocabulary
from appliance.store import Store
from appliance.types import ROLES, LedgerEntry, Role, Session, Snapshot, SummaryVersion, Turn


@dataclasses.dataclass(frozen=True)
class SessionRules:
    """What the services are told, from the pipeline's settings (the composition root resolves both)."""

    default_policy: str  # context.policy
    max_message_chars: int  # chat.max_message_chars
    vocabulary: Vocabulary  # what is masked and which cues ask
    mask_secrets: bool  # privacy.mask_secrets


class Sessions:
    """Session services over the store (see the module's docstring)."""

    def __init__(self, store: Store, policies: Collection[str], rules: SessionRules) -> None:
        self.store = store
        self.policies = frozenset(policies)
        self.rules = rules

    def new_session(self, *, policy: str | None = None, title: str = "") -> Session:
        name = policy or self.rules.default_policy
        if name not in self.policies:
            raise InputError(f"unknown policy {name!r} (known: {', '.join(sorted(self.policies))})", field="policy")
        return self.store.create_session(policy=name, title=title)

    def validate_message(self, text: str) -> str:
        """The message as it will be stored, or ``InputError`` naming what is wrong with it."""
        if not isinstance(text, str) or not text.strip():
            raise InputError("empty message: there is nothing to answer", field="text")
        limit = self.rules.max_message_chars
        if len(text) > limit:
            raise MessageTooLong(
                f"message of {len(text)} characters is longer than the limit of {limit} (chat.max_message_chars)",
                field="text",
                limit=limit,
            )
        return text.strip()

    def record_turn(self, session_id: str, role: str, text: str) -> Turn:
        """Record a turn without generating (a person's reply, a replayed transcript) as :meth:`said` reads
        it; the store gives it its index. Callers that also answer run this in the session's lane."""
        said, message, facts = self.said(session_id, role, text)
        return self.store.append_turn(session_id, said, message, ledger=facts)

    def said(
        self, session_id: str, role: str, text: str, *, snapshot: Snapshot | None = None
    ) -> tuple[Role, str, tuple[LedgerEntry, ...]]:
        """A turn as stored: its role, its text with secrets masked, its facts read with the turn before;
        the session's turns and ledger are the ``snapshot`` the caller read in the session's lane, else
        read here."""
        if role not in ROLES:
            raise InputError(f"role must be one of {', '.join(ROLES)}, got {role!r}", field="role")
        message = self.validate_message(text)
        said: Role = "customer" if role == "customer" else "agent"
        cues = self.rules.vocabulary
        # the agent's request a reply answers; secrets just asked for (only these are read)
        before = snapshot.turns[-6:] if snapshot is not None else self.store.turns(session_id, last=6)
        if self.rules.mask_secrets:
            message = slots.mask(message, before, role=said, cues=cues)
        prior = snapshot.ledger if snapshot is not None else self.store.ledger(session_id)
        said_turn, asked = Turn(session_id, -1, said, message), before[-1] if before else None  # -1: the store's
        return said, message, ledger.entries_for(said_turn, asked, cues=cues, prior=prior)

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
        again = dataclasses.replace(old, version=0, author="operator", status="accepted", created_at=0.0)
        return self.store.add_summary(dataclasses.replace(again, reason=f"restored version {version}"))

    def set_summary_paused(self, session_id: str, paused: bool) -> None:
        self.store.set_summary_paused(session_id, paused)
