from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
import sqlite_utils

from appliance.errors import SessionNotFound, StoreError, TurnConflict
from appliance.store import Store
from appliance.store.migrations import migrations
from appliance.types import LedgerEntry, Manifest, SummaryVersion, Timings, TurnRecord, to_dict

RECORD = TurnRecord(
    stage="early",
    model="m",
    manifest=Manifest(policy="raw", budget=10, total_tokens=5, parts=()),
    prompt_tokens=5,
    completion_tokens=2,
    timings=Timings(ttft_s=0.1),
)


class TestOpen:
    def test_wal_and_migrations(self, tmp_path: Path):
        store = Store.open(tmp_path / "sub" / "a.db")
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert {"sessions", "turns", "turn_records", "summaries", "ledger"} <= set(store.db.table_names())
        store.close()
        again = Store.open(tmp_path / "sub" / "a.db")  # re-opening applies nothing twice
        applied = again.db.execute("SELECT COUNT(*) FROM _sqlite_migrations").fetchone()[0]
        assert applied == len(migrations._migrations) >= 6  # each named migration once
        again.close()

    def test_answers_stored_before_sources_were_kept_get_theirs_from_the_old_markers(self, tmp_path: Path):
        """Records written before m011 said where a fixed text came from in sentinel model names or
        the guard's action; the migration turns both into the record's source."""
        path = tmp_path / "old.db"
        db = sqlite_utils.Database(path)
        migrations.apply(db, stop_before="m011_answer_source")
        db.execute("INSERT INTO sessions (id, created_at, policy) VALUES ('s', 0, 'raw')")
        old = {
            0: ("smollm2", "none"),
            2: ("floor.waiting_message", "none"),
            4: ("knowledge.not_found", "none"),
            6: ("smollm2", "readback"),
            8: ("smollm2", "quote"),
            10: ("smollm2", "redact"),
        }
        for idx, (model, action) in old.items():
            db.execute(
                "INSERT INTO turn_records (session_id, idx, stage, model, prompt_tokens, completion_tokens,"
                " manifest, timings, \"check\") VALUES ('s', ?, 'mid', ?, 0, 0, ?, '{}', ?)",
                [idx, model, json.dumps(to_dict(RECORD.manifest)), json.dumps({"action": action})],
            )
        db.conn.commit()
        db.close()
        with Store.open(path) as store:
            sources = {idx: (record.source, record.check.action) for idx, record in store.records("s")}
        assert sources == {
            0: ("model", "none"),
            2: ("waiting", "none"),
            4: ("not_found", "none"),
            6: ("readback", "readback"),
            8: ("quote", "quote"),
            10: ("model", "redact"),
        }

    def test_a_with_block_closes_it(self, tmp_path: Path):
        with Store.open(tmp_path / "a.db") as store:
            store.create_session(policy="raw")
        with pytest.raises(sqlite3.ProgrammingError, match="closed"):
            store.db.execute("SELECT 1")

    def test_unopenable_path_is_a_store_error(self, tmp_path: Path):
        (tmp_path / "file").write_text("x")
        with pytest.raises(StoreError):
            Store.open(tmp_path / "file" / "a.db")


