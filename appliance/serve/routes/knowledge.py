"""The knowledge base, for operators only: list, upload, remove and search documents, and sync the
configured folders (``knowledge.paths``) without a restart.

An upload is the document's bytes as the request body under its name (``PUT
/v1/knowledge/documents/fees.md``), up to ``knowledge.max_file_mb``; it replaces a document of the same
name. A document that cannot be used is refused with 422 naming it, and nothing changes. Writes run on
a worker thread (these routes are not async), off the serving loop that pings the watchdog.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from appliance.audit.record import acting
from appliance.knowledge import Knowledge, Report
from appliance.serve.auth import Principal
from appliance.serve.deps import ApplianceDep, require
from appliance.serve.errors import KnowledgeOff
from appliance.types import to_dict

router = APIRouter(tags=["knowledge"])
Operator = Annotated[Principal, Depends(require("knowledge"))]


def _knowledge(appliance: ApplianceDep) -> Knowledge:
    if appliance.knowledge is None:
        raise KnowledgeOff("this appliance has no knowledge base (knowledge.enabled is false)")
    return appliance.knowledge


KnowledgeDep = Annotated[Knowledge, Depends(_knowledge)]


@router.get("/v1/knowledge/documents")
def list_documents(who: Operator, knowledge: KnowledgeDep) -> dict[str, Any]:
    """Every document: name, title, format, chunks, bytes, sha256, the folder it is synced from, when added."""
    return {"documents": knowledge.documents()}


@router.put("/v1/knowledge/documents/{name:path}", status_code=201)
async def upload_document(name: str, request: Request, who: Operator, knowledge: KnowledgeDep) -> dict[str, Any]:
    """Add or replace the document ``name`` (its extension says its format) with the request's body."""
    from starlette.concurrency import run_in_threadpool

    data = await request.body()

    def upload() -> Report:
        with acting(who.client, who.role):  # the audit record names the operator
            return knowledge.upload(name, data)

    return (await run_in_threadpool(upload)).as_dict()


@router.delete("/v1/knowledge/documents/{name:path}")
def remove_document(name: str, who: Operator, knowledge: KnowledgeDep) -> dict[str, Any]:
    """Remove a document (by its listed name, or its key) and all its chunks."""
    with acting(who.client, who.role):
        return {"removed": knowledge.remove(name)}


@router.post("/v1/knowledge/sync")
def sync_folders(who: Operator, knowledge: KnowledgeDep) -> dict[str, Any]:
    """Sync ``knowledge.paths`` now: new files added, changed ones replaced, deleted ones removed."""
    with acting(who.client, who.role):
        return knowledge.sync_configured().as_dict()


@router.get("/v1/knowledge/search")
def search(q: str, who: Operator, knowledge: KnowledgeDep) -> dict[str, Any]:
    """The passages for ``q`` with their scores, and what the fetch check would decide for it."""
    found = knowledge.search(q)
    return {
        "question": found.question,
        "decision": to_dict(found.decision),
        "passages": [to_dict(p) for p in found.passages],
    }
