"""Fakes for unit tests of the code around the models. Never used outside tests."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from appliance.errors import Cancelled
from appliance.protocols import OnToken
from appliance.types import Generation, Message, Sampling


class WordCounter:
    """Counts one token per word, plus 4 tokens of template per message, like a real chat template's markers."""

    def count_text(self, text: str) -> int:
        return len(text.split())

    def count(self, messages: Sequence[Message]) -> int:
        return sum(self.count_text(m.content) + 4 for m in messages) + 2


class FakeResponder(WordCounter):
    """A responder that answers from a queue of replies and counts one token per word.

    ``fail_with`` makes the next generation raise; ``pieces`` streams the next replies as given pieces;
    ``prompts`` records every prompt it was given,
    ``samplings`` the sampling of each, and ``cache_keys`` the session each was generated for.
    """

    name = "fake-responder"
    n_ctx = 4096
    device = "cpu"  # where it says it runs (appliance status, /readyz); a test may set a GPU's text
    continues = False  # a test that sets it gets prompts ending with the text shown (the next pieces continue it)

    def __init__(self, replies: Sequence[str] = (), *, default: str = "Certainly, happy to help.") -> None:
        self.replies = list(replies)
        self.default = default
        self.prompts: list[tuple[Message, ...]] = []
        self.cache_keys: list[str | None] = []
        self.samplings: list[Sampling] = []
        self.fail_with: Exception | None = None
        self.cancel_after: int | None = None
        # Replies streamed as these pieces, before ``replies``; ``log`` has ("fed", piece) for each piece
        # streamed, and a test's token callback may add its own entries in between.
        self.pieces: list[Sequence[str]] = []
        self.log: list[tuple[str, str]] = []

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        self.prompts.append(tuple(messages))
        self.cache_keys.append(cache_key)
        self.samplings.append(sampling)
        if self.fail_with is not None:
            exc, self.fail_with = self.fail_with, None
            raise exc
        if self.pieces:  # streamed as the test gives them
            words = list(self.pieces.pop(0))
            text = "".join(words).strip()
        else:
            text = self.replies.pop(0) if self.replies else self.default
            words = [word if i == 0 else " " + word for i, word in enumerate(text.split(" "))]
        for i, word in enumerate(words):
            if cancel is not None and cancel.is_set():
                raise Cancelled("cancelled")
            if self.cancel_after is not None and i >= self.cancel_after and cancel is not None:
                cancel.set()
                raise Cancelled("cancelled")
            self.log.append(("fed", word))
            if on_token is not None:
                on_token(word)
        return Generation(
            text=text,
            model=self.name,
            prompt_tokens=self.count(messages),
            completion_tokens=len(words),
            ttft_s=0.001,
            total_s=0.002,
        )


class FakeJudgingResponder(FakeResponder):
    """A :class:`FakeResponder` that also judges (``appliance.protocols.Judge``): ``yes`` is the
    probability it gives every question asked of it; ``asked`` records each prompt it judged."""

    def __init__(self, replies: Sequence[str] = (), *, yes: float = 0.9, **options: str) -> None:
        super().__init__(replies, **options)
        self.yes = yes
        self.asked: list[tuple[Message, ...]] = []

    def yes_or_no(self, messages: Sequence[Message], *, cache_key: str | None = None) -> float | None:
        self.asked.append(tuple(messages))
        return self.yes
