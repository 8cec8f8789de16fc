"""National identification numbers, by the shape of each country's: secrets like a PIN; and the
check digits of card numbers and IBANs.

The only importer of ``python-stdnum``, which holds each number's rules and check digits. A customer
who proves who they are may give one ("My social security number is 536-90-4412"), and it is not a
fact to keep: :mod:`appliance.facts.secrets` masks it before anything is stored. The shapes below
find candidates in text (stdnum validates a number, it does not find one), and stdnum decides:

* ``ssn``, US Social Security number: dashed as written ("536-90-4412"), or bare or spaced after a
  cue ("SSN 536904412"); stdnum refuses the areas never issued and the numbers published as samples;
* ``nino``, UK National Insurance number: two prefix letters of the allowed ones, six digits, a
  suffix A-D ("AB 12 34 56 C"), in capitals unless a cue names it (stdnum has no rules for it);
* ``steuer_id``, German Steuer-ID: eleven digits, one repeated, and the check digit;
* ``dni``, Spanish DNI and NIE: eight digits (or X, Y or Z and seven) and the check letter;
* ``nir``, French social security number: fifteen characters (Corsica's 2A and 2B) and the key,
  opening with 1 or 2 unless a cue names it;
* ``bsn``, Dutch citizen service number: nine digits that pass the eleven-test; written
  "1234.56.782" on its own, in any form after a cue (the eleven-test alone passes one number in
  eleven, and Dutch account numbers used the same test).

A cue shortly before the number ("Steuer-ID", "DNI", "numéro de sécurité sociale", "BSN"), or a
kind the last turns spoke of (``cued``), widens the forms that are read; a check digit holds
whatever the cue. The cues of each language are in its lexicon (``secrets.national_ids``).

Pure functions over text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

from stdnum import iban, luhn
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.nl import bsn
from stdnum.us import ssn

from appliance.lexicon import NATIONAL_ID_KINDS, either

KINDS = NATIONAL_ID_KINDS
LABELS = {
    "ssn": "social security number",
    "nino": "National Insurance number",
    "steuer_id": "Steuer-ID",
    "dni": "DNI/NIE",
    "nir": "NIR",
    "bsn": "BSN",
}


def _cues(kind: str) -> str:
    return either(lambda lex: lex.secrets.national_ids.get(kind, ())) or "(?!)"


_HINT = re.compile(either(lambda lex: lex.secrets.id_hints))
_CUE = re.compile(r"(?i)(?<![\w-])(?:" + "|".join(f"(?P<{k}>{_cues(k)})" for k in KINDS) + r")(?![\w-])")
# A cue, then a few words ("my social security number is", "BSN: ", "DNI número"), then the number.
_BEFORE = {k: re.compile(r"(?i)(?<![\w-])(?:" + _cues(k) + r")(?![\w-])\W*(?:[^\W\d_]+\W+){0,4}$") for k in KINDS}
# Every shape holds seven digits in a row, single spaces, dots or dashes between them at most, or ends
# like a NINO: a cheap test before the six patterns, which most messages fail.
_ANY = re.compile(r"\d(?:[ .-]?\d){6}|\d\d ?\d\d ?\d\d ?[A-Da-d](?!\w)")
_END = r"(?![\w-]|[.,]\d)"
_SSN = re.compile(r"(?<![\w.,/+-])(\d{3})([- ]?)(\d{2})\2(\d{4})" + _END)
_NINO = re.compile(r"(?i)(?<![\w-])([a-z]{2}) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([a-d])(?!\w)")
_STEUER = re.compile(r"(?<![\w.,/+-])(?:\d{11}|\d{2} \d{3} \d{3} \d{3})" + _END)
_DNI = re.compile(r"(?i)(?<![\w-])((?:[xyz][- ]?)?\d{7,8})[- ]?([a-z])(?!\w)")
_NIR = re.compile(r"(?i)(?<![\w.,/+-])([1-478]) ?(\d{2}) ?(\d{2}) ?(\d{2}|2[ab]) ?(\d{3}) ?(\d{3}) ?(\d{2})" + _END)
_BSN = re.compile(r"(?<![\w.,/+-])(\d{4})([ .]?)(\d{2})\2(\d{3})" + _END)
_NINO_FIRST = frozenset("ABCEGHJKLMNOPRSTWXYZ")
_NINO_SECOND = frozenset("ABCEGHJKLMNPRSTWXYZ")
_NINO_NEVER = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


@dataclass(frozen=True)
class NationalId:
    """One national identification number in a text: its kind (:data:`KINDS`) and span."""

    kind: str
    start: int
    end: int


def find(text: str, cued: Collection[str] = ()) -> tuple[NationalId, ...]:
    """The national identification numbers of ``text``, in order, none overlapping another.
    ``cued``: kinds the last few turns named, which widen the forms read as a cue does."""
    if not _ANY.search(text):
        return ()
    hinted = bool(_HINT.search(text.casefold()))
    found: list[NationalId] = []
    for kind, pattern, valid in _SHAPES:
        for m in pattern.finditer(text):
            cue = kind in cued or (hinted and _BEFORE[kind].search(text, max(0, m.start() - 60), m.start()) is not None)
            if valid(m, cue) and not any(m.start() < f.end and f.start < m.end() for f in found):
                found.append(NationalId(kind, m.start(), m.end()))
    found.sort(key=lambda f: f.start)
    return tuple(found)


def mentioned(text: str) -> frozenset[str]:
    """The kinds of national identification number ``text`` names ("what is your BSN?")."""
    if not _HINT.search(text.casefold()):
        return frozenset()
    return frozenset(next(k for k in KINDS if m.group(k)) for m in _CUE.finditer(text))


def _ssn(m: re.Match[str], cue: bool) -> bool:
    if m.group(2) != "-" and not cue:
        return False  # "040 12 3456" is a phone number, "123456789" any number: only a cue says SSN
    return ssn.is_valid(m.group(1) + m.group(3) + m.group(4))


def _nino(m: re.Match[str], cue: bool) -> bool:
    prefix = m.group(1)
    if not cue and not (prefix.isupper() and m.group(5).isupper()):
        return False
    prefix = prefix.upper()
    return prefix[0] in _NINO_FIRST and prefix[1] in _NINO_SECOND and prefix not in _NINO_NEVER


def _steuer(m: re.Match[str], cue: bool) -> bool:
    return idnr.is_valid(m.group())


def _dni(m: re.Match[str], cue: bool) -> bool:
    number = m.group(1) + m.group(2)
    return nie.is_valid(number) if number[0].isalpha() else dni.is_valid(number)


def _nir(m: re.Match[str], cue: bool) -> bool:
    return (cue or m.group(1) in "12") and nir.is_valid(m.group())


def _bsn(m: re.Match[str], cue: bool) -> bool:
    first, sep, middle, last = m.groups()
    return (cue or sep == ".") and bsn.is_valid(first + middle + last)


def luhn_valid(number: str) -> bool:
    """The check digit of card numbers (ISO/IEC 7812): catches any single wrong digit."""
    return luhn.is_valid(number)


def iban_valid(text: str) -> bool:
    """Whether ``text`` is an IBAN: its country's length and its check digits (ISO 13616)."""
    return iban.is_valid(text)


_Valid = Callable[[re.Match[str], bool], bool]
# Longest first: a NIR's fifteen digits before a Steuer-ID's eleven and the nine of an SSN or a BSN.
_SHAPES: tuple[tuple[str, re.Pattern[str], _Valid], ...] = (
    ("nir", _NIR, _nir),
    ("steuer_id", _STEUER, _steuer),
    ("dni", _DNI, _dni),
    ("nino", _NINO, _nino),
    ("bsn", _BSN, _bsn),
    ("ssn", _SSN, _ssn),
)
