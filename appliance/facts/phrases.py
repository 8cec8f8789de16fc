"""What a code is called: the noun phrase of its label before it, kept as the value's label.

"I have a billing ticket 30417" is a ticket labelled "billing ticket", "my support case 88213" a case
labelled "support case", "claim no. 5521-77" a case labelled "claim"; so are "ticket de facturation
30417", "mi caso de soporte 88213", "Abrechnungsticket 30417" and "mijn telefooncontract 7712034".
The phrase is found by its grammar, not by a list of its words: the label of the code's kind (each
lexicon's ``entities.labels``, closing a longer word in the languages that join nouns), the words
between a determiner and it (``entities.determiners``: "a", "my", "ein", "mon", "su", "mijn"; with
none, no words before it: "cancel" in "Can I cancel order 5521-889" is none), and what it is of
after it ("de facturation", "for the flat"; ``entities.qualifiers``). Words of number ("no.",
"Nummer", "numéro") are no part of it.

A phrase whose words are all the kind's own (as a read-back names it, "ticket number",
"Kundennummer", "numéro de dossier", or as an agent asks for it, "booking", "Bestellung") is no
label. Nor, for a kind the customer holds one of (an
account, a card), is its label word alone: "acct" and "IBAN" are the account, and a label would
file one account in two slots; a word that says what it is of does ("phone contract").
"""

from __future__ import annotations

import re

from appliance.facts.codes import LABELLED_KINDS as KINDS
from appliance.lexicon import LEXICONS, Lexicon, either, either_joined
from appliance.lexicon.text import fold
from appliance.types import Entity


def _words(lex: Lexicon, kind: str) -> tuple[str, ...]:
    return (*lex.entities.labels.get(kind, ()), *(lex.entities.card_words if kind == "card" else ()))


_COMPOUNDS = either(lambda lex: lex.entities.compounds)


def _head(kind: str) -> re.Pattern[str]:
    """A label of ``kind`` as a word of its own (after a word and a hyphen: "Support-Ticket"), or
    closing a longer word in a language that joins nouns ("Abrechnungsticket")."""
    joined = either_joined(lambda lex: _words(lex, kind))
    return re.compile(
        r"(?i)(?<![\w'’-])(?:(?P<hyphen>[^\W\d_]+-)?(?:"
        + either(lambda lex: _words(lex, kind))
        + r")|(?P<joined>[^\W\d_]{2,}?)(?:"
        + joined
        + r"))(?:"
        + _COMPOUNDS
        + r")?(?![\w-])"
    )


_HEADS = {kind: _head(kind) for kind in KINDS}
# Between a label and its code: a word of number, what the code is of, a verb ("claim no. 5521-77",
# "ticket de facturation 30417", "the account for the flat is 40021178").
_REST = re.compile(
    r"(?i)(?:[\s,-]*(?:"
    + either(lambda lex: lex.entities.number_words)
    + r")(?!\w)\.?|\s*n[°º]\.?|\s*#)?"
    + r"(?P<of>\s+(?:"
    + either(lambda lex: lex.entities.qualifiers)
    + r")(?:\s+|(?<=['’]))(?:[^\W\d_]+(?:['’][^\W\d_]+)?\s+){0,2}?[^\W\d_]+)?"
    + r"(?:\s*(?:(?:"
    + either(lambda lex: lex.entities.label_verbs)
    + r")(?!\w)|[:=]))?\s*:?\s*#?\s*"
)
# A word right before ``endpos``, with only spaces after it.
_WORD_BEFORE = re.compile(r"(?<![\w'’-])([^\W\d_]+(?:['’-][^\W\d_]+)*)[^\S\n]+$")
# What parts a label from a code a few words later: the end of a sentence, or another value between.
_LOOSE = re.compile(r"[!?;\n\d]|\.\s")
_REACH = 60


