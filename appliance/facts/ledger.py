"""The fact ledger: every identifier, amount, date, name and commitment said in a conversation, by code.

The ledger is what keeps exact facts alive when older turns are summarised: it is extracted from
each turn with :mod:`appliance.facts.entities` (never by a model), so an order number from turn 3 is still
character for character in the prompt at turn 90.

Slots say which facts replace one another. Things a customer has one of at a time (their name, phone
number, email, postcode, account, card, username...) have one slot, ``phone:customer``, or one per
label, ``account:customer:savings``: a later value supersedes the old one in
``appliance.types.current_facts``, while both stay stored. Several values of a kind given together, or
with a word of addition ("I also have ..."), each get a slot of their own (``phone:customer=+4930...``),
so all are current. A correction (:mod:`appliance.facts.corrections`) takes the slot of the value it
corrects, whatever it is. Everything else (references, amounts, dates, a restaurant's phone number...)
is many-valued: a customer can hold two bookings, so each distinct value has its own slot,
``reference=w9945xis``; repeating a value only moves it to its latest mention. Labels and subjects
come from :mod:`appliance.facts.labels`.

A customer's reply is read with the agent's turn before it (:mod:`appliance.facts.slots`): "Yes,
Sarah Brown." after "Could I get your full name?" is the customer's name. Secrets are never values
here: a PIN (or its placeholder, once masked) is recorded as ``secret: PIN given`` with its turn,
and a full card number by its last four digits.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from appliance.facts import corrections, labels, names, phones, phrases, secrets, slots
from appliance.facts.checker import osa
from appliance.facts.matching import family
from appliance.facts.text import digits
from appliance.facts.vocabulary import Cues, vocabulary
from appliance.lexicon.text import fold
from appliance.types import Entity, LedgerEntry, Role, Turn, current_facts

# Kinds of which the customer has one current value, or one per label (a correction replaces it).
SINGLE_VALUED = frozenset(
    {
        "name",
        "phone",
        "email",
        "postcode",
        "account",
        "card",
        "birthdate",
        "address",
        "username",
        "customer_id",
        "member_number",
        "member_level",
    }
)


def slot_for(kind: str, norm: str, speaker: Role, label: str = "") -> str:
    """``kind:speaker`` (with ``:label`` where one tells several values apart) for single-valued
    personal facts, else ``kind=norm`` (one slot per value).

    An agent states many phone numbers and postcodes (of shops, hotels, taxis), so only the
    customer's own are single-valued; the agent's own name is single-valued too.
    """
    if kind in SINGLE_VALUED and (speaker == "customer" or kind == "name"):
        return f"{kind}:{speaker}" + (f":{fold(label)}" if label else "")
    return f"{kind}={norm}"


def entries_for(
    turn: Turn, asked: Turn | None = None, *, cues: Cues = None, prior: Sequence[LedgerEntry] = ()
) -> tuple[LedgerEntry, ...]:
    """The ledger entries of one turn, in the order they occur in its text.

    ``asked`` is the turn just before (the agent's request that a customer's reply answers); ``cues``
    the compiled request cues (:class:`~appliance.facts.vocabulary.Vocabulary`; None: the lexicons');
    ``prior`` the session's ledger so far, which a correction refers to ("sorry, it's 12345679").
    A name is filed under the person it names: the speaker's own ("my name is Dana", a reply to
    "your name?"), the other party's ("Thanks, Dana" from the agent names the customer), or, for a
    name spoken of ("your appointment with Dr. Johnson"), its own slot like any many-valued fact.
    """
    agent_turn = asked.index if asked is not None and asked.role != turn.role else None
    stated = any(p.turn == agent_turn for p in prior)  # the agent's turn just before stated a value
    reading = _reading(turn, asked, cues, prior, stated)
    ends = corrections.cues(turn.text, stated) if turn.role == "customer" else ()
    found = list(reading.entities)
    out: list[LedgerEntry] = []
    starts: list[int] = []
    taken = 0  # where the label the value before took ends: no label serves two values
    for i, e in enumerate(found):
        before = max(found[i - 1].end if i else 0, taken)
        after = found[i + 1].start if i + 1 < len(found) else len(turn.text)
        entry, taken = _entry(turn, e, reading, (before, after), out)
        if e.start in reading.own_names and not entry.label and names.one_word(e.text) and asked is not None:
            part = labels.name_part(asked.text) if asked.role != turn.role else ""
            if part:  # "And your surname?" → "Okonkwo": a part of the name, beside the first name given
                entry = dataclasses.replace(entry, label=part, slot=slot_for("name", entry.norm, turn.role, part))
        cue = corrections.cue_before(turn.text, e.start, ends) if ends else None
        if cue is not None:
            candidates = [*prior, *(x for x, s in zip(out, starts, strict=True) if s < cue)]
            named = corrections.names_kind(turn.text, cue, e)
            entry = _corrected(entry, corrections.target(e, candidates, agent_turn, named=named))
        elif turn.role == "agent":
            entry = _read_back(entry, prior, asks=_QUESTION.match(turn.text, e.end) is not None)
        elif entry.slot == slot_for(entry.kind, entry.norm, "customer", entry.label) and corrections.added(
            turn.text, e.start
        ):
            entry = dataclasses.replace(entry, slot=f"{entry.slot}={entry.norm}")  # "I also have ...": one more
        out.append(entry)
        starts.append(e.start)
    return tuple(out)


def _reading(turn: Turn, asked: Turn | None, cues: Cues, prior: Sequence[LedgerEntry], stated: bool) -> slots.Reading:
    """The turn's facts as :func:`slots.read` finds them, with a name, username or level given bare
    after a correction cue ("Korrektur: hmueller2"), or after a denial of a value the agent just
    stated ("I have the rental under Daniel Okafor, is that right?" → "no its Daniela Okafor")."""
    customer = turn.role == "customer"
    before = asked.text if asked is not None and asked.role != turn.role else None
    asked_at = asked.index if asked is not None else None
    reading = slots.read(turn.text, before, customer=customer, cues=cues, region=_region(cues, prior))
    if reading.signed is not None and _signs_another(reading, prior):
        kept = tuple(e for e in reading.entities if e.start != reading.signed)
        reading = slots.Reading(kept, reading.own_names - {reading.signed})
    ends = corrections.cues(turn.text, stated) if customer else ()
    if ends:
        given = [p.kind for p in prior if p.slot.startswith(f"{p.kind}:customer") or (stated and p.turn == asked_at)]
        given += [e.kind for e in reading.entities if e.end <= ends[-1]]
        extra = corrections.bare(turn.text, ends[-1], given)
        if extra is not None and not any(extra.start < e.end and e.start < extra.end for e in reading.entities):
            found = tuple(sorted((*reading.entities, extra), key=lambda e: (e.start, e.end)))
            own = reading.own_names | ({extra.start} if extra.kind == "name" else set())
            return slots.Reading(found, own, reading.signed)
    return reading


def _region(cues: Cues, prior: Sequence[LedgerEntry]) -> str:
    """Where a phone number without a country code belongs: the settings' region, else the country
    of the conversation's first international number, else the default."""
    configured = vocabulary(cues).region
    if configured:
        return configured
    first = next((p.norm for p in prior if p.kind == "phone" and p.norm.startswith("+")), "")
    return phones.region_of(first) or phones.DEFAULT_REGION


