"""Health: alive, ready, and the Prometheus counters. Every role may read them."""

from __future__ import annotations

import os
import sqlite3

from fastapi import APIRouter
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from appliance.errors import StoreError
from appliance.serve.deps import ApiDep, ApplianceDep, MetricsDep
from appliance.store import Store

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Alive: the process answers HTTP."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(api: ApiDep) -> Response:
    """Ready: models loaded and verified and not hung, database writable, worker alive if any."""
    appliance = api.appliance
    checks: dict[str, bool] = {
        "model": appliance.queue.alive() and not appliance.queue.stalled(api.hung_after_s),
        "database": _database_writable(appliance.store),
    }
    if appliance.worker is not None:
        checks["worker"] = appliance.worker.is_alive()
    ok = all(checks.values())
    body = {"ready": ok, "checks": checks, "model": appliance.responder.name}
    return JSONResponse(body, status_code=200 if ok else 503)


@router.get("/metrics", response_class=PlainTextResponse)
async def metrics_text(appliance: ApplianceDep, metrics: MetricsDep) -> PlainTextResponse:
    """Prometheus text format."""
    text = metrics.render([appliance.queue], appliance.pipeline.answering.busy, appliance.worker)
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4")


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
