"""The HTTP API: the only module that imports the web framework (FastAPI and Starlette).

Two faces over one pipeline: the native sessions API, and an OpenAI-compatible chat endpoint so
that the official ``openai`` client and the tools built on it work unchanged. Typed errors are
turned into HTTP statuses here and nowhere else.

Inference never runs on the event loop: each model has one :class:`FairQueue`, whose single worker
thread takes sessions in turn (one busy session cannot starve the others, and a session's own turns
are answered in order). Tokens travel from that thread to the loop through an asyncio queue; a
client that goes away sets the job's cancel event, the model stops at its next chunk, and the
pipeline stores nothing, because it writes a turn only once the answer is complete.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hmac
import json
import math
import os
import sqlite3
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from appliance.errors import (
    ApplianceError,
    Busy,
    Cancelled,
    ConfigError,
    GenerationError,
    InputError,
    MessageTooLong,
    ModelLoadError,
    SessionNotFound,
    StoreError,
)
from appliance.turn.pipeline import Pipeline
from appliance.types import Generation, Message, OnToken, TurnResult, WorkerStatus, to_dict

T = TypeVar("T")


# errors of the serving edge itself --------------------------------------------------------------


class ShuttingDown(ApplianceError):
    """The daemon is stopping and takes no new answers."""

    title = "Shutting down"


class TimedOut(ApplianceError):
    """An answer took longer than ``server.request_timeout_s``; it was cancelled and not stored."""

    title = "Timed out"


class Unauthorized(ApplianceError):
    """The request carries no bearer token, or the wrong one."""

    title = "Unauthorized"


# Each typed error class → (HTTP status, the "type" of the JSON error body). Looked up along the
# exception's MRO, so a subclass maps before its base.
STATUS: dict[type[Exception], tuple[int, str]] = {
    MessageTooLong: (413, "message_too_long"),
    InputError: (422, "invalid_request"),
    SessionNotFound: (404, "not_found"),
    Busy: (429, "busy"),
    Unauthorized: (401, "unauthorized"),
    ShuttingDown: (503, "shutting_down"),
    StoreError: (503, "storage_error"),
    ModelLoadError: (503, "model_unavailable"),
    TimedOut: (504, "timeout"),
    GenerationError: (502, "generation_failed"),
    Cancelled: (499, "cancelled"),
    ConfigError: (500, "config_error"),
    ApplianceError: (500, "internal_error"),
}


def status_of(exc: Exception) -> tuple[int, str]:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    raise TypeError(f"no HTTP status for {type(exc).__name__}")


def error_body(exc: Exception) -> dict[str, Any]:
    """``{"error": {"type", "message", "field"?, "limit"?}}`` for a typed error."""
    _, kind = status_of(exc)
    body: dict[str, Any] = {"type": kind, "message": str(exc)}
    if isinstance(exc, InputError):
        body["field"] = exc.field
        if exc.limit is not None:
            body["limit"] = exc.limit
    return {"error": body}


def error_response(exc: Exception) -> JSONResponse:
    status, _ = status_of(exc)
    headers = {}
    if isinstance(exc, Busy):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(error_body(exc), status_code=status, headers=headers)


# one queue per model -----------------------------------------------------------------------------


class Job(Generic[T]):
    """One piece of model work waiting in, or taken from, a :class:`FairQueue`."""

    def __init__(self, key: str, fn: Callable[[Job[T]], T]) -> None:
        self.key = key
        self.fn = fn
        self.cancel = threading.Event()
        self.future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self.last_progress = time.monotonic()

    def progress(self) -> None:
        """Called by the work as it advances (each token), so that a hung model can be told apart."""
        self.last_progress = time.monotonic()


class FairQueue:
    """The jobs for one model, run one at a time on a worker thread, sessions taken in turn.

    Each key (a session) has its own lane; the worker takes the first job of the lane at the front
    and moves that lane to the back, so ten queued turns of one session do not delay another
    session's single turn by ten answers. Within a lane jobs keep their order. A llama.cpp context
    serves one generation at a time anyway, so one thread per model loses nothing.
    """

    def __init__(self, name: str, *, max_waiting: int, retry_after: float) -> None:
        self.name = name
        self.max_waiting = max_waiting
        self.retry_after = retry_after
        self._lanes: OrderedDict[str, deque[Job[Any]]] = OrderedDict()
        self._waiting = 0
        self._running: Job[Any] | None = None
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._work, name=f"model-{name}", daemon=True)

    def start(self) -> FairQueue:
        self._thread.start()
        return self

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def running(self) -> bool:
        return self._running is not None

    def alive(self) -> bool:
        return self._thread.is_alive() and not self._closed

    def stalled(self, limit_s: float) -> bool:
        """True if the running job has made no progress for ``limit_s`` seconds (a hung model)."""
        job = self._running
        return job is not None and time.monotonic() - job.last_progress > limit_s

    def submit(self, key: str, fn: Callable[[Job[T]], T]) -> Job[T]:
        with self._cond:
            if self._closed:
                raise ShuttingDown("the appliance is shutting down; try again after it restarts")
            if self._waiting >= self.max_waiting:
                raise Busy(
                    f"the {self.name} queue is full ({self._waiting} answers waiting; server.queue_max)",
                    retry_after=self.retry_after,
                )
            job = Job(key, fn)
            self._lanes.setdefault(key, deque()).append(job)
            self._waiting += 1
            self._cond.notify()
        return job

    def withdraw(self, job: Job[Any]) -> None:
        """Cancel a job: drop it if it still waits, else ask the running work to stop."""
        job.cancel.set()
        with self._cond:
            lane = self._lanes.get(job.key)
            if lane is not None and any(j is job for j in lane):
                lane.remove(job)
                self._waiting -= 1
                if not lane:
                    del self._lanes[job.key]
                job.future.set_exception(Cancelled("withdrawn before it started"))

    def stop_accepting(self) -> None:
        """Refuse new jobs and fail the waiting ones; the running one may finish."""
        with self._cond:
            self._closed = True
            for lane in self._lanes.values():
                for job in lane:
                    job.cancel.set()
                    job.future.set_exception(ShuttingDown("the appliance is shutting down"))
            self._lanes.clear()
            self._waiting = 0
            self._cond.notify_all()

    def close(self, timeout: float | None = None) -> None:
        """Stop accepting, cancel the running job, and wait for the worker thread to end."""
        self.stop_accepting()
        with self._cond:
            if self._running is not None:
                self._running.cancel.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._lanes and not self._closed:
                    self._cond.wait()
                if not self._lanes:
                    return
                key, lane = next(iter(self._lanes.items()))
                job = lane.popleft()
                self._waiting -= 1
                if lane:
                    self._lanes.move_to_end(key)
                else:
                    del self._lanes[key]
                self._running = job
                job.progress()
            try:
                if job.future.set_running_or_notify_cancel():
                    try:
                        result = job.fn(job)
                    except Exception as exc:  # handed to the waiting request, which translates it
                        job.future.set_exception(exc)
                    else:
                        job.future.set_result(result)
            finally:
                with self._cond:
                    self._running = None


_DONE = object()


class Run(Generic[T]):
    """A submitted job seen from the event loop: its tokens as they come, then its result."""

    def __init__(self, queue: FairQueue, deadline: float) -> None:
        self.queue = queue
        self.deadline = deadline
        self.loop = asyncio.get_running_loop()
        self.events: asyncio.Queue[object] = asyncio.Queue()
        self.job: Job[T] | None = None
        self._get: asyncio.Future[object] | None = None
        self._checked = time.monotonic()  # when the client's connection was last looked at

    def start(self, key: str, work: Callable[[threading.Event, OnToken], T]) -> Run[T]:
        def fn(job: Job[T]) -> T:
            def on_token(piece: str) -> None:
                job.progress()
                self._post(piece)

            return work(job.cancel, on_token)

        self.job = self.queue.submit(key, fn)
        # Done callbacks run after every on_token call was scheduled, so _DONE always comes last.
        self.job.future.add_done_callback(lambda _f: self._post(_DONE))
        return self

    def _post(self, item: object) -> None:
        """Hand an item to the loop from the model's thread; after shutdown there is no one to hand it to."""
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.events.put_nowait, item)

    async def next(self, request: Request | None = None, poll_s: float = 0.5) -> str | None:
        """The next piece of text, or None once the work is over (then call :meth:`result`).

        With ``request``, checks every ``poll_s`` whether the client went away (before a streamed
        response starts; once it has, Starlette cancels the stream on disconnect instead).
        """
        while True:
            now = time.monotonic()
            remaining = self.deadline - now
            if remaining <= 0:
                self.stop()
                raise TimedOut("the answer took longer than server.request_timeout_s; nothing was stored")
            # Checked on a clock, not only when tokens pause: a fast model never pauses for poll_s.
            if request is not None and now - self._checked >= poll_s:
                self._checked = now
                if await request.is_disconnected():
                    self.stop()
                    raise Cancelled("the client went away")
            if self._get is None:
                self._get = asyncio.ensure_future(self.events.get())
            done, _ = await asyncio.wait({self._get}, timeout=min(remaining, poll_s) if request else remaining)
            if done:
                item, self._get = self._get.result(), None
                return None if item is _DONE else str(item)

    def result(self) -> T:
        assert self.job is not None
        return self.job.future.result()

    def stop(self) -> None:
        """Cancel the job unless it is complete; harmless afterwards."""
        if self._get is not None:
            self._get.cancel()
            self._get = None
        if self.job is not None and not self.job.future.done():
            self.queue.withdraw(self.job)


