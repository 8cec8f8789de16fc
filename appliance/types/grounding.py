"""What the operator's documents give an answer: the passages found for a question, the fetch check's
decision, the prompt's citations of them, and the responder's judgement of whether they answer it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Citation:
    """A passage of an operator's document as a prompt carried it: which chunk, from which document
    and section, and how well it matched the question (the cosine of :class:`Passage`)."""

    chunk_id: int
    doc: str
    title: str
    heading: str
    location: str = ""
    score: float = 0.0


@dataclass(frozen=True)
class Passage:
    """A chunk of an operator's document found for a question: its text, where it came from, and how well
    it matched (``score``: cosine with the chunk and its heading, raised for the conversation's subject)."""

    chunk_id: int
    doc: str  # the document's name, as ``appliance knowledge list`` shows it
    title: str
    heading: str  # the heading path, " > " between levels
    location: str  # where in the file: "page 3", or the heading
    text: str
    tokens: int  # in the responder's tokens
    score: float

    def citation(self) -> Citation:
        return Citation(self.chunk_id, self.doc, self.title, self.heading, self.location, self.score)


FetchReason = Literal[
    "match", "asked", "weak", "greeting", "thanks", "details", "readback", "repeat", "action", "empty"
]


@dataclass(frozen=True)
class FetchDecision:
    """Seed 003's fetch check for one message: whether it needs the institution's documents, why, and the
    scores it was decided on (``score`` against ``threshold``; ``best``: the best heading's cosine)."""

    fetch: bool
    reason: FetchReason
    score: float = 0.0
    threshold: float = 0.0
    best: float = 0.0
    subject: tuple[str, ...] = ()  # the documents the conversation is about, best first
    polar: bool = False  # the message asks a yes or a no ("do they take cards", "Is the branch open on Sunday?")


@dataclass(frozen=True)
class Grounding:
    """What the operator's documents gave one answer: the fetch check's decision and scores, the
    passages the prompt carried (the answer's sources, best first), how many retrieval found, whether
    the answer is the fixed ``knowledge.not_found`` text (no passage reached ``knowledge.min_score``
    for a question that needs the documents, or the responder judged that the placed passages do not
    answer it: ``answerable``; nothing was generated)."""

    decision: FetchDecision
    sources: tuple[Citation, ...] = ()
    found: int = 0
    not_found: bool = False
    # Whether the placed passages answer the question (None: not asked): the responder's own yes, and
    # the probability read from it with the best passage's score; the answer is the not-found text when
    # that is under knowledge.min_answerable.
    answerable: float | None = None
    yes: float | None = None


@dataclass(frozen=True)
class Judgement:
    """Whether the passages a prompt placed answer its question: the responder's probability of a yes
    (asked in place of the prompt's directive), the best placed passage's score, and the probability
    the two give together (what ``knowledge.min_answerable`` is compared with)."""

    yes: float
    best: float
    answerable: float
