"""Chunks that follow a document's structure: one per section (a heading and what follows it, up to the
next heading), split at paragraphs and list items when a section is longer than ``chunk_tokens``.

Each chunk's text starts with its section's heading, so a FAQ question stays with its answer and a
split section's later chunks still say what they are about; each keeps the document's title, its
heading path and its location (the PDF page, or the heading), and its size in the responder's tokens
(the :class:`~appliance.protocols.TokenCounter` handed in). A pure function of the parsed document.

:func:`topic` is what a chunk's second vector is made of: its own heading without the document's
name ("Is there parking at the Grant Hotel?" → "Is there parking at the?"), so that questions
asked alike in many documents match each other whatever entity they name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from appliance.knowledge.document import Block, Parsed
from appliance.lexicon.text import SENTENCE_BREAK
from appliance.protocols import TokenCounter

HEADING_JOIN = " > "
_NAME_END = re.compile(r"\s+[-–—|:]\s+|\s*[(\[,]\s*")


@dataclass(frozen=True)
class Chunk:
    ord: int
    title: str
    heading: str  # the heading path below the title, HEADING_JOIN between levels
    location: str  # "page 3", or the heading (or the title, before any heading)
    text: str
    tokens: int


def chunks(parsed: Parsed, counter: TokenCounter, max_tokens: int) -> list[Chunk]:
    """The document's chunks in reading order."""
    out: list[Chunk] = []
    for path, body in _sections(parsed):
        heading = HEADING_JOIN.join(path)
        lead = path[-1] if path else ""
        for text in _pack(lead, body, counter, max_tokens):
            page = next((b.page for b in body if b.page), 0)
            location = f"page {page}" if page else (heading or parsed.title)
            out.append(Chunk(len(out), parsed.title, heading, location, text, counter.count_text(text)))
    return out


def _sections(parsed: Parsed) -> Iterator[tuple[tuple[str, ...], list[Block]]]:
    """(heading path, body blocks) of each section that has a body, a section cut where a PDF's page
    ends; the title's own heading is not part of the path (every chunk carries the title anyway)."""
    path: list[tuple[int, str]] = []
    body: list[Block] = []
    for block in parsed.blocks:
        if block.kind != "heading":
            if body and block.page != body[-1].page:  # a chunk stays on its page, to be cited by it
                yield _path(path, parsed.title), body
                body = []
            body.append(block)
            continue
        if body:
            yield _path(path, parsed.title), body
            body = []
        while path and path[-1][0] >= block.level:
            path.pop()
        path.append((block.level, block.text))
    if body:
        yield _path(path, parsed.title), body


def _path(path: Sequence[tuple[int, str]], title: str) -> tuple[str, ...]:
    names = [text for _, text in path]
    if names and names[0] == title:
        names = names[1:]
    return tuple(names)


def _pack(lead: str, body: Sequence[Block], counter: TokenCounter, max_tokens: int) -> Iterator[str]:
    """The section's text in pieces of at most ``max_tokens`` (as near as whole blocks allow), each
    starting with ``lead``: blocks kept whole where they fit, a longer one cut at sentences, then words."""
    head = [lead] if lead else []
    room = max(8, max_tokens - (counter.count_text(lead) if lead else 0))
    current: list[str] = []
    for piece in _pieces(body, counter, room):
        candidate = "\n".join([*head, *current, piece])
        if current and counter.count_text(candidate) > max_tokens:
            yield "\n".join([*head, *current])
            current = []
        current.append(piece)
    if current:
        yield "\n".join([*head, *current])


def _pieces(body: Sequence[Block], counter: TokenCounter, room: int) -> Iterator[str]:
    for block in body:
        text = f"- {block.text}" if block.kind == "item" else block.text
        if counter.count_text(text) <= room:
            yield text
            continue
        yield from _split(text, counter, room)


def _split(text: str, counter: TokenCounter, room: int) -> Iterator[str]:
    """A block too long for one chunk: whole sentences together while they fit, and a sentence longer
    than that by words."""
    current: list[str] = []
    for sentence in SENTENCE_BREAK.split(text):
        words = [sentence] if counter.count_text(sentence) <= room else sentence.split()
        for word in words:
            if current and counter.count_text(" ".join([*current, word])) > room:
                yield " ".join(current)
                current = []
            current.append(word)
    if current:
        yield " ".join(current)


def title_names(title: str) -> tuple[str, ...]:
    """The names a document goes by, longest first: its title and the title's first part, the name
    before a " - ", "(" or "," ("Rooster & Rice - Castro" is "Rooster & Rice" too)."""
    names = {title.strip(), _NAME_END.split(title.strip(), maxsplit=1)[0].strip()}
    return tuple(sorted((n for n in names if n), key=len, reverse=True))


def topic(title: str, heading: str, text: str) -> str:
    """A chunk's own heading (the last of its path) without the document's title or the title's first
    part, the name before a " - ", "(" or ","; a chunk without a heading is its own topic (a
    document's opening lines say nothing of what they answer in their first line)."""
    if not heading:
        return text
    own = heading.split(HEADING_JOIN)[-1]
    for name in title_names(title):
        own = re.sub(rf"(?<!\w){re.escape(name)}(?:'s|’s)?(?!\w)", " ", own, flags=re.IGNORECASE)
    return " ".join(own.split()) or heading