def _signs_another(reading: slots.Reading, prior: Sequence[LedgerEntry]) -> bool:
    """Whether a signature shares no word with the name the customer gave before: a signature names
    the one who wrote the message, so words that do not ("... Nike Air") are no name of theirs."""
    signed = next((e for e in reading.entities if e.start == reading.signed), None)
    if signed is None:  # another finder took the signature's words: there is no signature to weigh
        return False
    given = [set(e.norm.split()) for e in prior if e.slot == "name:customer"]
    return bool(given) and not any(set(signed.norm.split()) & words for words in given)


def _entry(
    turn: Turn, e: Entity, reading: slots.Reading, near: tuple[int, int], out: list[LedgerEntry]
) -> tuple[LedgerEntry, int]:
    """The entry of one entity: its kind and value as recorded, its label or subject, and its slot;
    and where its label ends (0 without one)."""
    kind, value, norm = _recorded(e)
    label = subject = ""
    taken = 0
    if turn.role == "customer" and kind != "secret":
        several = sum(x.kind == e.kind for x in reading.entities) > 1
        found = labels.label(turn.text, e, *near, several=several)
        if found is not None:
            kind, label, taken = found.kind, found.word, found.end
        elif e.kind == kind:  # "a billing ticket 30417": what the customer calls the code
            label = phrases.called(turn.text, e, single=kind in SINGLE_VALUED)
    elif turn.role == "agent" and kind in labels.SUBJECT_KINDS:
        subject = labels.subject(turn.text, e, reading.entities)
    slot = _slot(turn, e, kind, norm, label, reading, out)
    return LedgerEntry(kind, value, turn.index, turn.role, slot, norm, label, subject), taken


