"""Slot answers: what the agent just asked for says what the customer's bare reply carries.

Customers answer a question with the value alone: "Could I get your full name, please?" →
"Yes, Sarah Brown."; "Can you tell me your account number?" → "It's 153531981."; "Right, and your
PIN as well please." → "3941". The reply has no cue ("my name is"), so the extractor alone sees
nothing, or only "a number". Here the agent's previous turn decides: its request cues name the
kinds asked for, and the reply's values of that shape are read as those kinds, a secret as a
secret (:mod:`appliance.facts.secrets`).

The cues are phrases per language and kind, in each language's lexicon (:mod:`appliance.lexicon`);
``facts.request_cues`` in the settings adds languages or replaces one language's list of a kind (an
empty list turns it off), as ``stage.late_cues`` does for the stage's cues. They are compiled once
(:class:`~appliance.facts.vocabulary.Vocabulary`), and the functions here take that as ``cues``. A
cue counts in a sentence that asks (a question mark, "please", "could you"...), so "your account
number is 12345678." is not a request.

Pure functions of the two turns' text: the ledger stays a function of the transcript.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from appliance.facts import handles, labels, names, secrets, uncued
from appliance.facts.entities import extract, spaced
from appliance.facts.phones import DEFAULT_REGION
from appliance.facts.text import compact, digits
from appliance.facts.vocabulary import Cues, vocabulary
from appliance.lexicon import either
from appliance.lexicon.text import fold, sentences
from appliance.types import Entity, Turn

# A sentence that asks: a question mark, or a word of asking.
_ASKS = re.compile(r"(?i)\?|(?<!\w)(?:" + either(lambda lex: lex.requests.asking) + r")(?!\w)")
# "Can you provide the correct one?" after "... without a valid PIN.": the request points back.
_POINTS_BACK = re.compile(r"(?i)(?<!\w)(?:" + either(lambda lex: lex.requests.pointing) + r")(?!\w)")
_ID_KINDS = ("account", "card", "customer_id", "member_number", "ticket", "reference", "order", "case")
_ID_FAMILY = frozenset(
    {"reference", "order", "case", "account", "number", "card", "customer_id", "member_number", "ticket"}
)
# A value given bare: a run of digits, a code of letters and digits, or a code of capitals.
_BARE_VALUE = re.compile(
    r"(?<![\w@/.-])(?:\+?\d[\d \-]{1,22}\d|\d{3,}|(?=[A-Za-z0-9-]*\d)[A-Za-z0-9][A-Za-z0-9-]{2,}[A-Za-z0-9]|[A-Z]{5,})(?![\w@/]|[.,]\d)"
)
_LEAD = re.compile(r"(?i)^[\W_]*(?:(?:" + either(lambda lex: lex.requests.leads) + r")(?!\w)[\s,.:;!-]*)*")
# "... but in the app it's lenab2020": one more value of a kind the sentence gave with its label.
_IT_IS = re.compile(r"(?i)(?<!\w)(?:" + either(lambda lex: lex.names.it_is) + r")\s+")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
# Kinds that one more value after "it's" in the sentence of a labelled one takes, and their shape:
# "my customer number was 5512, now it's 5521", "my web username is lena_b but in the app it's lenab2020".
_CONTINUED = ("username", "customer_id", "member_number", "account", "ticket")
_CODE_SHAPE = re.compile(r"[A-Za-z0-9-]*\d[A-Za-z0-9-]*")
_CODE_AFTER = re.compile(r"[\w@]|[.,]\d")
_CLOSES = re.compile(r"[\s.!…]*")


@dataclass(frozen=True)
class Reading:
    """What a turn says: its entities (slot answers relabelled, secrets as ``secret``), the starts
    of names that are the speaker's own although no cue says so (a reply to "your name?"), and of
    those the start of a signature's."""

    entities: tuple[Entity, ...]
    own_names: frozenset[int] = frozenset()
    signed: int | None = None


def requested(text: str, cues: Cues = None) -> frozenset[str]:
    """The kinds an agent's turn asks the customer for (``appliance.types.KINDS``), from the
    sentences that ask."""
    if not text:
        return frozenset()
    requests = vocabulary(cues).requests
    asking = [s for s in sentences(text) if _ASKS.search(s)]
    found = {k for s in asking for k in requests.kinds(s)}
    if not found - {"open"} and any(_POINTS_BACK.search(s) for s in asking):
        found |= set(requests.kinds(text))
    return frozenset(found)


def mask(
    text: str,
    before: Turn | Sequence[Turn] | None = None,
    *,
    role: str = "customer",
    cues: Cues = None,
) -> str:
    """``text`` with its secrets masked. For a customer's text, ``before`` (the turn just before it,
    or the last few turns, newest last) counts too: a secret the agent just asked for is masked in a
    bare reply, and one the last four turns spoke of in a bare number of its shape. An agent's text
    is masked where a cue says so ("your one-time code is 482913")."""
    return secrets.masked(text, _secrets_of(text, before, role, cues))


