"""Secrets: PINs, card security codes, passwords, one-time codes and full card numbers.

They are not facts to repeat. A customer gives a PIN to be checked once, never to be read back, put
in a summary or shown to a model again; PCI DSS forbids storing a card security code at all and a
full card number unmasked. So they are found (by a cue in the same message, "my PIN is 7402", or by
the agent's request just before, "Right, and your PIN as well please." → "3941") and :func:`mask`
replaces them with a placeholder before anything is stored or prompted: "my PIN is [PIN withheld]",
"[card ending 1111]". The ledger then records that a secret was given, and when, from the
placeholder (:func:`given`), never its value.

A value said apart or in words ("Sure, it's 4 4 3 1.", "four eight two six", "vier vier drei eins")
is read as its digits where a secret is asked for or named (:mod:`appliance.facts.spoken`), and
the placeholder stands for the whole span as said. National identification numbers are secrets too,
found by their countries' shapes and check digits (:mod:`appliance.facts.national_ids`). Which
kinds are masked, and the site's own patterns, are a :class:`Masking` (``privacy.mask_kinds``,
``privacy.patterns``).

Pure functions over text; which secrets were asked for comes from :mod:`appliance.facts.slots`, and
the words of each language from its lexicon (:mod:`appliance.lexicon`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from appliance.facts import national_ids, spoken
from appliance.facts.text import digits
from appliance.lexicon import LEXICONS, MASK_KINDS, SECRET_KINDS, either
from appliance.lexicon.text import fold

_Add = Callable[[str, int, int], None]  # kind, start, end

# Secret kinds and how they are named in a placeholder and in the ledger: those an agent asks for
# (``KINDS``), then the national identification numbers.
LABELS = {
    "pin": "PIN",
    "cvv": "card security code",
    "password": "password",
    "otp": "one-time code",
    **national_ids.LABELS,
}
KINDS = frozenset(SECRET_KINDS)
# Requests for numbers that are not secrets (see appliance.facts.slots).
_NUMBER_SLOTS = frozenset({"account", "card", "reference", "order", "case", "phone", "postcode", "birthdate"})


def _cues(kind: str) -> str:
    return either(lambda lexicon: lexicon.secrets.cues.get(kind, ()))


# Every lexicon's cues, by kind, in the order of ``SECRET_KINDS``.
_CUES = {kind: _cues(kind) for kind in SECRET_KINDS}
# Cheap substring tests first: most messages speak of no secret, and the cue pattern is long.
_CUE_HINT = re.compile(either(lambda lex: lex.secrets.hints))
_FOUR_DIGITS = re.compile(r"\d{4}")
_CUE = re.compile(r"(?i)(?<![\w-])(?:" + "|".join(f"(?P<{kind}>{cue})" for kind, cue in _CUES.items()) + r")(?![\w-])")
_DIGITS = r"(?<![\w.,:/-])\d{3,8}(?![\w]|[.,:/]\d)"
# Between a cue and its value: a few words that are not another fact's label ("my PIN: either 3941",
# "PIN ist wohl 7402"), but never across a sentence. The value: its digits, or said apart or in
# words ("4 4 3 1", "four four three one"), tried first as the longer.
_LEAD_WORD = r"[\s:=,'’\"-]*(?!(?:" + either(lambda lex: lex.secrets.other_facts) + r")(?!\w))[^\W\d_]{1,12}(?![\w])"
_LEAD_END = r"[\s:=,'’\"-]*"
_FIRST = re.compile(r"(?i)(?:" + _LEAD_WORD + r"){0,4}?" + _LEAD_END + "(?P<v>" + _DIGITS + ")")
_STEP = re.compile(_LEAD_WORD, re.IGNORECASE)
_GAP = re.compile(_LEAD_END)
_JOIN = (
    r"(?i)[\s,?!]*(?:" + either(lambda lex: lex.secrets.joins) + r"|/|,)?[\s,]*"
    r"(?:" + either(lambda lex: lex.secrets.hedges) + r")?\s*\??\s*"
)
_MORE = re.compile(_JOIN + "(?P<v>" + _DIGITS + r")")
_JOINED = re.compile(_JOIN)
# A bare value in a reply to a request for a secret: not an amount, a time or a date's part.
_SLOT_VALUE = re.compile(
    r"(?<![\w.,:/$€£¥#-])\d{3,8}(?![\w%]|[.,:/]\d|\s?(?i:" + either(lambda lex: lex.secrets.quantities) + r")(?!\w))"
)
_YEAR = re.compile(r"(?:19|20)\d\d")
_WORD = re.compile(r"\S+")
# Words after "my password is" that say something about it rather than being it.
_NOT_PASSWORD = frozenset(word for lex in LEXICONS.values() for word in lex.secrets.not_passwords)
_PASSWORD_LEAD = re.compile(
    r"(?i)\s*(?:(?:" + either(lambda lex: lex.secrets.password_verbs) + r")(?!\w)|:|=)\s*['\"“]?"
)

# Full card numbers: 13-19 digits, in groups of four or in one run; a cue or the Luhn check says card.
_CARD = re.compile(r"(?<![\w+-])(?:\d{4}[ -]){3}\d{1,7}(?![\w-]|[.,]\d)|(?<![\w+-])\d{13,19}(?![\w-]|[.,]\d)")
_CARD_CUE = re.compile(r"(?i)(?:" + either(lambda lex: lex.secrets.cards) + r")\W+(?:\w+\W+){0,4}$")
_NOT_CARD_CUE = re.compile(r"(?i)(?:" + either(lambda lex: lex.secrets.not_cards) + r")\W+(?:\w+\W+){0,3}$")
_PLACEHOLDER = re.compile(r"\[(?P<label>" + "|".join(re.escape(v) for v in LABELS.values()) + r") withheld\]")


@dataclass(frozen=True)
class Secret:
    """One secret in a text: its kind (``pin``, ``cvv``, ``password``, ``otp``, ``card``, a national
    identification number's, or ``pattern`` for a site's own) and span; ``label`` names a site's
    pattern in its placeholder."""

    kind: str
    start: int
    end: int
    label: str = ""


@dataclass(frozen=True)
class Masking:
    """What is masked: the kinds (``privacy.mask_kinds``, all of :data:`MASK_KINDS` by default), and
    the site's own patterns, each with the label its placeholder names (``privacy.patterns``)."""

    kinds: frozenset[str] = frozenset(MASK_KINDS)
    patterns: tuple[tuple[str, re.Pattern[str]], ...] = ()

    @classmethod
    def of(cls, kinds: Collection[str], patterns: Mapping[str, str]) -> Masking:
        """The settings' kinds and label → regular expression table, compiled."""
        return cls(frozenset(kinds), tuple((label, re.compile(p)) for label, p in patterns.items()))


