"""Taking documents in: read, chunk, embed, and store each one in place of its previous version.

Files are read and chunked first, then their chunks' vectors are computed in large batches (the
encoder is most of an ingest's time; a chunk whose text and topic are already stored keeps its
vectors, so an edited document re-embeds only what changed, and a text or topic that several chunks
share, "Is there WiFi?" in forty hotels, is embedded once), and only then is each document written,
in one transaction of its own. Each chunk gets two vectors, stored as one: its text's and its
topic's (:func:`~.chunk.topic`). A file that cannot be read is reported by name and changes nothing: its
previous version, if any, stays whole.

A sync of a folder adds its new files, replaces those whose sha256 changed, and removes the documents
it had given whose files are gone. Files and folders whose names start with a dot are left alone, and
so are files of kinds there is no reader for. A knowledge folder is often a shared drive that more
people can write to than the operator, so nothing in it but its regular files and folders is read: no
symbolic link is followed, whether it points out of the folder or inside it (a document is read from
its own file, once), and a link, a pipe or a device is reported as refused, with why.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from appliance.errors import DocumentError
from appliance.knowledge.chunk import CHUNKING, Chunk, chunks, topic
from appliance.knowledge.document import Parsed, Source, known, parse
from appliance.knowledge.index import TOPICS
from appliance.protocols import TokenCounter

UPLOAD = "upload:"  # the key prefix of documents uploaded through the API (they have no file)
BATCH_CHUNKS = 2048  # chunks embedded in one go (a group of documents)

Progress = Callable[[str], None]


class Embedder(Protocol):
    """What ingest and retrieval need from the encoder (recall's satisfies it)."""

    model_name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class KnowledgeStore(Protocol):
    """What the knowledge base needs from the store (``appliance.store.Store`` has these)."""

    def knowledge_generation(self) -> int: ...

    def knowledge_documents(self) -> list[dict[str, Any]]: ...

    def knowledge_document(self, key: str) -> dict[str, Any] | None: ...

    def replace_knowledge_document(self, document: dict[str, Any], chunks: Sequence[dict[str, Any]]) -> int: ...

    def remove_knowledge_documents(self, keys: Iterable[str]) -> int: ...

    def knowledge_chunks(self) -> Iterator[dict[str, Any]]: ...

    def knowledge_vectors(self, text_shas: Iterable[str], model: str) -> dict[str, bytes]: ...

    def knowledge_search(self, match: str, limit: int) -> list[tuple[int, float]]: ...


@dataclass(frozen=True)
class Item:
    """A document to take in: its key (absolute path, or ``upload:`` and its name), its name, the folder
    it is synced from, and its file (read when its turn comes) or its uploaded bytes."""

    key: str
    name: str
    folder: str = ""
    path: Path | None = None
    data: bytes | None = None

    def read(self, max_bytes: int) -> Source:
        if self.data is not None:
            return Source(self.name, self.data)
        assert self.path is not None
        if self.folder and not Path(os.path.realpath(self.path)).is_relative_to(self.folder):
            # a folder on the way was swapped for a link after the folder was listed
            raise DocumentError(f"{self.name}: refused: its path leads out of {self.folder}")
        return read_file(self.path, self.name, max_bytes)


@dataclass
class Report:
    """What an add or a sync did, by document name; ``failed`` holds each refused file's error."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "replaced": self.replaced,
            "removed": self.removed,
            "unchanged": len(self.unchanged),
            "failed": [{"document": name, "error": error} for name, error in self.failed],
            "chunks": self.chunks,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class Ingest:
    """Reads, chunks, embeds and stores documents; the knowledge base's writer."""

    store: KnowledgeStore
    encoder: Embedder
    counter: TokenCounter
    max_bytes: int
    chunk_tokens: int

    @property
    def model(self) -> str:
        """The name the vectors are stored under: the encoder's, and their layout."""
        return self.encoder.model_name + TOPICS

    @property
    def chunking(self) -> str:
        """How documents are cut (:data:`~.chunk.CHUNKING` and ``chunk_tokens``): stored with each, so a
        sync re-cuts an unchanged file when this changed."""
        return f"{CHUNKING}, {self.chunk_tokens} tokens"

    def take(self, items: Sequence[Item], report: Report, progress: Progress | None = None) -> None:
        """Store each item that changed, in groups of about ``BATCH_CHUNKS`` chunks (one embedding run each)."""
        group: list[tuple[Source, Item, Parsed, list[Chunk]]] = []
        size = 0
        for done, item in enumerate(items, start=1):
            try:
                source = item.read(self.max_bytes)
                stored = self.store.knowledge_document(item.key)
                if stored is not None and (stored["sha256"], stored["model"], stored["chunking"]) == (
                    source.sha256,
                    self.model,
                    self.chunking,
                ):
                    report.unchanged.append(item.name)
                    continue
                parsed = parse(source, self.max_bytes)
            except DocumentError as exc:
                report.failed.append((item.name, str(exc)))
                continue
            found = chunks(parsed, self.counter, self.chunk_tokens)
            group.append((source, item, parsed, found))
            size += len(found)
            if size >= BATCH_CHUNKS:
                self._write(group, report)
                group, size = [], 0
                if progress is not None:
                    progress(f"knowledge: {done} of {len(items)} documents read")
        self._write(group, report)

    def _write(self, group: list[tuple[Source, Item, Parsed, list[Chunk]]], report: Report) -> None:
        if not group:
            return
        model = self.model
        pieces = [[(topic(c.title, c.heading, c.text), c.text) for c in found] for _, _, _, found in group]
        shas = [[_sha(f"{head}\x00{text}") for head, text in doc] for doc in pieces]
        vectors = self.store.knowledge_vectors((s for doc in shas for s in doc), model)
        missing: dict[str, tuple[str, str]] = {}
        for doc_pieces, doc_shas in zip(pieces, shas):
            for piece, sha in zip(doc_pieces, doc_shas):
                if sha not in vectors:
                    missing.setdefault(sha, piece)
        if missing:
            texts = list(dict.fromkeys(t for piece in missing.values() for t in piece))
            row = {t: i for i, t in enumerate(texts)}
            embedded = np.asarray(self.encoder.embed(texts), dtype="<f4")
            for sha, (head, text) in missing.items():
                vectors[sha] = np.concatenate([embedded[row[text]], embedded[row[head]]]).tobytes()
        for (source, item, parsed, found), doc_shas in zip(group, shas):
            existed = self.store.knowledge_document(item.key) is not None
            self.store.replace_knowledge_document(
                {
                    "key": item.key,
                    "name": item.name,
                    "folder": item.folder,
                    "title": parsed.title,
                    "format": parsed.format,
                    "sha256": source.sha256,
                    "bytes": len(source.data),
                    "model": model,
                    "chunking": self.chunking,
                },
                [
                    {
                        "ord": c.ord,
                        "title": c.title,
                        "heading": c.heading,
                        "location": c.location,
                        "text": c.text,
                        "tokens": c.tokens,
                        "text_sha": sha,
                        "vector": vectors[sha],
                    }
                    for c, sha in zip(found, doc_shas)
                ],
            )
            (report.replaced if existed else report.added).append(item.name)
            report.chunks += len(found)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


LINK = "refused: a symbolic link (links are not followed)"
FOLDER_LINK = "refused: a symbolic link to a folder (links are not followed)"
SPECIAL = "refused: not a regular file"


def read_file(path: Path, name: str, max_bytes: int) -> Source:
    """A regular file's bytes under ``name``; :class:`DocumentError` naming it if it is too large,
    unreadable, or not a regular file (opened without following a link, so one put in its place after
    the folder was listed is refused too)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if path.is_symlink():
            raise DocumentError(f"{name}: {LINK}") from None
        raise DocumentError(f"{name}: cannot read {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as file:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise DocumentError(f"{name}: {SPECIAL}")
            data = file.read(max_bytes + 1)  # bounded: the file may grow after its size was read
        except OSError as exc:
            raise DocumentError(f"{name}: cannot read {path}: {exc.strerror or exc}") from None
    size = max(info.st_size, len(data))
    if size > max_bytes:
        raise DocumentError(
            f"{name}: {size / 1e6:.1f} MB is larger than knowledge.max_file_mb ({max_bytes / 1e6:g} MB)"
        )
    return Source(name, data)


def folder_files(folder: Path) -> tuple[list[tuple[Path, str]], list[tuple[str, str]]]:
    """The documents of a folder and its subfolders, with their names relative to it, in name order
    (hidden files and folders, and kinds without a reader, left out); and what was refused, with why:
    symbolic links (to files or folders, not followed) and what is not a regular file."""
    found: list[tuple[Path, str]] = []
    refused: list[tuple[str, str]] = []
    for root, dirs, files in os.walk(folder):  # os.walk does not descend into linked folders
        here = Path(root)
        shown_dirs = sorted(d for d in dirs if not d.startswith("."))
        links = {d for d in shown_dirs if (here / d).is_symlink()}
        dirs[:] = [d for d in shown_dirs if d not in links]
        for name in sorted(links):
            shown = (here / name).relative_to(folder).as_posix() + "/"
            refused.append((shown, f"{shown}: {FOLDER_LINK}"))
        for name in sorted(files):
            if name.startswith(".") or not known(name):
                continue
            path = here / name
            shown = path.relative_to(folder).as_posix()
            try:
                kind = os.lstat(path).st_mode
            except OSError:  # gone since the folder was listed
                continue
            if stat.S_ISLNK(kind):
                refused.append((shown, f"{shown}: {LINK}"))
            elif not stat.S_ISREG(kind):
                refused.append((shown, f"{shown}: {SPECIAL}"))
            else:
                found.append((path, shown))
    return found, refused


def timed(report: Report, started: float) -> Report:
    report.seconds = time.monotonic() - started
    return report
