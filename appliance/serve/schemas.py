"""The request bodies, as pydantic models: what FastAPI validates before a route runs.

Native bodies are strict (a number where text belongs, an unknown field, ``"yes"`` for a boolean is a
422 naming the field); the OpenAI body is lenient, because its clients send options this server does
not use. What pydantic cannot know (a message too long, an empty one) the pipeline checks.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from appliance.types import ChatRole, Message

# OpenAI roles as the pipeline reads them: a developer message is a system message.
CHAT_ROLES: dict[str, ChatRole] = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


class _Body(BaseModel):
    # Strict: a number where text belongs, or "yes" for a boolean, is a 422 naming the field.
    model_config = ConfigDict(extra="forbid", strict=True)


class NewSession(_Body):
    policy: str | None = Field(None, description="Context policy; default `context.policy`.")
    title: str = Field("", max_length=200, description="A label for operators.")


class NewMessage(_Body):
    text: str = Field(description="The customer's message.")
    stream: bool = Field(False, description="Answer as server-sent events: `token` events, then `done`.")


class NewTurn(_Body):
    role: Literal["customer", "agent"] = Field(description="Who said it.")
    text: str = Field(description="What was said.")


class SummaryEdit(_Body):
    text: str = Field(description="The operator's summary; stored as a new version.")


class SummaryRestore(_Body):
    version: int = Field(ge=1, description="The earlier version to make current again (as a new version).")


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):  # content parts: keep the text ones
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""

    def as_message(self) -> Message:
        return Message(CHAT_ROLES[self.role], self.text())


class ChatCompletionRequest(BaseModel):
    # Clients send options this server does not use (n, stop, stream_options...): accepted, ignored.
    model_config = ConfigDict(extra="allow")
    model: str = Field("", description="Ignored: the appliance answers with its configured responder.")
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(None, ge=1, description="Capped at `responder.max_tokens`.")
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    session_id: str | None = Field(None, description="Answer within this appliance session (context engine).")
    user: str | None = Field(None, description="Taken as the session id when `session_id` is absent.")