ALL = Masking()


def find(
    text: str, asked: Collection[str] = (), recent: Collection[str] = (), masking: Masking = ALL
) -> tuple[Secret, ...]:
    """The secrets of ``text``, in order: after a cue, and where the agent's turn just before asked
    for one (``asked``: the kinds it asked for), every value of that shape in the reply; national
    identification numbers by their shapes; then the site's patterns. Only the kinds ``masking``
    names are kept.

    ``recent``: secret kinds the last few turns spoke of ("I can't remember my PIN", then "What was
    your mother's maiden name?" → "Hold on, I think it's either 3100 or 7402"): a bare number of
    four to six digits that is not a year is taken for one of them too.
    """
    found: list[Secret] = []

    def add(kind: str, start: int, end: int) -> None:
        if not any(start < s.end and s.start < end for s in found):
            found.append(Secret(kind, start, end))

    for n in national_ids.find(text, {*asked, *recent}):
        add(n.kind, n.start, n.end)
    if _FOUR_DIGITS.search(text):
        for m in _CARD.finditer(text):
            if _is_card(text, m.start(), m.group()):
                add("card", m.start(), m.end())
    _after_cues(text, add)
    _replies(text, asked, recent, add)
    if "password" in asked and not any(s.kind == "password" for s in found):
        _bare_password(text, add)
    kept = [s for s in found if s.kind in masking.kinds]
    for label, pattern in masking.patterns:
        for m in pattern.finditer(text):
            if m.end() > m.start() and not any(m.start() < s.end and s.start < m.end() for s in kept):
                kept.append(Secret("pattern", m.start(), m.end(), label))
    kept.sort(key=lambda s: s.start)
    return tuple(kept)


