"""Readiness tells the truth (issue 27, item 5): ``/readyz`` is 503 with a reason while the database
cannot take a write, and ready again by itself once it can, with no write of its own.

On the real app over a real SQLite file (fake models): the database made read-only with
``PRAGMA query_only`` and full with ``PRAGMA max_page_count``, which is how SQLite itself refuses a
write on a read-only file system or a full disk (the same result codes), and then given back.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from appliance.app import build
from appliance.config import load_settings
from appliance.serve import provenance
from appliance.serve.api import create_app
from appliance.serve.readiness import CHECK_EVERY_S, DatabaseReadiness
from appliance.store.health import WriteOutcome

from .fakes import FakeResponder
from .support import write_config
from .test_api_inprocess import Served


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = CHECK_EVERY_S) -> None:
        self.now += seconds


@pytest.fixture
def box(tmp_path: Path) -> Iterator[tuple[Served, Clock, DatabaseReadiness]]:
    """The real app over a real database file, fake models, no summary worker; readiness on a test clock."""
    responder = FakeResponder(default="Noted.")
    settings = load_settings(write_config(tmp_path), env={})
    appliance = build(settings, responder=responder, summarizer=FakeResponder(), recall=False, worker=False)
    served = Served(appliance, responder, create_app(appliance))
    readiness: DatabaseReadiness = served.app.state.api.readiness
    clock = Clock()
    readiness.clock = clock
    yield served, clock, readiness
    appliance.close()


def ready(served: Served) -> tuple[int, dict[str, Any]]:
    reply = served.request("GET", "/readyz")
    return reply.status_code, reply.json()


def pragma(served: Served, sql: str) -> None:
    served.store.db.execute(f"PRAGMA {sql}")


def say(served: Served, session: str, text: str) -> int:
    return served.request("POST", f"/v1/sessions/{session}/messages", json={"text": text}).status_code


class TestDatabaseReadiness:
    def test_a_read_only_database_is_not_ready_with_the_reason_and_recovers_by_itself(
        self, box: tuple[Served, Clock, DatabaseReadiness]
    ):
        served, clock, _ = box
        session = served.new_session()
        assert say(served, session, "My order is A-5521.") == 200
        assert ready(served)[0] == 200

        pragma(served, "query_only = ON")  # SQLite refuses every write: SQLITE_READONLY
        assert say(served, session, "Is it shipped?") == 503  # the turn is refused, as before
        status, body = ready(served)  # the last write's outcome counts at once, before any check runs
        assert status == 503 and body["checks"]["database"] is False
        assert body["reasons"]["database"].startswith("the last write failed: attempt to write a readonly database")

        clock.advance()
        status, body = ready(served)  # the periodic check now finds the cause itself
        assert status == 503 and body["reasons"] == {"database": "the database connection is read-only"}

        pragma(served, "query_only = OFF")
        assert ready(served)[0] == 503  # until the next check: no check per request
        clock.advance()
        assert ready(served) == (
            200,
            {
                "ready": True,
                "checks": {"model": True, "database": True},
                "model": "fake-responder",
                "bundle": provenance.UNSIGNED,
                "devices": {"responder": "cpu"},  # no summary worker: no summarizer
            },
        )
        assert say(served, session, "Is it shipped?") == 200
        assert served.texts(session) == ["My order is A-5521.", "Noted.", "Is it shipped?", "Noted."]  # nothing lost

    def test_a_full_database_is_not_ready_and_ready_again_once_there_is_room(
        self, box: tuple[Served, Clock, DatabaseReadiness]
    ):
        served, clock, _ = box
        session = served.new_session()
        assert ready(served)[0] == 200  # the first check, before the file is limited
        pragma(served, "max_page_count = 1")  # SQLite keeps the current size: the file may not grow
        refused = 0
        for i in range(60):  # until a turn no longer fits: SQLITE_FULL, as on a full disk
            if say(served, session, f"Line {i}: " + "x" * 1500) == 503:
                refused += 1
                break
        assert refused == 1, "the database never filled up"
        status, body = ready(served)
        assert status == 503 and body["reasons"]["database"] == "the last write failed: database or disk is full"
        clock.advance()
        status, body = ready(served)
        assert status == 503 and body["reasons"]["database"].startswith("the database is at its size limit")
        stored = served.texts(session)

        pragma(served, "max_page_count = 1000000")
        clock.advance()
        assert ready(served)[0] == 200
        assert say(served, session, "And now?") == 200
        assert served.texts(session) == [*stored, "And now?", "Noted."]

    def test_a_failure_no_check_can_see_holds_until_a_write_succeeds(
        self, box: tuple[Served, Clock, DatabaseReadiness]
    ):
        served, clock, readiness = box
        session = served.new_session()
        ready(served)  # a first check: nothing wrong
        # An I/O error leaves no trace for the check to find (injected: a real one needs a failing disk).
        served.store.last_write = WriteOutcome(False, time.monotonic(), "disk I/O error")
        clock.advance()
        clock.advance()
        status, body = ready(served)
        assert status == 503 and body["reasons"]["database"] == "the last write failed: disk I/O error"
        assert say(served, session, "Hello?") == 200  # the write goes through: the disk is back
        assert ready(served)[0] == 200
        assert readiness.state().ok

    @pytest.mark.parametrize("requests", [1, 50])
    def test_the_check_runs_at_most_once_per_period(self, box: tuple[Served, Clock, DatabaseReadiness], requests: int):
        served, clock, readiness = box
        checks = []
        real = readiness._check
        readiness._check = lambda: checks.append(1) or real()  # type: ignore[method-assign]
        for _ in range(requests):
            assert ready(served)[0] == 200
        assert len(checks) == 1
        clock.advance()
        ready(served)
        assert len(checks) == 2
