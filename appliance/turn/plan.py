"""The plan of one turn: every decision about it, made once, before its prompt is built.

The pipeline makes the plan (:meth:`Pipeline.plan`); the steps after it (the prompt's build, the
generation, the check, the guard) are functions of the plan and of what the step before returned.
The plan is data: it names the model that answers (``answerer``) and its session's policy, and the
live models, policies and counters are the :class:`Parts` the composition root made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from appliance.context import ContextPolicy, PromptSpec
from appliance.facts import checker, readback
from appliance.knowledge import Retrieval
from appliance.protocols import ChatModel, TokenCounter
from appliance.types import CheckResult, Grounding, LedgerEntry, Manifest, Prompt, Sampling, Snapshot, Stage, Turn

# Which model answers: the responder, or the one routed to for early turns (routing.early).
Answerer = Literal["responder", "early"]


@dataclass(frozen=True)
class TurnPlan:
    """What answers the message, from what, and how.

    ``message`` is the customer's text as it is prompted, checked and stored (secrets masked);
    ``customer`` is its turn with a provisional index (the store assigns the real one). ``facts`` are
    the session's ledger with the message's own facts; ``request`` and ``wanted`` the read-back
    question, if it is one, and the facts it asks for (already named and placed in ``spec``).
    ``sampling`` is the one the answer uses: the caller's, else the configured one, at temperature 0
    for a read-back and at ``knowledge.temperature`` for a question with passages.

    ``retrieval`` is the knowledge step's outcome (None without a knowledge base): the fetch check's
    decision and the passages found, which ``spec`` carries. ``not_found`` is the fixed answer, in the
    conversation's language, to a question that needs the documents when none of them answers it
    (empty otherwise: the model answers). ``sources`` are the texts of the passages the answer's
    prompt placed (:meth:`placing`): the checker's source besides the conversation. ``answerable``:
    the responder's probability that those passages answer the question (None: not asked); under
    ``knowledge.min_answerable`` the plan's ``not_found`` is set after the prompt is built.
    """

    snapshot: Snapshot
    message: str
    customer: Turn
    stage: Stage
    answerer: Answerer
    spec: PromptSpec
    facts: tuple[LedgerEntry, ...]
    request: readback.Request | None
    wanted: tuple[readback.Asked, ...]
    recalled: tuple[int, ...]
    sampling: Sampling
    retrieval: Retrieval | None = None
    not_found: str = ""
    sources: tuple[str, ...] = ()
    answerable: float | None = None  # whether the placed passages answer (types.Judgement; None: not asked)
    yes: float | None = None  # the responder's own yes to that
    # Each text's check against this plan (its sources fixed): a text is checked once, however many
    # steps ask (the stream's last unit and the whole answer are often the same text). Not an init
    # field, so a plan made from this one by ``dataclasses.replace`` (other sources) starts empty.
    _checked: dict[str, CheckResult] = dataclasses.field(init=False, default_factory=dict, compare=False, repr=False)

    @property
    def session_id(self) -> str:
        return self.snapshot.session.id

    @property
    def cache_key(self) -> str | None:
        """The model's prefix cache key: the session, none for a transcript sent whole."""
        return self.snapshot.session.id or None

    def placing(self, manifest: Manifest) -> TurnPlan:
        """This plan with the passages ``manifest`` says its prompt placed as the answer's sources."""
        placed = {c.chunk_id for c in manifest.passages}
        texts = tuple(p.text for p in self.spec.passages if p.chunk_id in placed)
        return dataclasses.replace(self, sources=texts)

    def grounding(self, manifest: Manifest) -> Grounding | None:
        """What the record keeps of the knowledge step: the decision, the passages ``manifest`` placed,
        and whether the answer is the not-found text; None without a knowledge base."""
        if self.retrieval is None:
            return None
        found = self.retrieval.passages
        return Grounding(
            self.retrieval.decision,
            manifest.passages,
            len(found),
            not_found=bool(self.not_found),
            answerable=self.answerable,
            yes=self.yes,
        )

    def check(self, answer: str) -> CheckResult:
        """``answer`` checked against everything the conversation supports, the message included, and
        the passages of the operator's documents its prompt placed."""
        done = self._checked.get(answer)
        if done is None:
            snap = self.snapshot
            done = self._checked[answer] = checker.check(
                answer,
                ledger=self.facts,
                summary=snap.summary.text if snap.summary else "",
                transcript=snap.turns,
                question=self.message,
                passages=self.sources,
            )
        return done


@dataclass(frozen=True)
class Parts:
    """The live parts a plan names: the models that answer, the context policies by name, and the
    token counter of a model (one per model, cached by its maker: a build counts the same turn lines
    again at every turn)."""

    responder: ChatModel
    early: ChatModel | None
    policies: Mapping[str, ContextPolicy]
    counter_for: Callable[[ChatModel], TokenCounter]

    def of(self, answerer: Answerer) -> ChatModel:
        return self.early if answerer == "early" and self.early is not None else self.responder

    def model(self, plan: TurnPlan) -> ChatModel:
        """The model that answers ``plan``."""
        return self.of(plan.answerer)

    def counter(self, plan: TurnPlan) -> TokenCounter:
        return self.counter_for(self.model(plan))

    def prompt(self, plan: TurnPlan, spec: PromptSpec | None = None) -> Prompt:
        """The prompt of the plan's session's policy, for ``spec`` (a stricter retry's) or the plan's own."""
        policy = self.policies[plan.snapshot.session.policy]
        return policy.build(plan.snapshot, plan.message, spec or plan.spec, self.counter(plan), plan.recalled)
