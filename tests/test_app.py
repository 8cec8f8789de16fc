"""The composition root: one function builds the appliance from the settings, and one call closes it."""

from __future__ import annotations

import threading
import time

import pytest

from appliance.app import Appliance, build
from appliance.app.loading import load_concurrently
from appliance.config import Settings
from appliance.errors import ModelFileError
from appliance.store import Store

from .fakes import FakeResponder


@pytest.fixture
def appliance(settings: Settings):
    built = build(settings, responder=FakeResponder(), summarizer=FakeResponder(), recall=False)
    yield built
    built.close()


class TestBuild:
    def test_every_part_is_handed_over_and_wired(self, appliance: Appliance):
        assert appliance.pipeline.store is appliance.store
        assert appliance.pipeline.responder is appliance.responder
        assert appliance.worker is not None and appliance.worker.is_alive()
        assert appliance.queue.alive()
        assert appliance.store.after_events == [appliance.worker.on_logged]  # the one hook after a write

    def test_close_stops_the_worker_and_the_queue(self, settings: Settings):
        built = build(settings, responder=FakeResponder(), summarizer=FakeResponder(), recall=False)
        built.close()
        assert built.worker is not None and not built.worker.is_alive()
        assert not built.queue.alive()

    def test_without_a_policy_that_reads_a_summary_no_summarizer_is_loaded(self, config_file, tmp_path):
        from appliance.config import load_settings

        config_file.write_text(config_file.read_text() + '\n[context]\npolicy = "raw"\n')
        settings = load_settings(config_file, env={})
        # rolling is still among the served policies, so a worker is built; without one asked for, none is.
        with build(settings, responder=FakeResponder(), summarizer=FakeResponder(), recall=False, worker=False) as a:
            assert a.worker is None

    @pytest.mark.parametrize("failing", ["load_summarizer", "worker"])
    def test_a_part_that_fails_to_load_leaves_nothing_open(self, settings: Settings, monkeypatch, failing):
        opened: list[Store] = []
        real_open = Store.open

        def tracking_open(path, **options):
            store = real_open(path, **options)
            opened.append(store)
            return store

        monkeypatch.setattr(Store, "open", staticmethod(tracking_open))

        def missing(*_args, **_kwargs):
            raise ModelFileError("summarizer file missing")

        if failing == "load_summarizer":
            monkeypatch.setattr("appliance.app.loading.load_summarizer", missing)
        else:
            monkeypatch.setattr("appliance.turn.worker.SummaryWorker.configured", missing)
        with pytest.raises(ModelFileError):
            build(
                settings,
                responder=FakeResponder(),
                summarizer=None if failing == "load_summarizer" else FakeResponder(),
                recall=False,
            )
        if failing == "load_summarizer":
            assert opened == []  # models load before the database opens
            return
        [store] = opened
        with pytest.raises(Exception):  # noqa: B017 - sqlite3.ProgrammingError: the connection is closed
            store.db.execute("SELECT 1")


class TestLoadConcurrently:
    def test_every_part_loads_at_the_same_time(self):
        together = threading.Barrier(3, timeout=10)  # broken unless all three wait at once

        def part(name: str):
            def load() -> str:
                together.wait()
                return name

            return load

        loaded = load_concurrently({n: part(n) for n in ("responder", "summarizer", "recall")}, workers=3)
        assert loaded == {"responder": "responder", "summarizer": "summarizer", "recall": "recall"}

    def test_on_two_cores_the_first_load_keeps_a_core_and_the_others_take_turns(self):
        events: list[str] = []
        recall_started = threading.Event()

        def responder() -> bool:
            return recall_started.wait(10)  # still running when the last of the others starts

        def summarizer() -> str:
            events.append("summarizer starts")
            time.sleep(0.05)
            events.append("summarizer ends")
            return "summarizer"

        def recall() -> str:
            events.append("recall starts")
            recall_started.set()
            return "recall"

        loaded = load_concurrently({"responder": responder, "summarizer": summarizer, "recall": recall}, workers=2)
        assert loaded == {"responder": True, "summarizer": "summarizer", "recall": "recall"}  # beside the responder
        assert events == ["summarizer starts", "summarizer ends", "recall starts"]  # one after the other, in order

    def test_the_first_failure_in_order_is_raised_once_every_load_has_ended(self):
        later_failed = threading.Event()
        ended: list[str] = []

        def responder() -> str:
            later_failed.wait(10)  # the summarizer fails first in time
            ended.append("responder")
            raise ModelFileError("responder file changed")

        def summarizer() -> str:
            later_failed.set()
            raise ModelFileError("summarizer file missing")

        def recall() -> str:
            time.sleep(0.2)
            ended.append("recall")
            return "recall"

        with pytest.raises(ModelFileError, match="responder"):
            load_concurrently({"responder": responder, "summarizer": summarizer, "recall": recall})
        assert sorted(ended) == ["recall", "responder"]

    def test_the_parts_that_loaded_are_closed_when_another_fails(self):
        class FakePart:
            closed = False

            def close(self) -> None:
                self.closed = True

        loaded = FakePart()

        def failing() -> FakePart:
            raise ModelFileError("summarizer file missing")

        with pytest.raises(ModelFileError, match="summarizer"):
            load_concurrently({"responder": lambda: loaded, "summarizer": failing, "imports": lambda: ["a module"]})
        assert loaded.closed


class TestOneReadOfTheSessionPerTurn:
    def test_an_answer_looks_the_session_up_once(self, appliance: Appliance, monkeypatch):
        session = appliance.sessions.new_session()
        calls: list[str] = []
        real = Store.session

        def counting(self: Store, session_id: str):
            calls.append(session_id)
            return real(self, session_id)

        monkeypatch.setattr(Store, "session", counting)
        appliance.worker.stop()  # it reads its own snapshot later, off the answer's path
        if appliance.prewarmer is not None:
            appliance.prewarmer.stop()  # so does the warm-up of the next prefix
        appliance.pipeline.answer(session.id, "My card ending 4821 is blocked")
        assert calls == [session.id]  # the snapshot; the write checks the session in its own transaction

    def test_the_worker_leaves_sessions_of_policies_without_a_summary_alone(self, appliance: Appliance):
        def talk(session_id: str) -> None:
            for i in range(24):  # well past the verbatim window plus summarizer.every_turns
                appliance.sessions.record_turn(session_id, "customer" if i % 2 == 0 else "agent", f"message {i}")
            assert appliance.worker is not None and appliance.worker.drain(
                timeout=60
            )  # a loaded box is slow, not wrong

        raw = appliance.sessions.new_session(policy="raw")
        talk(raw.id)
        assert appliance.store.summaries(raw.id) == ()
        assert appliance.worker.stats().runs == 0
        rolling = appliance.sessions.new_session(policy="rolling")
        talk(rolling.id)
        assert appliance.store.summaries(rolling.id) and appliance.worker.stats().runs > 0
