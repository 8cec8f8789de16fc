"""Several answers decoded together in one llama.cpp context, on the tiny real model.

The engine (``appliance.models.batched``) is driven the way the model queue's threads drive it: one
thread per answer, each blocked in ``generate`` while its pieces stream to its own callback.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from appliance.app import build
from appliance.config import load_settings
from appliance.errors import Cancelled, GenerationError
from appliance.models.batch_context import Entry, batch_context, fill
from appliance.models.batched import SINGLE_CTX, BatchedChatModel, BatchedEngine
from appliance.models.files import find, verified_path
from appliance.models.llama import LlamaChatModel
from appliance.models.sequences import PromptStats, Request, Sequences
from appliance.models.states import StateCache, shared_prefix
from appliance.store import Store
from appliance.types import Generation, Message, Sampling

from .fakes import FakeResponder
from .support import MODELS_DIR, TEST_MODEL, eventually, write_config
from .test_daemon import Daemon, model_config, start_daemon

pytestmark = pytest.mark.real_model

QUESTIONS = (
    "What is the capital of France?",
    "Name three colours.",
    "Say hello politely.",
    "How many legs does a spider have?",
)
GREEDY = Sampling(temperature=0.0, max_tokens=12)
# Answers that cannot end early: a sequence is still busy when the test acts on another.
LONG = Sampling(temperature=0.0, max_tokens=60, ignore_eos=True)


OPTIONS = {"name": TEST_MODEL, "n_ctx": 512, "n_threads": 2, "state_cache_mb": 32}


@pytest.fixture(scope="module")
def batched() -> Iterator[BatchedChatModel]:
    model = BatchedChatModel(verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL)), parallel=3, **OPTIONS)
    yield model
    model.close()


@pytest.fixture
def fresh() -> Iterator[BatchedChatModel]:
    """An engine whose sequences hold nothing yet: what it reuses was computed as the single context would."""
    model = BatchedChatModel(verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL)), parallel=3, **OPTIONS)
    yield model
    model.close()


@pytest.fixture(scope="module")
def single() -> LlamaChatModel:
    return LlamaChatModel(verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL)), **OPTIONS)


def _ask(question: str) -> list[Message]:
    return [Message("user", question)]


class _Stream:
    """One answer on a thread of its own, its pieces recorded with when they came."""

    def __init__(self, generate: Callable[..., Generation], prompt: object, sampling: Sampling, **kw: object) -> None:
        self.pieces: list[str] = []
        self.times: list[float] = []
        self.result: Generation | None = None
        self.error: BaseException | None = None
        self.cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(generate, prompt, sampling, kw))
        self._thread.start()

    def _run(self, generate: Callable[..., Generation], prompt: object, sampling: Sampling, kw: dict) -> None:
        try:
            self.result = generate(prompt, sampling, on_token=self._piece, cancel=self.cancel, **kw)
        except BaseException as exc:  # kept for the test to look at
            self.error = exc

    def _piece(self, piece: str) -> None:
        self.pieces.append(piece)
        self.times.append(time.monotonic())

    def join(self, timeout: float = 600) -> _Stream:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "an answer never ended"
        return self


class TestStreams:
    def test_several_answers_stream_at_once_each_complete_and_in_order(self, batched: BatchedChatModel) -> None:
        streams = [_Stream(batched.generate, _ask(q), LONG) for q in QUESTIONS[:3]]
        for s in streams:
            s.join()
        for s in streams:
            assert s.error is None and s.result is not None
            assert s.result.completion_tokens == LONG.max_tokens and s.result.finish_reason == "length"
            # Every piece arrived, once and in order: the stream is exactly the stored text.
            assert "".join(s.pieces).strip() == s.result.text and s.result.text
        # They were decoded together: each began before any of them ended.
        assert max(s.times[0] for s in streams) < min(s.times[-1] for s in streams)

    def test_greedy_alone_through_the_engine_equals_the_single_context(
        self, fresh: BatchedChatModel, single: LlamaChatModel
    ) -> None:
        for q in QUESTIONS[:2]:
            assert fresh.generate(_ask(q), GREEDY).text == single.generate(_ask(q), GREEDY).text

    def test_greedy_answers_decoded_together_start_as_they_do_alone(
        self, fresh: BatchedChatModel, single: LlamaChatModel
    ) -> None:
        """Batched kernels may round differently (docs/batching.md measures how often a whole answer
        differs); each answer still begins with its own first tokens, never with another's."""
        alone = [single.generate(_ask(q), GREEDY).text for q in QUESTIONS[:3]]
        together = [s.join().result for s in [_Stream(fresh.generate, _ask(q), GREEDY) for q in QUESTIONS[:3]]]
        for a, t in zip(alone, together, strict=True):
            assert t is not None
            assert t.text.split()[:2] == a.split()[:2]


