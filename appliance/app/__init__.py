"""The composition root: from settings to the built appliance (store, pipeline, worker, queue).

The edges (CLI, daemon, evaluation, benchmarks) call :func:`build`; the pipeline never reaches for a
global. Every model file is checked against its pinned sha256 before it is loaded
(:mod:`appliance.app.loading`).

This module imports only what the model loads need. :func:`build` imports the rest of the appliance
(store, pipeline, worker: a noticeable share of a start), and what its caller asks for, on a loading
thread after the smaller models, so the imports overlap the loads: on two cores the responder's hash
and load, the start's critical path, keep a core to themselves while everything else shares the other.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appliance import stage
from appliance.app.loading import load_concurrently, load_encoder, pending_loads, token_counter
from appliance.config import COVERED, SAFE_ANSWER, Settings
from appliance.context import ContextPolicy, make_policies
from appliance.protocols import ChatModel, Placed, PrefixWarmer, Recaller, TokenCounter
from appliance.types import Sampling

# The rest of the appliance, imported by build() beside the model loads (see above).
PARTS = (
    "appliance.knowledge",
    "appliance.store",
    "appliance.turn.pipeline",
    "appliance.turn.prewarm",
    "appliance.turn.queue",
    "appliance.turn.worker",
)

if TYPE_CHECKING:
    from appliance.audit.ship import Shipper
    from appliance.knowledge import Knowledge
    from appliance.store import Store
    from appliance.turn.pipeline import Pipeline
    from appliance.turn.prewarm import Prewarmer
    from appliance.turn.queue import FairQueue
    from appliance.turn.sessions import Sessions
    from appliance.turn.settings import PipelineSettings
    from appliance.turn.worker import SummaryWorker


def open_knowledge(
    settings: Settings, store: Store, *, encoder: Recaller | None = None, counter: TokenCounter | None = None
) -> Knowledge:
    """The knowledge base over an open store, for the commands and benches that need it without a
    whole appliance; the encoder and the counter are loaded when not given."""
    from appliance.knowledge import Knowledge

    return Knowledge(store, encoder or load_encoder(settings), counter or token_counter(settings), settings.knowledge)


def policies(settings: Settings) -> dict[str, ContextPolicy]:
    c = settings.context
    threshold_counter = None
    if c.threshold_counter == "tiktoken":
        from appliance.context.tokens import TiktokenCounter

        threshold_counter = TiktokenCounter(
            c.tiktoken_encoding, file=Path(c.tiktoken_file) if c.tiktoken_file else None
        )
    return make_policies(c, settings.threshold_tokens, threshold_counter)


def pipeline_settings(settings: Settings) -> PipelineSettings:
    from appliance.facts.phones import locale_region
    from appliance.facts.secrets import Masking
    from appliance.facts.vocabulary import Vocabulary
    from appliance.turn.settings import PipelineSettings

    r = settings.responder
    st = settings.stage
    return PipelineSettings(
        system_prompt=settings.chat.system_prompt,
        instruction=stage.standing(settings.chat.instruction),
        budget_tokens=settings.context.budget_tokens,
        max_message_chars=settings.chat.max_message_chars,
        default_policy=settings.context.policy,
        sampling=Sampling(
            temperature=r.temperature,
            top_p=r.top_p,
            top_k=r.top_k,
            repeat_penalty=r.repeat_penalty,
            max_tokens=r.max_tokens,
            seed=r.seed,
            ignore_eos=r.ignore_eos,
        ),
        early_turns=st.early_turns,
        late_cues=stage.cue_table(st.late_cues, stage.LATE_CUES),
        open_cues=stage.cue_table(st.open_cues, stage.OPEN_CUES),
        instructions={**stage.STAGE_INSTRUCTIONS, **st.instructions},
        guard=settings.guard.policy,
        redact_phrase=settings.guard.redact_phrase,
        stream=settings.guard.stream,
        recall_k=settings.recall.k,
        recall_min_score=settings.recall.min_score,
        vocabulary=Vocabulary.build(
            settings.facts.request_cues,
            settings.facts.readback_cues,
            Masking.of(settings.privacy.mask_kinds, settings.privacy.patterns),
            settings.facts.region or locale_region(_locale_name()),
        ),
        mask_secrets=settings.privacy.mask_secrets,
        safe_answers={**SAFE_ANSWER, **settings.privacy.safe_answer},
        passage_tokens=settings.passage_tokens,
        grounded_instruction=settings.knowledge.instruction.strip() or stage.GROUNDED_INSTRUCTION,
        grounded_temperature=settings.knowledge.temperature,
        not_found=dict(settings.knowledge.not_found),
        min_answerable=settings.knowledge.min_answerable,
        covered={**COVERED, **settings.knowledge.covered},
        languages=settings.summarizer.languages,
    )


def _locale_name() -> str:
    """The name of the box's locale for text, as the C library reads it ("de_DE.UTF-8")."""
    return os.environ.get("LC_ALL") or os.environ.get("LC_CTYPE") or os.environ.get("LANG", "")


