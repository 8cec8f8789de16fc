"""HTML documents, read with selectolax (the lexbor engine: an HTML5 parser, so broken markup reads as
a browser would read it): the only importer. Scripts, styles and navigation are left out; headings,
paragraphs, list items, preformatted text and table rows become blocks, and loose text in other
elements a paragraph."""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

from appliance.errors import DocumentError
from appliance.knowledge.document import Block, Parsed, Source, decode, named_row, tidy, title_of

SKIP = {"script", "style", "noscript", "template", "nav", "head", "svg", "iframe", "object", "button", "form"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
LEAVES = {"p": "paragraph", "li": "item", "dt": "item", "dd": "paragraph", "pre": "code", "blockquote": "paragraph"}
LEAVES |= {"caption": "paragraph", "figcaption": "paragraph", "address": "paragraph", "summary": "paragraph"}
NESTED = "table, ul, ol, dl, div, p, pre, blockquote, section, h1, h2, h3, h4, h5, h6"
INLINE = {"a", "b", "i", "em", "strong", "span", "code", "small", "sup", "sub", "abbr", "mark", "u", "s", "q", "time"}
INLINE |= {"cite", "kbd", "var", "label", "font", "big", "wbr", "img", "data"}


# lexbor builds a deep tree in time that grows with the square of its depth (100,000 nested divs: 100 s)
# and the walk below recurses, so a page nested deeper than real pages are is refused before it is
# parsed. The depth is counted over the elements that need their end tag (a paragraph, list item or
# table cell ends itself), an upper bound of what the parser would build from them.
MAX_DEPTH = 256
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(/?)>")
_ENDS_ITSELF = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source"}
_ENDS_ITSELF |= {"track", "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option"}
_ENDS_ITSELF |= {"optgroup", "rb", "rt", "rtc", "rp", "colgroup", "caption", "head", "body", "html"}


def read(source: Source) -> Parsed:
    text = decode(source)
    if _depth(text) > MAX_DEPTH:
        raise DocumentError(f"{source.name}: HTML nested more than {MAX_DEPTH} elements deep (no real page is)")
    tree = LexborHTMLParser(text)
    root = tree.body or tree.root
    blocks: list[Block] = []
    if root is not None:
        try:
            _walk(root, blocks)
        except RecursionError:  # nested within the bound, but through elements that end themselves
            raise DocumentError(f"{source.name}: HTML nested too deep to read") from None
    head = tree.css_first("title")
    found = tuple(blocks)
    named = tidy(head.text()) if head is not None else ""
    title = named if named and not any(b.kind == "heading" and b.level == 1 for b in found) else ""
    return Parsed(title=title or title_of(found, source.name), blocks=found, format="html")


def _depth(text: str) -> int:
    """The deepest nesting of elements that need their end tag (stopping once past ``MAX_DEPTH``)."""
    depth = deepest = 0
    for match in _TAG.finditer(text):
        closing, tag, empty = match.groups()
        if empty or tag.lower() in _ENDS_ITSELF:
            continue
        depth = max(0, depth - 1) if closing else depth + 1
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
    return deepest


def _walk(node: LexborNode, out: list[Block], names: list[str] | None = None) -> None:
    """``names``: the column names of the table being read (its heading row's cells)."""
    loose: list[str] = []
    names = [] if names is None or node.tag == "table" else names

    def flush() -> None:
        text = tidy(" ".join(loose))
        if text:
            out.append(Block("paragraph", text))
        loose.clear()

    for child in node.iter(include_text=True):
        tag = child.tag or ""
        if tag == "-text":
            loose.append(child.text(deep=False) or "")
        elif tag in SKIP or tag.startswith("-"):
            continue
        elif tag in INLINE:
            loose.append(child.text(separator=" ") or "")
        elif tag == "br":
            loose.append("\n")
        elif tag in LEAVES and child.css_first(NESTED) is not None:
            flush()
            _walk(child, out, names)  # a paragraph or item holding blocks (a table in an unclosed <p>, a sub-list)
        elif tag in HEADINGS or tag in LEAVES or tag == "tr":
            flush()
            if tag == "tr":
                cells = child.css("td, th")
                texts = [tidy(c.text(separator=" ")) for c in cells]
                if cells and all(c.tag == "th" for c in cells):  # a heading row: the next rows' column names
                    names[:] = texts
                    continue
                text = named_row(names, texts)
                kind = "row"
            else:
                separator = "\n" if tag == "pre" else " "
                text = tidy(child.text(separator=separator))
                kind = "heading" if tag in HEADINGS else LEAVES[tag]
            if text:
                out.append(Block(kind, text, level=HEADINGS.get(tag, 0)))  # type: ignore[arg-type]
        else:
            flush()
            _walk(child, out, names)
    flush()
