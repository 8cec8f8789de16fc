"""The warm-up: the work done for a session's next message before it is sent, off the answer's path.

While the customer types (or the session is idle), the :class:`~appliance.turn.prewarm.Prewarmer`
asks for the next prompt as far as it is known (:meth:`Warmup.next_prefix`, its prefix evaluated
into the model's cache), the responder's judgement of the draft's passages (:meth:`Warmup.judge_ahead`)
and the older turns' embeddings (:meth:`Warmup.embed_ahead`). What it found for a message sent as
drafted waits in :class:`Ahead`, which the turn takes from: the passages in the draft's order, and
the judgement, used only where the sent message places the same passages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from appliance.context import before_question
from appliance.errors import InputError, SessionNotFound
from appliance.protocols import ChatModel
from appliance.turn import embeddings
from appliance.turn.grounding import placed_passages
from appliance.turn.plan import TurnPlan
from appliance.turn.timing import TurnTimer
from appliance.types import Judgement, Message, Prompt

if TYPE_CHECKING:
    from appliance.turn.pipeline import Pipeline


class Ahead:
    """By session: the passages the last draft placed (for the message to keep their order), the
    draft's plan and prompt (to be judged once its prefix is warm), and that judgement (for a message
    sent as drafted)."""

    def __init__(self) -> None:
        self.passages: dict[str, tuple[int, ...]] = {}
        self.drafted: dict[str, tuple[TurnPlan, Prompt]] = {}
        self.judged: dict[str, tuple[str, tuple[int, ...], Judgement]] = {}

    def take_passages(self, session_id: str) -> tuple[int, ...]:
        return self.passages.pop(session_id, ())

    def take_judgement(self, session_id: str, message: str, prompt: Prompt) -> Judgement | None:
        """The judgement made ahead, if it was of this message with the passages this prompt placed."""
        ahead = self.judged.pop(session_id, None)
        if ahead is not None and ahead[:2] == (message, placed_passages(prompt)):
            return ahead[2]
        return None


class Warmup:
    """The pipeline's planning, run ahead for a session's next message (see the module's docstring);
    what it finds is kept in the pipeline's :class:`Ahead`."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def next_prefix(self, session_id: str, draft: str = "") -> tuple[ChatModel, tuple[Message, ...]] | None:
        """The model that will answer the session's next message, and that prompt as far as it is
        known before the message: built for an empty question and cut where the question begins
        (what depends on the question comes after the stable parts). With ``draft``, what the customer
        is typing, it is planned as for that message, passages included: a message that retrieves the
        same ones evaluates only itself. None: the session is gone, nothing fits, or no generation."""
        p = self.pipeline
        try:
            snap = p.store.snapshot(session_id)
            if draft.strip():
                plan = p.plan(snap, p.sessions.validate_message(draft), TurnTimer())
                model, prompt = p.parts.model(plan), None if plan.not_found else p.parts.prompt(plan)
                p.ahead.passages[session_id] = placed_passages(prompt)
                if prompt is not None:
                    p.ahead.drafted[session_id] = (plan, prompt)
            else:
                _, answerer, spec = p.frame(snap, "", None)
                model = p.parts.of(answerer)
                prompt = p.policies[snap.session.policy].build(snap, "", spec, p.counter_for(model))
        except (SessionNotFound, InputError):
            return None
        return (model, before_question(prompt.messages)) if prompt is not None else None

    def judge_ahead(self, session_id: str) -> None:
        """Judge whether the passages the session's last draft placed answer it (its prefix warmed
        already, so this evaluates the draft's question): a message sent as drafted, whose prompt places
        the same passages, uses that judgement instead of asking after Enter."""
        drafted = self.pipeline.ahead.drafted.pop(session_id, None)
        if drafted is None:
            return
        plan, prompt = drafted
        found = self.pipeline.grounding.judge(
            self.pipeline.parts.model(plan), prompt, plan.spec.instruction, plan.cache_key
        )
        if found is not None:
            self.pipeline.ahead.judged[session_id] = (plan.message, placed_passages(prompt), found)

    def embed_ahead(self, session_id: str) -> int:
        """Embed and store the older turns recall may choose from, off the answer's path (a message
        that points back then embeds only itself); how many turns were new."""
        p = self.pipeline
        if p.recall is None or p.settings.recall_k <= 0:
            return 0  # without reading the session
        try:
            snap = p.store.snapshot(session_id)
        except SessionNotFound:
            return 0
        candidates = p.recall_candidates(snap, p.policies.get(snap.session.policy))
        return embeddings.embedded(p.store, p.recall, session_id, candidates)[1] if candidates else 0
