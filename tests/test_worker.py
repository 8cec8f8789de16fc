"""The summary worker: off the answer's path, yielding, timing out, falling back, never losing a turn."""

from __future__ import annotations

import json
import threading

import pytest

from appliance.app.loading import load_summarizer
from appliance.config import Settings, SummarizerSettings
from appliance.facts.entities import extract
from appliance.protocols import Busy
from appliance.store import Store
from appliance.summarizer import SOFT_KINDS, squash, summary_prompt
from appliance.turn.pipeline import Pipeline
from appliance.turn.worker import SummaryWorker
from appliance.types import Turn

from .support import MODELS_DIR, SHARED_DATA
from .test_summarizer import FakeSummarizer

DIALOGUE = (
    ("customer", "I need a train to Broxbourne on Monday, arriving by 09:45."),
    ("agent", "TR5517 arrives at 09:01. Shall I book it?"),
    ("customer", "Yes, for 5 people please."),
    ("agent", "Booked. Your reference number is 1YXEN4V3 and the fare is 17.60 pounds."),
    ("customer", "I also need a park in the centre."),
    ("agent", "Cambridge University Botanic Gardens, postcode cb21jf, entrance 4 pounds."),
)
GOOD = "Issue and status: train TR5517 to Broxbourne booked for 5 people, reference 1YXEN4V3."
EARLY = "Issue and status: the customer wants train TR5517 to Broxbourne on Monday."  # turns 0-1 only
SETTINGS = SummarizerSettings(every_turns=2, resummarize_every=100, timeout_s=5, languages=("en", "de"))


class Answering(threading.Event):
    """An answer in progress as a test sets and clears it: a ``Busy``, like the pipeline's gauge."""

    @property
    def busy(self) -> bool:
        return self.is_set()


def record(store: Store, session_id: str, worker: SummaryWorker | None, turns) -> None:  # type: ignore[no-untyped-def]
    for role, text in turns:
        store.append_turn(session_id, role, text)
        if worker is not None:
            worker.notify(session_id)


@pytest.fixture
def session_id(store: Store) -> str:
    return store.create_session(policy="raw").id


def make(store: Store, model: FakeSummarizer, settings: SummarizerSettings = SETTINGS, **kw: object) -> SummaryWorker:
    return SummaryWorker(store, model, settings, extract, **kw)


