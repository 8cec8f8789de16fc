"""Conversation stage (early / mid / late), guessed from what has been said so far.

A pure function: the total number of turns is never known while a conversation is going on, so
position alone cannot say "late"; resolution cues in the customer's message do ("that's all",
"thank you", "bye"), in every language at once (a customer may switch): the lexicons' cues
(:mod:`appliance.lexicon`), which ``stage.late_cues`` and ``stage.open_cues`` change per language.
A cue does not make a turn late when the same message opens a new request ("thanks! I'd also like
a taxi?"): customers thank the agent all through a conversation. Early is position only: the first
few customer turns, where small models invent the most (seed 002).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from appliance.lexicon import LEXICONS
from appliance.lexicon.text import phrase_form
from appliance.types import Stage, Turn

EARLY_TURNS = 3

# The [INSTRUCTION] of each stage (seed 002: small models are weakest early, where they assume what
# was not said; late turns confirm and close). First chosen by ``appliance eval --judge`` runs
# (docs/measurements.md, "The stage additions"), then said in fewer words: they follow the question, so every token here is
# evaluated while the customer waits. Each names the agent's role: with the role only in the system
# message, answers spoke of "the customer" in the third person. ``stage.instructions`` replaces one;
# an empty text turns it off.
STAGE_INSTRUCTIONS: dict[Stage, str] = {
    "early": "Reply as the agent: ask for what you still need, one at a time; state nothing not given.",
    "mid": "Reply as the agent, using the details the customer already gave.",
    "late": "As the agent, confirm and close politely.",
}

# Part of the standing directive of every turn, after ``chat.instruction`` (:func:`standing`): a
# bank's agent never asks for a secret in a chat (the guard checks it: appliance.facts.asking). One
# short sentence, in the system message: none after the question, where every token is evaluated
# while the customer waits.
NEVER_ASK = "Never ask for a PIN, password, card security code or one-time code."

# The [INSTRUCTION] of a question whose prompt carries passages of the operator's documents, in place
# of its stage's: answer from the one passage that answers the question (the others are its
# neighbours: other questions, often of other places), its figures exactly, or say that none does
# (seed 003: no invented answer). ``knowledge.instruction`` replaces it.
GROUNDED_INSTRUCTION = (
    "Answer the customer's question as the agent, from the document above that answers it, with its exact "
    "figures; if none does, say so."
)

# The question that replaces a grounded prompt's directive to ask the responder, before it answers,
# whether the passages placed answer the customer's question: its first token's yes or no is read.
ANSWERABLE_QUESTION = "Do the documents above answer the customer's question? Reply with one word: yes or no."

# Resolution cues per language (ISO 639-1), from the lexicons. Matched as whole words, case-insensitively.
LATE_CUES: dict[str, tuple[str, ...]] = {code: lex.stage.late for code, lex in LEXICONS.items() if lex.stage.late}

# A new request in the same message keeps the conversation going, whatever thanks came with it.
# An open cue inside a late cue does not count ("that's all I need" is no request for more).
OPEN_CUES: dict[str, tuple[str, ...]] = {code: lex.stage.open for code, lex in LEXICONS.items() if lex.stage.open}

# Phrases that ask for a human ("a real person", "einen Mitarbeiter"), per language.
PERSON_CUES: dict[str, tuple[str, ...]] = {code: lex.stage.person for code, lex in LEXICONS.items() if lex.stage.person}

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


def asks_for_person(message: str, cues: Mapping[str, Sequence[str]] = PERSON_CUES) -> str | None:
    """The language of the first cue in ``message`` that asks for a human, or None (all languages
    are matched, whole words without case)."""
    text = _normalise(message)
    for lang in sorted(cues):
        if _pattern(tuple(cues[lang])).search(text):
            return lang
    return None


def cue_table(
    configured: Mapping[str, Sequence[str]], builtin: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """The built-in cue lists with each configured language replacing its own (``[]`` turns one off)."""
    table = {lang: tuple(cues) for lang, cues in builtin.items()}
    table.update({lang: tuple(cues) for lang, cues in configured.items()})
    return {lang: cues for lang, cues in table.items() if cues}


def standing(instruction: str) -> str:
    """The standing directive: the configured one (``chat.instruction``), then :data:`NEVER_ASK`."""
    return "\n".join(part for part in (instruction.strip(), NEVER_ASK) if part)


def prompt_texts(stage: Stage, additions: Mapping[Stage, str], system: str, standing: str) -> tuple[str, str]:
    """The system message and the [INSTRUCTION] of a turn at ``stage``.

    What holds at every turn, the role and then the standing directive (``chat.instruction``), is
    the system message: first in every prompt, so it is evaluated once and reused. Only what the
    customer's message decides, the stage's directive, follows the question: everything after the
    message is evaluated while the customer waits (docs/latency.md).
    """
    return f"{system}\n{standing}", additions.get(stage, "").strip()


def _normalise(text: str) -> str:
    """The phrase form, keeping ``?`` and ``-``, with no space before an apostrophe: word-tokenised
    text writes "that 's all", "I 'd like"."""
    return re.sub(r"\s+'", "'", phrase_form(text, keep="'?-"))


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
