"""Conversation stage (early / mid / late), guessed from what has been said so far.

A pure function: the total number of turns is never known while a conversation is going on, so
position alone cannot say "late"; resolution cues in the customer's message do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .types import Stage, Turn

EARLY_TURNS = 3
LATE_CUES = ("anything else", "that's all", "that is all", "thank you", "thanks", "resolved", "bye", "goodbye")


def detect(
    turns: Sequence[Turn],
    message: str,
    *,
    early_turns: int = EARLY_TURNS,
    late_cues: Sequence[str] = LATE_CUES,
) -> Stage:
    """Stage of the customer's next ``message`` after ``turns``."""
    customer_turns = sum(1 for t in turns if t.role == "customer") + 1
    if customer_turns <= early_turns:
        return "early"
    text = message.casefold()
    if any(re.search(rf"(?<!\w){re.escape(cue.casefold())}(?!\w)", text) for cue in late_cues):
        return "late"
    return "mid"
