"""The baseline policies: the whole transcript (``raw``) and the three seeds' own context shapes.

They exist so that the appliance's ``rolling`` policy can be compared with them on the same
sessions, so each keeps its seed's shape exactly (tests hold them to the seeds' own examples):

* ``raw``: the whole transcript, oldest turns dropped to fit.
* ``seed-topics`` (seed 001): older pairs as "Topics discussed / Key points", the last pairs verbatim.
* ``seed-qa`` (seed 000): older pairs as truncated "Q{i}/A{i}" lines, the last pairs verbatim.
* ``threshold`` (seed 003): over a token threshold, the first message plus the session's summary.

None of the seeds had a budget, so all of them give way the same simple way, whole units oldest first
(:mod:`appliance.context.units`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from appliance.context.base import (
    PromptSpec,
    part_manifests,
    render_turn,
    turn_span,
    usable_summary,
)
from appliance.context.units import Baseline, Build, Unit
from appliance.protocols import TokenCounter
from appliance.types import Manifest, PartManifest, Prompt, Snapshot, Turn


class RawPolicy(Baseline):
    """The whole transcript, verbatim; the oldest turns give way when it does not fit."""

    name = "raw"

    def build(
        self, snap: Snapshot, question: str, spec: PromptSpec, counter: TokenCounter, recalled: Sequence[int] = ()
    ) -> Prompt:
        turns = snap.turns
        lines = [render_turn(t) for t in turns]
        build = Build(self.name, spec, question, counter)
        fitted = build.fit(len(turns), lambda k: "\n".join(lines[k:]))
        first, total = fitted.first, fitted.total
        kept = tuple(t.index for t in turns[first:])
        cut = tuple(t.index for t in turns[:first])
        transcript = PartManifest("transcript", counter.count_text("\n".join(lines[first:])) if kept else 0, turns=kept)
        extra = build.passage_parts(fitted)
        dropped = (
            [f"dropped the {len(cut)} oldest turns ({cut[0]}-{cut[-1]}) to fit {spec.budget} tokens"] if cut else []
        )
        manifest = Manifest(
            policy=self.name,
            budget=spec.budget,
            total_tokens=total,
            parts=part_manifests(spec, question, counter, total, [transcript, *extra.parts]),
            verbatim_turns=kept,
            cut_turns=cut,
            cuts=(*dropped, *extra.notes),
            passages=extra.placed,
            cut_passages=extra.cut,
        )
        return Prompt(messages=fitted.messages, manifest=manifest)


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


class _SeedPolicy(Baseline):
    """Shared shape of seeds 000 and 001: the last ``recent`` pairs verbatim, up to ``older`` pairs
    before them compressed by ``summarize``, anything older outside the seed's window (cut)."""

    name = ""
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
        units = ([Unit("summarized", tuple(i for p in older for i in _pair_turns(p)))] if older else []) + [
            Unit("verbatim", _pair_turns(p)) for p in newest
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

        build = Build(self.name, spec, question, counter)
        fitted = build.fit(len(units), render)
        first = fitted.first
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
            [f"turns {turn_span(outside_turns)} are older than the seed's window of {self.recent + self.older} pairs"]
            if outside_turns
            else []
        )
        manifest = build.manifest(fitted, units, parts, outside=outside_turns, notes=notes)
        return Prompt(messages=fitted.messages, manifest=manifest)


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


@dataclass(frozen=True)
class _History:
    """Seed 003's history before it is fitted: its units (the first message first) and their texts,
    the manifest's notes, and whether it fell back to the verbatim turns (no summary yet)."""

    units: list[Unit]
    texts: list[str]
    notes: list[str]
    fallback: bool = False


class ThresholdPolicy(Baseline):
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

    def _history(self, snap: Snapshot, counter: TokenCounter) -> _History:
        """The history's units and texts: over the threshold with a summary, the first message, the
        summary and the turns newer than it; otherwise every turn, verbatim."""
        turns = snap.turns
        size = (self.threshold_counter or counter).count_text(flatten_history(turns)) if turns else 0
        summary = usable_summary(snap)
        if size > self.threshold and summary is not None and len(turns) > 1:
            covers_to = summary.covers_to
            pending = [t for t in turns[1:] if t.index > covers_to]
            summarized = tuple(t.index for t in turns[1:] if t.index <= covers_to)
            units = [Unit("verbatim", (turns[0].index,)), Unit("summarized", summarized)]
            units += [Unit("verbatim", (t.index,)) for t in pending]
            texts = [render_turn(turns[0]), f"Summary of the conversation since: {summary.text.strip()}"]
            texts += [render_turn(t) for t in pending]
            notes = [f"history of {size} tokens is over the threshold of {self.threshold}: summary in place"]
            if pending:
                notes.append(f"turns {turn_span([t.index for t in pending])} are newer than the summary: kept verbatim")
            return _History(units, texts, notes)
        units = [Unit("verbatim", (t.index,)) for t in turns]
        texts = [render_turn(t) for t in turns]
        if size <= self.threshold:
            return _History(units, texts, [])
        note = (
            f"history of {size} tokens is over the threshold of {self.threshold} but there is no "
            "summary yet: turns kept verbatim"
        )
        return _History(units, texts, [note], fallback=True)

    def build(
        self, snap: Snapshot, question: str, spec: PromptSpec, counter: TokenCounter, recalled: Sequence[int] = ()
    ) -> Prompt:
        history = self._history(snap, counter)
        units, texts = history.units, history.texts
        # Seed 003 keeps the first message as the conversation's anchor: it is the last part to give
        # way, after every later turn and the summary (drop order: units[1:], then units[0]).
        n = len(units)
        order = units[1:] + units[:1]

        def render(k: int) -> str:
            return "\n\n".join(texts[:1] + texts[k + 1 :]) if k < n else ""

        build = Build(self.name, spec, question, counter)
        fitted = build.fit(n, render)
        dropped = fitted.first
        kept = sorted((u for u in order[dropped:]), key=lambda u: u.turns[:1] or (-1,))
        kept_verbatim = tuple(i for u in kept if u.kind == "verbatim" for i in u.turns)
        rendered = render(dropped)
        parts = [
            PartManifest(
                "history",
                counter.count_text(rendered) if rendered else 0,
                turns=tuple(sorted(i for u in kept for i in u.turns)),
                note=f"{len(kept_verbatim)} verbatim turn(s)" + ("; the first message kept" if dropped < n else ""),
            )
        ]
        manifest = build.manifest(fitted, order, parts, notes=history.notes, fallback=history.fallback)
        return Prompt(
            messages=fitted.messages,
            manifest=dataclasses.replace(
                manifest,
                verbatim_turns=tuple(sorted(manifest.verbatim_turns)),
                summarized_turns=tuple(sorted(manifest.summarized_turns)),
            ),
        )