class TestSummarizing:
    def test_a_summary_is_made_after_enough_turns_and_stored_as_accepted(self, store: Store, session_id: str):
        model = FakeSummarizer([GOOD])
        worker = make(store, model)
        try:
            record(store, session_id, worker, DIALOGUE[:1])
            assert worker.drain(5) and store.summaries(session_id) == ()  # one turn: not due yet
            record(store, session_id, None, DIALOGUE[1:4])
            worker.notify(session_id)
            assert worker.drain(5)
        finally:
            worker.stop()
        current = store.current_summary(session_id)
        assert current is not None and current.text == GOOD and current.author == "model"
        assert current.covers_to == 3 and current.status == "accepted"
        sampling = model.calls[0][1]
        assert (sampling.temperature, sampling.max_tokens) == (0.3, 250)
        stats = worker.stats()
        assert (stats.runs, stats.accepted, stats.failures) == (1, 1, 0) and len(stats.durations_s) == 1

    def test_the_next_version_rolls_on_from_the_current_one(self, store: Store, session_id: str):
        model = FakeSummarizer([GOOD, GOOD + " Park: Cambridge University Botanic Gardens, cb21jf."])
        worker = make(store, model, start=False)
        record(store, session_id, None, DIALOGUE[:4])
        worker.run_one(session_id)
        record(store, session_id, None, DIALOGUE[4:])
        (version,) = worker.run_one(session_id)
        assert version.covers_to == 5 and version.status == "accepted"
        rolling = model.calls[1][0][1].content
        assert GOOD in rolling and DIALOGUE[4][1] in rolling and DIALOGUE[0][1] not in rolling

    def test_the_latest_turns_stay_out_of_the_summary_and_it_moves_in_batches(self, store: Store, session_id: str):
        # Two turns kept out, two more needed: the summary moves at 4 and 6 turns, not at 5.
        model = FakeSummarizer([EARLY, GOOD])
        worker = make(store, model, start=False, keep_turns=2)
        record(store, session_id, None, DIALOGUE[:3])
        assert worker.run_one(session_id) == ()
        record(store, session_id, None, DIALOGUE[3:4])
        (first,) = worker.run_one(session_id)
        assert first.covers_to == 1 and DIALOGUE[2][1] not in model.calls[0][0][1].content
        record(store, session_id, None, DIALOGUE[4:5])
        assert worker.run_one(session_id) == ()
        record(store, session_id, None, DIALOGUE[5:])
        (second,) = worker.run_one(session_id)
        assert second.covers_to == 3

    def test_the_configured_worker_keeps_the_recent_pairs_of_the_context_out(self, store: Store):
        settings = Settings.model_validate({"context": {"recent_pairs": 3}})
        worker = SummaryWorker.configured(store, FakeSummarizer([]), settings, extract)
        try:
            assert worker.keep_turns == 6 and worker.settings == settings.summarizer
        finally:
            worker.stop()

    def test_every_n_turns_the_summary_is_made_again_from_the_whole_transcript(self, store: Store, session_id: str):
        settings = SETTINGS.model_copy(update={"resummarize_every": 6})
        model = FakeSummarizer([EARLY, GOOD, GOOD + " Postcode cb21jf."])
        worker = make(store, model, settings, start=False)
        for first in (0, 2, 4):
            record(store, session_id, None, DIALOGUE[first : first + 2])
            worker.run_one(session_id)
        prompts = [call[0][1].content for call in model.calls]
        assert "earlier conversation" in prompts[1]  # turns 2-3 rolled onto 0-1
        assert "earlier conversation" not in prompts[0]  # the first summary
        assert "earlier conversation" not in prompts[2] and DIALOGUE[0][1] in prompts[2]  # full at 6 turns
        assert store.summaries(session_id)[-1].reason == "full re-summary"

    def test_a_backlog_that_does_not_fit_the_window_is_summarized_in_parts(self, store: Store, session_id: str):
        model = FakeSummarizer([EARLY, GOOD])
        worker = make(store, model, start=False)
        long = [(role, text + " Thanks" * 40) for role, text in DIALOGUE]
        two = [Turn(session_id, i, role, text) for i, (role, text) in enumerate(long[:2])]  # type: ignore[arg-type]
        # Room for the prompt of two turns, not for the whole dialogue at once.
        model.n_ctx = SETTINGS.max_tokens + model.count(summary_prompt(None, two, "en", max_words=worker.max_words))
        record(store, session_id, None, long)
        first, second, *_ = worker.run_one(session_id)
        assert (first.status, first.covers_to) == ("accepted", 1)
        assert second.status == "accepted" and second.covers_to > 1

    def test_an_invented_identifier_is_stored_as_rejected_and_the_previous_stays(self, store: Store, session_id: str):
        model = FakeSummarizer([EARLY, "Identifiers, dates, amounts: reference ZX93QW7P."])
        worker = make(store, model, start=False)
        record(store, session_id, None, DIALOGUE[:2])
        worker.run_one(session_id)
        record(store, session_id, None, DIALOGUE[2:4])
        (rejected,) = worker.run_one(session_id)
        assert rejected.status == "rejected" and "invented ZX93QW7P" in rejected.reason
        assert store.current_summary(session_id).text == EARLY  # type: ignore[union-attr]
        assert worker.stats().rejected == 1


class TestFallback:
    def test_a_failing_summarizer_loses_no_turn_and_says_why(self, store: Store, session_id: str):
        model = FakeSummarizer([EARLY, GOOD])
        worker = make(store, model, start=False)
        record(store, session_id, None, DIALOGUE[:2])
        worker.run_one(session_id)
        previous = store.current_summary(session_id)
        record(store, session_id, None, DIALOGUE[2:4])
        model.fail_with = RuntimeError("out of memory")
        (failed,) = worker.run_one(session_id)
        assert failed.status == "rejected" and failed.reason == "failed: RuntimeError: out of memory"
        assert store.current_summary(session_id) == previous
        assert [t.text for t in store.turns(session_id)] == [text for _, text in DIALOGUE[:4]]
        assert worker.stats().errors == 1
        # Retried after ``every_turns`` more turns, afresh from the transcript (the rolling update failed).
        assert worker.run_one(session_id) == ()
        record(store, session_id, None, DIALOGUE[4:6])
        (retried,) = worker.run_one(session_id)
        assert retried.status == "accepted" and retried.covers_to == 5
        assert retried.reason == "full re-summary" and DIALOGUE[0][1] in model.calls[-1][0][1].content

    def test_a_summarizer_that_hangs_is_cancelled_at_the_timeout(self, store: Store, session_id: str):
        model = FakeSummarizer([GOOD])
        model.block = True
        worker = make(store, model, SETTINGS.model_copy(update={"timeout_s": 0.2}))
        try:
            record(store, session_id, None, DIALOGUE[:2])
            worker.notify(session_id)
            assert worker.drain(10)
        finally:
            worker.stop()
        (version,) = store.summaries(session_id)
        assert version.status == "rejected" and version.reason == "timeout after 0.2 s"
        assert store.current_summary(session_id) is None and len(store.turns(session_id)) == 2
        assert worker.stats().timeouts == 1


