"""The protocols the parts share: a model that counts and generates, a prefix warmer, a recaller, a
worker's status, and the flags background work watches.

They are declared here once, because parts never import each other: a model, a counter or a recaller
is handed to whoever needs it. The real implementations live in ``appliance.models`` and
``appliance.context.recall``; tests pass fakes that follow the same protocols.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from appliance.types import Generation, Message, Sampling, Turn

if TYPE_CHECKING:
    import numpy as np

OnToken = Callable[[str], None]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way the responder sees them: a whole chat prompt, or a piece of text alone."""

    def count(self, messages: Sequence[Message]) -> int:
        """Tokens of the prompt these messages become under the model's own chat template."""
        ...

    def count_text(self, text: str) -> int:
        """Tokens of a piece of text on its own (for the manifest's per-part counts)."""
        ...


@runtime_checkable
class ChatModel(TokenCounter, Protocol):
    """What the turn needs from a model that answers (or summarizes): count a prompt, and generate.

    The real ones live in ``appliance.models`` (llama.cpp, a remote OpenAI-compatible server); tests
    pass fakes that follow the same protocol.
    """

    name: str
    n_ctx: int

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        """Generate an answer, calling ``on_token`` with each piece of text as it comes.

        ``cache_key`` (a session id) lets a backend keep and restore that session's evaluated prompt
        prefix between its answers; backends without such a cache ignore it. A backend whose
        ``continues`` attribute is true continues a prompt whose last message is the assistant's: the
        answer is what follows that text (the checked stream's retry after text was shown); one
        without it is never given such a prompt.
        Raises ``appliance.errors.Cancelled`` if ``cancel`` is set before the answer is complete.
        """
        ...


@runtime_checkable
class Judge(Protocol):
    """A backend that can say how likely its answer to a prompt opens with a yes rather than a no,
    without generating it (llama.cpp reads its next token's logits; a remote server, its logprobs)."""

    def yes_or_no(self, messages: Sequence[Message], *, cache_key: str | None = None) -> float | None:
        """The probability of a yes among a yes and a no as the answer's first word (None: the backend
        cannot tell). ``cache_key`` as for :meth:`ChatModel.generate`: the prompt's evaluated prefix is
        reused, and what the question evaluated stays for the answer after it."""
        ...


class Flag(Protocol):
    """Anything with ``is_set()``: a ``threading.Event``, or a view of "an answer is waiting"."""

    def is_set(self) -> bool: ...


@runtime_checkable
class Busy(Protocol):
    """Says whether an answer is being generated now (the pipeline's ``answering`` gauge). Background
    work on the same cores (summaries, prefix warm-ups) waits for it to end or stops to make room."""

    @property
    def busy(self) -> bool: ...


@dataclass(frozen=True)
class Warmed:
    """What one warm-up of a session's next prompt prefix did."""

    reused: int  # tokens already evaluated (in the live context or the session's saved state)
    evaluated: int  # tokens evaluated now
    total: int  # tokens of the prefix
    seconds: float

    @property
    def complete(self) -> bool:
        return self.reused + self.evaluated >= self.total


@runtime_checkable
class PrefixWarmer(Protocol):
    """A backend that can evaluate a prompt prefix ahead of the question (llama.cpp; not a remote server)."""

    def prepare(self, messages: Sequence[Message], *, cache_key: str, cancel: Flag | None = None) -> Warmed:
        """Evaluate ``messages`` up to the end of the last one's text (no turn end after it), keep the
        state under ``cache_key``, and stop early, keeping what was done, once ``cancel`` is set."""
        ...


@runtime_checkable
class Placed(Protocol):
    """A model that says where it runs, for ``appliance status`` and ``/readyz``: ``cpu``, ``gpu (NAME,
    N layers)`` (llama.cpp), or the server's address (a remote backend)."""

    device: str


class Recaller(Protocol):
    """What the turn needs from recall (``appliance.context.recall.Recall``)."""

    model_name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def points_back(self, question: str) -> bool: ...

    def select(
        self, question: str, candidates: Sequence[Turn], vectors: np.ndarray, k: int, min_score: float
    ) -> tuple[int, ...]: ...


class WorkerStatus(Protocol):
    """What the edges need from a background worker (the summarizer): liveness and counters."""

    def is_alive(self) -> bool: ...

    def counters(self) -> Mapping[str, int]:
        """Monotonic counts such as ``{"runs": 12, "failures": 1}``."""
        ...
