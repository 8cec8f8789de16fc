"""The HTTP API: the routes, over one built :class:`~appliance.app.Appliance`.

Two faces over one pipeline: the native sessions API, and an OpenAI-compatible chat endpoint so
that the official ``openai`` client and the tools built on it work unchanged. The web framework
(FastAPI and Starlette) is imported only inside ``serve/``; typed errors become HTTP statuses in
``serve/errors.py`` and nowhere else.

Every turn that touches a session's transcript (an answer, an operator's recorded turn) runs as a job
in that session's lane of the model's queue, so one session's turns are written in order and an
operator's turn never lands between an answer's snapshot and its write. A request is validated before
it is queued (nothing is queued, nor stored, for a bad one); the job's snapshot is the turn's one
look at the session, and a failure before the first token (an unknown session: 404) is answered with
its own status. Sampling defaults come from the pipeline's own settings (``pipeline.settings``), the
values it answers with when a request asks for nothing else.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from appliance.app import Appliance
from appliance.errors import ApplianceError, InputError, StoreError
from appliance.serve.auth import BearerAuth
from appliance.serve.errors import error_body, error_response, status_of
from appliance.serve.metrics import Metrics
from appliance.serve.schemas import (
    ChatCompletionRequest,
    NewMessage,
    NewSession,
    NewTurn,
    SummaryEdit,
    SummaryRestore,
)
from appliance.serve.streaming import SSE_HEADERS, Run, sse, sse_data
from appliance.store import Store
from appliance.types import Message, OnToken, Sampling, TurnResult, to_dict

T = TypeVar("T")


def create_app(
    appliance: Appliance,
    *,
    token: str | None = None,
    request_timeout_s: float = 300.0,
    hung_after_s: float = 120.0,
) -> FastAPI:
    """The ASGI app over a built appliance (its queue started); the caller closes the appliance."""
    # No /docs: its page loads scripts from a CDN, and the appliance is offline. The schema stays.
    app = FastAPI(title="appliance", version="1", docs_url=None, redoc_url=None)
    metrics = Metrics()
    store, pipeline, queue, worker = appliance.store, appliance.pipeline, appliance.queue, appliance.worker
    responder_name = appliance.responder.name
    defaults = pipeline.settings.sampling
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

    async def queued(
        request: Request, key: str, work: Callable[[threading.Event, OnToken], T]
    ) -> tuple[Run[T], str | None]:
        """Queue ``work`` in lane ``key`` and wait for its first piece (or its failure)."""
        run: Run[T] = Run(queue, time.monotonic() + request_timeout_s)
        run.start(key, work)
        return run, await run.first(request)

    async def answer_run(request: Request, session_id: str, text: str) -> tuple[Run[TurnResult], str | None]:
        """Validate the text (no store access), then queue the answer in the session's lane."""
        message = pipeline.validate_message(text)
        return await queued(
            request,
            session_id,
            lambda cancel, on_token: pipeline.answer(session_id, message, on_token=on_token, cancel=cancel),
        )

    async def transcript_run(
        request: Request, messages: Sequence[Message], sampling: Sampling
    ) -> tuple[Run[TurnResult], str | None]:
        """A transcript sent whole, answered under the ``raw`` policy in a lane of its own; nothing stored."""
        pipeline.validate_message(last_user_text(messages))
        return await queued(
            request,
            f"request-{uuid.uuid4().hex}",
            lambda cancel, on_token: pipeline.answer_transcript(
                messages, sampling=sampling, on_token=on_token, cancel=cancel
            ),
        )

    def answered(result: TurnResult, started: float) -> None:
        metrics.answered(time.monotonic() - started, len(result.record.check.findings))

    def sampling_of(body: ChatCompletionRequest) -> Sampling:
        """The pipeline's sampling, with the request's options (``max_tokens`` capped at the configured one)."""
        wanted = body.max_completion_tokens or body.max_tokens or defaults.max_tokens
        return dataclasses.replace(
            defaults,
            max_tokens=min(wanted, defaults.max_tokens),
            temperature=defaults.temperature if body.temperature is None else body.temperature,
            top_p=defaults.top_p if body.top_p is None else body.top_p,
        )

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
            "database": _database_writable(store),
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
            result = await run.finish(request, first)
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
    async def post_turn(session_id: str, body: NewTurn, request: Request) -> dict[str, Any]:
        """Record a turn without generating (a human agent taking over, or a replayed transcript).

        It waits in the session's lane behind any answer in progress, and is stored after it.
        """
        text = pipeline.validate_message(body.text)
        run, first = await queued(
            request, session_id, lambda cancel, on_token: pipeline.record_turn(session_id, body.role, text)
        )
        turn = await run.finish(request, first)
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
        the message list is the transcript, answered under the ``raw`` policy and not stored. Either
        way the response carries an ``appliance`` extra: stage, check and the prompt's manifest."""
        started = time.monotonic()
        completion = Completion(f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), responder_name)
        session_id = body.session_id or body.user
        messages = [m.as_message() for m in body.messages]
        limit: int | None = None  # the stateless path tells a cut-off answer by its token count
        if session_id:
            run, first = await answer_run(request, session_id, last_user_text(messages))
        else:
            sampling = sampling_of(body)
            limit = sampling.max_tokens
            run, first = await transcript_run(request, messages, sampling)

        if not body.stream:
            result = await run.finish(request, first)
            if session_id:
                answered(result, started)
            return JSONResponse(completion.body(result, limit))

        async def events() -> AsyncIterator[str]:
            try:
                yield sse_data(completion.chunk({"role": "assistant", "content": ""}))
                piece = first
                while piece is not None:
                    yield sse_data(completion.chunk({"content": piece}))
                    piece = await run.next()
                result = run.result()
                if session_id:
                    answered(result, started)
                yield sse_data(completion.last_chunk(result, limit))
                yield sse_data("[DONE]")
            except ApplianceError as exc:
                metrics.failed(status_of(exc)[0])
                yield sse_data(error_body(exc))
            finally:
                run.stop()

        return StreamingResponse(events(), media_type="text/event-stream", headers=SSE_HEADERS)

    return app


