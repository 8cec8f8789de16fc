"""Answers that ask the customer for a secret: a bank's agent never does.

A PIN, a password, a card security code or a one-time code is never asked for in a chat: a customer
used to being asked is one phishing message away from a loss. The standing directive says so
(:mod:`appliance.stage`), and the check finds the answers that ask anyway ("Ich benötige noch Ihre
PIN zum Zugriff auf Ihr Konto.", "Could you give me the code we sent you?"), which the guard then
repairs like an unsupported fact.

A sentence asks for a secret when it names one (the cues of :mod:`appliance.facts.secrets`) a few
words from a way of asking (each lexicon's ``secrets.asks``: "could you give me", "wie lautet",
"j'ai besoin de", "¿cuál es su", "kunt u"), and holds no warning ("never share your PIN with
anyone", "we will never ask for your password", "Sie erhalten Ihre PIN per Post", "enter it at the
terminal": ``secrets.warnings``). Answers that only mention a secret stay untouched.

The check runs on every answer: a cheap substring test of the secrets' cues comes first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from appliance.facts import secrets
from appliance.lexicon import LEXICONS, either
from appliance.lexicon.text import straight

_HINT = re.compile(either(lambda lex: lex.secrets.hints))
_ASKS = tuple(
    (code, re.compile("|".join(lex.secrets.asks), re.IGNORECASE)) for code, lex in LEXICONS.items() if lex.secrets.asks
)
_WARNING = re.compile(either(lambda lex: lex.secrets.warnings) or "(?!)", re.IGNORECASE)
_POINTER = re.compile(r"(?<!\w)(?:" + (either(lambda lex: lex.secrets.pointers) or "(?!)") + r")(?!\w)", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
_WORD = re.compile(r"\w+")
_CLAUSES = {code: frozenset(lex.secrets.clauses) for code, lex in LEXICONS.items()}
# At most this many words between the way of asking and the secret it names ("could you please give
# me your new four-digit PIN": "me your new four digit"; "could you confirm your phone number so we
# can send you a one-time code" asks for the phone number), none of them opening another question
# in the language it asks in ("could you tell me if your PIN was blocked"; Dutch "wie" is German "wie").
NEAR = 5


@dataclass(frozen=True)
class Asked:
    """A sentence of an answer that asks for a secret: the kind, the language it asks in, its span."""

    kind: str
    language: str
    start: int
    end: int


def find(text: str) -> tuple[Asked, ...]:
    """The sentences of ``text`` that ask the customer for a secret, in order."""
    if not _HINT.search(text.casefold()):
        return ()
    found = []
    before: tuple[tuple[str, int, int], ...] = ()
    for m in _SENTENCE.finditer(text):
        sentence = straight(m.group())
        named = secrets.cues(sentence)
        if not named and before:  # "... a one-time code. Can you tell me the code?"
            kind = before[0][0]
            named = tuple((kind, p.start(), p.end()) for p in _POINTER.finditer(sentence))
        before = secrets.cues(sentence)
        asked = _asks(sentence, named)
        if asked is not None:
            kind, language = asked
            start = m.start() + len(m.group()) - len(m.group().lstrip())
            found.append(Asked(kind, language, start, m.start() + len(m.group().rstrip())))
    return tuple(found)


def _asks(sentence: str, named: Sequence[tuple[str, int, int]]) -> tuple[str, str] | None:
    """The kind a sentence that names the secrets ``named`` asks for, and the language it asks in."""
    if not named or _WARNING.search(sentence):
        return None
    for language, pattern in _ASKS:
        for m in pattern.finditer(sentence):
            for kind, start, end in named:
                gap = sentence[m.end() : start] if m.end() <= start else sentence[end : m.start()]
                words = _WORD.findall(gap.lower())
                if len(words) <= NEAR and not _CLAUSES[language].intersection(words):
                    return kind, language
    return None