class TestTranscript:
    def test_exchange_is_stored_with_record(self, store: Store):
        s = store.create_session(policy="raw")
        result = store.append_exchange(
            s.id, "hello", "hi there", RECORD, ledger=[LedgerEntry("reference", "AB12", 0, "customer")]
        )
        assert (result.customer.index, result.agent.index) == (0, 1)
        snap = store.snapshot(s.id)
        assert [t.text for t in snap.turns] == ["hello", "hi there"]
        assert snap.ledger[0].value == "AB12"
        [(idx, record)] = store.records(s.id)
        assert idx == 1 and record == RECORD

    def test_turns_are_append_only(self, store: Store):
        s = store.create_session(policy="raw")
        store.append_turn(s.id, "customer", "hello")
        for sql in ("UPDATE turns SET text = 'x'", "DELETE FROM turns"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                store.db.execute(sql)
        assert store.turns(s.id)[0].text == "hello"

    def test_the_last_turns_are_the_newest_oldest_first(self, store: Store):
        s = store.create_session(policy="raw")
        for i in range(8):
            store.append_turn(s.id, "customer" if i % 2 == 0 else "agent", f"turn {i}")
        assert store.turns(s.id, last=3) == store.turns(s.id)[-3:]
        assert [t.index for t in store.turns(s.id, last=3)] == [5, 6, 7]
        assert store.turns(s.id, last=20) == store.turns(s.id)

    def test_a_failed_exchange_stores_nothing(self, store: Store):
        s = store.create_session(policy="raw")
        bad = TurnRecord(**{**RECORD.__dict__, "stage": None})  # NOT NULL fails after both turns were inserted
        with pytest.raises(StoreError):
            store.append_exchange(s.id, "hello", "hi", bad)
        assert store.turns(s.id) == ()
        assert store.records(s.id) == []

    def test_unknown_session(self, store: Store):
        with pytest.raises(SessionNotFound):
            store.append_turn("nope", "customer", "hi")

    def test_sessions_search_and_counts(self, store: Store):
        a = store.create_session(policy="raw", title="card")
        b = store.create_session(policy="raw")
        store.append_turn(b.id, "customer", "my parcel is late")
        rows = {r["id"]: r for r in store.sessions()}
        assert rows[b.id]["turns"] == 1 and rows[a.id]["turns"] == 0
        assert [r["id"] for r in store.sessions(search="parcel")] == [b.id]


class TestSummaries:
    def test_versions_and_current(self, store: Store):
        s = store.create_session(policy="raw")
        assert store.current_summary(s.id) is None
        store.add_summary(SummaryVersion(s.id, 0, "first", covers_to=3))
        store.add_summary(SummaryVersion(s.id, 0, "bad", covers_to=5, status="rejected", reason="invented"))
        v = store.summaries(s.id)
        assert [x.version for x in v] == [1, 2]
        assert store.current_summary(s.id) == v[0]
        store.add_summary(SummaryVersion(s.id, 0, "second", covers_to=7))
        assert store.current_summary(s.id) == store.summaries(s.id)[-1]
        assert store.current_summary(s.id).text == "second"
        store.set_summary_paused(s.id, True)
        assert store.session(s.id).summary_paused


class TestEmbeddings:
    def test_put_and_read_back(self, store: Store):
        s = store.create_session(policy="raw")
        store.append_turn(s.id, "customer", "hello")
        store.put_embeddings(s.id, "minilm", [(0, b"\x00\x01")])
        store.put_embeddings(s.id, "minilm", [(0, b"\x02\x03")])  # re-embedding replaces
        assert store.embeddings(s.id, "minilm") == {0: b"\x02\x03"}
        assert store.embeddings(s.id, "other") == {}


class TestTurnIndices:
    """The store is the one owner of turn indices: it assigns them inside the writing transaction."""

    def test_indices_follow_on_and_ledger_entries_take_their_speakers_turn(self, store: Store):
        s = store.create_session(policy="raw")
        store.append_turn(s.id, "agent", "Hello, how can I help?")
        # The writer's guess (0 and 0) is wrong on purpose: the store stamps the real indices.
        facts = (
            LedgerEntry(kind="amount", value="$40", turn=0, speaker="customer", slot="amount", norm="40"),
            LedgerEntry(kind="reference", value="RX12", turn=0, speaker="agent", slot="ref", norm="rx12"),
        )
        result = store.append_exchange(s.id, "I paid $40", "Your case is RX12", RECORD, ledger=facts)
        assert (result.customer.index, result.agent.index) == (1, 2)
        assert [(e.value, e.turn) for e in store.ledger(s.id)] == [("$40", 1), ("RX12", 2)]
        assert [i for i, _ in store.records(s.id)] == [2]

    def test_the_last_records_are_the_newest_oldest_first(self, store: Store):
        s = store.create_session(policy="raw")
        for n in range(3):
            store.append_exchange(s.id, f"question {n}", f"answer {n}", RECORD)
        assert [i for i, _ in store.records(s.id)] == [1, 3, 5]
        assert [i for i, _ in store.records(s.id, last=2)] == [3, 5]
        assert [i for i, _ in store.records(s.id, last=5)] == [1, 3, 5]

    def test_a_turn_stored_since_the_snapshot_is_a_conflict_and_nothing_is_stored(self, store: Store):
        s = store.create_session(policy="raw")
        seen = len(store.turns(s.id))
        store.append_turn(s.id, "agent", "An operator said something meanwhile")
        with pytest.raises(TurnConflict):
            store.append_exchange(s.id, "question", "answer", RECORD, expect_index=seen)
        assert [t.text for t in store.turns(s.id)] == ["An operator said something meanwhile"]
        assert store.records(s.id) == []

    def test_the_expected_index_is_accepted(self, store: Store):
        s = store.create_session(policy="raw")
        turn = store.append_turn(s.id, "customer", "hi", expect_index=0)
        assert turn.index == 0

    def test_an_unknown_session_is_named(self, store: Store):
        with pytest.raises(SessionNotFound, match="nope"):
            store.append_turn("nope", "customer", "hi")
        with pytest.raises(SessionNotFound):
            store.append_exchange("nope", "q", "a", RECORD)


class TestErasure:
    MARKER = "Zyxqwv Oblomovich, account 99887766554433"

    def raw_bytes(self, path: Path) -> bytes:
        return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())

    def test_the_text_is_gone_from_the_file_and_its_wal_and_an_audit_row_stays(self, tmp_path: Path):
        path = tmp_path / "a.db"
        store = Store.open(path)
        keep = store.create_session(policy="raw")
        store.append_turn(keep.id, "customer", "Another customer, order QQ-123")
        gone = store.create_session(policy="raw", title=self.MARKER)
        store.append_exchange(gone.id, f"I am {self.MARKER}", f"Thanks {self.MARKER}", RECORD)
        store.add_summary(SummaryVersion(session_id=gone.id, version=0, text=self.MARKER, covers_to=1))
        store.put_embeddings(gone.id, "m", [(0, self.MARKER.encode())])
        assert self.MARKER.encode() in self.raw_bytes(path)
        assert store.erase(gone.id, reason="subject request") == 2
        assert self.MARKER.encode() not in self.raw_bytes(path)
        with pytest.raises(SessionNotFound):
            store.session(gone.id)
        [audit] = store.erasures()
        assert audit["session_id"] == gone.id and audit["reason"] == "subject request" and audit["turns"] == 2
        assert self.MARKER not in repr(audit)
        assert [t.text for t in store.turns(keep.id)] == ["Another customer, order QQ-123"]
        assert store.integrity_ok()
        store.close()
        assert self.MARKER.encode() not in self.raw_bytes(path)

    def test_turns_stay_append_only_outside_an_erasure(self, store: Store):
        s = store.create_session(policy="raw")
        store.append_turn(s.id, "customer", "hello")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            store.db.execute("DELETE FROM turns WHERE session_id = ?", [s.id])

    def test_an_unknown_session_is_named_and_nothing_changes(self, store: Store):
        with pytest.raises(SessionNotFound, match="nope"):
            store.erase("nope")
        assert store.erasures() == []

    def test_expired_sessions_are_those_quiet_for_longer_than_the_limit(self, store: Store):
        old = store.create_session(policy="raw")
        store.append_turn(old.id, "customer", "hello")
        fresh = store.create_session(policy="raw")
        now = time.time()
        assert set(store.expired(3600, now=now + 7200)) == {old.id, fresh.id}
        assert store.expired(3600, now=now) == []


class TestFileModes:
    def test_database_and_wal_are_private_whatever_the_umask(self, tmp_path: Path):
        previous = os.umask(0o000)
        try:
            store = Store.open(tmp_path / "a.db")
            s = store.create_session(policy="raw")
            store.append_turn(s.id, "customer", "hello")
            for name in ("a.db", "a.db-wal"):
                assert (tmp_path / name).stat().st_mode & 0o777 == 0o600, name
            store.close()
        finally:
            os.umask(previous)


class TestOwner:
    def test_the_creator_survives_a_reopen_and_an_erasure_takes_it_along(self, tmp_path: Path):
        store = Store.open(tmp_path / "a.db")
        s = store.create_session(policy="raw")
        assert store.owner(s.id) == ""
        store.set_owner(s.id, "token:0123456789abcdef")
        store.append_turn(s.id, "customer", "hi")
        assert store.turn_count(s.id) == 1
        store.close()
        again = Store.open(tmp_path / "a.db")
        assert again.owner(s.id) == "token:0123456789abcdef"
        again.erase(s.id)
        assert again.owner(s.id) == ""
        with pytest.raises(SessionNotFound):
            again.set_owner(s.id, "token:x")
        again.close()