@dataclass
class Appliance:
    """The whole appliance, built once from the settings: its parts, and one way to close them.

    The daemon, ``appliance chat``, the evaluation and the benchmarks all start from :func:`build`;
    nobody reaches through the pipeline for a part, each part is here.
    """

    settings: Settings
    store: Store
    responder: ChatModel
    pipeline: Pipeline  # the turn
    sessions: Sessions  # the session services: sessions made, turns recorded, summaries edited
    worker: SummaryWorker | None
    queue: FairQueue
    prewarmer: Prewarmer | None = None
    knowledge: Knowledge | None = None  # the operator's documents (None: knowledge.enabled is off, or no encoder)
    closers: tuple[Callable[[], None], ...] = ()  # of models build() loaded (batched ones' decode loops)
    audit: Shipper | None = None  # copies the audit trail to its file and syslog (None: audit.enabled is off)
    # role -> where that model runs: cpu, gpu (NAME, N layers), remote (URL)
    devices: dict[str, str] = field(default_factory=dict)

    def close(self, timeout: float = 10.0) -> None:
        """Stop taking turns, cancel what runs (nothing half-done is stored), close the database."""
        self.queue.close(timeout=timeout)
        if self.prewarmer is not None:
            self.prewarmer.stop(timeout=timeout)
        if self.worker is not None:
            self.worker.stop(timeout=timeout)  # a summary in progress is cancelled and stores nothing
        for close in self.closers:  # after the warm-ups that use them
            close()
        if self.audit is not None:
            self.audit.stop()  # what the last writes sealed reaches the file first
        self.store.close()

    def __enter__(self) -> Appliance:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pipeline(
    settings: Settings,
    undo: ExitStack,
    model: ChatModel,
    configured: dict[str, ContextPolicy],
    loaded: dict[str, Any],
    recall: Recaller | bool | None,
) -> Pipeline:
    """The pipeline around the opened store (closed by ``undo`` if the build fails later), the
    loaded models and the knowledge base; ``recall`` as :func:`build` was given it."""
    from appliance.store import Store  # imported by now
    from appliance.turn.pipeline import Pipeline

    store = Store.open(settings.database, auditing=settings.audit.enabled, audit_text=settings.audit.text)
    undo.callback(store.close)
    recaller = loaded["recall"] if recall is True else (recall or None)
    return Pipeline(
        store,
        model,
        configured,
        pipeline_settings(settings),
        recall=recaller,
        early_responder=loaded.get("early"),
        refiner=loaded.get("refiner"),
        knowledge=_knowledge(settings, store, model, recaller or loaded.get("encoder")),
    )