def _after_cues(text: str, add: _Add) -> None:
    """The values after each cue ("my PIN is 7402 or maybe 7420", "Passwort: Sommer2024")."""
    cues = _CUE.finditer(text) if _CUE_HINT.search(text.casefold()) else ()
    for m in cues:
        kind = next(k for k in _CUES if m.group(k))
        if kind == "password":
            _password(text, m.end(), add)
            continue
        pos = m.end()
        first = True
        while (value := _value(text, pos, first)) is not None:
            add(kind, value[0], value[1])
            pos, first = value[2], False


def _replies(text: str, asked: Collection[str], recent: Collection[str], add: _Add) -> None:
    """The bare values of a reply to a request for a secret (``asked``), or of a message after the
    last turns spoke of one (``recent``), said as digits, apart or in words."""
    digit_kinds = [k for k in ("pin", "cvv", "otp") if k in asked]
    if digit_kinds:
        # asked for a PIN and an account number at once, the longer number is the account's
        longest = 4 if digit_kinds == ["cvv"] else 6 if _NUMBER_SLOTS & set(asked) else 8
        for run in spoken.runs(text, 3, longest):
            add(digit_kinds[0], run.start, run.end)
        for m in _SLOT_VALUE.finditer(text):
            if len(m.group()) <= longest:
                add(digit_kinds[0], m.start(), m.end())
    late = [k for k in ("pin", "otp", "cvv") if k in recent]
    if late and not digit_kinds:
        for run in spoken.runs(text, 4, 6):
            if not _YEAR.fullmatch(run.digits):
                add(late[0], run.start, run.end)
        for m in _SLOT_VALUE.finditer(text):
            if 4 <= len(m.group()) <= 6 and not _YEAR.fullmatch(m.group()):
                add(late[0], m.start(), m.end())


def _value(text: str, pos: int, first: bool) -> tuple[int, int, int] | None:
    """The value after a cue (``first``) or after the value before it ("3941 or 0314"): its span and
    where the match ends; said apart or in words if it is, else as digits."""
    said = _said_after_cue(text, pos) if first else _said_after_join(text, pos)
    if said is not None:
        return said.start, said.end, said.end
    plain = (_FIRST if first else _MORE).match(text, pos)
    return (plain.start("v"), plain.end("v"), plain.end()) if plain is not None else None


def _said_after_cue(text: str, pos: int) -> spoken.Run | None:
    """A run said apart or in words after a cue and up to four words that name no other fact."""
    for _ in range(5):
        run = spoken.run_at(text, _GAP.match(text, pos).end())  # type: ignore[union-attr]
        step = _STEP.match(text, pos)
        if run is not None or step is None:
            return run
        pos = step.end()
    return None


def _said_after_join(text: str, pos: int) -> spoken.Run | None:
    join = _JOINED.match(text, pos)
    return spoken.run_at(text, join.end()) if join is not None else None


def mask(text: str, asked: Collection[str] = (), recent: Collection[str] = (), masking: Masking = ALL) -> str:
    """``text`` with every secret replaced: "[PIN withheld]", and a card number by its last four
    digits, "[card ending 1111]"."""
    return masked(text, find(text, asked, recent, masking))


