"""Bearer-token authentication for every HTTP request, compared in constant time.

Pure ASGI middleware (not Starlette's BaseHTTPMiddleware), so that streamed responses and client
disconnects pass through untouched. A refused request gets the typed 401 body like any error.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from appliance.serve.errors import Unauthorized, error_response


class BearerAuth:
    """Every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str, on_reject: Callable[[int], None]) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.on_reject = on_reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                self.on_reject(401)
                reason = "missing bearer token" if not given else "wrong bearer token"
                await error_response(Unauthorized(reason))(scope, receive, send)
                return
        await self.app(scope, receive, send)