# metrics -----------------------------------------------------------------------------------------


class Metrics:
    """Counters for ``/metrics`` in Prometheus' text format; thread-safe, no dependency."""

    BUCKETS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.answers = 0
        self.turns_recorded = 0
        self.checker_flags = 0
        self.cancelled = 0
        self.errors: dict[int, int] = {}
        self.latency_buckets = [0] * len(self.BUCKETS)
        self.latency_sum = 0.0

    def answered(self, seconds: float, flags: int) -> None:
        with self._lock:
            self.answers += 1
            self.checker_flags += flags
            self.latency_sum += seconds
            for i, bound in enumerate(self.BUCKETS):
                if seconds <= bound:
                    self.latency_buckets[i] += 1

    def recorded(self) -> None:
        with self._lock:
            self.turns_recorded += 1

    def failed(self, status: int) -> None:
        with self._lock:
            self.errors[status] = self.errors.get(status, 0) + 1

    def render(self, queues: Sequence[FairQueue], answering: bool, worker: WorkerStatus | None) -> str:
        with self._lock:
            lines = [
                *_metric("appliance_answers_total", "counter", "Answers generated and stored.", self.answers),
                *_metric(
                    "appliance_turns_recorded_total",
                    "counter",
                    "Turns recorded without generating.",
                    self.turns_recorded,
                ),
                *_metric(
                    "appliance_checker_flags_total",
                    "counter",
                    "Facts in answers that the checker found unsupported.",
                    self.checker_flags,
                ),
                "# HELP appliance_http_errors_total Requests answered with an error, by status.",
                "# TYPE appliance_http_errors_total counter",
                *(f'appliance_http_errors_total{{status="{s}"}} {n}' for s, n in sorted(self.errors.items())),
                "# HELP appliance_answer_seconds Time from request to stored answer, queueing included.",
                "# TYPE appliance_answer_seconds histogram",
                *(
                    f'appliance_answer_seconds_bucket{{le="{b}"}} {n}'
                    for b, n in zip(self.BUCKETS, self.latency_buckets)
                ),
                f'appliance_answer_seconds_bucket{{le="+Inf"}} {self.answers}',
                f"appliance_answer_seconds_sum {self.latency_sum:.6f}",
                f"appliance_answer_seconds_count {self.answers}",
            ]
        lines += [
            "# HELP appliance_queue_waiting Answers waiting for their model.",
            "# TYPE appliance_queue_waiting gauge",
            *(f'appliance_queue_waiting{{model="{q.name}"}} {q.waiting}' for q in queues),
            *_metric("appliance_answering", "gauge", "1 while an answer is being generated.", int(answering)),
        ]
        if worker is not None:
            for name, value in sorted(worker.counters().items()):
                lines += _metric(f"appliance_summarizer_{name}_total", "counter", f"Summarizer {name}.", value)
            lines += _metric(
                "appliance_summarizer_alive", "gauge", "1 while the summary worker runs.", int(worker.is_alive())
            )
        return "\n".join(lines) + "\n"