class TestControls:
    def test_a_paused_session_is_not_summarized_until_resumed(self, store: Store, session_id: str):
        model = FakeSummarizer([GOOD])
        worker = make(store, model)
        try:
            store.set_summary_paused(session_id, True)
            record(store, session_id, worker, DIALOGUE[:4])
            assert worker.drain(5)
            assert model.calls == [] and store.summaries(session_id) == ()
            store.set_summary_paused(session_id, False)
            worker.notify(session_id)
            assert worker.drain(5)
        finally:
            worker.stop()
        assert store.current_summary(session_id).text == GOOD  # type: ignore[union-attr]
        assert worker.stats().skipped_paused >= 1

    def test_does_not_start_while_an_answer_is_being_generated(self, store: Store, session_id: str):
        answering = Answering()
        answering.set()
        model = FakeSummarizer([GOOD])
        worker = make(store, model, answering=answering)
        try:
            record(store, session_id, worker, DIALOGUE[:2])
            assert not worker.drain(0.3)
            assert model.calls == []
            answering.clear()
            assert worker.drain(5)
        finally:
            worker.stop()
        assert len(model.calls) == 1

    def test_a_summary_running_when_an_answer_starts_is_cancelled_and_retried_after(
        self, store: Store, session_id: str
    ):
        answering = Answering()
        model = FakeSummarizer([GOOD])
        model.block = True
        worker = make(store, model, answering=answering)
        try:
            record(store, session_id, None, DIALOGUE[:4])
            worker.notify(session_id)
            assert model.started.wait(5)
            answering.set()
            assert not worker.drain(0.3)  # cancelled, queued again, waiting for the answer to end
            assert store.summaries(session_id) == () and worker.stats().yielded == 1
            model.block = False
            answering.clear()
            assert worker.drain(5)
        finally:
            worker.stop()
        assert len(model.calls) == 2 and store.current_summary(session_id).text == GOOD  # type: ignore[union-attr]
        assert worker.stats().failures == 0

    def test_can_be_told_not_to_yield(self, store: Store, session_id: str):
        answering = Answering()
        answering.set()
        model = FakeSummarizer([GOOD])
        worker = make(store, model, SETTINGS.model_copy(update={"yield_to_answers": False}), answering=answering)
        try:
            record(store, session_id, worker, DIALOGUE[:2])
            assert worker.drain(5)
        finally:
            worker.stop()
        assert len(model.calls) == 1

    def test_an_operator_edit_made_while_summarizing_is_not_overwritten(self, store: Store, session_id: str):
        model = FakeSummarizer([GOOD, GOOD])
        model.block = True
        worker = make(store, model)
        try:
            record(store, session_id, worker, DIALOGUE[:2])
            assert model.started.wait(5)
            operator = store.add_summary(
                store_summary(session_id, "Customer is Ms Dana Whitfield; train TR5517.", covers_to=1)
            )
            model.release.set()
            assert worker.drain(5)
        finally:
            worker.stop()
        versions = store.summaries(session_id)
        assert versions[-1].status == "rejected" and versions[-1].reason.startswith("stale: based on version 0")
        assert store.current_summary(session_id) == operator
        assert worker.stats().stale == 1

    def test_the_next_version_builds_on_the_operators_text(self, store: Store, session_id: str):
        model = FakeSummarizer(["Issue and status: Ms Dana Whitfield booked train TR5517, reference 1YXEN4V3."])
        worker = make(store, model, SETTINGS.model_copy(update={"resummarize_every": 2}), start=False)
        record(store, session_id, None, DIALOGUE[:2])
        store.add_summary(store_summary(session_id, "Customer is Ms Dana Whitfield; train TR5517.", covers_to=1))
        record(store, session_id, None, DIALOGUE[2:4])
        (version,) = worker.run_one(session_id)
        assert version.status == "accepted"
        # Not a full re-summary, although one is due: the operator's text is carried forward.
        prompt = model.calls[0][0][1].content
        assert "Ms Dana Whitfield" in prompt and DIALOGUE[0][1] not in prompt


def store_summary(session_id: str, text: str, *, covers_to: int):  # type: ignore[no-untyped-def]
    from appliance.types import SummaryVersion

    return SummaryVersion(session_id=session_id, version=0, text=text, covers_to=covers_to, author="operator")


