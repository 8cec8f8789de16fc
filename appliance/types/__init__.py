"""Small frozen dataclasses passed between the stages.

Every stage maps one of these to the next and does no I/O, so each is cheap to build in tests.
``to_dict``/``from_dict`` turn them into JSON-ready dicts and back (the store keeps manifests and
check results as JSON; the API returns them as they are). The protocols the parts share are in
:mod:`appliance.protocols`.

Two families live in modules of their own, and are imported from here like the rest: an answer's
check and the guard's action (:mod:`appliance.types.checks`), and what the operator's documents gave
it (:mod:`appliance.types.grounding`).
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import TypeAdapter

from appliance.types.checks import REPLACED_BY as REPLACED_BY
from appliance.types.checks import AnswerSource as AnswerSource
from appliance.types.checks import CheckResult as CheckResult
from appliance.types.checks import Entity as Entity
from appliance.types.checks import Finding as Finding
from appliance.types.checks import GuardAction as GuardAction
from appliance.types.grounding import Citation as Citation
from appliance.types.grounding import FetchDecision as FetchDecision
from appliance.types.grounding import FetchReason as FetchReason
from appliance.types.grounding import Grounding as Grounding
from appliance.types.grounding import Judgement as Judgement
from appliance.types.grounding import Passage as Passage

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Role = Literal["customer", "agent"]
Stage = Literal["early", "mid", "late"]
Author = Literal["model", "operator", "fallback"]
ChatRole = Literal["system", "user", "assistant"]

ROLES: tuple[str, ...] = typing.get_args(Role)
STAGES: tuple[str, ...] = typing.get_args(Stage)

# What an agent's request can ask a customer for (the keys of ``facts.request_cues`` and of each
# lexicon's request cues); "open" is a general offer of help ("how can I help?"), after which a
# customer may open with their name unasked.
KINDS: tuple[str, ...] = tuple(
    "name account card reference order case birthdate phone email postcode address pin cvv password otp open "
    "username customer_id member_number member_level ticket".split()
)
# What a customer can ask to hear again, in matching order: a longer, more specific topic takes its
# words first ("date of birth" before "date", "email address" before "address", "account number"
# before a bare "number"). The keys of ``facts.readback_cues`` (besides ``request``) and of each
# lexicon's read-back topics.
READBACK_TOPICS: tuple[str, ...] = tuple(
    "birthdate email phone postcode address customer_id member_number member_level username ticket card account "
    "train order case reference amount name date time".split()
)


# The conversation's state on the branch floor (``appliance.turn.floor``): the model answers (``bot``),
# a person is asked for (``needs_person``), a person holds it (``with_person``), or it is over (``closed``).
FloorState = Literal["bot", "needs_person", "with_person", "closed"]
FLOOR_STATES: tuple[str, ...] = typing.get_args(FloorState)


@dataclass(frozen=True)
class Floor:
    """Who has a conversation: its state, why (``needs_person``: ``asked``, ``button`` or ``guard``),
    since when (epoch seconds; 0 for a session that never changed), and by whom (the client key of the
    caller that made the change: for ``with_person``, the operator who holds it)."""

    state: FloorState = "bot"
    reason: str = ""
    since: float = 0.0
    by: str = ""


@dataclass(frozen=True)
class Session:
    id: str
    created_at: float
    title: str = ""
    policy: str = "raw"
    summary_paused: bool = False
    floor: Floor = field(default_factory=Floor)


@dataclass(frozen=True)
class Turn:
    """One stored message of the transcript. ``index`` counts from 0 within the session."""

    session_id: str
    index: int
    role: Role
    text: str
    created_at: float = 0.0


@dataclass(frozen=True)
class SummaryVersion:
    """One version of a session's rolling summary; it covers turns ``0..covers_to`` inclusive."""

    session_id: str
    version: int
    text: str
    covers_to: int
    author: Author = "model"
    status: Literal["accepted", "rejected"] = "accepted"
    reason: str = ""
    created_at: float = 0.0


@dataclass(frozen=True)
class LedgerEntry:
    """A fact extracted by code from one turn: the exact text, what kind it is and where it came from.

    ``slot`` groups values that supersede each other (a corrected phone number replaces the old
    one in the prompt, while both stay stored: the old one is superseded); ``norm`` is the form used
    for matching. ``label`` tells several values of one kind apart ("savings", "mobile"), and
    ``subject`` says what a value is about where the turn names it ("Lakeside Hotel"), as written.
    """

    kind: str
    value: str
    turn: int
    speaker: Role
    slot: str = ""
    norm: str = ""
    label: str = ""
    subject: str = ""

    @property
    def about(self) -> str:
        """The kind with what tells this value apart: ``account (savings)``, ``phone (Lakeside Hotel)``."""
        extra = ", ".join(x for x in (self.label, self.subject) if x)
        return f"{self.kind} ({extra})" if extra else self.kind