def build(
    settings: Settings,
    *,
    responder: ChatModel | None = None,
    summarizer: ChatModel | None = None,
    recall: Recaller | bool | None = True,
    worker: bool = True,
    prewarm: bool | None = None,
    imports: Sequence[str] = (),
) -> Appliance:
    """Build every configured part, verified and loaded, and wire them together.

    ``responder`` and ``summarizer`` replace the configured models (tests, benchmarks); ``recall=False``
    leaves recall out, ``True`` loads it as configured, a :class:`Recaller` is used as given.
    ``worker=False`` builds no summary worker (an evaluation drives one itself); ``prewarm`` overrides
    ``responder.prewarm`` (the next prefix warmed while idle). With no policy that reads a summary, no
    summarizer is loaded at all. If a part fails to load, the parts already open are closed again.
    ``imports`` names modules the caller needs next (the daemon's HTTP server), loaded beside the models.
    """
    configured = policies(settings)
    summarized = {name for name, p in configured.items() if p.uses_summary}
    summarize = worker and bool(summarized)
    loaded = load_concurrently(pending_loads(settings, responder, summarizer, recall, summarize, (*PARTS, *imports)))
    with ExitStack() as undo:
        closers = _closers(loaded, undo)
        model = responder if responder is not None else loaded["responder"]
        pipeline = _pipeline(settings, undo, model, configured, loaded, recall)
        store, sessions = pipeline.store, pipeline.sessions
        summary_worker = None
        if summarize:
            summary_model = summarizer if summarizer is not None else loaded["summarizer"]
            summary_worker = _summary_worker(settings, pipeline, summary_model, summarized, undo)
        prewarmer = None
        wanted = settings.responder.prewarm if prewarm is None else prewarm
        if wanted and isinstance(model, PrefixWarmer):  # a remote server keeps its own cache
            prewarmer = _prewarmer(pipeline, summary_worker, undo)
        queue = _queue(settings, model.name)
        shipper = _audit(settings, store, undo)
        undo.pop_all()
    parts = (summary_worker, queue, prewarmer, pipeline.knowledge, closers, shipper)
    summarizing = (summarizer or loaded.get("summarizer")) if summary_worker is not None else None
    models = {
        "responder": model,
        "summarizer": summarizing,
        "early": loaded.get("early"),
        "refiner": loaded.get("refiner"),
    }
    # Where each model runs, for `appliance status` and /readyz; a model that does not say (a test's fake) is left out.
    devices = {role: m.device for role, m in models.items() if isinstance(m, Placed)}
    return Appliance(settings, store, model, pipeline, sessions, *parts, devices)


def _summary_worker(
    settings: Settings, pipeline: Pipeline, model: ChatModel, summarized: set[str], undo: ExitStack
) -> SummaryWorker:
    """The summary worker of the sessions whose policies read a summary, told of each commit's
    events by the store; ``undo`` stops it if the build fails later."""
    from appliance.facts.entities import extract  # imported by now
    from appliance.turn.worker import SummaryWorker

    worker = SummaryWorker.configured(
        pipeline.store, model, settings, extract, answering=pipeline.answering, policies=summarized
    )
    undo.callback(worker.stop)
    pipeline.store.after_events.append(worker.on_logged)
    return worker


def _prewarmer(pipeline: Pipeline, worker: SummaryWorker | None, undo: ExitStack) -> Prewarmer:
    """The warm-up of the next prefix while idle, after the summary worker's own background work;
    ``undo`` stops it if the build fails later."""
    from appliance.turn.prewarm import Prewarmer  # imported by now
    from appliance.turn.warmup import Warmup

    prewarmer = Prewarmer(
        Warmup(pipeline),
        answering=pipeline.answering,
        background_idle=(lambda: worker.drain(0)) if worker is not None else (lambda: True),
    )
    undo.callback(prewarmer.stop)
    pipeline.store.after_events.append(prewarmer.on_logged)  # after the worker's: it waits for the summary
    return prewarmer


def _audit(settings: Settings, store: Store, undo: ExitStack) -> Shipper | None:
    """The audit trail's shipper, woken by the store after each commit that sealed records."""
    if not settings.audit.enabled:
        return None
    from appliance.audit.ship import start

    shipper = start(settings, store.audit_after, store.audit_head())
    undo.callback(shipper.stop)
    store.after_audit.append(shipper.wake)
    return shipper


def _closers(loaded: dict[str, Any], undo: ExitStack) -> tuple[Callable[[], None], ...]:
    """Closing the decode loops of the batched models :func:`build` loaded itself (never of one it was
    given); ``undo`` closes them if the build fails later."""
    from appliance.models.batched import BatchedChatModel

    closers = tuple(m.close for m in loaded.values() if isinstance(m, BatchedChatModel))
    for close in closers:
        undo.callback(close)
    return closers


def _queue(settings: Settings, name: str) -> FairQueue:
    """The model's queue, started: as many answers at once as the responder decodes together."""
    from appliance.turn.queue import FairQueue

    cfg = settings.server
    parallel = settings.responder.parallel
    return FairQueue(
        name, max_waiting=cfg.queue_max, retry_after=cfg.retry_after_s, parallel=parallel, share=cfg.queue_share
    ).start()


def _knowledge(settings: Settings, store: Store, model: ChatModel, encoder: Recaller | None) -> Knowledge | None:
    """The knowledge base, embedding with recall's encoder (never a second copy of it) and counting with
    the responder; None when it is off or no encoder was loaded (``build(recall=False)``)."""
    if not settings.knowledge.enabled or encoder is None:
        return None
    from appliance.context.tokens import ResponderCounter
    from appliance.knowledge import Knowledge

    return Knowledge(store, encoder, ResponderCounter(model), settings.knowledge)
