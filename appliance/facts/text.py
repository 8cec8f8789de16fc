"""Text helpers shared by the extractors: case and accent folding, digits, and calendar words.

One module so that entities, names, secrets and slot answers fold text the same way: a fact is
matched in the form made here, and two forms made differently would never meet.
"""

from __future__ import annotations

import re
import unicodedata

APOS = "['’]"


def fold(text: str) -> str:
    """Lower case without accents ("Siobhán" → "siobhan"), for comparing words."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def compact(text: str) -> str:
    """Lower case, letters and digits only, accents removed: the form codes are compared in."""
    return "".join(c for c in fold(text) if c.isalnum())


def spaced(text: str) -> str:
    """Lower-case words and numbers without accents, joined by single spaces (phrases are compared
    in this form, with spaces around them so that "5 days" is not found in "15 days")."""
    return " ".join(re.findall(r"[^\W_]+", fold(text)))


def fold_words(text: str) -> frozenset[str]:
    """The words of ``text``, lower case and without accents (names are looked up word by word)."""
    return frozenset(re.findall(r"[^\W_]+", fold(text)))


def digits(text: str) -> str:
    """ASCII digits of ``text`` (Unicode digits such as ``٣`` or ``３`` included)."""
    return "".join(str(unicodedata.digit(c)) for c in text if c.isdigit())


def alternation(*alternatives: str) -> str:
    """A non-capturing alternation, longest first so that "thursday" wins over "thu"."""
    return "(?:" + "|".join(sorted(alternatives, key=len, reverse=True)) + ")"


def capitalised(word: str) -> bool:
    """Whether ``word`` starts the way a name does: an upper-case letter, or a letter of a script
    without case (Arabic, Chinese, Hindi...), where every word could be a name."""
    first = word[:1]
    return first.isalpha() and (first.isupper() or not first.islower())


# Months and weekdays in the configured stage languages; dates are compared as month-day numbers.
MONTHS: dict[str, int] = {}
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
        MONTHS[_name] = _number

WEEKDAYS: dict[str, str] = {}
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
        WEEKDAYS[_name] = _canon
