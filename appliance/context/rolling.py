"""The appliance's own ``rolling`` policy: summary + fact ledger + recalled turns + latest turns.

The design's answer to a small context window (DESIGN.md, "What goes into every answer's prompt"):
the summary stands for older turns, the ledger keeps their exact facts character for character,
recall brings back the older turns the question points to, and the latest turns stay verbatim.
When the question asks for something back ("what was my account number?"), the facts it asks for
are repeated right before it, where a small responder looks. When they do not fit, the parts give
way in a fixed order, and every step is logged in the manifest (:mod:`~appliance.context.giveway`).
"""

from __future__ import annotations

from collections.abc import Sequence

from appliance.context.base import (
    NO_CONTEXT,
    PromptSpec,
    assemble,
    part_manifests,
    passages_note,
    too_long,
    turn_span,
    usable_summary,
)
from appliance.context.giveway import READBACK_HEADER, Fitted, Layout, describe_cuts, fitted
from appliance.protocols import TokenCounter
from appliance.types import Manifest, PartManifest, Prompt, Snapshot, Turn, current_facts

# The part headers live with the give-way steps that render them; tests read this one from here.
__all__ = ["READBACK_HEADER", "RollingPolicy"]


def _recent_start(turns: Sequence[Turn], pairs: int) -> int:
    """Position of the first turn of the last ``pairs`` pairs (each starting at a customer turn)."""
    if pairs <= 0:
        return len(turns)
    seen = 0
    for pos in range(len(turns) - 1, -1, -1):
        if turns[pos].role == "customer":
            seen += 1
            if seen == pairs:
                return pos
    return 0


