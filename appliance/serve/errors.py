"""Typed errors to HTTP: the one table that maps each error class to a status and a JSON body.

Errors are raised inside as typed classes and translated only here, at the edge (STYLE.md 4). The
body is always ``{"error": {"type", "message", "field"?, "limit"?}}`` so that a client can act on
``type`` and ``field`` without reading the message. The errors below the imports belong to the
serving edge alone: who may call (a foreign Host or Origin, a missing token, a role without the right),
and how much one client may ask (a body, a transcript, a session's turns, new sessions per minute).
"""

from __future__ import annotations

import math
from typing import Any

from fastapi.responses import JSONResponse

from appliance.errors import (
    ApplianceError,
    Busy,
    Cancelled,
    ConfigError,
    DocumentError,
    DocumentNotFound,
    FloorConflict,
    GenerationError,
    InputError,
    MessageTooLong,
    ModelLoadError,
    SessionNotFound,
    ShuttingDown,
    StoreError,
    TurnConflict,
)


class TimedOut(ApplianceError):
    """An answer took longer than ``server.request_timeout_s``; it was cancelled and not stored."""

    title = "Timed out"


class Unauthorized(ApplianceError):
    """The request carries no bearer token, or the wrong one."""

    title = "Unauthorized"


class Forbidden(ApplianceError):
    """The caller's role may not do this (a kiosk listing sessions), or a browser Origin is not allowed."""

    title = "Forbidden"


class MisdirectedRequest(ApplianceError):
    """The Host header names neither this appliance nor a configured name (DNS rebinding, a wrong proxy)."""

    title = "Misdirected request"


class TooLarge(InputError):
    """A request is bigger than a configured limit: its body, its messages, a summary edit."""

    title = "Too large"


class TurnLimit(InputError):
    """The session already holds ``server.max_turns_per_session`` turns; start a new one."""

    title = "Turn limit"


class KnowledgeOff(ApplianceError):
    """The appliance runs without a knowledge base (``knowledge.enabled`` is false)."""

    title = "No knowledge base"


class RateLimited(Busy):
    """One client started more sessions than ``server.sessions_per_minute`` allows."""

    title = "Rate limited"


# Each typed error class → (HTTP status, the "type" of the JSON error body). Looked up along the
# exception's MRO, so a subclass maps before its base.
STATUS: dict[type[Exception], tuple[int, str]] = {
    MessageTooLong: (413, "message_too_long"),
    TooLarge: (413, "too_large"),
    TurnLimit: (409, "turn_limit"),
    InputError: (422, "invalid_request"),
    DocumentError: (422, "unusable_document"),
    SessionNotFound: (404, "not_found"),
    DocumentNotFound: (404, "not_found"),
    KnowledgeOff: (404, "knowledge_off"),
    TurnConflict: (409, "conflict"),
    FloorConflict: (409, "floor_conflict"),
    RateLimited: (429, "rate_limited"),
    Busy: (429, "busy"),
    Unauthorized: (401, "unauthorized"),
    Forbidden: (403, "forbidden"),
    MisdirectedRequest: (421, "misdirected_request"),
    ShuttingDown: (503, "shutting_down"),
    StoreError: (503, "storage_error"),
    ModelLoadError: (503, "model_unavailable"),
    TimedOut: (504, "timeout"),
    GenerationError: (502, "generation_failed"),
    Cancelled: (499, "cancelled"),
    ConfigError: (500, "config_error"),
    ApplianceError: (500, "internal_error"),
}


def status_of(exc: Exception) -> tuple[int, str]:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    raise TypeError(f"no HTTP status for {type(exc).__name__}")


def error_body(exc: Exception) -> dict[str, Any]:
    """``{"error": {"type", "message", "field"?, "limit"?}}`` for a typed error."""
    _, kind = status_of(exc)
    body: dict[str, Any] = {"type": kind, "message": str(exc)}
    if isinstance(exc, InputError):
        body["field"] = exc.field
        if exc.limit is not None:
            body["limit"] = exc.limit
    return {"error": body}


def error_response(exc: Exception) -> JSONResponse:
    status, _ = status_of(exc)
    headers = {}
    if isinstance(exc, Busy):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(error_body(exc), status_code=status, headers=headers)
