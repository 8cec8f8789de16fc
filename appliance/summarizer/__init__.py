"""The summarizer stage: prompt, call and validation of one rolling summary version.

A small model summarizes well enough to carry the *gist* of a long conversation, but it drops and
invents exactly the facts that matter (seed 002, MODELS.md). So this module never trusts its output:
every version is checked by :func:`validate` before it may be stored as accepted, and the exact facts
travel in the ledger, not here.

Pure functions, except :func:`summarize` (one call to the model it is given) and the language
detector (:mod:`appliance.summarizer.language`, the only importer of ``lingua``), whose models are
loaded once. It imports no other stage: the entity extractor, the keys that say when two forms of a
fact are the same ("$9758" and "9758 in credit") and the token counter are passed in. The turn
layer reads the conversation's language from here too.

Secrets (a PIN, a card security code, a password, a one-time code: entities of ``SECRET_KINDS``)
never reach a summary, even when the conversation has them: they are validated like invented
facts, and a reason or a rejected text never carries their value.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from appliance.lexicon import LEXICONS
from appliance.protocols import ChatModel, OnToken, TokenCounter

# Re-exported: the turn's knowledge step and the knowledge bench read the customer's language from here.
from appliance.summarizer.language import conversation_language as conversation_language
from appliance.summarizer.language import customer_language as customer_language
from appliance.summarizer.language import detect_language
from appliance.types import Entity, Message, Sampling, SummaryVersion, Turn

SPEAKER = {"customer": "Customer", "agent": "Agent"}

# Seed 002's six categories, as the headings of the structured summary.
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("Issue and status", "what the customer wants and where it stands"),
    ("Names", "names of the customer, the agent and any person, place or business named"),
    ("Verification", "verification steps done and still pending"),
    (
        "Identifiers, dates, amounts",
        "every reference, booking or order number, phone number, postcode, "
        "train or flight number, date, time and amount, copied character for character",
    ),
    ("Commitments and deadlines", "what either side promised, and by when"),
    ("Current state", "what was last said and what happens next"),
)

# The prompt is English, so it names the conversation's language in English.
LANGUAGE_NAMES = LEXICONS["en"].language_names

# Entity kinds that a summary may legitimately paraphrase; every other kind is an exact fact that
# must occur in the transcript.
SOFT_KINDS = frozenset({"name", "person", "commitment", "deadline"})
# Entity kinds that may never be in a summary, whatever the conversation says.
SECRET_KINDS = frozenset({"secret"})

# Lines a small model writes when a category is empty ("Names: not provided"): they carry nothing,
# cost tokens, and (MODELS.md) sometimes claim that a fact stated earlier was "not provided".
_EMPTY_VALUE = re.compile(
    r"^\s*[-*]?\s*[^:\n]{1,40}:\s*"
    r"(none|n/?a|not (provided|mentioned|specified|stated|given|available)|unknown|-)\s*\.?\s*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*```[a-z]*\s*$", re.IGNORECASE)


Extract = Callable[[str], Sequence[Entity]]
# (kind, norm) → the keys a fact is filed or looked up under; two facts match when a lookup key of
# one is an index key of the other (``appliance.facts.entities.index_keys`` / ``lookup_keys``).
Keys = Callable[[str, str], Sequence[str]]


def _norm_keys(kind: str, norm: str) -> Sequence[str]:
    return (norm,)


@dataclass(frozen=True)
class Validation:
    """The verdict on one candidate summary: ``text`` is what would be stored (possibly cleaned)."""

    ok: bool
    text: str
    reason: str = ""


@dataclass(frozen=True)
class Source:
    """What one candidate summarizes, and so what it is checked against: the ``turns`` it covers
    beyond the ``previous`` version, the whole transcript's text, the conversation's ``language``
    (None: not checked) and the secrets the conversation gave (``secret_values``)."""

    turns: Sequence[Turn]
    previous: SummaryVersion | None
    transcript_text: str
    language: str | None = None
    secret_values: Collection[str] = ()


@dataclass(frozen=True)
class Checks:
    """How candidates are checked, the same for every summary: the cap in tokens and what counts
    them, the entity extractor, the languages the detector chooses among, and the keys that say when
    two forms of a fact are the same (``index``/``lookup``; by default only equal norms are)."""

    cap_tokens: int
    counter: TokenCounter
    extract: Extract
    languages: Sequence[str] = ()
    index: Keys = _norm_keys
    lookup: Keys = _norm_keys


def language_name(language: str) -> str:
    return LANGUAGE_NAMES.get(language.lower(), language)


def render_turns(turns: Sequence[Turn]) -> str:
    return "\n".join(f"{SPEAKER.get(t.role, t.role)} (turn {t.index}): {t.text}" for t in turns)


def summary_prompt(
    previous: SummaryVersion | None, new_turns: Sequence[Turn], language: str, *, max_words: int = 150
) -> tuple[Message, ...]:
    """The messages that ask for a new version: rolling (previous summary + new turns) or full (no previous).

    The structure follows seed 002: six named categories, exact facts copied, nothing inferred.
    Categories with nothing to say are left out rather than filled with "not provided", which a
    small model otherwise writes even for facts that were stated. ``max_words`` keeps the model
    below the token cap, so that it finishes its last line instead of being cut off.
    """
    name = language_name(language)
    what = "\n".join(f"- {title}: {meaning}." for title, meaning in CATEGORIES)
    system = (
        "You keep the running summary of a customer-service conversation for the agent who answers next. "
        "Write a clear, concise and factual summary. Include only information explicitly stated in the "
        "conversation; never infer, guess or make up anything, and never invent names. Copy identifiers, "
        "numbers, dates, times and amounts exactly as written. The summary has these lines:\n"
        f"{what}\nWrite it in {name}, the language of the conversation, in at most {max_words} words."
    )
    form = "\n".join(f"{title}: ..." for title, _ in CATEGORIES)
    rules = (
        f"Answer with the {len(CATEGORIES)} lines below and nothing else, replacing each ... with facts from "
        f"the conversation (write - when it says nothing about that):\n{form}"
    )
    if previous is None:
        body = f"Conversation:\n{render_turns(new_turns)}\n\nSummarize the conversation. {rules}"
    else:
        body = (
            f"Summary of the earlier conversation:\n{previous.text}\n\n"
            f"Conversation since then:\n{render_turns(new_turns)}\n\n"
            "Summarize the whole conversation: keep every fact of the earlier summary that still holds, add "
            "every new fact from the conversation since then (names, identifiers, amounts, requests, what was "
            f"agreed), and update the current state. {rules}"
        )
    return (Message("system", system), Message("user", body))


def summarize(
    model: ChatModel,
    messages: Sequence[Message],
    sampling: Sampling,
    *,
    cancel: threading.Event | None = None,
    on_token: OnToken | None = None,
) -> str:
    """One call to the summarizer model; returns the tidied text (not yet validated).

    ``sampling`` carries the configured temperature (0.3) and cap (250 tokens) as ``max_tokens``, so
    the model cannot run past the cap. An answer cut at the cap loses its unfinished last line: a
    half-written identifier is an invented one. ``on_token`` sees each piece as it comes (the
    worker's time limit follows them).
    """
    generation = model.generate(messages, sampling, on_token=on_token, cancel=cancel)
    text = generation.text
    if generation.finish_reason == "length" and "\n" in text:
        text = text.rsplit("\n", 1)[0]
    return tidy(text)


def tidy(text: str) -> str:
    """Drop code fences, empty category lines and blank runs that small models add."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    kept = [line for line in lines if not _FENCE.match(line) and not (line.strip() and _EMPTY_VALUE.match(line))]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def squash(text: str) -> str:
    """The form used to compare facts: lower case, without spaces and commas (as the probes compare)."""
    return re.sub(r"[\s,]+", "", text.lower())


def invented(
    text: str,
    transcript_text: str,
    extract: Extract,
    *,
    soft_kinds: frozenset[str] = SOFT_KINDS,
    reverse: bool = False,
    index: Keys = _norm_keys,
    lookup: Keys = _norm_keys,
) -> tuple[Entity, ...]:
    """Exact facts of ``text`` (identifiers, amounts, dates...) that ``transcript_text`` does not contain.

    A fact is contained when it is there in any form the keys equate ("$9758" for "9758 in credit",
    "October 8, 1980" for "10/08/1980"), or as the same characters. Secrets are not listed here
    (see :func:`secrets_in`). With ``reverse``, the other way round: facts of ``transcript_text``
    that ``text`` leaves out.
    """
    if reverse:
        text, transcript_text = transcript_text, text
    known = {k for e in extract(transcript_text) if e.norm for k in index(e.kind, e.norm)}
    haystack = squash(transcript_text)
    return tuple(
        e
        for e in extract(text)
        if e.kind not in soft_kinds
        and e.kind not in SECRET_KINDS
        and not any(k in known for k in lookup(e.kind, e.norm))
        and squash(e.text) not in haystack
    )


def secrets_in(text: str, extract: Extract, values: Collection[str] = ()) -> tuple[Entity, ...]:
    """The secrets ``text`` states (a PIN, a card security code...), which no summary may hold:
    those the extractor sees by their cue, and ``values`` the conversation gave as secrets ("3941"
    after "your PIN, please?"), wherever they stand."""
    found = [e for e in extract(text) if e.kind in SECRET_KINDS]
    for value in values:
        for m in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", text):
            if not any(m.start() < e.end and e.start < m.end() for e in found):
                found.append(Entity("secret", m.group(), m.start(), m.end(), "secret"))
    return tuple(sorted(found, key=lambda e: e.start))


def withheld(text: str, entities: Sequence[Entity]) -> str:
    """``text`` with the spans of ``entities`` replaced by "[withheld]" (a rejected version is stored too)."""
    for e in sorted(entities, key=lambda e: e.start, reverse=True):
        text = text[: e.start] + "[withheld]" + text[e.end :]
    return text


def remove_lines_with(text: str, entities: Sequence[Entity]) -> str:
    """``text`` without the lines (or, in a one-line text, the sentences) that carry ``entities``.

    A whole line goes, not just the value: "Reference: ABC123" without its value still claims a
    reference was given.
    """
    spans = sorted((e.start, e.end) for e in entities)
    kept = [text[a:b] for a, b in _pieces(text) if not any(s < b and e > a for s, e in spans)]
    return tidy("".join(kept))


_LINE = re.compile(r"[^\n]*\n?")
_SENTENCE_AND_SPACE = re.compile(r"[^.!?]*[.!?]*\s*")


def _pieces(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s lines, or of a one-line text's sentences with the spaces after them.

    Not :func:`appliance.lexicon.text.sentences`: these pieces cover the text to the last space, so
    that the kept ones join back into it unchanged, and a summary is cut by its lines first (one
    category a line).
    """
    cut = _LINE if "\n" in text.strip() else _SENTENCE_AND_SPACE
    return [(m.start(), m.end()) for m in cut.finditer(text) if m.start() != m.end()]


def validate(text: str, source: Source, checks: Checks) -> Validation:
    """Decide whether a candidate may become the accepted version, in the order that is cheapest to explain.

    - no secret (by its cue, or one of ``source.secret_values``, the secrets the conversation gave):
      lines with one are removed first, and the version is rejected (with the secret withheld from
      the stored text) if that removes more than half of it;
    - not empty, and within ``checks.cap_tokens`` (the seed's 250-token cap);
    - not longer than its source (the previous summary plus the turns it summarized): a summary
      that grows past what it summarizes only costs budget;
    - not a copy of the previous version that leaves out the new turns' facts;
    - no exact fact that the transcript does not contain in any form ``checks.index``/``lookup``
      equate: such lines are removed, and the version is rejected if that removes more than half of
      it (what is left cannot be trusted);
    - in the conversation's language (when the detector is sure of the summary's language).
    """
    text = tidy(text)
    notes: list[str] = []
    for step in (_without_secrets, _within_size, _not_a_copy, _without_invented, _in_language):
        outcome = step(text, source, checks)
        if isinstance(outcome, Validation):
            return outcome
        text, note = outcome
        if note:
            notes.append(note)
    return Validation(True, text, "; ".join(notes))


# Each step of :func:`validate` rejects the candidate, or returns its text (cleaned) and a note.
_Outcome = Validation | tuple[str, str]


def _without_secrets(text: str, source: Source, checks: Checks) -> _Outcome:
    leaks = secrets_in(text, checks.extract, source.secret_values)
    if not leaks:
        return text, ""
    kinds = ", ".join(sorted({e.norm or e.kind for e in leaks}))
    cleaned = remove_lines_with(text, leaks)
    if len(cleaned) * 2 < len(text) or secrets_in(cleaned, checks.extract, source.secret_values):
        return Validation(False, withheld(text, leaks), f"holds a secret ({kinds}); too much to remove")
    return cleaned, f"removed a secret ({kinds})"


def _within_size(text: str, source: Source, checks: Checks) -> _Outcome:
    if not text:
        return Validation(False, text, "empty summary")
    tokens = checks.counter.count_text(text)
    if tokens > checks.cap_tokens:
        return Validation(False, text, f"over the cap: {tokens} tokens > {checks.cap_tokens}")
    previous = source.previous.text if source.previous else ""
    source_tokens = checks.counter.count_text("\n".join(filter(None, [previous, render_turns(source.turns)])))
    if tokens > source_tokens:
        return Validation(False, text, f"longer than its source: {tokens} tokens > {source_tokens}")
    return text, ""


def _not_a_copy(text: str, source: Source, checks: Checks) -> _Outcome:
    """A small model often copies the previous summary; accepting it would mark the new turns as
    covered and take them out of the prompt while their facts are nowhere in the summary."""
    if source.previous is None or squash(text) != squash(source.previous.text):
        return text, ""
    new_facts = invented(
        text, render_turns(source.turns), checks.extract, reverse=True, index=checks.index, lookup=checks.lookup
    )
    if new_facts:
        listed = ", ".join(sorted({e.text for e in new_facts}))
        return Validation(False, text, f"unchanged: leaves out {listed} from the new turns")
    return text, ""


def _without_invented(text: str, source: Source, checks: Checks) -> _Outcome:
    # The previous version counts as a source: an operator may have added facts from outside the chat.
    known = "\n".join(filter(None, [source.transcript_text, source.previous.text if source.previous else ""]))
    bad = invented(text, known, checks.extract, index=checks.index, lookup=checks.lookup)
    if not bad:
        return text, ""
    cleaned = remove_lines_with(text, bad)
    listed = ", ".join(sorted({e.text for e in bad}))
    if len(cleaned) * 2 < len(text):
        return Validation(False, text, f"invented {listed} (not in the transcript); too much to remove")
    if invented(cleaned, known, checks.extract, index=checks.index, lookup=checks.lookup):
        return Validation(False, text, f"invented {listed} (not in the transcript); could not remove")
    return cleaned, f"removed invented {listed}"


def _in_language(text: str, source: Source, checks: Checks) -> _Outcome:
    if source.language:
        found = detect_language(without_headings(text), checks.languages or (source.language,))
        if found is not None and found != source.language:
            said = f"written in {language_name(found)}, the conversation is in {language_name(source.language)}"
            return Validation(False, text, said)
    return text, ""


# language ---------------------------------------------------------------------------------------


def without_headings(text: str) -> str:
    """The summary's content without the English headings the prompt asks for, for language detection."""
    titles = "|".join(re.escape(title) for title, _ in CATEGORIES)
    return re.sub(rf"^\s*[-*]?\s*({titles})\s*:", "", text, flags=re.IGNORECASE | re.MULTILINE)
