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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from appliance import stage
from appliance.context import ContextPolicy, PromptSpec, before_question
from appliance.context.tokens import ResponderCounter
from appliance.errors import ConfigError, InputError, MessageTooLong, PersonHolds, SessionNotFound
from appliance.facts import ledger, readback, slots
from appliance.facts.vocabulary import Vocabulary
from appliance.knowledge import Knowledge
from appliance.protocols import ChatModel, OnToken, Recaller
from appliance.store import Store
from appliance.turn import answering, embeddings, guard
from appliance.turn.gauge import AnswerGauge
from appliance.turn.grounding import KnowledgeStep, in_warm_order, not_found_answer, placed_passages
from appliance.turn.plan import TurnPlan
from appliance.turn.timing import TurnTimer
from appliance.types import (
    ROLES,
    Generation,
    Grounding,
    Judgement,
    LedgerEntry,
    Manifest,
    Message,
    Prompt,
    Role,
    Sampling,
    Session,
    Snapshot,
    Stage,
    SummaryVersion,
    Turn,
    TurnRecord,
    TurnResult,
)

# The policy that answers a transcript sent whole (no session): the whole conversation, oldest first out.
TRANSCRIPT_POLICY = "raw"


@dataclass(frozen=True)
class PipelineSettings:
    """What the pipeline is told, resolved from the settings by the composition root
    (:func:`appliance.app.pipeline_settings`). No defaults here: the configuration holds them."""

    system_prompt: str  # chat.system_prompt
    instruction: str  # chat.instruction, then stage.NEVER_ASK (stage.standing)
    budget_tokens: int  # context.budget_tokens
    max_message_chars: int  # chat.max_message_chars
    default_policy: str  # context.policy
    sampling: Sampling  # the responder's
    early_turns: int  # stage.early_turns
    late_cues: Mapping[str, Sequence[str]]  # stage.late_cues, merged with the built-in lists
    open_cues: Mapping[str, Sequence[str]]  # stage.open_cues, merged with the built-in lists
    instructions: Mapping[Stage, str]  # stage.instructions over the built-in ones
    guard: str  # guard.policy
    redact_phrase: str  # guard.redact_phrase
    stream: str  # guard.stream: checked (the client reads only what the checker passed) or raw
    recall_k: int  # recall.k
    recall_min_score: float  # recall.min_score
    # facts.request_cues/readback_cues over the lexicons' own, and what is masked (privacy), compiled once.
    vocabulary: Vocabulary
    mask_secrets: bool  # privacy.mask_secrets: secrets are masked before anything is stored
    safe_answers: Mapping[str, str]  # privacy.safe_answer over the built-in texts, by language
    passage_tokens: int  # the settings' passage_tokens: knowledge.budget_tokens within context.budget_tokens
    grounded_instruction: str  # knowledge.instruction, else the built-in one: the directive of a turn with passages
    grounded_temperature: float  # knowledge.temperature: the sampling temperature of a turn with passages
    not_found: Mapping[str, str]  # knowledge.not_found, by language
    min_answerable: float  # knowledge.min_answerable: the least judged probability that the passages answer
    covered: Mapping[str, str]  # knowledge.covered over the built-in texts, by language
    languages: Sequence[str]  # summarizer.languages: the conversation's language is one of them (the first by default)


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
        # One cached counter per model: a build counts the same turn lines again at every turn.
        self._counters: dict[int, ResponderCounter] = {}
        # Called with the session id after every stored turn (the summary worker listens here).
        self.after_store: list[Callable[[str], None]] = []
        # Set while an answer is being generated, so background work can yield to it.
        self.answering = AnswerGauge()
        # By session: the passages the last draft's warm-up placed, for the message to keep their order;
        # the draft's plan and prompt, to be judged ahead; and that judgement, for a message sent as drafted.
        self._warmed_passages: dict[str, tuple[int, ...]] = {}
        self._drafted: dict[str, tuple[TurnPlan, Prompt]] = {}
        self._judged_ahead: dict[str, tuple[str, tuple[int, ...], Judgement]] = {}

    def counter_for(self, model: ChatModel) -> ResponderCounter:
        counter = self._counters.get(id(model))
        if counter is None:
            counter = self._counters[id(model)] = ResponderCounter(model)
        return counter

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

    # the hot path -----------------------------------------------------------------------------------

    def answer(
        self,
        session_id: str,
        text: str,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        persist: bool = True,
    ) -> TurnResult:
        """Answer a customer message and store the exchange; nothing is stored if anything fails.

        ``on_token`` sees the answer as it streams: under ``guard.stream = "checked"`` only text the
        checker passed, which is the text stored; under ``raw`` the first generation, which the guard
        may replace after (the result's agent turn holds what was stored, ``record.check.original``
        what streamed).
        With ``persist=False`` nothing is stored at all (an evaluation's probe question, asked
        without changing the conversation); the result's turns carry the indices they would have.
        """
        timer = TurnTimer()
        message = self.validate_message(text)
        snap = self.store.snapshot(session_id)  # the turn's one read of the session
        if snap.session.floor.state != "bot":  # a person is asked for or holds it (appliance.turn.floor)
            raise PersonHolds(f"the conversation is {snap.session.floor.state}: the model does not answer it")
        plan = self._plan(snap, message, timer, warmed=self._warmed_passages.pop(session_id, ()))
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
        message = self.validate_message(messages[-1].content)
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
        plan = self._plan(snap, message, timer, system=system or None, sampling=sampling)
        return self._answer(plan, timer, on_token=on_token, cancel=cancel, persist=False)

    def _plan(
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
        s = self.settings
        cues = s.vocabulary
        if s.mask_secrets:
            message = slots.mask(message, snap.turns[-6:], cues=cues)
        turn_stage, model, spec = self._frame(snap, message, system)
        counter = self.counter_for(model)
        policy = self.policies[snap.session.policy]
        used = sampling or s.sampling
        with timer.phase("recall"):
            # A provisional index for the check and an unsaved result; the store assigns the real one.
            customer = Turn(snap.session.id, len(snap.turns), "customer", message)
            asked = snap.turns[-1] if snap.turns else None
            facts = snap.ledger + ledger.entries_for(customer, asked, cues=cues, prior=snap.ledger)
            req = readback.request(message, cues=cues)
            wanted = readback.wanted(req, facts) if req is not None else ()
            if wanted:  # a read-back question: the facts it asks for go right before it, and are named after it
                spec = dataclasses.replace(
                    spec.adding(readback.instruction(wanted)), readback=readback.facts_of(wanted)
                )
                if sampling is None:  # repeating facts, sampling only adds ways to get them wrong
                    used = dataclasses.replace(used, temperature=0.0)
            recalled = self._recall(snap, message, policy)
        with timer.phase("knowledge"):  # on the snapshot, whose summary compressed the history (seed 003)
            found = in_warm_order(self.grounding.consult(snap, message, facts, reads_back=req is not None), warmed)
        spec = self.grounding.spec_for(spec, found)
        if spec.passages and sampling is None:  # the passages fix the facts: sampling only adds ways to get them wrong
            used = dataclasses.replace(used, temperature=s.grounded_temperature)
        return TurnPlan(
            snapshot=snap,
            message=message,
            customer=customer,
            stage=turn_stage,
            model=model,
            policy=policy,
            spec=spec,
            counter=counter,
            facts=facts,
            request=req,
            wanted=wanted,
            recalled=recalled,
            sampling=used,
            retrieval=found,
            not_found=self.grounding.answer_if_not_found(snap, message, found),
        )

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
            )
            agent = Turn(plan.session_id, plan.customer.index + 1, "agent", kept.answer.text)
            if not persist:
                return TurnResult(session_id=plan.session_id, customer=plan.customer, agent=agent, record=record)
            stored = self._store(plan, agent, record)
        self.announce(plan.session_id)
        # The stored record cannot include the store's own write; the caller's copy does.
        return dataclasses.replace(stored, record=dataclasses.replace(record, timings=timer.timings(first)))

    def grounding_of(self, session_id: str, text: str) -> Grounding | None:
        """What the operator's documents would give an answer to ``text`` in the session, as the turn
        decides it (planned, prompted and judged; nothing generated or stored): the record's knowledge
        part (None without a knowledge base)."""
        timer = TurnTimer()
        plan = self._plan(self.store.snapshot(session_id), self.validate_message(text), timer)
        plan, prompt = self._prompted(plan, timer)
        return plan.grounding(prompt.manifest if prompt is not None else Manifest("", 0, 0, ()))

    def _prompted(self, plan: TurnPlan, timer: TurnTimer) -> tuple[TurnPlan, Prompt | None]:
        """The plan's prompt, and the plan with what it placed and the responder's judgement of it (its
        not-found answer set where the passages do not answer); no prompt for a plan already not found."""
        if plan.not_found:
            return plan, None
        with timer.phase("context"):
            prompt = plan.prompt()
        return self._judged(plan.placing(prompt.manifest), prompt, timer), prompt

    def _judged(self, plan: TurnPlan, prompt: Prompt, timer: TurnTimer) -> TurnPlan:
        """``plan`` with the responder's judgement of whether the passages ``prompt`` placed answer the
        question, and the not-found answer when they do not (``knowledge.min_answerable``)."""
        ahead = self._judged_ahead.pop(plan.session_id, None)
        if ahead is not None and ahead[:2] == (plan.message, placed_passages(prompt)):
            found: Judgement | None = ahead[2]  # judged from the draft, as sent
        else:
            with self.answering, timer.phase("probe"):
                found = self.grounding.judge(plan.model, prompt, plan.spec.instruction, plan.cache_key)
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

    def next_prefix(self, session_id: str, draft: str = "") -> tuple[ChatModel, tuple[Message, ...]] | None:
        """The model that will answer the session's next message, and that prompt as far as it is
        known before the message: built for an empty question and cut where the question begins
        (what depends on the question comes after the stable parts). With ``draft``, what the customer
        is typing, it is planned as for that message, passages included: a message that retrieves the
        same ones evaluates only itself. None: the session is gone, nothing fits, or no generation."""
        try:
            snap = self.store.snapshot(session_id)
            if draft.strip():
                plan = self._plan(snap, self.validate_message(draft), TurnTimer())
                model, prompt = plan.model, None if plan.not_found else plan.prompt()
                self._warmed_passages[session_id] = placed_passages(prompt)
                if prompt is not None:
                    self._drafted[session_id] = (plan, prompt)
            else:
                _, model, spec = self._frame(snap, "", None)
                prompt = self.policies[snap.session.policy].build(snap, "", spec, self.counter_for(model))
        except (SessionNotFound, InputError):
            return None
        return (model, before_question(prompt.messages)) if prompt is not None else None

    def judge_ahead(self, session_id: str) -> None:
        """Judge whether the passages the session's last draft placed answer it (its prefix warmed
        already, so this evaluates the draft's question): a message sent as drafted, whose prompt places
        the same passages, uses that judgement instead of asking after Enter."""
        drafted = self._drafted.pop(session_id, None)
        if drafted is None:
            return
        plan, prompt = drafted
        found = self.grounding.judge(plan.model, prompt, plan.spec.instruction, plan.cache_key)
        if found is not None:
            self._judged_ahead[session_id] = (plan.message, placed_passages(prompt), found)

    def embed_ahead(self, session_id: str) -> int:
        """Embed and store the older turns recall may choose from, off the answer's path (a message
        that points back then embeds only itself); how many turns were new."""
        if self.recall is None or self.settings.recall_k <= 0:
            return 0  # without reading the session
        try:
            snap = self.store.snapshot(session_id)
        except SessionNotFound:
            return 0
        candidates = self._recall_candidates(snap, self.policies.get(snap.session.policy))
        return embeddings.embedded(self.store, self.recall, session_id, candidates)[1] if candidates else 0

    def _frame(self, snap: Snapshot, message: str, system: str | None) -> tuple[Stage, ChatModel, PromptSpec]:
        """The message's stage, the model that answers it, and the prompt's fixed parts."""
        s = self.settings
        turn_stage = stage.detect(
            snap.turns, message, early_turns=s.early_turns, late_cues=s.late_cues, open_cues=s.open_cues
        )
        model = self.early_responder if (turn_stage == "early" and self.early_responder) else self.responder
        system, instruction = stage.prompt_texts(
            turn_stage, s.instructions, system if system is not None else s.system_prompt, s.instruction
        )
        spec = PromptSpec(
            system=system, instruction=instruction, budget=s.budget_tokens, passage_tokens=self.grounding.reserve()
        )
        return turn_stage, model, spec

    def _recall(self, snap: Snapshot, message: str, policy: ContextPolicy) -> tuple[int, ...]:
        """Older turns to show verbatim again, when the message points back to something."""
        if self.recall is None or not self.recall.points_back(message):
            return ()
        candidates = self._recall_candidates(snap, policy)
        if not candidates:
            return ()
        vectors = embeddings.vectors(self.store, self.recall, snap.session.id, candidates)
        return self.recall.select(message, candidates, vectors, self.settings.recall_k, self.settings.recall_min_score)

    def _recall_candidates(self, snap: Snapshot, policy: ContextPolicy | None) -> tuple[Turn, ...]:
        """The older turns recall may choose from under ``policy``: none where recall is off or the
        policy has no place for recalled turns."""
        if self.recall is None or policy is None or self.settings.recall_k <= 0:
            return ()
        return policy.recall_candidates(snap)

    # turns without an answer, and operator controls ------------------------------------------------

    def record_turn(self, session_id: str, role: str, text: str) -> Turn:
        """Record a turn without generating (a person's reply, a replayed transcript) as :meth:`said` reads
        it; the store gives it its index. Callers that also answer run this in the session's lane."""
        said, message, facts = self.said(session_id, role, text)
        turn = self.store.append_turn(session_id, said, message, ledger=facts)
        self.announce(session_id)
        return turn

    def said(self, session_id: str, role: str, text: str) -> tuple[Role, str, tuple[LedgerEntry, ...]]:
        """A turn as stored: its role, its text with secrets masked, its facts read with the turn before."""
        if role not in ROLES:
            raise InputError(f"role must be one of {', '.join(ROLES)}, got {role!r}", field="role")
        message = self.validate_message(text)
        said: Role = "customer" if role == "customer" else "agent"
        cues = self.settings.vocabulary
        before = self.store.turns(session_id)[-6:]  # the agent's request a reply answers; secrets just asked for
        if self.settings.mask_secrets:
            message = slots.mask(message, before, role=said, cues=cues)
        said_turn, asked = Turn(session_id, -1, said, message), before[-1] if before else None  # -1: the store's
        return said, message, ledger.entries_for(said_turn, asked, cues=cues, prior=self.store.ledger(session_id))

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
        if not paused:
            self.announce(session_id)

    def announce(self, session_id: str) -> None:
        """Tell the after-store hooks (the summary worker) that a turn of the session was stored."""
        for hook in self.after_store:
            hook(session_id)
