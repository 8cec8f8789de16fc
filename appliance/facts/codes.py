"""Identifiers by their label and by their shape: "order number 48213377", "Kundennummer K-558812",
"la cuenta de la luz es 500112233", "account ending 4821", "ORD-2024-0017", a run of five digits or more.

Read by :func:`appliance.facts.entities.extract` in the order it gives them room: labelled codes
(:func:`labelled`) before phones and postcodes, codes and long numbers by shape (:func:`shaped`) after
them, and codes of letters only after a label (:func:`letter_codes`) last. The label words of every
kind are each lexicon's (``entities.labels``), with the compounds of the languages that join nouns
("Kunden" + "nummer") and what a label is of between it and its code (``entities.qualifiers``); a
label also names a code a few words after it ("a ticket for you, the number is REM-30417") and one
before it ("K-558812 ist meine Kundennummer"; ``entities.value_first``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from appliance.facts.text import compact, digits, phrases
from appliance.lexicon import Entities, Lexicon, each, either, either_joined

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm


def _either(pick: Callable[[Entities], tuple[str, ...]]) -> str:
    return either(lambda lexicon: pick(lexicon.entities))


_CODE_VALUE = r"(?P<value>[A-Za-z0-9](?:[A-Za-z0-9/-]*[A-Za-z0-9])?)"
_ID_VALUE = r"#?\s?" + _CODE_VALUE


def _labels(kind: str) -> str:
    return _either(lambda e: e.labels.get(kind, ()))


# Each lexicon's label words by kind; German writes labels as compounds ("Kundennummer"), hence the
# optional "nummer".
# The kinds of codes a label names (:mod:`appliance.facts.phrases` reads their labels' phrases too).
LABELLED_KINDS = ("reference", "order", "case", "ticket", "account", "card", "customer_id", "member_number")
_LABELS = {kind: _labels(kind) for kind in LABELLED_KINDS}
# What a label is of, a word or three before a code ("... de la luz es", "... for the flat", "... d'épargne")
_QUALIFIED = r"(?:[^\W\d_]+(?:['’]\s*[^\W\d_]+)?\s+){0,2}?[^\W\d_]+(?:['’]\s*[^\W\d_]+)?"
_VERB = r"(?:\s*(?:(?:" + _either(lambda e: e.label_verbs) + r")(?!\w)|:|=))?\s*:?\s*"


def _labelled(labels: dict[str, str], prefix: str = "") -> re.Pattern[str]:
    """A label of ``labels`` (kind → its words), after ``prefix``, then its code."""
    return re.compile(
        r"(?i)(?<!\w)(?P<label>" + prefix + "(?:" + "|".join(f"(?P<{k}>{v})" for k, v in labels.items()) + r"))"
        r"(?:" + _either(lambda e: e.compounds) + r")?(?!\w)"
        r"(?:[\s,-]*(?:(?:" + _either(lambda e: e.number_words) + r")(?!\w)\.?|n°|nº|#))?"
        r"(?:\s+(?:"
        + (_either(lambda e: e.qualifiers) or "(?!)")
        + r")(?:\s+|(?<=['’]))"
        + _QUALIFIED
        + r"(?="
        + _VERB
        + r"#?\s?[A-Za-z0-9/-]*\d))?"
        + _VERB
        + _ID_VALUE
        + r"(?!\w)"
    )


_LABELLED = _labelled(_LABELS)


def _label_words(lex: Lexicon, kind: str) -> tuple[str, ...]:
    return lex.entities.labels.get(kind, ())


# In the languages that join nouns a label closes a longer word, which names what it is of
# ("Abrechnungsticket 30417", "Handyvertrag 7712034", "telefooncontract 7712034").
_COMPOUND_LABELLED = _labelled(
    {kind: either_joined(functools.partial(_label_words, kind=kind)) for kind in _LABELS},
    r"[^\W\d_]{2,}?-?",
)
# A code a label closing a longer word may name, and how far before it that word may stand.
_COMPOUND_VALUE = re.compile(r"(?<![\w/-])(?=[A-Za-z0-9/-]*\d)[A-Za-z0-9][A-Za-z0-9/-]{3,}[A-Za-z0-9](?![\w/])")
_REACH = 60
_NUMBER_WORD = r"(?:" + _either(lambda e: e.number_words) + r")(?!\w)\.?"
_ARTICLE = r"(?:" + (_either(lambda e: e.articles) or "(?!)") + r")"
# A label, a few words of what it is, then its number: "I've opened a ticket for you, the number is
# REM-30417", "j'ai un ticket ouvert, le numéro 90214", "een ticket open, nummer 88402", "my client
# number's on the letter: TX-0093316". The number word follows a comma or an article, not a noun of
# its own ("phone number").
_LABEL_THEN_NUMBER = re.compile(
    r"(?i)(?<!\w)(?P<label>" + "|".join(f"(?P<{k}>{v})" for k, v in _LABELS.items()) + r")"
    r"(?:" + _either(lambda e: e.compounds) + r")?(?!\w)(?:[^\S\n]+" + _NUMBER_WORD + r")?(?:['’]s)?"
    r"(?P<between>(?:[^\S\n]+[^\W\d_]+(?:['’][^\W\d_]+)?){1,5}?)"
    r"(?:(?:[^\S\n]*,[^\S\n]*(?:"
    + _ARTICLE
    + r"[^\S\n]+)?|[^\S\n]+"
    + _ARTICLE
    + r"[^\S\n]+)"
    + _NUMBER_WORD
    + _VERB
    + r"|[^\S\n]*(?P<colon>:)[^\S\n]*)"
    + _ID_VALUE
    + r"(?!\w)"
)
# A code before its label: "TX-0093316 is my client number", "K-558812 ist meine Kundennummer".
_VALUE_FIRST = re.compile(
    r"(?i)(?<![\w#-])" + _CODE_VALUE + r"\s+(?:" + (_either(lambda e: e.value_first) or "(?!)") + r")\s+"
    r"(?P<label>" + "|".join(f"(?P<{k}>{v})" for k, v in _LABELS.items()) + r")"
    r"(?:" + _either(lambda e: e.compounds) + r")?(?:\s+(?:" + _either(lambda e: e.number_words) + r"))?(?!\w)"
)
# Another label, or a phone's word, between a label and a number names the number itself.
_ANY_LABEL = re.compile(
    r"(?i)(?<!\w)(?:" + "|".join((*_LABELS.values(), phrases(each(lambda lex: lex.entities.phone_words)))) + r")(?!\w)"
)
# Digits a phone's shape fits (a leading 0, nine digits or more) stay a phone's.
_PHONE_SHAPE = re.compile(r"0\d{8,}")
# The last digits of an account after the words that name them ("ending 4821") or a mask ("**4821").
_ACCOUNT_TAIL = re.compile(
    r"(?i)(?<!\w)(?:(?:" + phrases(each(lambda lex: lex.entities.tails)) + r")(?!\w)|(?:\*|x|•|·){2,}[\s-]?)"
    r"\s*:?\s*(?P<value>\d{2,6})(?!\w)"
)
# A code: letters and digits mixed, 5+ characters, upper case (codes are rarely written in lower case
# unless a label says so), optionally joined by hyphens ("ORD-2024-0017") or after "Ref#".
_CODE = re.compile(
    r"(?<![\w@-])(?:Ref#|#)?(?P<value>(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)*)(?![\w@]|-\w)"
)
# A number and its unit ("500MG", "4K", "2ND") is a quantity, and a letter and a digit too short for a code.
_NOT_CODE = re.compile(r"(?i)^\d+(?:" + phrases(each(lambda lex: lex.entities.units)) + r")$|^[A-Z]\d$")
_LONG_NUMBER = re.compile(r"(?<![\w.,@/:-])#?(?P<value>\d{5,})(?![\w@]|[.,:]\d)")
_CAPITALS = re.compile(r"[A-Z]{5}")


def labelled(text: str, add: Add) -> None:
    """Codes after their label ("order number 48213377"), a few words after it or before it, and an
    account's last digits ("account ending 4821")."""
    for m in _matches(_LABELLED, text):
        value = m.group("value")
        if len(value) < 4 or not any(c.isdigit() for c in value):
            continue  # "booking was successful", "order 2 pizzas"
        kind = next(k for k in _LABELS if m.group(k))
        add(kind, m.start("value"), m.end("value"), compact(value))
    # only right before a code of five characters or more (not a year: "Mietvertrag 2019"): a
    # label inside a word is searched for letter by letter, so not through the whole text
    for code in _COMPOUND_VALUE.finditer(text):
        for m in _matches(_COMPOUND_LABELLED, text, max(0, code.start() - _REACH), code.end()):
            if m.end("value") == code.end():
                add(next(k for k in _LABELS if m.group(k)), m.start("value"), m.end("value"), compact(code.group()))
    for m in _ACCOUNT_TAIL.finditer(text):
        add("account", m.start("value"), m.end("value"), digits(m.group("value")))
    for m in _VALUE_FIRST.finditer(text):
        value = m.group("value")
        if len(value) >= 4 and any(c.isdigit() for c in value):
            add(next(k for k in _LABELS if m.group(k)), m.start("value"), m.end("value"), compact(value))
    for m in _LABEL_THEN_NUMBER.finditer(text):
        value = m.group("value")
        if len(value) < 4 or not any(c.isdigit() for c in value) or _PHONE_SHAPE.fullmatch(value):
            continue
        if m.group("colon") and len(compact(value)) < 5:
            continue  # after words and a colon, a code's length: "my order from Amazon: 1234 Main Street"
        if _ANY_LABEL.search(m.group("between")):
            continue  # the nearer label names it ("my ticket about the order, the number is ...")
        add(next(k for k in _LABELS if m.group(k)), m.start("value"), m.end("value"), compact(value))