def current_facts(entries: Iterable[LedgerEntry]) -> tuple[LedgerEntry, ...]:
    """The current facts of a ledger: what the prompt and the checker's retry show of it.

    * The latest entry of each ``slot`` is current (the highest ``turn``; within a turn, the later
      one), so a corrected phone number replaces the old one while both stay stored. An entry
      without a slot stands for itself, by its kind and ``norm`` (its value when it has no norm).
    * A name restated in part does not replace it: after "Dana Whitfield", "Thanks, Dana" leaves
      "Dana Whitfield" current, with the turn it was said in.
    * Order: by turn, oldest first; within a turn, in the order given. So repeating a value moves it
      to its latest mention, and the facts of one turn are together, as the prompt groups them.
    """
    ordered = sorted(entries, key=lambda e: e.turn)  # stable: a turn's entries keep their order
    latest: dict[str, int] = {}  # slot -> position in ``ordered`` of its current entry
    for pos, entry in enumerate(ordered):
        key = entry.slot or f"{entry.kind}\x00{entry.norm or entry.value}"
        held = latest.get(key)
        if held is not None and _restates_name(entry, ordered[held]):
            continue
        latest[key] = pos
    return tuple(ordered[pos] for pos in sorted(latest.values()))


def _restates_name(new: LedgerEntry, old: LedgerEntry) -> bool:
    """``new`` is a name made of some, not all, of ``old``'s words ("Dana" of "Dana Whitfield")."""
    return new.kind == old.kind == "name" and set(new.norm.split()) < set(old.norm.split())


@dataclass(frozen=True)
class Snapshot:
    """Everything the hot path needs to know about a session before answering."""

    session: Session
    turns: tuple[Turn, ...]
    summary: SummaryVersion | None = None
    ledger: tuple[LedgerEntry, ...] = ()


@dataclass(frozen=True)
class Message:
    role: ChatRole
    content: str


@dataclass(frozen=True)
class PartManifest:
    """One part of a prompt: its name, token count and which turns it carries."""

    name: str
    tokens: int
    turns: tuple[int, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Manifest:
    """What went into a prompt and what was left out, so that nothing is dropped silently.

    ``cuts`` lists, in order, every reduction made to fit the budget. ``passages`` are the document
    passages placed, best first; ``cut_passages`` those retrieved for the question that did not fit.
    """

    policy: str
    budget: int
    total_tokens: int
    parts: tuple[PartManifest, ...]
    verbatim_turns: tuple[int, ...] = ()
    summarized_turns: tuple[int, ...] = ()
    recalled_turns: tuple[int, ...] = ()
    cut_turns: tuple[int, ...] = ()
    cuts: tuple[str, ...] = ()
    fallback: bool = False
    passages: tuple[Citation, ...] = ()
    cut_passages: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    manifest: Manifest


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.7
    top_p: float = 0.9
    top_k: int = 40
    repeat_penalty: float = 1.1
    max_tokens: int = 256
    seed: int = -1
    ignore_eos: bool = False  # generate exactly max_tokens (benchmarks, tests of long answers)


@dataclass(frozen=True)
class Generation:
    """A finished answer from a model, with the counts and times that came with it."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    ttft_s: float
    total_s: float
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Timings:
    """Where a turn's time went. ``generate_s`` is the first generation; ``repair_s`` a regeneration
    or refinement after it."""

    context_ms: float = 0.0
    recall_ms: float = 0.0
    ttft_s: float = 0.0
    generate_s: float = 0.0
    check_ms: float = 0.0
    repair_s: float = 0.0
    store_ms: float = 0.0
    total_s: float = 0.0
    knowledge_ms: float = 0.0  # the fetch check and retrieval (last: older records end before it)
    probe_ms: float = 0.0  # asking the responder whether the placed passages answer the question


@dataclass(frozen=True)
class TurnRecord:
    """Per-answer record stored with the agent turn in the same transaction. ``knowledge`` is None
    where no knowledge base was consulted (``knowledge.enabled`` is off, or the record is older).
    ``model`` is the model that generated the answer, empty where none did (``source`` says what
    gave it then)."""

    stage: Stage
    model: str
    manifest: Manifest
    prompt_tokens: int
    completion_tokens: int
    timings: Timings
    check: CheckResult = field(default_factory=CheckResult)
    knowledge: Grounding | None = None
    source: AnswerSource = AnswerSource.MODEL


@dataclass(frozen=True)
class TurnResult:
    session_id: str
    customer: Turn
    agent: Turn
    record: TurnRecord


@dataclass(frozen=True)
class StoredEvent:
    """One row of the store's event log: ``id`` grows with every event and is never reused."""

    id: int
    session_id: str
    kind: str  # session, turn, summary, floor, erased
    data: Mapping[str, Any]
    created_at: float


T = TypeVar("T")


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    """The pydantic adapter of a dataclass, built once per class on first use: building one compiles
    its validator and serializer, and ``to_dict`` runs on every turn."""
    found = _ADAPTERS.get(cls)
    if found is None:
        found = _ADAPTERS.setdefault(cls, TypeAdapter(cls))
    return found


def to_dict(obj: DataclassInstance) -> dict[str, Any]:
    """A JSON-ready copy of a dataclass, nested ones included, its fields in their declared order.

    Tuples stay tuples (JSON writes them as lists); strings and numbers are not copied. Each value is
    written as its field's type says, so a union field writes the member it holds.
    """
    data: dict[str, Any] = _adapter(type(obj)).dump_python(obj)
    return data


def from_dict(cls: type[T], data: Mapping[str, Any]) -> T:
    """Rebuild a dataclass written by :func:`to_dict`, nested dataclasses, tuples and unions included.

    Keys the class does not have are ignored and missing ones take their defaults (older stored
    JSON still loads); a value its field cannot hold raises pydantic's ``ValidationError``, naming
    the field, rather than passing through as it came.
    """
    adapter: TypeAdapter[T] = _adapter(cls)
    return adapter.validate_python(data)
