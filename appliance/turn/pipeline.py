"""The hot path of one turn: the only place where the stages meet.

    snapshot → plan (mask, stage, facts, read-back, recall; knowledge: fetch check, retrieval)
             → context → generate (streamed) → check → guard (repair, refine) → store

A question that needs the operator's documents when no passage answers it gets the configured
``knowledge.not_found`` text instead of a generation (seed 003: never an invented answer).

The pipeline receives its parts (store, models, policies, recall) already built; it builds none.
Each turn's decisions are made once into a :class:`~appliance.turn.plan.TurnPlan`; the steps after
it are functions of the plan (the guard's in :mod:`~appliance.turn.guard`), timed by one
:class:`~appliance.turn.timing.TurnTimer`. A turn is written only after the answer is complete, in
one transaction, so an interrupted or cancelled turn leaves nothing behind. Summaries are made
elsewhere (the worker), never here.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence

from appliance import stage
from appliance.context import ContextPolicy, PromptSpec
from appliance.context.tokens import ResponderCounter
from appliance.errors import ConfigError, InputError, PersonHolds
from appliance.facts import ledger, readback, slots
from appliance.knowledge import Knowledge
from appliance.protocols import ChatModel, OnToken, Recaller
from appliance.store import Store
from appliance.turn import answering, embeddings, guard
from appliance.turn.gauge import AnswerGauge
from appliance.turn.grounding import KnowledgeStep, in_warm_order, not_found_answer
from appliance.turn.plan import Answerer, Parts, TurnPlan
from appliance.turn.sessions import Sessions
from appliance.turn.settings import PipelineSettings, session_rules
from appliance.turn.timing import TurnTimer
from appliance.turn.warmup import Ahead
from appliance.types import (
    AnswerSource,
    Generation,
    Grounding,
    LedgerEntry,
    Manifest,
    Message,
    Prompt,
    Sampling,
    Session,
    Snapshot,
    Stage,
    Turn,
    TurnRecord,
    TurnResult,
)

# The policy that answers a transcript sent whole (no session): the whole conversation, oldest first out.
TRANSCRIPT_POLICY = "raw"


class Pipeline:
    def __init__(
        self,
        store: Store,
        responder: ChatModel,
        policies: Mapping[str, ContextPolicy],
        settings: PipelineSettings,
        *,
        recall: Recaller | None = None,
        early_responder: ChatModel | None = None,
        refiner: ChatModel | None = None,
        knowledge: Knowledge | None = None,
    ) -> None:
        if settings.default_policy not in policies:
            raise ConfigError(f"context.policy: unknown policy {settings.default_policy!r}")
        if settings.guard not in guard.GUARD_POLICIES:
            raise ConfigError(f"guard.policy: unknown policy {settings.guard!r}")
        self.store = store
        self.responder = responder
        self.early_responder = early_responder
        self.refiner = refiner
        self.recall = recall
        self.knowledge = knowledge
        self.grounding = KnowledgeStep(
            knowledge,
            settings.passage_tokens,
            settings.grounded_instruction,
            settings.not_found,
            settings.languages,
            min_answerable=settings.min_answerable,
            covered=settings.covered,
        )
        self.policies = dict(policies)
        self.settings = settings
        # The session services over the same store and settings (the appliance hands them to the API).
        self.sessions = Sessions(store, policies, session_rules(settings))
        # One cached counter per model: a build counts the same turn lines again at every turn.
        self._counters: dict[int, ResponderCounter] = {}
        # Set while an answer is being generated, so background work can yield to it.
        self.answering = AnswerGauge()
        # What the warm-up found for each session's next message (appliance.turn.warmup).
        self.ahead = Ahead()

    @property
    def parts(self) -> Parts:
        """The live parts the turn's plans name: the models as the pipeline holds them now."""
        return Parts(self.responder, self.early_responder, self.policies, self.counter_for)

    def counter_for(self, model: ChatModel) -> ResponderCounter:
        counter = self._counters.get(id(model))
        if counter is None:
            counter = self._counters[id(model)] = ResponderCounter(model)
        return counter

    # the hot path -----------------------------------------------------------------------------------

    def answer(
        self,
        session_id: str,
        text: str,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        persist: bool = True,
        snapshot: Snapshot | None = None,
    ) -> TurnResult:
        """Answer a customer message and store the exchange; nothing is stored if anything fails.

        ``on_token`` sees the answer as it streams: under ``guard.stream = "checked"`` only text the
        checker passed, which is the text stored; under ``raw`` the first generation, which the guard
        may replace after (the result's agent turn holds what was stored, ``record.check.original``
        what streamed).
        With ``persist=False`` nothing is stored at all (an evaluation's probe question, asked
        without changing the conversation); the result's turns carry the indices they would have.
        ``snapshot`` is the session as the caller read it in the session's lane (the desk, which
        decided from its floor that the model answers), else it is read here: the turn's one read.
        """
        timer = TurnTimer()
        message = self.sessions.validate_message(text)
        snap = snapshot if snapshot is not None else self.store.snapshot(session_id)
        if snap.session.floor.state != "bot":  # a person is asked for or holds it (appliance.turn.floor)
            raise PersonHolds.of(snap.session.floor.state)
        plan = self.plan(snap, message, timer, warmed=self.ahead.take_passages(session_id))
        return self._answer(plan, timer, on_token=on_token, cancel=cancel, persist=persist)

    def answer_transcript(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling | None = None,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
    ) -> TurnResult:
        """Answer a conversation a client sends whole (the OpenAI endpoint without a session).

        The messages become an unsaved transcript answered like a session of the ``raw`` policy (the
        oldest turns give way, checked and guarded); system messages replace the configured one."""
        timer = TurnTimer()
        if not messages or messages[-1].role != "user":
            raise InputError("the last message must be the customer's (role user)", field="messages")
        message = self.sessions.validate_message(messages[-1].content)
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        spoken = [m for m in messages[:-1] if m.role != "system"]
        turns = tuple(Turn("", i, "customer" if m.role == "user" else "agent", m.content) for i, m in enumerate(spoken))
        cues = self.settings.vocabulary
        if self.settings.mask_secrets:
            turns = slots.masked(turns, cues=cues)
        snap = Snapshot(
            session=Session(id="", created_at=0.0, policy=TRANSCRIPT_POLICY),
            turns=turns,
            ledger=ledger.entries(turns, cues=cues),
        )
        plan = self.plan(snap, message, timer, system=system or None, sampling=sampling)
        return self._answer(plan, timer, on_token=on_token, cancel=cancel, persist=False)

    def plan(
        self,
        snap: Snapshot,
        message: str,
        timer: TurnTimer,
        *,
        system: str | None = None,
        sampling: Sampling | None = None,
        warmed: Sequence[int] = (),
    ) -> TurnPlan:
        """The turn's decisions, made once: the masked message, its stage, model and prompt spec, its
        facts, the read-back it asks for, the turns recalled for it, the passages found for it (those a
        draft's warm-up placed, ``warmed``, first: ``grounding.in_warm_order``) or the not-found answer,
        and the sampling. Secrets in the message are masked first (``privacy.mask_secrets``): the masked
        text is what is prompted, checked, stored and summarized. The customer's facts are read with the
        agent's turn before it, so a bare "Yes, Sarah Brown." after "your name?" is a name. A read-back
        question ("what was my account number?") gets the values it asks for placed and named in its
        prompt, and the configured sampling at temperature 0; one whose prompt carries passages, at
        ``knowledge.temperature``. ``system`` replaces the system prompt,
        ``sampling`` the configured sampling (the caller's choice is then kept as it is)."""
        if self.settings.mask_secrets:
            message = slots.mask(message, snap.turns[-6:], cues=self.settings.vocabulary)
        turn_stage, answerer, spec = self.frame(snap, message, system)
        with timer.phase("recall"):
            customer, facts = self._facts(snap, message)
            req = readback.request(message, cues=self.settings.vocabulary)
            wanted = readback.wanted(req, facts) if req is not None else ()
            if wanted:  # a read-back question: the facts it asks for go right before it, and are named after it
                spec = dataclasses.replace(
                    spec.adding(readback.instruction(wanted)), readback=readback.facts_of(wanted)
                )
            recalled = self._recall(snap, message, self.policies[snap.session.policy])
        with timer.phase("knowledge"):  # on the snapshot, whose summary compressed the history (seed 003)
            found = in_warm_order(self.grounding.consult(snap, message, facts, reads_back=req is not None), warmed)
        spec = self.grounding.spec_for(spec, found)
        return TurnPlan(
            snapshot=snap,
            message=message,
            customer=customer,
            stage=turn_stage,
            answerer=answerer,
            spec=spec,
            facts=facts,
            request=req,
            wanted=wanted,
            recalled=recalled,
            sampling=sampling or self._sampling(bool(wanted), bool(spec.passages)),
            retrieval=found,
            not_found=self.grounding.answer_if_not_found(snap, message, found),
        )

    def _facts(self, snap: Snapshot, message: str) -> tuple[Turn, tuple[LedgerEntry, ...]]:
        """The customer's turn, unsaved, and the facts known with it: the ledger's and the message's."""
        # A provisional index for the check and an unsaved result; the store assigns the real one.
        customer = Turn(snap.session.id, len(snap.turns), "customer", message)
        asked = snap.turns[-1] if snap.turns else None
        return customer, snap.ledger + ledger.entries_for(
            customer, asked, cues=self.settings.vocabulary, prior=snap.ledger
        )

    def _sampling(self, reads_back: bool, grounded: bool) -> Sampling:
        """The configured sampling, at ``knowledge.temperature`` for a prompt with passages and at 0 for
        a read-back: the passages or the ledger fix the facts, and sampling only adds ways to get them wrong."""
        s = self.settings
        if grounded:
            return dataclasses.replace(s.sampling, temperature=s.grounded_temperature)
        if reads_back:
            return dataclasses.replace(s.sampling, temperature=0.0)
        return s.sampling

    def _answer(
        self,
        plan: TurnPlan,
        timer: TurnTimer,
        *,
        on_token: OnToken | None,
        cancel: threading.Event | None,
        persist: bool,
    ) -> TurnResult:
        """The plan carried out: the prompt built, the responder asked whether its passages answer the
        question, the answer generated, checked and guarded (or the not-found text given), the
        exchange stored (unless ``persist`` is false)."""
        plan, prompt = self._prompted(plan, timer)
        if plan.not_found:
            manifest, first, kept = not_found_answer(plan, on_token, prompt)
        else:
            assert prompt is not None
            manifest, first, kept = self._generate(plan, prompt, timer, on_token=on_token, cancel=cancel)
        timings = timer.timings(first)
        with timer.phase("store"):
            record = TurnRecord(
                stage=plan.stage,
                model=first.model,
                manifest=manifest,
                prompt_tokens=kept.answer.prompt_tokens,
                completion_tokens=first.completion_tokens,
                timings=timings,
                check=kept.check,
                knowledge=plan.grounding(manifest),
                source=AnswerSource.NOT_FOUND if plan.not_found else kept.check.source,
            )
            agent = Turn(plan.session_id, plan.customer.index + 1, "agent", kept.answer.text)
            if not persist:
                return TurnResult(session_id=plan.session_id, customer=plan.customer, agent=agent, record=record)
            stored = self._store(plan, agent, record)
        # The stored record cannot include the store's own write; the caller's copy does.
        return dataclasses.replace(stored, record=dataclasses.replace(record, timings=timer.timings(first)))

    def grounding_of(self, session_id: str, text: str) -> Grounding | None:
        """What the operator's documents would give an answer to ``text`` in the session, as the turn
        decides it (planned, prompted and judged; nothing generated or stored): the record's knowledge
        part (None without a knowledge base)."""
        timer = TurnTimer()
        plan = self.plan(self.store.snapshot(session_id), self.sessions.validate_message(text), timer)
        plan, prompt = self._prompted(plan, timer)
        return plan.grounding(prompt.manifest if prompt is not None else Manifest("", 0, 0, ()))

    def _prompted(self, plan: TurnPlan, timer: TurnTimer) -> tuple[TurnPlan, Prompt | None]:
        """The plan's prompt, and the plan with what it placed and the responder's judgement of it (its
        not-found answer set where the passages do not answer); no prompt for a plan already not found."""
        if plan.not_found:
            return plan, None
        with timer.phase("context"):
            prompt = self.parts.prompt(plan)
        return self._judged(plan.placing(prompt.manifest), prompt, timer), prompt

    def _judged(self, plan: TurnPlan, prompt: Prompt, timer: TurnTimer) -> TurnPlan:
        """``plan`` with the responder's judgement of whether the passages ``prompt`` placed answer the
        question, and the not-found answer when they do not (``knowledge.min_answerable``)."""
        found = self.ahead.take_judgement(plan.session_id, plan.message, prompt)  # judged from the draft, as sent
        if found is None:
            with self.answering, timer.phase("probe"):
                found = self.grounding.judge(self.parts.model(plan), prompt, plan.spec.instruction, plan.cache_key)
        if found is None:
            return plan
        judged = dataclasses.replace(plan, answerable=found.answerable, yes=found.yes)
        if found.answerable >= self.grounding.min_answerable:
            return judged
        placed = {c.chunk_id for c in prompt.manifest.passages}
        passages = [p for p in plan.spec.passages if p.chunk_id in placed]
        return dataclasses.replace(judged, not_found=self.grounding.unanswered(plan.snapshot, plan.message, passages))

    def _generate(
        self,
        plan: TurnPlan,
        prompt: Prompt,
        timer: TurnTimer,
        *,
        on_token: OnToken | None,
        cancel: threading.Event | None,
    ) -> tuple[Manifest, Generation, guard.Guarded]:
        """The answer to ``prompt`` generated, checked (against the passages it placed too) and
        guarded: the prompt's manifest, the first generation, and the answer kept.

        Under ``guard.stream = "checked"`` the client receives only what the checker passed, as it
        passes, and what it received is the answer kept (:mod:`appliance.turn.answering`)."""
        s = self.settings
        rules = guard.Rules(
            s.guard,
            s.redact_phrase,
            self.refiner,
            cancel,
            self.parts,
            s.safe_answers,
            not_found=lambda: self.grounding.not_found_text(plan.snapshot, plan.message),
        )
        with self.answering:
            first, kept = answering.answer(
                plan, prompt, rules, timer, stream=s.stream, on_token=on_token, cancel=cancel
            )
        return prompt.manifest, first, kept

    def _store(self, plan: TurnPlan, agent: Turn, record: TurnRecord) -> TurnResult:
        """The exchange, its record and both turns' new facts, in one transaction."""
        cues = self.settings.vocabulary
        customer = plan.customer
        return self.store.append_exchange(
            plan.session_id,
            plan.message,
            agent.text,
            record,
            ledger=plan.facts[len(plan.snapshot.ledger) :]
            + ledger.entries_for(agent, customer, cues=cues, prior=plan.facts),
            expect_index=customer.index,  # a turn stored since the snapshot is a conflict, not a mislabel
        )

    def frame(self, snap: Snapshot, message: str, system: str | None) -> tuple[Stage, Answerer, PromptSpec]:
        """The message's stage, the model that answers it, and the prompt's fixed parts."""
        s = self.settings
        turn_stage = stage.detect(
            snap.turns, message, early_turns=s.early_turns, late_cues=s.late_cues, open_cues=s.open_cues
        )
        answerer: Answerer = "early" if turn_stage == "early" and self.early_responder else "responder"
        system, instruction = stage.prompt_texts(
            turn_stage, s.instructions, system if system is not None else s.system_prompt, s.instruction
        )
        spec = PromptSpec(
            system=system, instruction=instruction, budget=s.budget_tokens, passage_tokens=self.grounding.reserve()
        )
        return turn_stage, answerer, spec

    def _recall(self, snap: Snapshot, message: str, policy: ContextPolicy) -> tuple[int, ...]:
        """Older turns to show verbatim again, when the message points back to something."""
        if self.recall is None or not self.recall.points_back(message):
            return ()
        candidates = self.recall_candidates(snap, policy)
        if not candidates:
            return ()
        vectors = embeddings.vectors(self.store, self.recall, snap.session.id, candidates)
        return self.recall.select(message, candidates, vectors, self.settings.recall_k, self.settings.recall_min_score)

    def recall_candidates(self, snap: Snapshot, policy: ContextPolicy | None) -> tuple[Turn, ...]:
        """The older turns recall may choose from under ``policy``: none where recall is off or the
        policy has no place for recalled turns."""
        if self.recall is None or policy is None or self.settings.recall_k <= 0:
            return ()
        return policy.recall_candidates(snap)
