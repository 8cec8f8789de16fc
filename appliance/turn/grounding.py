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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from appliance.context import PromptSpec
from appliance.knowledge import Knowledge, Retrieval
from appliance.protocols import OnToken
from appliance.summarizer import conversation_language, customer_language
from appliance.turn.guard import Guarded
from appliance.turn.plan import TurnPlan
from appliance.types import CheckResult, Generation, LedgerEntry, Manifest, Prompt, Snapshot, Turn

# The record's model of an answer that is the configured not-found text: no model wrote it.
NOT_FOUND_MODEL = "knowledge.not_found"


@dataclass(frozen=True)
class KnowledgeStep:
    """The knowledge base (None: ``knowledge.enabled`` is off) and what the turn is told about using it."""

    knowledge: Knowledge | None
    passage_tokens: int  # the settings' passage_tokens
    instruction: str  # the directive of a turn whose prompt carries passages (knowledge.instruction)
    not_found: Mapping[str, str]  # knowledge.not_found, by language
    languages: Sequence[str]  # summarizer.languages: the first is the fallback

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
        """The fetch check and, when it says so, the passages (None without a knowledge base).
        ``facts`` are the session's ledger and the message's own after it: a message that has some
        gives the customer's details."""
        if self.knowledge is None:
            return None
        gives_details = len(facts) > len(snap.ledger)
        # The fetch check reads the message's cues in the customer's language; unsure (None), in the
        # language whose cues fit it best. An empty knowledge base fetches nothing: no need to detect.
        said = _said(snap, message)
        language = customer_language(said, self.languages, quick=True) if len(self.knowledge.index()) else None
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


def not_found_answer(plan: TurnPlan, on_token: OnToken | None) -> tuple[Manifest, Generation, Guarded]:
    """The plan's not-found text as the turn's answer: streamed whole, no prompt (its manifest says
    why), no generation and nothing to check."""
    text = plan.not_found
    if on_token is not None:
        on_token(text)
    manifest = Manifest(
        policy=plan.policy.name,
        budget=plan.spec.budget,
        total_tokens=0,
        parts=(),
        cuts=("no prompt: the question needs the documents and no passage reached knowledge.min_score",),
    )
    answer = Generation(text=text, model=NOT_FOUND_MODEL, prompt_tokens=0, completion_tokens=0, ttft_s=0.0, total_s=0.0)
    return manifest, answer, Guarded(answer, CheckResult())