_DETERMINERS = frozenset(
    fold(w) for lex in LEXICONS.values() for w in (*lex.entities.determiners, *lex.requests.listeners)
)
# Words that end a phrase unless a determiner stands right before them ("about" in "calling about
# billing ticket"; not "support" in "my support case"): common words, counts, joining words.
_STOP = _DETERMINERS | frozenset(
    fold(w)
    for lex in LEXICONS.values()
    for w in (*lex.names.common_words, *lex.entities.counts, *lex.entities.qualifiers, *lex.entities.label_verbs)
    if re.fullmatch(r"[^\W\d_]+", w)
)
_NUMBER_WORDS = frozenset(
    fold(w) for lex in LEXICONS.values() for w in lex.entities.number_words if re.fullmatch(r"[^\W\d_]+", w)
)
_FUNCTION = (
    _DETERMINERS
    | _NUMBER_WORDS
    | frozenset(fold(w) for lex in LEXICONS.values() for w in lex.entities.qualifiers if re.fullmatch(r"[^\W\d_]+", w))
)
_COMPOUND_ENDS = tuple(
    sorted({fold(w) for lex in LEXICONS.values() for w in lex.entities.compounds if w.isalpha()}, key=len, reverse=True)
)


def _content(phrase: str) -> str:
    """A phrase's words that say what it is: without determiners, words of number and of joining,
    and without a compound's "nummer" ("Ihre Kundennummer" → "kunden")."""
    out = []
    for word in re.findall(r"[^\W\d_]+", fold(phrase)):
        if word in _FUNCTION:
            continue
        end = next((e for e in _COMPOUND_ENDS if word.endswith(e) and len(word) > len(e) + 2), "")
        out.append(word[: len(word) - len(end)] if end else word)
    return " ".join(out)


# Each kind's own words: as its read-back names it in every language ("Your ticket number"), and the
# nouns an agent asks for it by ("your booking?", "Ihre Bestellung?").
_OWN = {
    kind: frozenset(
        word
        for lex in LEXICONS.values()
        for phrase in (lex.readback.labels.get(kind, ("",))[0], *lex.requests.nouns.get(kind, ()))
        if "{" not in phrase  # a card's read-back is a sentence ("Your card ends in {}.")
        for word in _content(phrase).split()
    )
    for kind in KINDS
}


def _own(word: str, kind: str) -> bool:
    """Whether ``word`` is one of ``kind``'s own words, or one of them with an ending ("Bestellung")."""
    return any(word == w or (len(w) >= 4 and word.startswith(w)) for w in _OWN[kind])


def called(text: str, e: Entity, *, single: bool) -> str:
    """The noun phrase ``text`` calls the code ``e`` by, as written, where it says more than the
    kind's own name; "" if none. ``single``: the customer holds one value of the kind, so its label
    word alone names the kind itself."""
    if e.kind not in _HEADS:
        return ""
    start = max(0, e.start - _REACH)
    head, of = None, ""
    for m in _HEADS[e.kind].finditer(text, start, e.start):
        rest = _REST.fullmatch(text, m.end(), e.start)
        if rest is not None:
            head, of = m, (rest["of"] or "").strip()
        elif not _LOOSE.search(text, m.end(), e.start):  # "a ticket for you, the number is REM-30417"
            head, of = m, ""
    if head is None:
        return ""
    begin = _modifiers(text, head.start())
    phrase = text[begin : head.end()] + (f" {of}" if of else "")
    content = _content(phrase)
    if all(_own(word, e.kind) for word in content.split()):
        return ""
    if single and begin == head.start() and not of and not head["joined"] and not head["hyphen"]:
        return ""
    return phrase


def _modifiers(text: str, at: int) -> int:
    """Where the words before a label that belong to its phrase begin: after a determiner, at most
    three words, a common word only right after it ("my support case"). Without a determiner
    there are none: "cancel" in "Can I cancel order 5521-889" is no part of the order's phrase."""
    begin = at
    for _ in range(3):
        m = _WORD_BEFORE.search(text, max(0, begin - 40), begin)
        if m is None:
            return at
        word = fold(m[1])
        if word in _DETERMINERS:
            return begin
        if word in _STOP:
            before = _WORD_BEFORE.search(text, max(0, m.start() - 40), m.start())
            return m.start() if before is not None and fold(before[1]) in _DETERMINERS else at
        begin = m.start()
    m = _WORD_BEFORE.search(text, max(0, begin - 40), begin)
    return begin if m is not None and fold(m[1]) in _DETERMINERS else at
