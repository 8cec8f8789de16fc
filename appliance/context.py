"""Context building: turn a session snapshot and the customer's message into a prompt within budget.

Pure functions of their inputs (the token counter is passed in), so they are fast and testable.
Every policy fills the same four-part prompt of DESIGN.md:

    system        the stable role (first, so llama.cpp can reuse its cache across turns)
    [CONTEXT]     what the policy chose to carry from the conversation
    [QUESTION]    the customer's current message
    [INSTRUCTION] the directive
    [RESPONSE]    left for the model (the chat template's assistant turn)

and returns a manifest that accounts for every turn and every token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .errors import InputError
from .types import Manifest, Message, PartManifest, Prompt, Snapshot, Turn

SPEAKER = {"customer": "Customer", "agent": "Agent"}
NO_CONTEXT = "(no earlier conversation)"


class Counter(Protocol):
    """Counts tokens the way the responder will see them."""

    def count(self, messages: Sequence[Message]) -> int: ...

    def count_text(self, text: str) -> int: ...


@dataclass(frozen=True)
class PromptSpec:
    system: str
    instruction: str
    budget: int


class ContextPolicy(Protocol):
    name: str

    def build(self, snap: Snapshot, question: str, spec: PromptSpec, counter: Counter) -> Prompt: ...


def render_turn(turn: Turn) -> str:
    return f"{SPEAKER[turn.role]}: {turn.text}"


def assemble(spec: PromptSpec, context: str, question: str) -> tuple[Message, ...]:
    user = f"[CONTEXT]\n{context or NO_CONTEXT}\n\n[QUESTION]\n{question}\n\n[INSTRUCTION]\n{spec.instruction}"
    return (Message("system", spec.system), Message("user", user))


def part_manifests(
    spec: PromptSpec, question: str, counter: Counter, total: int, parts: Sequence[PartManifest]
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


class RawPolicy:
    """The whole transcript, verbatim; the oldest turns give way when it does not fit."""

    name = "raw"

    def build(self, snap: Snapshot, question: str, spec: PromptSpec, counter: Counter) -> Prompt:
        turns = snap.turns
        lines = [render_turn(t) for t in turns]

        def messages_from(first: int) -> tuple[Message, ...]:
            return assemble(spec, "\n".join(lines[first:]), question)

        # Fewest dropped turns that fit: the count only grows with more turns, so bisect.
        lo, hi = 0, len(turns)
        if counter.count(messages_from(hi)) > spec.budget:
            raise InputError(
                f"the message does not fit the context budget of {spec.budget} tokens", field="text", limit=spec.budget
            )
        while lo < hi:
            mid = (lo + hi) // 2
            if counter.count(messages_from(mid)) <= spec.budget:
                hi = mid
            else:
                lo = mid + 1
        first = lo
        messages = messages_from(first)
        total = counter.count(messages)
        kept = tuple(t.index for t in turns[first:])
        cut = tuple(t.index for t in turns[:first])
        transcript = PartManifest(
            "transcript", counter.count_text("\n".join(lines[first:])) if kept else 0, turns=kept
        )
        manifest = Manifest(
            policy=self.name,
            budget=spec.budget,
            total_tokens=total,
            parts=part_manifests(spec, question, counter, total, [transcript]),
            verbatim_turns=kept,
            cut_turns=cut,
            cuts=(f"dropped the {len(cut)} oldest turns ({cut[0]}-{cut[-1]}) to fit {spec.budget} tokens",) if cut else (),
        )
        return Prompt(messages=messages, manifest=manifest)


POLICIES: dict[str, ContextPolicy] = {RawPolicy.name: RawPolicy()}
