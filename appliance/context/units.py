"""What the baseline policies share: their context as whole units (a turn, a pair, the compressed
older part) that give way oldest first, the passages after the conversation, and the manifest of both.

None of the seeds had a budget, so all of them give way the same simple way: whole units, oldest
first, until the prompt fits. Passages of the operator's documents (none of the seeds had them
either) come after the conversation, within the tokens reserved for them, and give way, all at once,
only when the conversation has nothing left to give.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from appliance.context.base import (
    Placed,
    PromptSpec,
    assemble,
    part_manifests,
    passages_note,
    place,
    too_long,
    turn_span,
)
from appliance.protocols import TokenCounter
from appliance.types import Citation, Manifest, Message, PartManifest, Snapshot, Turn


@dataclass(frozen=True)
class Unit:
    """A piece of a baseline's context that is kept or dropped whole."""

    kind: str  # "verbatim" or "summarized"
    turns: tuple[int, ...]


@dataclass(frozen=True)
class Fitted:
    """A baseline's prompt within budget: how many of its oldest units gave way, and the prompt."""

    first: int
    messages: tuple[Message, ...]
    total: int
    placed: Placed | None  # the passages placed; None when they gave way


@dataclass(frozen=True)
class PassageParts:
    """What a baseline's manifest says of the passages: their part, notes on the cut ones, and both lists."""

    parts: list[PartManifest]
    notes: list[str]
    placed: tuple[Citation, ...]
    cut: tuple[Citation, ...]


@dataclass(frozen=True)
class Build:
    """What one baseline build fits and accounts with: the policy's name, the spec, the question and the counter."""

    policy: str
    spec: PromptSpec
    question: str
    counter: TokenCounter

    def fit(self, n_units: int, render: Callable[[int], str]) -> Fitted:
        """The fewest oldest units to drop so that the prompt fits: ``render(first)`` renders units
        ``first..`` and its count only shrinks as ``first`` grows, so bisect (a few full counts).

        The passages' reserve is kept out of the conversation's room (the part its passages leave
        unused too); if nothing of the conversation is left and it still does not fit, the passages
        and their reserve give way."""
        spec, question, counter = self.spec, self.question, self.counter
        placed = place(spec.passages, spec.passage_tokens, counter)
        tail = placed.text()
        limit = spec.budget - (spec.passage_tokens - placed.tokens)

        def context(k: int) -> str:
            return "\n\n".join(t for t in (render(k), tail) if t)

        if counter.count(assemble(spec, context(n_units), question)) > limit:
            if not spec.passage_tokens:
                raise too_long(spec)
            no_passages = dataclasses.replace(spec, passages=(), passage_tokens=0)
            return dataclasses.replace(
                Build(self.policy, no_passages, question, counter).fit(n_units, render), placed=None
            )
        lo, hi = 0, n_units
        while lo < hi:
            mid = (lo + hi) // 2
            if counter.count(assemble(spec, context(mid), question)) <= limit:
                hi = mid
            else:
                lo = mid + 1
        messages = assemble(spec, context(lo), question)
        return Fitted(lo, messages, counter.count(messages), placed)

    def passage_parts(self, fitted: Fitted) -> PassageParts:
        """The passages' part of the manifest, its notes on cut passages, and the passages placed and cut."""
        offered = self.spec.passages
        placed = fitted.placed
        kept = placed.passages if placed is not None else ()
        cut = placed.over if placed is not None else offered
        notes = []
        if placed is not None and placed.over:
            notes.append(passages_note(placed.over, f"over the {self.spec.passage_tokens} tokens kept for them"))
        elif placed is None and offered:
            notes.append(passages_note(offered, f"cut to fit {self.spec.budget} tokens"))
        parts = [PartManifest("passages", placed.tokens)] if placed is not None and kept else []
        return PassageParts(parts, notes, tuple(p.citation() for p in kept), tuple(p.citation() for p in cut))

    def manifest(
        self,
        fitted: Fitted,
        units: Sequence[Unit],
        parts: Sequence[PartManifest],
        *,
        outside: Sequence[int] = (),
        notes: Sequence[str] = (),
        fallback: bool = False,
    ) -> Manifest:
        """The manifest of ``units`` (in give-way order) after ``fitted``; ``outside`` are turns the
        policy leaves out whatever the budget."""
        first = fitted.first
        kept, dropped = units[first:], units[:first]
        verbatim = tuple(i for u in kept if u.kind == "verbatim" for i in u.turns)
        summarized = tuple(i for u in kept if u.kind == "summarized" for i in u.turns)
        cut = tuple(sorted({*outside, *(i for u in dropped for i in u.turns)}))
        cuts = list(notes)
        if dropped:
            dropped_turns = sorted(i for u in dropped for i in u.turns)
            what = f"turns {turn_span(dropped_turns)}" if dropped_turns else "an empty part"
            cuts.append(f"dropped the {first} oldest part(s) ({what}) to fit {self.spec.budget} tokens")
        extra = self.passage_parts(fitted)
        return Manifest(
            policy=self.policy,
            budget=self.spec.budget,
            total_tokens=fitted.total,
            parts=part_manifests(self.spec, self.question, self.counter, fitted.total, [*parts, *extra.parts]),
            verbatim_turns=verbatim,
            summarized_turns=summarized,
            cut_turns=cut,
            cuts=(*cuts, *extra.notes),
            fallback=fallback,
            passages=extra.placed,
            cut_passages=extra.cut,
        )


class Baseline:
    """What the baselines share: recall is the ``rolling`` policy's own, so none has a place for recalled turns."""

    uses_summary = False

    def recall_candidates(self, snap: Snapshot) -> tuple[Turn, ...]:
        return ()
