"""Cutting a summary's middle to fit the budget, by the summary's own structure (seed 002's overflow rule).

Seed 002: when the context overflows, cut the summary from the middle and keep its first and last
sentences, which carry the issue and the current state. The summarizer writes one category per line
("Issue and status: ...", "Names: ...", ..., "Current state: ..."), often without a full stop, so
split on sentence punctuation alone such a summary is one or two "sentences" and nothing is left to
cut from its middle: under pressure the whole summary went. Its units are its lines, so whole middle
lines (categories) go first, from the centre out, the first and last staying; then middle sentences
within the lines left, from the centre out, each line's first and last staying; last, what is
between the summary's own first and last sentence, so that what stays longest is what the seed
keeps (and what the sentence rule alone kept before). A summary of one line is cut by its
sentences, as the seed says.

The rolling policy fits on the hot path of every turn, so each piece is counted once, when it may
first go (the lines at the first cut, the sentences of a line once only the first and last lines
are left), and :attr:`SummaryTrim.cost` is a running sum of them, plus the gap markers' counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

GAP = "[…]"  # stands where something was cut

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
# A category's label: a few words before a colon that ends the label ("Identifiers, dates, amounts:").
_LABEL = re.compile(r"^\s*[-*]?\s*(\w[\w ,&/'()-]{0,39}?)\s*:(?:\s|$)")


def split_sentences(text: str) -> list[str]:
    """Sentences by their end punctuation (Latin and CJK) followed by a space; good enough to cut a
    summary's middle. Not :func:`appliance.lexicon.text.sentences`: a summary may be in Chinese or
    Japanese, and its kept sentences are joined back with single spaces, so only a mark with a space
    after it ends one ("3.5" and "e.g." inside a line stay whole)."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def first_words(text: str, n: int = 4) -> str:
    words = text.split()
    return " ".join(words[:n]) + (" …" if len(words) > n else "")


def label_of(line: str) -> str:
    """A line as the manifest names it: its category label ("Names:"), else its first words."""
    m = _LABEL.match(line)
    if m and len(m.group(1).split()) <= 5:
        return m.group(1) + ":"
    return first_words(line)


def centre_out(positions: Sequence[int], length: int) -> list[int]:
    """``positions`` (of a sequence of ``length``) from the centre out; of two equally near, the earlier."""
    centre = (length - 1) / 2
    return sorted(positions, key=lambda p: (abs(p - centre), p))


