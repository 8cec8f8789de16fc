"""The words of each language the appliance understands: one module per language, a leaf.

Request cues, read-back topics and phrases, the stage's cues, recall's cues, the cues of secrets,
names and labelled codes, months and weekdays: everything a part matches in a language lives in
that language's module as one :class:`~appliance.lexicon.schema.Lexicon` value (``LEXICONS``), and
the parts read every registered language at once (a customer may switch), except the knowledge
base's fetch check, which reads a message with one language's words (short words differ in meaning
between languages). The forms text is compared in, and its sentences, are in :mod:`appliance.lexicon.text`.

A new language is one new file here, ``<code>.py`` with its ``LEXICON``, and its code added to
:data:`CODES`. A language whose file grows long keeps one group of fields in a file of its own beside
it, named for the language and the group (``en_names.py``), which only its module imports. Its fields all default to empty: a language may start with a few (recall's cues,
say) and grow. The settings add to or replace some of these lists without code (``facts.request_cues``,
``facts.readback_cues``, ``stage.late_cues``, ``stage.open_cues``, ``recall.cues``).

A leaf: it imports nothing of the appliance, so that config, facts, stage, recall and the
summarizer can all read it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from appliance.lexicon.schema import (
    MASK_KINDS,
    NATIONAL_ID_KINDS,
    SECRET_KINDS,
    Entities,
    KnowledgeCues,
    Ledger,
    Lexicon,
    Names,
    Numbers,
    ReadBack,
    Replies,
    Requests,
    Secrets,
    StageCues,
    Times,
)

__all__ = [
    "CODES",
    "LEXICONS",
    "MASK_KINDS",
    "NATIONAL_ID_KINDS",
    "SECRET_KINDS",
    "Entities",
    "Ledger",
    "KnowledgeCues",
    "Lexicon",
    "Names",
    "Numbers",
    "ReadBack",
    "Replies",
    "Requests",
    "Secrets",
    "StageCues",
    "Times",
    "each",
    "either",
]

# The registered languages. Their order is the order in which patterns are tried and cue lists are
# shown; where one language's cue starts another's ("es" and "es ist"), the longer one's language
# comes first.
CODES = ("en", "de", "fr", "es", "nl", "it", "pt", "ga", "pl", "tr", "ru", "el", "ar", "hi", "zh", "ja")

H = TypeVar("H", bound=Hashable)


def _load(code: str) -> Lexicon:
    lexicon = getattr(importlib.import_module(f"{__name__}.{code}"), "LEXICON", None)
    if not isinstance(lexicon, Lexicon) or lexicon.code != code:
        raise TypeError(f"appliance/lexicon/{code}.py must define LEXICON = Lexicon(code={code!r}, ...)")
    return lexicon


LEXICONS: dict[str, Lexicon] = {code: _load(code) for code in CODES}


def each(pick: Callable[[Lexicon], Iterable[H]]) -> tuple[H, ...]:
    """What ``pick`` takes from every lexicon, in the order of :data:`CODES`, each once."""
    return tuple(dict.fromkeys(item for lexicon in LEXICONS.values() for item in pick(lexicon)))


def either(pick: Callable[[Lexicon], Iterable[str]]) -> str:
    """The patterns ``pick`` takes from every lexicon, as the body of one alternation ("a|b|c")."""
    return "|".join(each(pick))


def either_joined(pick: Callable[[Lexicon], Iterable[str]]) -> str:
    """:func:`either` over the languages that join nouns into one word (``compounding``), where a
    label may close a longer word ("Abrechnungsticket"); a pattern that matches nothing if none do."""
    return either(lambda lex: pick(lex) if lex.compounding else ()) or "(?!)"
