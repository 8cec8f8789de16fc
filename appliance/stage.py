"""Conversation stage (early / mid / late), guessed from what has been said so far.

A pure function: the total number of turns is never known while a conversation is going on, so
position alone cannot say "late"; resolution cues in the customer's message do ("that's all",
"thank you", "bye"), in every configured language at once (a customer may switch). A cue does not
make a turn late when the same message opens a new request ("thanks! I'd also like a taxi?"):
customers thank the agent all through a conversation. Early is position only: the first few
customer turns, where small models invent the most (seed 002).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from appliance.types import Stage, Turn

EARLY_TURNS = 3

# The [INSTRUCTION] of each stage (seed 002: small models are weakest early, where they assume what
# was not said; late turns confirm and close). First chosen by ``appliance eval --judge`` runs
# (README, "Evaluation"), then said in fewer words: they follow the question, so every token here is
# evaluated while the customer waits. Each names the agent's role: with the role only in the system
# message, answers spoke of "the customer" in the third person. ``stage.instructions`` replaces one;
# an empty text turns it off.
STAGE_INSTRUCTIONS: dict[Stage, str] = {
    "early": "Reply as the agent: ask for what you still need, one at a time; state nothing not given.",
    "mid": "Reply as the agent, using the details the customer already gave.",
    "late": "As the agent, confirm and close politely.",
}

# Resolution cues per language (ISO 639-1). Matched as whole words, case-insensitively.
LATE_CUES: dict[str, tuple[str, ...]] = {
    "en": (
        "anything else",
        "nothing else",
        "nothing more",
        "that's all",
        "that is all",
        "that's it",
        "that is it",
        "that will be all",
        "all i need",
        "all i needed",
        "all the help i need",
        "what i needed",
        "thank you",
        "thanks",
        "cheers",
        "appreciate",
        "resolved",
        "sorted",
        "all set",
        "no further",
        "we're done",
        "i'm done",
        "not today",
        "bye",
        "goodbye",
        "good bye",
        "have a nice day",
        "have a good day",
    ),
    "de": (
        "danke",
        "vielen dank",
        "dankeschön",
        "das ist alles",
        "das wäre alles",
        "alles was ich brauche",
        "sonst nichts",
        "nichts weiter",
        "erledigt",
        "gelöst",
        "tschüss",
        "auf wiedersehen",
        "schönen tag",
    ),
    "fr": (
        "merci",
        "c'est tout",
        "ce sera tout",
        "rien d'autre",
        "tout ce dont j'ai besoin",
        "résolu",
        "réglé",
        "au revoir",
        "bonne journée",
    ),
    "es": (
        "gracias",
        "eso es todo",
        "nada más",
        "todo lo que necesito",
        "resuelto",
        "adiós",
        "hasta luego",
        "buen día",
    ),
    "nl": (
        "bedankt",
        "dank je",
        "dank u",
        "dat is alles",
        "dat was het",
        "verder niets",
        "opgelost",
        "tot ziens",
        "doei",
        "fijne dag",
    ),
}

# A new request in the same message keeps the conversation going, whatever thanks came with it.
# An open cue inside a late cue does not count ("that's all I need" is no request for more).
OPEN_CUES: dict[str, tuple[str, ...]] = {
    "en": (
        "?",
        "also",
        "another",
        "i need",
        "i'll need",
        "i will need",
        "i just need",
        "i'd like",
        "i would like",
        "i want",
        "i'm looking",
        "i am looking",
        "can you",
        "could you",
        "can i",
        "could i",
        "please find",
        "please book",
        "please send",
        "one more",
        "actually",
    ),
    "de": ("?", "auch", "außerdem", "ich brauche", "ich möchte", "ich hätte gern", "können sie", "könnten sie"),
    "fr": ("?", "aussi", "également", "je voudrais", "j'aimerais", "j'ai besoin", "pouvez-vous", "pourriez-vous"),
    "es": ("?", "también", "quisiera", "me gustaría", "necesito", "puede", "podría"),
    "nl": ("?", "ook", "ik wil", "ik zou graag", "ik heb nodig", "kunt u", "kun je"),
}

Cues = Mapping[str, Sequence[str]] | Sequence[str]


def detect(
    turns: Sequence[Turn],
    message: str,
    *,
    early_turns: int = EARLY_TURNS,
    late_cues: Cues = LATE_CUES,
    open_cues: Cues = OPEN_CUES,
) -> Stage:
    """Stage of the customer's next ``message`` after ``turns``.

    Cues are a table of language → cues (all languages are matched) or one flat list.
    """
    customer_turns = sum(1 for t in turns if t.role == "customer") + 1
    if customer_turns <= early_turns:
        return "early"
    text = _normalise(message)
    # overlapping matches: in "that's all the help I need" both "that's all" and "all the help I need" count
    closing = [m.span("cue") for m in _pattern(_flatten(late_cues), overlapping=True).finditer(text)]
    if not closing:
        return "mid"
    for m in _pattern(_flatten(open_cues)).finditer(text):
        if not any(s <= m.start() and m.end() <= e for s, e in closing):
            return "mid"
    return "late"


def cue_table(
    configured: Mapping[str, Sequence[str]], builtin: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """The built-in cue lists with each configured language replacing its own (``[]`` turns one off)."""
    table = {lang: tuple(cues) for lang, cues in builtin.items()}
    table.update({lang: tuple(cues) for lang, cues in configured.items()})
    return {lang: cues for lang, cues in table.items() if cues}


def prompt_texts(stage: Stage, additions: Mapping[Stage, str], system: str, standing: str) -> tuple[str, str]:
    """The system message and the [INSTRUCTION] of a turn at ``stage``.

    What holds at every turn, the role and then the standing directive (``chat.instruction``), is
    the system message: first in every prompt, so it is evaluated once and reused. Only what the
    customer's message decides, the stage's directive, follows the question: everything after the
    message is evaluated while the customer waits (README, "Latency").
    """
    return f"{system}\n{standing}", additions.get(stage, "").strip()


def _normalise(text: str) -> str:
    """Lower case, punctuation other than ``?`` and apostrophes as spaces, one space between words.

    Word-tokenised text writes "that 's all", "I 'd like"; typographic apostrophes are common too.
    """
    text = re.sub(r"[^\w\s'?-]", " ", text.casefold().replace("’", "'"))
    return re.sub(r"\s+", " ", re.sub(r"\s+'", "'", text)).strip()


def _flatten(cues: Cues) -> tuple[str, ...]:
    if isinstance(cues, Mapping):
        return tuple(c for lang in sorted(cues) for c in cues[lang])
    return tuple(cues)


@lru_cache(maxsize=64)
def _pattern(cues: tuple[str, ...], overlapping: bool = False) -> re.Pattern[str]:
    """One alternation for all cues, longest first; word boundaries only where a cue begins or ends
    with a letter. ``overlapping`` finds a match at every position (as a lookahead group ``cue``)."""
    parts = []
    for cue in sorted({_normalise(c) for c in cues if c.strip()}, key=lambda c: (-len(c), c)):
        body = re.escape(cue)
        if cue[0].isalnum():
            body = r"(?<!\w)" + body
        if cue[-1].isalnum():
            body += r"(?!\w)"
        parts.append(body)
    alternation = "|".join(parts) or r"(?!)"
    return re.compile(f"(?=(?P<cue>{alternation}))" if overlapping else alternation)