class SummaryTrim:
    """The pieces of one summary, what is kept of them, and the running estimate of its tokens.

    :meth:`drop` takes one step, from the centre out each time: a middle line while more than the
    first and last lines are left; then a middle sentence of the lines left (each keeps its first
    and last); then the sentences between the summary's first and last sentence, the seed's own
    rule and the least that is kept; ``None`` once only those two are left (the caller then drops
    the summary whole, at its turn).
    """

    def __init__(self, text: str, count: Callable[[str], int]) -> None:
        self.count = count
        self.lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        n = len(self.lines)
        self.line_costs = [count(line) + 1 for line in self.lines]  # with its line break
        self.line_kept = [True] * n
        self.line_order = centre_out(range(1, n - 1), n)
        self.cut_lines: list[int] = []
        # Sentences: of the lines left once no middle line is; line -> its sentences, costs, kept.
        self.sentences: dict[int, list[str]] = {}
        self.sentence_costs: dict[int, list[int]] = {}
        self.sentence_kept: dict[int, list[bool]] = {}
        self.sentence_order: list[tuple[int, int]] | None = None
        self.each_line_from = 0  # from this step of ``sentence_order`` on, a line's own ends go too
        self.cut_sentences: list[tuple[int, int]] = []
        self.pieces = sum(self.line_costs)  # the kept pieces' tokens; gaps are added by ``cost``
        self.line_gap = self.inline_gap = 0

    @property
    def cost(self) -> int:
        """Estimated tokens of :meth:`text`: the kept pieces, and a gap marker's for each gap."""
        if not self.cut_lines and not self.cut_sentences:
            return self.pieces
        return self.pieces + sum(
            self.line_gap if line == GAP else self.inline_gap * line.count(GAP) for line in self.rendered()
        )

    def drop(self) -> str | None:
        """Cut one piece: ``"line"`` or ``"sentence"``; ``None`` when no middle is left to cut."""
        if not self.line_gap:
            self.line_gap, self.inline_gap = self.count(GAP) + 1, self.count(" " + GAP) + 1
        if self.line_order:
            i = self.line_order.pop(0)
            self.line_kept[i] = False
            self.pieces -= self.line_costs[i]
            self.cut_lines.append(i)
            return "line"
        if self.sentence_order is None:
            self._split_kept_lines()
        assert self.sentence_order is not None
        if len(self.cut_sentences) == len(self.sentence_order):
            return None
        i, j = self.sentence_order[len(self.cut_sentences)]
        self.sentence_kept[i][j] = False
        self.pieces -= self.sentence_costs[i][j]
        self.cut_sentences.append((i, j))
        return "sentence"

    def _split_kept_lines(self) -> None:
        """Count, sentence by sentence, the kept lines of more than one sentence, and order their
        sentences: each line's middle ones first, then the rest but the summary's first and last,
        each group from the centre of all the kept sentences out."""
        flat: list[tuple[int, int]] = []
        for i, line in enumerate(self.lines):
            if not self.line_kept[i]:
                continue
            sentences = split_sentences(line)
            if len(sentences) > 1:
                costs = [self.count(s) + 1 for s in sentences]  # with its space
                self.sentences[i], self.sentence_costs[i] = sentences, costs
                self.sentence_kept[i] = [True] * len(sentences)
                self.pieces += sum(costs) - self.line_costs[i]
            flat.extend((i, j) for j in range(max(1, len(sentences))))
        inner = [p for p, (i, j) in enumerate(flat) if i in self.sentences and 0 < j < len(self.sentences[i]) - 1]
        ends = [p for p, (i, j) in enumerate(flat) if 0 < p < len(flat) - 1 and i in self.sentences and p not in inner]
        self.sentence_order = [flat[p] for p in centre_out(inner, len(flat)) + centre_out(ends, len(flat))]
        self.each_line_from = len(inner)

    # -- render and explain ----------------------------------------------------------------------

    def rendered(self) -> list[str]:
        """The kept text, line by line: a gap marker where lines or sentences were cut, one for each
        run of cut text (a line's cut end and the cut lines after it are one gap)."""
        out: list[str] = []
        for i, line in enumerate(self.lines):
            if not self.line_kept[i]:
                shown = GAP
            elif i in self.sentences:
                parts: list[str] = []
                for s, kept in zip(self.sentences[i], self.sentence_kept[i]):
                    if kept:
                        parts.append(s)
                    elif not parts or parts[-1] != GAP:
                        parts.append(GAP)
                shown = " ".join(parts)
            else:
                shown = line
            if out and out[-1].endswith(GAP):
                if shown == GAP:
                    continue
                if shown.startswith(GAP + " "):
                    shown = shown[len(GAP) + 1 :]
            out.append(shown)
        return out

    def text(self) -> str:
        return "\n".join(self.rendered())

    def describe_lines(self) -> str:
        names = ", ".join(label_of(self.lines[i]) for i in sorted(self.cut_lines))
        n, k = len(self.lines), len(self.cut_lines)
        return f"summary: {k} middle line(s) of {n} cut ({names}), first and last kept"

    def describe_sentences(self) -> str:
        names = "; ".join(f'"{first_words(self.sentences[i][j])}"' for i, j in sorted(self.cut_sentences))
        n, k = sum(len(s) for s in self.sentences.values()), len(self.cut_sentences)
        if len(self.lines) == 1:
            kept = "first and last kept"
        elif k > self.each_line_from:
            kept = "the summary's first and last kept"
        else:
            kept = "each line's first and last kept"
        return f"summary: {k} middle sentence(s) of {n} cut ({names}), {kept}"
