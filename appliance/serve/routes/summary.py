"""A session's summary, as operators steer it: edit, restore an earlier version, pause and resume the summarizer.

An edit or a restore is stored as a new version; history is never rewritten.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from appliance.audit.record import acting
from appliance.serve.auth import Principal
from appliance.serve.deps import ApplianceDep, LimitsDep, require
from appliance.serve.schemas import SummaryEdit, SummaryRestore
from appliance.types import to_dict

router = APIRouter(tags=["summary"])


@router.put("/v1/sessions/{session_id}/summary", status_code=201)
@router.post("/v1/sessions/{session_id}/summary", status_code=201)
def edit_summary(
    session_id: str,
    body: SummaryEdit,
    who: Annotated[Principal, Depends(require("summary"))],
    appliance: ApplianceDep,
    limits: LimitsDep,
) -> dict[str, Any]:
    """An operator's summary, stored as a new version (at most what ``summarizer.max_tokens`` allows)."""
    limits.summary(body.text)
    appliance.store.session(session_id)
    with acting(who.client, who.role):  # the audit record names the operator (this thread's writes)
        return to_dict(appliance.sessions.edit_summary(session_id, body.text))


@router.post("/v1/sessions/{session_id}/summary/restore", status_code=201)
def restore_summary(
    session_id: str,
    body: SummaryRestore,
    who: Annotated[Principal, Depends(require("summary"))],
    appliance: ApplianceDep,
) -> dict[str, Any]:
    """Make an earlier version current again (as a new version; history is never rewritten)."""
    appliance.store.session(session_id)
    with acting(who.client, who.role):
        return to_dict(appliance.sessions.restore_summary(session_id, body.version))


@router.post("/v1/sessions/{session_id}/summary/pause")
def pause_summary(
    session_id: str, who: Annotated[Principal, Depends(require("summary"))], appliance: ApplianceDep
) -> dict[str, Any]:
    """Stop the summarizer for this session (its current summary stays in use)."""
    with acting(who.client, who.role):
        appliance.sessions.set_summary_paused(session_id, True)
    return to_dict(appliance.store.session(session_id))


@router.post("/v1/sessions/{session_id}/summary/resume")
def resume_summary(
    session_id: str, who: Annotated[Principal, Depends(require("summary"))], appliance: ApplianceDep
) -> dict[str, Any]:
    with acting(who.client, who.role):
        appliance.sessions.set_summary_paused(session_id, False)
    return to_dict(appliance.store.session(session_id))
