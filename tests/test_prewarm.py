"""Each session's evaluated prefix kept and restored, and the next prefix warmed while idle.

The bookkeeping (StateCache) and the warm-up thread (Prewarmer) are tested with fakes; the llama.cpp
backend's save, restore and prepare with the real tiny model, against a cold answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from appliance.context.base import QUESTION_MARK
from appliance.lab.bench.bare import forget_prefix
from appliance.models.states import SavedState, StateCache, shared_prefix
from appliance.protocols import Flag, Warmed
from appliance.turn.pipeline import Pipeline
from appliance.turn.prewarm import Prewarmer
from appliance.turn.warmup import Warmup
from appliance.types import Message

from .fakes import FakeResponder
from .support import MODELS_DIR, TEST_MODEL
from .test_worker import Answering


def saved(n_tokens: int, n_bytes: int) -> SavedState:
    return SavedState(tokens=np.arange(n_tokens, dtype=np.intc), data=b"x" * n_bytes)


class TestStateCache:
    def test_least_recently_used_goes_first_once_over_the_limit(self):
        one = saved(10, 960).size
        cache = StateCache(limit_bytes=3 * one)
        for key in "abc":
            cache.put(key, saved(10, 960))
        assert cache.get("a") is not None  # a is now the most recently used
        cache.put("d", saved(10, 960))
        assert cache.get("b") is None and all(cache.get(k) is not None for k in "acd")
        stats = cache.stats()
        assert (stats.entries, stats.bytes, stats.saves, stats.evictions) == (3, 3 * one, 4, 1)

    def test_a_new_state_replaces_the_sessions_old_one(self):
        cache = StateCache(limit_bytes=10_000)
        cache.put("a", saved(10, 100))
        cache.put("a", saved(20, 500))
        assert cache.stats().entries == 1 and cache.stats().bytes == saved(20, 500).size
        assert len(cache.get("a").tokens) == 20  # type: ignore[union-attr]

    def test_a_state_larger_than_the_limit_is_not_kept_and_evicts_nothing(self):
        cache = StateCache(limit_bytes=1000)
        cache.put("a", saved(10, 100))
        cache.put("huge", saved(10, 5000))
        assert cache.get("huge") is None and cache.get("a") is not None

    def test_off_at_zero(self):
        assert not StateCache(0).enabled and StateCache(1).enabled

    def test_drop_and_clear(self):
        cache = StateCache(limit_bytes=10_000)
        cache.put("a", saved(5, 10))
        cache.put("b", saved(5, 10))
        cache.drop("a")
        assert cache.get("a") is None and cache.stats().entries == 1
        cache.clear()
        assert cache.stats().entries == 0 and cache.stats().bytes == 0

    @pytest.mark.parametrize(
        ("a", "b", "n"), [([], [1], 0), ([1, 2, 3], [1, 2, 3], 3), ([1, 2, 3], [1, 2], 2), ([1, 5], [1, 2, 3], 1)]
    )
    def test_shared_prefix(self, a: list[int], b: list[int], n: int):
        assert shared_prefix(np.array(a), np.array(b)) == n


class FakeWarmer(FakeResponder):
    """A responder that can warm a prefix: one token per word, ``delay`` seconds per token, and
    it stops between tokens once ``cancel`` is set, as the real backend does between chunks."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.delay = delay
        self.warmed: list[tuple[str, tuple[Message, ...]]] = []
        self.started = threading.Event()

    def prepare(self, messages: Sequence[Message], *, cache_key: str, cancel: Flag | None = None) -> Warmed:
        self.started.set()
        total = sum(len(m.content.split()) for m in messages)
        done = 0
        while done < total and not (cancel is not None and cancel.is_set()):
            time.sleep(self.delay)
            done += 1
        self.warmed.append((cache_key, tuple(messages)))
        return Warmed(reused=0, evaluated=done, total=total, seconds=self.delay * done)


def talk(pipeline: Pipeline, session_id: str, pairs: int) -> None:
    for i in range(pairs):
        pipeline.sessions.record_turn(
            session_id, "customer", f"My order number is A-{1000 + i} and I paid {i + 10} euros."
        )
        pipeline.sessions.record_turn(session_id, "agent", f"Thank you, I noted order A-{1000 + i}.")


