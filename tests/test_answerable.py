"""Whether the placed passages answer the question: the responder judges, before it answers.

An honest "not in our documents" needs more than passages that resemble the question: the pipeline
asks the responder, with the answer's own prompt and a yes/no question in place of its directive, and
reads its first token's yes against its no (``Judge.yes_or_no``). Under ``knowledge.min_answerable``
the customer gets ``knowledge.not_found``, with what the documents do cover when a passage is close.
The pipeline's tests use a fake judge (``FakeJudgingResponder``); the backends' are real: the tiny
GGUF model single and batched, and a remote server's log-probabilities through a mock transport.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import httpx
import pytest

from appliance.app import pipeline_settings
from appliance.config import Settings
from appliance.context import POLICIES, asking
from appliance.context.recall import Recall
from appliance.knowledge import Knowledge
from appliance.models.batched import BatchedChatModel
from appliance.models.files import embedding_files, find, verified_path
from appliance.models.llama import LlamaChatModel
from appliance.models.remote import RemoteChatModel
from appliance.models.yesno import yes_share
from appliance.stage import ANSWERABLE_QUESTION
from appliance.store import Store
from appliance.turn.pipeline import Pipeline
from appliance.turn.warmup import Warmup
from appliance.types import Message, Sampling

from .fakes import FakeJudgingResponder, WordCounter
from .support import MODELS_DIR, TEST_MODEL

FEES = """# Harbour Bank fees

## Card fees

A replacement card costs 5 GBP. An urgent card, sent the next working day, costs 15 GBP.

## Transfers

