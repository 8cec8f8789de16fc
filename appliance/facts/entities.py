"""Deterministic fact extraction: identifiers, amounts, dates, times, phones, emails, postcodes, names, commitments.

A leaf shared by the ledger (what was said) and the checker (what the answer claims): both must see
the same entities with the same ``norm``, or a quoted fact would look invented. Everything is regular
expressions compiled once, so a typical answer takes a few hundred microseconds; parsers such as
dateparser cost milliseconds per call and would not fit the per-answer budget.

Rules are written for customer service in general (banks, shops, clinics, travel), not for one
dataset: codes are recognised by shape or by a label ("order number", "case #"), numbers by their
separators, dates and weekdays in English, German, French, Spanish and Dutch. Text may be
word-tokenised ("cb2 3qb", "I 'm", "19:45 .") as in MultiWOZ.

Kinds and their ``norm`` (the form used for matching):

==============  =====================================================================
reference       booking/confirmation codes, train IDs, generic codes: ``w9945xis``
order, case     codes after an order/invoice/tracking or case/ticket/claim label
account         account and card fragments ("ending 4821" → ``4821``), IBANs
number          an unlabelled run of 5+ digits (likely an identifier): ``40001``
amount          canonical number + ISO currency: ``1234.5eur``, ``5gbp``
date            ``03-03`` (month-day), ``2026-03-01``, ``12/03`` (order unknown), ``saturday``
time            ``19:45``; 12-hour times without am/pm keep both readings: ``04:30|16:30``
phone           digits only, ``+`` kept for international numbers: ``+441223842725``
email           lower-case address
postcode        lower-case, no spaces: ``cb23qb``
name            lower-case words without accents: ``dana whitfield``
commitment      the deadline's target as words: ``5 business days``, ``friday``, ``18 30``
==============  =====================================================================
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from appliance.types import Entity

# Kinds whose values are codes: a wrong character in one of them is a contradiction of the others.
IDENTIFIER_KINDS = frozenset({"reference", "order", "case", "account", "number", "postcode"})

# Helpers ------------------------------------------------------------------------------------------

_APOS = "['’]"


def _digits(text: str) -> str:
    """ASCII digits of ``text`` (Unicode digits such as ``٣`` or ``３`` included)."""
    return "".join(str(unicodedata.digit(c)) for c in text if c.isdigit())


def _compact(text: str) -> str:
    """Lower case, letters and digits only, accents removed: the form codes are compared in."""
    return "".join(c for c in _fold(text) if c.isalnum())


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(*alternatives: str) -> str:
    """A non-capturing alternation, longest first so that "thursday" wins over "thu"."""
    return "(?:" + "|".join(sorted(alternatives, key=len, reverse=True)) + ")"


# Months and weekdays in the configured stage languages; dates are compared as month-day numbers.
_MONTHS: dict[str, int] = {}
for _number, _spellings in enumerate(
    [
        "january jan januar janvier enero januari jänner",
        "february feb februar février fevrier febrero februari",
        "march mar märz maerz mars marzo maart",
        "april apr avril abril",
        "may mai mayo mei",
        "june jun juni juin junio",
        "july jul juli juillet julio",
        "august aug août aout agosto augustus",
        "september sep sept septembre septiembre",
        "october oct oktober octobre octubre",
        "november nov novembre noviembre",
        "december dec dezember décembre decembre diciembre",
    ],
    start=1,
):
    for _name in _spellings.split():
        _MONTHS[_name] = _number

_WEEKDAYS: dict[str, str] = {}
for _canon, _spellings in {
    "monday": "monday montag lundi lunes maandag",
    "tuesday": "tuesday dienstag mardi martes dinsdag",
    "wednesday": "wednesday mittwoch mercredi miércoles miercoles woensdag",
    "thursday": "thursday donnerstag jeudi jueves donderdag",
    "friday": "friday freitag vendredi viernes vrijdag",
    "saturday": "saturday samstag sonnabend samedi sábado sabado zaterdag",
    "sunday": "sunday sonntag dimanche domingo zondag",
}.items():
    for _name in _spellings.split():
        _WEEKDAYS[_name] = _canon

# Short month forms only with a day next to them ("Mar 3"), and never "may"/"mar" alone.
_MONTH_RE = _words(*(re.escape(m) for m in _MONTHS))
_ORD = r"(?:st|nd|rd|th|er|e|º|°|\.)?"
_DAY = r"(?:3[01]|[12]\d|0?[1-9])"
_YEAR = r"(?:19|20)\d\d"

# Currencies: symbol or word → ISO code. "$" alone is read as USD; "C$", "A$" are their own.
_SYMBOLS = {
    "US$": "USD",
    "C$": "CAD",
    "CA$": "CAD",
    "A$": "AUD",
    "AU$": "AUD",
    "NZ$": "NZD",
    "R$": "BRL",
    "HK$": "HKD",
    "S$": "SGD",
    "$": "USD",
    "€": "EUR",
    "£": "GBP",
    "¥": "JPY",
    "₹": "INR",
    "₩": "KRW",
    "₽": "RUB",
    "₺": "TRY",
    "₪": "ILS",
    "₫": "VND",
    "฿": "THB",
    "₱": "PHP",
    "zł": "PLN",
}
_CODES = (
    "USD EUR GBP JPY CHF CAD AUD NZD SEK NOK DKK PLN CZK HUF INR CNY RMB HKD SGD ZAR BRL MXN KRW "
    "ILS AED SAR THB PHP IDR MYR VND RON BGN ISK"
).split()
_WORDS = {
    "dollars": "USD",
    "dollar": "USD",
    "bucks": "USD",
    "euros": "EUR",
    "euro": "EUR",
    "pounds": "GBP",
    "pound": "GBP",
    "quid": "GBP",
    "yen": "JPY",
    "francs": "CHF",
    "franken": "CHF",
    "rupees": "INR",
    "yuan": "CNY",
    "kronor": "SEK",
    "kroner": "NOK",
    "pesos": "MXN",
    "reais": "BRL",
}
# "cents" is read as US cents: a guess, but the same guess on both sides of a comparison.
_SUBUNITS = {"cents": "USD", "cent": "USD", "pence": "GBP", "p": "GBP", "ct": "EUR"}

_NUMBER = r"\d{1,3}(?:[,.\u00a0\u202f' ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SYMBOL_RE = _words(*(re.escape(s) for s in _SYMBOLS))
_CODE_RE = _words(*_CODES)
_WORD_RE = _words(*_WORDS)

# Patterns ----------------------------------------------------------------------------------------

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?!\w)")

_ID_VALUE = r"#?\s?(?P<value>[A-Za-z0-9](?:[A-Za-z0-9/-]*[A-Za-z0-9])?)"
# German writes labels as compounds ("Kundennummer"), hence the optional "nummer".
_LABELS = {
    "reference": r"ref(?:erence)?|booking|confirmation|reservation|buchung|referenz|référence|reserva|boeking",
    "order": r"order|invoice|tracking|parcel|shipment|receipt|bestellung|bestell|auftrags?|rechnungs?|sendungs?|"
    r"commande|facture|pedido|factura|bestelling|factuur",
    "case": r"case|ticket|claim|complaint|incident|request|fall|vorgangs?|dossier|caso|zaak",
    "account": r"account|acct|card|policy|member(?:ship)?|customer|iban|kunden|konto|vertrags?|compte|cuenta|rekening|klant",
}
_LABELLED = re.compile(
    r"(?i)(?<!\w)(?P<label>" + "|".join(f"(?P<{k}>{v})" for k, v in _LABELS.items()) + r")(?:nummer|nr)?(?!\w)"
    r"(?:\s*(?:(?:number|num|no|nr|id|code)(?!\w)\.?|n°|nº|#))?"
    r"(?:\s*(?:(?:is|was|ist|lautet|est|es|of|reads)(?!\w)|:|=))?\s*:?\s*" + _ID_VALUE + r"(?!\w)"
)
_ACCOUNT_TAIL = re.compile(
    r"(?i)(?<!\w)(?:end(?:ing|s)?(?:\s+(?:in|with))?|last\s+(?:four|4|two|2|three|3)(?:\s+digits)?"
    r"(?:\s+(?:are|is|:))?|(?:\*|x|•|·){2,}[\s-]?)\s*:?\s*(?P<value>\d{2,6})(?!\w)"
)
_IBAN = re.compile(r"(?<!\w)[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?!\w)")

_ISO_DATE = re.compile(rf"(?<![\w/.-])(?P<y>{_YEAR})-(?P<m>0?[1-9]|1[0-2])-(?P<d>{_DAY})(?![\w/-])")
_NUM_DATE = re.compile(
    rf"(?<![\w/.:,-])(?P<a>{_DAY})(?P<sep>[/.])(?P<b>{_DAY})(?:(?P=sep)(?P<y>{_YEAR}|\d\d))?(?![\w/]|[.,]\d)"
)
_DAY_MONTH = re.compile(
    rf"(?i)(?<!\w)(?:the\s+)?(?P<d>{_DAY}){_ORD}(?:\s+(?:of|de|van))?\s+(?P<m>{_MONTH_RE})(?!\w)"
    rf"(?:,?\s+(?:de\s+)?(?P<y>{_YEAR}))?"
)
_MONTH_DAY = re.compile(
    rf"(?i)(?<!\w)(?P<m>{_MONTH_RE})\.?\s+(?:the\s+)?(?P<d>{_DAY}){_ORD}(?!\w)(?:,?\s+(?P<y>{_YEAR}))?"
)
_WEEKDAY = re.compile(r"(?i)(?<!\w)(?P<w>" + _words(*_WEEKDAYS) + r")(?!\w)")

_AMPM = r"(?P<ampm>(?:[ap]\.\s?m\.|[ap]\s?m)(?!\w))"  # "5pm." ends a sentence; "5 p.m." keeps its dot
_TIME = re.compile(
    rf"(?i)(?<![\w:.,])(?P<h>[01]?\d|2[0-3])(?:(?P<sep>[:h])(?P<mi>[0-5]\d)|\.(?P<mi2>[0-5]\d)(?=\s?[ap]\.?m))"
    rf"(?:\s?{_AMPM}|\s*(?P<part>in the (?:morning|afternoon|evening)|at night|tonight|uhr))?(?![\w:]|[.,]\d)"
)
_TIME_WORDS = re.compile(
    rf"(?i)(?<![\w:.,])(?P<h>1[0-2]|0?[1-9])(?:\s?(?:{_AMPM}|(?P<oclock>o\s?['’\"]\s?clock)(?!\w))"
    rf"(?:\s+(?P<part>in the (?:morning|afternoon|evening)|at night|tonight))?"
    rf"|\s+(?P<part2>in the (?:morning|afternoon|evening)|at night))"
)

_AMOUNT = re.compile(
    rf"(?<![\w.,])(?:(?P<sym>{_SYMBOL_RE})\s?(?P<n1>{_NUMBER})(?:\s?(?P<tail1>{_WORD_RE}))?"
    rf"|(?i:(?P<code>{_CODE_RE}))\s?(?P<n2>{_NUMBER})"
    rf"|(?P<n3>{_NUMBER})\s?(?:(?P<sym3>{_SYMBOL_RE})|(?i:(?P<code3>{_CODE_RE})|(?P<word3>{_WORD_RE})"
    rf"|(?P<sub3>cents?|pence|ct)|(?P<p3>p)(?=\s|$))))(?![\w])"
)

# Possessive groups: a long run of digits must not make the engine try every way to split it.
_PHONE = re.compile(
    r"(?<![\w+@.,/:-])(?P<num>(?:\+|00)?(?:\(\d{1,5}\)\s?)?\d++(?:[ .\-\u00a0](?:\(\d{1,5}\)\s?)?\d++){0,6}+)"
    r"(?![\w@]|[.,:]\d)"
)
_PHONE_CUE = re.compile(
    r"(?i)(?:phone|tel(?:ephone)?|call|ring|mobile|cell|fax|contact|number|whatsapp|sms|text|telefon|"
    r"téléphone|teléfono|telefoon|reach(?:ed)?)\W*(?:\w+\W+){0,3}$"
)

_UK_POSTCODE = re.compile(r"(?i)(?<![\w-])(?P<pc>[a-z]{1,2}\d[a-z\d]?\s?\d[abd-hjlnp-uw-z]{2})(?![\w-])")
_OTHER_POSTCODE = re.compile(
    r"(?<![\w-])(?:(?P<nl>[1-9]\d{3}\s?[A-Z]{2})|(?P<ca>[A-Z]\d[A-Z]\s?\d[A-Z]\d))(?![\w-])"
    r"|(?i:(?:zip(?:\s?code)?|postal\s?code|postcode|plz)\W{0,3}(?:is\s+)?)(?P<zip>\d{4,5}(?:-\d{4}|\s?[A-Z]{2})?)(?!\w)"
    r"|(?<=[A-Z]{2}\s)(?P<us>\d{5}(?:-\d{4})?)(?!\w)"
)
# A code: letters and digits mixed, 5+ characters, upper case (codes are rarely written in lower case
# unless a label says so), optionally joined by hyphens ("ORD-2024-0017") or after "Ref#".
_CODE = re.compile(
    r"(?<![\w@-])(?:Ref#|#)?(?P<value>(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)*)(?![\w@]|-\w)"
)
_NOT_CODE = re.compile(
    r"(?i)^\d+(?:st|nd|rd|th|am|pm|mg|ml|kg|km|cm|mm|gb|mb|kb|tb|ghz|mhz|kwh|mph|kph|ft|lbs|oz|hrs?|mins?|"
    r"secs?|k|m|h|x|d|p|s|g|l|v|w)$|^[A-Z]\d$"
)
_LONG_NUMBER = re.compile(r"(?<![\w.,@/:-])#?(?P<value>\d{5,})(?![\w@]|[.,:]\d)")

_NAME_WORD = r"[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*"
_PARTICLES = frozenset("van von de der den del la le da di du ten ter al bin".split())
_NAME_BODY = rf"(?P<name>{_NAME_WORD}(?:\s+(?:(?:{'|'.join(_PARTICLES)})\s+)?{_NAME_WORD}){{0,2}})"
_NAME_CUES = re.compile(
    r"(?<!\w)(?i:my\s+name\s+is|my\s+name\s*" + _APOS + r"\s*s|name\s*" + _APOS + r"\s*s|call\s+me|"
    r"i\s*" + _APOS + r"\s*m|i\s+am|speaking\s+with|you\s*" + _APOS + r"\s*re\s+speaking\s+to|"
    r"mein\s+name\s+ist|ich\s+heiße|ich\s+heisse|je\s+m\s*" + _APOS + r"\s*appelle|je\s+suis|"
    r"mon\s+nom\s+est|me\s+llamo|mi\s+nombre\s+es|soy|ik\s+heet|mijn\s+naam\s+is|ik\s+ben)\s+" + _NAME_BODY
)
# "This is Tom" introduces someone only at the start of a sentence or after a greeting, and only
# when the name ends the clause ("this is Tom from billing", not "this is Holy Trinity Church").
_THIS_IS = re.compile(
    r"(?:^|[.!?,;]\s*|(?i:hi|hello|hey|good\s+(?:morning|afternoon|evening))\W+)(?i:this\s+is)\s+"
    r"(?P<name>" + _NAME_WORD + r"(?:\s+" + _NAME_WORD + r")?)(?=\s*(?:[,.!?;]|$|(?i:from|speaking|here|with|at)\b))"
)
_HONORIFIC = re.compile(
    r"(?<!\w)(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|Mme|Mlle|Monsieur|Madame|Sr|Sra|Srta|Señor|Señora|Dhr|Mevr)"
    r"\.?\s+" + _NAME_BODY
)
_GREETING_NAME = re.compile(
    r"(?i:(?<!\w)(?:hi|hello|hey|dear|thanks|thank\s+you|welcome|bye|goodbye|sorry|hallo|bonjour|hola|danke|merci|gracias))"
    r",?\s+(?P<name>" + _NAME_WORD + r")(?=\s*[,.!?;]|\s*$)"
)
# Words that follow "I'm", "this is", "thanks," without being a name.
_NOT_NAMES = frozenset(
    """
    a an the this that it i you he she we they me my your our his her their sir madam maam ma'am miss
    sorry afraid not so very really just also here there back glad happy sure okay ok fine good great
    looking interested trying going calling writing wondering hoping planning traveling travelling
    coming staying visiting new still done ready able unable unsure confused calling again all
    everyone everybody anyone someone team guys folks again much lot lots everything anything nothing
    bye goodbye welcome hello hi hey yes no please thanks thank cheers ja nein oui non si sí nee
    customer service support agent calling from with in on at for to of by about
    american canadian british english german french spanish dutch italian irish scottish australian
    mr mrs ms mx dr prof herr frau mme mlle monsieur madame sr sra srta señor señora dhr mevr
    """.split()
)

_NUMBER_WORDS = r"(?:\d{1,3}(?:\s?[-–]\s?\d{1,3}|\s(?:to|or)\s\d{1,3})?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|thirty|a|an|a\s+few|a\s+couple\s+of)"
_DEADLINE = (
    rf"(?:within|in|inside|under)\s+(?:the\s+next\s+)?{_NUMBER_WORDS}[\s-]+(?:(?:business|working|calendar)\s+)?"
    r"(?:minutes?|hours?|days?|weeks?|months?|hrs?|mins?)"
    r"|(?:by|before|no\s+later\s+than|until)\s+(?:the\s+)?(?:end\s+of\s+(?:the\s+)?(?:day|week|month|business\s+day)"
    r"|tomorrow(?:\s+(?:morning|afternoon|evening))?|tonight|noon|midday|midnight|close\s+of\s+business|"
    r"(?:next\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    rf"{_MONTH_RE}\s+{_DAY}{_ORD}|{_DAY}{_ORD}(?:\s+of)?\s+{_MONTH_RE}|\d{{1,2}}(?::\d\d)?\s?(?:[ap]\.?m\.?)|\d{{1,2}}:\d\d)"
)
_COMMITMENT = re.compile(
    r"(?i)(?<!\w)(?P<lead>(?:we|i|you|it|someone|somebody|they|he|she|our\s+\w+|your\s+\w+|the\s+\w+|"
    r"a\s+\w+|an\s+\w+)\s*(?:" + _APOS + r"ll|will|shall|should|are\s+going\s+to|is\s+going\s+to|am\s+going\s+to|"
    r"promise\s+to|guarantee\s+to|can\s+expect)"
    r"|(?:refund|reimbursement|replacement|delivery|callback|call\s+back|response|reply|credit|payment|"
    r"confirmation|answer|decision|update)s?)"
    r"(?P<mid>(?:[^.!?;\n]|[.,](?=\d)){0,60}?)\s(?P<deadline>" + _DEADLINE + r")(?!\w)"
)
_DEADLINE_WORD = re.compile(
    r"(?i)^(?:within|in|inside|under|by|before|no\s+later\s+than|until)\s+(?:the\s+(?:next\s+)?)?"
)
# A timetable ("will arrive by 12:07") is not a promise made to the customer; a delivery that
# "should arrive within 3 days" is.
_TIMETABLE = re.compile(r"(?i)\b(?:arrive|arrives|arriving|depart|departs|leave|leaves|get\s+you\s+in|run|runs)\b")
_CLOCK = re.compile(r"\d:\d\d|\d\s?[ap]\.?m")


_ANY_DIGIT = re.compile(r"\d")

Add = Callable[[str, int, int, str], None]  # kind, start, end, norm

# Extraction ---------------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def extract(text: str) -> tuple[Entity, ...]:
    """Every fact in ``text``, in order of position. Spans of different kinds never overlap, except
    commitments, which contain their deadline (itself a date or time).

    Cached: the same turn is extracted for the ledger, the checker and the benchmarks.
    """
    found: list[Entity] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, start: int, end: int, norm: str) -> None:
        if not norm or any(start < e and s < end for s, e in taken):
            return
        taken.append((start, end))
        found.append(Entity(kind=kind, text=text[start:end], start=start, end=end, norm=norm))

    for m in _EMAIL.finditer(text):
        add("email", m.start(), m.end(), m.group().casefold())
    if _ANY_DIGIT.search(text):  # every pattern below needs a digit; most sentences have none
        for m in _IBAN.finditer(text):
            add("account", m.start(), m.end(), _compact(m.group()))
        _dates(text, add)
        _times(text, add)
        for m in _AMOUNT.finditer(text):
            norm = _amount_norm(m)
            if norm:
                add("amount", m.start(), m.end(), norm)
        for m in _LABELLED.finditer(text):
            value = m.group("value")
            if len(value) < 4 or not any(c.isdigit() for c in value):
                continue  # "booking was successful", "order 2 pizzas"
            kind = next(k for k in _LABELS if m.group(k))
            add(kind, m.start("value"), m.end("value"), _compact(value))
        for m in _ACCOUNT_TAIL.finditer(text):
            add("account", m.start("value"), m.end("value"), _digits(m.group("value")))
        for m in _PHONE.finditer(text):
            _phone(text, m, add)
        for m in _UK_POSTCODE.finditer(text):
            pc = m.group("pc")
            if any(c.isupper() for c in pc) and any(c.islower() for c in pc):
                continue  # "Cb2 3qB" is no one's way of writing a postcode; "Tr2 4th" is prose
            add("postcode", m.start(), m.end(), _compact(pc))
        for m in _OTHER_POSTCODE.finditer(text):
            group = next(g for g in ("nl", "ca", "zip", "us") if m.group(g))
            add("postcode", m.start(group), m.end(group), _compact(m.group(group)))
        for m in _CODE.finditer(text):
            value = m.group("value")
            if len(value.replace("-", "")) >= 5 and not _NOT_CODE.match(value):
                add("reference", m.start("value"), m.end("value"), _compact(value))
        for m in _LONG_NUMBER.finditer(text):
            add("number", m.start("value"), m.end("value"), _digits(m.group("value")))
    _names(text, add)
    for m in _WEEKDAY.finditer(text):
        add("date", m.start(), m.end(), _WEEKDAYS[m.group("w").casefold()])
    commitments = [_commitment(text, m) for m in _COMMITMENT.finditer(text)]
    found.extend(c for c in commitments if c is not None)
    found.sort(key=lambda e: (e.start, e.end))
    return tuple(found)


def _dates(text: str, add: Add) -> None:
    for m in _ISO_DATE.finditer(text):
        add("date", m.start(), m.end(), f"{m['y']}-{int(m['m']):02d}-{int(m['d']):02d}")
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for m in pattern.finditer(text):
            month_word = m["m"].casefold().rstrip(".")
            if month_word in ("may", "mai", "mar", "mei", "jun", "sep", "dec", "jan") and not _clearly_date(m.group()):
                continue  # "may 5" is a date, but "I may 3..." is not; require an ordinal or a year
            month = _MONTHS[month_word]
            day = int(_digits(m["d"]))
            year = m["y"]
            add("date", m.start(), m.end(), f"{year}-{month:02d}-{day:02d}" if year else f"{month:02d}-{day:02d}")
    for m in _NUM_DATE.finditer(text):
        a, b = int(_digits(m["a"])), int(_digits(m["b"]))
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


def _clearly_date(span: str) -> bool:
    return bool(re.search(r"\d(?:st|nd|rd|th)|\d{4}|\bthe\b|\bof\b", span, re.I)) or span[:1].isupper()


def _times(text: str, add: Add) -> None:
    for m in _TIME.finditer(text):
        hour, minute = int(_digits(m["h"])), int(_digits(m["mi"] or m["mi2"]))
        add("time", m.start(), m.end(), _time_norm(m["h"], hour, minute, m["ampm"], m["part"]))
    for m in _TIME_WORDS.finditer(text):
        hour = int(_digits(m["h"]))
        add("time", m.start(), m.end(), _time_norm(m["h"], hour, 0, m["ampm"], m["part"] or m["part2"]))


def _time_norm(raw_hour: str, hour: int, minute: int, ampm: str | None, part: str | None) -> str:
    """24-hour ``HH:MM``; a 12-hour clock time with nothing to say am or pm keeps both readings."""
    marker = (ampm or "").casefold().replace(".", "").replace(" ", "")
    part = (part or "").casefold()
    if marker == "pm" or any(w in part for w in ("afternoon", "evening", "night")):
        if hour < 12:
            hour += 12
    elif marker == "am" or "morning" in part:
        if hour == 12:
            hour = 0
    elif 1 <= hour <= 12 and not raw_hour.startswith("0") and part != "uhr":
        other = hour + 12 if hour < 12 else 0
        return f"{min(hour, other):02d}:{minute:02d}|{max(hour, other):02d}:{minute:02d}"
    return f"{hour:02d}:{minute:02d}"


def _amount_norm(m: re.Match[str]) -> str:
    raw = m["n1"] or m["n2"] or m["n3"]
    value = parse_number(raw)
    if value is None:
        return ""
    if m["sym"] or m["sym3"]:
        currency = _SYMBOLS[m["sym"] or m["sym3"]]
    elif m["code"] or m["code3"]:
        currency = (m["code"] or m["code3"]).upper().replace("RMB", "CNY")
    elif m["word3"]:
        currency = _WORDS[m["word3"].casefold()]
    else:
        sub = (m["sub3"] or m["p3"] or "").casefold()
        currency = _SUBUNITS.get(sub, "")
        if not currency:
            return ""
        value = value / 100
    return f"{_plain(value)}{currency.casefold()}"


def parse_number(raw: str) -> Decimal | None:
    """A number written with thousands separators and a decimal point or comma, in any locale.

    With both "," and "." the last one is the decimal mark; with one kind only, it separates
    thousands when every group after it has three digits ("1,850", "1.234.567"), else it is decimal.
    """
    s = raw.replace("\u00a0", " ").replace("\u202f", " ").replace("'", " ")
    s = "".join(str(unicodedata.digit(c)) if c.isdigit() else c for c in s)
    marks = [c for c in s if c in ",."]
    if "," in marks and "." in marks:
        decimal_mark = marks[-1]
        s = s.replace("." if decimal_mark == "," else ",", "").replace(" ", "").replace(decimal_mark, ".")
    elif marks:
        mark = marks[0]
        groups = s.replace(" ", "").split(mark)
        if len(groups) > 2 or all(len(g) == 3 for g in groups[1:]):
            s = "".join(groups)
        else:
            s = s.replace(" ", "").replace(mark, ".")
    else:
        s = s.replace(" ", "")
    try:
        return Decimal(s)
    except InvalidOperation:
        return None


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _phone(text: str, m: re.Match[str], add: Add) -> None:
    raw = m["num"].rstrip(" .-")
    digits = _digits(raw)
    if not 7 <= len(digits) <= 15:
        return
    international = raw.startswith("+") or raw.startswith("00")
    grouped = bool(re.fullmatch(r"\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}", raw))
    cued = bool(_PHONE_CUE.search(text[max(0, m.start() - 40) : m.start()]))
    if not (international or raw.startswith("0") or raw.startswith("(") or grouped or cued):
        return
    if " " in raw and not (international or raw.startswith("0") or raw.startswith("(") or cued):
        return  # "5 2010 3" is a list of numbers, not a phone
    if international:
        norm = "+" + (digits[2:] if raw.startswith("00") else digits)
    else:
        norm = digits
    add("phone", m.start("num"), m.start("num") + len(raw), norm)


def _names(text: str, add: Add) -> None:
    for pattern in (_NAME_CUES, _THIS_IS, _HONORIFIC, _GREETING_NAME):
        for m in pattern.finditer(text):
            start, end = m.start("name"), None
            for w in re.finditer(r"\S+", m["name"]):
                word = w.group()
                if word.casefold() in _PARTICLES and end is not None:
                    continue
                if not word[0].isupper() or word.casefold() in _NOT_NAMES:
                    break
                end = start + w.end()
            if end is None:
                continue
            first = text[start:end].split()[0]
            if pattern is not _HONORIFIC and first == text[start:end] and _is_sentence_start_word(first):
                continue
            add("name", start, end, " ".join(_fold(w) for w in text[start:end].split()))


_COMMON_CAPITALISED = frozenset(
    """
    Yes No Sure Please Thanks Thank Hello Hi Hey Okay Ok Great Good Fine Just Also Not Sorry Afraid
    Here There What Which When Where Why How Can Could Would Will Should Do Does Did Is Are Was Were
    In On At For To From With About After Before Now Then Today Tomorrow Tonight Yesterday
    Interested Looking Calling Trying Going Happy Glad Ready Unable Able New Back Done
    """.split()
)


def _is_sentence_start_word(word: str) -> bool:
    return word in _COMMON_CAPITALISED or word.casefold() in _WEEKDAYS or word.casefold() in _MONTHS


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


def compact(text: str) -> str:
    """The matching form of free text: lower case, letters and digits only, no accents."""
    return _compact(text)


def spaced(text: str) -> str:
    """Lower-case words and numbers without accents, joined by single spaces (phrases are compared
    in this form, with spaces around them so that "5 days" is not found in "15 days")."""
    return " ".join(re.findall(r"[^\W_]+", _fold(text)))


def fold_words(text: str) -> frozenset[str]:
    """The words of ``text``, lower case and without accents (names are looked up word by word)."""
    return frozenset(re.findall(r"[^\W_]+", _fold(text)))


# Matching ----------------------------------------------------------------------------------------


def family(kind: str) -> str:
    """Kinds that may stand for one another: a code read as a postcode in one turn and as a
    reference in another is still the same code."""
    return "id" if kind in IDENTIFIER_KINDS else kind


def index_keys(kind: str, norm: str) -> tuple[str, ...]:
    """The keys under which a fact that was said is filed, for :func:`lookup_keys` to find it."""
    fam = family(kind)
    if fam == "date":
        return tuple(f"date:{k}" for k in _date_readings(norm))
    if fam == "time":
        return tuple(f"time:{k}" for k in norm.split("|"))
    if fam == "phone":
        if norm.startswith("+"):
            digits = norm[1:]
            return (f"phone+:{digits}", *(f"phone~:{digits[k:].lstrip('0')}" for k in range(1, 4)))
        return (f"phone0:{norm.lstrip('0')}",)
    return (f"{fam}:{norm}",)


def lookup_keys(kind: str, norm: str) -> tuple[str, ...]:
    """The keys that find an answer's fact among :func:`index_keys` of what was said.

    Phones: an international number is the same as a national one that ends in its digits after a
    country code, but never the same as a different international one (+45 is not +44).
    """
    if family(kind) == "phone":
        if norm.startswith("+"):
            digits = norm[1:]
            return (f"phone+:{digits}", *(f"phone0:{digits[k:].lstrip('0')}" for k in range(1, 4)))
        nsn = norm.lstrip("0")
        return (f"phone0:{nsn}", f"phone~:{nsn}")
    return index_keys(kind, norm)


def _date_readings(norm: str) -> tuple[str, ...]:
    """A date and the shorter forms it may be quoted in: with and without its year, and both
    day-month orders of an ambiguous "12/03"."""
    year, _, rest = norm.partition("-") if re.match(r"\d{4}-", norm) else ("", "", norm)
    if not year and re.match(r"\d{4}/", norm):
        year, rest = norm[:4], norm[5:]
    if "/" in rest:
        a, b = rest.split("/")
        return (norm, rest, f"{a}-{b}", f"{b}-{a}")
    return (norm, rest) if year else (norm,)


def introduces_self(text: str, entity: Entity) -> bool:
    """Whether a name in ``text`` is the speaker's own ("my name is Dana", "this is Tom") rather than
    the name of the person spoken to ("Thanks, Dana", "Mr. Whitfield")."""
    return any(m.start("name") == entity.start for p in (_NAME_CUES, _THIS_IS) for m in p.finditer(text))
