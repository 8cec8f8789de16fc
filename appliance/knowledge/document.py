"""A document as the readers give it: a title and its blocks (headings, paragraphs, list items), and
the checks every file passes before a reader sees it.

One reader per format, each the only importer of its library: :mod:`.markdown` (markdown-it-py),
:mod:`.html` (selectolax), :mod:`.pdf` (pypdf), :mod:`.text` (plain text, no library). Bad input is a
:class:`~appliance.errors.DocumentError` that names the file: an unknown extension, a file over
``knowledge.max_file_mb``, an empty or binary file, an unreadable or encrypted PDF.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from appliance.errors import DocumentError

BlockKind = Literal["heading", "paragraph", "item", "code", "row"]


@dataclass(frozen=True)
class Block:
    """One piece of a document's structure, in reading order. ``level``: a heading's (1-6); ``page``:
    the PDF page it is on (from 1), 0 in other formats."""

    kind: BlockKind
    text: str
    level: int = 0
    page: int = 0


@dataclass(frozen=True)
class Parsed:
    """What a reader made of a file: its title (the first top heading, or the file's name) and blocks."""

    title: str
    blocks: tuple[Block, ...]
    format: str


@dataclass(frozen=True)
class Source:
    """A file's bytes as it arrives (from a folder, or uploaded), under the name it is known by."""

    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def suffix(self) -> str:
        return PurePath(self.name).suffix.lower()


Reader = Callable[[Source], Parsed]


def _markdown(source: Source) -> Parsed:
    from appliance.knowledge.markdown import read

    return read(source)


def _html(source: Source) -> Parsed:
    from appliance.knowledge.html import read

    return read(source)


def _pdf(source: Source) -> Parsed:
    from appliance.knowledge.pdf import read

    return read(source)


def _text(source: Source) -> Parsed:
    from appliance.knowledge.text import read

    return read(source)


# Each extension and its reader (imported when first needed).
READERS: dict[str, Reader] = {
    ".md": _markdown,
    ".markdown": _markdown,
    ".txt": _text,
    ".text": _text,
    ".html": _html,
    ".htm": _html,
    ".pdf": _pdf,
}
TEXT_FORMATS = {".md", ".markdown", ".txt", ".text", ".html", ".htm"}


def known(name: str) -> bool:
    """Whether a file of this name has a reader (a folder's other files are left alone by a sync)."""
    return PurePath(name).suffix.lower() in READERS


def parse(source: Source, max_bytes: int) -> Parsed:
    """The file's title and blocks, or :class:`DocumentError` naming it and what is wrong."""
    if source.suffix not in READERS:
        kinds = ", ".join(sorted(READERS))
        raise DocumentError(
            f"{source.name}: unknown kind of document {source.suffix or '(no extension)'!r} (known: {kinds})"
        )
    if len(source.data) > max_bytes:
        raise DocumentError(
            f"{source.name}: {len(source.data) / 1e6:.1f} MB is larger than knowledge.max_file_mb ({max_bytes / 1e6:g} MB)"
        )
    if not source.data.strip():
        raise DocumentError(f"{source.name}: the file is empty")
    if source.suffix in TEXT_FORMATS and b"\x00" in source.data[:65536]:
        raise DocumentError(f"{source.name}: a binary file, not {source.suffix} text")
    parsed = READERS[source.suffix](source)
    if not any(block.text.strip() for block in parsed.blocks):
        raise DocumentError(f"{source.name}: no text found in it")
    return parsed


def decode(source: Source) -> str:
    """A text file's characters: UTF-8 (a byte-order mark allowed), else Windows-1252; control
    characters other than white space make it binary."""
    try:
        text = source.data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = source.data.decode("cp1252", errors="replace")
    controls = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\t\n\r\f")
    if controls > max(8, len(text[:65536]) // 100):
        raise DocumentError(f"{source.name}: a binary file, not {source.suffix} text")
    return text.replace("\r\n", "\n").replace("\r", "\n")


_SPACE = re.compile(r"[ \t\f\v\u00a0]+")


def named_row(names: list[str], cells: list[str]) -> str:
    """A table's row as one block: each cell after its column's name ("Service: Card replacement | Fee:
    £5") when the table names its columns, else the cells alone."""
    if len(names) == len(cells) and any(names):
        return " | ".join(f"{name}: {cell}" if name else cell for name, cell in zip(names, cells) if cell)
    return " | ".join(c for c in cells if c)


def tidy(text: str) -> str:
    """Runs of spaces made one, each line stripped, empty lines at the ends dropped."""
    lines = [_SPACE.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(lines).strip()


_QUESTION_ENDS = ("?", "？", "؟")
QUESTION_WORDS = 16  # the most words of a question that stands as a heading


def is_question_line(line: str) -> bool:
    """Whether a line of plain text or PDF is a FAQ question standing as a heading: short, ending in a
    question mark and not starting in lower case (a wrapped sentence's last line does)."""
    text = line.strip()
    return (
        text.endswith(_QUESTION_ENDS)
        and len(text.split()) <= QUESTION_WORDS
        and len(text) <= 160
        and not text[:1].islower()
    )


def title_of(blocks: tuple[Block, ...], name: str) -> str:
    """The first top-level heading (the highest level that occurs, if it comes first), else the
    file's name without its extension, its dashes and underscores as spaces."""
    headings = [b for b in blocks if b.kind == "heading"]
    if headings:
        top = min(b.level for b in headings)
        if headings[0].level == top and sum(b.level == top for b in headings) == 1:
            return headings[0].text
    stem = PurePath(name).stem
    return re.sub(r"[-_]+", " ", stem).strip() or name
