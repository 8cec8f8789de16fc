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

import logging
import statistics
import threading
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from appliance import summarizer
from appliance.config import Settings, SummarizerSettings
from appliance.errors import ApplianceError, Cancelled, SessionNotFound
from appliance.facts import slots
from appliance.facts.entities import index_keys, lookup_keys
from appliance.store import Store
from appliance.summarizer import Extract
from appliance.turn.lag import LagGauge
from appliance.types import ChatModel, Sampling, SummaryVersion, Turn

log = logging.getLogger(__name__)

MAX_STEPS = 8  # versions one run may add when catching up (a long backlog, a prefix that had to be split)
_POLL_S = 0.05
KEEP_DURATIONS = 1000  # the median of the latest runs is enough for metrics; a daemon runs for months


@dataclass(frozen=True)
class WorkerStats:
    """Counts for metrics and the bench. ``failures`` are runs that ended without an accepted version."""

    runs: int = 0
    accepted: int = 0
    rejected: int = 0
    errors: int = 0
    timeouts: int = 0
    stale: int = 0
    yielded: int = 0
    forced: int = 0  # runs that did not yield, after ``max_yields`` yields in a row
    skipped_paused: int = 0
    durations_s: tuple[float, ...] = ()
    last_error: str = ""

    @property
    def failures(self) -> int:
        return self.rejected + self.errors + self.timeouts

    @property
    def median_s(self) -> float:
        return statistics.median(self.durations_s) if self.durations_s else 0.0


def progress_deadline(started: float, last_token: float | None, *, timeout_s: float, stall_s: float) -> float:
    """When a summary is cancelled: ``timeout_s`` after it started, or later while tokens keep coming,
    ``stall_s`` after the last one."""
    first = started + timeout_s
    return first if last_token is None else max(first, last_token + stall_s)


class _Progress:
    """The tokens of one summary as they come (the model's thread writes, the watcher reads)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.last_token: float | None = None
        self.tokens = 0

    def on_token(self, piece: str) -> None:
        self.last_token = time.monotonic()
        self.tokens += 1

    def deadline(self, settings: SummarizerSettings) -> float:
        return progress_deadline(self.started, self.last_token, timeout_s=settings.timeout_s, stall_s=settings.stall_s)


def is_busy(answering: Any) -> bool:
    """True while an answer is being generated: the pipeline's gauge (``busy``) or a ``threading.Event``."""
    if answering is None:
        return False
    busy = getattr(answering, "busy", None)
    if busy is not None:
        return bool(busy)
    return bool(answering.is_set())


