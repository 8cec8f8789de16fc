"""How the ``rolling`` policy's parts give way to the budget: each part rendered and counted once,
dropped one step at a time in a fixed order, and every step logged for the manifest.

The order is :class:`~appliance.context.rolling.RollingPolicy`'s (see there): recalled turns, the
oldest latest turns, the summary's middle (``trim``), ledger entries oldest first, then the passages'
reserve (its unused part, then the passages, the last placed first), then what was protected, the
read-back facts last of all. The fitting is incremental (each piece counted once),
because it runs on the hot path of every turn, on sessions of a hundred turns and more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from appliance.context.base import PromptSpec, assemble, passages_note, place, render_turn, turn_span
from appliance.context.trim import SummaryTrim
from appliance.protocols import TokenCounter
from appliance.types import LedgerEntry, Message, SummaryVersion, Turn

# One part of [CONTEXT] as rendered: (name, text, estimated tokens, turns).
Section = tuple[str, str, int, tuple[int, ...]]


def render_facts(facts: Sequence[LedgerEntry]) -> str:
    """The ledger compactly, one line per turn: ``turn 13: reference TR3396; time 9:29``; a value's
    label or subject tells two of a kind apart (``account (savings) 33334444``).

    Grouping by turn costs about two thirds of one line per entry, and the ledger is the part
    that must fit most facts into a small budget.
    """
    lines: list[str] = []
    for i, e in enumerate(facts):
        if i and facts[i - 1].turn == e.turn:
            lines[-1] += f"; {e.about} {e.value}"
        else:
            lines.append(f"turn {e.turn}: {e.about} {e.value}")
    return "\n".join(lines)


SUMMARY_HEADER = "Summary of turns {first}-{last}:"
LEDGER_HEADER = "Exact facts, by the turn they were said in:"
LATEST_LEDGER_HEADER = "Exact facts of the latest turns:"
RECALLED_HEADER = "Earlier turns recalled for this question:"
RECENT_HEADER = "Latest turns:"
READBACK_HEADER = "The customer asks for these again; give them exactly as written here:"


def render_readback(entry: LedgerEntry) -> str:
    """One fact the question asks for, as the read-back part shows it."""
    return f"{entry.about} {entry.value} (said in turn {entry.turn})"


@dataclass(frozen=True)
class Layout:
    """What a rolling prompt carries where the budget allows it all, before anything gives way."""

    summary: SummaryVersion | None
    covered: tuple[int, ...]  # the turns the summary stands for
    facts: tuple[LedgerEntry, ...]  # the ledger's current facts, oldest first
    recalled: tuple[Turn, ...]  # best first; none of them verbatim anyway
    verbatim: tuple[Turn, ...]  # chronological: the latest turns and those the summary does not cover
    keep_last: int  # the last pair: verbatim[keep_last:]
    pending: tuple[int, ...]  # older turns carried verbatim because the summary does not cover them yet


class Fit:
    """The mutable state of one rolling build: what is kept of each part, and its estimated tokens.

    Each piece is counted once (a line with its newline, a sentence with its space), so the estimate
    is a running sum and every give-way step is O(1); the prompt is rendered and counted whole only
    at the end, to confirm (and, rarely, to go one step further).
    """

    def __init__(self, counter: TokenCounter, layout: Layout, spec: PromptSpec) -> None:
        readback = spec.readback
        self.counter = counter
        self.covered = layout.covered
        self.summary = summary = layout.summary
        self.facts = facts = layout.facts
        self.recalled = recalled = layout.recalled
        self.verbatim = verbatim = layout.verbatim
        self.keep_last = layout.keep_last
        self.events: list[tuple[str, int]] = []
        c = counter.count_text
        # Summary: whole until its middle must go; then its lines, then their sentences (``trim``).
        self.summary_header = SUMMARY_HEADER.format(first=0, last=summary.covers_to) if summary is not None else ""
        self.trim: SummaryTrim | None = None
        self.summary_on = summary is not None
        self.summary_base = c(self.summary_header + "\n") + 2 if summary else 0
        self.summary_cost = self.summary_base + c(summary.text.strip()) if summary else 0
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
        # Read-back: the facts the question asks for, one line each, right before the question.
        self.readback = tuple(readback)
        self.readback_costs = [c(render_readback(e)) + 1 for e in self.readback]
        self.readback_from = 0
        self.readback_header = c(READBACK_HEADER + "\n") + 2 if readback else 0
        # Passages: the best that fit their reserve, held whole until the conversation's guaranteed
        # shares need the room. The reserve is held whether or not this question placed any.
        self.placed = place(spec.passages, spec.passage_tokens, counter)
        self.passages_n = len(self.placed.passages)
        self.reserve = spec.passage_tokens

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
        if self.readback_from < len(self.readback):
            total += self.readback_header + sum(self.readback_costs[self.readback_from :])
        return total + self.reserve

    def passages_cost(self) -> int:
        """Tokens of the passages still placed (the reserve never holds less)."""
        if not self.passages_n:
            return 0
        return self.placed.header + sum(self.placed.costs[: self.passages_n])

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
        if self.summary_on and self._drop_summary_middle():
            return True
        if len(self.facts) - self.fact_from > 1:
            self._drop_fact()
            return True
        if self.reserve > self.passages_cost():  # what no passage of this question uses, first
            self.events.append(("reserve", self.reserve - self.passages_cost()))
            self.reserve = self.passages_cost()
            return True
        if self.passages_n:
            self.passages_n -= 1
            self.events.append(("passage", self.passages_n))
            self.reserve = self.passages_cost()
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
        if self.readback_from < len(self.readback):
            self.events.append(("readback", self.readback_from))
            self.readback_from += 1
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

    def _drop_summary_middle(self) -> bool:
        """One piece of the summary's middle: a line, or once only its first and last are left, a sentence."""
        assert self.summary is not None
        if self.trim is None:
            self.trim = SummaryTrim(self.summary.text, self.counter.count_text)
        kind = self.trim.drop()
        self.summary_cost = self.summary_base + self.trim.cost
        if kind is None:
            return False
        self.events.append((kind, len(self.events)))  # what went is in ``trim``
        return True

    # -- render -----------------------------------------------------------------------------------

    def summary_text(self) -> str:
        assert self.summary is not None
        return self.summary.text.strip() if self.trim is None else self.trim.text()

    def sections(self) -> list[Section]:
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
        if self.passages_n:
            out.append(("passages", self.placed.text(self.passages_n), self.passages_cost(), ()))
        if self.readback_from < len(self.readback):
            asked = self.readback[self.readback_from :]
            text = READBACK_HEADER + "\n" + "\n".join(render_readback(e) for e in asked)
            turns = tuple(sorted({e.turn for e in asked}))
            cost = self.readback_header + sum(self.readback_costs[self.readback_from :])
            out.append(("ledger-readback", text, cost, turns))
        return out

    def _ledger_part(self, name: str, header: str, facts: Sequence[LedgerEntry]) -> Section:
        text = header + "\n" + render_facts(facts)
        return name, text, self.counter.count_text(text) + 2, tuple(sorted({e.turn for e in facts}))


