"""Markdown documents, read with markdown-it-py (CommonMark; already required by the TUI's rich): the
only importer. Headings, paragraphs, list items, code blocks and table rows become blocks; a table's
body row carries its column names (:func:`~.document.named_row`), so a fee schedule's row read alone
still says which figure is which."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from appliance.knowledge.document import Block, Parsed, Source, decode, named_row, tidy, title_of

_PARSER = MarkdownIt("commonmark").enable("table")


def read(source: Source) -> Parsed:
    blocks = tuple(_blocks(_PARSER.parse(decode(source))))
    return Parsed(title=title_of(blocks, source.name), blocks=blocks, format="markdown")


def _blocks(tokens: list[Token]) -> list[Block]:
    out: list[Block] = []
    heading = 0  # level of the heading being read
    items = 0  # depth of list items
    row: list[str] | None = None
    names: list[str] = []  # the column names of the table being read
    head = False  # in its head row
    for token in tokens:
        kind = token.type
        if kind == "heading_open":
            heading = int(token.tag[1:])
        elif kind == "heading_close":
            heading = 0
        elif kind == "list_item_open":
            items += 1
        elif kind == "list_item_close":
            items -= 1
        elif kind == "tr_open":
            row = []
        elif kind in ("thead_open", "thead_close"):
            head = kind == "thead_open"
        elif kind == "tr_close" and row is not None:
            if head:
                names = row
            elif any(row):
                out.append(Block("row", named_row(names, row)))
            row = None
        elif kind == "table_close":
            names = []
        elif kind in ("fence", "code_block"):
            if token.content.strip():
                out.append(Block("code", token.content.rstrip()))
        elif kind == "inline":
            text = tidy(_inline_text(token))
            if row is not None:
                row.append(text)
            elif not text:
                continue
            elif heading:
                out.append(Block("heading", text, level=heading))
            else:
                out.append(Block("item" if items else "paragraph", text))
    return out


def _inline_text(token: Token) -> str:
    """An inline token's text without its markup (a line break kept as one)."""
    parts: list[str] = []
    for child in token.children or ():
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts)
