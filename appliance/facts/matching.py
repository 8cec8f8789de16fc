"""When two facts are the same: the keys a fact is filed and looked up under.

The ledger, the checker and the summary's validator compare facts by these keys, never by their
text: "+44 1223 842725" quotes "01223 842725", "October 8, 1980" quotes "10/08/1980", "$9758"
quotes "9758 in credit", and a code read as a postcode in one turn is the same code as a reference
in another.
"""

from __future__ import annotations

import re

# Kinds whose values are codes: a wrong character in one of them is a contradiction of the others.
IDENTIFIER_KINDS = frozenset(
    {
        "reference",
        "order",
        "case",
        "ticket",
        "account",
        "card",
        "customer_id",
        "member_number",
        "username",
        "number",
        "postcode",
    }
)


def family(kind: str) -> str:
    """Kinds that may stand for one another: a code read as a postcode in one turn and as a
    reference in another is still the same code."""
    if kind in IDENTIFIER_KINDS:
        return "id"
    return "date" if kind == "birthdate" else kind


def index_keys(kind: str, norm: str) -> tuple[str, ...]:
    """The keys under which a fact that was said is filed, for :func:`lookup_keys` to find it."""
    fam = family(kind)
    if fam == "date":
        readings = _date_readings(norm)
        days = {f"~{r[-2:]}" for r in readings if re.fullmatch(r"\d\d[-/]\d\d", r)}
        days |= {f"~{r[:2]}" for r in readings if re.fullmatch(r"\d\d/\d\d", r)}
        return tuple(f"date:{k}" for k in (*readings, *sorted(days - set(readings))))
    if fam == "time":
        return tuple(f"time:{k}" for k in norm.split("|"))
    if fam == "phone":
        if norm.startswith("+"):
            number = norm[1:]
            return (f"phone+:{number}", *(f"phone~:{number[k:].lstrip('0')}" for k in range(1, 4)))
        return (f"phone0:{norm.lstrip('0')}",)
    if fam == "amount":
        number, currency = _amount_parts(norm)
        return (f"amount:{norm}", f"amount~:{number}") if currency else (f"amount:{norm}",)
    return (f"{fam}:{norm}",)


def lookup_keys(kind: str, norm: str) -> tuple[str, ...]:
    """The keys that find an answer's fact among :func:`index_keys` of what was said.

    Phones: an international number is the same as a national one that ends in its digits after a
    country code, but never the same as a different international one (+45 is not +44). Amounts: one
    said without a currency matches the same number with any currency, both ways ("$9758" quotes
    "9758 in credit"), but "$78" never quotes "78 pounds".
    """
    if family(kind) == "phone":
        if norm.startswith("+"):
            number = norm[1:]
            return (f"phone+:{number}", *(f"phone0:{number[k:].lstrip('0')}" for k in range(1, 4)))
        nsn = norm.lstrip("0")
        return (f"phone0:{nsn}", f"phone~:{nsn}")
    if family(kind) == "date":
        # a day said alone ("the 11th") is found in any date of that day; a full date needs its month
        return tuple(f"date:{k}" for k in _date_readings(norm))
    if family(kind) == "amount":
        # an amount said without a currency ("9758 in credit") is the same number in any currency
        number, currency = _amount_parts(norm)
        return (f"amount:{norm}", f"amount:{number}") if currency else (f"amount:{norm}", f"amount~:{norm}")
    return index_keys(kind, norm)


def _amount_parts(norm: str) -> tuple[str, str]:
    number = norm.rstrip("abcdefghijklmnopqrstuvwxyz")
    return number, norm[len(number) :]


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