class SummaryWorker:
    """One background thread that summarizes sessions when they have enough new turns.

    ``answering`` is what tells the worker to wait (and to stop a summary in progress): anything with a
    ``busy`` attribute (the pipeline's ``answering`` gauge) or an ``is_set()`` method (a
    ``threading.Event``); None never waits. Wire it as ``pipeline.after_store.append(worker.notify)``
    with ``answering=pipeline.answering``.
    """

    def __init__(
        self,
        store: Store,
        model: ChatModel,
        settings: SummarizerSettings,
        extract: Extract,
        answering: Any = None,
        *,
        keep_turns: int = 0,
        policies: Collection[str] | None = None,
        start: bool = True,
    ) -> None:
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
        # llama.cpp's usual repeat penalty: without it the 0.5B model loops ("Cambridge, Cambridge, ...").
        self.sampling = Sampling(
            temperature=settings.temperature,
            top_p=0.9,
            top_k=40,
            repeat_penalty=1.1,
            max_tokens=settings.max_tokens,
            seed=settings.seed,
        )
        # About 0.6 words per token of the cap, so that the model ends before the cap cuts it off.
        self.max_words = max(20, int(settings.max_tokens * 0.6))
        self._cond = threading.Condition()
        self._pending: dict[str, None] = {}  # an ordered set: oldest notification first
        self._running = False
        self._stopping = False
        self._cancel: threading.Event | None = None
        self._last_full: dict[str, int] = {}  # session -> turn count at its last full re-summary
        self._retry_at: dict[str, int] = {}  # session -> turn count before which a failed run is not retried
        self._full_next: set[str] = set()  # sessions whose last rolling update failed
        self._yields: dict[str, int] = {}  # session -> times its summary yielded to an answer in a row
        self.lag = LagGauge(store, keep_turns, policies)
        self._stats = WorkerStats()
        self._stats_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    @classmethod
    def configured(
        cls,
        store: Store,
        model: ChatModel,
        settings: Settings,
        extract: Extract,
        answering: Any = None,
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

    def start(self) -> SummaryWorker:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="summary-worker", daemon=True)
            self._thread.start()
        return self

    def notify(self, session_id: str) -> None:
        """A turn was stored (or summarizing was resumed): look at this session soon. Never blocks and
        reads nothing: the lag gauge reads the session when it is scraped."""
        self.lag.changed(session_id)
        with self._cond:
            self._pending[session_id] = None
            self._cond.notify_all()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or running; False if ``timeout`` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._running, timeout)

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread; a summary in progress is cancelled and stores nothing."""
        with self._cond:
            self._stopping = True
            if self._cancel is not None:
                self._cancel.set()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def is_alive(self) -> bool:
        """Whether the background thread is running (readiness checks ask this)."""
        return self._thread is not None and self._thread.is_alive()

    def stats(self) -> WorkerStats:
        with self._stats_lock:
            return self._stats

    def counters(self) -> dict[str, int]:
        """Monotonic counts for ``/metrics`` (the ``WorkerStatus`` protocol the edges read)."""
        st = self.stats()
        return {
            "runs": st.runs,
            "failures": st.failures,
            "accepted": st.accepted,
            "rejected": st.rejected,
            "errors": st.errors,
            "timeouts": st.timeouts,
            "forced": st.forced,
        }

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

    # the thread ---------------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._stopping)
                # Yield to the responder: do not start while an answer is being generated (unless the
                # session has yielded enough times in a row).
                session_id = None
                while not self._stopping and (session_id := self._next()) is None:
                    self._cond.wait(_POLL_S)
                if self._stopping or session_id is None:
                    return
                del self._pending[session_id]
                self._running = True
            try:
                self.run_once(session_id)
            except Exception as exc:  # noqa: BLE001 - the thread must outlive one bad session; it is logged and counted
                log.exception("summary worker: session %s", session_id)
                self._count(errors=1, last_error=f"{type(exc).__name__}: {exc}")
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()

    def _next(self) -> str | None:
        """The queued session to run now (the oldest), or while an answer is being generated the
        oldest that may no longer yield; None: wait. Called holding ``_cond``."""
        if not (self.settings.yield_to_answers and is_busy(self.answering)):
            return next(iter(self._pending), None)
        return next((s for s in self._pending if self._must_run(s)), None)

    def _must_run(self, session_id: str) -> bool:
        """Whether this session's summary has yielded to answers ``max_yields`` times in a row
        (0 counts as 1: it never yields twice) and so runs beside them."""
        return self._yields.get(session_id, 0) >= max(1, self.settings.max_yields)

    # one session --------------------------------------------------------------------------------

    def run_once(self, session_id: str) -> tuple[SummaryVersion, ...]:
        """Bring one session's summary up to date now, in this thread; returns the versions stored."""
        stored: list[SummaryVersion] = []
        try:
            for _ in range(MAX_STEPS):
                version = self._step(session_id)
                if version is None:
                    break
                stored.append(version)
                if version.status != "accepted" and not version.reason.startswith("stale"):
                    break  # a failure is retried at the next notification, not in a loop
        finally:
            if stored:
                self.lag.changed(session_id)
        return tuple(stored)

    def _step(self, session_id: str) -> SummaryVersion | None:
        try:
            snap = self.store.snapshot(session_id)
        except SessionNotFound:  # erased since it was queued: nothing to summarize, nothing to keep
            for bookkeeping in (self._last_full, self._retry_at, self._yields):
                bookkeeping.pop(session_id, None)
            self._full_next.discard(session_id)
            self.forget(session_id)
            return None
        if self.policies is not None and snap.session.policy not in self.policies:
            return None  # raw and the seed baselines read no summary
        if snap.session.summary_paused:
            self._count(skipped_paused=1)
            return None
        turns, base = snap.turns, snap.summary
        covered = base.covers_to if base is not None else -1
        eligible = list(turns[: max(0, len(turns) - self.keep_turns)])
        pending = [t for t in eligible if t.index > covered]
        if len(pending) < self.settings.every_turns or len(turns) < self._retry_at.get(session_id, 0):
            return None
        s = self.settings
        last_full = self._last_full.setdefault(session_id, covered + 1)
        # A full re-summary replaces model text only: an operator's version is carried forward, never
        # discarded. One also follows a failed rolling update: a small model that cannot update a
        # summary (it copies it unchanged) can still write one afresh from the transcript.
        full = base is None or (
            base.author == "model"
            and (session_id in self._full_next or len(turns) // s.resummarize_every > last_full // s.resummarize_every)
        )
        previous = None if full else base
        language = summarizer.conversation_language(turns, s.languages)
        chunk = self._fit(previous, eligible if full else pending, language)
        if full and base is not None and len(chunk) < len(eligible):
            # The transcript has outgrown the window: a full re-summary would cover less than the
            # current version does, so roll on from it instead.
            full, previous = False, base
            chunk = self._fit(previous, pending, language)
        if not chunk:
            self._yields.pop(session_id, None)
            return self._reject(session_id, pending[0].index, f"turn {pending[0].index} does not fit summarizer.n_ctx")
        if full:
            self._last_full[session_id] = chunk[-1].index + 1
            self._full_next.discard(session_id)
        messages = summarizer.summary_prompt(previous, chunk, language, max_words=self.max_words)
        cancel = threading.Event()
        with self._cond:
            if self._stopping:
                return None
            self._cancel = cancel
        done = threading.Event()
        why: list[str] = []
        # A session that has yielded enough times in a row runs beside the answers this time.
        yielding = s.yield_to_answers and not self._must_run(session_id)
        if s.yield_to_answers and not yielding:
            self._count(forced=1)
        progress = _Progress()
        watcher = threading.Thread(
            target=self._watch, args=(cancel, done, why, progress, yielding), name="summary-watch", daemon=True
        )
        started = time.perf_counter()
        watcher.start()
        failure = ""
        text = ""
        try:
            text = summarizer.summarize(self.model, messages, self.sampling, cancel=cancel, on_token=progress.on_token)
        except Cancelled:
            if self._stopping:
                return None
            if why == ["answer"]:
                # Not a failure: the responder needed the CPU. Try again once it is done.
                self._yields[session_id] = self._yields.get(session_id, 0) + 1
                self._count(yielded=1)
                self.notify(session_id)
                return None
            failure = _timeout_reason(progress, s) if why == ["timeout"] else "cancelled"
        except ApplianceError as exc:
            failure = f"failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - a broken model must not stop the worker: stored, counted, logged
            log.exception("summarizer failed on session %s", session_id)
            failure = f"failed: {type(exc).__name__}: {exc}"
        finally:
            done.set()
            watcher.join()
            with self._cond:
                self._cancel = None
        duration = time.perf_counter() - started
        covers_to = chunk[-1].index
        self._yields.pop(session_id, None)  # this run finished: the next one may yield again
        if failure:
            self._count(
                runs=1,
                duration=duration,
                last_error=failure,
                **({"timeouts": 1} if failure.startswith("timeout") else {"errors": 1}),
            )
            self._failed(session_id, len(turns), rolling=previous is not None)
            return self._reject(session_id, covers_to, failure)
        verdict = summarizer.validate(
            text,
            summarizer.Source(
                turns=chunk,
                previous=previous,
                transcript_text="\n".join(t.text for t in turns),
                language=language,
                secret_values=slots.secret_values(turns),  # none where secrets were masked before storing
            ),
            summarizer.Checks(
                cap_tokens=s.max_tokens,
                counter=self.model,
                extract=self.extract,
                languages=s.languages,
                index=index_keys,
                lookup=lookup_keys,
            ),
        )
        current = self.store.current_summary(session_id)
        if _version(current) != _version(base):
            # An operator edited or restored the summary while this one was being made from the old one.
            self._count(runs=1, stale=1, duration=duration)
            return self._reject(
                session_id,
                covers_to,
                f"stale: based on version {_version(base)}, but version {_version(current)} "
                f"({current.author if current else 'none'}) was stored meanwhile",
                text=verdict.text,
            )
        self._count(runs=1, duration=duration, accepted=int(verdict.ok), rejected=int(not verdict.ok))
        if verdict.ok:
            self._retry_at.pop(session_id, None)
        else:
            self._failed(session_id, len(turns), rolling=previous is not None)
        return self.store.add_summary(
            SummaryVersion(
                session_id=session_id,
                version=0,
                text=verdict.text,
                covers_to=covers_to,
                author="model",
                status="accepted" if verdict.ok else "rejected",
                reason="; ".join(filter(None, ["full re-summary" if full and base else "", verdict.reason])),
            )
        )

    def _failed(self, session_id: str, n_turns: int, *, rolling: bool) -> None:
        """Retry after ``every_turns`` more turns (not at every turn: each attempt costs a generation)."""
        self._retry_at[session_id] = n_turns + self.settings.every_turns
        if rolling:
            self._full_next.add(session_id)

    def _watch(
        self, cancel: threading.Event, done: threading.Event, why: list[str], progress: _Progress, yielding: bool
    ) -> None:
        """Cancel the running summary when it stops making progress (:func:`progress_deadline`), or
        as soon as an answer starts (when ``yielding``)."""
        while not done.wait(min(_POLL_S, max(0.0, progress.deadline(self.settings) - time.monotonic()))):
            if time.monotonic() >= progress.deadline(self.settings):
                why.append("timeout")
            elif yielding and is_busy(self.answering):
                why.append("answer")
            else:
                continue
            cancel.set()
            return

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

        def fits(k: int) -> bool:
            prompt = summarizer.summary_prompt(previous, turns[:k], language, max_words=self.max_words)
            return self.model.count(prompt) <= room

        if fits(len(turns)):
            return list(turns)
        lo, hi = 0, len(turns)  # fits(lo) is assumed, fits(hi) is false
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fits(mid):
                lo = mid
            else:
                hi = mid
        return list(turns[:lo])

    def _count(self, *, duration: float | None = None, last_error: str = "", **counts: int) -> None:
        with self._stats_lock:
            st = self._stats
            values = {name: getattr(st, name) + n for name, n in counts.items()}
            if duration is not None:
                values["durations_s"] = (*st.durations_s[-(KEEP_DURATIONS - 1) :], duration)
            if last_error:
                values["last_error"] = last_error
            self._stats = WorkerStats(**{**st.__dict__, **values})


def _version(summary: SummaryVersion | None) -> int:
    return summary.version if summary is not None else 0


def _timeout_reason(progress: _Progress, settings: SummarizerSettings) -> str:
    if progress.last_token is None:
        return f"timeout after {settings.timeout_s:g} s"
    took = time.monotonic() - progress.started
    return f"timeout after {took:.1f} s: no token for {settings.stall_s:g} s after {progress.tokens} tokens"
