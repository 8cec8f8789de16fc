"""The conversation's state: asking for a person, taking over, handing back, closing (issue 28).

The customer's side (a kiosk or integration, on its own session) may only ask for a person; operators
take over (409 while another operator holds the session), hand back to the model, and close. Each
change runs in the session's lane, after any answer in progress and before the next, and is written
with its audit row and its event in one transaction (:mod:`appliance.turn.floor`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from appliance.serve.auth import Principal
from appliance.serve.deps import LanesDep, MetricsDep, require
from appliance.serve.lanes import Lanes
from appliance.serve.metrics import Metrics
from appliance.turn.floor import FloorAction
from appliance.types import to_dict

router = APIRouter(tags=["floor"])


async def _change(
    request: Request, who: Principal, session_id: str, action: FloorAction, lanes: Lanes, metrics: Metrics
) -> dict[str, Any]:
    run, first = await lanes.floor(request, who, session_id, action)
    before, after = await run.finish(request, first)
    if before.state == "needs_person" and after.state == "with_person":
        metrics.waited(max(0.0, after.since - before.since))
    body: dict[str, Any] = {"session_id": session_id, "floor": to_dict(after), "previous": before.state}
    if action == "ask":  # the customer is told, in their language, that someone is coming
        body["notice"] = lanes.desk.waiting(session_id) if after.state == "needs_person" else ""
    return body


@router.post("/v1/sessions/{session_id}/person")
async def ask_for_person(
    session_id: str,
    request: Request,
    who: Annotated[Principal, Depends(require("ask"))],
    lanes: LanesDep,
    metrics: MetricsDep,
) -> dict[str, Any]:
    """The customer asks for a person (the kiosk's button): ``needs_person``, and ``notice``, the
    calm sentence to show them (``floor.waiting_message``). Nothing changes if a person is already
    asked for or holds the session."""
    return await _change(request, who, session_id, "ask", lanes, metrics)


@router.post("/v1/sessions/{session_id}/take")
async def take_over(
    session_id: str,
    request: Request,
    who: Annotated[Principal, Depends(require("hold"))],
    lanes: LanesDep,
    metrics: MetricsDep,
) -> dict[str, Any]:
    """An operator takes the conversation (``with_person``): the model answers no more; the customer's
    messages are stored and streamed, the operator's replies are recorded turns. 409 while another
    operator holds it."""
    return await _change(request, who, session_id, "take", lanes, metrics)


@router.post("/v1/sessions/{session_id}/hand-back")
async def hand_back(
    session_id: str,
    request: Request,
    who: Annotated[Principal, Depends(require("hold"))],
    lanes: LanesDep,
    metrics: MetricsDep,
) -> dict[str, Any]:
    """Back to the model (``bot``); its next answer sees the operator's turns like any agent turn.
    409 when another operator holds it, or when the model already has it."""
    return await _change(request, who, session_id, "hand_back", lanes, metrics)


@router.post("/v1/sessions/{session_id}/close")
async def close(
    session_id: str,
    request: Request,
    who: Annotated[Principal, Depends(require("hold"))],
    lanes: LanesDep,
    metrics: MetricsDep,
) -> dict[str, Any]:
    """The conversation is over (``closed``): further messages are refused with 409."""
    return await _change(request, who, session_id, "close", lanes, metrics)