def secret_values(turns: Sequence[Turn], *, cues: Cues = None) -> frozenset[str]:
    """The secrets a transcript holds as given (where masking was off), each as its text: what
    no summary may contain, with or without a cue next to it."""
    found: set[str] = set()
    for i, turn in enumerate(turns):
        found.update(
            turn.text[s.start : s.end] for s in _secrets_of(turn.text, turns[max(0, i - 6) : i], turn.role, cues)
        )
    return frozenset(found)


def _secrets_of(text: str, before: Turn | Sequence[Turn] | None, role: str, cues: Cues) -> tuple[secrets.Secret, ...]:
    masking = vocabulary(cues).masking
    if role != "customer":
        return secrets.find(text, masking=masking)
    turns = (before,) if isinstance(before, Turn) else tuple(before or ())
    last = turns[-1] if turns else None
    kinds = requested(last.text, cues) if last is not None and last.role == "agent" else frozenset()
    recent = frozenset(k for t in turns[-4:] for k in secrets.mentioned(t.text))
    recent |= frozenset(k for t in turns[-4:] if t.role == "agent" for k in requested(t.text, cues) & secrets.KINDS)
    return secrets.find(text, kinds, recent, masking)


def masked(turns: Sequence[Turn], *, cues: Cues = None) -> tuple[Turn, ...]:
    """A whole transcript masked, each turn with the turns before it (a transcript a client sends)."""
    out: list[Turn] = []
    for turn in turns:
        text = mask(turn.text, out[-6:], role=turn.role, cues=cues)
        out.append(turn if text == turn.text else Turn(turn.session_id, turn.index, turn.role, text, turn.created_at))
    return tuple(out)


def read(
    text: str, asked: str | None = None, *, customer: bool = True, cues: Cues = None, region: str = DEFAULT_REGION
) -> Reading:
    """The facts of a turn. For a customer's turn, ``asked`` (the agent's turn just before, if any)
    decides what its bare values are; a masked secret's placeholder becomes a ``secret`` entity.
    ``region``: where a phone number without a country code belongs."""
    found = labels.announced(text, extract(text, region))
    for kind, start, end in secrets.given(text):
        found = _put(found, Entity("secret", text[start:end], start, end, kind))
    if not customer:
        return Reading(tuple(sorted(found, key=lambda e: (e.start, e.end))))
    kinds = requested(asked, cues) if asked else frozenset()
    for s in secrets.find(text, kinds) if kinds & secrets.KINDS else ():
        found = _put(found, Entity("secret", text[s.start : s.end], s.start, s.end, s.kind))
    found = _slot_values(text, kinds, found)
    found = _handle_values(text, kinds, found)
    found = _more_handles(text, found)
    own: set[int] = set()
    roles = {names.role(text, e.start, e.end) for e in found if e.kind == "name"}
    cued = "self" in roles
    held = cued or "holder" in roles  # "first name Ayşe", "au nom de Martin, Sophie": no opening or signature
    span = None
    if not cued and "name" in kinds:
        span = uncued.reply_name(text)
        named = [e.start for e in found if e.kind == "name"]
        if span is None and named:
            own.add(named[0])  # "... and the name is rosa delgado": the name asked for, whatever its cue
    elif not held and (asked is None or "open" in kinds or not _ASKS.search(asked)):
        span = uncued.opening_name(text)
    signed = None
    if span is None and not held:
        span = uncued.signature(text)
        signed = span[0] if span else None
    if span is not None and not any(span[0] < e.end and e.start < span[1] for e in found if e.kind not in _NAMED_OVER):
        start, end = span
        found = _put(found, Entity("name", text[start:end], start, end, names.norm(text[start:end])))
        own.add(start)
    found.sort(key=lambda e: (e.start, e.end))
    return Reading(tuple(found), frozenset(own), signed)


# What a name given without a cue may stand over: an address, a date ("Jan" read as January).
_NAMED_OVER = frozenset({"name", "address", "date"})


