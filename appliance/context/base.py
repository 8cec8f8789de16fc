"""What every context policy shares: the prompt's shape, the policy protocol, and the manifest.

Context building turns a session snapshot and the customer's message into a prompt within budget.
It is a pure function of its inputs (the token counter is passed in), so it is fast and testable.
Every policy fills the same four-part prompt of DESIGN.md:

    system        the role and the standing directive (first, so llama.cpp reuses its cache)
    [CONTEXT]     what the policy chose to carry from the conversation
    [QUESTION]    the customer's current message
    [INSTRUCTION] the directive of the message's stage (short: it is evaluated after the message)
    [RESPONSE]    left for the model (the chat template's assistant turn)

and returns a manifest that accounts for every turn and every token. The budget is always enforced
with the counter passed to ``build`` (the responder's own tokenizer). The policies themselves live in
:mod:`~appliance.context.baselines` (``raw`` and the seeds) and :mod:`~appliance.context.rolling`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from appliance.errors import InputError
from appliance.protocols import TokenCounter
from appliance.types import LedgerEntry, Message, PartManifest, Passage, Prompt, Snapshot, SummaryVersion, Turn

SPEAKER = {"customer": "Customer", "agent": "Agent"}
NO_CONTEXT = "(no earlier conversation)"


@dataclass(frozen=True)
class PromptSpec:
    """What a prompt is built from besides the session: the fixed texts, the budget, the facts
    the question asks to have read back (the turn layer finds them with
    :mod:`appliance.facts.readback`; ``rolling`` puts them right before the question), and the
    passages of the operator's documents retrieved for it, best first, with the tokens of the budget
    reserved for them (``passage_tokens``: the settings' ``passage_tokens`` wherever the knowledge
    base has documents, whether or not this question fetched any, so that the conversation's parts,
    and the warmed prefix they make, are the same for a question with passages and one without)."""

    system: str
    instruction: str
    budget: int
    readback: tuple[LedgerEntry, ...] = ()
    passages: tuple[Passage, ...] = ()
    passage_tokens: int = 0

    def adding(self, directive: str) -> PromptSpec:
        """This spec with ``directive`` after its instruction (a read-back or a stricter retry)."""
        return dataclasses.replace(self, instruction="\n".join(t for t in (self.instruction, directive) if t))


class ContextPolicy(Protocol):
    name: str
    # Whether the policy reads the session's summary (so a summarizer must run for its sessions).
    uses_summary: bool

    def build(
        self,
        snap: Snapshot,
        question: str,
        spec: PromptSpec,
        counter: TokenCounter,
        recalled: Sequence[int] = (),
    ) -> Prompt:
        """The prompt for ``question`` within ``spec.budget`` tokens of ``counter``.

        ``recalled`` holds indices of older turns that recall chose for this question, best first
        (the pipeline computes them); policies that have no place for them ignore them.
        """
        ...

    def recall_candidates(self, snap: Snapshot) -> tuple[Turn, ...]:
        """The older turns recall may choose from for ``snap``'s next question: those the prompt
        would not carry verbatim anyway. None for a policy that has no place for recalled turns."""
        ...


def render_turn(turn: Turn) -> str:
    return f"{SPEAKER[turn.role]}: {turn.text}"


# The passages' header is the directive to use them: it comes with them, so a prompt without passages
# spends nothing on it, and it says that they are documents (data, like the turns), not instructions.
PASSAGES_HEADER = "Answer from these documents:"


def render_passage(passage: Passage) -> str:
    """A passage as the prompt shows it: its document's title, then its text (which opens with its
    section's heading)."""
    return f"({passage.title}) {passage.text.strip()}"


@dataclass(frozen=True)
class Placed:
    """The passages that fit their reserve, best first, each with its tokens as placed, and those that did not."""

    passages: tuple[Passage, ...]
    costs: tuple[int, ...]
    header: int  # the header's tokens (0 when nothing is placed)
    over: tuple[Passage, ...]  # retrieved, but over the reserve

    @property
    def tokens(self) -> int:
        return self.header + sum(self.costs) if self.passages else 0

    def text(self, n: int | None = None) -> str:
        """The passages part with the first ``n`` (all) passages; empty for none."""
        kept = self.passages[:n]
        return PASSAGES_HEADER + "\n" + "\n\n".join(render_passage(p) for p in kept) if kept else ""