def _metric(name: str, kind: str, help_text: str, value: float) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name} {value}"]


# request bodies ----------------------------------------------------------------------------------


class _Body(BaseModel):
    # Strict: a number where text belongs, or "yes" for a boolean, is a 422 naming the field.
    model_config = ConfigDict(extra="forbid", strict=True)


class NewSession(_Body):
    policy: str | None = Field(None, description="Context policy; default `context.policy`.")
    title: str = Field("", max_length=200, description="A label for operators.")


class NewMessage(_Body):
    text: str = Field(description="The customer's message.")
    stream: bool = Field(False, description="Answer as server-sent events: `token` events, then `done`.")


class NewTurn(_Body):
    role: Literal["customer", "agent"] = Field(description="Who said it.")
    text: str = Field(description="What was said.")


class SummaryEdit(_Body):
    text: str = Field(description="The operator's summary; stored as a new version.")


class SummaryRestore(_Body):
    version: int = Field(ge=1, description="The earlier version to make current again (as a new version).")


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):  # content parts: keep the text ones
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatCompletionRequest(BaseModel):
    # Clients send options this server does not use (n, stop, stream_options...): accepted, ignored.
    model_config = ConfigDict(extra="allow")
    model: str = Field("", description="Ignored: the appliance answers with its configured responder.")
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(None, ge=1, description="Capped at `responder.max_tokens`.")
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    session_id: str | None = Field(None, description="Answer within this appliance session (context engine).")
    user: str | None = Field(None, description="Taken as the session id when `session_id` is absent.")


