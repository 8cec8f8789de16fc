"""Passages that follow a document's structure and fit the prompt's budget.

A section (a heading and what follows it, up to the next heading) that fits ``chunk_tokens`` is one
passage: a FAQ question stays with its answer, a short list or table stays whole. A longer section
(the usual form of terms and conditions, product pages and letters, where an answer is one sentence
of a long section under a heading that does not ask the question) is split into passages of whole
sentences, list items and table rows, of even size, each overlapping the one before by its last
sentence, so that a sentence that leans on the one before it is read with it. A list cut in two
keeps its lead-in ("You may qualify if:") at the head of each part, and a table row keeps its column
names (the readers write them into the row).

Each passage's text starts with its section's heading, so a split section's later passages still say
what they are about; each keeps the document's title, its heading path and its location (the PDF
page, or the heading), and its size in the responder's tokens (the
:class:`~appliance.protocols.TokenCounter` handed in). A pure function of the parsed document.

:func:`topic` is what a passage's second vector is made of: its own heading without the document's
name ("Is there parking at the Grant Hotel?" → "Is there parking at the?"), so that questions asked
alike in many documents match each other whatever entity they name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from appliance.knowledge.document import Block, Parsed
from appliance.lexicon.text import SENTENCE_BREAK
from appliance.protocols import TokenCounter

HEADING_JOIN = " > "
# The chunker's version, stored with each document: a new one re-cuts every document at the next sync.
CHUNKING = "passages 2"
_NAME_END = re.compile(r"\s+[-–—|:]\s+|\s*[(\[,]\s*")
# A sentence carried into the next passage as its overlap costs at most this share of a passage.
OVERLAP_SHARE = 0.34


@dataclass(frozen=True)
class Chunk:
    ord: int
    title: str
    heading: str  # the heading path below the title, HEADING_JOIN between levels
    location: str  # "page 3", or the heading (or the title, before any heading)
    text: str
    tokens: int


@dataclass(frozen=True)
class _Unit:
    """The smallest piece a passage is made of: a sentence, a list item, a table row or a code block.
    ``lead``: for a list item or a row, the sentence that introduces its list or table, carried to the
    head of a passage that starts inside it; ``joins``: it continues the previous unit's paragraph."""

    text: str
    tokens: int
    lead: str = ""
    lead_tokens: int = 0
    joins: bool = False
    overlaps: bool = True  # may start the next passage again (a sentence of prose)


def chunks(parsed: Parsed, counter: TokenCounter, max_tokens: int) -> list[Chunk]:
    """The document's passages in reading order."""
    out: list[Chunk] = []
    for path, body in _sections(parsed):
        heading = HEADING_JOIN.join(path)
        lead = path[-1] if path else ""
        page = next((b.page for b in body if b.page), 0)
        location = f"page {page}" if page else (heading or parsed.title)
        for text in _passages(lead, body, counter, max_tokens):
            out.append(Chunk(len(out), parsed.title, heading, location, text, counter.count_text(text)))
    return out


def _sections(parsed: Parsed) -> Iterator[tuple[tuple[str, ...], list[Block]]]:
    """(heading path, body blocks) of each section that has a body, a section cut where a PDF's page
    ends; the title's own heading is not part of the path (every passage carries the title anyway)."""
    path: list[tuple[int, str]] = []
    body: list[Block] = []
    for block in parsed.blocks:
        if block.kind != "heading":
            if body and block.page != body[-1].page:  # a passage stays on its page, to be cited by it
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


