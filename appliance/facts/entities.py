"""Deterministic fact extraction: identifiers, amounts, percentages, dates, times, phones, emails, postcodes, names, commitments.

A leaf shared by the ledger (what was said) and the checker (what the answer claims): both must see
the same entities with the same ``norm``, or a quoted fact would look invented. Everything is regular
expressions compiled once, so a typical answer takes a few hundred microseconds; parsers such as
dateparser cost milliseconds per call and would not fit the per-answer budget.

Rules are written for customer service in general (banks, shops, clinics, travel), not for one
dataset: codes are recognised by shape or by a label ("order number", "case #";
:mod:`appliance.facts.codes`), numbers by their separators. Labels, months, weekdays and the cues
of phones, addresses and dates of birth are every lexicon's (:mod:`appliance.lexicon`), and so
are the words of commitments, deadlines, the halves of the day and a day of the month said alone
(``times``, written for English so far): the code holds no language's words. Text may be
word-tokenised ("cb2 3qb", "I 'm", "19:45 .") as in MultiWOZ.

Kinds and their ``norm`` (the form used for matching):

==============  =====================================================================
reference       booking/confirmation codes, train IDs, generic codes: ``w9945xis``
order, case     codes after an order/invoice/tracking or case/claim label
ticket          codes after a ticket label ("ticket number TK-20931")
customer_id     codes after a customer or client label ("Kundennummer K-558812")
member_number   codes after a membership label ("my member number is 88120455")
username        a token after a username label ("username: rkowalski77"; :mod:`appliance.facts.handles`)
member_level    a level after its label or in "a gold member": ``gold``
account         account fragments ("account ending 4821" → ``4821``), IBANs
card            a card's last digits ("card ending 4821", "la carte qui finit par 3390") → ``4821``
number          an unlabelled run of 5+ digits (likely an identifier): ``40001``
percent         the number of a percentage ("2,75 %", "3 percent"): ``2.75``
                (:mod:`appliance.facts.percents`)
amount          canonical number + ISO currency: ``1234.5eur``, ``5gbp``; without one where the
                words say money ("9758 in credit", "balance is 7762"): ``9758``
date            ``03-03`` (month-day), ``2026-03-01``, ``12/03`` (order unknown), ``saturday``,
                ``~11`` (a day alone, "on the 11th")
birthdate       a date after a birth cue ("D.O.B is 04/04/1990"), in the form of dates
time            ``19:45``; 12-hour times without am/pm keep both readings: ``04:30|16:30``
phone           digits only, ``+`` kept for international numbers: ``+441223842725``
                (:mod:`appliance.facts.phones`)
email           lower-case address
postcode        lower-case, no spaces: ``cb23qb``
name            lower-case words without accents: ``dana whitfield`` (:mod:`appliance.facts.names`)
address         after "my address is" / "your address is": its words, ``12 main street``
secret          a PIN, card security code, password, one-time code or full card number
                (:mod:`appliance.facts.secrets`): the norm is its kind, ``pin``, never its value
commitment      the deadline's target as words: ``5 business days``, ``friday``, ``18 30``
==============  =====================================================================

Identifiers of letters only are codes after a label ("the reference number is WZNKIUGX"). What a
bare reply carries ("Yes, Sarah Brown." after "your name?") is read in :mod:`appliance.facts.slots`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from appliance.facts import amounts, clock, codes, handles, names, national_ids, percents, phones, secrets, spoken
from appliance.facts.amounts import parse_number
from appliance.facts.matching import IDENTIFIER_KINDS, family, index_keys, lookup_keys
from appliance.facts.text import MONTHS, WEEKDAYS, alternation, compact, digits, fold_words, phrases, spaced
from appliance.lexicon import Entities, Times, each, either
from appliance.types import Entity

# Matching forms and keys live in their own modules; they are re-exported here for the callers.
__all__ = [
    "IDENTIFIER_KINDS",
    "compact",
    "extract",
    "family",
    "fold_words",
    "index_keys",
    "introduces_self",
    "lookup_keys",
    "parse_number",
    "spaced",
]


def _either(pick: Callable[[Entities], tuple[str, ...]]) -> str:
    return either(lambda lexicon: pick(lexicon.entities))


def _phrases(pick: Callable[[Entities], Iterable[str]]) -> str:
    return phrases(each(lambda lexicon: pick(lexicon.entities)))


def _said(pick: Callable[[Times], Iterable[str]]) -> str:
    return phrases(each(lambda lexicon: pick(lexicon.times)))


# Short month forms only with a day next to them ("Mar 3"), and never "may"/"mar" alone.
_MONTH_RE = alternation(*(re.escape(m) for m in MONTHS))
# Months that are ordinary words too: a date only with an ordinal, a year or a capital ("May 5th").
_AMBIGUOUS_MONTHS = frozenset(each(lambda lexicon: lexicon.entities.ambiguous_months))
_ORDINALS = _said(lambda t: t.ordinals)
_ORD = rf"(?:{_ORDINALS})?"
_ARTICLE = phrases(each(lambda lexicon: lexicon.entities.articles))
_DATE_ARTICLES = _said(lambda t: t.day_articles)  # that belong to a date: "the 3rd of March"
_DAY = r"(?:3[01]|[12]\d|0?[1-9])"
_YEAR = r"(?:19|20)\d\d"
_WEEKDAY_NAMES = alternation(*WEEKDAYS)


# Patterns ----------------------------------------------------------------------------------------

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?!\w)")

_IBAN = re.compile(r"(?<!\w)[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?!\w)")

_ACCOUNT_BEFORE = re.compile(
    r"(?i)(?<!\w)(?:" + _either(lambda e: e.labels.get("account", ())) + r")(?!\w)\W*(?:[^\W\d_]+\W+){0,3}$"
)

_ISO_DATE = re.compile(rf"(?<![\w/.-])(?P<y>{_YEAR})-(?P<m>0?[1-9]|1[0-2])-(?P<d>{_DAY})(?![\w/-])")
_NUM_DATE = re.compile(
    rf"(?<![\w/.:,-])(?P<a>{_DAY})(?P<sep>[/.])(?P<b>{_DAY})(?:(?P=sep)(?P<y>{_YEAR}|\d\d))?(?![\w/]|[.,]\d)"
)
_DAY_MONTH = re.compile(
    rf"(?i)(?<!\w)(?:(?:{_DATE_ARTICLES})\s+)?(?P<d>{_DAY}){_ORD}(?:\s+(?:{_either(lambda e: e.day_of)}))?\s+"
    rf"(?P<m>{_MONTH_RE})(?!\w)(?:,?\s+(?:(?:{_either(lambda e: e.day_of)})\s+)?(?P<y>{_YEAR}))?"
)
_MONTH_DAY = re.compile(
    rf"(?i)(?<!\w)(?P<m>{_MONTH_RE})\.?\s+(?:(?:{_DATE_ARTICLES})\s+)?(?P<d>{_DAY}){_ORD}(?!\w)"
    rf"(?:,?\s+(?P<y>{_YEAR}))?"
)
# A day of the month alone, where the words say date: "on the 11th", "to 25th", "the 12th of this
# month"; not "5th and Main", "the 2nd floor".
# The endings of the languages whose words say a day alone: "- 22." in a code is no German day.
_DAY_ALONE = phrases(each(lambda lexicon: lexicon.times.ordinals if lexicon.times.day_leads else ()))
_ORDINAL_DAY = re.compile(
    rf"(?i)(?:(?<!\w)(?:{_said(lambda t: t.day_leads)})\s+|[-–]\s*)"
    rf"(?P<d>3[01]|[12]\d|0?[1-9])(?:{_DAY_ALONE})(?!\w)"
    rf"(?!\s+(?:{_said(lambda t: t.not_days_after)})\b)"
    rf"|(?<![\w/.-])(?P<d2>3[01]|[12]\d|0?[1-9])(?:{_DAY_ALONE})(?=\s+(?:{_said(lambda t: t.this_month)})(?!\w))"
)
_WEEKDAY = re.compile(r"(?i)(?<!\w)(?P<w>" + alternation(*WEEKDAYS) + r")(?!\w)")


# The words for a postcode in every lexicon ("zip code", "Postleitzahl", "code postal"), as requests name it.
_POSTCODE_WORDS = "|".join(
    r"\s?".join(re.escape(w) for w in phrase.split())
    for phrase in sorted(each(lambda lexicon: lexicon.requests.cues.get("postcode", ())), key=len, reverse=True)
)
_UK_POSTCODE = re.compile(r"(?i)(?<![\w-])(?P<pc>[a-z]{1,2}\d[a-z\d]?\s?\d[abd-hjlnp-uw-z]{2})(?![\w-])")
_OTHER_POSTCODE = re.compile(
    r"(?<![\w-])(?:(?P<nl>[1-9]\d{3}\s?[A-Z]{2})|(?P<ca>[A-Z]\d[A-Z]\s?\d[A-Z]\d))(?![\w-])"
    r"|(?i:(?:" + _POSTCODE_WORDS + r")(?!\w)\W{0,3}(?:(?:" + _either(lambda e: e.label_verbs) + r")\s+)?)"
    r"(?P<zip>\d{4,5}(?:-\d{4}|\s?[A-Z]{2})?)(?!\w)"
    r"|(?<=[A-Z]{2}\s)(?P<us>\d{5}(?:-\d{4})?)(?!\w)"
    # the postcode before a town that closes an address: "Hauptstraße 12, 10115 Berlin", "12 rue de
    # la Paix, 75002 Paris", "Calle Mayor 15, 28013 Madrid"
    r"|(?<=,\s)(?P<town>\d{4,5})(?=\s+[A-ZÀ-Þ][^\W\d_]+(?:[\s-][A-ZÀ-Þ][^\W\d_]+)?\s*(?:$|[.,;!?\n]))"
)

_NUMBER_WORDS = (
    rf"(?:\d{{1,3}}(?:\s?[-–]\s?\d{{1,3}}|\s(?:{_said(lambda t: t.ranges)})\s\d{{1,3}})?"
    rf"|{_said(lambda t: t.counts_said)})"
)
_DEADLINE = (
    rf"(?:{_said(lambda t: t.within)})\s+(?:(?:{_said(lambda t: t.within_next)})\s+)?{_NUMBER_WORDS}[\s-]+"
    rf"(?:(?:{_said(lambda t: t.unit_kinds)})\s+)?(?:{_said(lambda t: t.units)})"
    rf"|(?:{_said(lambda t: t.by)})\s+(?:(?:{_ARTICLE})\s+)?(?:{_said(lambda t: t.deadlines)}|"
    rf"(?:(?:{_said(lambda t: t.next)})\s+)?{_WEEKDAY_NAMES}|"
    rf"{_MONTH_RE}\s+{_DAY}{_ORD}|{_DAY}{_ORD}(?:\s+(?:{_either(lambda e: e.day_of)}))?\s+{_MONTH_RE}"
    r"|\d{1,2}(?::\d\d)?\s?(?:[ap]\.?m\.?)|\d{1,2}:\d\d)"
)
_COMMITMENT = re.compile(
    rf"(?i)(?<!\w)(?P<lead>(?:{_said(lambda t: t.promisers)}|(?:{_said(lambda t: t.promiser_determiners)})\s+\w+)"
    rf"\s*(?:{_said(lambda t: t.promise_verbs)})|(?:{_said(lambda t: t.promised)})s?)"
    r"(?P<mid>(?:[^.!?;\n]|[.,](?=\d)){0,60}?)\s(?P<deadline>" + _DEADLINE + r")(?!\w)"
)
_DEADLINE_WORD = re.compile(
    rf"(?i)^(?:{_said(lambda t: t.within)}|{_said(lambda t: t.by)})\s+"
    rf"(?:(?:{_ARTICLE})\s+(?:(?:{_said(lambda t: t.next)})\s+)?)?"
)
# A timetable ("will arrive by 12:07") is not a promise made to the customer; a delivery that
# "should arrive within 3 days" is.
_TIMETABLE = re.compile(rf"(?i)\b(?:{_said(lambda t: t.timetable)})\b")
_CLOCK = re.compile(r"\d:\d\d|\d\s?[ap]\.?m")


_ANY_DIGIT = re.compile(r"\d")

_ADDRESS_END = re.compile(
    r"(?i),?\s+(?:" + _phrases(lambda e: e.address_joins) + r")\s+|\s+(?:" + _phrases(lambda e: e.phone_words) + r")\b"
)
_BIRTH_CUE = re.compile(r"(?i)(?:" + _phrases(lambda e: e.birth_cues) + r")(?:\b|(?<=\.))(?:[^.!?]|\.(?!\s)){0,25}$")
_ADDRESS = re.compile(
    r"(?i)(?<!\w)(?:" + _phrases(lambda e: e.address_cues) + r")\s*(?:(?:" + _phrases(lambda e: e.address_verbs) + r")"
    r"(?!\w)|:)\s*:?\s*(?P<value>[^.!?\n]{4,80})"
)

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

# Extraction ---------------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def extract(text: str, region: str = phones.DEFAULT_REGION) -> tuple[Entity, ...]:
    """Every fact in ``text``, in order of position, a phone number without a country code read in
    ``region`` first. Spans of different kinds never overlap, except commitments, which contain their
    deadline (itself a date or time).

    Numbers said in words are read where numbers are ("call me on oh two oh, seven nine four six"
    is a phone, "card ending four four three one" a card's last digits), each entity keeping the
    span of what was said. Cached: the same turn is extracted for the ledger, the checker and the
    benchmarks.
    """
    said = spoken.view(text)
    if said is None:
        return _extract(text, region)
    out = []
    for e in _extract(said.text, region):
        start, end = said.span(e.start, e.end)
        out.append(Entity(kind=e.kind, text=text[start:end], start=start, end=end, norm=e.norm))
    return tuple(out)


def _extract(text: str, region: str) -> tuple[Entity, ...]:
    found: list[Entity] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, start: int, end: int, norm: str) -> None:
        if not norm or any(start < e and s < end for s, e in taken):
            return
        taken.append((start, end))
        found.append(Entity(kind=kind, text=text[start:end], start=start, end=end, norm=norm))

    for m in _EMAIL.finditer(text):
        add("email", m.start(), m.end(), m.group().casefold())
    for secret in secrets.find(text):  # before any other kind can claim a PIN's digits
        add("secret", secret.start, secret.end, secret.kind)
    handles.find(text, add)  # a card's last digits before an account's; a username before a code
    if _ANY_DIGIT.search(text):  # every pattern below needs a digit; most sentences have none
        for m in _IBAN.finditer(text):
            # its check digits say IBAN, or an account's label before it (a mistyped one is still theirs)
            if national_ids.iban_valid(m.group()) or _ACCOUNT_BEFORE.search(text, max(0, m.start() - 40), m.start()):
                add("account", m.start(), m.end(), compact(m.group()))
        percents.find(text, add)  # "2.75%" is a rate, never a date, a time or a code
        _dates(text, add)
        _ordinal_days(text, add, found)
        clock.find(text, add)
        amounts.find(text, add)
        codes.labelled(text, add)
        phones.find(text, add, region)
        _postcodes(text, add)
        codes.shaped(text, add)
        amounts.find_bare(text, add)
    codes.letter_codes(text, add)
    names.find_cued(text, add)
    for m in _WEEKDAY.finditer(text):
        add("date", m.start(), m.end(), WEEKDAYS[m.group("w").casefold()])
    commitments = [_commitment(text, m) for m in _COMMITMENT.finditer(text)]
    found.extend(c for c in commitments if c is not None)
    found.extend(_addresses(text))  # contain a postcode or a number of their own, like commitments
    found.sort(key=lambda e: (e.start, e.end))
    return tuple(_birthdate(text, e) if e.kind == "date" else e for e in found)


# Each adds the facts of one family that need a digit, in the order ``extract`` gives them room.


def _postcodes(text: str, add: Add) -> None:
    for m in _UK_POSTCODE.finditer(text):
        pc = m.group("pc")
        if any(c.isupper() for c in pc) and any(c.islower() for c in pc):
            continue  # "Cb2 3qB" is no one's way of writing a postcode; "Tr2 4th" is prose
        add("postcode", m.start(), m.end(), compact(pc))
    for m in _OTHER_POSTCODE.finditer(text):
        group = next(g for g in ("nl", "ca", "zip", "us", "town") if m.group(g))
        add("postcode", m.start(group), m.end(group), compact(m.group(group)))


def _birthdate(text: str, e: Entity) -> Entity:
    """A date after a birth cue ("My D.O.B is 04/04/1990", "born on May 11th") is a date of birth."""
    if _BIRTH_CUE.search(text[max(0, e.start - 40) : e.start]):
        return Entity(kind="birthdate", text=e.text, start=e.start, end=e.end, norm=e.norm)
    return e


def _addresses(text: str) -> list[Entity]:
    out = []
    for m in _ADDRESS.finditer(text):
        value = _ADDRESS_END.split(m["value"], maxsplit=1)[0].rstrip(" ,;:")
        if any(c.isdigit() for c in value) or sum(w[:1].isupper() for w in value.split()) >= 2:
            start = m.start("value")
            out.append(Entity(kind="address", text=value, start=start, end=start + len(value), norm=spaced(value)))
    return out


def _dates(text: str, add: Add) -> None:
    for m in _ISO_DATE.finditer(text):
        add("date", m.start(), m.end(), f"{m['y']}-{int(m['m']):02d}-{int(m['d']):02d}")
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for m in pattern.finditer(text):
            month_word = m["m"].casefold().rstrip(".")
            if month_word in _AMBIGUOUS_MONTHS and not _clearly_date(m.group()):
                continue  # "may 5" is a date, but "I may 3..." is not; require an ordinal or a year
            month = MONTHS[month_word]
            day = int(digits(m["d"]))
            year = m["y"]
            add("date", m.start(), m.end(), f"{year}-{month:02d}-{day:02d}" if year else f"{month:02d}-{day:02d}")
    for m in _NUM_DATE.finditer(text):
        a, b = int(digits(m["a"])), int(digits(m["b"]))
        if m["sep"] == "." and not m["y"]:
            continue  # "12.03" is as likely a price or a time as a date
        if (a > 12 and b > 12) or (len(m["a"]) + len(m["b"]) < 3 and not m["y"]):
            continue  # "3/4" is a fraction more often than a date
        year = m["y"]
        if year and len(year) == 2:
            year = "20" + year
        if a > 12:  # day first
            core = f"{b:02d}-{a:02d}"
        elif b > 12:  # month first
            core = f"{a:02d}-{b:02d}"
        else:
            core = f"{a:02d}/{b:02d}"  # order unknown; the checker tries both readings
        add(
            "date",
            m.start(),
            m.end(),
            f"{year}-{core}" if year and "/" not in core else (f"{year}/{core}" if year else core),
        )


def _ordinal_days(text: str, add: Add, found: list[Entity]) -> None:
    """A day of the month said alone ("on the 11th", "May 9th to 25th", "the 12th of this month"):
    in the month of a date just before it in the text, else as the day alone (``~11``)."""
    for m in _ORDINAL_DAY.finditer(text):
        group = "d" if m["d"] else "d2"
        day = int(m[group])
        month = ""
        for e in reversed(found):
            if (
                e.kind == "date"
                and e.end <= m.start()
                and m.start() - e.end <= 25
                and re.fullmatch(r"(?:\d{4}-)?\d\d-\d\d", e.norm)
            ):
                month = e.norm[:-2]
                break
        add("date", m.start(group), m.end(), f"{month}{day:02d}" if month else f"~{day:02d}")


_CLEARLY = re.compile(rf"(?i)\d(?:{_ORDINALS})(?!\w)|\d{{4}}|\b(?:{_ARTICLE}|{_either(lambda e: e.day_of)})\b")


def _clearly_date(span: str) -> bool:
    return bool(_CLEARLY.search(span)) or span[:1].isupper()


def _commitment(text: str, m: re.Match[str]) -> Entity | None:
    lead, mid = m["lead"], m["mid"]
    if _TIMETABLE.search(lead + mid) and _CLOCK.search(m["deadline"]):
        return None
    # the norm is the deadline's target ("5 business days", "friday", "18:30"), not its preposition,
    # so "within 5 days" quotes "in 5 days" and "by 18:30" quotes "at 18:30"
    deadline = _DEADLINE_WORD.sub("", m["deadline"], count=1)
    return Entity(
        kind="commitment",
        text=text[m.start() : m.end()],
        start=m.start(),
        end=m.end(),
        norm=spaced(deadline),
    )


def introduces_self(text: str, entity: Entity) -> bool:
    """Whether a name in ``text`` is the speaker's own ("my name is Dana", "this is Tom") rather than
    the name of the person spoken to ("Thanks, Dana", "Mr. Whitfield")."""
    return names.introduces_self(text, entity.start)