class RollingPolicy:
    """The appliance's own policy (DESIGN.md, "What goes into every answer's prompt").

    [CONTEXT] holds the summary (turns ``0..covers_to``), the fact ledger's entries of those turns
    (latest value per slot, with its turn), the latest turns verbatim (the last ``recent_pairs``
    pairs, plus every turn the summary does not cover yet: seed 002's fallback of previous summary +
    verbatim newer turns), recalled older turns, and the ledger's entries of the turns after the
    summary, then the passages of the operator's documents retrieved for the question
    (``spec.passages``, best first, within the ``spec.passage_tokens`` reserved for them), and last,
    right before the question, the facts it asks to have read back (``spec.readback``, chosen by the
    turn layer; a small responder answers from what is nearest to the question). The order is chosen for llama.cpp's prefix cache: the summary worker moves the summary
    only in batches (``summarizer.every_turns``) and leaves the latest turns out of it, so between
    two updates each prompt extends the previous one after its last verbatim turn, and what changes
    from question to question (recalled turns, new facts, passages) comes last, next to the question.
    The passages' reserve is held at every question once the knowledge base has documents, so a
    question that fetches finds the same conversation parts as the warm-up prepared.

    When the parts do not fit ``spec.budget`` they give way in a fixed order, each step logged in
    ``Manifest.cuts``: recalled turns (the least relevant first); the oldest latest turns (the last
    pair stays); the summary's middle lines (its categories), then the middle sentences of the lines
    left, then all but its first and last sentence, each from the centre out (see ``trim``); ledger
    entries, oldest first, down to the newest; then the passages' reserve (first what the question's
    passages leave unused, then the passages, the last placed first): the summary's ends, the
    ledger's newest entry and the last pair have taken their guaranteed shares before it; then what
    was protected: the rest of the summary, the last pair, the newest ledger entry, and last of all
    the read-back facts (oldest first): they are a few tokens, and what the question is about.

    ``question_reserve`` tokens are kept for the question whatever its length: a shorter question
    leaves the rest spare, so the parts before it are the same for every such question and for the
    empty one the warm-up prepares (:meth:`Warmup.next_prefix`). Otherwise a question a few tokens
    longer than the room left would push one more old turn out, and the whole prompt after the
    summary would be evaluated afresh while the customer waits.
    """

    name = "rolling"
    uses_summary = True

    def __init__(self, recent_pairs: int = 4, question_reserve: int = 0) -> None:
        self.recent_pairs = recent_pairs
        self.question_reserve = question_reserve

    def recall_candidates(self, snap: Snapshot) -> tuple[Turn, ...]:
        """The turns that are not carried verbatim anyway: what recall may choose from."""
        summary = usable_summary(snap)
        covers_to = summary.covers_to if summary is not None else -1
        start = _recent_start(snap.turns, self.recent_pairs)
        return tuple(t for pos, t in enumerate(snap.turns) if pos < start and t.index <= covers_to)

    def build(
        self, snap: Snapshot, question: str, spec: PromptSpec, counter: TokenCounter, recalled: Sequence[int] = ()
    ) -> Prompt:
        layout = self._layout(snap, recalled)
        fixed = counter.count(assemble(spec, "", question)) - counter.count_text(NO_CONTEXT)
        # A question shorter than the reserve leaves the rest of it spare, so what comes before the
        # question is the same for every such question (and for the empty one the warm-up builds):
        # the warmed prefix holds. Where only the reserve is in the way, the context gets its room.
        asked = fixed - (counter.count(assemble(spec, "", "")) - counter.count_text(NO_CONTEXT))
        slack = max(0, self.question_reserve - asked)
        done = fitted(layout, spec, question, counter, fixed, slack)
        if done is None and slack:
            done = fitted(layout, spec, question, counter, fixed, 0)
        if done is None:
            raise too_long(spec)
        return Prompt(messages=done.messages, manifest=self._manifest(snap, layout, done, spec, question))

    def _layout(self, snap: Snapshot, recalled: Sequence[int]) -> Layout:
        turns = snap.turns
        summary = usable_summary(snap)
        covers_to = summary.covers_to if summary is not None else -1
        start = _recent_start(turns, self.recent_pairs)
        verbatim = tuple(t for pos, t in enumerate(turns) if pos >= start or t.index > covers_to)
        in_verbatim = {t.index for t in verbatim}
        by_index = {t.index: t for t in turns}
        chosen: list[Turn] = []
        for i in recalled:
            t = by_index.get(i)
            if t is not None and i not in in_verbatim and t not in chosen:
                chosen.append(t)
        keep_last = max(0, min(_recent_start(turns, 1) - (len(turns) - len(verbatim)), len(verbatim)))
        if start >= len(turns):  # no recent pairs configured: nothing is protected as "the last pair"
            keep_last = len(verbatim)
        return Layout(
            summary=summary,
            covered=tuple(t.index for t in turns if t.index <= covers_to),
            facts=tuple(current_facts(snap.ledger)),
            recalled=tuple(chosen),
            verbatim=verbatim,
            keep_last=keep_last,
            pending=tuple(t.index for pos, t in enumerate(turns) if pos < start and t.index > covers_to),
        )

    def _manifest(self, snap: Snapshot, layout: Layout, done: Fitted, spec: PromptSpec, question: str) -> Manifest:
        fit, sections, total = done.fit, done.sections, done.total
        verbatim_turns = next((s[3] for s in sections if s[0] == "recent"), ())
        recalled_turns = next((s[3] for s in sections if s[0] == "recalled"), ())
        summarized = next((s[3] for s in sections if s[0] == "summary"), ())
        accounted = {*verbatim_turns, *recalled_turns, *summarized}
        notes = []
        if layout.pending:
            summary = layout.summary
            reason = "no summary yet" if summary is None else f"the summary covers turns 0-{summary.covers_to}"
            notes.append(f"turns {turn_span(layout.pending)} carried verbatim: {reason}")
        parts = [PartManifest(name, cost, turns=tt) for name, _, cost, tt in sections]
        placed = fit.placed
        if placed.over:
            notes.append(passages_note(placed.over, f"over the {spec.passage_tokens} tokens kept for them"))
        kept, gone = placed.passages[: fit.passages_n], placed.passages[fit.passages_n :]
        return Manifest(
            policy=self.name,
            budget=spec.budget,
            total_tokens=total,
            parts=part_manifests(spec, question, fit.counter, total, parts),
            verbatim_turns=verbatim_turns,
            summarized_turns=summarized,
            recalled_turns=recalled_turns,
            cut_turns=tuple(t.index for t in snap.turns if t.index not in accounted),
            cuts=(*notes, *describe_cuts(fit, set(summarized), spec.budget)),
            fallback=bool(layout.pending),
            passages=tuple(p.citation() for p in kept),
            cut_passages=tuple(p.citation() for p in (*placed.over, *gone)),
        )
