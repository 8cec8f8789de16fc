"""The native sessions API: start, list, read and erase conversations, answer a message (warmed ahead from its draft), record a turn."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from appliance.audit.record import acting
from appliance.protocols import OnToken
from appliance.serve.auth import Principal
from appliance.serve.bodies import answer_body
from appliance.serve.deps import AccessDep, ApplianceDep, LanesDep, LimitsDep, MetricsDep, RateDep, require
from appliance.serve.metrics import Metrics
from appliance.serve.schemas import Draft, NewMessage, NewSession, NewTurn
from appliance.serve.streaming import SSE_HEADERS, guarded, sse
from appliance.turn.floor import Held, Reply
from appliance.types import AnswerSource, to_dict

router = APIRouter(tags=["sessions"])


@router.post("/v1/sessions", status_code=201)
def create_session(
    who: Annotated[Principal, Depends(require("create"))],
    appliance: ApplianceDep,
    access: AccessDep,
    limits: LimitsDep,
    rate: RateDep,
    body: NewSession | None = None,
) -> dict[str, Any]:
    """Start a session (at most ``server.sessions_per_minute`` per client)."""
    body = body or NewSession()
    limits.title(body.title)
    rate.take(who.client)
    session = appliance.sessions.new_session(policy=body.policy, title=body.title)
    access.created(who, session.id)
    return to_dict(session)


@router.get("/v1/sessions")
def list_sessions(
    who: Annotated[Principal, Depends(require("list"))], appliance: ApplianceDep, limit: int = 100, search: str = ""
) -> dict[str, Any]:
    """Newest first, with turn counts; ``search`` matches ids, titles and message text. Operators only."""
    return {"sessions": appliance.store.sessions(limit=max(1, min(limit, 1000)), search=search)}


@router.get("/v1/sessions/{session_id}")
def get_session(
    session_id: str, who: Annotated[Principal, Depends(require("read"))], appliance: ApplianceDep
) -> dict[str, Any]:
    """Transcript, current and earlier summaries, ledger, and each answer's stage, manifest, check, timings.

    The same JSON as ``appliance sessions export`` (a subject-access request), and
    ``summary_lag_turns``: how many turns the current summary is behind (null for a policy that
    reads no summary, or without a summary worker)."""
    body = appliance.store.export(session_id)
    current = body["summary"]
    worker = appliance.worker
    body["summary_lag_turns"] = (
        worker.lag_of(body["session"]["policy"], len(body["turns"]), current["covers_to"] if current else -1)
        if worker is not None
        else None
    )
    body["last_event_id"] = appliance.store.last_event_id()  # where to follow it from (Last-Event-ID)
    return body


@router.delete("/v1/sessions/{session_id}", status_code=204)
async def erase_session(
    session_id: str,
    request: Request,
    who: Annotated[Principal, Depends(require("erase"))],
    appliance: ApplianceDep,
    access: AccessDep,
    lanes: LanesDep,
    metrics: MetricsDep,
) -> Response:
    """Erase a conversation (operators only): its text is gone from the database file and its WAL,
    and an audit row without content is left. It waits in the session's lane behind any answer."""
    store = appliance.store

    def erase(cancel: threading.Event, on_token: OnToken) -> int:
        with acting(who.client, who.role):  # the audit record names the operator
            return store.erase(session_id, reason="request")

    run, first = await lanes.run(request, who, session_id, erase)
    await run.finish(request, first)
    access.forget(session_id)
    metrics.erased("request")
    return Response(status_code=204)


@router.post("/v1/sessions/{session_id}/messages")
async def post_message(
    session_id: str,
    body: NewMessage,
    request: Request,
    who: Annotated[Principal, Depends(require("talk"))],
    lanes: LanesDep,
    metrics: MetricsDep,
) -> Response:
    """A customer message in, the answer out (as server-sent events when ``stream``).

    Streamed: ``token`` events, then ``done`` with the stored answer, stage, check and manifest
    (or ``error``). Under ``guard.stream = "checked"`` the tokens are the checked text, which
    ``done.text`` repeats as stored; under ``raw`` they are the first attempt, and if the guard
    replaced it, ``done.text`` is the answer that was stored. Each event is one ``data:`` line of JSON.

    ``answered_by`` says who answers: ``model``, ``appliance`` (the waiting sentence: the message
    asked for a person) or ``person`` (a person is asked for or holds the session: the message is
    stored, no answer is generated, ``text`` is empty and ``agent`` null). ``floor`` is the state
    after the message, ``notice`` the waiting sentence while nobody has taken the session yet.
    """
    started = time.monotonic()
    run, first = await lanes.talk(request, who, session_id, body.text)
    if not body.stream:
        reply = await run.finish(request, first)
        return JSONResponse(reply_body(reply, metrics, started))

    async def events() -> AsyncIterator[str]:
        async for piece in run.pieces(first):
            yield sse("token", {"text": piece})
        yield sse("done", reply_body(run.result(), metrics, started))

    stream = guarded(events(), run, metrics, lambda error: sse("error", error))
    return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)


@router.post("/v1/sessions/{session_id}/turns", status_code=201)
async def post_turn(
    session_id: str,
    body: NewTurn,
    request: Request,
    who: Annotated[Principal, Depends(require("record"))],
    lanes: LanesDep,
    metrics: MetricsDep,
) -> dict[str, Any]:
    """Record a turn without generating (a human agent taking over, or a replayed transcript).

    It waits in the session's lane behind any answer in progress, and is stored after it.
    """
    run, first = await lanes.record(request, who, session_id, body.role, body.text)
    turn = await run.finish(request, first)
    metrics.recorded()
    return to_dict(turn)


def reply_body(reply: Reply, metrics: Metrics, started: float) -> dict[str, Any]:
    """The answer's body with who answered and the state after it; counted in ``/metrics``."""
    if isinstance(reply, Held):
        metrics.held_message()
        return {
            "session_id": reply.customer.session_id,
            "answered_by": "person",
            "text": "",
            "customer": to_dict(reply.customer),
            "agent": None,
            "floor": to_dict(reply.floor),
            "notice": reply.notice,
        }
    metrics.answered(reply.result, started)
    by = "appliance" if reply.result.record.source == AnswerSource.WAITING else "model"
    return {**answer_body(reply.result), "answered_by": by, "floor": to_dict(reply.floor), "notice": reply.notice}


@router.post("/v1/sessions/{session_id}/draft", status_code=202)
def post_draft(
    session_id: str,
    body: Draft,
    who: Annotated[Principal, Depends(require("talk"))],
    appliance: ApplianceDep,
) -> dict[str, Any]:
    """What the customer is typing, before they send it. Nothing is stored: while the model is idle
    the daemon evaluates the prompt that text would get, with the operator's passages it retrieves,
    so that the answer starts sooner if the message, once sent, retrieves the same ones. ``warming``
    is false where nothing is warmed ahead (``responder.prewarm`` off, or a remote model)."""
    text = appliance.sessions.validate_message(body.text)
    appliance.store.session(session_id)
    warming = appliance.prewarmer is not None
    if appliance.prewarmer is not None:
        appliance.prewarmer.draft(session_id, text)
    return {"warming": warming}