class TestSequences:
    def test_a_cancel_frees_its_sequence_for_the_next_waiting_answer(self, batched: BatchedChatModel) -> None:
        running = [_Stream(batched.generate, _ask(q), LONG) for q in QUESTIONS[:3]]
        eventually(lambda: all(s.pieces for s in running), "three answers streaming", timeout=300)
        waiting = _Stream(batched.generate, _ask(QUESTIONS[3]), GREEDY)
        eventually(lambda: batched.engine.waiting == 1, "the fourth answer waiting for a sequence")
        assert batched.engine.active == 3 and not waiting.pieces  # every sequence is taken
        running[0].cancel.set()
        waiting.join()
        assert isinstance(running[0].join().error, Cancelled)
        assert waiting.result is not None and waiting.result.text
        # It got the freed sequence while the other two were still answering.
        others = [s.join() for s in running[1:]]
        assert all(s.result is not None for s in others)
        assert waiting.times[0] < min(s.times[-1] for s in others)

    def test_a_failing_stream_fails_only_its_own_answer(self, batched: BatchedChatModel) -> None:
        def broken(piece: str) -> None:
            raise RuntimeError("the client went away")

        good = [_Stream(batched.generate, _ask(q), LONG) for q in QUESTIONS[:2]]
        with pytest.raises(RuntimeError, match="went away"):
            batched.generate(_ask(QUESTIONS[2]), LONG, on_token=broken)
        for s in good:
            assert s.join().error is None and s.result is not None
            assert s.result.completion_tokens == LONG.max_tokens

    def test_a_fault_in_one_sequence_fails_only_that_answer(self, batched: BatchedChatModel) -> None:
        engine = BatchedEngine(batch_context(batched, 3, 256), StateCache(0), name="fault")
        try:
            prompt = batched.tokens(_ask(QUESTIONS[0]))
            bad = [*prompt[:-1], 10**9, prompt[-1]]  # a token id the vocabulary does not have
            good = [_Stream(engine.generate, prompt, GREEDY) for _ in range(2)]
            faulty = _Stream(engine.generate, bad, GREEDY)
            assert isinstance(faulty.join().error, GenerationError)
            for s in good:
                assert s.join().error is None and s.result is not None and s.result.text
            assert engine.active == 0
            # and the engine goes on: the freed sequences answer again
            assert engine.generate(prompt, GREEDY).text == good[0].result.text  # type: ignore[union-attr]
        finally:
            engine.close()

    def test_each_batch_lists_its_sequences_in_increasing_order(self, batched: BatchedChatModel) -> None:
        """llama.cpp decodes a batch in one pass only where its sequence ids follow each other; answers
        that take freed sequences must not make it split a step into several."""
        engine = BatchedEngine(batch_context(batched, 3, 256), StateCache(0), name="order")
        batches: list[list[int]] = []
        decode = engine.context.decode

        def spy(entries: Sequence[Entry]) -> int:  # the real decode, its sequence ids noted
            batches.append([e.seq for e in entries])
            return decode(entries)

        engine.context.decode = spy  # type: ignore[method-assign]
        try:
            prompts = [batched.tokens(_ask(q)) for q in QUESTIONS]
            running = [_Stream(engine.generate, p, LONG) for p in prompts[:3]]  # sequences 0, 1, 2
            eventually(lambda: all(s.pieces for s in running), "three answers streaming", timeout=300)
            running[1].cancel.set()  # frees sequence 1 while 0 and 2 go on
            late = _Stream(engine.generate, prompts[3], GREEDY)  # admitted after 2: takes sequence 1
            assert late.join().error is None and isinstance(running[1].join().error, Cancelled)
            assert all(s.join().error is None for s in running[::2])
        finally:
            engine.close()
        assert any(sorted(set(b)) == [0, 1, 2] for b in batches)  # the late answer was decoded beside 0 and 2
        assert all(b == sorted(b) for b in batches), [b for b in batches if b != sorted(b)]

    def test_of_sequences_that_hold_as_much_of_the_prompt_the_lowest_is_taken(self, batched: BatchedChatModel) -> None:
        context = batch_context(batched, 3, 64)
        try:
            seqs = Sequences(context, StateCache(0))
            seqs.free = [2, 0, 1]  # freed in that order; none holds anything
            assert seqs.pick(Request(batched.tokens(_ask(QUESTIONS[0])), GREEDY, None, None)) == 0
        finally:
            context.close()


