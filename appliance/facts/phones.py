"""Phone numbers anywhere in a message: candidates from libphonenumber, kept by what the message says.

The only importer of ``phonenumbers`` (Google's libphonenumber, the ``phonenumberslite`` build
without geocoding and carrier data). Its ``PhoneNumberMatcher`` finds the numbers of a text read in
one region (``facts.region``: where a bare local number belongs) with every country's formats, and
reads a country code after ``+`` or the region's international prefix ("+44 20 7946 0958", "0049 30
1234567"). Leniency ``POSSIBLE`` only checks a number's length: the validity data rejects the
reserved ranges that fictional and test numbers use ("555-0199", "07700 900123"), which a kiosk's
customers and its test sessions type all the same.

What a candidate is stays the ledger's decision: a phone when it is international, opens with a
trunk prefix or a parenthesis ("01223 842725", "(415) 555-0199"), stands after or before a phone
word ("call me on 5551234567", "5551234567 is my cell"), or is grouped as a region of the lexicons'
languages writes its numbers ("612 345 678", "415.555.0142"). Dates, amounts and labelled codes are
extracted before phones, so "12.03.2024", "1,234.50" and "order 48213377" never become one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import phonenumbers
from phonenumbers import Leniency, PhoneNumberFormat, PhoneNumberMatcher

from appliance.facts.text import digits, phrases
from appliance.lexicon import LEXICONS, each
from appliance.lexicon.text import fold

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

# Where a bare number is read when neither the settings nor the conversation say (``facts.region``).
DEFAULT_REGION = "GB"
# The regions where a number grouped as they write theirs is a phone without a cue, and where a run
# of digits that is no possible number of the region set is read: those of every lexicon's language.
REGIONS = each(lambda lex: lex.regions)
# A run of seven digits or more, grouped or not: a number the region's reading may have split.
_RUN = re.compile(r"(?<![\w+])(?:\+|\(\d+\)\s?)?\d(?:[ ./-]?\d){6,}(?!\w)")
_BEFORE = re.compile(r"[\w+@.,/:-]")
_AFTER = re.compile(r"[\w@]|[.,:/]\d")

_CUES = phrases(each(lambda lex: lex.entities.phone_cues))
_CUE_WORD = re.compile(r"(?i)(?:" + _CUES + r")")
# A cue is a word of its own: "iPhone 15 Pro, bestelnummer 500-2291-7734" names no phone.
_CUE_BEFORE = re.compile(r"(?i)(?<![^\W\d_])(?P<cue>" + _CUES + r")\W*(?:\w+\W+){0,3}$")
_CUE_AFTER = re.compile(r"(?i)^\W{0,3}(?:\w+\W+){0,2}(?:" + _CUES + r")(?!\w)")
# "number" after a noun of its own names something else: "model number 55-887-1234", "numéro de série".
_NUMBER_NOUN = re.compile(r"(?i)(?:" + phrases(each(lambda lex: lex.entities.number_nouns)) + r")")
_NOUN_BEFORE = re.compile(r"(?<![\w-])(?P<word>[^\W\d_]+)\s+$")
_NOUN_AFTER = re.compile(r"\s+(?:de|of|del)\s+(?P<word>[^\W\d_]+)")
# Words that may stand next to "number" in a phone's cue: every lexicon's common words.
_PLAIN = frozenset(fold(w) for lex in LEXICONS.values() for w in (*lex.names.common_words, *lex.names.not_names))


def region_of(norm: str) -> str:
    """The region of an international phone's norm ("+4930..." → "DE"), or "" for a national one."""
    if not norm.startswith("+"):
        return ""
    try:
        return phonenumbers.region_code_for_number(phonenumbers.parse(norm)) or ""
    except phonenumbers.NumberParseException:
        return ""


def locale_region(name: str) -> str:
    """The region of a locale's name ("de_DE.UTF-8" → "DE"), or "" where it names none that
    libphonenumber knows ("C.UTF-8", "en")."""
    territory = name.partition(".")[0].partition("@")[0].partition("_")[2].upper()
    return territory if territory in phonenumbers.SUPPORTED_REGIONS else ""


