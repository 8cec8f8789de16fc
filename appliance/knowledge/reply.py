"""A document's own answer to a yes/no question: what the guard quotes when an answer says the opposite.

FAQ pages, the form most institutions publish, answer yes/no questions in their first words ("Does a
new card have a new PIN?" "No, a replacement card keeps your PIN."), and a small model answering
from several such passages readily says yes to them all. The best passage's answer is kept beside
the retrieval when the passage's heading asks a yes/no question (:func:`.fetch.asks_yes_or_no`), it
is its section's first (a later part of a long section begins wherever the cut fell), and its
section answers in sentences: its first paragraph (or list item) after the heading, at most
``SENTENCES`` sentences, without a list item's dash, ending as a sentence ends. A table's row, or a
prose page's lead-in ("You may qualify if you are:") or fragment, gives none: quoting it would give
the customer fragments.
Which of yes and no it says, and whether an answer contradicts it, is the turn's to judge
(:mod:`appliance.turn.guard`), as the reading of a yes belongs to the facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from appliance.knowledge.chunk import HEADING_JOIN
from appliance.knowledge.fetch import FetchCues, asks_yes_or_no
from appliance.lexicon.text import SENTENCE_BREAK
from appliance.types import Passage

SENTENCES = 2
_ENDS = (".", "!", "?", "。", "！", "？")


@dataclass(frozen=True)
class Reply:
    """The answer ``passage`` gives to the yes/no question its heading asks: ``text``, its words."""

    passage: Passage
    text: str


def reply_of(passage: Passage, cues: FetchCues) -> Reply | None:
    """``passage``'s answer to its heading's yes/no question (None when the heading asks none, or
    nothing follows it)."""
    own = passage.heading.split(HEADING_JOIN)[-1].strip()
    if not own or not asks_yes_or_no(own, cues):
        return None
    lines = [line.strip() for line in passage.text.strip().split("\n") if line.strip()]
    if lines and lines[0] == own:  # a passage's text starts with its section's heading
        lines = lines[1:]
    if not lines or " | " in lines[0]:
        return None  # a table answers with its rows, not with a yes or a no
    text = " ".join(SENTENCE_BREAK.split(lines[0].removeprefix("- "))[:SENTENCES]).strip()
    # Whole sentences only: a prose page's lead-in ("You qualify if you are:") or a fragment is no answer.
    return Reply(passage, text) if text.endswith(_ENDS) else None
