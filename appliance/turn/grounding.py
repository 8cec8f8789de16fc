"""The turn's knowledge step (seed 003): after the history is compressed, the fetch check and retrieval
for the conversation's subject; the passages' share of the budget; and the not-found answer.

The step runs on the turn's snapshot, whose summary the worker has already made (the compressed
history), and makes no model call: the fetch check and retrieval are the knowledge base's
(:meth:`appliance.knowledge.Knowledge.consult`). A question that needs the documents when no passage
reaches ``knowledge.min_score`` is answered with the configured ``knowledge.not_found`` text in the
conversation's language, and nothing is generated. The rule holds per question: the next one, a
follow-up included, is looked up afresh, with the conversation's subject in its query.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from appliance.context import PromptSpec, asking
from appliance.knowledge import Knowledge, Retrieval
from appliance.knowledge.chunk import HEADING_JOIN
from appliance.protocols import ChatModel, Judge, OnToken
from appliance.stage import ANSWERABLE_QUESTION
from appliance.summarizer import conversation_language, customer_language
from appliance.turn.guard import Guarded
from appliance.turn.plan import TurnPlan
from appliance.types import (
    CheckResult,
    Generation,
    Judgement,
    LedgerEntry,
    Manifest,
    Passage,
    Prompt,
    Snapshot,
    Turn,
)

# The judgement's weights (the responder's log-odds of yes, the best placed passage's score, bias),
# chosen on the three dev sets together: the fewest answered questions no document answers, over the
# sets, with at most about a tenth of the answerable ones refused on each, at 0.5
# (knowledge.min_answerable; docs/measurements.md has the curve).
JUDGED = (1.0, 5.0, -3.5)
# A placed passage at least this similar to the question is close enough to name in the not-found
# answer (knowledge.covered), at most COVERED_TOPICS of them.
CLOSE = 0.5
COVERED_TOPICS = 2


@dataclass(frozen=True)
class KnowledgeStep:
    """The knowledge base (None: ``knowledge.enabled`` is off) and what the turn is told about using it."""

    knowledge: Knowledge | None
    passage_tokens: int  # the settings' passage_tokens
    instruction: str  # the directive of a turn whose prompt carries passages (knowledge.instruction)
    not_found: Mapping[str, str]  # knowledge.not_found, by language
    languages: Sequence[str]  # summarizer.languages: the first is the fallback
    min_answerable: float = 0.0  # knowledge.min_answerable: 0 never asks
    covered: Mapping[str, str] = field(default_factory=dict)  # knowledge.covered, by language
    question: str = ANSWERABLE_QUESTION  # what the responder is asked about the placed passages

    def reserve(self) -> int:
        """The tokens held for passages: none until the knowledge base has documents, then the
        configured share at every question, fetching or not, so that the conversation's parts (and
        the prefix warmed before the question) are the same whether passages come or not."""
        if self.knowledge is None or not len(self.knowledge.index()):
            return 0
        return self.passage_tokens

    def consult(
        self, snap: Snapshot, message: str, facts: Sequence[LedgerEntry], *, reads_back: bool
    ) -> Retrieval | None:
        """The fetch check and, when it says so, the passages (None without a knowledge base, or with
        one that holds no document yet: there is nothing to fetch, so nothing to decide or record).
        ``facts`` are the session's ledger and the message's own after it: a message that has some
        gives the customer's details."""
        if self.knowledge is None or not len(self.knowledge.index()):
            return None
        gives_details = len(facts) > len(snap.ledger)
        # The fetch check reads the message's cues in the customer's language; unsure (None), in the
        # language whose cues fit it best.
        language = customer_language(_said(snap, message), self.languages, quick=True)
        query = self.knowledge.query(
            message, snap, gives_details=gives_details, reads_back=reads_back, language=language
        )
        return self.knowledge.consult(query)

    def spec_for(self, spec: PromptSpec, found: Retrieval | None) -> PromptSpec:
        """``spec`` carrying the passages found, best first (the policy places what fits), and the
        directive to answer from them in place of the stage's."""
        if found is None or not found.passages:
            return spec
        return dataclasses.replace(spec, passages=found.passages, instruction=self.instruction)

    def answer_if_not_found(self, snap: Snapshot, message: str, found: Retrieval | None) -> str:
        """``knowledge.not_found`` in the conversation's language (else the first configured one) when
        ``found`` says the question needs the documents and none answers it; else empty."""
        if found is None or not found.not_found:
            return ""
        return self.not_found_text(snap, message)

    def not_found_text(self, snap: Snapshot, message: str) -> str:
        """``knowledge.not_found`` in the conversation's language, else the first configured one."""
        language = conversation_language(_said(snap, message), self.languages)
        texts = self.not_found
        first = self.languages[0] if self.languages else "en"
        return texts.get(language) or texts.get(first) or texts.get("en") or next(iter(texts.values()), "")

    def judge(self, model: ChatModel, prompt: Prompt, directive: str, cache_key: str | None) -> Judgement | None:
        """Whether the passages ``prompt`` placed answer its question: its own model asked, with the same
        prompt and :data:`ANSWERABLE_QUESTION` in place of its ``directive`` (one token's yes against its
        no; the evaluated prefix, up to the question, is the answer's, so this costs the question's few
        tokens), read with the best placed passage's score (:func:`answerable`). None when not asked (no
        passages placed, ``min_answerable`` 0, or a model that cannot tell)."""
        if self.min_answerable <= 0 or not prompt.manifest.passages or not isinstance(model, Judge):
            return None
        yes = model.yes_or_no(asking(prompt.messages, self.question, directive), cache_key=cache_key)
        if yes is None:
            return None
        best = max(p.score for p in prompt.manifest.passages)
        return Judgement(yes, best, answerable(yes, best))

    def unanswered(self, snap: Snapshot, message: str, passages: Sequence[Passage]) -> str:
        """The not-found answer to a question whose placed ``passages`` do not answer it, with what the
        documents do cover (``knowledge.covered``) when the best of them is close to it."""
        text = self.not_found_text(snap, message)
        close = [p for p in passages if p.score >= CLOSE]
        if not close:
            return text
        language = conversation_language(_said(snap, message), self.languages)
        note = self.covered.get(language) or self.covered.get("en", "")
        topics = ", ".join(dict.fromkeys(_topic(p) for p in close[:COVERED_TOPICS]))
        return f"{text} {note.replace('{topics}', topics)}" if note else text


