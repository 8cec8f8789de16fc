"""The knowledge base's tables (:func:`~appliance.store.migrations.m005_knowledge`): documents, their
chunks with vectors, and the FTS5 index over the chunks, which triggers keep equal to them.

A document is replaced in one transaction: its old chunks (and with them their index rows) go and
the new ones come in together, so a failed or interrupted ingest leaves the previous version whole
and an edit leaves no stale chunk behind. Every change bumps a generation number, by which each
process's in-memory index (``appliance.knowledge``) knows when to reload.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import sqlite_utils

from appliance.audit.record import AuditEvent
from appliance.audit.record import document as audit_document
from appliance.errors import StoreError

DOCUMENT_COLUMNS = "id, key, name, folder, title, format, sha256, bytes, chunks, model, chunking, added_at"
# bm25's column weights (title, heading, text): a word of a heading or title says more about a
# chunk than one of its body.
BM25 = "bm25(knowledge_fts, 2.0, 2.0, 1.0)"


class KnowledgeTables:
    """The :class:`~appliance.store.Store`'s methods for the knowledge base (a part of it, kept here)."""

    db: sqlite_utils.Database
    _lock: threading.RLock
    _tx: Callable[[], AbstractContextManager[sqlite_utils.Database]]
    _rows: Callable[..., list[dict[str, Any]]]
    _audit: Callable[[sqlite_utils.Database, AuditEvent], None]

    def knowledge_generation(self) -> int:
        """A number that changes with every change to the knowledge base."""
        return int(self._rows("SELECT generation FROM knowledge_state WHERE id = 1")[0]["generation"])

    def knowledge_documents(self) -> list[dict[str, Any]]:
        """Every document, by name: key, name, folder, title, format, sha256, bytes, chunks, model, chunking, added_at."""
        return self._rows(f"SELECT {DOCUMENT_COLUMNS} FROM knowledge_documents ORDER BY name, key")

    def knowledge_document(self, key: str) -> dict[str, Any] | None:
        rows = self._rows(f"SELECT {DOCUMENT_COLUMNS} FROM knowledge_documents WHERE key = ?", [key])
        return rows[0] if rows else None

    def replace_knowledge_document(self, document: Mapping[str, Any], chunks: Sequence[Mapping[str, Any]]) -> int:
        """Store ``document`` and its ``chunks`` in place of any document with the same ``key``, in one
        transaction; returns the new document's id. ``chunks`` carry ord, title, heading, location,
        text, tokens, text_sha and vector (float32 bytes)."""
        with self._tx() as db:
            self._delete_document(db, str(document["key"]))
            doc_id = db.execute(
                """INSERT INTO knowledge_documents
                   (key, name, folder, title, format, sha256, bytes, chunks, model, chunking, added_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [
                    document["key"],
                    document["name"],
                    document.get("folder", ""),
                    document["title"],
                    document["format"],
                    document["sha256"],
                    document["bytes"],
                    len(chunks),
                    document["model"],
                    document.get("chunking", ""),
                    time.time(),
                ],
            ).lastrowid
            db.conn.executemany(
                """INSERT INTO knowledge_chunks (doc_id, ord, title, heading, location, text, tokens, text_sha, vector)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [
                    (
                        doc_id,
                        c["ord"],
                        c["title"],
                        c["heading"],
                        c["location"],
                        c["text"],
                        c["tokens"],
                        c["text_sha"],
                        c["vector"],
                    )
                    for c in chunks
                ],
            )
            db.execute("UPDATE knowledge_state SET generation = generation + 1 WHERE id = 1")
            self._audit(db, audit_document("added", str(document["key"]), str(document["sha256"]), len(chunks)))
        return int(doc_id or 0)

    def remove_knowledge_documents(self, keys: Iterable[str]) -> int:
        """Remove these documents and their chunks in one transaction; how many there were."""
        removed = 0
        with self._tx() as db:
            for key in keys:
                if self._delete_document(db, key):
                    removed += 1
                    self._audit(db, audit_document("removed", key))
            if removed:
                db.execute("UPDATE knowledge_state SET generation = generation + 1 WHERE id = 1")
        return removed

    @staticmethod
    def _delete_document(db: sqlite_utils.Database, key: str) -> int:
        row = db.execute("SELECT id FROM knowledge_documents WHERE key = ?", [key]).fetchone()
        if row is None:
            return 0
        # The chunks first and explicitly, so that their triggers clear the FTS index.
        db.execute("DELETE FROM knowledge_chunks WHERE doc_id = ?", [row[0]])
        db.execute("DELETE FROM knowledge_documents WHERE id = ?", [row[0]])
        return 1

    def knowledge_chunks(self) -> Iterator[dict[str, Any]]:
        """Every chunk with its document's name and model, in document and chunk order (for the in-memory index)."""
        with self._lock:
            rows = self.db.query(
                """SELECT c.id, c.doc_id, d.name AS doc, d.model, c.ord, c.title, c.heading, c.location, c.text,
                          c.tokens, c.vector
                   FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.doc_id
                   ORDER BY d.name, d.key, c.ord"""
            )
            yield from rows  # streamed: the index copies what it keeps of each row

    def knowledge_vectors(self, text_shas: Iterable[str], model: str) -> dict[str, bytes]:
        """Stored vectors of chunks with these texts (by their sha256), made by ``model``: an edited
        document re-embeds only the chunks whose text changed."""
        wanted = list(dict.fromkeys(text_shas))
        found: dict[str, bytes] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ", ".join("?" * len(part))
            for row in self._rows(
                f"""SELECT c.text_sha, c.vector FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.doc_id
                    WHERE d.model = ? AND c.text_sha IN ({marks})""",
                [model, *part],
            ):
                found.setdefault(row["text_sha"], row["vector"])
        return found

    def knowledge_search(self, match: str, limit: int) -> list[tuple[int, float]]:
        """Chunk ids and their bm25 relevance (higher is better) for an FTS5 ``match`` expression."""
        if not match.strip() or limit <= 0:
            return []
        try:
            rows = self._rows(
                f"SELECT rowid, {BM25} AS rank FROM knowledge_fts WHERE knowledge_fts MATCH ? ORDER BY rank LIMIT ?",
                [match, limit],
            )
        except sqlite3.OperationalError as exc:  # a malformed expression: the caller builds them quoted
            raise StoreError(f"knowledge search failed: {exc}") from None
        return [(int(r["rowid"]), -float(r["rank"])) for r in rows]