class TestNextPrefix:
    def test_the_prefix_is_where_every_next_prompt_of_the_session_begins(self, pipeline: Pipeline):
        session = pipeline.sessions.new_session(policy="rolling")
        talk(pipeline, session.id, 3)
        found = Warmup(pipeline).next_prefix(session.id)
        assert found is not None
        model, prefix = found
        assert model is pipeline.responder
        head = prefix[-1].content
        assert head.endswith(QUESTION_MARK) and "Latest turns:" in head
        for question in ("Where is my parcel?", "What was my order number again?", "x " * 40):
            pipeline.answer(session.id, question, persist=False)
            prompt = pipeline.responder.prompts[0]  # type: ignore[attr-defined]
            pipeline.responder.prompts.clear()  # type: ignore[attr-defined]
            assert prompt[:-1] == prefix[:-1]
            if "again" in question:  # a read-back: the facts it asks for come after the rest, right before the marker
                assert prompt[-1].content.startswith(head.removesuffix(QUESTION_MARK))
                assert not prompt[-1].content.startswith(head)
            else:
                assert prompt[-1].content.startswith(head)

    def test_a_session_that_is_gone_has_no_prefix(self, pipeline: Pipeline):
        assert Warmup(pipeline).next_prefix("no-such-session") is None

    def test_answers_name_their_session_for_the_state_cache(self, pipeline: Pipeline, fake_responder: FakeResponder):
        session = pipeline.sessions.new_session()
        pipeline.answer(session.id, "Hello there")
        pipeline.answer_transcript([Message("user", "Hello there")])
        assert fake_responder.cache_keys == [session.id, None]  # a transcript sent whole belongs to no session


class TestPrewarmer:
    def test_warms_each_notified_session_once_idle(self, pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch):
        warmer = FakeWarmer()
        pipeline.responder = warmer
        embedded: list[str] = []
        warmup = Warmup(pipeline)
        monkeypatch.setattr(warmup, "embed_ahead", embedded.append)
        busy = Answering()
        busy.set()
        prewarmer = Prewarmer(warmup, answering=busy)
        try:
            session = pipeline.sessions.new_session(policy="rolling")
            talk(pipeline, session.id, 2)
            prewarmer.notify(session.id)
            assert not prewarmer.drain(timeout=0.3) and warmer.warmed == []  # an answer is running: wait
            busy.clear()
            assert prewarmer.drain(timeout=5)
            [(key, messages)] = warmer.warmed
            assert key == session.id and messages == Warmup(pipeline).next_prefix(session.id)[1]  # type: ignore[index]
            stats = prewarmer.stats()
            assert (stats.runs, stats.complete, stats.interrupted) == (1, 1, 0)
            assert prewarmer.last[session.id].complete
            assert embedded == [session.id]  # recall's candidates embedded after the prefix, still idle
        finally:
            prewarmer.stop()

    def test_an_answer_interrupts_a_warm_up_which_keeps_what_it_did(
        self, pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch
    ):
        warmer = FakeWarmer(delay=0.01)
        pipeline.responder = warmer
        embedded: list[str] = []
        warmup = Warmup(pipeline)
        monkeypatch.setattr(warmup, "embed_ahead", embedded.append)
        busy = Answering()
        prewarmer = Prewarmer(warmup, answering=busy)
        try:
            session = pipeline.sessions.new_session(policy="rolling")
            talk(pipeline, session.id, 4)
            prewarmer.notify(session.id)
            assert warmer.started.wait(5)
            busy.set()  # the customer's next message arrives
            assert prewarmer.drain(timeout=5)
            warmed = prewarmer.last[session.id]
            assert not warmed.complete and 0 < warmed.evaluated < warmed.total
            assert prewarmer.stats().interrupted == 1
            assert embedded == []  # the answer has the CPU: no embedding either
        finally:
            prewarmer.stop()

    def test_waits_for_the_summary_worker(self, pipeline: Pipeline):
        warmer = FakeWarmer()
        pipeline.responder = warmer
        summarizing = threading.Event()
        summarizing.set()
        prewarmer = Prewarmer(Warmup(pipeline), answering=Answering(), background_idle=lambda: not summarizing.is_set())
        try:
            session = pipeline.sessions.new_session(policy="rolling")
            prewarmer.notify(session.id)
            assert not prewarmer.drain(timeout=0.3)
            summarizing.clear()
            assert prewarmer.drain(timeout=5) and len(warmer.warmed) == 1
        finally:
            prewarmer.stop()

    def test_a_responder_that_cannot_warm_is_left_alone(self, pipeline: Pipeline, fake_responder: FakeResponder):
        prewarmer = Prewarmer(Warmup(pipeline), answering=Answering())
        try:
            session = pipeline.sessions.new_session()
            prewarmer.notify(session.id)
            assert prewarmer.drain(timeout=5)
            assert prewarmer.stats().runs == 0 and fake_responder.prompts == []
        finally:
            prewarmer.stop()


