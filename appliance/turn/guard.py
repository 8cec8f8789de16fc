"""The guard: what happens to an answer after its check, before it is stored.

An answer the check found something in (a fact the conversation does not support), or an answer to
a read-back question ("what was my account number?") that states none of the ledger's values it
asks for, is acted on by the configured policy:

* ``flag`` keeps it, findings and all;
* ``redact`` replaces the unsupported spans by a fixed phrase, and answers a read-back from the
  ledger in a fixed phrase of the question's language (action ``readback``);
* ``regenerate`` asks once more with a stricter instruction and keeps the better answer; a kept
  answer that still lacks what a read-back asks for is answered from the ledger, as above, and an
  answer from the operator's passages that still states a fact found in no source (an interest
  rate, a fee, a deadline no document gives) is replaced by the not-found text
  (``knowledge.not_found``; action ``not_found``): the customer hears "I don't have that
  information here" rather than a figure the institution never published.

An answer that asks the customer for a secret (a PIN, a password, a card security code, a one-time
code) is regenerated likewise, and if the kept answer still asks, replaced by a fixed safe answer
in the language it asked in (``privacy.safe_answer``; action ``safe_answer``); ``redact`` replaces
it at once, ``flag`` keeps it flagged.

Then an optional refiner rewrites the kept answer in a spoken style (seed 002), and the rewrite is
kept only if it neither drops nor changes a fact. An answer that opens with a yes and then states a
no ("Yes, dogs are not allowed.") loses the yes (:mod:`appliance.facts.opener`). Last, an answer
that says yes where the document it was given says no, or no where it says yes, is replaced by the
document's own answer (action ``quote``; :func:`quote`). Each step is a function of the turn's plan
and the answer the step before kept.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from appliance.config import SAFE_ANSWER
from appliance.context import PromptSpec
from appliance.facts import asking, checker, opener, readback, stance
from appliance.knowledge.chunk import title_names
from appliance.lexicon.text import fold, straight
from appliance.protocols import ChatModel
from appliance.stage import NEVER_ASK
from appliance.turn.plan import Parts, TurnPlan
from appliance.types import CheckResult, Entity, Finding, Generation, GuardAction, Message, current_facts

GuardPolicy = Literal["flag", "regenerate", "redact"]
GUARD_POLICIES: tuple[str, ...] = get_args(GuardPolicy)

# Added to the stricter retry's directive when the prompt carries passages of the operator's documents.
DOCUMENTS_TOO = "The documents above are known facts too: copy their figures exactly."

REFINE_PROMPT = (
    "Rewrite so it sounds like a real phone response. Aim for 2-3 short spoken-style sentences. "
    "Keep all factual content. Remove robotic phrasing. Reply with the rewritten text only."
)


@dataclass(frozen=True)
class Rules:
    """What the guard needs besides the plan: the configured policy (``guard.policy``) and the phrase
    that stands in for a redacted span, the refiner (None: no rewrite), the turn's cancel event,
    which stops the answers the guard asks for like the first, the live parts the plan names (its
    model and its policy's prompt, for a regeneration), the safe answer by language that
    replaces one asking for a secret (``privacy.safe_answer`` over the built-in texts), and the
    not-found text in the conversation's language (called only when an answer from passages keeps
    a fact no source has; None: such an answer is kept, flagged)."""

    policy: str
    redact_phrase: str
    refiner: ChatModel | None
    cancel: threading.Event | None
    parts: Parts
    safe_answers: Mapping[str, str] = field(default_factory=lambda: dict(SAFE_ANSWER))
    not_found: Callable[[], str] | None = None


@dataclass(frozen=True)
class Guarded:
    """The answer the turn keeps: ``answer`` holds its text (and the tokens of the prompt it came
    from), ``check`` its check and what the guard and the refiner did."""

    answer: Generation
    check: CheckResult


# The actions whose answer is a fixed text, not the model's: nothing in it to hold against a document.
FIXED_TEXTS = (GuardAction.READBACK, GuardAction.SAFE_ANSWER, GuardAction.NOT_FOUND)


def apply(plan: TurnPlan, first: Generation, checked: CheckResult, rules: Rules) -> Guarded:
    """The answer to store for ``first`` (whose check is ``checked``): repaired, refined, settled, and
    held against the document's own yes or no."""
    return quote(plan, settle(refine(plan, repair(plan, first, checked, rules), rules)))


