"""Plain-text documents: paragraphs between blank lines, lines that start with a bullet or a number
as list items, and as headings a line underlined with ``===`` or ``---``, or a short question on a
line of its own (a FAQ's question, one level below the underlined heading above it). The only reader
without a library."""

from __future__ import annotations

import re

from appliance.knowledge.document import Block, Parsed, Source, decode, is_question_line, tidy, title_of

_ITEM = re.compile(r"^\s*(?:[-*•·‣]|\d{1,3}[.)])\s+")
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")


def read(source: Source) -> Parsed:
    blocks = tuple(_blocks(decode(source)))
    return Parsed(title=title_of(blocks, source.name), blocks=blocks, format="text")


def _blocks(text: str) -> list[Block]:
    out: list[Block] = []
    underlined = 1  # the level of the last underlined heading
    for part in re.split(r"\n\s*\n", text):
        lines = [line for line in part.split("\n") if line.strip()]
        if len(lines) >= 2 and _UNDERLINE.match(lines[1]) and len(lines[0].strip()) >= len(lines[1].strip()) // 2:
            underlined = 1 if lines[1].strip().startswith("=") else 2
            out.append(Block("heading", tidy(lines[0]), level=underlined))
            lines = lines[2:]
        elif len(lines) == 1 and is_question_line(lines[0]) and not _ITEM.match(lines[0]):
            out.append(Block("heading", tidy(lines[0]), level=underlined + 1))
            continue
        paragraph: list[str] = []
        for line in lines:
            if _ITEM.match(line):
                if paragraph:
                    out.append(Block("paragraph", tidy(" ".join(paragraph))))
                    paragraph = []
                out.append(Block("item", tidy(_ITEM.sub("", line))))
            elif out and out[-1].kind == "item" and not paragraph and line[:1].isspace():
                out[-1] = Block("item", tidy(out[-1].text + " " + line))  # an item's continued line
            else:
                paragraph.append(line)
        if paragraph:
            out.append(Block("paragraph", tidy(" ".join(paragraph))))
    return [b for b in out if b.text]