def _slot_values(text: str, kinds: frozenset[str], found: list[Entity]) -> list[Entity]:
    """Values of the reply read as the kinds asked for: relabelled where the extractor saw a
    number, a date, or a number without separators that looked like a phone's ("00418827" after
    a request for a member number), added where it saw nothing (a short account number, a code of
    letters, the last digits of "the one that ends with 0077" after "Which card?")."""
    id_kind = next((k for k in _ID_KINDS if k in kinds), None)
    out = []
    for e in found:
        if e.kind == "date" and "birthdate" in kinds:
            e = Entity("birthdate", e.text, e.start, e.end, e.norm)
        elif e.kind == "number" and "phone" in kinds and 7 <= len(e.norm) <= 15 and id_kind is None:
            e = Entity("phone", e.text, e.start, e.end, e.norm)
        elif e.kind == "number" and "postcode" in kinds and id_kind is None:
            e = Entity("postcode", e.text, e.start, e.end, e.norm)
        elif e.kind in _ID_FAMILY and id_kind is not None and e.kind != id_kind and _fits(id_kind, e.text):
            e = Entity(id_kind, e.text, e.start, e.end, e.norm)
        elif (
            e.kind == "phone"
            and id_kind is not None
            and "phone" not in kinds
            and e.text.isdigit()
            and _fits(id_kind, e.text)
        ):
            e = Entity(id_kind, e.text, e.start, e.end, e.norm)
        out.append(e)
    if id_kind in ("card", "account"):
        for start, end in handles.tails(text):
            if not any(start < e.end and e.start < end for e in out):
                out.append(Entity(id_kind, text[start:end], start, end, text[start:end]))
    if id_kind is not None or "phone" in kinds or "postcode" in kinds:
        for m in _BARE_VALUE.finditer(text):
            raw = m.group().strip(" -")
            start = m.start() + m.group().index(raw)
            end = start + len(raw)
            if any(start < e.end and e.start < end for e in out if e.kind != "address"):
                continue
            number = digits(raw)
            if id_kind is not None and " " not in raw:
                if _fits(id_kind, raw):
                    out.append(Entity(id_kind, raw, start, end, compact(raw)))
            elif "phone" in kinds and 7 <= len(number) <= 15 and len(number) >= len(raw.replace(" ", "")) - 1:
                out.append(Entity("phone", raw, start, end, ("+" if raw.startswith("+") else "") + number))
            elif "postcode" in kinds and 3 <= len(compact(raw)) <= 8:
                out.append(Entity("postcode", raw, start, end, compact(raw)))
    if "address" in kinds and not any(e.kind == "address" for e in out):
        address = _reply_address(text)
        if address is not None:
            out.append(address)
    return out


def _fits(kind: str, value: str) -> bool:
    """Whether a bare value has the shape of the identifier asked for: a card is named by its last
    digits (a full number is a secret, masked before), so "LB-0043312" after "your library card
    number?" is none; the other codes take any shape."""
    return kind != "card" or (value.isdigit() and 2 <= len(value) <= 6)


def _handle_values(text: str, kinds: frozenset[str], found: list[Entity]) -> list[Entity]:
    """A username or membership level given bare, as the reply to a request for one ("sure.  it's
    rkowalski77", "gold"): the reply's first token after its lead, by the kind's shape."""
    for kind, at in (("username", handles.username_at), ("member_level", handles.level_at)):
        if kind in kinds and not any(e.kind == kind for e in found):
            lead = _LEAD.match(text)
            span = at(text, lead.end() if lead else 0)
            if kind == "username" and span is not None and text[span[0] : span[1]].isalpha():
                span = span if _CLOSES.fullmatch(text, span[1]) else None  # "probably my email"
            if span is not None and not any(span[0] < e.end and e.start < span[1] for e in found):
                value = text[span[0] : span[1]]
                found = [*found, Entity(kind, value, span[0], span[1], fold(value))]
    return found


def _more_handles(text: str, found: list[Entity]) -> list[Entity]:
    """One more value of a kind the sentence gave with its label, after "it's": a username with a
    digit or a ``._`` in it, a code with a digit for the identifiers ("my web username is lena_b
    but in the app it's lenab2020", "my customer number was 5512, now it's 5521")."""
    for e in [e for e in found if e.kind in _CONTINUED]:
        stop = _SENTENCE_END.search(text, e.end)
        for m in _IT_IS.finditer(text, e.end, stop.start() if stop else len(text)):
            if e.kind == "username":
                span = handles.username_at(text, m.end())
                ok = span is not None and any(c.isdigit() or c in "._" for c in text[span[0] : span[1]])
            else:
                code = _CODE_SHAPE.match(text, m.end())
                span = (code.start(), code.end()) if code else None
                ok = code is not None and len(code.group()) >= 3 and not _CODE_AFTER.match(text, code.end())
            if span is None or not ok or any(span[0] < x.end and x.start < span[1] for x in found):
                continue
            value = text[span[0] : span[1]]
            norm = fold(value) if e.kind == "username" else compact(value)
            found = [*found, Entity(e.kind, value, span[0], span[1], norm)]
    return found


def _reply_address(text: str) -> Entity | None:
    lead = _LEAD.match(text)
    start = lead.end() if lead else 0
    m = re.match(r"[^!?\n]{4,80}?(?=\.\s|[!?\n]|\.?$)", text[start:])
    if m is None:
        return None
    value = m.group().strip(" ,;:")
    if not (any(c.isdigit() for c in value) or sum(w[:1].isupper() for w in value.split()) >= 2):
        return None
    start = text.index(value, start)
    return Entity("address", value, start, start + len(value), spaced(value))


def _put(found: list[Entity], new: Entity) -> list[Entity]:
    """``found`` with ``new`` in place of the entities it overlaps (an address overlaps freely)."""
    return [e for e in found if e.kind == "address" or not (new.start < e.end and e.start < new.end)] + [new]
