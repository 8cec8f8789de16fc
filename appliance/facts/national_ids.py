"""National identification numbers, by the shape of each country's: secrets like a PIN.

A customer who proves who they are may give one ("My social security number is 078-05-1120"), and
it is not a fact to keep: :mod:`appliance.facts.secrets` masks it before anything is stored. Each
kind has its country's shape and, where the format has one, its check:

* ``ssn``, US Social Security number: area not 000, 666 or 9xx, group not 00, serial not 0000;
  dashed as written ("078-05-1120"), or bare or spaced after a cue ("SSN 078051120");
* ``nino``, UK National Insurance number: two prefix letters of the allowed ones, six digits, a
  suffix A-D ("AB 12 34 56 C"), in capitals unless a cue names it;
* ``steuer_id``, German Steuer-ID: eleven digits, the first not 0, one digit of the first ten
  repeated two or three times, and the check digit (ISO 7064, MOD 11,10);
* ``dni``, Spanish DNI and NIE: eight digits (or X, Y or Z and seven) and the check letter (mod 23);
* ``nir``, French social security number: thirteen digits (Corsica's 2A and 2B) and the key, 97
  less the number mod 97;
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
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


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
    area, sep, group, serial = m.groups()
    if sep != "-" and not cue:
        return False  # "040 12 3456" is a phone number, "123456789" any number: only a cue says SSN
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _nino(m: re.Match[str], cue: bool) -> bool:
    prefix = m.group(1)
    if not cue and not (prefix.isupper() and m.group(5).isupper()):
        return False
    prefix = prefix.upper()
    return prefix[0] in _NINO_FIRST and prefix[1] in _NINO_SECOND and prefix not in _NINO_NEVER


def steuer_id_valid(number: str) -> bool:
    """The check digit of a German Steuer-ID (ISO 7064, MOD 11,10)."""
    product = 10
    for c in number[:10]:
        total = (int(c) + product) % 10 or 10
        product = total * 2 % 11
    return (11 - product) % 10 == int(number[10])


def _steuer(m: re.Match[str], cue: bool) -> bool:
    number = m.group().replace(" ", "")
    if number[0] == "0" or not steuer_id_valid(number):
        return False
    counts = sorted((number[:10].count(d) for d in set(number[:10])), reverse=True)
    # one digit of the first ten twice or three times, the others once
    return cue or (counts[0] in (2, 3) and (len(counts) < 2 or counts[1] == 1))


def _dni(m: re.Match[str], cue: bool) -> bool:
    body = re.sub(r"[- ]", "", m.group(1)).upper()
    if body[0] in "XYZ":
        if len(body) != 8:
            return False
        body = str("XYZ".index(body[0])) + body[1:]
    elif len(body) != 8:
        return False
    return _DNI_LETTERS[int(body) % 23] == m.group(2).upper()


def _nir(m: re.Match[str], cue: bool) -> bool:
    sex, year, month, dept, commune, order, key = m.groups()
    if not cue and sex not in "12":
        return False
    if not ("01" <= month <= "12" or "20" <= month <= "42" or "50" <= month <= "99"):
        return False
    dept = {"2A": "19", "2B": "18"}.get(dept.upper(), dept)
    number = int(sex + year + month + dept + commune + order)
    return 97 - number % 97 == int(key)


def bsn_valid(number: str) -> bool:
    """The eleven-test of a Dutch BSN: 9·d1 + 8·d2 + ... + 2·d8 − d9 is a multiple of eleven."""
    total = sum(int(c) * w for c, w in zip(number, (9, 8, 7, 6, 5, 4, 3, 2, -1), strict=True))
    return total % 11 == 0 and number != "000000000"


def _bsn(m: re.Match[str], cue: bool) -> bool:
    first, sep, middle, last = m.groups()
    return (cue or sep == ".") and bsn_valid(first + middle + last)


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