@pytest.mark.real_model
class TestLlamaStates:
    """The real backend: a restored or warmed state answers exactly as a cold prompt does (greedy)."""

    @pytest.fixture(scope="class")
    def model(self):
        from appliance.models.files import find, verified_path
        from appliance.models.llama import LlamaChatModel

        path = verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL))
        # One thread: a second one stalls whenever anything else uses the other core of a 2-core box.
        return LlamaChatModel(path, name=TEST_MODEL, n_ctx=2048, n_threads=1, seed=0, state_cache_mb=64)

    @staticmethod
    def prompt(who: str, question: str) -> list[Message]:
        context = "\n".join(f"{who} said: my order number is A-{100 + i}, I paid {i + 3} euros." for i in range(12))
        return [
            Message("system", "You are a helpful agent."),
            Message("user", f"[CONTEXT]\n{context}\n\n[QUESTION]\n{question}"),
        ]

    def test_sessions_answered_in_turn_restore_their_state_and_answer_as_cold(self, model):
        from appliance.types import Sampling

        greedy = Sampling(max_tokens=12, temperature=0.0, seed=0)
        forget_prefix(model)
        cold = model.generate(self.prompt("Anna", "What did I pay?"), greedy).text
        forget_prefix(model)
        model.generate(self.prompt("Anna", "Hello?"), greedy, cache_key="anna")
        model.generate(self.prompt("Boris", "Hello?"), greedy, cache_key="boris")  # evicts Anna from the live context
        before = model.states.stats().restores
        again = model.generate(self.prompt("Anna", "What did I pay?"), greedy, cache_key="anna").text
        assert model.states.stats().restores == before + 1
        assert again == cold
        assert model.states.stats().entries == 2

    def test_a_warmed_prefix_leaves_only_the_question_and_answers_as_cold(self, model):
        from appliance.types import Sampling

        greedy = Sampling(max_tokens=12, temperature=0.0, seed=0)
        full = self.prompt("Chen", "Which order did I mention first?")
        forget_prefix(model)
        cold = model.generate(full, greedy).text
        forget_prefix(model)
        head = [full[0], Message("user", full[1].content.split("\n\n[QUESTION]")[0])]
        warmed = model.prepare(head, cache_key="chen")
        assert warmed.complete and warmed.reused == 0 and warmed.evaluated == warmed.total > 100
        model.generate(self.prompt("Dana", "Hi"), greedy, cache_key="dana")
        assert model.prepare(head, cache_key="chen").evaluated == 0  # restored, nothing left to evaluate
        assert model.generate(full, greedy, cache_key="chen").text == cold

    def test_an_interrupted_warm_up_keeps_what_it_evaluated(self, model):
        class AfterFirstChunk:
            calls = 0

            def is_set(self) -> bool:
                self.calls += 1
                return self.calls > 1

        forget_prefix(model)
        head = self.prompt("Emil", "")
        warmed = model.prepare(head, cache_key="emil", cancel=AfterFirstChunk())
        assert not warmed.complete and warmed.evaluated == 32
        assert model.prepare(head, cache_key="emil").reused == 32


@pytest.mark.real_model
def test_at_the_defaults_a_warmed_prompt_leaves_its_message_and_few_tokens_more():
    """What follows the message is evaluated while the customer waits (``bench perf``'s floor ratio):
    with the default responder's own tokenizer, the stage's directive and the template's end, at most
    22 tokens in mid and late turns."""
    from appliance.app import pipeline_settings
    from appliance.config import Settings
    from appliance.context import PromptSpec, before_question
    from appliance.context.base import assemble
    from appliance.models.files import find, verified_path
    from appliance.models.llama import LlamaChatModel
    from appliance.stage import prompt_texts

    defaults = Settings()
    entry = find(MODELS_DIR, defaults.responder.model)
    model = LlamaChatModel(verified_path(MODELS_DIR, entry), name=entry.name, vocab_only=True)
    ps = pipeline_settings(defaults)
    message = "My card ending 4821 was declined at the counter this morning."
    after = {}
    for stage in ("early", "mid", "late"):
        system, instruction = prompt_texts(stage, ps.instructions, ps.system_prompt, ps.instruction)
        messages = assemble(PromptSpec(system, instruction, ps.budget_tokens), "Latest turns:\nCustomer: hi", message)
        full = model.tokens(messages)
        head = model.tokens(before_question(messages), open_end=True)
        after[stage] = len(full) - shared_prefix(head, full) - model.count_text(message)
    assert after["mid"] <= 22 and after["late"] <= 22 and after["early"] <= 32, after