def masked(text: str, found: Sequence[Secret]) -> str:
    """``text`` with the secrets ``found`` in it replaced by their placeholders."""
    out = text
    for s in sorted(found, key=lambda s: s.start, reverse=True):
        if s.kind == "card":
            placeholder = f"[card ending {digits(text[s.start : s.end])[-4:]}]"
        else:
            placeholder = f"[{s.label or LABELS[s.kind]} withheld]"
        out = out[: s.start] + placeholder + out[s.end :]
    return out


def mentioned(text: str) -> frozenset[str]:
    """The secret kinds ``text`` speaks of ("I forgot my PIN", "what is your BSN?"), with or without
    a value."""
    named = national_ids.mentioned(text)
    if not _CUE_HINT.search(text.casefold()):
        return named
    return named | frozenset(next(k for k in _CUES if m.group(k)) for m in _CUE.finditer(text))


def cues(text: str) -> tuple[tuple[str, int, int], ...]:
    """Where ``text`` names a secret: ``(kind, start, end)`` of each cue ("PIN", "Geheimzahl")."""
    if not _CUE_HINT.search(text.casefold()):
        return ()
    return tuple((next(k for k in _CUES if m.group(k)), m.start(), m.end()) for m in _CUE.finditer(text))


def given(text: str) -> tuple[tuple[str, int, int], ...]:
    """The secrets a masked text says were given: ``(kind, start, end)`` of each placeholder."""
    by_label = {label: kind for kind, label in LABELS.items()}
    return tuple((by_label[m["label"]], m.start(), m.end()) for m in _PLACEHOLDER.finditer(text))


def _is_card(text: str, start: int, raw: str) -> bool:
    number = digits(raw)
    if not 13 <= len(number) <= 19:
        return False
    before = text[max(0, start - 40) : start]
    if _CARD_CUE.search(before):
        return True
    if _NOT_CARD_CUE.search(before):
        return False  # "account 9931939443153" is an account number, whatever its check digit
    return number[0] in "23456" and national_ids.luhn_valid(number)


def _password(text: str, pos: int, add: _Add) -> None:
    lead = _PASSWORD_LEAD.match(text, pos)
    if lead is None:
        return
    run = spoken.run_at(text, lead.end(), 3, 12)
    if run is not None:  # "my password is four four three one"
        add("password", run.start, run.end)
        return
    word = _WORD.match(text, lead.end())
    if word is None:
        return
    value = word.group().rstrip(".,;!?\"'”’)")
    if value and value.casefold() not in _NOT_PASSWORD:
        add("password", word.start(), word.start() + len(value))


# A bare thanks or goodbye after "what is your password?" gives none ("Thanks!", "Danke."): the
# knowledge base's thanks cues, matched on the word folded as they are written.
_THANKS = re.compile(r"(?:" + either(lambda lex: lex.knowledge.thanks) + r")", re.IGNORECASE)
_FILLER = re.compile(r"(?i)^[\W_]*(?:(?:" + either(lambda lex: lex.secrets.password_replies) + r")(?!\w)[\s,:]*)*")


def _bare_password(text: str, add: _Add) -> None:
    """A reply to "what is your password?" that is one word after fillers: that word."""
    lead = _FILLER.match(text)
    at = lead.end() if lead else 0
    run = spoken.run_at(text, at + len(text[at:]) - len(text[at:].lstrip()), 3, 12)
    if run is not None and not text[run.end :].strip(" .!?"):
        add("password", run.start, run.end)  # "it's four four three one"
        return
    rest = text[at:].strip()
    value = rest.rstrip(".,;!?\"'”’)")
    if value and " " not in value and value.casefold() not in _NOT_PASSWORD and not _THANKS.fullmatch(fold(value)):
        start = text.index(value, lead.end() if lead else 0)
        add("password", start, start + len(value))
