"""The HTTP API: the routes, over one built :class:`~appliance.app.Appliance`.

Two faces over one pipeline: the native sessions API, and an OpenAI-compatible chat endpoint so
that the official ``openai`` client and the tools built on it work unchanged. The web framework
(FastAPI and Starlette) is imported only inside ``serve/``; typed errors become HTTP statuses in
``serve/errors.py`` and nowhere else.

Before any route runs, the request passes the doors of ``serve/auth.py`` (a foreign Host: 421, an
unconfigured browser Origin: 403, a missing or wrong token: 401) and the body limit of
``serve/limits.py`` (413); each route then checks its caller's role and, for a kiosk or integration
token, that the session is its own, and the limits on what the request asks for.

Every job that touches a session's transcript (an answer, an operator's recorded turn, an erasure)
runs in that session's lane of the model's queue, so one session's turns are written in order and
nothing lands between an answer's snapshot and its write. A request is validated before it is
queued (nothing is queued, nor stored, for a bad one); the job's snapshot is the turn's one look at
the session, and a failure before the first token (an unknown session: 404) is answered with its own
status. Sampling defaults come from the pipeline's own settings (``pipeline.settings``), the values
it answers with when a request asks for nothing else.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware

from appliance.app import Appliance
from appliance.errors import ApplianceError, StoreError
from appliance.serve.auth import Access, BearerAuth, Gate, Principal, Role, normal_origin, principal
from appliance.serve.bodies import Completion, answer_body, last_user_text
from appliance.serve.errors import error_body, error_response, status_of
from appliance.serve.limits import BodyLimit, Limits, QueueShare, SessionRate
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
from appliance.types import Message, OnToken, Sampling, Turn, TurnResult, to_dict

T = TypeVar("T")


def create_app(
    appliance: Appliance,
    *,
    token: str | None = None,
    tokens: Mapping[str, Role] | None = None,
    request_timeout_s: float | None = None,
    hung_after_s: float | None = None,
) -> FastAPI:
    """The ASGI app over a built appliance (its queue started); the caller closes the appliance.

    ``tokens`` maps each bearer token to its role; ``token`` is one more operator token. Without any,
    every caller is an operator. The limits, allowed hosts and origins come from ``settings.server``;
    ``request_timeout_s`` and ``hung_after_s`` override theirs.
    """
    # No /docs: its page loads scripts from a CDN, and the appliance is offline. The schema stays.
    app = FastAPI(title="appliance", version="1", docs_url=None, redoc_url=None)
    cfg = appliance.settings.server
    timeout_s = cfg.request_timeout_s if request_timeout_s is None else request_timeout_s
    hung_s = cfg.hung_after_s if hung_after_s is None else hung_after_s
    metrics = Metrics()
    store, pipeline, queue, worker = appliance.store, appliance.pipeline, appliance.queue, appliance.worker
    responder_name = appliance.responder.name
    defaults = pipeline.settings.sampling
    limits = Limits.of(appliance.settings)
    rate = SessionRate(cfg.sessions_per_minute)
    share = QueueShare(cfg.queue_max, cfg.queue_share, cfg.retry_after_s)

    def refused(reason: str, status: int) -> None:
        metrics.refused(reason)
        metrics.failed(status)

    access = Access(lambda reason, status: metrics.refused(reason), store)  # the error handler counts the status
    app.state.metrics = metrics
    app.state.queue = queue
    app.state.access = access

    # The doors, outermost last: Host and Origin, then CORS (configured origins only), then the token,
    # then the body's size. A CORS preflight carries no token, so it is answered before the token door.
    everyone: dict[str, Role] = {**(tokens or {}), **({token: "operator"} if token else {})}
    app.add_middleware(BodyLimit, max_bytes=limits.max_body_bytes, on_refuse=refused)
    app.add_middleware(BearerAuth, tokens=everyone, on_refuse=refused)
    if cfg.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=[normal_origin(o) for o in cfg.allowed_origins],
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
            max_age=600,
        )
    app.add_middleware(Gate, hosts=cfg.allowed_hosts, origins=cfg.allowed_origins, on_refuse=refused)

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
        request: Request, who: Principal, key: str, work: Callable[[threading.Event, OnToken], T]
    ) -> tuple[Run[T], str | None]:
        """Queue ``work`` in lane ``key`` within the caller's share, and wait for its first piece (or its failure)."""
        release = share.claim(who.client)
        run: Run[T] = Run(queue, time.monotonic() + timeout_s)
        run.start(key, work, on_start=release)
        return run, await run.first(request)

    def room_for(session_id: str, adding: int) -> None:
        """In the session's lane, before a turn is made: refuse one past ``server.max_turns_per_session``."""
        limits.turns(store.turn_count(session_id), adding)

    async def answer_run(
        request: Request, who: Principal, session_id: str, text: str
    ) -> tuple[Run[TurnResult], str | None]:
        """Validate the text (no store access), then queue the answer in the session's lane."""
        message = pipeline.validate_message(text)

        def answer(cancel: threading.Event, on_token: OnToken) -> TurnResult:
            room_for(session_id, 2)
            return pipeline.answer(session_id, message, on_token=on_token, cancel=cancel)

        return await queued(request, who, session_id, answer)

    async def transcript_run(
        request: Request, who: Principal, messages: Sequence[Message], sampling: Sampling
    ) -> tuple[Run[TurnResult], str | None]:
        """A transcript sent whole, answered under the ``raw`` policy in the caller's lane; nothing stored."""
        pipeline.validate_message(last_user_text(messages))
        return await queued(
            request,
            who,
            f"client:{who.client}",
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
            "model": queue.alive() and not queue.stalled(hung_s),
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
    def create_session(request: Request, body: NewSession | None = None) -> dict[str, Any]:
        """Start a session (at most ``server.sessions_per_minute`` per client)."""
        who = principal(request)
        access.check(who, "create")
        body = body or NewSession()
        limits.title(body.title)
        rate.take(who.client)
        session = pipeline.new_session(policy=body.policy, title=body.title)
        access.created(who, session.id)
        return to_dict(session)

    @app.get("/v1/sessions", tags=["sessions"])
    def list_sessions(request: Request, limit: int = 100, search: str = "") -> dict[str, Any]:
        """Newest first, with turn counts; ``search`` matches ids, titles and message text. Operators only."""
        access.check(principal(request), "list")
        return {"sessions": store.sessions(limit=max(1, min(limit, 1000)), search=search)}

    @app.get("/v1/sessions/{session_id}", tags=["sessions"])
    def get_session(session_id: str, request: Request) -> dict[str, Any]:
        """Transcript, current and earlier summaries, ledger, and each answer's stage, manifest, check, timings.

        The same JSON as ``appliance sessions export`` (a subject-access request), and
        ``summary_lag_turns``: how many turns the current summary is behind (null for a policy that
        reads no summary, or without a summary worker)."""
        access.check(principal(request), "read", session_id)
        body = store.export(session_id)
        current = body["summary"]
        body["summary_lag_turns"] = (
            worker.lag_of(body["session"]["policy"], len(body["turns"]), current["covers_to"] if current else -1)
            if worker is not None
            else None
        )
        return body

    @app.delete("/v1/sessions/{session_id}", status_code=204, tags=["sessions"])
    async def erase_session(session_id: str, request: Request) -> Response:
        """Erase a conversation (operators only): its text is gone from the database file and its WAL,
        and an audit row without content is left. It waits in the session's lane behind any answer."""
        who = principal(request)
        access.check(who, "erase")
        run, first = await queued(
            request, who, session_id, lambda cancel, on_token: store.erase(session_id, reason="request")
        )
        await run.finish(request, first)
        access.forget(session_id)
        metrics.erased("request")
        return Response(status_code=204)

    @app.post("/v1/sessions/{session_id}/messages", tags=["sessions"])
    async def post_message(session_id: str, body: NewMessage, request: Request) -> Response:
        """A customer message in, the answer out (as server-sent events when ``stream``).

        Streamed: ``token`` events, then ``done`` with the stored answer, stage, check and manifest
        (or ``error``). The tokens are the first attempt; if the guard replaced it, ``done.text``
        is the answer that was stored. Each event is one ``data:`` line of JSON.
        """
        who = principal(request)
        access.check(who, "talk", session_id)
        started = time.monotonic()
        run, first = await answer_run(request, who, session_id, body.text)
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
        who = principal(request)
        access.check(who, "record", session_id)
        text = pipeline.validate_message(body.text)

        def record(cancel: threading.Event, on_token: OnToken) -> Turn:
            room_for(session_id, 1)
            return pipeline.record_turn(session_id, body.role, text)

        run, first = await queued(request, who, session_id, record)
        turn = await run.finish(request, first)
        metrics.recorded()
        return to_dict(turn)

    @app.put("/v1/sessions/{session_id}/summary", status_code=201, tags=["summary"])
    @app.post("/v1/sessions/{session_id}/summary", status_code=201, tags=["summary"])
    def edit_summary(session_id: str, body: SummaryEdit, request: Request) -> dict[str, Any]:
        """An operator's summary, stored as a new version (at most what ``summarizer.max_tokens`` allows)."""
        access.check(principal(request), "summary")
        limits.summary(body.text)
        store.session(session_id)
        return to_dict(pipeline.edit_summary(session_id, body.text))

    @app.post("/v1/sessions/{session_id}/summary/restore", status_code=201, tags=["summary"])
    def restore_summary(session_id: str, body: SummaryRestore, request: Request) -> dict[str, Any]:
        """Make an earlier version current again (as a new version; history is never rewritten)."""
        access.check(principal(request), "summary")
        store.session(session_id)
        return to_dict(pipeline.restore_summary(session_id, body.version))

    @app.post("/v1/sessions/{session_id}/summary/pause", tags=["summary"])
    def pause_summary(session_id: str, request: Request) -> dict[str, Any]:
        """Stop the summarizer for this session (its current summary stays in use)."""
        access.check(principal(request), "summary")
        pipeline.set_summary_paused(session_id, True)
        return to_dict(store.session(session_id))

    @app.post("/v1/sessions/{session_id}/summary/resume", tags=["summary"])
    def resume_summary(session_id: str, request: Request) -> dict[str, Any]:
        access.check(principal(request), "summary")
        pipeline.set_summary_paused(session_id, False)
        return to_dict(store.session(session_id))

    # OpenAI-compatible ---------------------------------------------------------------------------

    @app.get("/v1/models", tags=["openai"])
    async def list_models(request: Request) -> dict[str, Any]:
        access.check(principal(request), "openai")
        return {
            "object": "list",
            "data": [{"id": responder_name, "object": "model", "created": 0, "owned_by": "appliance"}],
        }

    @app.post("/v1/chat/completions", tags=["openai"])
    async def chat_completions(body: ChatCompletionRequest, request: Request) -> Response:
        """With ``session_id`` (or ``user``) the last user message is answered in that session; else
        the message list is the transcript, answered under the ``raw`` policy and not stored. Either
        way the response carries an ``appliance`` extra: stage, check and the prompt's manifest.
        At most ``server.max_chat_messages`` messages of ``server.max_chat_chars`` characters in all."""
        who = principal(request)
        access.check(who, "openai")
        limits.chat([m.text() for m in body.messages])
        started = time.monotonic()
        completion = Completion(f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), responder_name)
        session_id = body.session_id or body.user
        messages = [m.as_message() for m in body.messages]
        limit: int | None = None  # the stateless path tells a cut-off answer by its token count
        if session_id:
            access.check(who, "talk", session_id)
            run, first = await answer_run(request, who, session_id, last_user_text(messages))
        else:
            sampling = sampling_of(body)
            limit = sampling.max_tokens
            run, first = await transcript_run(request, who, messages, sampling)

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
