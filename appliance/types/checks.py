"""What the checker and the guard say of an answer: the facts recognised in it, those the
conversation does not support, what the guard did about them, and where the kept text came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal


@dataclass(frozen=True)
class Entity:
    """A span of text recognised as a fact: an identifier, amount, date, phone number, name..."""

    kind: str
    text: str
    start: int
    end: int
    norm: str


@dataclass(frozen=True)
class Finding:
    """An entity of an answer that the conversation does not support, or (``missing``) a fact that
    a read-back answer should have stated and did not."""

    entity: Entity
    status: Literal["unsupported", "contradiction", "missing"]
    expected: str = ""


class AnswerSource(StrEnum):
    """Where a stored answer's text came from; stored as its value."""

    MODEL = "model"  # generated (and passed or repaired by the guard)
    WAITING = "waiting"  # floor.waiting_message: the customer asked for a person
    NOT_FOUND = "not_found"  # knowledge.not_found: no passage answers, or a generated one kept an unsourced fact
    READBACK = "readback"  # the facts asked for, read back from the ledger by the guard
    SAFE_ANSWER = "safe_answer"  # privacy.safe_answer in place of an answer that asked for a secret
    QUOTE = "quote"  # the answering document's own words in place of an answer that contradicted it


class GuardAction(StrEnum):
    """What the guard did with an answer; stored as its value."""

    NONE = "none"  # nothing to act on
    FLAG = "flag"  # kept and shown with its findings
    REDACT = "redact"  # spans replaced by guard.redact_phrase
    REGENERATE = "regenerate"  # generated again with a stricter instruction
    READBACK = "readback"  # a read-back answered from the ledger
    SAFE_ANSWER = "safe_answer"  # an answer asking for a secret replaced
    NOT_FOUND = "not_found"  # an answer from passages that kept a fact no source has, replaced by knowledge.not_found
    QUOTE = "quote"  # said yes where the answering document says no (or the reverse): the document's own answer


# The guard's actions that put a fixed text in place of the generated one, and where that text came from.
REPLACED_BY = {
    GuardAction.READBACK: AnswerSource.READBACK,
    GuardAction.SAFE_ANSWER: AnswerSource.SAFE_ANSWER,
    GuardAction.NOT_FOUND: AnswerSource.NOT_FOUND,
    GuardAction.QUOTE: AnswerSource.QUOTE,
}


@dataclass(frozen=True)
class CheckResult:
    """The entity check of the answer that was kept, and what the guard did (``action``, a
    :class:`GuardAction`). ``findings`` are what remains in the stored answer;
    ``original``/``original_findings`` describe the first answer when it was replaced. is the yes dropped from an answer whose own statement said no ("Yes, dogs are not allowed.";
    :mod:`appliance.facts.opener`), ``refine`` what the refiner did.
    """

    findings: tuple[Finding, ...] = ()
    action: GuardAction = GuardAction.NONE
    checked: int = 0
    original: str = ""
    original_findings: tuple[Finding, ...] = ()
    refine: str = ""
    opener: str = ""

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def source(self) -> AnswerSource:
        """Where the kept text came from: the model, unless the guard put a fixed text in its place."""
        return REPLACED_BY.get(self.action, AnswerSource.MODEL)
