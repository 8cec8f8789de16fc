"""The knowledge base: the operator's documents in the store, and the questions asked of them.

:class:`Knowledge` is built by the composition root with the store, the encoder recall already loaded
(all-MiniLM-L6-v2) and the responder's token counter. It writes (add, upload, sync, remove: one at a
time) and answers :meth:`Knowledge.consult`, the turn's one call: the fetch check, then retrieval for
the conversation's subject. The in-memory index is reloaded whenever the store's generation changes,
whichever process changed it (``appliance knowledge add`` beside a running daemon).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from appliance.config import KnowledgeSettings
from appliance.errors import DocumentError, DocumentNotFound
from appliance.knowledge.fetch import Evidence, FetchCues, decide, focus
from appliance.knowledge.index import Index
from appliance.knowledge.ingest import (
    UPLOAD,
    Embedder,
    Ingest,
    Item,
    KnowledgeStore,
    Progress,
    Report,
    folder_files,
    timed,
)
from appliance.knowledge.reply import reply_of
from appliance.knowledge.retrieve import Query, Retrieval, Thread, follows, match_expression, rank
from appliance.knowledge.subject import resolve, unnamed
from appliance.protocols import TokenCounter
from appliance.types import FetchDecision, Snapshot

LEXICAL_LIMIT = 200  # chunks the FTS5 search returns for one question


class Knowledge:
    def __init__(
        self,
        store: KnowledgeStore,
        encoder: Embedder,
        counter: TokenCounter,
        settings: KnowledgeSettings,
        *,
        cues: FetchCues | None = None,
    ) -> None:
        self.store = store
        self.encoder = encoder
        self.settings = settings
        self.cues = cues or FetchCues.build()
        self.ingest = Ingest(store, encoder, counter, int(settings.max_file_mb * 1_000_000), settings.chunk_tokens)
        self._index = Index.empty()
        self._reload = threading.Lock()
        self._write = threading.Lock()  # one writer at a time: a sync and an upload never interleave

    # writing -------------------------------------------------------------------------------------

    def add(self, paths: Iterable[Path], progress: Progress | None = None) -> Report:
        """Add or replace files, and every document of folders (a folder's deleted files are not
        removed: that is :meth:`sync`). A single file that cannot be used raises ``DocumentError``."""
        started = time.monotonic()
        report = Report()
        items: list[Item] = []
        skipped: list[tuple[str, str]] = []  # links and special files in the folders, refused
        for path in paths:
            path = Path(path).expanduser().resolve()
            if path.is_dir():
                files, refused = folder_files(path)
                items += [Item(str(f), name, str(path), f) for f, name in files]
                skipped += refused
            elif path.exists():
                items.append(Item(str(path), path.name, "", path))
            else:
                raise DocumentError(f"{path}: no such file or folder")
        with self._write:
            self.ingest.take(items, report, progress)
        if len(items) == 1 and report.failed:
            raise DocumentError(report.failed[0][1])
        report.failed += skipped
        return timed(report, started)

    def upload(self, name: str, data: bytes) -> Report:
        """Add or replace a document sent as bytes (the API's upload); ``DocumentError`` if it cannot be used."""
        clean = name.strip().replace("\\", "/").strip("/")
        if not clean or any(part in ("", ".", "..") for part in clean.split("/")):
            raise DocumentError(f"{name!r} is not a document name such as 'fees.md'")
        started = time.monotonic()
        report = Report()
        with self._write:
            self.ingest.take([Item(UPLOAD + clean, clean, "", None, data)], report)
        if report.failed:
            raise DocumentError(report.failed[0][1])
        return timed(report, started)

    def sync(self, folder: Path, progress: Progress | None = None) -> Report:
        """Make the documents from ``folder`` equal to its files: new ones added, changed ones replaced,
        those whose files are gone removed. Files that cannot be used are reported in ``failed``."""
        started = time.monotonic()
        root = Path(folder).expanduser().resolve()
        if not root.is_dir():
            raise DocumentError(f"{root}: not a folder")
        report = Report()
        files, refused = folder_files(root)
        report.failed += refused
        with self._write:
            self.ingest.take([Item(str(f), name, str(root), f) for f, name in files], report, progress)
            present = {str(f) for f, _ in files}
            gone = [d for d in self.store.knowledge_documents() if d["folder"] == str(root) and d["key"] not in present]
            self.store.remove_knowledge_documents(d["key"] for d in gone)
        report.removed += [d["name"] for d in gone]
        return timed(report, started)

    def sync_configured(self, progress: Progress | None = None) -> Report:
        """Sync every folder of ``knowledge.paths`` (a missing one is reported, not fatal)."""
        started = time.monotonic()
        total = Report()
        for folder in self.settings.paths:
            try:
                part = self.sync(folder, progress)
            except DocumentError as exc:
                total.failed.append((str(folder), str(exc)))
                continue
            for name in ("added", "replaced", "removed", "unchanged", "failed"):
                getattr(total, name).extend(getattr(part, name))
            total.chunks += part.chunks
        return timed(total, started)

    def remove(self, doc: str) -> int:
        """Remove a document by its name (as listed) or key; ``DocumentNotFound`` if none has it."""
        with self._write:
            keys = self.find(doc)
            return self.store.remove_knowledge_documents(keys)

    def find(self, doc: str) -> list[str]:
        """The keys of the documents named ``doc`` (by key, else by name)."""
        documents = self.store.knowledge_documents()
        keys = [d["key"] for d in documents if d["key"] == doc] or [d["key"] for d in documents if d["name"] == doc]
        if not keys:
            raise DocumentNotFound(f"no knowledge document named {doc!r} (see `appliance knowledge list`)")
        return keys

    def documents(self) -> list[dict[str, Any]]:
        return self.store.knowledge_documents()

    # reading -------------------------------------------------------------------------------------

    def index(self) -> Index:
        """The in-memory index, reloaded first if the store changed since it was loaded."""
        generation = self.store.knowledge_generation()
        if self._index.generation != generation:
            with self._reload:
                if self._index.generation != generation:
                    self._index = Index.load(generation, self.store.knowledge_chunks())
        return self._index

    def query(
        self,
        message: str,
        snapshot: Snapshot,
        *,
        gives_details: bool = False,
        reads_back: bool = False,
        language: str | None = None,
    ) -> Query:
        """The query of a customer's message in a session (its last ``knowledge.subject_turns`` turns,
        summary and current facts, and the conversation's language): what the turn passes to :meth:`consult`."""
        return Query.of(
            message,
            snapshot,
            turns=self.settings.subject_turns,
            gives_details=gives_details,
            reads_back=reads_back,
            language=language,
        )

    def consult(self, query: Query) -> Retrieval:
        """The fetch check for the query's message and, when it says so, the passages that answer it
        (best first, at most ``knowledge.k``, each with a cosine of at least ``knowledge.min_score``)."""
        return self._run(query, always=False)

    def search(self, query: Query | str) -> Retrieval:
        """The passages for a query (or a bare text) whatever the fetch check says, with its decision
        (``appliance knowledge search``, the benchmark)."""
        return self._run(Query(query) if isinstance(query, str) else query, always=True)

    def _thread(self, index: Index, query: Query, similarity: np.ndarray) -> Thread:
        """How far the message leans on the conversation, and what the conversation says: a message
        that matches the documents well on its own is read alone (the customer may change topic); one
        that names little ("yes", "what if I can't?") is read with the turns before it, and stays with
        the document the agent's last answer drew on."""
        lean = follows(float(similarity.max()) if len(similarity) else 0.0)
        said = query.answered or query.previous
        if lean <= 0 or not said:
            return Thread()
        context, last = self.encoder.embed([query.context(), said])
        return Thread.of(index, lean, np.asarray(context), np.asarray(last))

    def _run(self, query: Query, *, always: bool) -> Retrieval:
        cues = self.cues.in_language(query.language).settled(query.message)
        question = focus(query.message, cues)
        index = self.index()
        if not len(index):
            return Retrieval(question, decide(query.message, cues, Evidence(0.0, 0.0), 1.0))
        subjects = resolve(index.names, query.subject_texts())
        asked = unnamed(index.names, question, (s.doc for s in subjects))
        similarity, topics = index.similarity(self.encoder.embed([asked])[0])
        rows = [index.rows_of_doc[s.doc] for s in subjects if s.doc in index.rows_of_doc]
        evidence = Evidence.of(topics, np.concatenate(rows) if rows else None, similarity)
        decision: FetchDecision = decide(
            query.message,
            cues,
            evidence,
            self.settings.fetch_threshold,
            gives_details=query.gives_details,
            reads_back=query.reads_back,
            subject=tuple(s.doc for s in subjects),
        )
        if not (decision.fetch or always):
            return Retrieval(question, decision)
        lexical = dict(self.store.knowledge_search(match_expression(question, common=index.common), LEXICAL_LIMIT))
        thread = self._thread(index, query, similarity)  # only a question that fetches is read in context
        passages = rank(
            index, similarity, lexical, subjects, k=self.settings.k, min_score=self.settings.min_score, thread=thread
        )
        best = passages[0] if passages else None
        reply = reply_of(best, self.cues) if best is not None and index.opens_section(best.chunk_id) else None
        return Retrieval(question, decision, passages, reply)
