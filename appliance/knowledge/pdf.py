"""PDF documents, read with pypdf (pure Python, no native code): the only importer. Each page's text
is split into paragraphs and kept with its page number, so a passage can be cited as "file (page)";
a short question on a line of its own is a heading (a FAQ's question), and a line that starts with a
bullet a list item.
An encrypted PDF is read only if it opens without a password; otherwise, and for a file pypdf cannot
read, a :class:`~appliance.errors.DocumentError` names it."""

from __future__ import annotations

import io
import re

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from appliance.errors import DocumentError
from appliance.knowledge.document import Block, Parsed, Source, is_question_line, tidy, title_of


def read(source: Source) -> Parsed:
    try:
        reader = PdfReader(io.BytesIO(source.data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError(f"{source.name}: the PDF is encrypted (save it without a password first)")
        blocks: list[Block] = []
        for number, page in enumerate(reader.pages, start=1):
            blocks.extend(_paragraphs(page.extract_text() or "", number))
        meta = reader.metadata
        named = str(meta.title).strip() if meta is not None and meta.title else ""
    except DocumentError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, NotImplementedError) as exc:
        # pypdf raises these (and the odd built-in error) for damaged or unusual files.
        raise DocumentError(f"{source.name}: not a readable PDF ({type(exc).__name__}: {exc})") from None
    except RecursionError:  # pypdf reads nested arrays and dictionaries by recursion
        raise DocumentError(f"{source.name}: not a readable PDF (its objects are nested too deep)") from None
    found = tuple(blocks)
    return Parsed(title=named or title_of(found, source.name), blocks=found, format="pdf")


_ITEM = re.compile(r"^\s*[-•·‣▪]\s+")
_SENTENCE_END = (".", "!", "?", ":", ";", "？", "。")


def _paragraphs(text: str, page: int) -> list[Block]:
    """A page's text as blocks: blank lines part paragraphs where the PDF has them; else lines are
    joined into paragraphs, with a question standing after a sentence's end as a heading and a
    bulleted line as an item."""
    text = text.replace("\r\n", "\n")
    parts = re.split(r"\n\s*\n", text) if re.search(r"\n\s*\n", text) else [text]
    out: list[Block] = []
    for part in parts:
        _part(part, page, out)
    return out


def _part(part: str, page: int, out: list[Block]) -> None:
    lines: list[str] = []
    ended = True  # whether the line before ended a sentence
    for line in part.split("\n"):
        if not line.strip():
            continue
        after_item = bool(out) and out[-1].kind == "item" and not lines
        if (ended or after_item) and is_question_line(line):
            _flush(lines, page, out)
            out.append(Block("heading", tidy(line), level=2, page=page))
        elif _ITEM.match(line):
            _flush(lines, page, out)
            out.append(Block("item", tidy(_ITEM.sub("", line)), page=page))
        elif after_item and not ended:
            out[-1] = Block("item", tidy(f"{out[-1].text} {line}"), page=page)  # an item's wrapped line
        else:
            lines.append(line)
        ended = line.rstrip().endswith(_SENTENCE_END)
    _flush(lines, page, out)


def _flush(lines: list[str], page: int, out: list[Block]) -> None:
    """The lines read so far as one paragraph (words hyphenated at a line's end joined)."""
    joined = tidy(re.sub(r"-\n(?=\w)", "", "\n".join(lines)).replace("\n", " "))
    if joined:
        out.append(Block("paragraph", joined, page=page))
    lines.clear()
