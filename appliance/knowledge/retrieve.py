"""Retrieval: the passages that answer a question, found by words and by meaning, for the subject the
conversation is about.

A chunk's **score** is the question's similarity to it (:meth:`~.index.Index.similarity`: its text's
and its heading's cosine, mixed), plus ``SUBJECT_BONUS`` for the documents the conversation names
(:mod:`.subject`), scaled by how surely each is named. The candidates are ordered by their score plus
their lexical match, SQLite FTS5's bm25 over the chunks' title, heading and text, as a share of the
best one, weighted ``LEXICAL_WEIGHT``: fused by score, not by rank, because reciprocal rank fusion
flattens the gaps between near scores and, on the dev set, let a noisy transcript's common words
reorder the best few (the gold section at rank 1 fell by 5 to 8 points on each half). A passage is
offered only with a score of at least ``knowledge.min_score``; the ``k`` best are kept.

Which chunks are candidates depends on the subject:

* no subject: every chunk;
* a subject, and a question that documents elsewhere answer alike (the best matches outside the
  subject come from ``SHARED_DOCS`` documents or more, within ``SHARED_MARGIN`` of each other: "is
  there parking?" in forty hotels): the subject's chunks only, since another hotel's parking is not
  this one's. If the subject's best match is ``NOT_FOUND_MARGIN`` below the best elsewhere, the
  subject's documents do not answer it: no passage, and the turn says so (``knowledge.not_found``);
* otherwise every chunk, the subject's ahead by their bonus: a topic named in a small base
  ("transfers") does not hide the fees' page that answers.

:func:`rank` is a pure function of the similarities, the lexical scores and the index.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from appliance.knowledge.index import Index
from appliance.knowledge.reply import Reply
from appliance.knowledge.subject import Subject
from appliance.lexicon.text import fold
from appliance.types import FetchDecision, Passage, Snapshot, current_facts

# The bm25 score's weight, as a share of the best one among the candidates, in the order (not the score).
LEXICAL_WEIGHT = 0.05
# The constants below were chosen on the odd items of the dev set (docs/measurements.md).
SUBJECT_BONUS = 0.3  # added to the score of the surest subject's chunks (less for the others)
SHARED_DOCS = 3
SHARED_MARGIN = 0.1
SHARED_POOL = 60  # the best matches outside the subject that are looked at
NOT_FOUND_MARGIN = 0.35
# A follow-up (chosen on every dev set together, docs/measurements.md): a message whose best chunk's
# similarity is ALONE or more is read alone; at LEANS or less it leans on the conversation fully.
ALONE = 0.6
LEANS = 0.3
CONTEXT_WEIGHT = 0.5  # of the similarity to the message read with the turns before it
DRAWN_BONUS = 0.1  # for the document the agent's last answer drew on


@dataclass(frozen=True)
class Query:
    """What retrieval is asked: the customer's message, and what the conversation so far says about its
    subject (the turn builds it from the session's snapshot with :meth:`of`)."""

    message: str
    recent: tuple[str, ...] = ()  # the recent turns' text, newest first, the message not among them
    summary: str = ""
    ledger: tuple[str, ...] = ()  # the current facts' values
    previous: str = ""  # the customer's message before this one
    answered: str = ""  # the agent's answer right before the message
    gives_details: bool = False  # the message gives the customer's details (the ledger found facts in it)
    reads_back: bool = False  # the message asks to hear a fact again
    language: str | None = None  # the customer's, as the turn detects it (None: unsure): the fetch check's

    @classmethod
    def of(
        cls,
        message: str,
        snapshot: Snapshot,
        *,
        turns: int,
        gives_details: bool = False,
        reads_back: bool = False,
        language: str | None = None,
    ) -> Query:
        """The query of ``message`` in a session: its last ``turns`` turns, summary and current facts."""
        recent = tuple(t.text for t in reversed(snapshot.turns[-turns:])) if turns else ()
        previous, answered = conversation([(t.role, t.text) for t in snapshot.turns[-2:]])
        return cls(
            message=message,
            recent=recent,
            previous=previous,
            answered=answered,
            summary=snapshot.summary.text if snapshot.summary is not None else "",
            ledger=tuple(e.value for e in current_facts(snapshot.ledger)),
            gives_details=gives_details,
            reads_back=reads_back,
            language=language,
        )

    def context(self) -> str:
        """What a follow-up is read with: the customer's previous message, the agent's answer to it,
        and the message."""
        return " ".join(t for t in (self.previous, self.answered, self.message) if t)

    def subject_texts(self) -> tuple[str, ...]:
        """The texts the subject is read from, newest first: the message, the recent turns, then the
        ledger's values and the summary as the oldest."""
        older = tuple(t for t in (" ; ".join(self.ledger), self.summary) if t)
        return (self.message, *self.recent, *older)


def conversation(turns: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """A query's ``previous`` and ``answered`` from the (role, text) turns before its message: the
    customer's message before the agent's answer, and that answer when the last turn is one."""
    said = list(turns)
    answered = said.pop()[1] if said and said[-1][0] == "agent" else ""
    previous = said[-1][1] if said and said[-1][0] == "customer" else ""
    return previous, answered


@dataclass(frozen=True)
class Retrieval:
    """The fetch check's decision and the passages found, best first. ``not_found``: the message needs
    the documents and no passage reached ``knowledge.min_score`` (the turn answers ``knowledge.not_found``).
    ``reply``: what the best passage answers, when it answers a yes/no question (:mod:`.reply`)."""

    question: str  # the message as matched (the fillers it opened with left out)
    decision: FetchDecision
    passages: tuple[Passage, ...] = ()
    reply: Reply | None = None  # the best passage's own answer, when its heading asks a yes/no question

    @property
    def not_found(self) -> bool:
        return self.decision.fetch and not self.passages


@dataclass(frozen=True)
class Thread:
    """What the conversation adds to a message that leans on it (``lean``, 0..1: :func:`follows`): the
    similarity of every chunk to the message read with the turns before it, and the document the
    agent's last answer drew on (the one its text matches best: an answer a person typed counts too)."""

    lean: float = 0.0
    context: np.ndarray | None = None  # per chunk of the index
    drawn: str = ""

    @classmethod
    def of(cls, index: Index, lean: float, context: np.ndarray, last: np.ndarray) -> Thread:
        said = index.vectors @ last.astype(np.float32)
        return cls(lean, index.vectors @ context.astype(np.float32), index.entries[int(np.argmax(said))].doc)

    def bonus(self, index: Index) -> np.ndarray:
        """Added to every chunk's score: ``CONTEXT_WEIGHT`` of its similarity to the message read in
        context, and ``DRAWN_BONUS`` for the drawn-on document's chunks, both scaled by ``lean``."""
        if self.context is None or self.lean <= 0:
            return np.zeros(len(index))
        extra = CONTEXT_WEIGHT * self.context
        rows = index.rows_of_doc.get(self.drawn)
        if rows is not None:
            extra[rows] += DRAWN_BONUS
        return self.lean * extra


def follows(best: float) -> float:
    """How far a message leans on the conversation, from how well it matches the documents alone
    (its best chunk's similarity): 0 at ``ALONE`` or above, 1 at ``LEANS`` or below."""
    return min(1.0, max(0.0, (ALONE - best) / (ALONE - LEANS)))


@dataclass(frozen=True)
class Scope:
    """Where the passages are looked for: the candidate rows and each one's subject bonus; ``shared``:
    the subject's documents only, as other documents answer the question alike; ``answered``: false when
    the subject's documents do not answer it."""

    rows: np.ndarray
    bonus: np.ndarray  # per candidate row
    shared: bool = False
    answered: bool = True

    @classmethod
    def of(cls, index: Index, similarity: np.ndarray, subjects: Sequence[Subject]) -> Scope:
        owned = [(index.rows_of_doc[s.doc], s.score) for s in subjects if s.doc in index.rows_of_doc]
        everything = np.arange(len(index))
        if not owned:
            return cls(everything, np.zeros(len(index)))
        best = max(score for _, score in owned)
        bonus = np.zeros(len(index))
        for rows, score in owned:
            bonus[rows] = np.maximum(bonus[rows], SUBJECT_BONUS * score / best)
        inside = bonus > 0
        outside = np.flatnonzero(~inside)
        if not len(outside):
            return cls(everything, bonus)
        pool = outside[_best(similarity[outside], SHARED_POOL)]
        elsewhere = float(similarity[pool[0]])
        close = {index.entries[r].doc for r in pool if similarity[r] >= elsewhere - SHARED_MARGIN}
        if len(close) < SHARED_DOCS:
            return cls(everything, bonus)
        rows = np.flatnonzero(inside)
        answered = elsewhere - float(similarity[rows].max()) <= NOT_FOUND_MARGIN
        return cls(rows, bonus[rows], shared=True, answered=answered)


def rank(
    index: Index,
    similarity: np.ndarray,
    lexical: Mapping[int, float],
    subjects: Sequence[Subject],
    *,
    k: int,
    min_score: float,
    thread: Thread | None = None,
) -> tuple[Passage, ...]:
    """The ``k`` best passages whose score reaches ``min_score`` (see the module's docstring);
    ``similarity``: the question's to every chunk of ``index``."""
    if not len(index) or k <= 0:
        return ()
    scope = Scope.of(index, similarity, subjects)
    if not scope.answered:
        return ()
    if thread is not None and thread.lean > 0:
        similarity = similarity + thread.bonus(index)
    score = similarity[scope.rows] + scope.bonus
    order = score.copy()
    at = np.full(len(index), -1)
    at[scope.rows] = np.arange(len(scope.rows))
    found = [(int(at[index.row_of[c]]), s) for c, s in lexical.items() if c in index.row_of and s > 0]
    found = [(i, s) for i, s in found if i >= 0]
    if found:
        top = max(s for _, s in found)
        for i, s in found:
            order[i] += LEXICAL_WEIGHT * s / top
    order[score < min_score] = -np.inf
    chosen: list[Passage] = []
    for i in _best(order, k):
        if not np.isfinite(order[i]):
            break
        e = index.entries[int(scope.rows[i])]
        chosen.append(Passage(e.chunk_id, e.doc, e.title, e.heading, e.location, e.text, e.tokens, float(score[i])))
        if len(chosen) == k:
            break
    return tuple(chosen)


def _best(values: np.ndarray, n: int) -> np.ndarray:
    """The positions of the ``n`` largest values, largest first (ties in position order)."""
    if len(values) > n:
        top = np.argpartition(-values, n - 1)[:n]
        return top[np.lexsort((top, -values[top]))]
    return np.argsort(-values, kind="stable")


_TERM = re.compile(r"\w+")


def match_expression(text: str, limit: int = 32, common: Collection[str] = ()) -> str:
    """An FTS5 expression that matches any of the text's words but the ``common`` ones (folded: lower
    case, no accents), each quoted (nothing in a customer's message is read as FTS5 syntax); empty for
    a text without other words."""
    terms = [t for t in dict.fromkeys(fold(t) for t in _TERM.findall(text)) if (len(t) > 1 or t.isdigit())]
    terms = [t for t in terms if t not in common][:limit]
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