def test_an_answer_is_running_while_busy_says_so(store: Store, pipeline: Pipeline):
    class Gauge:
        busy = True

    def running(answering: Busy | None) -> bool:
        return make(store, FakeSummarizer([]), answering=answering, start=False)._answer_running()

    event = Answering()
    assert running(Gauge()) and not running(event) and not running(None)
    event.set()
    assert running(event)
    assert isinstance(pipeline.answering, Busy) and not running(pipeline.answering)


@pytest.mark.real_model
def test_real_summarizer_makes_a_rolling_summary_of_a_real_dialogue(store: Store, settings: Settings):
    """Qwen2.5-Coder-0.5B on the first turns of a MultiWOZ dialogue: a full version, then a rolling one."""
    if not (MODELS_DIR / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").is_file():
        pytest.skip("summarizer model not fetched: appliance models fetch --role summarizer")
    conversation = next(
        json.loads(line)
        for line in (SHARED_DATA / "dev_conversations.jsonl").open()
        if json.loads(line)["id"] == "multiwoz21:MUL0425"
    )
    small = settings.summarizer.model_copy(
        update={
            "n_ctx": 2048,
            "n_threads": 1,  # a second llama.cpp thread stalls whenever anything else uses the other core
            "seed": 7,
            "max_tokens": 120,
            "every_turns": 2,
            "resummarize_every": 100,
            "timeout_s": 600,
        }
    )
    model = load_summarizer(settings.model_copy(update={"summarizer": small}))
    session_id = store.create_session(policy="raw").id
    worker = SummaryWorker(store, model, small, extract, start=False)
    turns = [(t["role"], t["text"]) for t in conversation["turns"][:8]]
    record(store, session_id, None, turns[:6])
    first = worker.run_one(session_id)
    record(store, session_id, None, turns[6:])
    second = worker.run_one(session_id)
    versions = store.summaries(session_id)
    assert versions == (*first, *second) and len(versions) == 2
    transcript = "\n".join(text for _, text in turns)
    for v in versions:
        assert v.author == "model" and (v.status == "accepted" or v.reason)
    accepted = [v for v in versions if v.status == "accepted"]
    assert accepted, [v.reason for v in versions]
    assert accepted[0].covers_to == 5 and model.count_text(accepted[0].text) <= 120
    # What was accepted holds only facts of the transcript, and it carries at least one of them exactly.
    for v in accepted:
        facts = [e for e in extract(v.text) if e.kind not in SOFT_KINDS]
        assert facts and all(squash(e.text) in squash(transcript) for e in facts), v.text


class TestFactsInOtherFormsAndSecrets:
    """The worker validates with the entity normaliser's keys, and no secret is stored in any version."""

    BANK = (
        ("customer", "Hello, my balance shows 9758 in credit and my PIN is 7402."),
        ("agent", "Thanks. Your date of birth, please?"),
        ("customer", "10/08/1980"),
        ("agent", "Thank you, you are verified."),
    )

    def test_a_fact_in_another_form_is_accepted(self, store: Store, session_id: str):
        text = "Issue and status: balance check, $9758 in credit; born October 8, 1980."
        worker = make(store, FakeSummarizer([text]), start=False)
        record(store, session_id, None, self.BANK)
        (version,) = worker.run_one(session_id)
        assert version.status == "accepted" and version.text == text and version.reason == ""

    def test_a_secret_is_removed_and_a_secret_only_version_is_stored_without_it(self, store: Store, session_id: str):
        worker = make(
            store, FakeSummarizer(["Verification: PIN 7402 given by the customer over the phone."]), start=False
        )
        record(store, session_id, None, self.BANK)
        (version,) = worker.run_one(session_id)
        assert version.status == "rejected" and "secret" in version.reason
        stored = "\n".join(f"{v.text} {v.reason}" for v in store.summaries(session_id))
        assert "7402" not in stored

    def test_a_bare_pin_the_transcript_holds_is_removed_even_without_its_cue(self, store: Store, session_id: str):
        # stored as given (privacy.mask_secrets off, or written before it): "3941" answers a PIN request
        turns = (("agent", "Right, and your PIN as well please."), ("customer", "3941"), *self.BANK[1:])
        text = (
            "Issue and status: the customer asked for the balance of their account and the agent verified them.\n"
            "Identifiers, dates, amounts: 3941, 10/08/1980."
        )
        worker = make(store, FakeSummarizer([text]), start=False)
        record(store, session_id, None, turns)
        (version,) = worker.run_one(session_id)
        assert version.status == "accepted" and "3941" not in version.text and "secret" in version.reason
