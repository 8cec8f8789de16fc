"""Summaries keep up under load: a summary yields to answers a bounded number of times in a row, its
time limit follows its tokens, and how far it is behind shows in the API, ``/metrics`` and
``bench load``. Fake models only; each test takes well under two seconds."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from appliance.app import Appliance, build
from appliance.config import SummarizerSettings, load_settings
from appliance.errors import Cancelled
from appliance.facts.entities import extract
from appliance.lab.bench.load import _one_client, lag_report
from appliance.protocols import OnToken
from appliance.serve.api import create_app
from appliance.serve.metrics import Metrics
from appliance.store import Store
from appliance.turn.lag import summary_lag
from appliance.turn.summary_run import progress_deadline
from appliance.turn.worker import SummaryWorker
from appliance.types import Generation, Message, Sampling

from .fakes import FakeResponder, WordCounter
from .support import eventually, metric, write_config
from .test_worker import DIALOGUE, GOOD, Answering, record

T = TypeVar("T")
SETTINGS = SummarizerSettings(every_turns=2, resummarize_every=100, timeout_s=5, languages=("en", "de"))


class PacedSummarizer(WordCounter):
    """A summarizer model that emits ``tokens`` pieces ``pause`` seconds apart (a slow model on a busy
    box), then answers ``text``; with ``stall_after`` it stops emitting after that many pieces and
    hangs until cancelled. ``started`` is set at each call."""

    name = "paced-summarizer"
    n_ctx = 4096

    def __init__(self, text: str = GOOD, *, tokens: int = 10, pause: float = 0.02, stall_after: int | None = None):
        self.text = text
        self.tokens = tokens
        self.pause = pause
        self.stall_after = stall_after
        self.calls = 0
        self.started = threading.Event()

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
    ) -> Generation:
        self.calls += 1
        self.started.set()
        cancel = cancel or threading.Event()
        for i in range(self.tokens):
            if self.stall_after is not None and i >= self.stall_after:
                cancel.wait(5)
            if cancel.wait(self.pause):
                raise Cancelled("cancelled")
            if on_token is not None:
                on_token(".")
        return Generation(
            text=self.text,
            model=self.name,
            prompt_tokens=self.count(messages),
            completion_tokens=self.tokens,
            ttft_s=self.pause,
            total_s=self.pause * self.tokens,
        )


def yielded(worker: SummaryWorker, n: int) -> bool:
    return worker.stats().yielded == n


@pytest.fixture
def session_id(store: Store) -> str:
    return store.create_session(policy="rolling").id


class TestBoundedYielding:
    @pytest.mark.parametrize(("max_yields", "yields"), [(2, 2), (0, 1)])  # 0 counts as 1: never yields twice
    def test_after_max_yields_in_a_row_the_summary_runs_beside_the_answers(
        self, store: Store, session_id: str, max_yields: int, yields: int
    ):
        answering = Answering()
        model = PacedSummarizer(tokens=15, pause=0.02)  # 0.3 s: cancelled long before it would end
        settings = SETTINGS.model_copy(update={"max_yields": max_yields})
        worker = SummaryWorker(store, model, settings, extract, answering=answering)
        try:
            record(store, session_id, None, DIALOGUE[:4])
            worker.notify(session_id)
            for n in range(1, yields + 1):
                answering.clear()  # a summary that may still yield waits until no answer is running
                assert model.started.wait(5)
                model.started.clear()
                answering.set()  # an answer starts: the summary is cancelled and queued again
                eventually(functools.partial(yielded, worker, n), f"the summary to yield {n} time(s)", timeout=5)
            assert store.summaries(session_id) == ()
            # The answers keep coming, and the summary runs anyway, to the end.
            assert worker.drain(5) and answering.is_set()
            current = store.current_summary(session_id)
            assert current is not None and current.text == GOOD and current.covers_to == 3
            stats = worker.stats()
            assert (model.calls, stats.yielded, stats.forced, stats.failures) == (yields + 1, yields, 1, 0)
            assert worker.counters()["forced"] == 1
            # The run finished, so the count starts again: the next summary waits for the answer.
            record(store, session_id, None, DIALOGUE[4:6])
            worker.notify(session_id)
            assert not worker.drain(0.3) and model.calls == yields + 1
            answering.clear()
            assert worker.drain(5) and model.calls == yields + 2
        finally:
            worker.stop()
        assert worker.stats().forced == 1

    def test_an_answer_does_not_count_as_a_yield_before_the_summary_starts(self, store: Store, session_id: str):
        answering = Answering()
        answering.set()
        model = PacedSummarizer(tokens=2, pause=0.01)
        worker = SummaryWorker(
            store, model, SETTINGS.model_copy(update={"max_yields": 1}), extract, answering=answering
        )
        try:
            record(store, session_id, worker, DIALOGUE[:2])
            assert not worker.drain(0.3) and model.calls == 0  # waiting, not yielding
            answering.clear()
            assert worker.drain(5)
        finally:
            worker.stop()
        assert (model.calls, worker.stats().yielded, worker.stats().forced) == (1, 0, 0)


class TestTimeoutFollowsProgress:
    def test_a_slow_summary_that_keeps_producing_tokens_is_not_cut_off(self, store: Store, session_id: str):
        model = PacedSummarizer(tokens=16, pause=0.05)  # 0.8 s, past the 0.3 s timeout
        settings = SETTINGS.model_copy(update={"timeout_s": 0.3, "stall_s": 0.5})
        worker = SummaryWorker(store, model, settings, extract, start=False)
        record(store, session_id, None, DIALOGUE[:4])
        started = time.monotonic()
        (version,) = worker.run_one(session_id)
        assert time.monotonic() - started > 0.3
        assert version.status == "accepted" and version.text == GOOD
        assert worker.stats().timeouts == 0

    def test_a_summary_whose_tokens_stop_is_cancelled_as_a_timeout(self, store: Store, session_id: str):
        model = PacedSummarizer(tokens=16, pause=0.02, stall_after=3)
        settings = SETTINGS.model_copy(update={"timeout_s": 0.2, "stall_s": 0.3})
        worker = SummaryWorker(store, model, settings, extract, start=False)
        record(store, session_id, None, DIALOGUE[:4])
        started = time.monotonic()
        (version,) = worker.run_one(session_id)
        took = time.monotonic() - started
        assert 0.3 <= took < 2.0
        assert version.status == "rejected" and version.reason.startswith("timeout after ")
        assert "no token for 0.3 s after 3 tokens" in version.reason
        assert store.current_summary(session_id) is None and worker.stats().timeouts == 1

    def test_the_deadline_is_the_timeout_until_tokens_come_then_the_last_token_plus_stall(self):
        assert progress_deadline(100.0, None, timeout_s=60, stall_s=10) == 160.0
        assert progress_deadline(100.0, 120.0, timeout_s=60, stall_s=10) == 160.0  # within the first allowance
        assert progress_deadline(100.0, 158.0, timeout_s=60, stall_s=10) == 168.0  # extended by progress


class TestLag:
    def test_the_turns_the_summary_may_cover_but_does_not(self):
        assert summary_lag(10, 4, -1) == 6  # no summary: everything but the kept turns
        assert summary_lag(10, 4, 3) == 2
        assert summary_lag(10, 4, 5) == 0
        assert summary_lag(3, 4, -1) == 0  # all turns are carried verbatim
        assert summary_lag(10, 0, 3) == 6

    def test_the_worker_follows_the_lag_of_the_sessions_it_summarizes(self, store: Store, session_id: str):
        worker = SummaryWorker(
            store, PacedSummarizer(tokens=1), SETTINGS, extract, keep_turns=2, policies={"rolling"}, start=False
        )
        raw = store.create_session(policy="raw").id
        record(store, raw, worker, DIALOGUE)
        assert worker.max_lag() == 0  # raw reads no summary
        assert worker.lag_of("raw", 6, -1) is None and worker.lag_of("rolling", 6, -1) == 4
        record(store, session_id, worker, DIALOGUE)
        assert worker.max_lag() == 4
        (version,) = worker.run_one(session_id)
        assert version.covers_to == 3 and worker.max_lag() == 0
        other = store.create_session(policy="rolling").id
        record(store, other, worker, DIALOGUE[:5])
        assert worker.max_lag() == 3
        store.erase(other)
        assert worker.max_lag() == 0  # an erased session is dropped


# the API, /metrics and bench load ---------------------------------------------------------------

CONFIG = "[context]\nrecent_pairs = 1\n[summarizer]\nevery_turns = 1000\n"  # keeps 2 turns, never summarizes


@pytest.fixture
def appliance(tmp_path: Path) -> Iterator[Appliance]:
    settings = load_settings(write_config(tmp_path, CONFIG), env={})
    built = build(settings, responder=FakeResponder(), summarizer=FakeResponder(default="Summary."), recall=False)
    yield built
    built.close()


def call(app: Any, scenario: Callable[[httpx.AsyncClient], Awaitable[T]]) -> T:
    """Run ``scenario`` against the app in-process (no socket)."""

    async def main() -> T:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://appliance") as http:
            return await scenario(http)

    return asyncio.run(main())


class TestShown:
    def test_the_session_says_how_far_its_summary_is_behind(self, appliance: Appliance):
        app = create_app(appliance)

        async def scenario(http: httpx.AsyncClient) -> tuple[list[int | None], int | None, str]:
            rolling = (await http.post("/v1/sessions", json={"policy": "rolling"})).json()["id"]
            raw = (await http.post("/v1/sessions", json={"policy": "raw"})).json()["id"]
            lags = []
            for text in ("Order A-5521.", "It is late.", "Where is it?"):
                assert (await http.post(f"/v1/sessions/{rolling}/messages", json={"text": text})).status_code == 200
                await http.post(f"/v1/sessions/{raw}/messages", json={"text": text})
                lags.append((await http.get(f"/v1/sessions/{rolling}")).json()["summary_lag_turns"])
            raw_lag = (await http.get(f"/v1/sessions/{raw}")).json()["summary_lag_turns"]
            return lags, raw_lag, (await http.get("/metrics")).text

        lags, raw_lag, metrics = call(app, scenario)
        assert lags == [0, 2, 4] and raw_lag is None
        assert metric(metrics, "appliance_summarizer_lag_turns_max") == 4
        assert metric(metrics, "appliance_summarizer_forced_total") == 0

    def test_bench_load_samples_the_lag_after_each_turn(self, appliance: Appliance):
        app = create_app(appliance)
        client = call(app, lambda http: _one_client(http, 0, 3))
        assert client.errors == 0 and client.lags == [0, 2, 4]
        assert lag_report(client.lags) == {"p50": 2.0, "max": 4}
        assert lag_report([]) == {"p50": 0.0, "max": 0}

    def test_metrics_without_a_lag_reading_worker_has_no_gauge(self):
        class Counting:
            def is_alive(self) -> bool:
                return True

            def counters(self) -> dict[str, int]:
                return {"runs": 1}

        text = Metrics().render([], False, Counting())
        assert metric(text, "appliance_summarizer_runs_total") == 1 and "lag_turns" not in text
