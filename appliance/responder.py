"""What the pipeline needs from a model that answers: count a prompt's tokens, and generate.

The real implementation is :class:`appliance.llm.LlamaChatModel`; tests pass fakes that follow the
same protocol. Nothing here imports a model library.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from .errors import Cancelled
from .types import Generation, Message, Sampling

OnToken = Callable[[str], None]
__all__ = ["Cancelled", "ChatModel", "OnToken", "Sampling"]


@runtime_checkable
class ChatModel(Protocol):
    name: str
    n_ctx: int

    def count(self, messages: Sequence[Message]) -> int:
        """Tokens of the prompt these messages become under the model's own chat template."""
        ...

    def count_text(self, text: str) -> int:
        """Tokens of a piece of text on its own (for the manifest's per-part counts)."""
        ...

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
    ) -> Generation:
        """Generate an answer, calling ``on_token`` with each piece of text as it comes.

        Raises :class:`Cancelled` if ``cancel`` is set before the answer is complete.
        """
        ...