def _slot(
    turn: Turn, e: Entity, kind: str, norm: str, label: str, reading: slots.Reading, out: list[LedgerEntry]
) -> str:
    if kind == "secret":
        return f"secret={norm}"
    if kind == "name" and e.start not in reading.own_names:
        whose = names.role(turn.text, e.start, e.end)
        other: Role = "agent" if turn.role == "customer" else "customer"
        if whose == "other":
            return f"name={norm}"
        if whose == "holder":
            return slot_for(kind, norm, "customer", label)
        return slot_for(kind, norm, turn.role, label) if whose == "self" else slot_for(kind, norm, other)
    slot = slot_for(kind, norm, turn.role, label)
    if kind != "name" and any(x.slot == slot and x.norm != norm for x in out):
        return f"{slot}={norm}"  # several values of one kind in one turn: all current
    return slot


def _corrected(entry: LedgerEntry, target: LedgerEntry | None) -> LedgerEntry:
    """``entry`` in the place of the value it corrects: that value's kind, slot and label."""
    if target is None:
        return entry
    return LedgerEntry(
        target.kind, entry.value, entry.turn, entry.speaker, target.slot, entry.norm, entry.label or target.label
    )


# The rest of a sentence that asks ("... KD71120?", "... Daniel Okafor, is that right?").
_QUESTION = re.compile(r"[^.!?\n]*\?")


def _read_back(entry: LedgerEntry, prior: Sequence[LedgerEntry], *, asks: bool) -> LedgerEntry:
    """An agent's value that repeats a customer's code is of that code's kind and slot ("I can't find
    TCK-88120" after the customer's ticket TCK-88120), and so is a code nearly the same (one or two
    characters off) in a sentence that ``asks`` ("so that's KD71120?"); one that reads back a
    customer's own value, or nearly, is filed in that value's slot: a wrong read-back the customer
    then corrects is superseded."""
    if family(entry.kind) == "id":
        for c in reversed(current_facts(prior)):
            if c.speaker != "customer" or family(c.kind) != "id" or c.kind == "number":
                continue
            near = asks and entry.kind in (c.kind, "reference", "number") and _near(c.norm, entry.norm)
            if c.norm == entry.norm or near:
                return dataclasses.replace(entry, kind=c.kind, slot=c.slot, label=c.label)
    if entry.kind not in SINGLE_VALUED or entry.kind == "name":
        return entry
    for c in current_facts(prior):
        if c.slot.startswith(f"{c.kind}:customer") and family(c.kind) == family(entry.kind):
            if _near(*(digits(x) or x for x in (c.norm, entry.norm))):
                return LedgerEntry(entry.kind, entry.value, entry.turn, entry.speaker, c.slot, entry.norm, c.label)
    return entry


def _near(a: str, b: str) -> bool:
    """Whether two values are one or two characters apart: a value read back wrong."""
    return abs(len(a) - len(b)) <= 1 and osa(a, b) <= 2


def _recorded(e: Entity) -> tuple[str, str, str]:
    """(kind, value, norm) as the ledger keeps an entity: a secret only as the fact that one was given,
    a full card number by its last four digits."""
    if e.kind != "secret":
        return e.kind, e.text, e.norm
    if e.norm == "card":
        last4 = digits(e.text)[-4:]
        return "card", last4, last4
    return "secret", f"{secrets.LABELS.get(e.norm, e.norm)} given", e.norm


def entries(turns: Iterable[Turn], *, cues: Cues = None) -> tuple[LedgerEntry, ...]:
    """All entries of a transcript, oldest first; each turn read with the one before it and the
    entries before it."""
    out: list[LedgerEntry] = []
    previous: Turn | None = None
    for turn in turns:
        out.extend(entries_for(turn, previous, cues=cues, prior=out))
        previous = turn
    return tuple(out)


def superseded(entries: Iterable[LedgerEntry]) -> tuple[LedgerEntry, ...]:
    """Entries replaced by a later, different value of their slot (the old phone number, a corrected
    account number): stored, but not current (:func:`appliance.types.current_facts`)."""
    items = list(entries)
    now = {e.slot: e.norm for e in current_facts(items) if e.slot}
    return tuple(e for e in items if e.slot in now and now[e.slot] != e.norm)


def render(entries: Iterable[LedgerEntry]) -> str:
    """One line per fact: ``- reference: W9945XIS (turn 5, agent)``, ``- account (savings): 33334444 ...``."""
    return "\n".join(f"- {e.about}: {e.value} (turn {e.turn}, {e.speaker})" for e in entries)
