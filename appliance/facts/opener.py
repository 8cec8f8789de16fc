"""An answer that says yes and then states the opposite: "Yes, dogs are not allowed at the Corridor."

Small models open a reply to a yes/no question with a yes out of habit, then copy the negated
statement of the passage or the conversation they answer from. A customer cannot tell which half to
believe; the statement is the half that carries the source's words, so the yes is dropped ("Dogs are
not allowed at the Corridor."). Nothing else of the answer changes.

The yes (each lexicon's ``replies.yes``, followed by a comma or a full stop) counts as contradicted
when the clause after it, up to its first comma, negates its own verb in the yes's language
(``replies.negations``: "are not", "doesn't", "ne sont pas", "nicht", "no aceptan"). A clause that
opens with a contrast keeps the yes ("Yes, but not on Sundays": ``replies.contrasts``), and so does
a negation in a later clause ("Yes, we open at 9, not at 8").
"""

from __future__ import annotations

import re

from appliance.facts.text import whole_words
from appliance.lexicon import LEXICONS

# Per language: its yes as an opener, a negated verb, a contrast opening the clause.
_LANGUAGES = tuple(
    (
        re.compile(r"\s*(?:" + "|".join(lex.replies.yes) + r")\s*[,.!;:]\s*", re.IGNORECASE),
        whole_words(lex.replies.negations),
        re.compile(r"(?:" + ("|".join(lex.replies.contrasts) or "(?!)") + r")(?!\w)", re.IGNORECASE),
    )
    for lex in LEXICONS.values()
    if lex.replies.yes
)
_CLAUSE = re.compile(r"[^,;:.!?\n]*")


def settled(text: str) -> tuple[str, str]:
    """``text`` without an opening yes that its first clause contradicts, and the yes it dropped
    ("" and ``text`` unchanged when there is none)."""
    for yes, negation, contrast in _LANGUAGES:
        opened = yes.match(text)
        if opened is None:
            continue
        rest = text[opened.end() :]
        clause = _CLAUSE.match(rest)
        said = clause.group() if clause else ""
        if said and not contrast.match(said) and negation.search(said):
            return rest[:1].upper() + rest[1:], text[: opened.end()].strip()
    return text, ""