class TestSavedStates:
    def test_a_warmed_prefix_is_restored_into_a_sequence(self, batched: BatchedChatModel) -> None:
        history = [Message("system", "You are a helpful bank assistant."), Message("user", QUESTIONS[0])]
        warmed = batched.prepare(history, cache_key="warm-session")
        assert warmed.evaluated > 0 and warmed.complete
        # Three other answers take every sequence, so the warmed one is no longer in any of them.
        for s in [_Stream(batched.generate, _ask(q), GREEDY) for q in QUESTIONS[1:4]]:
            assert s.join().error is None
        before = batched.states.stats().restores
        question = [*history[:-1], Message("user", QUESTIONS[0] + " Answer briefly.")]
        answer = batched.generate(question, GREEDY, cache_key="warm-session")
        assert answer.text
        assert batched.states.stats().restores == before + 1
        saved = batched.states.get("warm-session")
        assert saved is not None and len(saved.tokens) > answer.prompt_tokens  # the answer's sequence, kept

    def test_a_new_answer_reuses_what_a_sequence_holds(self, fresh: BatchedChatModel) -> None:
        history = [Message("system", "You are a helpful bank assistant."), Message("user", QUESTIONS[0])]
        fresh.prepare(history, cache_key="a")
        again = fresh.prepare(history, cache_key="b")  # another key: only the sequence's cache can serve it
        assert again.reused == again.total and again.evaluated == 0
        assert fresh.states.stats().restores == 0


# One system prompt for two customers; the busy answer's (the template's default) shares only its first words.
SYSTEM = (
    "You are a careful assistant at a bank counter. Answer in one short sentence, and never invent account numbers."
)
# Sixteen tokens, as the copied-prefix test above decodes: on CPUs whose kernels round a matrix
# product by how the batch is made up (AVX-512 builds), a near tie among the tiny model's later
# tokens can go either way between two runs whose prompts were chunked beside different neighbours.
TOGETHER = Sampling(temperature=0.0, max_tokens=16, ignore_eos=True)


def _two_at_once(model: BatchedChatModel, *, share: bool) -> tuple[list[str], PromptStats, int]:
    """Two sessions with one system prompt asked at once, in a fresh engine (nothing held yet) of
    small prompt chunks, beside an answer that is generating: their prompts are evaluated over
    several steps, so the second arrives while the first is evaluating the prefix they share. Their
    answers, the prompt tokens the two made the engine evaluate or copy, and that prefix's length."""
    engine = BatchedEngine(batch_context(model, 3, 512), StateCache(0), name="share", chunk=8, share=share)
    try:
        busy = _Stream(engine.generate, model.tokens(_ask(QUESTIONS[3])), LONG)
        eventually(lambda: bool(busy.pieces), "the busy answer streaming", timeout=300)
        before = engine.stats()
        prompts = [model.tokens([Message("system", SYSTEM), Message("user", q)]) for q in QUESTIONS[:2]]
        pair = [_Stream(engine.generate, p, TOGETHER) for p in prompts]
        texts = []
        for s in pair:
            assert s.join().error is None and s.result is not None
            texts.append(s.result.text)
        assert busy.join().error is None
        after = engine.stats()
    finally:
        engine.close()
    spent = PromptStats(**{k: v - getattr(before, k) for k, v in vars(after).items()})
    assert spent.prompt == sum(map(len, prompts))
    return texts, spent, shared_prefix(*prompts)


@pytest.fixture(scope="module")
def two_at_once(batched: BatchedChatModel) -> dict[bool, tuple[list[str], PromptStats, int]]:
    return {share: _two_at_once(batched, share=share) for share in (False, True)}


class TestSharedPrefix:
    def test_a_copied_prefix_continues_as_the_same_prefix_evaluated(self, batched: BatchedChatModel) -> None:
        context = batch_context(batched, 3, 256)
        try:
            prompt = batched.tokens([Message("system", SYSTEM), Message("user", QUESTIONS[0])])
            fill(context, [0, 2], prompt[:-1])
            context.copy(0, 1, len(prompt) - 1)  # made when sequence 1's first decode begins
            greedy: dict[int, list[int]] = {}
            for seq in (1, 2):
                token, greedy[seq] = prompt[-1], []
                for pos in range(len(prompt) - 1, len(prompt) + 15):
                    assert context.decode([Entry(token, pos, seq, True)]) == 0
                    token = context.argmax(0)
                    greedy[seq].append(token)
            assert greedy[1] == greedy[2]
        finally:
            context.close()

    def test_two_sessions_with_one_system_prompt_evaluate_it_once(
        self, two_at_once: dict[bool, tuple[list[str], PromptStats, int]]
    ) -> None:
        (_, alone, common), (_, shared, _) = two_at_once[False], two_at_once[True]
        assert common > 20  # the system prompt's tokens, and the template's around them
        assert alone.copied == 0 and alone.evaluated == alone.prompt
        # The second answer copied what the first evaluated of their common prefix, and evaluated the rest.
        assert shared.copied == common
        assert shared.evaluated == shared.prompt - common

    def test_greedy_answers_with_the_copy_equal_those_without(
        self, two_at_once: dict[bool, tuple[list[str], PromptStats, int]]
    ) -> None:
        without, with_copy = two_at_once[False][0], two_at_once[True][0]
        assert all(without) and with_copy == without


