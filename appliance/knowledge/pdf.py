"""PDF documents, read with pypdf (pure Python, no native code): the only importer. Each page's text
is split into paragraphs and kept with its page number, so a passage can be cited as "file (page)".
An encrypted PDF is read only if it opens without a password; otherwise, and for a file pypdf cannot
read, a :class:`~appliance.errors.DocumentError` names it."""

from __future__ import annotations

import io
import re

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from appliance.errors import DocumentError
from appliance.knowledge.document import Block, Parsed, Source, tidy, title_of


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
    found = tuple(blocks)
    return Parsed(title=named or title_of(found, source.name), blocks=found, format="pdf")


def _paragraphs(text: str, page: int) -> list[Block]:
    """A page's text as paragraphs: blank lines part them where the PDF has them, else each line is one."""
    text = text.replace("\r\n", "\n")
    parts = re.split(r"\n\s*\n", text) if re.search(r"\n\s*\n", text) else text.split("\n")
    out = []
    for part in parts:
        joined = tidy(re.sub(r"-\n(?=\w)", "", part).replace("\n", " "))  # words hyphenated at a line end
        if joined:
            out.append(Block("paragraph", joined, page=page))
    return out
