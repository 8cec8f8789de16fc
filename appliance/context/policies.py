"""Context building: turn a session snapshot and the customer's message into a prompt within budget.

Pure functions of their inputs (the token counter is passed in), so they are fast and testable.
Every policy fills the same four-part prompt of DESIGN.md:

    system        the stable role (first, so llama.cpp can reuse its cache across turns)
    [CONTEXT]     what the policy chose to carry from the conversation
    [QUESTION]    the customer's current message
    [INSTRUCTION] the directive
    [RESPONSE]    left for the model (the chat template's assistant turn)

and returns a manifest that accounts for every turn and every token.

Policies (chosen in config and per session, so that they can be compared on the same sessions):

* ``raw``: the whole transcript, oldest turns dropped to fit.
* ``seed-topics`` (seed 001): older pairs as "Topics discussed / Key points", the last pairs verbatim.
* ``seed-qa`` (seed 000): older pairs as truncated "Q{i}/A{i}" lines, the last pairs verbatim.
* ``threshold`` (seed 003): over a token threshold, the first message plus the session's summary.
* ``rolling`` (the appliance's own): summary + fact ledger + recalled turns + recent turns, with a
  fixed, logged order in which the parts give way.

The budget is always enforced with the counter passed to ``build`` (the responder's own tokenizer);
the seed policies keep their own shapes and only drop their oldest parts when over budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Protocol

from appliance.errors import InputError
from appliance.types import (
    LedgerEntry,
    Manifest,
    Message,
    PartManifest,
    Prompt,
    Snapshot,
    SummaryVersion,
    TokenCounter,
    Turn,
)

SPEAKER = {"customer": "Customer", "agent": "Agent"}
NO_CONTEXT = "(no earlier conversation)"


@dataclass(frozen=True)
class PromptSpec:
    system: str
    instruction: str
    budget: int


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


@dataclass(frozen=True)
class ContextOptions:
    """The policies' tunables (``[context]`` in the config). The seeds' own numbers are their defaults."""

    recent_pairs: int = 4
    seed_recent_pairs: int = 8
    seed_older_pairs: int = 12
    seed_topic_chars: int = 100
    seed_question_chars: int = 150
    seed_answer_chars: int = 100
    threshold_tokens: int = 1000

    @classmethod
    def from_section(cls, section: object) -> ContextOptions:
        """The options from any object with the same attribute names (the config's ``[context]``)."""
        return cls(**{f.name: getattr(section, f.name) for f in fields(cls)})


def render_turn(turn: Turn) -> str:
    return f"{SPEAKER[turn.role]}: {turn.text}"


def assemble(spec: PromptSpec, context: str, question: str) -> tuple[Message, ...]:
    user = f"[CONTEXT]\n{context or NO_CONTEXT}\n\n[QUESTION]\n{question}\n\n[INSTRUCTION]\n{spec.instruction}"
    return (Message("system", spec.system), Message("user", user))


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


def _too_long(spec: PromptSpec) -> InputError:
    return InputError(
        f"the message does not fit the context budget of {spec.budget} tokens", field="text", limit=spec.budget
    )


def _span(indices: Sequence[int]) -> str:
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


# --------------------------------------------------------------------------------------------------
# Baselines: drop whole units, oldest first, until the prompt fits.


@dataclass(frozen=True)
class _Unit:
    """A piece of a baseline's context that is kept or dropped whole."""

    kind: str  # "verbatim" or "summarized"
    turns: tuple[int, ...]


def _fit_oldest_first(
    spec: PromptSpec, question: str, counter: TokenCounter, n_units: int, render: Callable[[int], str]
) -> tuple[int, tuple[Message, ...], int]:
    """The fewest oldest units to drop so that the prompt fits: ``render(first)`` renders units
    ``first..`` and its count only shrinks as ``first`` grows, so bisect (a few full counts)."""
    if counter.count(assemble(spec, render(n_units), question)) > spec.budget:
        raise _too_long(spec)
    lo, hi = 0, n_units
    while lo < hi:
        mid = (lo + hi) // 2
        if counter.count(assemble(spec, render(mid), question)) <= spec.budget:
            hi = mid
        else:
            lo = mid + 1
    messages = assemble(spec, render(lo), question)
    return lo, messages, counter.count(messages)


def _baseline_manifest(
    policy: str,
    spec: PromptSpec,
    question: str,
    counter: TokenCounter,
    total: int,
    units: Sequence[_Unit],
    first: int,
    parts: Sequence[PartManifest],
    *,
    outside: Sequence[int] = (),
    notes: Sequence[str] = (),
    fallback: bool = False,
) -> Manifest:
    kept, dropped = units[first:], units[:first]
    verbatim = tuple(i for u in kept if u.kind == "verbatim" for i in u.turns)
    summarized = tuple(i for u in kept if u.kind == "summarized" for i in u.turns)
    cut = tuple(sorted({*outside, *(i for u in dropped for i in u.turns)}))
    cuts = list(notes)
    if dropped:
        dropped_turns = sorted(i for u in dropped for i in u.turns)
        what = f"turns {_span(dropped_turns)}" if dropped_turns else "an empty part"
        cuts.append(f"dropped the {first} oldest part(s) ({what}) to fit {spec.budget} tokens")
    return Manifest(
        policy=policy,
        budget=spec.budget,
        total_tokens=total,
        parts=part_manifests(spec, question, counter, total, parts),
        verbatim_turns=verbatim,
        summarized_turns=summarized,
        cut_turns=cut,
        cuts=tuple(cuts),
        fallback=fallback,
    )


class RawPolicy:
    """The whole transcript, verbatim; the oldest turns give way when it does not fit."""

    name = "raw"
    uses_summary = False

    def build(
        self, snap: Snapshot, question: str, spec: PromptSpec, counter: TokenCounter, recalled: Sequence[int] = ()
    ) -> Prompt:
        turns = snap.turns
        lines = [render_turn(t) for t in turns]
        first, messages, total = _fit_oldest_first(spec, question, counter, len(turns), lambda k: "\n".join(lines[k:]))
        kept = tuple(t.index for t in turns[first:])
        cut = tuple(t.index for t in turns[:first])
        transcript = PartManifest("transcript", counter.count_text("\n".join(lines[first:])) if kept else 0, turns=kept)
        manifest = Manifest(
            policy=self.name,
            budget=spec.budget,
            total_tokens=total,
            parts=part_manifests(spec, question, counter, total, [transcript]),
            verbatim_turns=kept,
            cut_turns=cut,
            cuts=(f"dropped the {len(cut)} oldest turns ({cut[0]}-{cut[-1]}) to fit {spec.budget} tokens",)
            if cut
            else (),
        )
        return Prompt(messages=messages, manifest=manifest)


# --------------------------------------------------------------------------------------------------
# Seeds 000 and 001: older pairs compressed by rule, the last pairs verbatim.

Pair = tuple[Turn | None, Turn | None]


def pairs_of(turns: Sequence[Turn]) -> list[Pair]:
    """Customer message + the agent's answer, in order; a turn without its partner stands alone."""
    out: list[list[Turn | None]] = []
    for t in turns:
        if t.role == "customer":
            out.append([t, None])
        elif out and out[-1][1] is None:
            out[-1][1] = t
        else:
            out.append([None, t])
    return [(a, b) for a, b in out]


def _pair_turns(pair: Pair) -> tuple[int, ...]:
    return tuple(t.index for t in pair if t is not None)


def _pair_texts(pairs: Iterable[Pair]) -> list[tuple[str, str]]:
    return [(u.text if u else "", r.text if r else "") for u, r in pairs]


def summarize_topics(interactions: Sequence[tuple[str, str]], *, chars: int = 100) -> str:
    """Seed 001's ``_summarize_interactions``: the first ``chars`` characters of each question as a
    topic, the first two sentences of each answer (cut to ``chars``) as a key point; five topics
    and three key points, in the order given. The policy gives them oldest first, as the seed's
    examples show them (its code slices a newest-first list, which would keep the newest five)."""
    topics = [user[:chars] for user, _ in interactions if user]
    points = [". ".join(resp.split(".")[:2]).strip()[:chars] for _, resp in interactions if resp]
    lines = []
    if topics:
        lines.append(f"Topics discussed: {', '.join(topics[:5])}")
    if points:
        lines.append(f"Key points: {'. '.join(points[:3])}")
    return "\n".join(lines) if lines else "Earlier conversation about various topics."


def summarize_qa(interactions: Sequence[tuple[str, str]], *, question_chars: int = 150, answer_chars: int = 100) -> str:
    """Seed 000's Q/A summary, as its code does it: each question whole up to ``question_chars``
    (else cut + "..."), each answer's first sentence if it is at most ``answer_chars`` long (plus
    "."), else the answer's first ``answer_chars`` characters + "..."."""
    lines = ["Earlier conversation summary:"]
    for i, (user, resp) in enumerate(interactions, 1):
        if user:
            q = user if len(user) <= question_chars else user[:question_chars] + "..."
            lines.append(f"\n  Q{i}: {q}")
        if resp:
            first = resp.split(".")[0]
            a = first + "." if len(first) <= answer_chars else resp[:answer_chars] + "..."
            lines.append(f"  A{i}: {a}")
    return "\n".join(lines)


def render_qa_pairs(pairs: Sequence[Pair]) -> str:
    """Seed 001's verbatim "Q{i}: / A{i}:" blocks, numbered from the oldest shown."""
    blocks = []
    for i, (u, r) in enumerate(pairs, 1):
        lines = ([f"Q{i}: {u.text}"] if u else []) + ([f"A{i}: {r.text}"] if r else [])
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


class _SeedPolicy:
    """Shared shape of seeds 000 and 001: the last ``recent`` pairs verbatim, up to ``older`` pairs
    before them compressed by ``summarize``, anything older outside the seed's window (cut)."""

    name = ""
    uses_summary = False
    header = ""

    def __init__(self, recent: int = 8, older: int = 12) -> None:
        self.recent = recent
        self.older = older

    def summarize(self, interactions: Sequence[tuple[str, str]]) -> str:
        raise NotImplementedError

    def build(
        self, snap: Snapshot, question: str, spec: PromptSpec, counter: TokenCounter, recalled: Sequence[int] = ()
    ) -> Prompt:
        pairs = pairs_of(snap.turns)
        if len(pairs) > self.recent:
            split = len(pairs) - self.recent
            older = pairs[max(0, split - self.older) : split]
            outside = pairs[: max(0, split - self.older)]
            newest = pairs[split:]
        else:
            older, outside, newest = [], [], pairs
        summary = self.summarize(_pair_texts(older)) if older else ""
        units = ([_Unit("summarized", tuple(i for p in older for i in _pair_turns(p)))] if older else []) + [
            _Unit("verbatim", _pair_turns(p)) for p in newest
        ]
        has_summary = bool(older)

        def render(first: int) -> str:
            with_summary = has_summary and first == 0
            shown = newest[max(0, first - (1 if has_summary else 0)) :]
            qa = render_qa_pairs(shown)
            if with_summary:
                return f"{self.header}{summary}\n\nRecent conversation details:\n{qa}".rstrip()
            if not shown:
                return ""
            return f"{'Recent conversation details' if has_summary else 'Previous conversation'}:\n{qa}"

        first, messages, total = _fit_oldest_first(spec, question, counter, len(units), render)
        shown = newest[max(0, first - (1 if has_summary else 0)) :]
        parts = []
        if has_summary and first == 0:
            parts.append(PartManifest("summary", counter.count_text(summary), turns=units[0].turns))
        verbatim_turns = tuple(i for p in shown for i in _pair_turns(p))
        parts.append(
            PartManifest("recent", counter.count_text(render_qa_pairs(shown)) if shown else 0, turns=verbatim_turns)
        )
        outside_turns = tuple(i for p in outside for i in _pair_turns(p))
        notes = (
            [f"turns {_span(outside_turns)} are older than the seed's window of {self.recent + self.older} pairs"]
            if outside_turns
            else []
        )
        manifest = _baseline_manifest(
            self.name, spec, question, counter, total, units, first, parts, outside=outside_turns, notes=notes
        )
        return Prompt(messages=messages, manifest=manifest)


class SeedTopicsPolicy(_SeedPolicy):
    """Seed 001: older pairs as "Topics discussed / Key points", the last pairs verbatim."""

    name = "seed-topics"
    header = "Conversation Summary (earlier context):\n"

    def __init__(self, recent: int = 8, older: int = 12, *, chars: int = 100) -> None:
        super().__init__(recent, older)
        self.chars = chars

    def summarize(self, interactions: Sequence[tuple[str, str]]) -> str:
        return summarize_topics(interactions, chars=self.chars)


class SeedQAPolicy(_SeedPolicy):
    """Seed 000: older pairs as truncated "Q{i}/A{i}" lines, the last pairs verbatim."""

    name = "seed-qa"
    header = ""

    def __init__(self, recent: int = 8, older: int = 12, *, question_chars: int = 150, answer_chars: int = 100) -> None:
        super().__init__(recent, older)
        self.question_chars = question_chars
        self.answer_chars = answer_chars

    def summarize(self, interactions: Sequence[tuple[str, str]]) -> str:
        return summarize_qa(interactions, question_chars=self.question_chars, answer_chars=self.answer_chars)


# --------------------------------------------------------------------------------------------------
# Seed 003: over a threshold, the first message plus one summary.

SEED_ROLE = {"customer": "user", "agent": "assistant"}


def flatten_history(turns: Sequence[Turn]) -> str:
    """Seed 003's flattened history: ``role: content`` joined by blank lines (OpenAI role names)."""
    return "\n\n".join(f"{SEED_ROLE[t.role]}: {t.text}" for t in turns)


class ThresholdPolicy:
    """Seed 003: while the flattened history is at most ``threshold`` tokens (of ``threshold_counter``,
    e.g. OpenAI tokens), the transcript verbatim; above it, the first message and the session's
    summary in place of the rest. The summarizer runs off the hot path, so turns after the summary's
    ``covers_to`` stay verbatim; with no summary yet, the transcript stays verbatim (``fallback``).
    The budget itself is always enforced with the responder's counter; oldest parts give way."""

    name = "threshold"
    uses_summary = True

    def __init__(self, threshold: int = 1000, threshold_counter: TokenCounter | None = None) -> None:
        self.threshold = threshold
        self.threshold_counter = threshold_counter

    def build(
        self, snap: Snapshot, question: str, spec: PromptSpec, counter: TokenCounter, recalled: Sequence[int] = ()
    ) -> Prompt:
        turns = snap.turns
        size = (self.threshold_counter or counter).count_text(flatten_history(turns)) if turns else 0
        summary = usable_summary(snap)
        notes: list[str] = []
        fallback = False
        texts: list[str]
        if size > self.threshold and summary is not None and len(turns) > 1:
            covers_to = summary.covers_to
            pending = [t for t in turns[1:] if t.index > covers_to]
            summarized = tuple(t.index for t in turns[1:] if t.index <= covers_to)
            units = [_Unit("verbatim", (turns[0].index,)), _Unit("summarized", summarized)]
            units += [_Unit("verbatim", (t.index,)) for t in pending]
            texts = [render_turn(turns[0]), f"Summary of the conversation since: {summary.text.strip()}"]
            texts += [render_turn(t) for t in pending]
            notes.append(f"history of {size} tokens is over the threshold of {self.threshold}: summary in place")
            if pending:
                notes.append(f"turns {_span([t.index for t in pending])} are newer than the summary: kept verbatim")
        else:
            if size > self.threshold:
                fallback = True
                notes.append(
                    f"history of {size} tokens is over the threshold of {self.threshold} but there is no "
                    "summary yet: turns kept verbatim"
                )
            units = [_Unit("verbatim", (t.index,)) for t in turns]
            texts = [render_turn(t) for t in turns]
        first, messages, total = _fit_oldest_first(
            spec, question, counter, len(units), lambda k: "\n\n".join(texts[k:])
        )
        kept_verbatim = tuple(i for u in units[first:] if u.kind == "verbatim" for i in u.turns)
        parts = [
            PartManifest(
                "history",
                counter.count_text("\n\n".join(texts[first:])) if texts[first:] else 0,
                turns=tuple(i for u in units[first:] for i in u.turns),
                note=f"{len(kept_verbatim)} verbatim turn(s)",
            )
        ]
        manifest = _baseline_manifest(
            self.name, spec, question, counter, total, units, first, parts, notes=notes, fallback=fallback
        )
        return Prompt(messages=messages, manifest=manifest)


# --------------------------------------------------------------------------------------------------
# Rolling: summary + ledger + recalled + recent, within budget, giving way in a fixed order.

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
GAP = "[…]"


def split_sentences(text: str) -> list[str]:
    """Sentences by their end punctuation (Latin and CJK); good enough to cut a summary's middle."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def current_facts(ledger: Sequence[LedgerEntry]) -> list[LedgerEntry]:
    """The latest value of each slot (entries without a slot stand for themselves), oldest first.

    A corrected value supersedes the earlier one in the prompt; the store keeps both.
    """
    latest: dict[str, tuple[int, LedgerEntry]] = {}
    for pos, e in enumerate(ledger):
        key = e.slot or f"{e.kind}\x00{e.norm or e.value}"
        held = latest.get(key)
        if held is None or e.turn >= held[1].turn:
            latest[key] = (pos, e)
    return [e for _, e in sorted(latest.values(), key=lambda pe: (pe[1].turn, pe[0]))]


def render_facts(facts: Sequence[LedgerEntry]) -> str:
    """The ledger compactly, one line per turn: ``turn 13: reference TR3396; time 9:29``.

    Grouping by turn costs about two thirds of one line per entry, and the ledger is the part
    that must fit most facts into a small budget.
    """
    lines: list[str] = []
    for i, e in enumerate(facts):
        if i and facts[i - 1].turn == e.turn:
            lines[-1] += f"; {e.kind} {e.value}"
        else:
            lines.append(f"turn {e.turn}: {e.kind} {e.value}")
    return "\n".join(lines)


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


SUMMARY_HEADER = "Summary of turns {first}-{last}:"
LEDGER_HEADER = "Exact facts, by the turn they were said in:"
LATEST_LEDGER_HEADER = "Exact facts of the latest turns:"
RECALLED_HEADER = "Earlier turns recalled for this question:"
RECENT_HEADER = "Latest turns:"


class _RollingFit:
    """The mutable state of one rolling build: what is kept of each part, and its estimated tokens.

    Each piece is counted once (a line with its newline, a sentence with its space), so the estimate
    is a running sum and every give-way step is O(1); the prompt is rendered and counted whole only
    at the end, to confirm (and, rarely, to go one step further).
    """

    def __init__(
        self,
        counter: TokenCounter,
        summary: SummaryVersion | None,
        facts: list[LedgerEntry],
        recalled: list[Turn],
        verbatim: list[Turn],
        keep_last: int,
        covered: tuple[int, ...],
    ) -> None:
        self.counter = counter
        self.covered = covered  # the turns the summary stands for
        self.summary = summary
        self.facts = facts
        self.recalled = recalled  # best first
        self.verbatim = verbatim  # chronological
        self.keep_last = keep_last  # the last pair: verbatim[keep_last:]
        self.events: list[tuple[str, int]] = []
        c = counter.count_text
        # Summary: whole until its middle must go; then sentences.
        self.summary_header = SUMMARY_HEADER.format(first=0, last=summary.covers_to) if summary is not None else ""
        self.sentences: list[str] | None = None
        self.sentence_costs: list[int] = []
        self.sentence_kept: list[bool] = []
        self.middle_order: list[int] = []
        self.summary_on = summary is not None
        self.summary_cost = (c(self.summary_header + "\n") + c(summary.text.strip()) + 2) if summary else 0
        # Ledger: counted as one block until an entry must go; then line by line.
        self.fact_heads = [i == 0 or facts[i - 1].turn != e.turn for i, e in enumerate(facts)]
        self.fact_costs: list[int] | None = None
        self.fact_from = 0
        self.fact_sum = c(render_facts(facts)) + 1 if facts else 0
        # Facts of turns after the summary go in a second block, with its own header (see ``sections``).
        self.split_after = summary.covers_to if summary is not None else -1
        self.ledger_header = c(LEDGER_HEADER + "\n") + 2 if facts else 0
        self.latest_header = c(LATEST_LEDGER_HEADER + "\n") + 2 if facts else 0
        # Recalled: one count per line (each may give way on its own), counted in ``count_verbatim``.
        self.recalled_lines = [f"(turn {t.index}) {render_turn(t)}" for t in recalled]
        self.recalled_costs = [0] * len(recalled)
        self.recalled_n = len(recalled)
        self.recalled_sum = 0
        self.recalled_header = 0
        # Verbatim: counted lazily, newest first (see ``count_verbatim``).
        self.verbatim_lines = [render_turn(t) for t in verbatim]
        self.verbatim_costs: list[int] = [0] * len(verbatim)
        self.verbatim_from = len(verbatim)  # nothing counted yet
        self.verbatim_sum = 0
        self.verbatim_header = c(RECENT_HEADER + "\n") + 2 if verbatim else 0

    # -- estimate ---------------------------------------------------------------------------------

    def count_verbatim(self, room: int) -> None:
        """Count verbatim turns newest first; a turn that alone would push the verbatim part past
        ``room`` can never be kept, so it and all older ones give way now, without being counted.
        Because recalled turns give way before any verbatim turn, they all go first."""
        c = self.counter.count_text
        acc = self.verbatim_header
        pos = len(self.verbatim)
        while pos > 0:
            cost = c(self.verbatim_lines[pos - 1]) + 1
            if acc + cost > room and pos - 1 < self.keep_last:
                break
            pos -= 1
            self.verbatim_costs[pos] = cost
            acc += cost
        self.verbatim_from = pos
        self.verbatim_sum = acc - self.verbatim_header
        if pos > 0:
            while self.recalled_n:
                self.drop_recalled()
            self.events.extend(("verbatim", self.verbatim[i].index) for i in range(pos))
        elif self.recalled_n:  # they may fit: count them
            self.recalled_costs = [c(line) + 1 for line in self.recalled_lines]
            self.recalled_sum = sum(self.recalled_costs)
            self.recalled_header = c(RECALLED_HEADER + "\n") + 2

    def estimate(self) -> int:
        """Estimated tokens of [CONTEXT] as it stands; O(1), kept up to date by every step."""
        total = self.summary_cost if self.summary_on else 0
        if self.fact_from < len(self.facts):  # facts are oldest first: each block is there if its end is kept
            total += self.fact_sum
            total += self.ledger_header if self.facts[self.fact_from].turn <= self.split_after else 0
            total += self.latest_header if self.facts[-1].turn > self.split_after else 0
        if self.recalled_n:
            total += self.recalled_header + self.recalled_sum
        if self.verbatim_from < len(self.verbatim):
            total += self.verbatim_header + self.verbatim_sum
        return total

    # -- give way, one step at a time, in the fixed order ---------------------------------------------

    def drop_recalled(self) -> None:
        self.recalled_n -= 1
        self.recalled_sum -= self.recalled_costs[self.recalled_n]
        self.events.append(("recalled", self.recalled[self.recalled_n].index))

    def shrink(self) -> bool:
        """One step of the fixed order; False when nothing is left to give way."""
        if self.recalled_n:
            self.drop_recalled()
            return True
        if self.verbatim_from < self.keep_last:
            self._drop_verbatim("verbatim")
            return True
        if self.summary_on and self._drop_middle_sentence():
            return True
        if len(self.facts) - self.fact_from > 1:
            self._drop_fact()
            return True
        if self.summary_on:
            self.summary_on = False
            self.events.append(("summary", 0))
            return True
        if self.verbatim_from < len(self.verbatim):
            self._drop_verbatim("last-pair")
            return True
        if self.fact_from < len(self.facts):
            self._drop_fact()
            return True
        return False

    def _drop_verbatim(self, kind: str) -> None:
        self.events.append((kind, self.verbatim[self.verbatim_from].index))
        self.verbatim_sum -= self.verbatim_costs[self.verbatim_from]
        self.verbatim_from += 1

    def _fact_cost(self, i: int, head: bool) -> int:
        """An entry's share: ``turn N: kind value`` and its line break when it opens its turn's
        line, else ``; kind value``."""
        e = self.facts[i]
        if head:
            return self.counter.count_text(f"turn {e.turn}: {e.kind} {e.value}") + 1
        return self.counter.count_text(f"; {e.kind} {e.value}")

    def _drop_fact(self) -> None:
        if self.fact_costs is None:
            self.fact_costs = [self._fact_cost(i, head) for i, head in enumerate(self.fact_heads)]
            self.fact_sum = sum(self.fact_costs)
        i = self.fact_from
        self.events.append(("ledger", i))
        self.fact_sum -= self.fact_costs[i]
        self.fact_from += 1
        nxt = i + 1
        if nxt < len(self.facts) and not self.fact_heads[nxt]:  # it now opens its turn's line
            self.fact_heads[nxt] = True
            head = self._fact_cost(nxt, True)
            self.fact_sum += head - self.fact_costs[nxt]
            self.fact_costs[nxt] = head

    def _drop_middle_sentence(self) -> bool:
        assert self.summary is not None
        if self.sentences is None:
            c = self.counter.count_text
            self.sentences = split_sentences(self.summary.text)
            self.sentence_costs = [c(s) + 1 for s in self.sentences]
            self.sentence_kept = [True] * len(self.sentences)
            middle = range(1, len(self.sentences) - 1)
            centre = (len(self.sentences) - 1) / 2
            self.middle_order = sorted(middle, key=lambda i: (abs(i - centre), i))
            self.gap_cost = c(" " + GAP) + 1
            self.summary_cost = c(self.summary_header + "\n") + 2 + sum(self.sentence_costs)
        if not self.middle_order:
            return False
        i = self.middle_order.pop(0)
        if all(self.sentence_kept[1:-1]):
            self.summary_cost += self.gap_cost
        self.sentence_kept[i] = False
        self.summary_cost -= self.sentence_costs[i]
        self.events.append(("sentence", i))
        return True

    # -- render -----------------------------------------------------------------------------------

    def summary_text(self) -> str:
        assert self.summary is not None
        if self.sentences is None:
            return self.summary.text.strip()
        out: list[str] = []
        for s, kept in zip(self.sentences, self.sentence_kept):
            if kept:
                out.append(s)
            elif not out or out[-1] != GAP:
                out.append(GAP)
        return " ".join(out)

    def sections(self) -> list[tuple[str, str, int, tuple[int, ...]]]:
        """(name, text, estimated tokens, turns) of each part that is not empty, in prompt order.

        The ledger is split at the summary's ``covers_to``: facts of summarized turns come after the
        summary, and change only when the summary moves (or a fact is corrected); facts of the turns
        after it come last, where the prompt changes anyway. So what llama.cpp must evaluate afresh
        at each turn stays small however long the conversation grows.
        """
        kept = self.facts[self.fact_from :]
        older = [e for e in kept if e.turn <= self.split_after]
        latest = kept[len(older) :]
        out = []
        if self.summary_on and self.summary is not None:
            covered = self.covered
            out.append(("summary", f"{self.summary_header}\n{self.summary_text()}", self.summary_cost, covered))
        if older:
            out.append(self._ledger_part("ledger", LEDGER_HEADER, older))
        if self.verbatim_from < len(self.verbatim):
            lines = self.verbatim_lines[self.verbatim_from :]
            cost = self.verbatim_header + self.verbatim_sum
            turns = tuple(t.index for t in self.verbatim[self.verbatim_from :])
            out.append(("recent", RECENT_HEADER + "\n" + "\n".join(lines), cost, turns))
        if self.recalled_n:
            kept_recalled = sorted(range(self.recalled_n), key=lambda k: self.recalled[k].index)
            lines = [self.recalled_lines[k] for k in kept_recalled]
            cost = self.recalled_header + self.recalled_sum
            turns = tuple(self.recalled[k].index for k in kept_recalled)
            out.append(("recalled", RECALLED_HEADER + "\n" + "\n".join(lines), cost, turns))
        if latest:
            out.append(self._ledger_part("ledger-latest", LATEST_LEDGER_HEADER, latest))
        return out

    def _ledger_part(self, name: str, header: str, facts: list[LedgerEntry]) -> tuple[str, str, int, tuple[int, ...]]:
        text = header + "\n" + render_facts(facts)
        return name, text, self.counter.count_text(text) + 2, tuple(sorted({e.turn for e in facts}))


class RollingPolicy:
    """The appliance's own policy (DESIGN.md, "What goes into every answer's prompt").

    [CONTEXT] holds the summary (turns ``0..covers_to``), the fact ledger's entries of those turns
    (latest value per slot, with its turn), the latest turns verbatim (the last ``recent_pairs``
    pairs, plus every turn the summary does not cover yet: seed 002's fallback of previous summary +
    verbatim newer turns), recalled older turns, and the ledger's entries of the turns after the
    summary. The order is chosen for llama.cpp's prefix cache: the summary worker moves the summary
    only in batches (``summarizer.every_turns``) and leaves the latest turns out of it, so between
    two updates each prompt extends the previous one after its last verbatim turn, and what changes
    from question to question (recalled turns, new facts) comes last, next to the question.

    When the parts do not fit ``spec.budget`` they give way in a fixed order, each step logged in
    ``Manifest.cuts``: recalled turns (the least relevant first); the oldest latest turns (the last
    pair stays); the summary's middle sentences, from the centre out (first and last stay); ledger
    entries, oldest first, down to the newest; then what was protected: the rest of the summary, the
    last pair, and last of all the newest ledger entry.
    """

    name = "rolling"
    uses_summary = True

    def __init__(self, recent_pairs: int = 4) -> None:
        self.recent_pairs = recent_pairs

    def recall_candidates(self, snap: Snapshot) -> tuple[Turn, ...]:
        """The turns that are not carried verbatim anyway: what recall may choose from."""
        summary = usable_summary(snap)
        covers_to = summary.covers_to if summary is not None else -1
        start = _recent_start(snap.turns, self.recent_pairs)
        return tuple(t for pos, t in enumerate(snap.turns) if pos < start and t.index <= covers_to)

    def build(
        self, snap: Snapshot, question: str, spec: PromptSpec, counter: TokenCounter, recalled: Sequence[int] = ()
    ) -> Prompt:
        turns = snap.turns
        summary = usable_summary(snap)
        covers_to = summary.covers_to if summary is not None else -1
        start = _recent_start(turns, self.recent_pairs)
        verbatim = [t for pos, t in enumerate(turns) if pos >= start or t.index > covers_to]
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
        covered = tuple(t.index for t in turns if t.index <= covers_to)
        fit = _RollingFit(counter, summary, current_facts(snap.ledger), chosen, verbatim, keep_last, covered)

        fixed = counter.count(assemble(spec, "", question)) - counter.count_text(NO_CONTEXT)
        room = spec.budget - fixed
        if room < 0:
            raise _too_long(spec)
        fit.count_verbatim(room)
        while fit.estimate() > room:
            if not fit.shrink():
                raise _too_long(spec)
        while True:
            sections = fit.sections()
            messages = assemble(spec, "\n\n".join(s[1] for s in sections), question)
            total = counter.count(messages)
            if total <= spec.budget:
                break
            if not fit.shrink():
                raise _too_long(spec)

        verbatim_turns = next((s[3] for s in sections if s[0] == "recent"), ())
        recalled_turns = next((s[3] for s in sections if s[0] == "recalled"), ())
        summarized = next((s[3] for s in sections if s[0] == "summary"), ())
        accounted = {*verbatim_turns, *recalled_turns, *summarized}
        cut_turns = tuple(t.index for t in turns if t.index not in accounted)
        pending = [t.index for pos, t in enumerate(turns) if pos < start and t.index > covers_to]
        notes = []
        if pending:
            reason = "no summary yet" if summary is None else f"the summary covers turns 0-{covers_to}"
            notes.append(f"turns {_span(pending)} carried verbatim: {reason}")
        parts = [PartManifest(name, cost, turns=tt) for name, _, cost, tt in sections]
        manifest = Manifest(
            policy=self.name,
            budget=spec.budget,
            total_tokens=total,
            parts=part_manifests(spec, question, counter, total, parts),
            verbatim_turns=verbatim_turns,
            summarized_turns=summarized,
            recalled_turns=recalled_turns,
            cut_turns=cut_turns,
            cuts=(*notes, *_describe_cuts(fit, set(summarized), spec.budget)),
            fallback=bool(pending),
        )
        return Prompt(messages=messages, manifest=manifest)


def _describe_cuts(fit: _RollingFit, summarized: set[int], budget: int) -> list[str]:
    """One line per kind of step, in the order the steps were taken."""
    grouped: dict[str, list[int]] = {}
    for kind, value in fit.events:
        grouped.setdefault(kind, []).append(value)
    out = []
    for kind, values in grouped.items():
        if kind == "recalled":
            out.append(f"recalled turns {', '.join(map(str, values))} gave way to fit {budget} tokens")
        elif kind in ("verbatim", "last-pair"):
            lost = sorted(i for i in values if i not in summarized)
            what = "the last pair's turns" if kind == "last-pair" else "the oldest latest turns"
            tail = f"; turns {_span(lost)} are cut" if lost else "; all still in the summary"
            out.append(f"{what} {_span(sorted(values))} gave way{tail}")
        elif kind == "sentence":
            n = len(fit.sentences or [])
            out.append(f"summary: {len(values)} middle sentence(s) of {n} cut, first and last kept")
        elif kind == "ledger":
            gone = [fit.facts[k] for k in values]
            shown = ", ".join(f"{e.kind} {e.value} (turn {e.turn})" for e in gone)
            out.append(f"ledger: {len(gone)} oldest entr{'y' if len(gone) == 1 else 'ies'} cut: {shown}")
        elif kind == "summary":
            out.append("summary dropped entirely (its first and last sentences too)")
    return out


# --------------------------------------------------------------------------------------------------


def make_policies(
    options: ContextOptions = ContextOptions(), threshold_counter: TokenCounter | None = None
) -> dict[str, ContextPolicy]:
    """Every policy, configured; ``threshold_counter`` counts the ``threshold`` policy's trigger
    (for example OpenAI tokens), and defaults to the budget's own counter."""
    policies: list[ContextPolicy] = [
        RawPolicy(),
        SeedTopicsPolicy(options.seed_recent_pairs, options.seed_older_pairs, chars=options.seed_topic_chars),
        SeedQAPolicy(
            options.seed_recent_pairs,
            options.seed_older_pairs,
            question_chars=options.seed_question_chars,
            answer_chars=options.seed_answer_chars,
        ),
        ThresholdPolicy(options.threshold_tokens, threshold_counter),
        RollingPolicy(options.recent_pairs),
    ]
    return {p.name: p for p in policies}


POLICIES: dict[str, ContextPolicy] = make_policies()