class TestBuilt:
    def test_the_appliance_closes_the_decode_loops_of_every_batched_model_it_loaded(self, tmp_path: Path) -> None:
        # The early-routing and refine models answer on the hot path too, batched like the responder.
        extra = f'[routing]\nearly = "{TEST_MODEL}"\n[refine]\nenabled = true\nmodel = "{TEST_MODEL}"\n'
        settings = load_settings(
            write_config(tmp_path, model_config(16, extra)), env={"APPLIANCE__RESPONDER__PARALLEL": "2"}
        )
        appliance = build(settings, summarizer=FakeResponder(), recall=False, worker=False, prewarm=False)
        models = [appliance.responder, appliance.pipeline.early_responder, appliance.pipeline.refiner]
        try:
            assert all(isinstance(m, BatchedChatModel) and m.engine.alive() for m in models)
            for m in models:  # the single context beside the engine's is a small one
                assert isinstance(m, BatchedChatModel)
                with m.native() as llama:
                    assert llama.n_ctx() <= SINGLE_CTX < settings.responder.n_ctx
                    assert llama.model_params.use_extra_bufts  # repack = "auto": repacked when batched
        finally:
            appliance.close()
        assert not any(m.engine.alive() for m in models if isinstance(m, BatchedChatModel))


@pytest.mark.daemon
class TestKilledDuringBatchedAnswers:
    def test_a_kill_9_while_three_answers_stream_stores_nothing_half(self, tmp_path: Path) -> None:
        # Answers of exactly 400 tokens, three decoded together: the kill lands in the middle of all three.
        env = {"APPLIANCE__RESPONDER__IGNORE_EOS": "true", "APPLIANCE__RESPONDER__PARALLEL": "3"}
        daemon = start_daemon(tmp_path, max_tokens=400, env=env)
        try:
            with daemon.client() as http:
                sessions = [http.post("/v1/sessions").json()["id"] for _ in range(3)]
            streaming = [threading.Event() for _ in sessions]
            readers = [
                threading.Thread(target=_read_until_cut, args=(daemon, s, e), daemon=True)
                for s, e in zip(sessions, streaming, strict=True)
            ]
            for r in readers:
                r.start()
            eventually(lambda: all(e.is_set() for e in streaming), "three answers streaming", timeout=300)
            os.kill(daemon.proc.pid, signal.SIGKILL)
            assert daemon.proc.wait(30) == -signal.SIGKILL
            for r in readers:
                r.join(30)
        finally:
            if daemon.proc.poll() is None:
                daemon.stop()
        store = Store.open(daemon.database)
        try:
            assert store.integrity_ok()
            for session in sessions:
                assert store.turns(session) == () and store.records(session) == []
        finally:
            store.close()


@pytest.mark.daemon
class TestBatchedDaemon:
    def test_answers_side_by_side_are_stored_whole_and_the_daemon_stops_cleanly(self, tmp_path: Path) -> None:
        daemon = start_daemon(tmp_path, max_tokens=16, env={"APPLIANCE__RESPONDER__PARALLEL": "2"})
        try:
            with daemon.client() as http:
                sessions = [http.post("/v1/sessions").json()["id"] for _ in range(2)]
            answers: dict[str, str] = {}

            def ask(session: str) -> None:
                with daemon.client() as http:
                    reply = http.post(f"/v1/sessions/{session}/messages", json={"text": "Hello, who are you?"})
                    answers[session] = reply.json()["agent"]["text"]

            askers = [threading.Thread(target=ask, args=(s,)) for s in sessions]
            for a in askers:
                a.start()
            for a in askers:
                a.join(300)
            with daemon.client() as http:
                for session in sessions:
                    turns = http.get(f"/v1/sessions/{session}").json()["turns"]
                    assert [t["role"] for t in turns] == ["customer", "agent"]
                    assert turns[1]["text"] == answers[session]
        finally:
            code = daemon.stop()
        assert code == 0 and "stopped cleanly" in daemon.output(), daemon.output()
        assert "Traceback" not in daemon.output()  # no warm-up found its engine closed under it


def _read_until_cut(daemon: Daemon, session: str, streaming: threading.Event) -> None:
    """Ask for an answer as a stream; say when its first token came, then read until the daemon dies."""
    body = {"text": "Please count from 1 to 300, one number after another.", "stream": True}
    with contextlib.suppress(httpx.HTTPError), daemon.client() as http:
        with http.stream("POST", f"/v1/sessions/{session}/messages", json=body) as s:
            for line in s.iter_lines():
                if line == "event: token":
                    streaming.set()
