"""The knowledge base in memory: every chunk's vector as one matrix, the chunks' text and place, and
the word statistics that subject resolution needs (how rare each word is across the documents, and
each document's title words).

Built from the store in one read (:meth:`Index.load`) and replaced whole when the store's generation
changes, so readers never see half of an update. Memory: 384 float32 per chunk (9,170 chunks: 14 MB),
plus their text.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from appliance.lexicon.text import fold

_WORD = re.compile(r"\w+")
_APOSTROPHES = re.compile(r"['’`´]")


def words(text: str) -> list[str]:
    """The words of a text as they are compared: lower case, no accents, apostrophes dropped ("Sutro's"
    → "sutros"), and a plural's final s dropped from longer words, so "illusions" meets "illusion"."""
    return [_key(w) for w in _WORD.findall(_APOSTROPHES.sub("", fold(text)))]


def _key(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


@dataclass(frozen=True)
class Entry:
    """One chunk as retrieval sees it (its vector is the same row of :attr:`Index.vectors`)."""

    chunk_id: int
    doc: str
    title: str
    heading: str
    location: str
    text: str
    tokens: int


@dataclass(frozen=True)
class Index:
    generation: int
    entries: tuple[Entry, ...]
    vectors: np.ndarray  # (len(entries), dims) float32, L2-normalised rows
    model: str = ""
    row_of: Mapping[int, int] = field(default_factory=dict)  # chunk id -> row
    rows_of_doc: Mapping[str, np.ndarray] = field(default_factory=dict)  # document name -> its rows
    titles: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # document -> title words
    by_title_word: Mapping[str, frozenset[str]] = field(default_factory=dict)  # word -> documents
    idf: Mapping[str, float] = field(default_factory=dict)  # word -> log(documents / documents with it)

    @classmethod
    def empty(cls, generation: int = -1) -> Index:
        return cls(generation, (), np.zeros((0, 0), dtype=np.float32))

    @classmethod
    def load(cls, generation: int, rows: Iterable[Mapping[str, Any]]) -> Index:
        """The index of the store's chunk rows (``KnowledgeStore.knowledge_chunks``)."""
        entries: list[Entry] = []
        blobs: list[bytes] = []
        models: set[str] = set()
        doc_words: dict[str, set[str]] = defaultdict(set)
        titles: dict[str, tuple[str, ...]] = {}
        for row in rows:
            entry = Entry(
                int(row["id"]),
                str(row["doc"]),
                str(row["title"]),
                str(row["heading"]),
                str(row["location"]),
                str(row["text"]),
                int(row["tokens"]),
            )
            entries.append(entry)
            blobs.append(row["vector"])
            models.add(str(row["model"]))
            doc_words[entry.doc].update(words(f"{entry.title}\n{entry.text}"))
            titles.setdefault(entry.doc, tuple(words(entry.title)))
        if not entries:
            return cls.empty(generation)
        vectors = np.frombuffer(b"".join(blobs), dtype="<f4").astype(np.float32).reshape(len(entries), -1)
        rows_of: dict[str, list[int]] = defaultdict(list)
        for i, entry in enumerate(entries):
            rows_of[entry.doc].append(i)
        frequency: dict[str, int] = defaultdict(int)
        for found in doc_words.values():
            for word in found:
                frequency[word] += 1
        n = len(doc_words)
        by_title: dict[str, set[str]] = defaultdict(set)
        for doc, title in titles.items():
            for word in title:
                by_title[word].add(doc)
        return cls(
            generation=generation,
            entries=tuple(entries),
            vectors=vectors,
            model=",".join(sorted(models)),
            row_of={e.chunk_id: i for i, e in enumerate(entries)},
            rows_of_doc={doc: np.array(rows, dtype=np.int64) for doc, rows in rows_of.items()},
            titles=titles,
            by_title_word={w: frozenset(ds) for w, ds in by_title.items()},
            idf={w: math.log((n + 1) / (c + 1)) for w, c in frequency.items()},
        )

    def rarity(self, word: str) -> float:
        """How rare a word is across the documents (an unseen word as rare as one in a single document)."""
        found = self.idf.get(word)
        if found is None:
            return math.log((len(self.titles) + 1) / 2) if self.titles else 0.0
        return found

    def __len__(self) -> int:
        return len(self.entries)