def _matches(pattern: re.Pattern[str], text: str, pos: int = 0, end: int | None = None) -> Iterator[re.Match[str]]:
    """The matches of a label and its code, where a word taken for a code may be the next label:
    "the parcel tracking number is ..." tries "tracking" again after "parcel" took it."""
    end = len(text) if end is None else end
    while (m := pattern.search(text, pos, end)) is not None:
        yield m
        pos = m.end("label") if not any(c.isdigit() for c in m.group("value")) else m.end()


def shaped(text: str, add: Add) -> None:
    """Codes by their shape (capitals and digits, "ORD-2024-0017") and runs of five digits or more."""
    for m in _CODE.finditer(text):
        value = m.group("value")
        if len(value.replace("-", "")) >= 5 and not _NOT_CODE.match(value):
            add("reference", m.start("value"), m.end("value"), compact(value))
    for m in _LONG_NUMBER.finditer(text):
        add("number", m.start("value"), m.end("value"), digits(m.group("value")))


def letter_codes(text: str, add: Add) -> None:
    """Codes of letters only, after a label and a word that introduces a value ("the reference
    number is WZNKIUGX", "Booking code: QXKTRB"): five capitals or more, in text that is not shouting."""
    if text.isupper() or not _CAPITALS.search(text):
        return
    for m in _LABELLED.finditer(text):
        value = m.group("value")
        between = text[m.end("label") : m.start("value")]
        if len(value) >= 5 and value.isalpha() and value.isupper() and between.strip():
            kind = next(k for k in _LABELS if m.group(k))
            add(kind, m.start("value"), m.end("value"), compact(value))
