"""The agent never asks for a secret (issue 27, item 4): the standing directive says so, and the guard
repairs an answer that asks anyway, in any built-in language, like an unsupported fact: regenerated,
then replaced by the fixed safe answer of its language. Answers that only mention a secret stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.app import pipeline_settings
from appliance.config import SAFE_ANSWER, load_settings
from appliance.context import POLICIES
from appliance.facts import asking
from appliance.facts.checker import REQUEST, check
from appliance.lab.bench.asking import ASKS, MENTIONS, report
from appliance.stage import NEVER_ASK
from appliance.store import Store
from appliance.turn.pipeline import Pipeline

from .fakes import FakeResponder
from .support import write_config

GERMAN_ASK = "Ich benötige noch Ihre PIN zum Zugriff auf Ihr Konto."


@pytest.fixture
def make(tmp_path: Path, store: Store):
    def build(replies: list[str], body: str = "") -> tuple[Pipeline, FakeResponder]:
        responder = FakeResponder(replies)
        settings = load_settings(write_config(tmp_path, body), env={})
        return Pipeline(store, responder, POLICIES, pipeline_settings(settings)), responder

    return build


class TestFindsAnswersThatAsk:
    @pytest.mark.parametrize(("language", "answer"), ASKS)
    def test_an_answer_that_asks_for_a_secret(self, language: str, answer: str):
        (found,) = asking.find(answer)
        span = answer[found.start : found.end]
        assert found.language == language and span.strip() == span and answer.endswith(span)

    @pytest.mark.parametrize(("language", "answer"), MENTIONS)
    def test_an_answer_that_only_mentions_one(self, language: str, answer: str):
        assert asking.find(answer) == ()

    def test_the_bench_table_covers_the_five_languages(self):
        counts = report()
        assert counts["languages"] == ["de", "en", "es", "fr", "nl"]
        assert counts["asks_caught"] == counts["asks"] >= 40 and counts["mentions_untouched"] == counts["mentions"]

    def test_only_the_asking_sentence_is_the_finding(self):
        answer = "Thanks for waiting. What is your PIN? Then I can check the transfer."
        result = check(answer, ledger=(), summary="", transcript=(), question="")
        assert [(f.entity.kind, f.entity.text, f.entity.norm) for f in result.findings] == [
            (REQUEST, "What is your PIN?", "pin")
        ]

    def test_a_pointer_to_a_code_named_just_before(self):
        assert [a.kind for a in asking.find("We sent you a one-time code. Can you tell me the code?")] == ["otp"]
        assert asking.find("Can you tell me the code of the branch?") == ()


class TestTheGuard:
    def test_the_standing_directive_says_so_before_the_question(self, make):
        pipeline, responder = make(["Gern."])
        pipeline.answer(pipeline.sessions.new_session().id, "Ich möchte Geld überweisen.")
        system, *_, last = responder.prompts[0]
        assert system.content.endswith(NEVER_ASK) and NEVER_ASK not in last.content

    def test_asked_again_it_is_replaced_by_the_safe_answer_of_its_language(self, make):
        pipeline, responder = make([GERMAN_ASK, "Bitte nennen Sie mir Ihre PIN."])
        result = pipeline.answer(pipeline.sessions.new_session().id, "Ich möchte 200 Euro überweisen.")
        check_ = result.record.check
        assert result.agent.text == SAFE_ANSWER["de"] and check_.action == "safe_answer"
        assert check_.original == GERMAN_ASK and [f.entity.kind for f in check_.original_findings] == [REQUEST]
        assert check_.ok  # the safe answer asks for nothing
        assert NEVER_ASK in "".join(m.content for m in responder.prompts[1][1:])  # the retry was told

    def test_a_retry_that_asks_no_more_is_kept(self, make):
        pipeline, _ = make([GERMAN_ASK, "Gern, an welches Konto möchten Sie überweisen?"])
        result = pipeline.answer(pipeline.sessions.new_session().id, "Ich möchte 200 Euro überweisen.")
        assert result.agent.text == "Gern, an welches Konto möchten Sie überweisen?"
        assert result.record.check.action == "regenerate" and result.record.check.original == GERMAN_ASK

    def test_redact_replaces_it_at_once(self, make):
        pipeline, responder = make(["¿Me puede dar su contraseña?"], '[guard]\npolicy = "redact"\n')
        result = pipeline.answer(pipeline.sessions.new_session().id, "No puedo entrar en la banca online.")
        assert result.agent.text == SAFE_ANSWER["es"] and len(responder.prompts) == 1

    def test_flag_keeps_it_flagged(self, make):
        pipeline, _ = make(["What is your PIN?"], '[guard]\npolicy = "flag"\n')
        result = pipeline.answer(pipeline.sessions.new_session().id, "I want to make a transfer.")
        assert result.agent.text == "What is your PIN?"
        assert [f.entity.kind for f in result.record.check.findings] == [REQUEST]

    def test_the_safe_answer_is_configurable(self, make):
        body = '[privacy]\nsafe_answer = { nl = "Wij vragen nooit om uw pincode." }\n'
        pipeline, _ = make(["Wat is uw pincode?", "Kunt u uw pincode doorgeven?"], body)
        result = pipeline.answer(pipeline.sessions.new_session().id, "Ik wil geld overmaken.")
        assert result.agent.text == "Wij vragen nooit om uw pincode."

    @pytest.mark.parametrize("answer", ["Never share your PIN with anyone.", "Sie erhalten Ihre PIN per Post."])
    def test_a_mention_stays_untouched(self, make, answer: str):
        pipeline, responder = make([answer])
        result = pipeline.answer(pipeline.sessions.new_session().id, "How do I get my PIN?")
        assert result.agent.text == answer and result.record.check.action == "none" and len(responder.prompts) == 1