def answerable(yes: float, best: float) -> float:
    """The probability that the placed passages answer the question, from the responder's yes and the
    best placed passage's score: the logistic function of the yes's log-odds and the score, weighted
    (:data:`JUDGED`), as neither alone holds on every kind of document (the score tells a prose page's
    neighbouring topics apart better; the responder, a FAQ's near questions)."""
    w_yes, w_best, bias = JUDGED
    clipped = min(max(yes, 1e-4), 1 - 1e-4)  # a certain yes or no still leaves the score a say
    odds = math.log(clipped / (1 - clipped))
    return 1.0 / (1.0 + math.exp(-(w_yes * odds + w_best * best + bias)))


def _topic(passage: Passage) -> str:
    """A passage's document and section as the customer is told them: "Fees: Replacing a card"."""
    section = passage.heading.split(HEADING_JOIN)[-1]
    return f"“{passage.title}: {section}”" if section and section != passage.title else f"“{passage.title}”"


def _said(snap: Snapshot, message: str) -> tuple[Turn, ...]:
    """The session's turns and the customer's new message after them."""
    return (*snap.turns, Turn(snap.session.id, len(snap.turns), "customer", message))


def in_warm_order(found: Retrieval | None, warmed: Sequence[int]) -> Retrieval | None:
    """``found`` with the passages that a warm-up from the customer's draft placed (chunk ids, in its
    order) put first, as far as the message found them too; the rest follow best first. The message's
    prompt then begins with the tokens already evaluated, and only what differs is evaluated after
    Enter: a draft that lacks the message's last word often finds the same passages in another order."""
    if found is None or not warmed or not found.passages:
        return found
    by_id = {p.chunk_id: p for p in found.passages}
    lead: list[int] = []
    for chunk_id in warmed:
        if chunk_id not in by_id or chunk_id in lead:
            break
        lead.append(chunk_id)
    if not lead:
        return found
    rest = tuple(p for p in found.passages if p.chunk_id not in lead)
    return dataclasses.replace(found, passages=(*(by_id[c] for c in lead), *rest))


def placed_passages(prompt: Prompt | None) -> tuple[int, ...]:
    """The chunk ids of the passages ``prompt`` placed, in its order (none without a prompt)."""
    return tuple(p.chunk_id for p in prompt.manifest.passages) if prompt is not None else ()


def not_found_answer(
    plan: TurnPlan, on_token: OnToken | None, prompt: Prompt | None = None
) -> tuple[Manifest, Generation, Guarded]:
    """The plan's not-found text as the turn's answer: streamed whole, no generation and nothing to
    check. Its manifest is the prompt's whose passages the responder judged (``prompt``), saying so,
    or, where no passage was found, an empty one that says why there was no prompt."""
    text = plan.not_found
    if on_token is not None:
        on_token(text)
    if prompt is not None:
        judged = (
            f"not answered: the placed passages do not answer the question (answerable {plan.answerable:.2f}"
            f" < knowledge.min_answerable; the responder's yes {plan.yes:.2f})"
        )
        manifest = dataclasses.replace(prompt.manifest, cuts=(*prompt.manifest.cuts, judged))
    else:
        manifest = Manifest(
            policy=plan.snapshot.session.policy,
            budget=plan.spec.budget,
            total_tokens=0,
            parts=(),
            cuts=("no prompt: the question needs the documents and no passage reached knowledge.min_score",),
        )
    answer = Generation(text=text, model="", prompt_tokens=0, completion_tokens=0, ttft_s=0.0, total_s=0.0)
    return manifest, answer, Guarded(answer, CheckResult())
