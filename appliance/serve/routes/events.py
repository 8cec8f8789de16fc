"""Live events as server-sent events: one session's, for its owner or an operator, and every
session's, for operators (issue 28). The hub and the stream are in :mod:`appliance.serve.events`.

Each event is ``id: <n>``, ``event: <kind>`` and one ``data:`` line of JSON with ``id``,
``session_id`` and ``at`` (epoch seconds) besides the kind's fields:

- ``session``: a session was started (``title``, ``policy``);
- ``turn``: a turn was stored (``index``, ``role``, ``text``, ``by``: ``customer``, ``model`` or
  ``person``; a model's answer also ``model``, ``stage`` and ``flags``, the facts the guard flagged);
- ``summary``: a summary version was stored (the version as ``GET /v1/sessions/{id}`` lists it);
- ``floor``: the state changed (``from``, ``state``, ``reason``, ``since``, ``by``);
- ``erased``: the conversation was erased (``reason``): its earlier events are gone with it.

A client that reconnects sends ``Last-Event-ID`` (or ``?after=<n>``) and gets exactly the events
after it; without either it gets only new ones. A stream may end with ``behind`` (the listener fell
more than ``floor.listener_queue`` events behind) or ``closing`` (the daemon stops); both carry
``last_event_id`` to resume from. ``: ping`` comments keep an idle stream open.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request

from appliance.errors import InputError
from appliance.serve.auth import Principal
from appliance.serve.deps import ApplianceDep, HubDep, require
from appliance.serve.events import EventStream

router = APIRouter(tags=["events"])


# Event ids are SQLite rowids: a resume point past its integer range would reach the store's query
# (and fail there, mid-stream) unless refused here.
LAST_ID = 2**63 - 1
_NOT_AN_ID = f"Last-Event-ID: not an event id (a whole number from 0 to {LAST_ID})"


def resume_point(header: str | None, after: int | None) -> int | None:
    """Where a stream starts: after ``Last-Event-ID``, else after ``?after=``, else at the next event."""
    if header is None or not header.strip():
        return after
    text = header.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(LAST_ID)) or int(text) > LAST_ID:
        raise InputError(_NOT_AN_ID, field="Last-Event-ID")
    return int(text)


LastEventId = Annotated[str | None, Header(alias="Last-Event-ID")]
After = Annotated[int | None, Query(ge=0, le=LAST_ID, description="Resume after this event id (as `Last-Event-ID`).")]


# Left out of the OpenAPI schema: an endless stream, which a generated client (or the schema fuzzer of
# tests/test_security.py) would wait on for its end; docs/api.md describes both routes.
@router.get("/v1/sessions/{session_id}/events", include_in_schema=False)
async def session_events(
    session_id: str,
    request: Request,
    who: Annotated[Principal, Depends(require("follow"))],
    appliance: ApplianceDep,
    hub: HubDep,
    last_event_id: LastEventId = None,
    after: After = None,
) -> EventStream:
    """One session's events, as they are stored (its owner, or an operator)."""
    start = resume_point(last_event_id, after)
    if start is None:
        appliance.store.floor(session_id)  # 404 for an unknown session, unless resuming (it may be erased)
    return EventStream(hub, await hub.open(session_id), start)


@router.get("/v1/events", include_in_schema=False)
async def all_events(
    request: Request,
    who: Annotated[Principal, Depends(require("watch"))],
    hub: HubDep,
    last_event_id: LastEventId = None,
    after: After = None,
) -> EventStream:
    """Every session's events (operators only): the branch floor's live view."""
    return EventStream(hub, await hub.open(None), resume_point(last_event_id, after))