def repair(plan: TurnPlan, first: Generation, checked: CheckResult, rules: Rules) -> Guarded:
    """``first`` as the guard policy leaves it: unchanged if nothing is wrong with it, else flagged,
    redacted or regenerated. A read-back answer lacking a value it was asked for has a ``missing``
    finding for each."""
    result = _asked_for(checked, plan.wanted)
    missing = readback.lacking(first.text, plan.wanted)
    if result.ok and not missing:
        return Guarded(first, result)
    found = result.findings  # what the answer states that the conversation does not support
    result = _with_missing(result, missing)
    if rules.policy == "flag":
        return Guarded(first, dataclasses.replace(result, action=GuardAction.FLAG))
    asks = any(f.entity.kind == checker.REQUEST for f in found)
    if rules.policy == "redact":
        if asks:
            return safe_answer(plan, first, result, first, rules.safe_answers)
        return redact(plan, first, result, missing, rules.redact_phrase)
    kept = regenerate(plan, first, result, found, rules)
    if asks and asking.find(kept.answer.text):
        return safe_answer(plan, first, result, kept.answer, rules.safe_answers)
    if plan.sources and rules.not_found is not None and _invented(kept.check):
        # answered from the passages with a fact none of its sources has: the not-found text instead
        return replaced(plan, first, result, kept.answer, rules.not_found(), GuardAction.NOT_FOUND)
    return kept


def redact(
    plan: TurnPlan, first: Generation, result: CheckResult, missing: Sequence[readback.Asked], phrase: str
) -> Guarded:
    """The unsupported spans of ``first`` replaced by ``phrase``; a read-back lacking its values is
    answered from the ledger at once."""
    if missing:
        return read_back(plan, first, result, first, missing)
    text = checker.redact(first.text, result, phrase)
    return Guarded(
        dataclasses.replace(first, text=text),
        dataclasses.replace(
            plan.check(text), action=GuardAction.REDACT, original=first.text, original_findings=result.findings
        ),
    )


def regenerate(
    plan: TurnPlan, first: Generation, result: CheckResult, found: Sequence[Finding], rules: Rules
) -> Guarded:
    """One more answer, from the prompt rebuilt with a stricter instruction that lists the ledger's
    facts (and, with passages, allows the documents' too) and what ``first`` got wrong (``found``);
    the better of the two is kept, a tie keeps the first.

    The plan's spec already names and places what a read-back question asks for; if the kept answer
    still lacks it, it is answered from the ledger.
    """
    strict = rules.parts.prompt(plan, strict_spec(plan, found)).messages
    second = rules.parts.model(plan).generate(strict, plan.sampling, cancel=rules.cancel, cache_key=plan.cache_key)
    lacking = readback.lacking(second.text, plan.wanted)
    second_result = _with_missing(_asked_for(plan.check(second.text), plan.wanted), lacking)
    kept = second if len(second_result.findings) < len(result.findings) else first
    still = readback.lacking(kept.text, plan.wanted)
    if still:
        return read_back(plan, first, result, kept, still)
    if kept is second:
        return Guarded(
            second,
            dataclasses.replace(
                second_result, action=GuardAction.REGENERATE, original=first.text, original_findings=result.findings
            ),
        )
    return Guarded(first, dataclasses.replace(result, action=GuardAction.REGENERATE))


