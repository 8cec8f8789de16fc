"""The summary worker: keeps each session's rolling summary up to date, off the answer's path.

The pipeline calls :meth:`SummaryWorker.notify` after every stored turn and returns at once; one
background thread does the slow part (a second, smaller model) when no answer is being generated.
A summary still running when an answer starts is cancelled and retried after it: on a small box two
llama.cpp instances competing for the same cores slow each other down several times over. But with
customers talking continuously that alone lets a summary fall behind without bound, so a session's
summary that has yielded ``max_yields`` times in a row runs next time beside the answers. Its time
limit follows progress: ``timeout_s`` until the first token, then as long as tokens keep coming
(``stall_s``), so a loaded box does not throw away summaries that are slow but moving.
Nothing here can lose a turn: the transcript is already stored, and a summary that fails, times out
or is rejected is stored as a *rejected* version with its reason while the previous accepted version
stays current. The context policy then carries the turns after ``covers_to`` verbatim (seed 002's
fallback), and the next turn's notification tries again.

Like the pipeline, the worker is a meeting place of stages: it receives the store, the model, the
settings and the entity extractor, and builds none of them. The facts part tells the validator which
forms of a fact are the same and which values of the transcript are secrets.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Collection, Sequence

from appliance import summarizer
from appliance.config import Settings, SummarizerSettings
from appliance.errors import ApplianceError, Cancelled, SessionNotFound
from appliance.facts import slots
from appliance.facts.entities import index_keys, lookup_keys
from appliance.protocols import Busy, ChatModel
from appliance.store import Store
from appliance.summarizer import Extract
from appliance.summarizer.language import conversation_language
from appliance.turn.lag import LagGauge
from appliance.turn.loop import SessionLoop
from appliance.turn.summary_run import Cut, Outcome, Plan, Ran, Watcher, WorkerStats, longest_fitting
from appliance.types import Sampling, SummaryVersion, Turn

log = logging.getLogger(__name__)

MAX_STEPS = 8  # versions one run may add when catching up (a long backlog, a prefix that had to be split)
# ``[summarizer]`` sets the temperature, cap and seed; the rest is llama.cpp's usual sampling. Its
# repeat penalty matters: without it the 0.5B model loops ("Cambridge, Cambridge, ...").
SUMMARY_SAMPLING = Sampling(top_p=0.9, top_k=40, repeat_penalty=1.1)

# The outcomes after which a run goes on to the next version; after the others the session waits
# for its next notification (a failure is not retried in a loop).
_GOES_ON = {Outcome.ACCEPTED, Outcome.STALE}
_COUNTERS = ("runs", "failures", "accepted", "rejected", "errors", "timeouts", "forced")  # on /metrics


class SummaryWorker(SessionLoop[WorkerStats]):
    """One background thread that summarizes sessions when they have enough new turns.

    ``answering`` tells the worker to wait (and to stop a summary in progress): the pipeline's
    ``answering`` gauge; None never waits. Wire it as ``store.after_events.append(worker.on_logged)``
    with ``answering=pipeline.answering``.
    """

    def __init__(
        self,
        store: Store,
        model: ChatModel,
        settings: SummarizerSettings,
        extract: Extract,
        answering: Busy | None = None,
        *,
        keep_turns: int = 0,
        policies: Collection[str] | None = None,
        start: bool = True,
    ) -> None:
        super().__init__("summary-worker", WorkerStats())
        self.store = store
        # The context policies whose sessions read a summary; others are never summarized (None: all).
        self.policies = frozenset(policies) if policies is not None else None
        # The newest turns the summary leaves out: the context carries them verbatim anyway
        # (``2 * context.recent_pairs``), and a summary that moves only in batches of ``every_turns``
        # leaves the responder's prompt prefix unchanged (and cached by llama.cpp) in between.
        self.keep_turns = keep_turns
        self.model = model
        self.settings = settings
        self.extract = extract
        self.answering = answering
        self.sampling = dataclasses.replace(
            SUMMARY_SAMPLING, temperature=settings.temperature, max_tokens=settings.max_tokens, seed=settings.seed
        )
        # About 0.6 words per token of the cap, so that the model ends before the cap cuts it off.
        self.max_words = max(20, int(settings.max_tokens * 0.6))
        # What every summary is validated against: the same for every run of this worker.
        self._checks = summarizer.Checks(
            cap_tokens=settings.max_tokens,
            counter=model,
            extract=extract,
            languages=settings.languages,
            index=index_keys,
            lookup=lookup_keys,
        )
        self._cancel: threading.Event | None = None  # the running summary's, for ``stop``
        self._last_full: dict[str, int] = {}  # session -> turn count at its last full re-summary
        self._retry_at: dict[str, int] = {}  # session -> turn count before which a failed run is not retried
        self._full_next: set[str] = set()  # sessions whose last rolling update failed
        self._yields: dict[str, int] = {}  # session -> times its summary yielded to an answer in a row
        self.lag = LagGauge(store, keep_turns, policies)
        if start:
            self.start()

    @classmethod
    def configured(
        cls,
        store: Store,
        model: ChatModel,
        settings: Settings,
        extract: Extract,
        answering: Busy | None = None,
        *,
        policies: Collection[str] | None = None,
    ) -> SummaryWorker:
        """The worker as the appliance runs it: ``[summarizer]`` settings, and the turns that
        ``context.recent_pairs`` carries verbatim left out of the summary."""
        return cls(
            store,
            model,
            settings.summarizer,
            extract,
            answering,
            keep_turns=2 * settings.context.recent_pairs,
            policies=policies,
        )

    # control ------------------------------------------------------------------------------------

    def notify(self, session_id: str) -> None:
        """A turn was stored (or summarizing was resumed): look at this session soon. Never blocks and
        reads nothing: the lag gauge reads the session when it is scraped."""
        self.lag.changed(session_id)
        super().notify(session_id)

    def counters(self) -> dict[str, int]:
        """Monotonic counts for ``/metrics`` (the ``WorkerStatus`` protocol the edges read)."""
        st = self.stats()
        return {name: getattr(st, name) for name in _COUNTERS}

    # lag ----------------------------------------------------------------------------------------

    def lag_of(self, policy: str, n_turns: int, covers_to: int) -> int | None:
        """How many turns a session's summary is behind (:func:`appliance.turn.lag.summary_lag`);
        None for a policy that reads no summary."""
        return self.lag.lag_of(policy, n_turns, covers_to)

    def max_lag(self) -> int:
        """The largest lag among the sessions this worker was told about lately (0 for none)."""
        return self.lag.max_lag()

    def forget(self, session_id: str) -> None:
        """Drop what the worker keeps about a session (it was erased)."""
        self.lag.forget(session_id)

    # the loop's hooks -----------------------------------------------------------------------------

    def _next_session(self) -> str | None:
        """The oldest queued session, or while an answer is being generated the oldest that may no
        longer yield; None: wait."""
        if not (self.settings.yield_to_answers and self._answer_running()):
            return super()._next_session()
        return next((s for s in self._pending if self._must_run(s)), None)

    def _interrupt(self) -> None:
        if self._cancel is not None:
            self._cancel.set()  # the summary in progress stores nothing

    def _answer_running(self) -> bool:
        return self.answering is not None and self.answering.busy

    def _must_run(self, session_id: str) -> bool:
        """Whether this session's summary has yielded to answers ``max_yields`` times in a row
        (0 counts as 1: it never yields twice) and so runs beside them."""
        return self._yields.get(session_id, 0) >= max(1, self.settings.max_yields)

    # one session --------------------------------------------------------------------------------

    def run_one(self, session_id: str) -> tuple[SummaryVersion, ...]:
        """Bring one session's summary up to date now, in this thread; returns the versions stored."""
        stored: list[SummaryVersion] = []
        try:
            for _ in range(MAX_STEPS):
                step = self._step(session_id)
                if step is None:
                    break
                outcome, version = step
                stored.append(version)
                if outcome not in _GOES_ON:
                    break
        finally:
            if stored:
                self.lag.changed(session_id)
        return tuple(stored)

    def _step(self, session_id: str) -> tuple[Outcome, SummaryVersion] | None:
        """One version: choose what it covers, run the model, record what came of it; None: nothing
        was stored."""
        plan = self._choose(session_id)
        if plan is None:
            return None
        if not plan.chunk:
            self._yields.pop(session_id, None)
            reason = f"turn {plan.first_pending} does not fit summarizer.n_ctx"
            return Outcome.REJECTED, self._reject(session_id, plan.first_pending, reason)
        return self._record(plan, self._run(plan))

    def _choose(self, session_id: str) -> Plan | None:
        """What the next version covers and rolls on from; None: nothing to summarize now."""
        try:
            snap = self.store.snapshot(session_id)
        except SessionNotFound:  # erased since it was queued: nothing to summarize, nothing to keep
            self._drop(session_id)
            return None
        if self.policies is not None and snap.session.policy not in self.policies:
            return None  # raw and the seed baselines read no summary
        if snap.session.summary_paused:
            self._tally.add(skipped_paused=1)
            return None
        turns, base = snap.turns, snap.summary
        covered = base.covers_to if base is not None else -1
        eligible = turns[: max(0, len(turns) - self.keep_turns)]
        pending = [t for t in eligible if t.index > covered]
        if len(pending) < self.settings.every_turns or len(turns) < self._retry_at.get(session_id, 0):
            return None
        full = self._full_due(session_id, base, len(turns), covered)
        language = conversation_language(turns, self.settings.languages)
        previous = None if full else base
        chunk = self._fit(previous, eligible if full else pending, language)
        if full and base is not None and len(chunk) < len(eligible):
            # The transcript has outgrown the window: a full re-summary would cover less than the
            # current version does, so roll on from it instead.
            previous = base
            chunk = self._fit(previous, pending, language)
        if chunk and previous is None:
            self._last_full[session_id] = chunk[-1].index + 1
            self._full_next.discard(session_id)
        return Plan(session_id, turns, base, previous, tuple(chunk), pending[0].index, language)

    def _full_due(self, session_id: str, base: SummaryVersion | None, n_turns: int, covered: int) -> bool:
        """Whether the next version is written afresh from the transcript. A full re-summary replaces
        model text only: an operator's version is carried forward, never discarded. One also follows a
        failed rolling update: a small model that cannot update a summary (it copies it unchanged) can
        still write one afresh from the transcript."""
        last_full = self._last_full.setdefault(session_id, covered + 1)
        every = self.settings.resummarize_every
        return base is None or (
            base.author == "model" and (session_id in self._full_next or n_turns // every > last_full // every)
        )

    def _run(self, plan: Plan) -> Ran:
        """Generate the new version's text, watched for progress and, unless it has yielded enough
        times in a row, for answers."""
        s = self.settings
        messages = summarizer.summary_prompt(plan.previous, plan.chunk, plan.language, max_words=self.max_words)
        yielding = s.yield_to_answers and not self._must_run(plan.session_id)
        watcher = Watcher(s, self.answering if yielding else None)
        with self._cond:
            if self._stopping.is_set():
                return Ran(Outcome.STOPPED)
            self._cancel = watcher.cancel
        if s.yield_to_answers and not yielding:
            self._tally.add(forced=1)
        started = time.perf_counter()
        try:
            with watcher:
                text = summarizer.summarize(
                    self.model, messages, self.sampling, cancel=watcher.cancel, on_token=watcher.progress.on_token
                )
            return Ran(None, duration_s=time.perf_counter() - started, text=text)
        except Cancelled:
            if self._stopping.is_set():
                return Ran(Outcome.STOPPED)
            if watcher.cut is Cut.ANSWER:
                return Ran(Outcome.YIELDED)
            if watcher.cut is Cut.TIMEOUT:
                took = time.perf_counter() - started
                return Ran(Outcome.TIMEOUT, duration_s=took, reason=watcher.progress.timeout_reason(s))
            failure = "cancelled"
        except ApplianceError as exc:
            failure = f"failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - a broken model must not stop the worker: stored, counted, logged
            log.exception("summarizer failed on session %s", plan.session_id)
            failure = f"failed: {type(exc).__name__}: {exc}"
        finally:
            with self._cond:
                self._cancel = None
        return Ran(Outcome.FAILED, duration_s=time.perf_counter() - started, reason=failure)

    def _record(self, plan: Plan, ran: Ran) -> tuple[Outcome, SummaryVersion] | None:
        """Count the run and store what came of it; None: nothing to store."""
        session_id = plan.session_id
        if ran.outcome is Outcome.STOPPED:
            return None
        if ran.outcome is Outcome.YIELDED:
            # Not a failure: the responder needed the CPU. Try again once it is done.
            self._yields[session_id] = self._yields.get(session_id, 0) + 1
            self._tally.add(yielded=1)
            self.notify(session_id)
            return None
        self._yields.pop(session_id, None)  # this run finished: the next one may yield again
        if ran.outcome is not None:
            outcome = ran.outcome
            self._tally.update(lambda st: st.after(outcome, ran.duration_s, ran.reason))
            self._failed(session_id, len(plan.turns), rolling=plan.previous is not None)
            return outcome, self._reject(session_id, plan.covers_to, ran.reason)
        return self._judge(plan, ran)

    def _judge(self, plan: Plan, ran: Ran) -> tuple[Outcome, SummaryVersion]:
        """Validate the model's text and store it: accepted, rejected, or stale."""
        session_id, turns = plan.session_id, plan.turns
        verdict = summarizer.validate(
            ran.text,
            summarizer.Source(
                turns=plan.chunk,
                previous=plan.previous,
                transcript_text="\n".join(t.text for t in turns),
                language=plan.language,
                secret_values=slots.secret_values(turns),  # none where secrets were masked before storing
            ),
            self._checks,
        )
        current = self.store.current_summary(session_id)
        if _version(current) != _version(plan.base):
            # An operator edited or restored the summary while this one was being made from the old one.
            self._tally.update(lambda st: st.after(Outcome.STALE, ran.duration_s))
            reason = (
                f"stale: based on version {_version(plan.base)}, but version {_version(current)} "
                f"({current.author if current else 'none'}) was stored meanwhile"
            )
            return Outcome.STALE, self._reject(session_id, plan.covers_to, reason, text=verdict.text)
        outcome = Outcome.ACCEPTED if verdict.ok else Outcome.REJECTED
        self._tally.update(lambda st: st.after(outcome, ran.duration_s))
        if verdict.ok:
            self._retry_at.pop(session_id, None)
        else:
            self._failed(session_id, len(turns), rolling=plan.previous is not None)
        full = plan.previous is None and plan.base is not None
        version = SummaryVersion(
            session_id=session_id,
            version=0,
            text=verdict.text,
            covers_to=plan.covers_to,
            author="model",
            status="accepted" if verdict.ok else "rejected",
            reason="; ".join(filter(None, ["full re-summary" if full else "", verdict.reason])),
        )
        return outcome, self.store.add_summary(version)

    def _failed(self, session_id: str, n_turns: int, *, rolling: bool) -> None:
        """Retry after ``every_turns`` more turns (not at every turn: each attempt costs a generation)."""
        self._retry_at[session_id] = n_turns + self.settings.every_turns
        if rolling:
            self._full_next.add(session_id)

    def _drop(self, session_id: str) -> None:
        """Forget an erased session's bookkeeping."""
        for bookkeeping in (self._last_full, self._retry_at, self._yields):
            bookkeeping.pop(session_id, None)
        self._full_next.discard(session_id)
        self.forget(session_id)

    def _reject(self, session_id: str, covers_to: int, reason: str, *, text: str = "") -> SummaryVersion:
        return self.store.add_summary(
            SummaryVersion(
                session_id=session_id,
                version=0,
                text=text,
                covers_to=covers_to,
                author="model",
                status="rejected",
                reason=reason,
            )
        )

    def _fit(self, previous: SummaryVersion | None, turns: Sequence[Turn], language: str) -> list[Turn]:
        """The longest prefix of ``turns`` whose prompt leaves room for the capped summary in ``n_ctx``."""
        room = min(self.model.n_ctx, self.settings.n_ctx) - self.settings.max_tokens
        return longest_fitting(self.model, previous, turns, language, room=room, max_words=self.max_words)


def _version(summary: SummaryVersion | None) -> int:
    return summary.version if summary is not None else 0
