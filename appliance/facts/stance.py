"""Which of yes and no a text says: an answer to a yes/no question, and a document's own answer to one.

A text's stance is its first sentence's. It says ``no`` when it opens with a no (each lexicon's
``replies.no``: "No,", "Unfortunately,", "Nein,", "Non,"), and ``yes`` when it opens with a yes
(``replies.yes``), whatever follows ("Yes, but not on Sundays" is a yes with a limit). Otherwise it
says ``no`` when the sentence negates a verb or states an absence (``replies.negations``: "is not",
"doesn't", "ne ... pas"; ``replies.absences``: "there is no", "never"), and ``yes`` when it does
neither ("Bike parking is available."). A negation in a later clause after a contrast still counts
("The branch opens at 9 but does not open on Sundays" says no): the first sentence is short in the
answers this reads, and a limit stated as a no is what the customer must hear.

The words of every registered language are tried together, as a customer may switch: the patterns
are whole words, and those of one language are rarely words of another.
"""

from __future__ import annotations

import re
from typing import Literal

from appliance.facts.text import whole_words
from appliance.lexicon import each, either
from appliance.lexicon.text import SENTENCE_BREAK

Stance = Literal["yes", "no"]


def _opening(patterns: str) -> re.Pattern[str]:
    # An opening yes or no stands alone: "No, ..." or "Yes." (not "No charge applies", "Yesterday").
    return re.compile(r"\s*(?:" + (patterns or "(?!)") + r")(?:\s*[,.!;:—–-]|\s*$)", re.IGNORECASE)


_YES = _opening(either(lambda lex: lex.replies.yes))
_NO = _opening(either(lambda lex: lex.replies.no))
_DENIAL = whole_words(each(lambda lex: (*lex.replies.negations, *lex.replies.absences)))


def first_sentence(text: str) -> str:
    return SENTENCE_BREAK.split(text.strip(), maxsplit=1)[0]


def opens(text: str) -> bool:
    """Whether ``text`` opens with a yes or a no: it answers a yes/no question, whatever it was asked."""
    return bool(_YES.match(text) or _NO.match(text))


def stance(text: str) -> Stance:
    """``yes`` or ``no``: what ``text``'s first sentence says (see the module's docstring)."""
    if _NO.match(text):
        return "no"
    if _YES.match(text):
        return "yes"
    return "no" if _DENIAL.search(first_sentence(text)) else "yes"
