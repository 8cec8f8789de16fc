"""The forms text is compared in, and its sentences: one implementation each, for every part.

Cue lists are written in these forms, so a cue and the text it is looked for in must be made the
same way; two forms made differently would never meet.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Apostrophes as a pattern: typed text has both kinds ("I'm", "I’m").
APOSTROPHE = "['’]"


def fold(text: str) -> str:
    """Lower case without accents ("Siobhán" → "siobhan"), for comparing words."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def straight(text: str) -> str:
    """``text`` with one kind of apostrophe, the straight one ("I’m" → "I'm")."""
    return text.replace("’", "'")


def phrase_form(text: str, keep: str = "'") -> str:
    """Lower case, one kind of apostrophe, other punctuation than ``keep`` as spaces, one space
    between words: the form phrase cues are matched in ("e-mail" → "e mail", "D.O.B." → "d o b").
    Accents stay: the cue lists are written with them."""
    text = re.sub(rf"[^\w\s{re.escape(keep)}]", " ", straight(text.casefold()))
    return re.sub(r"\s+", " ", text).strip()


# Where written text breaks into sentences: the space after an end mark, so "3.50 EUR" stays whole.
SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？])\s+")


@lru_cache(maxsize=8)
def _sentence(ends: str) -> re.Pattern[str]:
    marks = re.escape(ends)
    return re.compile(rf"[^{marks}\n]*[{marks}]*")


def sentences(text: str, ends: str = ".!?") -> list[str]:
    """The sentences of ``text``, each with its end marks: split after a run of ``ends`` and at line
    breaks, blank pieces left out. Cues that must stand in one sentence are looked for in
    these (a request and its topic, a question and what it asks for)."""
    return [s for s in _sentence(ends).findall(text) if s.strip()]