# bodies of answers -------------------------------------------------------------------------------


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


@dataclasses.dataclass(frozen=True)
class Completion:
    """One OpenAI chat completion's identity, and its bodies: whole, or as stream chunks."""

    id: str
    created: int
    model: str

    def body(self, result: TurnResult, limit: int | None) -> dict[str, Any]:
        r = result.record
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": result.agent.text},
                    "finish_reason": finish_reason(result, limit),
                }
            ],
            "usage": {
                "prompt_tokens": r.prompt_tokens,
                "completion_tokens": r.completion_tokens,
                "total_tokens": r.prompt_tokens + r.completion_tokens,
            },
            "appliance": appliance_extra(result),
        }

    def chunk(self, delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
        }

    def last_chunk(self, result: TurnResult, limit: int | None) -> dict[str, Any]:
        return {**self.chunk({}, finish_reason(result, limit)), "appliance": appliance_extra(result)}


def appliance_extra(result: TurnResult) -> dict[str, Any]:
    """What the OpenAI shape has no place for: the session (null without one), stage, check, manifest.

    ``text`` is the stored answer: when the guard replaced the streamed first attempt, it differs.
    """
    r = result.record
    return {
        "session_id": result.session_id or None,
        "text": result.agent.text,
        "stage": r.stage,
        "check": {**to_dict(r.check), "ok": r.check.ok},
        "manifest": to_dict(r.manifest),
    }


def finish_reason(result: TurnResult, limit: int | None) -> str:
    """``length`` when an answer used all of ``limit`` tokens (the stateless path), else ``stop``."""
    return "length" if limit is not None and result.record.completion_tokens >= limit else "stop"


def last_user_text(messages: Sequence[Message]) -> str:
    """The customer's message to answer: the last one, which must be the user's."""
    if not messages or messages[-1].role != "user":
        raise InputError("the last message must be the customer's (role user)", field="messages")
    return messages[-1].content


def _database_writable(store: Store) -> bool:
    """The database answers a query, and its file and folder are writable (WAL writes beside it)."""
    path = store.path
    try:
        store.sessions(limit=1)
    except (StoreError, sqlite3.Error):
        return False
    if path is None:
        return True
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
