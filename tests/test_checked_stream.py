"""The checked stream's hold-back rules (appliance/turn/stream.py), with a fake responder that streams
given pieces (FakeResponder.pieces): a unit is shown only once it is complete and checked, a fact split across pieces is
never shown in part, a failed span is repaired after what was shown, and what was shown is stored."""

from __future__ import annotations

import dataclasses

import pytest

from appliance.config import SAFE_ANSWER
from appliance.facts import checker
from appliance.turn.pipeline import Pipeline
from appliance.types import Message, Sampling

from .fakes import FakeResponder
from .test_api_inprocess import parse_sse, serve  # noqa: F401 (the fixture)


@pytest.fixture
def responder() -> FakeResponder:
    return FakeResponder()


@pytest.fixture
def streaming(pipeline: Pipeline, responder: FakeResponder) -> Pipeline:
    pipeline.responder = responder
    return pipeline


def answer(pipeline: Pipeline, responder: FakeResponder, message: str, *, policy: str = "redact"):
    pipeline.settings = dataclasses.replace(pipeline.settings, guard=policy)
    session = pipeline.sessions.new_session()
    pipeline.sessions.record_turn(session.id, "customer", "My card ending 4821 was charged twice for $45.00.")
    result = pipeline.answer(session.id, message, on_token=lambda text: responder.log.append(("shown", text)))
    return result, "".join(text for kind, text in responder.log if kind == "shown")


def shown_before(log: list[tuple[str, str]], fed: str) -> str:
    """What had been shown when the piece ``fed`` came."""
    at = log.index(("fed", fed))
    return "".join(text for kind, text in log[:at] if kind == "shown")