# bodies of answers ---------------------------------------------------------------------------


def answer_body(result: TurnResult) -> dict[str, Any]:
    r = result.record
    return {
        "session_id": result.session_id,
        "text": result.agent.text,
        "customer": to_dict(result.customer),
        "agent": to_dict(result.agent),
        "stage": r.stage,
        "model": r.model,
        "check": {**to_dict(r.check), "ok": r.check.ok},
        "manifest": to_dict(r.manifest),
        "timings": to_dict(r.timings),
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
    }


def sse(event: str, data: Mapping[str, Any]) -> str:
    """One server-sent event; JSON never contains a raw newline, so one data line suffices."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def sse_data(data: Mapping[str, Any] | str) -> str:
    """An OpenAI-style event: a bare ``data:`` line."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n"


SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


# authentication ----------------------------------------------------------------------------------


class BearerAuth:
    """Pure ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``.

    Pure ASGI (not BaseHTTPMiddleware) so that streamed responses and disconnects pass untouched.
    """

    def __init__(self, app: ASGIApp, token: str, on_reject: Callable[[int], None]) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.on_reject = on_reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                self.on_reject(401)
                reason = "missing bearer token" if not given else "wrong bearer token"
                await error_response(Unauthorized(reason))(scope, receive, send)
                return
        await self.app(scope, receive, send)


# the application ---------------------------------------------------------------------------------


