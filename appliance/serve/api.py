"""The HTTP API: one app over one built :class:`~appliance.app.Appliance`, assembled from its doors and routers.

Two faces over one pipeline: the native sessions API, and an OpenAI-compatible chat endpoint so
that the official ``openai`` client and the tools built on it work unchanged. The web framework
(FastAPI and Starlette) is imported only inside ``serve/``; typed errors become HTTP statuses in
``serve/errors.py`` and nowhere else.

Before any route runs, the request passes the doors of ``serve/auth.py`` (a foreign Host: 421, an
unconfigured browser Origin: 403, a missing or wrong token: 401) and the body limit of
``serve/limits.py`` (413). The routes live in ``serve/routes/``, one router per concept; each gets
what it needs from ``app.state`` through the dependencies of ``serve/deps.py``, whose ``require``
checks its caller's role and, for a kiosk or integration token, that the session is its own. Jobs
that touch a transcript run in the session's lane of the model's queue (``serve/lanes.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.cors import CORSMiddleware

from appliance.app import Appliance
from appliance.config import ServerSettings
from appliance.errors import ApplianceError
from appliance.serve.auth import BearerAuth, Gate, OnRefuse, Role, normal_origin
from appliance.serve.deps import Api, api_of
from appliance.serve.errors import error_response, status_of
from appliance.serve.limits import BodyLimit
from appliance.serve.routes import events, floor, health, knowledge, openai, sessions, summary


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
    api = Api.build(appliance, request_timeout_s=request_timeout_s, hung_after_s=hung_after_s)
    app.state.api = api
    # Also by their own names, for what runs beside the routes (the daemon's retention sweep).
    app.state.metrics, app.state.access, app.state.queue = api.metrics, api.access, appliance.queue

    def refused(reason: str, status: int) -> None:
        api.metrics.refused(reason)
        api.metrics.failed(status)

    everyone: dict[str, Role] = {**(tokens or {}), **({token: "operator"} if token else {})}
    uploads = {"/v1/knowledge/documents/": int(appliance.settings.knowledge.max_file_mb * 1_000_000)}
    _add_doors(app, appliance.settings.server, everyone, api.limits.max_body_bytes, refused, uploads)
    app.exception_handler(ApplianceError)(_typed)
    app.exception_handler(RequestValidationError)(_invalid)
    app.exception_handler(StarletteHTTPException)(_http)
    app.include_router(health.router)
    app.include_router(sessions.router)
    app.include_router(summary.router)
    app.include_router(openai.router)
    app.include_router(knowledge.router)
    app.include_router(floor.router)
    app.include_router(events.router)
    return app


def _add_doors(
    app: FastAPI,
    cfg: ServerSettings,
    tokens: Mapping[str, Role],
    max_body_bytes: int,
    refused: OnRefuse,
    larger: Mapping[str, int],
) -> None:
    """The doors, outermost last: Host and Origin, then CORS (configured origins only), then the token,
    then the body's size. A CORS preflight carries no token, so it is answered before the token door."""
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, on_refuse=refused, larger=larger)
    app.add_middleware(BearerAuth, tokens=tokens, on_refuse=refused)
    if cfg.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=[normal_origin(o) for o in cfg.allowed_origins],
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
            max_age=600,
        )
    app.add_middleware(Gate, hosts=cfg.allowed_hosts, origins=cfg.allowed_origins, on_refuse=refused)


# error translation: each counted in /metrics by its status -----------------------------------------


async def _typed(request: Request, exc: ApplianceError) -> Response:
    api_of(request).metrics.failed(status_of(exc)[0])
    return error_response(exc)


async def _invalid(request: Request, exc: RequestValidationError) -> Response:
    errors = exc.errors()
    first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
    loc = [str(p) for p in first["loc"]]
    if loc and loc[0] in ("body", "query", "path"):
        loc = loc[1:]
    field = "body" if first.get("type") == "json_invalid" or not loc else ".".join(loc)
    api_of(request).metrics.failed(422)
    body = {"type": "invalid_request", "message": f"{field}: {first['msg']}", "field": field}
    return JSONResponse({"error": body}, status_code=422)


async def _http(request: Request, exc: StarletteHTTPException) -> Response:
    api_of(request).metrics.failed(exc.status_code)
    kind = "not_found" if exc.status_code == 404 else "http_error"
    return JSONResponse({"error": {"type": kind, "message": str(exc.detail)}}, status_code=exc.status_code)
