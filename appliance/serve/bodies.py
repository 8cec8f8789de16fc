"""What an answer looks like on the wire: the native answer body, and the OpenAI chat completion
(whole, or as stream chunks) with its ``appliance`` extra for what the OpenAI shape has no place for."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from appliance.errors import InputError
from appliance.types import Message, TurnResult, to_dict


def answer_body(result: TurnResult) -> dict[str, Any]:
    r = result.record
    return {
        "session_id": result.session_id,
        "text": result.agent.text,
        "customer": to_dict(result.customer),
        "agent": to_dict(result.agent),
        "stage": r.stage,
        "model": r.model,
        "source": r.source,
        "check": {**to_dict(r.check), "ok": r.check.ok},
        "manifest": to_dict(r.manifest),
        "timings": to_dict(r.timings),
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        **grounding(result),
    }


def grounding(result: TurnResult) -> dict[str, Any]:
    """The answer's sources (the passages its prompt carried: id, document, title, heading, location,
    score; empty without any) and what the knowledge step decided (null without a knowledge base)."""
    knowledge = result.record.knowledge
    return {
        "sources": [to_dict(c) for c in knowledge.sources] if knowledge is not None else [],
        "knowledge": to_dict(knowledge) if knowledge is not None else None,
    }


@dataclasses.dataclass(frozen=True)
class Completion:
    """One OpenAI chat completion's identity, and its bodies: whole, or as stream chunks."""

    id: str
    created: int
    model: str

    def body(self, result: TurnResult, limit: int | None) -> dict[str, Any]:
        r = result.record
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": result.agent.text},
                    "finish_reason": finish_reason(result, limit),
                }
            ],
            "usage": {
                "prompt_tokens": r.prompt_tokens,
                "completion_tokens": r.completion_tokens,
                "total_tokens": r.prompt_tokens + r.completion_tokens,
            },
            "appliance": appliance_extra(result),
        }

    def chunk(self, delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
        }

    def last_chunk(self, result: TurnResult, limit: int | None) -> dict[str, Any]:
        return {**self.chunk({}, finish_reason(result, limit)), "appliance": appliance_extra(result)}


def appliance_extra(result: TurnResult) -> dict[str, Any]:
    """What the OpenAI shape has no place for: the session (null without one), stage, check, manifest,
    and the answer's sources and knowledge decision (:func:`grounding`).

    ``text`` is the stored answer: the chunks' text under ``guard.stream = "checked"``; under ``raw``,
    where the guard replaced the streamed first attempt, it differs.
    """
    r = result.record
    return {
        "session_id": result.session_id or None,
        "text": result.agent.text,
        "stage": r.stage,
        "check": {**to_dict(r.check), "ok": r.check.ok},
        "manifest": to_dict(r.manifest),
        **grounding(result),
    }


def finish_reason(result: TurnResult, limit: int | None) -> str:
    """``length`` when an answer used all of ``limit`` tokens (the stateless path), else ``stop``."""
    return "length" if limit is not None and result.record.completion_tokens >= limit else "stop"


def last_user_text(messages: Sequence[Message]) -> str:
    """The customer's message to answer: the last one, which must be the user's."""
    if not messages or messages[-1].role != "user":
        raise InputError("the last message must be the customer's (role user)", field="messages")
    return messages[-1].content
