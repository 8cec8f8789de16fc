"""The knowledge base in memory: two vectors per chunk as two matrices, the chunks' place and text, and
the documents' names for subject resolution (:class:`~.subject.Names`).

Each chunk has a vector of its text and one of its :func:`~.chunk.topic` (its heading without the
document's name); a question's similarity to a chunk mixes the two (:meth:`Index.similarity`): the
heading says what a FAQ section answers, the text how it answers. Built from the store in one read
(:meth:`Index.load`) and replaced whole when the store's generation changes, so readers never see half
of an update. Memory: 384 float32 per chunk and per distinct topic (9,695 chunks and 4,854 topics on
the dev set: 22 MB), plus their text.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from appliance.knowledge.subject import Names
from appliance.lexicon.text import fold

# The stored model name's suffix for rows that hold both vectors, the text's then the topic's (rows
# stored before it hold the text's only, and are re-embedded by the next sync).
TOPICS = "+topics"
# A word in more than this share of the chunks is left out of the lexical search: it matches nearly
# every chunk and would make SQLite rank them all.
COMMON = 0.05
_TERM = re.compile(r"\w+")
# Weight of the chunk's text in the similarity (the rest is its heading's): chosen on the odd items of
# the dev set (docs/measurements.md).
TEXT_WEIGHT = 0.85


@dataclass(frozen=True)
class Entry:
    """One chunk as retrieval sees it (its vector is the same row of :attr:`Index.vectors`; its topic's,
    the row :attr:`Index.topic_of` gives of :attr:`Index.topics`)."""

    chunk_id: int
    doc: str
    title: str
    heading: str
    location: str
    text: str
    tokens: int

    @classmethod
    def of_row(cls, row: Mapping[str, Any]) -> Entry:
        """The entry of one of the store's chunk rows."""
        return cls(
            int(row["id"]),
            str(row["doc"]),
            str(row["title"]),
            str(row["heading"]),
            str(row["location"]),
            str(row["text"]),
            int(row["tokens"]),
        )


@dataclass(frozen=True)
class Index:
    generation: int
    entries: tuple[Entry, ...]
    vectors: np.ndarray  # (len(entries), dims) float32, L2-normalised rows: the chunks' text
    topics: np.ndarray  # (distinct topics, dims) likewise: the headings without their document's name
    topic_of: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))  # row -> its topic's row
    model: str = ""
    row_of: Mapping[int, int] = field(default_factory=dict)  # chunk id -> row
    rows_of_doc: Mapping[str, np.ndarray] = field(default_factory=dict)  # document name -> its rows
    names: Names = field(default_factory=Names.empty)
    common: frozenset[str] = frozenset()  # words in more than ``COMMON`` of the chunks, folded

    @classmethod
    def empty(cls, generation: int = -1) -> Index:
        return cls(generation, (), np.zeros((0, 0), dtype=np.float32), np.zeros((0, 0), dtype=np.float32))

    @classmethod
    def load(cls, generation: int, rows: Iterable[Mapping[str, Any]]) -> Index:
        """The index of the store's chunk rows (``KnowledgeStore.knowledge_chunks``); a row's vector
        holds the text's vector and then the topic's (``TOPICS``), or the text's only, used for both."""
        entries: list[Entry] = []
        # The vectors are copied out of each row as it streams by, so the rows' blobs are not all held
        # at once (the dev set's 9,695 rows would hold 30 MB more at the peak, kept by the allocator).
        text_bytes = bytearray()
        distinct: dict[bytes, int] = {}  # a question asked alike in many documents has one topic row
        topic_of: list[int] = []
        models: set[str] = set()
        titles: dict[str, str] = {}
        texts: dict[str, list[str]] = defaultdict(list)
        for row in rows:
            entry = Entry.of_row(row)
            entries.append(entry)
            blob = bytes(row["vector"])
            half = len(blob) // 8 * 4 if str(row["model"]).endswith(TOPICS) else len(blob)
            text_bytes += blob[:half]
            topic_of.append(
                distinct.setdefault(blob[half : 2 * half] if half < len(blob) else blob[:half], len(distinct))
            )
            models.add(str(row["model"]).removesuffix(TOPICS))
            titles.setdefault(entry.doc, entry.title)
            texts[entry.doc].append(entry.text)
        if not entries:
            return cls.empty(generation)
        vectors = np.frombuffer(text_bytes, dtype="<f4").reshape(len(entries), -1).astype(np.float32, copy=False)
        topics = np.frombuffer(b"".join(distinct), dtype="<f4").reshape(len(distinct), -1).astype(np.float32)
        rows_of: dict[str, list[int]] = defaultdict(list)
        for i, entry in enumerate(entries):
            rows_of[entry.doc].append(i)
        return cls(
            generation=generation,
            entries=tuple(entries),
            vectors=vectors,
            topics=topics,
            topic_of=np.array(topic_of, dtype=np.int32),
            model=",".join(sorted(models)),
            row_of={e.chunk_id: i for i, e in enumerate(entries)},
            rows_of_doc={doc: np.array(rows, dtype=np.int64) for doc, rows in rows_of.items()},
            names=Names.build(titles, texts),
            common=_common(entries),
        )

    def similarity(self, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The question's similarity to every chunk (``TEXT_WEIGHT`` of the text's cosine, the rest
        of the topic's), and its cosine with every topic alone."""
        v = np.asarray(vector, dtype=np.float32).reshape(-1)
        text = self.vectors @ v
        topic = (self.topics @ v)[self.topic_of]
        return TEXT_WEIGHT * text + (1.0 - TEXT_WEIGHT) * topic, topic

    def opens_section(self, chunk_id: int) -> bool:
        """Whether the chunk is its section's first (the one that follows its heading), not a later part
        of a long section cut in passages."""
        row = self.row_of.get(chunk_id)
        if row is None:
            return False
        entry = self.entries[row]
        before = self.entries[row - 1] if row else None
        return before is None or (before.doc, before.heading) != (entry.doc, entry.heading)

    def __len__(self) -> int:
        return len(self.entries)


def _common(entries: Sequence[Entry]) -> frozenset[str]:
    """The words (folded) in more than ``COMMON`` of the chunks: too common to tell chunks apart."""
    frequency: Counter[str] = Counter()
    for entry in entries:
        frequency.update(set(_TERM.findall(fold(entry.text))))
    return frozenset(w for w, n in frequency.items() if n > COMMON * len(entries) and n > 1)
