"""Health: alive, ready, and the Prometheus counters. Every role may read them."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from appliance.serve.deps import ApiDep, ApplianceDep, MetricsDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Alive: the process answers HTTP."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(api: ApiDep) -> Response:
    """Ready: models loaded and verified and not hung, the database can take a write, worker alive if any.

    A failing check says why in ``reasons`` (the database's, see :mod:`appliance.serve.readiness`);
    ``bundle`` names the signed manifest of the bundle this daemon's code was installed from
    (:mod:`appliance.serve.provenance`) and ``devices`` where each model runs (``cpu``, ``gpu (NAME,
    N layers)``, ``remote (URL)``), both of which `appliance status` shows.
    """
    appliance = api.appliance
    database = api.readiness.state()
    checks: dict[str, bool] = {
        "model": appliance.queue.alive() and not appliance.queue.stalled(api.hung_after_s),
        "database": database.ok,
    }
    if appliance.worker is not None:
        checks["worker"] = appliance.worker.is_alive()
    reasons = {
        "model": "the model is not running or produced nothing for server.hung_after_s",
        "database": database.reason,
        "worker": "the summary worker has stopped",
    }
    ok = all(checks.values())
    body: dict[str, object] = {
        "ready": ok,
        "checks": checks,
        "model": appliance.responder.name,
        "bundle": api.bundle,
        "devices": appliance.devices,
    }
    if not ok:
        body["reasons"] = {name: reasons[name] for name, passed in checks.items() if not passed}
    return JSONResponse(body, status_code=200 if ok else 503)


@router.get("/metrics", response_class=PlainTextResponse)
async def metrics_text(appliance: ApplianceDep, metrics: MetricsDep) -> PlainTextResponse:
    """Prometheus text format."""
    text = metrics.render([appliance.queue], appliance.pipeline.answering.busy, appliance.worker)
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4")