class TestHoldBack:
    def test_a_sentence_without_facts_passes_once_complete(self, streaming, responder):
        responder.pieces = [["Hello", " there", ".", " How", " can", " I", " help", "?"]]
        result, shown = answer(streaming, responder, "Hi")
        assert shown_before(responder.log, " How") == ""  # "." may still be "3.5": held until a space
        assert shown_before(responder.log, " can") == "Hello there."
        assert shown == result.agent.text == "Hello there. How can I help?"
        assert result.record.check.action == "none"

    def test_a_number_arriving_digit_by_digit_is_never_shown_in_part(self, streaming, responder):
        pieces = ["I see it.", " The refund of $", "1", "2", "0", ".", "00", " arrives", " today", "."]
        responder.pieces = [pieces]
        result, shown = answer(streaming, responder, "Where is my refund?")
        phrase = streaming.settings.redact_phrase
        for i, piece in enumerate(pieces):
            assert "$1" not in shown_before(responder.log, piece) or i == 0
        assert shown == result.agent.text == f"I see it. The refund of {phrase} arrives today."
        check = result.record.check
        assert check.action == "redact" and check.ok and [f.entity.text for f in check.original_findings]

    def test_a_known_amount_split_across_pieces_passes(self, streaming, responder):
        responder.pieces = [["I see it.", " The charge of $", "4", "5", ".", "00", " is", " under", " review", "."]]
        result, shown = answer(streaming, responder, "What about the double charge?")
        assert shown == result.agent.text == "I see it. The charge of $45.00 is under review."
        assert result.record.check.action == "none"

    def test_a_name_across_two_pieces_is_held_whole(self, streaming, responder):
        responder.pieces = [["Of", " course", ".", " Thank", " you", ",", " Mrs", " Thorn", "ton", ".", " Bye", "."]]
        streaming.settings = dataclasses.replace(streaming.settings, guard="redact")
        session = streaming.sessions.new_session()
        streaming.sessions.record_turn(session.id, "customer", "My name is Sarah Brown.")
        result = streaming.answer(session.id, "Thanks!", on_token=lambda text: responder.log.append(("shown", text)))
        shown = "".join(text for kind, text in responder.log if kind == "shown")
        assert "Thorn" not in shown  # the customer is Sarah Brown: the wrong name is never shown, even in part
        assert shown == result.agent.text == f"Of course. Thank you, Mrs {streaming.settings.redact_phrase}. Bye."
        assert [f.status for f in result.record.check.original_findings] == ["contradiction"]

    def test_words_without_facts_pass_ahead_a_few_words_behind(self, streaming, responder):
        responder.continues = True  # a failure after them could be retried from them
        words = "Thank you for waiting while I look at the card you told us about today and the charge".split()
        responder.pieces = [[words[0], *[" " + w for w in words[1:]], "."]]
        result, shown = answer(streaming, responder, "Any news?")
        assert shown_before(responder.log, " I") == ""  # four complete words behind the newest
        assert shown_before(responder.log, " look") == "Thank"
        assert shown_before(responder.log, " charge") == "Thank you for waiting while I look at the card you told"
        assert shown == result.agent.text == " ".join(words) + "."

    def test_a_first_sentence_is_held_whole_where_the_model_cannot_continue_it(self, streaming, responder):
        words = "Thank you for waiting while I look at the card you told us about".split()
        responder.pieces = [[words[0], *[" " + w for w in words[1:]], ".", " Bye", "."]]
        result, shown = answer(streaming, responder, "Any news?")
        assert shown_before(responder.log, " Bye") == ""  # a failure in it is retried from the start
        assert shown == result.agent.text

    def test_a_fact_among_the_words_ahead_holds_them_from_where_it_begins(self, streaming, responder):
        responder.continues = True
        words = [
            "We",
            " sent",
            " the",
            " refund",
            " of",
            " $",
            "9",
            "1",
            "8",
            ".",
            "00",
            " to",
            " you",
            " by",
            " post",
            " last",
            " week",
            ".",
        ]
        responder.pieces = [words]
        result, shown = answer(streaming, responder, "Where is my refund?")
        for piece in words[6:]:
            assert "$" not in shown_before(responder.log, piece) or piece in (" week", ".")
        assert shown == result.agent.text and "918" not in shown

    def test_a_first_sentence_that_opens_with_yes_or_no_is_held_whole(self, streaming, responder):
        words = "Yes, we can look at the charge on your card for you today".split()
        responder.pieces = [[words[0], *[" " + w for w in words[1:]], "."]]
        result, shown = answer(streaming, responder, "Can you look at it?")
        assert shown_before(responder.log, " today") == ""
        assert shown == result.agent.text

    def test_a_request_for_a_secret_stops_the_stream_and_the_safe_answer_follows(self, streaming, responder):
        responder.pieces = [
            [
                "Happy",
                " to",
                " help",
                ".",
                " Please",
                " tell",
                " me",
                " your",
                " P",
                "IN",
                ".",
                " Then",
                " we",
                " go",
                ".",
            ]
        ]
        result, shown = answer(streaming, responder, "I want to move money.", policy="regenerate")
        assert shown == result.agent.text == "Happy to help. " + SAFE_ANSWER["en"]
        assert ("fed", " we") not in responder.log  # the generation was stopped once the sentence failed
        check = result.record.check
        assert check.action == "safe_answer" and check.ok and "PIN" in check.original

    def test_a_failed_first_sentence_is_asked_again_and_only_the_retry_is_shown(self, streaming, responder):
        responder.pieces = [["Your", " PIN", " please", "?"], ["I", " can", " help", " with", " that", "."]]
        result, shown = answer(streaming, responder, "I want to move money.", policy="regenerate")
        assert shown == result.agent.text == "I can help with that."
        assert result.record.check.action == "regenerate" and result.record.check.original == "Your PIN please?"
        assert len(responder.prompts) == 2

    def test_a_later_sentence_that_fails_is_continued_from_what_was_shown(self, streaming, responder):
        responder.continues = True  # a model that continues a given text (llama.cpp's)
        first = ["I", " see", " the", " charge", ".", " Your", " case", " is", " CS", "-", "77", ".", " Bye", "."]
        responder.pieces = [first, [" We", " will", " look", " into", " it", "."]]
        result, shown = answer(streaming, responder, "Any news?", policy="regenerate")
        assert shown == result.agent.text == "I see the charge. We will look into it."
        retry = responder.prompts[-1]
        assert retry[-1].role == "assistant" and retry[-1].content == "I see the charge."  # it continues that
        check = result.record.check
        assert check.action == "regenerate" and check.ok and "CS-77" in check.original

    def test_a_continuation_that_fails_too_is_repaired_in_place(self, streaming, responder):
        responder.continues = True
        responder.pieces = [["Sure", ".", " Case", " CS", "-", "77", ".", " Ok"], [" Case", " CS", "-", "78", "."]]
        result, shown = answer(streaming, responder, "Any news?", policy="regenerate")
        assert shown == result.agent.text == f"Sure. Case {streaming.settings.redact_phrase}."
        assert result.record.check.action == "redact" and len(responder.prompts) == 2

    def test_flag_shows_what_it_flags(self, streaming, responder):
        responder.pieces = [["Your", " case", " is", " CS", "-", "77", "."]]
        result, shown = answer(streaming, responder, "Any news?", policy="flag")
        assert shown == result.agent.text == "Your case is CS-77."
        assert result.record.check.action == "flag" and result.record.check.findings

    def test_the_stored_answer_is_what_was_shown(self, streaming, responder):
        responder.pieces = [
            ["Yes", ",", " dogs", " are", " not", " allowed", ".", " Case", " CS", "-9", " is", " open", "."]
        ]
        result, shown = answer(streaming, responder, "Can I bring my dog?")
        [(_, record)] = [r for r in streaming.store.records(result.session_id)]
        stored = streaming.store.turns(result.session_id)[-1].text
        assert stored == shown == result.agent.text and record.check == result.record.check
        assert shown.startswith("Dogs are not allowed.") and result.record.check.opener == "Yes,"