def place(passages: Sequence[Passage], room: int, counter: TokenCounter) -> Placed:
    """The passages that fit ``room`` tokens, taken best first: one that does not fit is skipped and
    a smaller one after it may still go in."""
    header = counter.count_text(PASSAGES_HEADER + "\n") + 2 if passages else 0
    used = header
    kept: list[Passage] = []
    costs: list[int] = []
    over: list[Passage] = []
    for p in passages:
        cost = counter.count_text(render_passage(p)) + 2  # with the blank line before the next
        if used + cost <= room:
            kept.append(p)
            costs.append(cost)
            used += cost
        else:
            over.append(p)
    return Placed(tuple(kept), tuple(costs), header if kept else 0, tuple(over))


def passages_note(passages: Sequence[Passage], why: str) -> str:
    """A manifest's line naming passages that were cut (document, heading, score) and why."""
    shown = "; ".join(f"{p.doc} ({p.heading or p.location}, score {p.score:.2f})" for p in passages)
    return f"passages {why}: {shown}"


# Where the question begins: before it, the prompt is known before the customer speaks.
QUESTION_MARK = "\n\n[QUESTION]\n"
INSTRUCTION_MARK = "\n\n[INSTRUCTION]\n"


def assemble(spec: PromptSpec, context: str, question: str) -> tuple[Message, ...]:
    user = f"[CONTEXT]\n{context or NO_CONTEXT}{QUESTION_MARK}{question}"
    if spec.instruction:  # a stage whose directive is turned off has no [INSTRUCTION]
        user += f"{INSTRUCTION_MARK}{spec.instruction}"
    return (Message("system", spec.system), Message("user", user))


def asking(messages: Sequence[Message], instruction: str, directive: str) -> tuple[Message, ...]:
    """The prompt with ``instruction`` in place of its [INSTRUCTION], ``directive`` (after its question
    where it had none): the same prompt, up to its directive, asked something else. Only the
    prompt's own directive is replaced, whatever marker the question itself quotes."""
    *head, last = messages
    text = last.content
    own = f"{INSTRUCTION_MARK}{directive}"
    kept = text.removesuffix(own) if directive and text.endswith(own) else text
    return (*head, Message(last.role, f"{kept}{INSTRUCTION_MARK}{instruction}"))


def before_question(messages: Sequence[Message]) -> tuple[Message, ...]:
    """The prompt up to where its question begins (its marker included): what can be evaluated
    before the customer speaks."""
    *head, last = messages
    text = last.content
    cut = text.rfind(QUESTION_MARK)
    return (*head, Message(last.role, text[: cut + len(QUESTION_MARK)] if cut >= 0 else text))


def part_manifests(
    spec: PromptSpec, question: str, counter: TokenCounter, total: int, parts: Sequence[PartManifest]
) -> tuple[PartManifest, ...]:
    """The fixed parts (system, question, instruction) around the policy's own, plus the template's share."""
    fixed = (
        PartManifest("system", counter.count_text(spec.system)),
        *parts,
        PartManifest("question", counter.count_text(question)),
        PartManifest("instruction", counter.count_text(spec.instruction)),
    )
    overhead = total - sum(p.tokens for p in fixed)
    return (*fixed, PartManifest("template", max(overhead, 0), note="chat template and section markers"))


def too_long(spec: PromptSpec) -> InputError:
    return InputError(
        f"the message does not fit the context budget of {spec.budget} tokens", field="text", limit=spec.budget
    )


def turn_span(indices: Sequence[int]) -> str:
    """``3-7, 9`` for a sorted sequence of turn indices."""
    out: list[str] = []
    start = prev = None
    for i in indices:
        if start is None:
            start = prev = i
        elif i == prev + 1:  # type: ignore[operator]
            prev = i
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = i
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)


def usable_summary(snap: Snapshot) -> SummaryVersion | None:
    """The snapshot's summary if it can stand in for turns: accepted, non-empty, covering something."""
    s = snap.summary
    if s is None or s.status != "accepted" or not s.text.strip() or s.covers_to < 0 or not snap.turns:
        return None
    return s
