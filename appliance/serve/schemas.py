"""The request bodies, as pydantic models: what FastAPI validates before a route runs.

Native bodies are strict (a number where text belongs, an unknown field, ``"yes"`` for a boolean is a
422 naming the field); the OpenAI body is lenient, because its clients send options this server does
not use. What pydantic cannot know (a message too long, an empty one) the pipeline checks, and the
configured limits (a title's length, a transcript's size) the routes check.

Hostile text is refused here, with 422 naming the field, before anything stores or tokenizes it:
lone surrogates (a JSON ``"\\ud800"``: no UTF-8 can hold one, so the database, the tokenizer and the
response would all fail on it), NUL and the other control characters but tab, line feed, carriage
return and U+0085 (next line), and the bidirectional embedding, override and isolate controls that
make text display in another order than it is stored. Everything else is stored as given.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from appliance.types import ChatRole, Message

_REFUSED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _why(char: str) -> str:
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        return "a lone surrogate, which no UTF-8 text can hold"
    if 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
        return "a bidirectional control, which makes text display in another order than it is stored"
    return "a control character"


def plain_text(value: str) -> str:
    """``value`` unchanged, or a validation error naming the first refused character and where it is."""
    found = _REFUSED.search(value)
    if found is not None:
        raise PydanticCustomError(
            "text_not_allowed",
            "character U+{code} at position {position} is not allowed: {why}",
            {"code": f"{ord(found.group()):04X}", "position": found.start(), "why": _why(found.group())},
        )
    return value


Text = Annotated[str, AfterValidator(plain_text)]

# OpenAI roles as the pipeline reads them: a developer message is a system message.
CHAT_ROLES: dict[str, ChatRole] = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


class _Body(BaseModel):
    # Strict: a number where text belongs, or "yes" for a boolean, is a 422 naming the field.
    model_config = ConfigDict(extra="forbid", strict=True)


class NewSession(_Body):
    policy: Text | None = Field(None, description="Context policy; default `context.policy`.")
    title: Text = Field("", description="A label for operators (at most `server.max_title_chars`).")


class NewMessage(_Body):
    text: Text = Field(description="The customer's message.")
    stream: bool = Field(False, description="Answer as server-sent events: `token` events, then `done`.")


class Draft(_Body):
    text: Text = Field(description="What the customer has typed so far, not sent yet (nothing is stored).")


class NewTurn(_Body):
    role: Literal["customer", "agent"] = Field(description="Who said it.")
    text: Text = Field(description="What was said.")


class SummaryEdit(_Body):
    text: Text = Field(
        description="The operator's summary; stored as a new version (at most 8 characters per token of `summarizer.max_tokens`)."
    )


class SummaryRestore(_Body):
    version: int = Field(ge=1, description="The earlier version to make current again (as a new version).")


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[dict[str, Any]] | None = None

    @field_validator("content")
    @classmethod
    def _plain(cls, content: str | list[dict[str, Any]] | None) -> str | list[dict[str, Any]] | None:
        if isinstance(content, str):
            return plain_text(content)
        for part in content or ():
            if isinstance(part.get("text"), str):
                plain_text(part["text"])
        return content

    def text(self) -> str:
        if isinstance(self.content, list):  # content parts: keep the text ones
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""

    def as_message(self) -> Message:
        return Message(CHAT_ROLES[self.role], self.text())


class ChatCompletionRequest(BaseModel):
    # Clients send options this server does not use (n, stop, stream_options...): accepted, ignored.
    model_config = ConfigDict(extra="allow")
    model: Text = Field("", description="Ignored: the appliance answers with its configured responder.")
    messages: list[ChatMessageIn] = Field(min_length=1, description="At most `server.max_chat_messages`.")
    stream: bool = False
    max_tokens: int | None = Field(None, ge=1, description="Capped at `responder.max_tokens`.")
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    session_id: Text | None = Field(None, description="Answer within this appliance session (context engine).")
    user: Text | None = Field(None, description="Taken as the session id when `session_id` is absent.")
