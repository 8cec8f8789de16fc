"""Amounts of money: numbers in any locale's notation, with a currency symbol, code or word.

"$1,234.50", "1.234,50 €", "EUR 12", "5 pounds", "45p": the norm is the number and its ISO code,
``1234.5usd``; where the words say money without a currency ("9758 in credit", "balance is 7762")
the number alone, ``9758``, which matches the same number in any currency
(:mod:`appliance.facts.matching`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from appliance.facts.text import alternation, digits, phrases
from appliance.lexicon import LEXICONS, each

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
# Every lexicon's words for money in a currency ("pounds", "Franken").
_WORDS = {word: code for lexicon in LEXICONS.values() for word, code in lexicon.entities.currencies.items()}
# "cents" is read as US cents: a guess, but the same guess on both sides of a comparison.
_SUBUNITS = {"cents": "USD", "cent": "USD", "pence": "GBP", "p": "GBP", "ct": "EUR"}

_NUMBER = r"\d{1,3}(?:[,.\u00a0\u202f' ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SYMBOL_RE = alternation(*(re.escape(s) for s in _SYMBOLS))
_CODE_RE = alternation(*_CODES)
_WORD_RE = alternation(*_WORDS)

AMOUNT = re.compile(
    rf"(?<![\w.,])(?:(?P<sym>{_SYMBOL_RE})\s?(?P<n1>{_NUMBER})(?:\s?(?P<tail1>{_WORD_RE}))?"
    rf"|(?i:(?P<code>{_CODE_RE}))\s?(?P<n2>{_NUMBER})"
    rf"|(?P<n3>{_NUMBER})\s?(?:(?P<sym3>{_SYMBOL_RE})|(?i:(?P<code3>{_CODE_RE})|(?P<word3>{_WORD_RE})"
    rf"|(?P<sub3>cents?|pence|ct)|(?P<p3>p)(?=\s|$))))(?![\w])"
)

# Amounts without a currency where the words say money: "9758 in credit", "balance is 7762". Their
# norm is the number alone, which matches the same number in any currency (:func:`lookup_keys`).
BARE_AMOUNT = re.compile(
    rf"(?i)(?<![\w.,])(?P<n1>{_NUMBER})\s+(?:{phrases(each(lambda lex: lex.entities.credit))})(?!\w)"
    rf"|(?<!\w)(?:{phrases(each(lambda lex: lex.entities.balance))})\s+"
    rf"(?:{phrases(each(lambda lex: lex.entities.balance_verbs))}|:)?\s*"
    rf"(?:now\s+|currently\s+)?(?P<n2>{_NUMBER})(?![\w%]|[.,:]\d)"
)


def find(text: str, add: Callable[[str, int, int, str], None]) -> None:
    """``add("amount", start, end, norm)`` for each amount with a currency in ``text``."""
    for m in AMOUNT.finditer(text):
        norm = amount_norm(m)
        if norm:
            add("amount", m.start(), m.end(), norm)


def find_bare(text: str, add: Callable[[str, int, int, str], None]) -> None:
    """``add("amount", start, end, norm)`` for each amount without a currency where the words say
    money (:data:`BARE_AMOUNT`)."""
    for m in BARE_AMOUNT.finditer(text):
        value = parse_number(m["n1"] or m["n2"])
        if value is not None:
            group = "n1" if m["n1"] else "n2"
            add("amount", m.start(group), m.end(group), plain(value))


def amount_norm(m: re.Match[str]) -> str:
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
    return f"{plain(value)}{currency.casefold()}"


def parse_number(raw: str) -> Decimal | None:
    """A number written with thousands separators and a decimal point or comma, in any locale.

    With both "," and "." the last one is the decimal mark; with one kind only, it separates
    thousands when every group after it has three digits ("1,850", "1.234.567"), else it is decimal.
    """
    s = raw.replace("\u00a0", " ").replace("\u202f", " ").replace("'", " ")
    s = "".join(digits(c) if c.isdigit() else c for c in s)
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


def plain(value: Decimal) -> str:
    return format(value.normalize(), "f")
