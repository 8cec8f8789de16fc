"""The checked stream: text reaches the customer only once the checker has passed it.

The model's pieces are cut into units as they come: the first sentence whole, then each sentence
(it ends at ``.``, ``!``, ``?`` or a line break), a long one at its clauses (``,``, ``;``, ``:``).
A unit is checked with everything shown before it (:meth:`~appliance.turn.plan.TurnPlan.check`,
the same check as the whole answer's) and passes when no finding reaches into it. A fact is never
cut in two: a unit ends only where a mark is followed by a space, so "1,500.00" or "3.5%" stays whole.

The first sentence is also where an answer says yes or no: an opening yes that its own clause
contradicts is dropped there (:func:`~appliance.facts.opener.settled`), and an answer that says the
opposite of the document's own reply is replaced by that reply before any of it is shown
(:func:`appliance.turn.guard.quote`).

What was shown is never taken back. Under ``regenerate``, a unit that fails ends the stream for one
retry with the stricter instruction (:func:`appliance.turn.guard.strict_spec`), streamed through a
checked stream of its own that may not retry again: from the start where nothing was shown yet, else
as a continuation of the text shown (the model's answer must begin with exactly that text; a model
that cannot continue a given text, ``continues`` false, retries only a first sentence). A unit that
fails otherwise is repaired from the last passed text:

* one that asks for a secret: the stream stops and the safe answer follows what was shown
  (``flag`` shows it, flagged, as ``guard.policy`` says);
* under ``regenerate``, one from the documents' passages that states a fact no source has: the stream
  stops and the not-found text follows (a figure the institution never published is never shown);
* any other unsupported fact: its span is replaced by ``guard.redact_phrase`` and the stream goes
  on, checked (``flag`` shows it, flagged).

The stream stops the generation by raising :class:`Stopped` from the model's token callback (the
models leave a sequence whose callback failed); :meth:`CheckedStream.outcome` is then final.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass

from appliance.facts import asking, checker, opener, stance
from appliance.facts.entities import extract
from appliance.protocols import OnToken
from appliance.turn import guard
from appliance.turn.plan import TurnPlan
from appliance.types import CheckResult, Finding, Generation, GuardAction

# Where a sentence ends: its marks (and a closing quote or bracket) before a space, or a line break.
_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=\s)|(?=\n)")
# Where a long sentence's clause ends: a comma, semicolon or colon before a space.
_CLAUSE_END = re.compile(r"[,;:](?=\s)")
# A sentence this long (in characters) is passed clause by clause, so a long one is not held whole.
LONG_SENTENCE = 60

# Words that pass ahead of their unit's end stay this many complete words behind the newest: a fact
# or a request for a secret ("could you tell me your PIN") is read by the check within them.
LAG = 4
_WORD = re.compile(r"\S+(?=\s)")
# Text that ends a sentence or a clause: a fixed text may follow it after a space.
_ENDED = re.compile(r"[.!?\u2026,;:][\"'\u201d\u2019)\]]*\s*$")

# The kinds of finding that end the stream rather than being redacted in it.
_SECRET_KINDS = (checker.REQUEST,)


class Stopped(Exception):
    """Raised from the token callback: the rest of the generation is not wanted."""


@dataclass(frozen=True)
class Streamed:
    """What a checked stream gave: ``text`` is exactly what the client received (the answer to store),
    ``model_text`` what the model generated up to where the stream stopped it, ``action`` the repair
    (``none``, ``flag``, ``redact``, ``safe_answer``, ``not_found``, ``quote``), ``opener`` an opening
    yes that was dropped."""

    text: str
    model_text: str
    action: GuardAction
    opener: str = ""


class CheckedStream:
    """One answer's checked stream: :meth:`feed` with each piece (from the model's thread), then
    :meth:`outcome`. ``emit`` receives only checked text (None: nothing is streamed, only decided)."""

    def __init__(
        self,
        plan: TurnPlan,
        rules: guard.Rules,
        emit: OnToken | None,
        *,
        may_retry: bool = True,
        continues: bool = False,
        shown: str = "",
    ) -> None:
        self.plan = plan
        self.rules = rules
        self.emit = emit
        self.may_retry = may_retry and rules.policy == "regenerate"
        self.continues = continues  # the model can continue the text shown (a retry need not start over)
        self.retry: tuple[Finding, ...] = ()  # what a failed unit got wrong: the retry is told
        self.prefix = shown  # what was shown before this stream (it continues that text)
        self.raw = ""  # everything the model generated
        self.used = 0  # how much of it is decided (shown, redacted or dropped)
        self.shown = shown
        self.action = GuardAction.NONE
        self.opener = ""
        self.stopped = False
        self.pieces = 0  # how many pieces came
        self.first_s = 0.0  # seconds from the stream's making to the first piece
        self._made = time.perf_counter()
        self._looked = 0  # where the last complete word ended when the words ahead were last looked at

    def feed(self, piece: str) -> None:
        """Take one piece of the model's answer; pass every unit it completes. Raises :class:`Stopped`
        once a repair has ended the answer."""
        if not self.pieces:
            self.first_s = time.perf_counter() - self._made
        self.pieces += 1
        if self.stopped:
            raise Stopped()
        self.raw += piece
        while (end := self._unit_end()) is not None:
            unit, self.used = self.raw[self.used : end], end
            self._pass(unit)
            if self.stopped:
                raise Stopped()
        self._words_ahead()

    def outcome(self) -> Streamed:
        """Pass what is left (the answer ended), and say what was shown."""
        if not self.stopped:
            rest = self.raw[self.used :].rstrip()
            self.used = len(self.raw)
            if rest.strip():
                self._pass(rest)
        return Streamed(self.shown, (self.prefix + self.raw).strip(), self.action, self.opener)

    def _unit_end(self) -> int | None:
        """The end (in ``raw``) of the next complete unit, or None while it is still coming."""
        pending = self.raw[self.used :]
        start = len(pending) - len(pending.lstrip())
        if start == len(pending):
            return None
        sentence = _SENTENCE_END.search(pending, start + 1)
        if self.shown:  # after the first sentence, a long one goes clause by clause
            for clause in _CLAUSE_END.finditer(pending, start + 1):
                if sentence is not None and clause.end() >= sentence.end():
                    break
                if clause.end() - start >= LONG_SENTENCE:
                    return self.used + clause.end()
        return None if sentence is None else self.used + sentence.end()

    def _words_ahead(self) -> None:
        """Pass the words of the unit still coming that carry no fact, ``LAG`` words behind the last
        complete one (a fact, or a request for a secret, shows itself within those): the words before
        the first span the check reads as a fact or a finding, in the text with everything after them
        so far. A first sentence passes word by word only where a failure in it can be retried as a
        continuation of the words shown (``continues``), and not where it may be settled or quoted."""
        pending = self.raw[self.used :]
        words = list(_WORD.finditer(pending))
        complete = self.used + words[-1].end() if words else self.used
        if complete == self._looked or len(words) <= LAG:
            return  # no new complete word since the last look: nothing new to decide
        self._looked = complete
        if not self.shown and (not self.continues or self._opening_held(pending)):
            return
        seen = self.shown + pending  # the word still coming too: "Ihre P" may be asking for a PIN
        cut = len(self.shown) + words[-1 - LAG].end()
        # Every span a check of ``seen`` could find: its facts (supported or not) and its requests.
        spans = [(e.start, e.end) for e in extract(seen)] + [(a.start, a.end) for a in asking.find(seen)]
        for start, end in spans:
            if end > len(self.shown) and start < cut:
                cut = start  # hold from where the fact begins
        end = len(pending[: max(0, cut - len(self.shown))].rstrip())  # a space goes with the word after it
        if pending[:end].strip():
            self.used += end
            self._show(pending[:end] if self.shown else pending[:end].lstrip())

    def _opening_held(self, pending: str) -> bool:
        """Whether the first sentence is held whole: it opens with a yes or a no (which its own clause
        may contradict), or the plan has a document's own reply that the answer may be held to."""
        found = self.plan.retrieval
        return stance.opens(pending) or (found is not None and found.reply is not None)

    def _pass(self, unit: str) -> None:
        if not self.shown:
            unit = self._opening(unit.lstrip())
            if self.stopped or not unit:
                return
        before = len(self.shown)
        result = self.plan.check(self.shown + unit)
        new = [f for f in result.findings if f.entity.end > before and f.entity.start >= 0]
        if not new or self.rules.policy == "flag":
            self.action = GuardAction.FLAG if new and self.action == GuardAction.NONE else self.action
            self._show(unit)
        elif self.may_retry and (self.continues or not self.shown):
            self.retry, self.action, self.stopped = tuple(new), GuardAction.REGENERATE, True
        elif any(f.entity.kind in _SECRET_KINDS for f in new):
            self._end(guard.safe_text(self.raw, self.rules.safe_answers), GuardAction.SAFE_ANSWER)
        elif self.rules.policy == "regenerate" and self.plan.sources and self.rules.not_found is not None:
            self._end(self.rules.not_found(), GuardAction.NOT_FOUND)
        else:
            self.action = GuardAction.REDACT
            self._show(_redacted(unit, new, before, self.rules.redact_phrase))

    def _opening(self, unit: str) -> str:
        """The first sentence as it may be shown: without a yes its own clause contradicts, or, where it
        says the opposite of the document's own reply, nothing (the reply ends the answer)."""
        settled, self.opener = opener.settled(unit)
        draft = Generation(settled, "", 0, 0, 0.0, 0.0)
        quoted = guard.quote(self.plan, guard.Guarded(draft, CheckResult()))
        if quoted.check.action == GuardAction.QUOTE:
            self._end(quoted.answer.text, GuardAction.QUOTE)
            return ""
        return settled

    def _show(self, text: str) -> None:
        if not text:
            return
        self.shown += text
        if self.emit is not None:
            self.emit(text)

    def _end(self, text: str, action: GuardAction) -> None:
        """End the answer with a fixed ``text`` after what was shown (after a dash where that stopped
        in the middle of a sentence)."""
        if self.shown:
            text = (" " if _ENDED.search(self.shown) else " \u2014 ") + text
        self._show(text)
        self.action, self.stopped = action, True


def _redacted(unit: str, findings: list[Finding], offset: int, phrase: str) -> str:
    """``unit`` (which starts at ``offset`` of the checked text) with the findings' spans replaced by
    ``phrase``; a span that began in text already shown is replaced from the unit's start."""
    inside = tuple(
        Finding(
            dataclasses.replace(f.entity, start=max(f.entity.start, offset) - offset, end=f.entity.end - offset),
            f.status,
        )
        for f in findings
    )
    return checker.redact(unit, CheckResult(findings=inside), phrase)


def streamed_check(plan: TurnPlan, out: Streamed, first: CheckResult) -> CheckResult:
    """The stored answer's check: the shown text's own, with the repair, and the model's text and its
    check ``first`` as the original where a repair changed it."""
    if out.text == out.model_text:
        return first if first.ok else dataclasses.replace(first, action=GuardAction.FLAG)
    shown = plan.check(out.text)
    if out.action in (GuardAction.NONE, GuardAction.FLAG):  # only an opening yes was dropped
        return dataclasses.replace(
            shown, action=GuardAction.FLAG if shown.findings else GuardAction.NONE, opener=out.opener
        )
    return dataclasses.replace(
        shown, action=out.action, original=out.model_text, original_findings=first.findings, opener=out.opener
    )