def _passages(lead: str, body: Sequence[Block], counter: TokenCounter, max_tokens: int) -> list[str]:
    """The section's text in passages of at most ``max_tokens`` (as near as whole units allow), each
    starting with ``lead`` (its heading): the whole section when it fits, else passages of even size."""
    head = [lead] if lead else []
    whole = "\n".join([*head, *(_shown(b) for b in body)])
    if counter.count_text(whole) <= max_tokens:
        return [whole]
    room = max(8, max_tokens - (counter.count_text(lead) + 1 if lead else 0))
    units = list(_units(body, counter, room))
    total = sum(u.tokens for u in units)
    # Even sizes: as many passages as the section needs, each about the same share of it, so no
    # passage is a stray last sentence.
    target = min(room, math.ceil(total / max(1, math.ceil(total / room))))
    out: list[list[str]] = []
    current: list[_Unit] = []
    used = 0

    def text_of(group: Sequence[_Unit]) -> list[str]:
        lines: list[str] = []
        for u in group:
            if u.joins and lines:
                lines[-1] += " " + u.text
            else:
                lines.append(u.text)
        return lines

    for unit in units:
        # Cut before a unit that passes the target once the passage is well along, and before one that
        # would not fit (counted whole near the limit: joined sentences tokenize a little differently).
        near = used + unit.tokens > 0.8 * room
        full = near and counter.count_text("\n".join([*head, *text_of([*current, unit])])) > max_tokens
        if current and (full or (used + unit.tokens > target and used >= 0.6 * target)):
            out.append(text_of(current))
            carried = _carried(current, unit, room)
            current, used = carried, sum(u.tokens for u in carried)
        current.append(unit)
        used += unit.tokens
    if current:
        out.append(text_of(current))
    return ["\n".join([*head, *lines]) for lines in out]


def _carried(done: Sequence[_Unit], following: _Unit, room: int) -> list[_Unit]:
    """What the next passage starts with besides ``following``: the list's or table's lead-in when it
    is cut inside one, else the last sentence of the passage before (an overlap), when small enough."""
    if following.lead:
        fits = following.lead_tokens + following.tokens <= room
        return [_Unit(following.lead, following.lead_tokens, overlaps=False)] if fits else []
    last = done[-1]
    if last.overlaps and last.tokens <= OVERLAP_SHARE * room and last.tokens + following.tokens <= room:
        return [_Unit(last.text, last.tokens, overlaps=False)]
    return []


def _shown(block: Block) -> str:
    return f"- {block.text}" if block.kind == "item" else block.text


def _units(body: Sequence[Block], counter: TokenCounter, room: int) -> Iterator[_Unit]:
    """The body's sentences, items, rows and code blocks, each at most ``room`` tokens (a longer one cut
    at words), with a list's or table's lead-in sentence kept beside its items."""
    lead, lead_tokens = "", 0
    for i, block in enumerate(body):
        if block.kind in ("item", "row"):
            before = body[i - 1] if i else None
            if before is not None and before.kind == "paragraph":
                lead = SENTENCE_BREAK.split(before.text)[-1]
                lead_tokens = counter.count_text(lead)
            elif before is None or before.kind not in ("item", "row"):
                lead, lead_tokens = "", 0
            for piece in _fit(_shown(block), counter, room):
                yield _Unit(piece, counter.count_text(piece), lead=lead, lead_tokens=lead_tokens, overlaps=False)
            continue
        lead, lead_tokens = "", 0
        if block.kind == "code":
            for piece in _fit(block.text, counter, room):
                yield _Unit(piece, counter.count_text(piece), overlaps=False)
            continue
        for n, sentence in enumerate(s for s in SENTENCE_BREAK.split(block.text) if s.strip()):
            for m, piece in enumerate(_fit(sentence, counter, room)):
                yield _Unit(piece, counter.count_text(piece), joins=bool(n or m))


def _fit(text: str, counter: TokenCounter, room: int) -> Iterator[str]:
    """``text`` whole if it fits ``room`` tokens, else cut at words into pieces that do."""
    if counter.count_text(text) <= room:
        yield text
        return
    current: list[str] = []
    for word in text.split():
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
    """A passage's own heading (the last of its path) without the document's title or the title's first
    part, the name before a " - ", "(" or ","; a passage without a heading is its own topic (a
    document's opening lines say nothing of what they answer in their first line)."""
    if not heading:
        return text
    own = heading.split(HEADING_JOIN)[-1]
    for name in title_names(title):
        own = re.sub(rf"(?<!\w){re.escape(name)}(?:'s|’s)?(?!\w)", " ", own, flags=re.IGNORECASE)
    return " ".join(own.split()) or heading