@dataclass(frozen=True)
class Fitted:
    """A rolling prompt within budget: the fit that got it there, its sections, the prompt and its tokens."""

    fit: Fit
    sections: list[Section]
    messages: tuple[Message, ...]
    total: int


def fitted(
    layout: Layout, spec: PromptSpec, question: str, counter: TokenCounter, fixed: int, slack: int
) -> Fitted | None:
    """The parts given way until the prompt and ``slack`` spare tokens fit the budget (``fixed``:
    the tokens of the prompt without its context); None if they cannot."""
    fit = Fit(counter, layout, spec)
    room = spec.budget - fixed - slack
    if room < 0:
        return None
    fit.count_verbatim(room - fit.reserve)
    while fit.estimate() > room:
        if not fit.shrink():
            return None
    while True:
        sections = fit.sections()
        messages = assemble(spec, "\n\n".join(s[1] for s in sections), question)
        total = counter.count(messages)
        if total + slack + fit.reserve - fit.passages_cost() <= spec.budget:
            return Fitted(fit, sections, messages, total)
        if not fit.shrink():
            return None


def describe_cuts(fit: Fit, summarized: set[int], budget: int) -> list[str]:
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
            tail = f"; turns {turn_span(lost)} are cut" if lost else "; all still in the summary"
            out.append(f"{what} {turn_span(sorted(values))} gave way{tail}")
        elif kind in ("line", "sentence") and fit.trim is not None:
            out.append(fit.trim.describe_lines() if kind == "line" else fit.trim.describe_sentences())
        elif kind == "ledger":
            gone = [fit.facts[k] for k in values]
            shown = ", ".join(f"{e.kind} {e.value} (turn {e.turn})" for e in gone)
            out.append(f"ledger: {len(gone)} oldest entr{'y' if len(gone) == 1 else 'ies'} cut: {shown}")
        elif kind == "summary":
            out.append("summary dropped entirely (its first and last sentences too)")
        elif kind == "reserve":
            out.append(f"the passages' reserve gave {sum(values)} unused tokens to the conversation's guaranteed parts")
        elif kind == "passage":
            out.append(passages_note([fit.placed.passages[k] for k in values], f"cut to fit {budget} tokens"))
        elif kind == "readback":
            gone = [fit.readback[k] for k in values]
            shown = ", ".join(f"{e.kind} {e.value} (turn {e.turn})" for e in gone)
            out.append(f"read-back: {len(gone)} asked-for fact{'' if len(gone) == 1 else 's'} cut: {shown}")
    return out