def strict_spec(plan: TurnPlan, found: Sequence[Finding]) -> PromptSpec:
    """The plan's prompt spec with the stricter directive of a retry: the ledger's facts, what the
    answer got wrong (``found``), and, where it asked for a secret or had passages, that it may not
    ask and that the documents' figures are facts too."""
    directive = checker.strict_instruction(current_facts(plan.facts), found)
    if any(f.entity.kind == checker.REQUEST for f in found):
        directive += "\n" + NEVER_ASK
    if plan.sources:  # the strict directive lists the conversation's facts; the documents' are facts too
        directive += "\n" + DOCUMENTS_TOO
    return plan.spec.adding(directive)


def read_back(
    plan: TurnPlan, first: Generation, result: CheckResult, kept: Generation, missing: Sequence[readback.Asked]
) -> Guarded:
    """The read-back answered from the ledger in a fixed phrase of the question's language, in place
    of ``kept``'s text; ``first`` and its check ``result`` are recorded as the original."""
    language = plan.request.language if plan.request is not None else "en"
    return replaced(plan, first, result, kept, readback.phrase(missing, language), GuardAction.READBACK)


def safe_answer(
    plan: TurnPlan, first: Generation, result: CheckResult, kept: Generation, texts: Mapping[str, str]
) -> Guarded:
    """The fixed safe answer, in the language ``first`` asked for a secret in (else English, else any),
    in place of ``kept``'s text; ``first`` and its check ``result`` are recorded as the original."""
    return replaced(plan, first, result, kept, safe_text(first.text, texts), GuardAction.SAFE_ANSWER)


def safe_text(asking_text: str, texts: Mapping[str, str]) -> str:
    """The safe answer in the language ``asking_text`` asks for a secret in (else English, else any)."""
    said = asking.find(asking_text)
    language = said[0].language if said else "en"
    return texts.get(language) or texts.get("en") or next(iter(texts.values()), "") or SAFE_ANSWER["en"]


def replaced(
    plan: TurnPlan, first: Generation, result: CheckResult, kept: Generation, text: str, action: GuardAction
) -> Guarded:
    """A fixed ``text`` in place of ``kept``'s (the read-back phrase, the safe answer, the not-found
    text), checked, with ``action``; ``first`` and its check ``result`` are recorded as the original."""
    return Guarded(
        dataclasses.replace(kept, text=text),
        dataclasses.replace(plan.check(text), action=action, original=first.text, original_findings=result.findings),
    )


def _invented(check: CheckResult) -> bool:
    """Whether a kept answer states a fact that no source supports or that contradicts one (not a
    read-back's missing value: the read-back phrase answers those)."""
    return any(f.status != "missing" and f.entity.kind != checker.REQUEST for f in check.findings)


def refine(plan: TurnPlan, kept: Guarded, rules: Rules) -> Guarded:
    """Seed 002's spoken-style rewrite of the kept answer, kept only if it neither drops nor changes
    a fact; the check's ``refine`` says which ("kept", or why it was discarded)."""
    if rules.refiner is None:
        return kept
    text = kept.answer.text
    prompt = (Message("system", REFINE_PROMPT), Message("user", text))
    rewrite = rules.refiner.generate(prompt, plan.sampling, cancel=rules.cancel).text
    if not rewrite:
        return _refined(kept, text, "discarded: empty rewrite")
    # Every fact of the original must be in the rewrite, and the rewrite may add none.
    dropped = checker.check(text, ledger=(), summary=rewrite, transcript=(), question="").findings
    known = {f.entity.norm for f in kept.check.findings}
    added = [f for f in plan.check(rewrite).findings if f.entity.norm not in known]
    if dropped or added:
        what = ", ".join([f"dropped {f.entity.text}" for f in dropped] + [f"added {f.entity.text}" for f in added])
        return _refined(kept, text, f"discarded: {what}")
    return _refined(kept, rewrite, "kept")


