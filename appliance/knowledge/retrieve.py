"""Retrieval: the passages that answer a question, found by words and by meaning, for the subject the
conversation is about.

Three rankings of every chunk are fused by reciprocal rank (RRF, Cormack et al. 2009: a chunk scores
``1 / (RRF_K + rank)`` in each ranking it is in, and the sums are compared):

* dense: cosine similarity of the question and the chunk (all-MiniLM-L6-v2 vectors, one matrix);
* lexical: SQLite FTS5's bm25 over the chunks' title, heading and text (the question's words, any of them);
* subject: the documents the conversation names (:mod:`.subject`), worth ``SUBJECT_WEIGHT`` ranks' worth
  at the top, scaled by how surely they are named. Among forty hotels' identical parking questions it
  picks the hotel being discussed; a chunk that answers the question much better elsewhere still wins.

A passage is offered only with a cosine of at least ``knowledge.min_score``; the ``k`` best are kept.
:func:`rank` is a pure function of the question's vector, the lexical scores and the index.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from appliance.knowledge.index import Index
from appliance.knowledge.subject import Subject
from appliance.types import FetchDecision, Passage, Snapshot, current_facts

RRF_K = 60
SUBJECT_WEIGHT = 0.5  # between the subject's documents: a surer subject is worth this many first places


@dataclass(frozen=True)
class Query:
    """What retrieval is asked: the customer's message, and what the conversation so far says about its
    subject (the turn builds it from the session's snapshot with :meth:`of`)."""

    message: str
    recent: tuple[str, ...] = ()  # the recent turns' text, newest first, the message not among them
    summary: str = ""
    ledger: tuple[str, ...] = ()  # the current facts' values
    gives_details: bool = False  # the message gives the customer's details (the ledger found facts in it)
    reads_back: bool = False  # the message asks to hear a fact again

    @classmethod
    def of(
        cls, message: str, snapshot: Snapshot, *, turns: int, gives_details: bool = False, reads_back: bool = False
    ) -> Query:
        """The query of ``message`` in a session: its last ``turns`` turns, summary and current facts."""
        recent = tuple(t.text for t in reversed(snapshot.turns[-turns:])) if turns else ()
        return cls(
            message=message,
            recent=recent,
            summary=snapshot.summary.text if snapshot.summary is not None else "",
            ledger=tuple(e.value for e in current_facts(snapshot.ledger)),
            gives_details=gives_details,
            reads_back=reads_back,
        )

    def subject_texts(self) -> tuple[str, ...]:
        """The texts the subject is read from, newest first: the message, the recent turns, then the
        ledger's values and the summary as the oldest."""
        older = tuple(t for t in (" ; ".join(self.ledger), self.summary) if t)
        return (self.message, *self.recent, *older)


@dataclass(frozen=True)
class Retrieval:
    """The fetch check's decision and the passages found, best first. ``not_found``: the message needs
    the documents and no passage reached ``knowledge.min_score`` (the turn answers ``knowledge.not_found``)."""

    question: str  # the message as matched (the fillers it opened with left out)
    decision: FetchDecision
    passages: tuple[Passage, ...] = ()

    @property
    def not_found(self) -> bool:
        return self.decision.fetch and not self.passages


def rank(
    index: Index,
    query_vector: np.ndarray,
    lexical: Mapping[int, float],
    subjects: Sequence[Subject],
    *,
    k: int,
    min_score: float,
) -> tuple[Passage, ...]:
    """The ``k`` best passages whose cosine reaches ``min_score``: the subject's documents' chunks by
    fused rank, after any chunk elsewhere that matches clearly better (by ``ELSEWHERE_MARGIN``)."""
    if not len(index) or k <= 0:
        return ()
    dense = index.vectors @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
    lexical_rows = {index.row_of[c]: s for c, s in lexical.items() if c in index.row_of}
    owned = [(index.rows_of_doc[s.doc], s.score) for s in subjects if s.doc in index.rows_of_doc]
    if not owned:
        order = _fused(np.arange(len(index)), dense, lexical_rows, {})
    else:
        inside = np.concatenate([rows for rows, _ in owned])
        bonus = {int(row): score for rows, score in owned for row in rows}
        first = _fused(inside, dense, lexical_rows, bonus)
        elsewhere = [int(r) for r in np.argsort(-dense, kind="stable")[: k * 4] if int(r) not in bonus]
        order = first + elsewhere
    chosen: list[Passage] = []
    for row in order:
        if float(dense[row]) < min_score:
            continue
        e = index.entries[row]
        chosen.append(Passage(e.chunk_id, e.doc, e.title, e.heading, e.location, e.text, e.tokens, float(dense[row])))
        if len(chosen) == k:
            break
    return tuple(chosen)


def _fused(rows: np.ndarray, dense: np.ndarray, lexical: Mapping[int, float], bonus: Mapping[int, float]) -> list[int]:
    """``rows`` best first by reciprocal rank fusion of their dense and lexical ranks among themselves,
    plus ``SUBJECT_WEIGHT`` first places times each row's subject score."""
    fused = 1.0 / (RRF_K + _ranks(dense[rows]))
    found = [(i, lexical[int(r)]) for i, r in enumerate(rows) if int(r) in lexical]
    for place, (i, _) in enumerate(sorted(found, key=lambda item: -item[1]), start=1):
        fused[i] += 1.0 / (RRF_K + place)
    if bonus:
        fused += np.array([SUBJECT_WEIGHT * bonus.get(int(r), 0.0) for r in rows]) / (RRF_K + 1)
    return [int(rows[i]) for i in np.argsort(-fused, kind="stable")]


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Each score's place from 1 (best), as float64."""
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


_TERM = re.compile(r"\w+")


def match_expression(text: str, limit: int = 32) -> str:
    """An FTS5 expression that matches any of the text's words, each quoted (nothing in a customer's
    message is read as FTS5 syntax); empty for a text without words."""
    terms = list(dict.fromkeys(t.casefold() for t in _TERM.findall(text) if len(t) > 1 or t.isdigit()))[:limit]
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
