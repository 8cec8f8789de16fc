"""An answer that contradicts the document's own yes or no is replaced by the document's answer (the
guard's ``quote`` step; ``appliance.knowledge.reply`` finds the document's answer).

Real SQLite with FTS5 and the real ONNX encoder for the knowledge base; the responder is a fake."""

from __future__ import annotations

import pytest

from appliance.app import pipeline_settings
from appliance.config import Settings
from appliance.context import POLICIES
from appliance.context.recall import Recall
from appliance.knowledge import Knowledge
from appliance.knowledge.chunk import title_names
from appliance.knowledge.fetch import FetchCues, asks_yes_or_no
from appliance.knowledge.reply import reply_of
from appliance.store import Store
from appliance.turn.pipeline import Pipeline
from appliance.types import Passage

from .fakes import FakeResponder, WordCounter
from .test_grounded import encoder  # noqa: F401  (the module's encoder fixture)

PIN = "Does a new card have a new PIN?"
PIN_ANSWER = "No, a replacement card keeps your PIN. You can change it at any of our cash machines."

FAQ = f"""# Harbour Bank, Main Street branch

## {PIN}

{PIN_ANSWER} It takes a minute.

## Can I pay in coins at the counter?

- Yes, up to 200 coins a day.
- Larger amounts by appointment.

## What does a transfer abroad cost?

A transfer abroad costs 7.50 EUR.
"""

OTHER = """# Lakeside Bank - Quay branch

## Does a new card have a new PIN?

Yes, every new card comes with a new PIN, sent by post.
"""

CUES = FetchCues.build()


def passage(heading: str, text: str) -> Passage:
    return Passage(1, "faq.md", "Harbour Bank", heading, heading, text, len(text.split()), 0.7)


@pytest.fixture
def quoting(settings: Settings, store: Store, fake_responder: FakeResponder, encoder: Recall) -> Pipeline:  # noqa: F811
    knowledge = Knowledge(store, encoder, WordCounter(), settings.knowledge)
    knowledge.upload("harbour.md", FAQ.encode())
    return Pipeline(store, fake_responder, POLICIES, pipeline_settings(settings), knowledge=knowledge)


class TestTheDocumentsAnswer:
    @pytest.mark.parametrize(
        ("heading", "asks"),
        [
            (PIN, True),
            ("Are dogs allowed?", True),
            ("Puis-je parler à un conseiller en français ?", True),
            ("Kann ich mit Karte zahlen?", True),
            ("What does a transfer abroad cost?", False),
            ("I lost my card. What should I do?", False),
            ("Quels sont les horaires d'ouverture ?", False),
            ("Opening hours", False),
        ],
    )
    def test_a_heading_asks_a_yes_or_no_when_it_is_a_question_with_no_open_questions_word(self, heading, asks):
        assert asks_yes_or_no(heading, CUES) is asks

    def test_the_reply_is_the_first_paragraph_after_the_heading_in_two_sentences_at_most(self):
        reply = reply_of(passage(PIN, f"{PIN}\n{PIN_ANSWER} It takes a minute.\nMore text."), CUES)
        assert reply is not None and reply.text == PIN_ANSWER
        item = reply_of(passage("Can I pay in coins?", "Can I pay in coins?\n- Yes, up to 200.\n- Or more."), CUES)
        assert item is not None and item.text == "Yes, up to 200."
        nested = passage(f"Cards > {PIN}", f"{PIN}\n{PIN_ANSWER}")
        assert (r := reply_of(nested, CUES)) is not None and r.text == PIN_ANSWER

    def test_no_reply_where_the_heading_asks_no_yes_or_no_or_nothing_follows(self):
        assert reply_of(passage("What does it cost?", "What does it cost?\nNo fee."), CUES) is None
        assert reply_of(passage(PIN, PIN), CUES) is None


class TestQuote:
    def test_an_answer_that_says_the_opposite_of_the_document_is_replaced_by_its_words(
        self, quoting: Pipeline, fake_responder: FakeResponder
    ):
        fake_responder.replies = ["Yes, a new card comes with a new PIN."]
        session = quoting.sessions.new_session()
        streamed: list[str] = []
        result = quoting.answer(session.id, PIN, on_token=streamed.append)
        assert result.agent.text == PIN_ANSWER == "".join(streamed)  # the first sentence held, then quoted
        check = result.record.check
        assert check.action == "quote" and check.original == "Yes, a new card comes with a new PIN." and check.ok
        [(_, stored)] = quoting.store.records(session.id)
        assert stored.check == check and quoting.store.turns(session.id)[-1].text == PIN_ANSWER
        assert result.record.knowledge is not None and result.record.knowledge.decision.polar

    def test_an_answer_that_agrees_is_kept_as_said(self, quoting: Pipeline, fake_responder: FakeResponder):
        fake_responder.replies = ["No, your PIN stays the same."]
        result = quoting.answer(quoting.sessions.new_session().id, PIN)
        assert result.agent.text == "No, your PIN stays the same." and result.record.check.action == "none"

    def test_a_statement_answering_a_yes_or_no_question_is_held_to_it_too(
        self, quoting: Pipeline, fake_responder: FakeResponder
    ):
        fake_responder.replies = ["Coins are not accepted at the counter."]
        result = quoting.answer(quoting.sessions.new_session().id, "ok and do they take coins at the counter")
        assert result.agent.text == "Yes, up to 200 coins a day." and result.record.check.action == "quote"

    def test_an_answer_to_an_open_question_is_left_alone(self, quoting: Pipeline, fake_responder: FakeResponder):
        # not asked as a yes/no question, and the answer opens with neither: nothing to hold it to
        fake_responder.replies = ["A new card comes with a new PIN by post."]
        result = quoting.answer(quoting.sessions.new_session().id, "Tell me about the PIN of a new card")
        assert result.agent.text == "A new card comes with a new PIN by post."
        assert result.record.check.action != "quote"

    def test_an_answer_from_another_placed_document_is_left_alone(
        self, quoting: Pipeline, fake_responder: FakeResponder
    ):
        assert quoting.grounding.knowledge is not None
        quoting.grounding.knowledge.upload("lakeside.md", OTHER.encode())
        found = quoting.grounding.knowledge.search(PIN)
        assert {p.title for p in found.passages[:2]} == {
            "Harbour Bank, Main Street branch",
            "Lakeside Bank - Quay branch",
        }
        assert found.reply is not None
        best = found.reply.passage.title
        other = title_names(next(p.title for p in found.passages if p.title != best))[-1]  # "Lakeside Bank"
        opposite = "Yes" if found.reply.text.startswith("No") else "No"
        fake_responder.replies = [f"{opposite}, at {other} it does."]
        result = quoting.answer(quoting.sessions.new_session().id, PIN)
        assert result.agent.text == f"{opposite}, at {other} it does." and result.record.check.action == "none"
        fake_responder.replies = [f"{opposite}, it does."]  # naming neither: held to the best passage
        result = quoting.answer(quoting.sessions.new_session().id, PIN)
        assert result.agent.text == found.reply.text and result.record.check.action == "quote"