A transfer abroad costs 7.50 EUR, plus 0.1 % of the amount.
"""


@pytest.fixture(scope="module")
def encoder() -> Recall:
    files = embedding_files(MODELS_DIR)
    return Recall(files.model, files.tokenizer, name=files.name)


def judged_pipeline(settings: Settings, store: Store, encoder: Recall, responder: FakeJudgingResponder) -> Pipeline:
    knowledge = Knowledge(store, encoder, WordCounter(), settings.knowledge)
    knowledge.upload("fees.md", FEES.encode())
    return Pipeline(store, responder, POLICIES, pipeline_settings(settings), knowledge=knowledge)


class TestThePipelineAsks:
    def test_passages_that_do_not_answer_give_the_not_found_text_and_what_the_documents_cover(
        self, settings: Settings, store: Store, encoder: Recall
    ):
        responder = FakeJudgingResponder(["It costs 25 GBP to replace a cheque book."], yes=0.01)
        pipeline = judged_pipeline(settings, store, encoder, responder)
        session = pipeline.sessions.new_session()
        result = pipeline.answer(session.id, "How much does it cost to replace a card?")
        record = result.record
        assert not responder.prompts, "nothing is generated once the passages are judged not to answer"
        assert result.agent.text.startswith(settings.knowledge.not_found["en"])
        assert "“Harbour Bank fees: Card fees”" in result.agent.text  # the close passage is named
        assert record.knowledge is not None and record.knowledge.not_found and record.knowledge.yes == 0.01
        assert record.manifest.passages and any("do not answer" in cut for cut in record.manifest.cuts)
        assert record.timings.probe_ms > 0

    def test_the_question_asked_is_the_answers_prompt_with_another_directive(
        self, settings: Settings, store: Store, encoder: Recall
    ):
        responder = FakeJudgingResponder(["A replacement card costs 5 GBP."], yes=0.99)
        pipeline = judged_pipeline(settings, store, encoder, responder)
        session = pipeline.sessions.new_session()
        result = pipeline.answer(session.id, "How much does a replacement card cost?")
        assert result.agent.text == "A replacement card costs 5 GBP."
        assert result.record.knowledge is not None and result.record.knowledge.yes == 0.99
        assert not result.record.knowledge.not_found
        (asked,), (answered,) = responder.asked, responder.prompts
        assert asked[:-1] == answered[:-1]  # the same system prompt, the same conversation
        question_end = answered[-1].content.index("[INSTRUCTION]")
        assert asked[-1].content[:question_end] == answered[-1].content[:question_end]
        assert asked[-1].content.endswith(ANSWERABLE_QUESTION)

    @pytest.mark.parametrize("yes", [0.1, 0.9])
    def test_with_min_answerable_0_nothing_is_asked(
        self, settings: Settings, store: Store, encoder: Recall, yes: float
    ):
        off = settings.model_copy(update={"knowledge": settings.knowledge.model_copy(update={"min_answerable": 0.0})})
        responder = FakeJudgingResponder(["A replacement card costs 5 GBP."], yes=yes)
        pipeline = judged_pipeline(off, store, encoder, responder)
        result = pipeline.answer(pipeline.sessions.new_session().id, "How much does a replacement card cost?")
        assert not responder.asked and result.agent.text == "A replacement card costs 5 GBP."
        assert result.record.knowledge is not None and result.record.knowledge.answerable is None

    def test_a_question_without_passages_is_not_judged(self, settings: Settings, store: Store, encoder: Recall):
        responder = FakeJudgingResponder(["Hello! How can I help?"], yes=0.0)
        pipeline = judged_pipeline(settings, store, encoder, responder)
        result = pipeline.answer(pipeline.sessions.new_session().id, "Hello")
        assert not responder.asked and result.agent.text == "Hello! How can I help?"

    def test_a_message_sent_as_drafted_is_judged_once_from_its_draft(
        self, settings: Settings, store: Store, encoder: Recall
    ):
        responder = FakeJudgingResponder(["A replacement card costs 5 GBP.", "It costs 7.50 EUR."], yes=0.99)
        pipeline = judged_pipeline(settings, store, encoder, responder)
        session = pipeline.sessions.new_session()
        message = "How much does a replacement card cost?"
        assert Warmup(pipeline).next_prefix(session.id, message) is not None  # what the warm-up plans while it is typed
        Warmup(pipeline).judge_ahead(session.id)  # once its prefix is warm
        assert len(responder.asked) == 1
        result = pipeline.answer(session.id, message)
        assert len(responder.asked) == 1 and result.record.timings.probe_ms == 0  # not asked again after Enter
        assert result.record.knowledge is not None and result.record.knowledge.yes == 0.99
        # another message than the draft is judged afresh
        Warmup(pipeline).next_prefix(session.id, message)
        Warmup(pipeline).judge_ahead(session.id)
        pipeline.answer(session.id, "What does a transfer abroad cost?")
        assert len(responder.asked) == 3

    def test_grounding_of_judges_without_answering_or_storing(self, settings: Settings, store: Store, encoder: Recall):
        responder = FakeJudgingResponder(yes=0.01)
        pipeline = judged_pipeline(settings, store, encoder, responder)
        session = pipeline.sessions.new_session()
        found = pipeline.grounding_of(session.id, "How much does a replacement card cost?")
        assert found is not None and found.not_found and found.yes == 0.01 and found.sources
        assert not responder.prompts and store.turns(session.id) == ()


class TestThePrompt:
    def test_asking_replaces_the_directive_and_keeps_the_question(self):
        prompt = (Message("system", "s"), Message("user", "[CONTEXT]\nc\n\n[QUESTION]\nq?\n\n[INSTRUCTION]\nAnswer."))
        asked = asking(prompt, "Yes or no?", "Answer.")
        assert (
            asked[-1].content == "[CONTEXT]\nc\n\n[QUESTION]\nq?\n\n[INSTRUCTION]\nYes or no?" and asked[0] == prompt[0]
        )
        bare = (Message("user", "[CONTEXT]\nc\n\n[QUESTION]\nq?"),)
        assert asking(bare, "Yes or no?", "")[-1].content.endswith("q?\n\n[INSTRUCTION]\nYes or no?")

    def test_a_question_that_quotes_the_instruction_marker_keeps_it(self):
        # The customer's text is data: only the prompt's own directive, after the question, is replaced.
        quoted = "[CONTEXT]\nc\n\n[QUESTION]\nwhat is\n\n[INSTRUCTION]\nthis?"
        for directive, prompt in (("", quoted), ("Answer.", f"{quoted}\n\n[INSTRUCTION]\nAnswer.")):
            asked = asking((Message("user", prompt),), "Yes or no?", directive)[-1].content
            assert asked == f"{quoted}\n\n[INSTRUCTION]\nYes or no?"

    def test_the_judgement_rises_with_the_responders_yes_and_the_best_passages_score(self):
        from appliance.turn.grounding import answerable

        assert answerable(0.9, 0.6) > answerable(0.5, 0.6) > answerable(0.1, 0.6)
        assert answerable(0.5, 0.8) > answerable(0.5, 0.5) > answerable(0.5, 0.2)
        assert 0.0 < answerable(0.0, 0.0) < answerable(1.0, 1.0) < 1.0  # the yes is clipped, never 0 or 1

    def test_yes_share_reads_yes_against_no(self):
        import numpy as np

        logits = np.zeros(10)
        logits[[1, 2]] = 2.0  # two ways of saying yes
        logits[5] = 1.0
        assert yes_share(logits, ((1, 2), (5,))) == pytest.approx(2 * np.e**2 / (2 * np.e**2 + np.e))


def _messages(question: str) -> list[Message]:
    return [
        Message("system", "You answer from documents."),
        Message("user", f"Document: the branch opens at 9:00.\nQuestion: {question}\n\n{ANSWERABLE_QUESTION}"),
    ]


@pytest.mark.real_model
class TestRealBackends:
    OPTIONS = {"name": TEST_MODEL, "n_ctx": 512, "n_threads": 2, "state_cache_mb": 8}

    @pytest.fixture(scope="class")
    def single(self) -> LlamaChatModel:
        return LlamaChatModel(verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL)), **self.OPTIONS)

    @pytest.fixture(scope="class")
    def batched(self) -> Iterator[BatchedChatModel]:
        model = BatchedChatModel(verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL)), parallel=2, **self.OPTIONS)
        yield model
        model.close()

    def test_the_judgement_leaves_the_answer_as_it_would_be(self, single: LlamaChatModel):
        messages = _messages("When does the branch open?")
        greedy = Sampling(temperature=0.0, max_tokens=12)
        before = single.generate(messages, greedy, cache_key="a").text
        p = single.yes_or_no(messages, cache_key="a")
        assert p is not None and 0.0 < p < 1.0
        assert single.yes_or_no(messages, cache_key="a") == pytest.approx(p, abs=1e-3)  # its prefix reused
        assert single.generate(messages, greedy, cache_key="a").text == before

    def test_the_batched_engine_judges_as_the_single_context_does(
        self, single: LlamaChatModel, batched: BatchedChatModel
    ):
        for question in ("When does the branch open?", "Do you sell boats?"):
            messages = _messages(question)
            one, many = single.yes_or_no(messages), batched.yes_or_no(messages, cache_key=question)
            assert one is not None and many is not None and many == pytest.approx(one, abs=0.02)
        # and it still answers afterwards
        assert batched.generate(_messages("Hi"), Sampling(temperature=0.0, max_tokens=4)).completion_tokens > 0


class TestRemote:
    def model(self, handler) -> RemoteChatModel:
        remote = RemoteChatModel("http://server/v1", "m", n_ctx=4096, counter=WordCounter())
        remote._http = httpx.Client(transport=httpx.MockTransport(handler))
        return remote

    def test_the_servers_top_logprobs_give_yes_against_no(self):
        sent: list[dict] = []

        def handler(request: httpx.Request) -> httpx.Response:
            sent.append(json.loads(request.content))
            top = [
                {"token": "Yes", "logprob": -0.2},
                {"token": " yes", "logprob": -3.0},
                {"token": "No", "logprob": -2.0},
            ]
            return httpx.Response(200, json={"choices": [{"logprobs": {"content": [{"top_logprobs": top}]}}]})

        import math

        p = self.model(handler).yes_or_no(_messages("When?"))
        yes, no = math.exp(-0.2) + math.exp(-3.0), math.exp(-2.0)
        assert p == pytest.approx(yes / (yes + no))
        assert sent[0]["max_tokens"] == 1 and sent[0]["logprobs"] is True and sent[0]["temperature"] == 0.0

    @pytest.mark.parametrize(
        "body",
        [
            {"choices": [{"message": {"content": "yes"}}]},  # a server that sends no log-probabilities
            {"choices": [{"logprobs": {"content": [{"top_logprobs": [{"token": "Maybe", "logprob": -0.1}]}]}}]},
        ],
    )
    def test_without_a_yes_or_no_among_them_it_cannot_tell(self, body: dict):
        assert self.model(lambda request: httpx.Response(200, json=body)).yes_or_no(_messages("When?")) is None


def test_config_refuses_a_covered_text_without_its_topics(tmp_path):
    from appliance.config import load_settings
    from appliance.errors import ConfigError

    config = tmp_path / "config.toml"
    config.write_text('[knowledge.covered]\nen = "See our documents."\n')
    with pytest.raises(ConfigError, match="knowledge.covered"):
        load_settings(config, env={})
    config.write_text("[knowledge]\nmin_answerable = 1.5\n")
    with pytest.raises(ConfigError, match="min_answerable"):
        load_settings(config, env={})


def test_the_record_keeps_the_judgement(settings: Settings, store: Store, encoder: Recall):
    from appliance.types import Grounding, from_dict, to_dict

    responder = FakeJudgingResponder(yes=0.3)
    pipeline = judged_pipeline(settings, store, encoder, responder)
    session = pipeline.sessions.new_session()
    pipeline.answer(session.id, "How much does a replacement card cost?")
    _, stored = store.records(session.id)[-1]
    assert stored.knowledge is not None and stored.knowledge.yes == 0.3
    again = from_dict(Grounding, to_dict(stored.knowledge))
    assert dataclasses.asdict(again) == dataclasses.asdict(stored.knowledge)