def _refined(kept: Guarded, text: str, note: str) -> Guarded:
    return Guarded(dataclasses.replace(kept.answer, text=text), dataclasses.replace(kept.check, refine=note))


def settle(kept: Guarded) -> Guarded:
    """``kept`` without an opening yes that its own statement contradicts ("Yes, dogs are not
    allowed." is stored as "Dogs are not allowed."), the check's ``opener`` naming the yes dropped
    and its findings' spans moved with the text."""
    text, dropped = opener.settled(kept.answer.text)
    if not dropped:
        return kept
    shift = len(kept.answer.text) - len(text)
    moved = tuple(
        f if f.entity.start < 0 else dataclasses.replace(f, entity=_moved(f.entity, shift)) for f in kept.check.findings
    )
    return Guarded(
        dataclasses.replace(kept.answer, text=text), dataclasses.replace(kept.check, findings=moved, opener=dropped)
    )


def quote(plan: TurnPlan, kept: Guarded) -> Guarded:
    """``kept`` replaced by the document's own answer (:mod:`appliance.knowledge.reply`) where it says
    the opposite: the best passage answers the yes/no question its heading asks ("Does a new card have a
    new PIN?" "No, a replacement card keeps your PIN."), that passage was placed, the customer asked a
    yes/no question or the answer opens with a yes or a no, and the answer's stance is the other one
    (:mod:`appliance.facts.stance`).

    Not when the answer names another placed document's subject and not the passage's: it answered
    from that document, which the best passage's answer does not speak for. The document's words are
    what the institution published, so the customer hears them rather than the model's reading; the
    record keeps the model's answer as the original (action ``quote``)."""
    found = plan.retrieval
    if found is None or found.reply is None or kept.check.action in FIXED_TEXTS:
        return kept
    reply = found.reply
    if reply.passage.text not in plan.sources:
        return kept
    text = kept.answer.text
    if not (found.decision.polar or stance.opens(text)) or stance.stance(text) == stance.stance(reply.text):
        return kept
    if _names_another(plan, reply.passage.title, text):
        return kept
    check = kept.check
    return Guarded(
        dataclasses.replace(kept.answer, text=reply.text),
        dataclasses.replace(
            plan.check(reply.text),
            action=GuardAction.QUOTE,
            original=check.original or text,
            original_findings=check.original_findings or check.findings,
            refine=check.refine,
            opener=check.opener,
        ),
    )


def _names_another(plan: TurnPlan, title: str, answer: str) -> bool:
    """Whether ``answer`` names a placed passage's document other than the one titled ``title`` (by
    its title or the title's name part: :func:`~appliance.knowledge.chunk.title_names`), and not that
    one itself."""

    def names(doc_title: str) -> bool:
        return any(straight(fold(n)) in said for n in title_names(doc_title))

    said = straight(fold(answer))
    others = {p.title for p in plan.spec.passages if p.text in plan.sources and p.title != title}
    return any(names(o) for o in others) and not names(title)


def _moved(entity: Entity, shift: int) -> Entity:
    return dataclasses.replace(entity, start=entity.start - shift, end=entity.end - shift)


def _asked_for(result: CheckResult, asked: Sequence[readback.Asked]) -> CheckResult:
    """``result`` without findings on the very values the customer asked to have read back: the name
    given "at the start" is what they asked for, even where a later one has replaced it."""
    if not asked or result.ok:
        return result
    facts = readback.facts_of(asked)
    kept = tuple(f for f in result.findings if not any(readback.states(f.entity.text, e) for e in facts))
    return result if len(kept) == len(result.findings) else dataclasses.replace(result, findings=kept)


def _with_missing(result: CheckResult, missing: Sequence[readback.Asked]) -> CheckResult:
    """``result`` with a ``missing`` finding for each value a read-back answer did not state."""
    if not missing:
        return result
    return dataclasses.replace(result, findings=(*result.findings, *readback.findings(missing)))
