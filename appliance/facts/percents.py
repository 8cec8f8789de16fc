"""Percentages: rates, fees and limits ("2.75%", "0,5 %", "3 percent", "1.5-2%", "4 Prozent").

An answer that states an interest rate or a fee of "0.5%" that no passage and no turn gave is as
invented as a wrong amount, so percentages are facts of their own kind, ``percent``, whose norm is
the number alone: ``2.75``. A decimal comma is a decimal mark here ("2,75 %"), and so is a point
before three digits ("2.125%"): a rate of thousands of percent is rarer than one with three decimals.
Both ends of a range are percentages ("1.5-2%", "2 to 3 percent"); the words that say percent are
each lexicon's (``entities.percent_words``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from appliance.facts.amounts import parse_number, plain
from appliance.facts.text import phrases
from appliance.lexicon import each

_NUMBER = r"\d+(?:[.,]\d+)*"
_SIGN = r"(?:%|％|(?i:" + phrases(each(lambda lex: lex.entities.percent_words)) + r")(?!\w))"
# The low end of a range borrows the sign of the high end; "to" and its kin only between two numbers.
_RANGE = r"(?:\s?[-–]\s?|\s+(?i:to|bis|à|a|tot)\s+)"
PERCENT = re.compile(rf"(?<![\w.,])(?:(?P<low>{_NUMBER})\s?(?:%|％)?{_RANGE})?(?P<value>{_NUMBER})\s?{_SIGN}")


def find(text: str, add: Callable[[str, int, int, str], None]) -> None:
    """``add("percent", start, end, norm)`` for each percentage in ``text``, both ends of a range."""
    for m in PERCENT.finditer(text):
        for group in ("low", "value"):
            if m[group]:
                value = _value(m[group])
                if value is not None:
                    add("percent", m.start(group), m.end() if group == "value" else m.end(group), plain(value))


def _value(raw: str) -> Decimal | None:
    """The number of a percentage: one decimal mark, point or comma, is decimal whatever follows it."""
    marks = [c for c in raw if c in ",."]
    if len(marks) == 1:
        try:
            return Decimal(raw.replace(",", "."))
        except InvalidOperation:
            return None
    return parse_number(raw)