def create_app(
    pipeline: Pipeline,
    queue: FairQueue,
    *,
    token: str | None = None,
    request_timeout_s: float = 300.0,
    hung_after_s: float = 120.0,
    worker: WorkerStatus | None = None,
) -> FastAPI:
    """The ASGI app over a built pipeline and the responder's started queue."""
    # No /docs: its page loads scripts from a CDN, and the appliance is offline. The schema stays.
    app = FastAPI(title="appliance", version="1", docs_url=None, redoc_url=None)
    metrics = Metrics()
    store = pipeline.store
    responder_name = pipeline.responder.name
    app.state.metrics = metrics
    app.state.queue = queue
    if token:
        app.add_middleware(BearerAuth, token=token, on_reject=metrics.failed)

    # error translation ---------------------------------------------------------------------------

    @app.exception_handler(ApplianceError)
    async def _typed(request: Request, exc: ApplianceError) -> Response:
        metrics.failed(status_of(exc)[0])
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
        loc = [str(p) for p in first["loc"]]
        if loc and loc[0] in ("body", "query", "path"):
            loc = loc[1:]
        field = "body" if first.get("type") == "json_invalid" or not loc else ".".join(loc)
        metrics.failed(422)
        body = {"type": "invalid_request", "message": f"{field}: {first['msg']}", "field": field}
        return JSONResponse({"error": body}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        metrics.failed(exc.status_code)
        kind = "not_found" if exc.status_code == 404 else "http_error"
        return JSONResponse({"error": {"type": kind, "message": str(exc.detail)}}, status_code=exc.status_code)

    # helpers -------------------------------------------------------------------------------------

    def deadline() -> float:
        return time.monotonic() + request_timeout_s

    async def answer_run(request: Request, session_id: str, text: str) -> tuple[Run[TurnResult], str | None]:
        """Validate (nothing queued for a bad request), queue the answer, and wait for its first piece."""

        def check() -> str:
            store.session(session_id)
            return pipeline.validate_message(text)

        message = await asyncio.to_thread(check)
        run: Run[TurnResult] = Run(queue, deadline())
        run.start(
            session_id,
            lambda cancel, on_token: pipeline.answer(session_id, message, on_token=on_token, cancel=cancel),
        )
        return run, await _first(run, request)

    async def _first(run: Run[Any], request: Request) -> str | None:
        try:
            first = await run.next(request)
            if first is None:
                run.result()  # a failure before any token is answered with its own status
            return first
        except BaseException:
            run.stop()
            raise

    async def finish(run: Run[T], request: Request, first: str | None) -> T:
        try:
            piece = first
            while piece is not None:
                piece = await run.next(request)
            return run.result()
        finally:
            run.stop()

    def answered(result: TurnResult, started: float) -> None:
        metrics.answered(time.monotonic() - started, len(result.record.check.findings))

    # health --------------------------------------------------------------------------------------

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """Alive: the process answers HTTP."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"])
    def readyz() -> Response:
        """Ready: models loaded and verified and not hung, database writable, worker alive if any."""
        checks: dict[str, bool] = {
            "model": queue.alive() and not queue.stalled(hung_after_s),
            "database": _database_writable(pipeline),
        }
        if worker is not None:
            checks["worker"] = worker.is_alive()
        ok = all(checks.values())
        return JSONResponse({"ready": ok, "checks": checks, "model": responder_name}, status_code=200 if ok else 503)

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    async def metrics_text() -> PlainTextResponse:
        """Prometheus text format."""
        text = metrics.render([queue], pipeline.answering.busy, worker)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    # native sessions API -------------------------------------------------------------------------

    @app.post("/v1/sessions", status_code=201, tags=["sessions"])
    def create_session(body: NewSession | None = None) -> dict[str, Any]:
        """Start a session."""
        body = body or NewSession()
        return to_dict(pipeline.new_session(policy=body.policy, title=body.title))

    @app.get("/v1/sessions", tags=["sessions"])
    def list_sessions(limit: int = 100, search: str = "") -> dict[str, Any]:
        """Newest first, with turn counts; ``search`` matches ids, titles and message text."""
        return {"sessions": store.sessions(limit=max(1, min(limit, 1000)), search=search)}

    @app.get("/v1/sessions/{session_id}", tags=["sessions"])
    def get_session(session_id: str) -> dict[str, Any]:
        """Transcript, current and earlier summaries, ledger, and each answer's stage, manifest, check, timings."""
        snap = store.snapshot(session_id)
        records = [
            {"index": index, **to_dict(record), "check": {**to_dict(record.check), "ok": record.check.ok}}
            for index, record in store.records(session_id)
        ]
        return {
            "session": to_dict(snap.session),
            "turns": [to_dict(t) for t in snap.turns],
            "summary": to_dict(snap.summary) if snap.summary else None,
            "summaries": [to_dict(s) for s in store.summaries(session_id)],
            "ledger": [to_dict(e) for e in snap.ledger],
            "records": records,
        }

    @app.post("/v1/sessions/{session_id}/messages", tags=["sessions"])
    async def post_message(session_id: str, body: NewMessage, request: Request) -> Response:
        """A customer message in, the answer out (as server-sent events when ``stream``).

        Streamed: ``token`` events, then ``done`` with the stored answer, stage, check and manifest
        (or ``error``). The tokens are the first attempt; if the guard replaced it, ``done.text``
        is the answer that was stored.
        """
        started = time.monotonic()
        run, first = await answer_run(request, session_id, body.text)
        if not body.stream:
            result = await finish(run, request, first)
            answered(result, started)
            return JSONResponse(answer_body(result))

        async def events() -> AsyncIterator[str]:
            try:
                piece = first
                while piece is not None:
                    yield sse("token", {"text": piece})
                    piece = await run.next()
                result = run.result()
                answered(result, started)
                yield sse("done", answer_body(result))
            except ApplianceError as exc:
                metrics.failed(status_of(exc)[0])
                yield sse("error", error_body(exc))
            finally:
                run.stop()  # the client went away (Starlette cancelled us): stop the model

        return StreamingResponse(events(), media_type="text/event-stream", headers=SSE_HEADERS)

    @app.post("/v1/sessions/{session_id}/turns", status_code=201, tags=["sessions"])
    def post_turn(session_id: str, body: NewTurn) -> dict[str, Any]:
        """Record a turn without generating (a human agent taking over, or a replayed transcript)."""
        turn = pipeline.record_turn(session_id, body.role, body.text)
        metrics.recorded()
        return to_dict(turn)

    @app.put("/v1/sessions/{session_id}/summary", status_code=201, tags=["summary"])
    @app.post("/v1/sessions/{session_id}/summary", status_code=201, tags=["summary"])
    def edit_summary(session_id: str, body: SummaryEdit) -> dict[str, Any]:
        """An operator's summary, stored as a new version."""
        store.session(session_id)
        return to_dict(pipeline.edit_summary(session_id, body.text))

    @app.post("/v1/sessions/{session_id}/summary/restore", status_code=201, tags=["summary"])
    def restore_summary(session_id: str, body: SummaryRestore) -> dict[str, Any]:
        """Make an earlier version current again (as a new version; history is never rewritten)."""
        store.session(session_id)
        return to_dict(pipeline.restore_summary(session_id, body.version))

    @app.post("/v1/sessions/{session_id}/summary/pause", tags=["summary"])
    def pause_summary(session_id: str) -> dict[str, Any]:
        """Stop the summarizer for this session (its current summary stays in use)."""
        pipeline.set_summary_paused(session_id, True)
        return to_dict(store.session(session_id))

    @app.post("/v1/sessions/{session_id}/summary/resume", tags=["summary"])
    def resume_summary(session_id: str) -> dict[str, Any]:
        pipeline.set_summary_paused(session_id, False)
        return to_dict(store.session(session_id))

    # OpenAI-compatible ---------------------------------------------------------------------------

    @app.get("/v1/models", tags=["openai"])
    async def list_models() -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": responder_name, "object": "model", "created": 0, "owned_by": "appliance"}],
        }

    @app.post("/v1/chat/completions", tags=["openai"])
    async def chat_completions(body: ChatCompletionRequest, request: Request) -> Response:
        """With ``session_id`` (or ``user``) the last user message is answered in that session; else
        the message list is the transcript."""
        started = time.monotonic()
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        session_id = body.session_id or body.user
        run: Run[Any]
        if session_id:
            last = body.messages[-1]
            if last.role != "user":
                raise InputError("the last message must be the customer's (role user)", field="messages")
            run, first = await answer_run(request, session_id, last.text())
        else:
            run, first = await stateless_run(request, body)

        def usage_of(result: Any) -> tuple[str, str, int, int, dict[str, Any]]:
            if isinstance(result, TurnResult):
                r = result.record
                # "text" is the stored answer: when the guard replaced the streamed first attempt, it differs.
                extra = {
                    "session_id": result.session_id,
                    "text": result.agent.text,
                    "stage": r.stage,
                    "check": {**to_dict(r.check), "ok": r.check.ok},
                    "manifest": to_dict(r.manifest),
                }
                return result.agent.text, "stop", r.prompt_tokens, r.completion_tokens, extra
            assert isinstance(result, Generation)
            finish_reason = "length" if result.finish_reason == "length" else "stop"
            return result.text, finish_reason, result.prompt_tokens, result.completion_tokens, {}

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": responder_name,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        if not body.stream:
            result = await finish(run, request, first)
            if isinstance(result, TurnResult):
                answered(result, started)
            text, finish_reason, prompt_tokens, completion_tokens, extra = usage_of(result)
            return JSONResponse(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": created,
                    "model": responder_name,
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                    **({"appliance": extra} if extra else {}),
                }
            )

        async def events() -> AsyncIterator[str]:
            try:
                yield sse_data(chunk({"role": "assistant", "content": ""}))
                piece = first
                while piece is not None:
                    yield sse_data(chunk({"content": piece}))
                    piece = await run.next()
                result = run.result()
                if isinstance(result, TurnResult):
                    answered(result, started)
                _, finish_reason, _, _, extra = usage_of(result)
                last_chunk = chunk({}, finish_reason)
                if extra:
                    last_chunk["appliance"] = extra
                yield sse_data(last_chunk)
                yield sse_data("[DONE]")
            except ApplianceError as exc:
                metrics.failed(status_of(exc)[0])
                yield sse_data(error_body(exc))
            finally:
                run.stop()

        return StreamingResponse(events(), media_type="text/event-stream", headers=SSE_HEADERS)

    async def stateless_run(request: Request, body: ChatCompletionRequest) -> tuple[Run[Generation], str | None]:
        """The request's messages are the transcript: fitted to the budget, then generated from."""
        given = [Message("system" if m.role == "developer" else m.role, m.text()) for m in body.messages]  # type: ignore[arg-type]
        pipeline.validate_message(given[-1].content)
        settings = pipeline.settings
        if not any(m.role == "system" for m in given):
            given.insert(0, Message("system", settings.system_prompt))
        wanted = body.max_completion_tokens or body.max_tokens or settings.sampling.max_tokens
        sampling = dataclasses.replace(
            settings.sampling,
            max_tokens=min(wanted, settings.sampling.max_tokens),
            **({"temperature": body.temperature} if body.temperature is not None else {}),
            **({"top_p": body.top_p} if body.top_p is not None else {}),
        )

        def work(cancel: threading.Event, on_token: OnToken) -> Generation:
            messages = fit_messages(given, pipeline.responder.count, settings.budget_tokens)
            with pipeline.answering:
                return pipeline.responder.generate(messages, sampling, on_token=on_token, cancel=cancel)

        run: Run[Generation] = Run(queue, deadline())
        run.start(f"request-{uuid.uuid4().hex}", work)
        return run, await _first(run, request)

    return app


def fit_messages(
    messages: Sequence[Message], count: Callable[[Sequence[Message]], int], budget: int
) -> tuple[Message, ...]:
    """Drop the oldest non-system messages until the prompt fits ``budget`` tokens; never the last one."""
    kept = list(messages)
    while count(kept) > budget:
        droppable = [i for i, m in enumerate(kept[:-1]) if m.role != "system"]
        if not droppable:
            raise MessageTooLong(
                f"the messages need {count(kept)} tokens even with all earlier turns dropped; "
                f"the limit is {budget} (context.budget_tokens)",
                field="messages",
                limit=budget,
            )
        del kept[droppable[0]]
    return tuple(kept)


def _database_writable(pipeline: Pipeline) -> bool:
    """The database answers a query, and its file and folder are writable (WAL writes beside it)."""
    path = pipeline.store.path
    try:
        pipeline.store.sessions(limit=1)
    except (StoreError, sqlite3.Error):
        return False
    if path is None:
        return True
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