class TestCheckedOnce:
    @pytest.mark.parametrize("policy", ["redact", "regenerate"])
    def test_each_text_of_an_answer_is_checked_once(self, streaming, responder, monkeypatch, policy):
        """The stream checks each unit with what was shown before it, and the whole answer after: where
        those are the same text (the last unit's), the checker runs once for it."""
        checked: list[str] = []
        check = checker.check

        def counting(answer: str, **kwargs):  # type: ignore[no-untyped-def]
            checked.append(answer)
            return check(answer, **kwargs)

        monkeypatch.setattr(checker, "check", counting)
        responder.pieces = [
            ["I see it.", " The refund of $", "120.00", " arrives", " today", "."],
            ["I see it.", " It", " arrives", " today", "."],
        ]
        result, shown = answer(streaming, responder, "Where is my refund?", policy=policy)
        assert shown == result.agent.text and len(checked) >= 2
        assert len(checked) == len(set(checked)), checked


class TestRaw:
    def test_raw_streams_every_piece_as_it_comes(self, streaming, responder):
        streaming.settings = dataclasses.replace(streaming.settings, stream="raw")
        responder.pieces = [["Your", " case", " is", " CS", "-", "77", "."], ["I", " will", " check", "."]]
        result, shown = answer(streaming, responder, "Any news?", policy="regenerate")
        assert shown == "Your case is CS-77."  # the first answer, unchecked...
        assert result.agent.text == "I will check."  # ...and the stored one is another


class TestOverHttp:
    """What a client of each stream read, against what was stored: an answer that asks for a PIN, one
    that invents a figure, and one the guard passes (the app in-process, a fake responder)."""

    ASKS = "Happy to help. Please tell me your PIN. Then we can go on."
    INVENTS = "I see the charge. A refund of $918.00 goes to account 55501234 today."
    PASSES = "I see the charge of $45.00 on the card ending 4821. We will look into it."

    @pytest.mark.parametrize("reply", [ASKS, INVENTS, PASSES])
    def test_the_native_stream_reads_what_is_stored(self, serve, reply: str):  # noqa: F811
        served = serve('[guard]\npolicy = "regenerate"\n', FakeResponder([reply, reply]))
        session = served.new_session()
        said = {"text": "My card ending 4821 was charged twice for $45.00.", "stream": True}
        events = parse_sse(served.request("POST", f"/v1/sessions/{session}/messages", json=said).text)
        read = "".join(data["text"] for kind, data in events if kind == "token")
        stored = served.texts(session)[-1]
        assert read == stored == events[-1][1]["text"]
        assert "tell me your PIN" not in stored and "918" not in stored
        assert (stored == reply) is (reply == self.PASSES)

    @pytest.mark.parametrize("reply", [ASKS, INVENTS, PASSES])
    def test_the_openai_stream_reads_what_is_kept(self, serve, reply: str):  # noqa: F811
        served = serve('[guard]\npolicy = "regenerate"\n', FakeResponder([reply, reply]))
        said = "My card ending 4821 was charged twice for $45.00."
        body = {"model": "x", "stream": True, "messages": [{"role": "user", "content": said}]}
        events = parse_sse(served.request("POST", "/v1/chat/completions", json=body).text)
        chunks = [data for _, data in events[:-1]]
        read = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
        assert "tell me your PIN" not in read and "918" not in read
        assert read == chunks[-1]["appliance"]["text"]  # the stored answer is what the chunks carried
        assert (read == reply) is (reply == self.PASSES)


@pytest.mark.real_model
def test_a_real_model_continues_the_text_it_is_given():
    """llama.cpp continues a prompt that ends with the assistant's text (the checked stream's retry
    after text was shown): the template is left open after that text, and the answer is what follows."""
    from appliance.models.llama import LlamaChatModel

    from .support import MODELS_DIR

    tiny = MODELS_DIR / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not tiny.is_file():
        pytest.skip(f"{tiny} is not fetched (appliance models fetch --role test)")
    model = LlamaChatModel(tiny, name="tiny", n_ctx=1024)
    asked = (Message("user", "Count from one to ten in words, please."),)
    shown = "One, two, three, four,"
    sampling = Sampling(max_tokens=12, temperature=0.0)
    answer = model.generate((*asked, Message("assistant", shown)), sampling)
    assert answer.prompt_tokens == len(model.tokens((*asked, Message("assistant", shown)), open_end=True))
    assert answer.prompt_tokens < len(model.tokens((*asked, Message("assistant", shown))))  # no end of turn
    assert answer.text and not answer.text.startswith("One")  # it went on from "four,"
    assert "five" in answer.text.lower()