def find(text: str, add: Add, region: str = DEFAULT_REGION) -> None:
    """``add("phone", start, end, norm)`` for each phone number of ``text``, read in ``region``; the
    norm is its digits, with ``+`` and the country code for an international one (``+441223842725``).

    A run of digits that is no possible number of ``region`` ("0151 23456789" in Britain, "1-800-555-0199"
    in Germany) is read in the lexicons' regions in turn, the first that reads it whole."""
    matches = PhoneNumberMatcher(text, region, leniency=Leniency.POSSIBLE)
    found = [(m.start, m.raw_string.rstrip(" .-/")) for m in matches]
    found = [(start, raw) for start, raw in found if _kept(text, start, raw)]
    for run in _RUN.finditer(text):
        covered = any(start <= run.start() and run.end() <= start + len(raw) for start, raw in found)
        if not covered and _kept(text, run.start(), run.group()) and _possible_elsewhere(run.group(), region):
            found = [(s, r) for s, r in found if not (s < run.end() and run.start() < s + len(r))]
            found.append((run.start(), run.group()))
    for start, raw in sorted(found):
        add("phone", start, start + len(raw), _norm(raw))


def _possible_elsewhere(raw: str, region: str) -> bool:
    """Whether ``raw`` reads whole as a possible number of one of the lexicons' regions."""
    return any(
        m.start == 0 and m.end == len(raw)
        for other in REGIONS
        if other != region
        for m in PhoneNumberMatcher(raw, other, leniency=Leniency.POSSIBLE)
    )


def _kept(text: str, start: int, raw: str) -> bool:
    """Whether the candidate ``raw`` at ``start`` is a phone: international, after a trunk prefix,
    said to be one, or a valid number written in groups."""
    number = digits(raw)
    if any(c.isalpha() for c in raw):
        return False  # an extension ("x12") or a hexadecimal code ("0x80070005")
    end = start + len(raw)
    if not 7 <= len(number) <= 15 or _BEFORE.match(text, max(0, start - 1), start) or _AFTER.match(text, end):
        return False  # "CU-4471-9902" is a code, "12.5" or "0x80070005" no phone
    if "/" in raw and (not raw.startswith("0") or raw.count("/") > 1):
        return False  # "2024/0012" is an invoice, "030/1234567" a Berlin number
    return (
        _international(raw)
        or raw.startswith(("0", "("))
        or _cued_before(text[max(0, start - 40) : start])
        or bool(_CUE_AFTER.search(text[end : end + 30]))
        or (not raw.isdigit() and _grouped_somewhere(raw))
    )


def _international(raw: str) -> bool:
    """Whether ``raw`` opens with a country code: after "+", or "00" before eight digits or more
    ("00418827" is a code)."""
    return raw.startswith("+") or (raw.startswith("00") and len(digits(raw)) >= 10)


def _norm(raw: str) -> str:
    """A phone's digits; an international one's in E.164, without a trunk prefix written in
    parentheses ("+31(0)20 1234567" → "+31201234567")."""
    if not _international(raw):
        return digits(raw)
    try:
        number = phonenumbers.parse("+" + digits(raw)[2:] if raw.startswith("00") else raw)
    except phonenumbers.NumberParseException:
        return "+" + digits(raw).removeprefix("00")
    return phonenumbers.format_number(number, PhoneNumberFormat.E164)


@lru_cache(maxsize=4096)
def _grouped_somewhere(raw: str) -> bool:
    """Whether ``raw``, a number without a prefix, is a valid number grouped as one of the lexicons'
    regions writes its numbers ("612 345 678" in Spain; not "12-03-2024" anywhere)."""
    return any(
        m.start == 0 and m.end == len(raw)
        for region in REGIONS
        for m in PhoneNumberMatcher(raw, region, leniency=Leniency.EXACT_GROUPING)
    )


def _cued_before(window: str) -> bool:
    """Whether a phone cue stands in ``window``, the text just before a number. "number" counts
    only after a common word or a phone word ("my number", "mobile number"), not after another noun."""
    m = _CUE_BEFORE.search(window)
    if m is None:
        return False
    if not _NUMBER_NOUN.fullmatch(m["cue"]):
        return True
    before = _NOUN_BEFORE.search(window, 0, m.start())
    after = _NOUN_AFTER.match(window, m.end())
    nouns = [x["word"] for x in (before, after) if x is not None]
    return all(fold(w) in _PLAIN or _CUE_WORD.fullmatch(w) for w in nouns)
