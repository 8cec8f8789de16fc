"""The OpenAI-compatible face: the official ``openai`` client and the tools built on it work unchanged.

Sampling defaults come from the pipeline's own settings (``pipeline.settings``), the values it
answers with when a request asks for nothing else.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from appliance.serve.auth import Principal
from appliance.serve.bodies import Completion, last_user_text
from appliance.serve.deps import ApiDep, ApplianceDep, require
from appliance.serve.schemas import ChatCompletionRequest
from appliance.serve.streaming import SSE_HEADERS, guarded, sse_data
from appliance.types import Sampling

router = APIRouter(tags=["openai"])


@router.get("/v1/models")
async def list_models(who: Annotated[Principal, Depends(require("openai"))], appliance: ApplianceDep) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": appliance.responder.name, "object": "model", "created": 0, "owned_by": "appliance"}],
    }


@router.post("/v1/chat/completions")
async def chat_completions(
    body: ChatCompletionRequest, request: Request, who: Annotated[Principal, Depends(require("openai"))], api: ApiDep
) -> Response:
    """With ``session_id`` (or ``user``) the last user message is answered in that session; else
    the message list is the transcript, answered under the ``raw`` policy and not stored. Either
    way the response carries an ``appliance`` extra: stage, check and the prompt's manifest.
    At most ``server.max_chat_messages`` messages of ``server.max_chat_chars`` characters in all."""
    api.limits.chat([m.text() for m in body.messages])
    started = time.monotonic()
    completion = Completion(f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), api.appliance.responder.name)
    session_id = body.session_id or body.user
    messages = [m.as_message() for m in body.messages]
    limit: int | None = None  # the stateless path tells a cut-off answer by its token count
    if session_id:
        api.access.check(who, "talk", session_id)
        run, first = await api.lanes.answer(request, who, session_id, last_user_text(messages))
    else:
        sampling = sampling_of(body, api.appliance.pipeline.settings.sampling)
        limit = sampling.max_tokens
        run, first = await api.lanes.transcript(request, who, messages, sampling)

    if not body.stream:
        result = await run.finish(request, first)
        if session_id:
            api.metrics.answered(result, started)
        return JSONResponse(completion.body(result, limit))

    async def events() -> AsyncIterator[str]:
        yield sse_data(completion.chunk({"role": "assistant", "content": ""}))
        async for piece in run.pieces(first):
            yield sse_data(completion.chunk({"content": piece}))
        result = run.result()
        if session_id:
            api.metrics.answered(result, started)
        yield sse_data(completion.last_chunk(result, limit))
        yield sse_data("[DONE]")

    stream = guarded(events(), run, api.metrics, sse_data)
    return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)


def sampling_of(body: ChatCompletionRequest, defaults: Sampling) -> Sampling:
    """The pipeline's sampling, with the request's options (``max_tokens`` capped at the configured one)."""
    wanted = body.max_completion_tokens or body.max_tokens or defaults.max_tokens
    return dataclasses.replace(
        defaults,
        max_tokens=min(wanted, defaults.max_tokens),
        temperature=defaults.temperature if body.temperature is None else body.temperature,
        top_p=defaults.top_p if body.top_p is None else body.top_p,
    )
