"""The pipeline around a fake responder (FakeResponder): what is stored, and what is refused."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from appliance.app import pipeline_settings
from appliance.config import Settings
from appliance.context import POLICIES
from appliance.errors import GenerationError, InputError, MessageTooLong, TurnConflict
from appliance.store import Store
from appliance.turn.loop import WAKING
from appliance.turn.pipeline import Pipeline
from appliance.types import Message

from .fakes import FakeResponder


def count_rows(pipeline: Pipeline) -> tuple[int, int]:
    db = pipeline.store.db
    return db.execute("SELECT COUNT(*) FROM turns").fetchone()[0], db.execute(
        "SELECT COUNT(*) FROM turn_records"
    ).fetchone()[0]


class TestAnswer:
    def test_exchange_is_stored_with_its_record(self, pipeline: Pipeline, fake_responder: FakeResponder):
        fake_responder.replies = ["Your booking W9945XIS is confirmed."]
        session = pipeline.sessions.new_session()
        streamed: list[str] = []
        result = pipeline.answer(session.id, "  Please confirm booking W9945XIS  ", on_token=streamed.append)
        assert "".join(streamed) == "Your booking W9945XIS is confirmed."
        turns = pipeline.store.turns(session.id)
        assert [(t.role, t.text) for t in turns] == [
            ("customer", "Please confirm booking W9945XIS"),
            ("agent", "Your booking W9945XIS is confirmed."),
        ]
        [(idx, record)] = pipeline.store.records(session.id)
        assert idx == 1 and record.stage == "early" and record.model == "fake-responder"
        assert record.prompt_tokens == result.record.prompt_tokens == record.manifest.total_tokens
        assert record.check.checked == 1 and record.check.ok and record.check.action == "none"
        assert result.record.timings.store_ms > 0
        assert [(e.value, e.turn) for e in pipeline.store.ledger(session.id)] == [("W9945XIS", 0), ("W9945XIS", 1)]

    def test_prompt_carries_the_transcript_and_question(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.sessions.new_session()
        pipeline.answer(session.id, "My order is AB-12345.")
        pipeline.answer(session.id, "What was my order?")
        system, user = fake_responder.prompts[-1]
        assert system.role == "system"
        assert "Customer: My order is AB-12345." in user.content
        assert user.content.index("[CONTEXT]") < user.content.index("[QUESTION]") < user.content.index("[INSTRUCTION]")

    def test_the_standing_directive_leads_and_only_the_stages_follows_the_question(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        session = pipeline.sessions.new_session()
        for text in ["hi", "my card", "it is blocked", "it was stolen"]:
            pipeline.answer(session.id, text)
        system, user = fake_responder.prompts[-1]
        s = pipeline.settings
        assert system.content == f"{s.system_prompt}\n{s.instruction}"
        assert user.content.endswith(f"[QUESTION]\nit was stolen\n\n[INSTRUCTION]\n{s.instructions['mid']}")
        assert s.instruction not in user.content

    def test_a_stage_whose_directive_is_off_has_no_instruction_part(self, store: Store, fake_responder: FakeResponder):
        settings = dataclasses.replace(pipeline_settings(Settings()), instructions={"early": ""})
        pipeline = Pipeline(store, fake_responder, POLICIES, settings)
        pipeline.answer(pipeline.sessions.new_session().id, "hello")
        assert fake_responder.prompts[-1][1].content.endswith("[QUESTION]\nhello")

    def test_stages_are_recorded_per_turn(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session()
        for text in ["hi", "my card", "it is blocked", "it was stolen", "thank you, bye"]:
            pipeline.answer(session.id, text)
        stages = [r.stage for _, r in pipeline.store.records(session.id)]
        assert stages == ["early", "early", "early", "mid", "late"]


class TestRefused:
    def test_empty_message(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session()
        with pytest.raises(InputError, match="empty message"):
            pipeline.answer(session.id, "   ")
        assert count_rows(pipeline) == (0, 0)

    def test_too_long_message_names_the_limit(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session()
        limit = pipeline.settings.max_message_chars
        with pytest.raises(MessageTooLong) as info:
            pipeline.answer(session.id, "x" * (limit + 1))
        assert str(limit) in str(info.value) and info.value.limit == limit
        assert count_rows(pipeline) == (0, 0)

    def test_failed_generation_stores_nothing(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.sessions.new_session()
        pipeline.answer(session.id, "hello")
        fake_responder.fail_with = GenerationError("model crashed")
        with pytest.raises(GenerationError):
            pipeline.answer(session.id, "again")
        assert count_rows(pipeline) == (2, 1)

    def test_cancelled_generation_stores_nothing(self, pipeline: Pipeline, fake_responder: FakeResponder):
        from appliance.errors import Cancelled

        session = pipeline.sessions.new_session()
        fake_responder.cancel_after = 1
        with pytest.raises(Cancelled):
            pipeline.answer(session.id, "hello", cancel=threading.Event())
        assert count_rows(pipeline) == (0, 0)
        assert not pipeline.answering.busy

    def test_unknown_policy(self, pipeline: Pipeline):
        with pytest.raises(InputError, match="unknown policy"):
            pipeline.sessions.new_session(policy="everything")


class TestOperatorControls:
    def test_record_turn_edit_restore_pause(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session()
        seen: list[str] = []
        pipeline.store.after_events.append(lambda logged: seen.extend(logged.sessions(*WAKING)))
        pipeline.sessions.record_turn(session.id, "customer", "card 4821 lost")
        pipeline.sessions.record_turn(session.id, "agent", "I have blocked it.")
        with pytest.raises(InputError):
            pipeline.sessions.record_turn(session.id, "robot", "beep")
        first = pipeline.sessions.edit_summary(session.id, "Card ending 4821 lost; blocked.")
        pipeline.sessions.edit_summary(session.id, "Wrong edit.")
        restored = pipeline.sessions.restore_summary(session.id, first.version)
        assert restored.version == 3 and restored.text == first.text and restored.author == "operator"
        assert pipeline.store.current_summary(session.id).text == first.text
        pipeline.sessions.set_summary_paused(session.id, True)
        assert pipeline.store.session(session.id).summary_paused
        assert seen == [session.id, session.id]  # a turn each time; a pause wakes nothing
        pipeline.sessions.set_summary_paused(session.id, False)
        assert seen == [session.id] * 3  # resumed: what was due runs


class TestGuard:
    """A fake responder (FakeResponder) that invents facts, and what each guard policy does about it."""

    def make(self, pipeline: Pipeline, guard: str) -> Pipeline:
        import dataclasses

        pipeline.settings = dataclasses.replace(pipeline.settings, guard=guard)
        return pipeline

    def raw(self, pipeline: Pipeline) -> Pipeline:
        import dataclasses

        pipeline.settings = dataclasses.replace(pipeline.settings, stream="raw")
        return pipeline

    def test_regenerate_replaces_an_invented_case_number(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "customer", "My card ending 4821 was charged twice for $45.00.")
        pipeline.sessions.record_turn(session.id, "agent", "I am sorry to hear that. Let me look into it.")
        fake_responder.replies = [
            "I opened case CS-88213 for the $45.00 charge.",  # CS-88213 was never said
            "I have opened a case for the duplicate $45.00 charge on your card ending 4821.",
        ]
        streamed: list[str] = []
        result = pipeline.answer(session.id, "What happens now?", on_token=streamed.append)
        assert "".join(streamed) == result.agent.text  # the customer read only the retry, as stored
        assert "CS-88213" not in result.agent.text
        check = result.record.check
        assert check.action == "regenerate" and check.ok
        assert [f.entity.text for f in check.original_findings] == ["CS-88213"]
        assert "CS-88213" in check.original
        retry_prompt = fake_responder.prompts[-1][-1].content
        assert "4821" in retry_prompt and "CS-88213" in retry_prompt  # the strict instruction lists both
        [(_, stored)] = pipeline.store.records(session.id)
        assert stored.check == check
        assert pipeline.store.turns(session.id)[-1].text == result.agent.text

    def test_raw_streams_the_first_answer_and_stores_the_retry(self, pipeline: Pipeline, fake_responder: FakeResponder):
        self.raw(pipeline)
        session = pipeline.sessions.new_session()
        fake_responder.replies = ["I opened case CS-88213.", "I have opened a case for you."]
        streamed: list[str] = []
        result = pipeline.answer(session.id, "What happens now?", on_token=streamed.append)
        assert "CS-88213" in "".join(streamed)  # guard.stream = "raw": the customer read the first answer...
        assert result.agent.text == "I have opened a case for you."  # ...and the stored one replaced it
        assert result.record.check.action == "regenerate"

    def test_raw_regenerate_keeps_the_first_when_the_retry_is_no_better(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        self.raw(pipeline)
        session = pipeline.sessions.new_session()
        fake_responder.replies = ["Your case is CS-1.", "Your case is CS-2 and CS-4 or CS-5."]
        result = pipeline.answer(session.id, "Any news?")
        assert result.agent.text == "Your case is CS-1."
        assert result.record.check.action == "regenerate" and len(result.record.check.findings) == 1

    def test_a_retry_that_fails_too_is_redacted_where_it_fails(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.sessions.new_session()
        fake_responder.replies = ["Your case is CS-1.", "Your case is CS-2."]
        streamed: list[str] = []
        result = pipeline.answer(session.id, "Any news?", on_token=streamed.append)
        phrase = pipeline.settings.redact_phrase
        assert result.agent.text == f"Your case is {phrase}." == "".join(streamed)
        check = result.record.check
        assert check.action == "redact" and check.ok and check.original == "Your case is CS-1."
        assert [f.entity.text for f in check.original_findings] == ["CS-1"]

    def test_contradiction_names_the_right_value(self, pipeline: Pipeline, fake_responder: FakeResponder):
        self.make(pipeline, "flag")
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "customer", "My order number is 7731-4490.")
        fake_responder.replies = ["Order 7731-4496 has shipped."]
        result = pipeline.answer(session.id, "Where is it?")
        [finding] = result.record.check.findings
        assert finding.status == "contradiction" and finding.expected == "7731-4490"
        assert result.agent.text == "Order 7731-4496 has shipped." and result.record.check.action == "flag"

    def test_redact(self, pipeline: Pipeline, fake_responder: FakeResponder):
        self.make(pipeline, "redact")
        session = pipeline.sessions.new_session()
        fake_responder.replies = ["Your refund of $120.00 arrives on March 3rd."]
        result = pipeline.answer(session.id, "When is my refund coming?")
        phrase = pipeline.settings.redact_phrase
        assert "$120.00" not in result.agent.text and phrase in result.agent.text
        assert result.record.check.action == "redact" and len(result.record.check.original_findings) == 2

    def test_a_yes_that_the_answer_takes_back_is_dropped(self, pipeline: Pipeline, fake_responder: FakeResponder):
        self.make(pipeline, "flag")
        session = pipeline.sessions.new_session()
        fake_responder.replies = ["Yes, dogs are not allowed, and case CS-7 is open."]
        streamed: list[str] = []
        result = pipeline.answer(session.id, "Can I bring my dog?", on_token=streamed.append)
        assert result.agent.text == "Dogs are not allowed, and case CS-7 is open." == "".join(streamed)
        check = result.record.check
        assert check.opener == "Yes," and check.action == "flag"
        [finding] = check.findings  # the flagged span moved with the text
        assert result.agent.text[finding.entity.start : finding.entity.end] == "CS-7"
        [(_, stored)] = pipeline.store.records(session.id)
        assert stored.check == check and pipeline.store.turns(session.id)[-1].text == result.agent.text

    def test_a_yes_with_a_limit_is_kept(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.sessions.new_session()
        fake_responder.replies = ["Yes, but not on Sundays."]
        result = pipeline.answer(session.id, "Are you open at weekends?")
        assert result.agent.text == "Yes, but not on Sundays." and result.record.check.opener == ""


class TestRefine:
    def test_a_rewrite_that_changes_an_amount_is_discarded(self, pipeline: Pipeline, fake_responder: FakeResponder):
        refiner = FakeResponder(["Sure thing, we will refund $54.00 soon."])
        pipeline.refiner = refiner
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "customer", "I was charged $45.00 twice.")
        fake_responder.replies = ["We will refund the duplicate charge of $45.00 today."]
        result = pipeline.answer(session.id, "Can you fix it?")
        assert result.agent.text == "We will refund the duplicate charge of $45.00 today."
        assert result.record.check.refine.startswith("discarded:") and "$54.00" in result.record.check.refine

    def test_a_faithful_rewrite_is_kept(self, pipeline: Pipeline, fake_responder: FakeResponder):
        pipeline.refiner = FakeResponder(["Sure, we'll refund the $45.00 duplicate charge today."])
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "customer", "I was charged $45.00 twice.")
        fake_responder.replies = ["We will refund the duplicate charge of $45.00 today."]
        result = pipeline.answer(session.id, "Can you fix it?")
        assert result.agent.text.startswith("Sure, we'll refund") and result.record.check.refine == "kept"


class TestOneOwnerOfTurnIndices:
    def test_an_operator_turn_stored_during_an_answer_is_a_conflict_not_a_mislabel(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        session = pipeline.sessions.new_session()
        pipeline.answer(session.id, "My order is AB-12345.")

        def meanwhile(*args, **kwargs):
            # What an operator turn written outside the session's queue lane would do.
            pipeline.sessions.record_turn(session.id, "agent", "Operator here: refund RF-777 issued.")
            return FakeResponder.generate(fake_responder, *args, **kwargs)

        fake_responder.generate = meanwhile  # type: ignore[method-assign]
        with pytest.raises(TurnConflict):
            pipeline.answer(session.id, "And my card 4821?")
        turns = pipeline.store.turns(session.id)
        assert [t.text for t in turns][-1] == "Operator here: refund RF-777 issued."
        # The operator's fact is filed under the operator's turn, and nothing of the refused answer is stored.
        assert [(e.value, e.turn) for e in pipeline.store.ledger(session.id) if e.value == "RF-777"] == [("RF-777", 2)]
        assert "4821" not in {e.value for e in pipeline.store.ledger(session.id)}

    def test_record_turn_takes_the_index_the_store_gives(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session()
        first = pipeline.sessions.record_turn(session.id, "customer", "order AB-12345")
        second = pipeline.sessions.record_turn(session.id, "agent", "found AB-12345")
        assert (first.index, second.index) == (0, 1)
        assert [e.turn for e in pipeline.store.ledger(session.id)] == [0, 1]


class TestTranscriptAnswers:
    """The OpenAI endpoint's stateless path: a context policy like the others, with a manifest and the check."""

    def test_the_transcript_is_answered_with_a_manifest_and_checked_and_nothing_is_stored(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        fake_responder.replies = ["Your order AB-99999 ships today."]
        result = pipeline.answer_transcript(
            [Message("user", "My order is AB-12345."), Message("assistant", "Noted."), Message("user", "Status?")]
        )
        assert result.record.manifest.policy == "raw"
        assert result.record.manifest.verbatim_turns == (0, 1)
        # The invented order number is caught, and the guard's retry (the fake's default reply) replaces it.
        check = result.record.check
        assert [f.entity.text for f in check.original_findings] == ["AB-99999"] and check.action == "regenerate"
        assert result.agent.text == fake_responder.default
        assert pipeline.store.sessions() == []
        system, user = fake_responder.prompts[0]
        assert system.content == f"{pipeline.settings.system_prompt}\n{pipeline.settings.instruction}"
        assert "Customer: My order is AB-12345." in user.content

    def test_the_oldest_turns_give_way_to_the_budget(self, pipeline: Pipeline, fake_responder: FakeResponder):
        long = " ".join(["word"] * 200)
        messages = [Message("user", f"{i} {long}") if i % 2 == 0 else Message("assistant", "ok") for i in range(10)]
        result = pipeline.answer_transcript([*messages, Message("user", "And now?")])
        manifest = result.record.manifest
        assert manifest.cut_turns and manifest.cut_turns[0] == 0
        assert manifest.total_tokens <= pipeline.settings.budget_tokens

    def test_a_given_system_message_replaces_the_configured_one(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        pipeline.answer_transcript([Message("system", "You are a ferry clerk."), Message("user", "Hello")])
        # the standing directive stays, after the given role
        assert fake_responder.prompts[0][0].content == f"You are a ferry clerk.\n{pipeline.settings.instruction}"

    def test_the_last_message_must_be_the_customers(self, pipeline: Pipeline):
        with pytest.raises(InputError) as caught:
            pipeline.answer_transcript([Message("user", "hi"), Message("assistant", "hello")])
        assert caught.value.field == "messages"


class TestKnowTheCustomer:
    """A bare answer to the agent's request is a fact; secrets are masked before anything is stored or prompted."""

    def flagging(self, pipeline: Pipeline) -> Pipeline:
        import dataclasses

        pipeline.settings = dataclasses.replace(pipeline.settings, guard="flag")
        return pipeline

    def test_a_bare_name_after_the_agents_request_is_the_customers_name(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "agent", "Could I get your full name, please?")
        pipeline.answer(session.id, "Yes, Sarah Brown.")
        names = [(e.value, e.turn, e.slot) for e in pipeline.store.ledger(session.id) if e.kind == "name"]
        assert names == [("Sarah Brown", 1, "name:customer")]

    def test_a_recorded_reply_is_read_with_the_request_before_it(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "agent", "Wie lautet Ihre Kundennummer?")
        pipeline.sessions.record_turn(session.id, "customer", "Klar: 8812345")
        pipeline.sessions.record_turn(session.id, "agent", "Und Ihr Geburtsdatum, bitte?")
        pipeline.sessions.record_turn(session.id, "customer", "Der 3. März 1985.")
        facts = [(e.kind, e.value, e.turn) for e in pipeline.store.ledger(session.id)]
        assert facts == [("customer_id", "8812345", 1), ("birthdate", "3. März 1985", 3)]

    def test_an_answer_with_another_name_is_a_contradiction(self, pipeline: Pipeline, fake_responder: FakeResponder):
        self.flagging(pipeline)
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "agent", "Could I get your full name, please?")
        pipeline.sessions.record_turn(session.id, "customer", "Yes, Sarah Brown.")
        fake_responder.replies = ["You told me your name is Sarah Green."]
        result = pipeline.answer(session.id, "What name did I give you?")
        named = [
            (f.entity.text, f.status, f.expected)
            for f in result.record.check.findings
            if f.entity.text == "Sarah Green"
        ]
        assert named == [("Sarah Green", "contradiction", "Sarah Brown")]
        assert result.record.check.action == "flag"

    def test_a_pin_is_masked_before_it_is_stored_or_prompted(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.sessions.new_session()
        result = pipeline.answer(session.id, "My PIN is 7402, my card is blocked.")
        assert result.customer.text == "My PIN is [PIN withheld], my card is blocked."
        assert "7402" not in "".join(m.content for m in fake_responder.prompts[-1])
        assert [t.text for t in pipeline.store.turns(session.id)][0] == result.customer.text
        assert [(e.kind, e.value, e.turn) for e in pipeline.store.ledger(session.id)] == [("secret", "PIN given", 0)]
        assert "7402" not in pipeline.store.db.execute("SELECT group_concat(text) FROM turns").fetchone()[0]

    def test_a_bare_pin_after_the_agents_request_is_masked(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "agent", "Right, and your PIN as well please.")
        turn = pipeline.sessions.record_turn(session.id, "customer", "3941")
        assert turn.text == "[PIN withheld]"
        pipeline.sessions.record_turn(session.id, "agent", "Und Ihre Geheimzahl, bitte?")
        result = pipeline.answer(session.id, "Die ist 7402.")
        assert result.customer.text == "Die ist [PIN withheld]."
        assert [e.value for e in pipeline.store.ledger(session.id)] == ["PIN given", "PIN given"]

    def test_a_transcript_sent_whole_is_masked_before_it_is_prompted(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        pipeline.answer_transcript(
            [
                Message("assistant", "Right, and your PIN as well please."),
                Message("user", "3941"),
                Message("assistant", "Thanks."),
                Message("user", "My card number is 4111 1111 1111 1111, is it blocked?"),
            ]
        )
        prompt = "".join(m.content for m in fake_responder.prompts[0])
        assert "3941" not in prompt and "4111 1111" not in prompt
        assert "[PIN withheld]" in prompt and "[card ending 1111]" in prompt

    def test_an_answer_that_repeats_a_secret_is_flagged(self, pipeline: Pipeline, fake_responder: FakeResponder):
        self.flagging(pipeline)
        session = pipeline.sessions.new_session()
        fake_responder.replies = ["Your PIN is 1234."]
        result = pipeline.answer(session.id, "What is my PIN?")
        assert [(f.entity.kind, f.status) for f in result.record.check.findings] == [("secret", "unsupported")]


class TestSecretMaskingSetting:
    def test_masking_is_on_by_default_and_follows_the_setting(self, settings, store, fake_responder):
        import dataclasses as dc

        from appliance.app import pipeline_settings
        from appliance.context import POLICIES

        on = pipeline_settings(settings)
        assert on.mask_secrets
        for mask, expect_pin in ((True, False), (False, True)):
            pipeline = Pipeline(store, fake_responder, POLICIES, dc.replace(on, mask_secrets=mask))
            session = pipeline.sessions.new_session()
            pipeline.answer(session.id, "My PIN is 7402, please help")
            stored = store.turns(session.id)[0].text
            assert ("7402" in stored) == expect_pin


class TestTimings:
    """One timer per turn: each phase timed on its own, read out as the record's ``Timings``."""

    def test_phases_are_timed_apart_and_total_runs_from_the_start(self):
        from appliance.turn.timing import TurnTimer
        from appliance.types import Generation

        ticks = iter([0.0, 1.0, 1.5, 2.0, 2.25, 4.0, 7.0, 10.0, 10.5, 15.0, 20.0])
        timer = TurnTimer(clock=lambda: next(ticks))  # started at 0.0
        with timer.phase("recall"):  # 1.0 .. 1.5
            pass
        with timer.phase("context"):  # 2.0 .. 2.25
            pass
        with timer.phase("repair"):  # 4.0 .. 7.0
            pass
        first = Generation("text", "m", 10, 2, ttft_s=0.125, total_s=0.5)
        before = timer.timings(first)  # read at 10.0
        assert (before.recall_ms, before.context_ms, before.repair_s) == (500.0, 250.0, 3.0)
        assert (before.ttft_s, before.generate_s, before.check_ms, before.store_ms) == (0.125, 0.5, 0.0, 0.0)
        assert before.total_s == 10.0
        with timer.phase("store"):  # 10.5 .. 15.0
            pass
        after = timer.timings(first)  # read at 20.0
        assert after.store_ms == 4500.0 and after.total_s == 20.0 and after.recall_ms == before.recall_ms

    def test_the_stored_record_stops_before_the_write_and_the_callers_copy_includes_it(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session()
        result = pipeline.answer(session.id, "My order is AB-12345.")
        [(_, stored)] = pipeline.store.records(session.id)
        assert stored.timings.store_ms == 0 and result.record.timings.store_ms > 0
        assert 0 < stored.timings.total_s <= result.record.timings.total_s
        assert stored.timings.generate_s == result.record.timings.generate_s == 0.002  # the fake's own


class TestGuardSteps:
    """The guard's steps as functions of a turn's plan and its first answer."""

    def plan(self, pipeline: Pipeline, message: str):  # type: ignore[no-untyped-def]
        from appliance.turn.timing import TurnTimer

        session = pipeline.sessions.new_session()
        pipeline.sessions.record_turn(session.id, "customer", "I was charged $45.00 twice.")
        return pipeline.plan(pipeline.store.snapshot(session.id), message, TurnTimer())

    def rules(self, pipeline: Pipeline, policy: str = "regenerate", refiner: FakeResponder | None = None):  # type: ignore[no-untyped-def]
        from appliance.turn import guard

        return guard.Rules(policy, "[please check with staff]", refiner, None, pipeline.parts)

    def test_an_answer_without_findings_is_kept_as_it_is(self, pipeline: Pipeline, fake_responder: FakeResponder):
        from appliance.turn import guard
        from appliance.types import Generation

        plan = self.plan(pipeline, "Can you fix it?")
        first = Generation("We will refund the $45.00 today.", "m", 10, 7, 0.1, 0.2)
        kept = guard.apply(plan, first, plan.check(first.text), self.rules(pipeline))
        assert kept.answer is first and kept.check.action == "none" and fake_responder.prompts == []

    def test_flag_asks_for_nothing_more(self, pipeline: Pipeline, fake_responder: FakeResponder):
        from appliance.turn import guard
        from appliance.types import Generation

        plan = self.plan(pipeline, "Can you fix it?")
        first = Generation("Case CS-7 refunds $45.00.", "m", 10, 5, 0.1, 0.2)
        kept = guard.repair(plan, first, plan.check(first.text), self.rules(pipeline, "flag"))
        assert kept.answer is first and kept.check.action == "flag" and not kept.check.ok
        assert fake_responder.prompts == []

    def test_regenerate_answers_again_from_the_plans_model_and_prompt(
        self, pipeline: Pipeline, fake_responder: FakeResponder
    ):
        from appliance.turn import guard
        from appliance.types import Generation

        plan = self.plan(pipeline, "Can you fix it?")
        fake_responder.replies = ["We will refund the $45.00 today."]
        first = Generation("Case CS-7 refunds $45.00.", "m", 10, 5, 0.1, 0.2)
        kept = guard.repair(plan, first, plan.check(first.text), self.rules(pipeline))
        assert kept.answer.text == "We will refund the $45.00 today." and kept.check.action == "regenerate"
        assert kept.check.original == first.text and fake_responder.samplings == [plan.sampling]
        assert "CS-7" in fake_responder.prompts[0][-1].content  # the stricter instruction names it

    def test_an_empty_rewrite_is_discarded(self, pipeline: Pipeline):
        from appliance.turn import guard
        from appliance.types import CheckResult, Generation

        plan = self.plan(pipeline, "Can you fix it?")
        kept = guard.Guarded(Generation("We will refund the $45.00 today.", "m", 10, 7, 0.1, 0.2), CheckResult())
        refined = guard.refine(plan, kept, self.rules(pipeline, refiner=FakeResponder([""])))
        assert refined.answer.text == kept.answer.text and refined.check.refine == "discarded: empty rewrite"

    def test_without_a_refiner_the_answer_is_left_alone(self, pipeline: Pipeline):
        from appliance.turn import guard
        from appliance.types import CheckResult, Generation

        plan = self.plan(pipeline, "Can you fix it?")
        kept = guard.Guarded(Generation("We will refund the $45.00 today.", "m", 10, 7, 0.1, 0.2), CheckResult())
        assert guard.refine(plan, kept, self.rules(pipeline)) is kept
