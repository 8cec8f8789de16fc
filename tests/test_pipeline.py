"""The pipeline around a fake responder (FakeResponder): what is stored, and what is refused."""

from __future__ import annotations

import threading

import pytest

from appliance.errors import GenerationError, InputError, MessageTooLong
from appliance.pipeline import Pipeline

from .fakes import FakeResponder


def count_rows(pipeline: Pipeline) -> tuple[int, int]:
    db = pipeline.store.db
    return db.execute("SELECT COUNT(*) FROM turns").fetchone()[0], db.execute(
        "SELECT COUNT(*) FROM turn_records").fetchone()[0]


class TestAnswer:
    def test_exchange_is_stored_with_its_record(self, pipeline: Pipeline, fake_responder: FakeResponder):
        fake_responder.replies = ["Your reference is W9945XIS."]
        session = pipeline.new_session()
        streamed: list[str] = []
        result = pipeline.answer(session.id, "  Book it please  ", on_token=streamed.append)
        assert "".join(streamed) == "Your reference is W9945XIS."
        turns = pipeline.store.turns(session.id)
        assert [(t.role, t.text) for t in turns] == [("customer", "Book it please"),
                                                      ("agent", "Your reference is W9945XIS.")]
        [(idx, record)] = pipeline.store.records(session.id)
        assert idx == 1 and record.stage == "early" and record.model == "fake-responder"
        assert record.prompt_tokens == result.record.prompt_tokens == record.manifest.total_tokens
        assert result.record.timings.store_ms > 0

    def test_prompt_carries_the_transcript_and_question(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.new_session()
        pipeline.answer(session.id, "My order is AB-12345.")
        pipeline.answer(session.id, "What was my order?")
        system, user = fake_responder.prompts[-1]
        assert system.role == "system"
        assert "Customer: My order is AB-12345." in user.content
        assert user.content.index("[CONTEXT]") < user.content.index("[QUESTION]") < user.content.index("[INSTRUCTION]")

    def test_stages_are_recorded_per_turn(self, pipeline: Pipeline):
        session = pipeline.new_session()
        for text in ["hi", "my card", "it is blocked", "it was stolen", "thank you, bye"]:
            pipeline.answer(session.id, text)
        stages = [r.stage for _, r in pipeline.store.records(session.id)]
        assert stages == ["early", "early", "early", "mid", "late"]


class TestRefused:
    def test_empty_message(self, pipeline: Pipeline):
        session = pipeline.new_session()
        with pytest.raises(InputError, match="empty message"):
            pipeline.answer(session.id, "   ")
        assert count_rows(pipeline) == (0, 0)

    def test_too_long_message_names_the_limit(self, pipeline: Pipeline):
        session = pipeline.new_session()
        limit = pipeline.settings.max_message_chars
        with pytest.raises(MessageTooLong) as info:
            pipeline.answer(session.id, "x" * (limit + 1))
        assert str(limit) in str(info.value) and info.value.limit == limit
        assert count_rows(pipeline) == (0, 0)

    def test_failed_generation_stores_nothing(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.new_session()
        pipeline.answer(session.id, "hello")
        fake_responder.fail_with = GenerationError("model crashed")
        with pytest.raises(GenerationError):
            pipeline.answer(session.id, "again")
        assert count_rows(pipeline) == (2, 1)

    def test_cancelled_generation_stores_nothing(self, pipeline: Pipeline, fake_responder: FakeResponder):
        from appliance.responder import Cancelled

        session = pipeline.new_session()
        fake_responder.cancel_after = 1
        with pytest.raises(Cancelled):
            pipeline.answer(session.id, "hello", cancel=threading.Event())
        assert count_rows(pipeline) == (0, 0)
        assert not pipeline.answering.busy

    def test_unknown_policy(self, pipeline: Pipeline):
        with pytest.raises(InputError, match="unknown policy"):
            pipeline.new_session(policy="everything")


class TestOperatorControls:
    def test_record_turn_edit_restore_pause(self, pipeline: Pipeline):
        session = pipeline.new_session()
        seen: list[str] = []
        pipeline.after_store.append(seen.append)
        pipeline.record_turn(session.id, "customer", "card 4821 lost")
        pipeline.record_turn(session.id, "agent", "I have blocked it.")
        with pytest.raises(InputError):
            pipeline.record_turn(session.id, "robot", "beep")
        first = pipeline.edit_summary(session.id, "Card ending 4821 lost; blocked.")
        pipeline.edit_summary(session.id, "Wrong edit.")
        restored = pipeline.restore_summary(session.id, first.version)
        assert restored.version == 3 and restored.text == first.text and restored.author == "operator"
        assert pipeline.store.current_summary(session.id).text == first.text
        pipeline.set_summary_paused(session.id, True)
        assert pipeline.store.session(session.id).summary_paused
        assert seen == [session.id, session.id]
