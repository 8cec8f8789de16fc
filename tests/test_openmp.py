"""A thread done with llama.cpp hands its OpenMP workers back (``appliance.models.openmp``), on the tiny real model.

What is observed is libgomp's own switch: while the process holds more worker pools than the box has
CPUs, a decode's threads sleep at its barriers (a voluntary context switch each) instead of spinning.
Every check compares with a control in the same test, an idle pool left alive, so a box where that
switch does not happen (more CPUs than the pools' threads) skips instead of passing for nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from appliance.models.batch_context import BatchContext, Entry, batch_context, fill
from appliance.models.batched import BatchedChatModel
from appliance.models.files import find, verified_path
from appliance.models.llama import LlamaChatModel
from appliance.models.openmp import release_workers
from appliance.types import Message, Sampling

from .support import MODELS_DIR, TEST_MODEL, eventually

pytestmark = pytest.mark.real_model

THREADS = 2
STEPS = 4
GREEDY = Sampling(temperature=0.0, max_tokens=4)


def _switches() -> int:
    """Voluntary context switches of every thread of this process so far (a thread that sleeps)."""
    total = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            status = Path(f"/proc/self/task/{tid}/status").read_text()
        except OSError:
            continue  # a thread that ended meanwhile
        total += sum(int(line.split()[1]) for line in status.splitlines() if line.startswith("voluntary_ctxt"))
    return total


def _sleeps_per_decode(context: BatchContext, prompt: list[int]) -> float:
    """Voluntary context switches per ``llama_decode`` of 2 sequences, on this thread, released after."""
    fill(context, [0, 1], prompt)
    before = _switches()
    for step in range(STEPS):
        assert context.decode([Entry(prompt[-1], len(prompt) + step, s, True) for s in (0, 1)]) == 0
    after = _switches()
    release_workers()
    return (after - before) / STEPS


class _Elsewhere:
    """Runs ``work`` on a thread of its own, which then stays alive (its OpenMP pool with it) until closed."""

    def __init__(self, work: Callable[[], object]) -> None:
        self._done, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, args=(work,))
        self._thread.start()
        assert self._done.wait(300), "the other thread's work never ended"

    def _run(self, work: Callable[[], object]) -> None:
        try:
            work()
        finally:
            self._done.set()
            self._stop.wait()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(60)


@pytest.fixture(scope="module")
def model() -> Iterator[BatchedChatModel]:
    path = verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL))
    loaded = BatchedChatModel(path, parallel=2, name=TEST_MODEL, n_ctx=256, n_threads=THREADS)
    yield loaded
    loaded.close()


@pytest.fixture(scope="module")
def prompt(model: BatchedChatModel) -> list[int]:
    return model.tokens([Message("user", "Name three colours.")])


@pytest.fixture(scope="module")
def context(model: BatchedChatModel) -> Iterator[BatchContext]:
    made = batch_context(model, 2, 128)
    yield made
    made.close()


@pytest.fixture(scope="module")
def other(model: BatchedChatModel) -> Iterator[BatchContext]:
    """A second small context on the same weights, for work on another thread."""
    made = batch_context(model, 1, 64)
    yield made
    made.close()


@pytest.fixture(scope="module")
def sleeping(context: BatchContext, other: BatchContext, prompt: list[int]) -> float:
    """The control: this thread's sleeps per decode beside another thread's idle pool, kept alive."""
    if not release_workers():
        pytest.skip("llama.cpp runs without libgomp here")
    elsewhere = _Elsewhere(lambda: fill(other, [0], prompt[:4]))
    try:
        sleeps = _sleeps_per_decode(context, prompt)
    finally:
        elsewhere.close()
    if sleeps < 50:
        pytest.skip(f"libgomp spins here even beside an idle pool ({sleeps:.0f} sleeps a decode): nothing to see")
    return sleeps


class TestReleased:
    def test_a_thread_that_released_its_workers_leaves_the_others_spinning(
        self, context: BatchContext, other: BatchContext, prompt: list[int], sleeping: float
    ) -> None:
        def decode_then_release() -> None:
            fill(other, [0], prompt[:4])
            assert release_workers()

        elsewhere = _Elsewhere(decode_then_release)
        try:
            # A fifth: alone, the sleeps fall by more than ten times; beside the suite's other worker
            # decoding on the same two cores (the clean-clone CI), by 7.7-9 times. Without the
            # release they would not fall at all.
            assert _sleeps_per_decode(context, prompt) < sleeping / 5
        finally:
            elsewhere.close()

    def test_the_single_context_releases_them_after_an_answer(
        self, model: BatchedChatModel, context: BatchContext, prompt: list[int], sleeping: float
    ) -> None:
        # the single context's own generate, on a thread that stays alive after it
        elsewhere = _Elsewhere(lambda: LlamaChatModel.generate(model, [Message("user", "Hi.")], GREEDY))
        try:
            assert _sleeps_per_decode(context, prompt) < sleeping / 10
        finally:
            elsewhere.close()

    def test_the_batched_engine_releases_them_once_idle(
        self, model: BatchedChatModel, context: BatchContext, prompt: list[int], sleeping: float
    ) -> None:
        assert model.generate([Message("user", "Hi.")], GREEDY).text
        # the engine's thread goes on living; it releases its pool as it starts to wait
        eventually(lambda: _sleeps_per_decode(context, prompt) < sleeping / 10, "the engine's pool released")
