"""The store's one class: one database file, one connection, one lock.

WAL mode, the schema's migrations (:mod:`appliance.store.migrations`) applied on open. An answered
turn (customer message, agent answer, its record and ledger entries) is written in one transaction,
so it is stored whole or not at all.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import sqlite_utils

from appliance.audit import record as audit
from appliance.errors import SessionNotFound, StoreError, TurnConflict
from appliance.store.audit import AuditTables
from appliance.store.floor import FloorChange, FloorTables, Logged
from appliance.store.health import WriteHealth, WriteOutcome
from appliance.store.knowledge import KnowledgeTables
from appliance.store.migrations import migrations
from appliance.store.privacy import PrivacyTables
from appliance.types import (
    Floor,
    LedgerEntry,
    Role,
    Session,
    Snapshot,
    SummaryVersion,
    Turn,
    TurnRecord,
    TurnResult,
    from_dict,
    to_dict,
)

# A summary version's columns, as SummaryVersion takes them.
_SUMMARY = "SELECT session_id, version, text, covers_to, author, status, reason, created_at FROM summaries"


class Store(KnowledgeTables, FloorTables, AuditTables, PrivacyTables, WriteHealth):
    """Thread-safe access to one database file (one connection, one lock); the knowledge base's
    methods are in :mod:`appliance.store.knowledge`, the states' and events' in :mod:`appliance.store.floor`, the writes' health in
    :mod:`appliance.store.health`, the audit trail's in :mod:`appliance.store.audit`, a conversation's
    export, erasure and expiry in :mod:`appliance.store.privacy`."""

    def __init__(
        self, db: sqlite_utils.Database, path: Path | None, *, auditing: bool = True, audit_text: Iterable[str] = ()
    ) -> None:
        self.db = db
        self.path = path
        self._lock = threading.RLock()
        self.last_write: WriteOutcome | None = None  # for readiness: no probe write is ever made
        self.after_events: list[Callable[[Logged], None]] = []  # called after a commit that logged events
        self._logged: list[tuple[str, str]] = []  # this transaction's events (session, kind), until the hooks
        self.auditing, self.audit_text = auditing, frozenset(audit_text)
        self.after_audit: list[Callable[[], None]] = []  # called after a commit that wrote audit records
        self._wrote_audit = False

    @classmethod
    def open(cls, path: Path | str, *, auditing: bool = True, audit_text: Iterable[str] = ()) -> Store:
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Owner only, whatever the umask: SQLite gives the WAL and shared-memory files the same mode.
            os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
            os.chmod(path, 0o600)
            conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
            db = sqlite_utils.Database(conn)
            db.enable_wal()
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("PRAGMA synchronous = NORMAL")  # safe under WAL; a power cut loses at most the last commit
            # Deleted content is overwritten, so an erased conversation is gone from the file itself.
            db.execute("PRAGMA secure_delete = ON")
            migrations.apply(db)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open database {path}: {exc}") from None
        return cls(db, path, auditing=auditing, audit_text=audit_text)

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite_utils.Database]:
        with self._lock:
            try:
                with self.db.atomic():
                    yield self.db
            except sqlite3.Error as exc:
                self._wrote(exc)
                self._logged.clear()
                self._wrote_audit = False
                raise StoreError(f"database write failed: {exc}") from exc
            except BaseException:
                self._logged.clear()  # rolled back: nothing to announce
                self._wrote_audit = False
                raise
            self._wrote()
            self._announce()
            self._ship()

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.db.query(sql, list(params)))

    # sessions -----------------------------------------------------------------------------------

    def create_session(self, *, policy: str, title: str = "") -> Session:
        session = Session(id=uuid.uuid4().hex[:12], created_at=time.time(), title=title, policy=policy)
        with self._tx() as db:
            db.table("sessions").insert({k: v for k, v in to_dict(session).items() if k != "floor"})
            self._event(db, session.id, "session", {"created_at": session.created_at, "title": title, "policy": policy})
        return session

    def session(self, session_id: str) -> Session:
        rows = self._rows("SELECT * FROM sessions WHERE id = ?", [session_id])
        if not rows:
            raise SessionNotFound(f"no session with id {session_id!r}")
        row = rows[0]
        return Session(
            id=row["id"],
            created_at=row["created_at"],
            title=row["title"],
            policy=row["policy"],
            summary_paused=bool(row["summary_paused"]),
            floor=Floor(row["floor_state"], row["floor_reason"], row["floor_since"], row["floor_by"]),
        )

    def set_owner(self, session_id: str, owner: str) -> None:
        """Record the client that started a session (see :func:`m004_owner`)."""
        with self._tx() as db:
            if not db.execute("UPDATE sessions SET owner = ? WHERE id = ?", [owner, session_id]).rowcount:
                raise SessionNotFound(f"no session with id {session_id!r}")

    def owner(self, session_id: str) -> str:
        """The client that started a session, or ``""`` (an operator's, or an unknown session)."""
        rows = self._rows("SELECT owner FROM sessions WHERE id = ?", [session_id])
        return str(rows[0]["owner"]) if rows else ""

    def turn_count(self, session_id: str) -> int:
        """How many turns a session holds (one COUNT, for limits)."""
        return int(self._rows("SELECT COUNT(*) AS n FROM turns WHERE session_id = ?", [session_id])[0]["n"])

    def sessions(self, *, limit: int = 100, search: str = "") -> list[dict[str, Any]]:
        """Newest first, with the number of turns and the last message, filtered by ``search`` text."""
        like = f"%{search}%"
        return self._rows(
            """SELECT s.id, s.created_at, s.title, s.policy, s.summary_paused,
                      s.floor_state, s.floor_reason, s.floor_since, s.floor_by,
                      COUNT(t.id) AS turns, MAX(t.created_at) AS last_at
               FROM sessions s LEFT JOIN turns t ON t.session_id = s.id
               WHERE ? = '' OR s.id LIKE ? OR s.title LIKE ?
                  OR EXISTS (SELECT 1 FROM turns u WHERE u.session_id = s.id AND u.text LIKE ?)
               GROUP BY s.id ORDER BY COALESCE(MAX(t.created_at), s.created_at) DESC LIMIT ?""",
            [search, like, like, like, limit],
        )

    def set_summary_paused(self, session_id: str, paused: bool) -> None:
        self.session(session_id)
        with self._tx() as db:
            db.execute("UPDATE sessions SET summary_paused = ? WHERE id = ?", [int(paused), session_id])
            action = "summary_paused" if paused else "summary_resumed"
            self._event(db, session_id, action, {})
            self._audit(db, audit.AuditEvent(action, session_id, *audit.actor(("", "operator"))))

    # turns --------------------------------------------------------------------------------------

    def turns(self, session_id: str, *, last: int = -1) -> tuple[Turn, ...]:
        """The session's turns, oldest first; the ``last`` ones only, if given."""
        select = "SELECT session_id, idx, role, text, created_at FROM turns WHERE session_id = ?"
        if last < 0:  # the snapshot's read at every turn: the index's order, no sort
            rows = self._rows(f"{select} ORDER BY idx", [session_id])
        else:
            rows = self._rows(f"SELECT * FROM ({select} ORDER BY idx DESC LIMIT ?) ORDER BY idx", [session_id, last])
        return tuple(
            Turn(session_id=r["session_id"], index=r["idx"], role=r["role"], text=r["text"], created_at=r["created_at"])
            for r in rows
        )

    def snapshot(self, session_id: str) -> Snapshot:
        with self._lock:
            return Snapshot(
                session=self.session(session_id),
                turns=self.turns(session_id),
                summary=self.current_summary(session_id),
                ledger=self.ledger(session_id),
            )

    def append_turn(
        self,
        session_id: str,
        role: Role,
        text: str,
        *,
        ledger: Iterable[LedgerEntry] = (),
        expect_index: int | None = None,
        floor: FloorChange | None = None,
    ) -> Turn:
        """Record one turn without an answer (an operator's reply, or a replayed transcript).

        The store gives the turn its index (and stamps it on ``ledger``'s entries); with
        ``expect_index``, a different next index raises :class:`TurnConflict` and stores nothing.
        With ``floor``, the conversation's state changes in the same transaction, after the turn.
        """
        with self._tx() as db:
            index = self._next_index(db, session_id, expect_index)
            turn, _ = self._insert_turn(db, session_id, index, role, text)
            self._insert_ledger(db, session_id, ledger, {role: index})
            self._turn_event(db, turn, "customer" if role == "customer" else "person")
            if role == "agent":
                self._audit_reply(db, turn)
            if floor is not None:
                self._change_floor(db, session_id, floor)
        return turn

    def append_exchange(
        self,
        session_id: str,
        customer_text: str,
        agent_text: str,
        record: TurnRecord,
        *,
        ledger: Iterable[LedgerEntry] = (),
        expect_index: int | None = None,
        floor: FloorChange | None = None,
    ) -> TurnResult:
        """Store a customer message, its answer, the answer's record and new ledger entries atomically.

        The customer's turn takes the next index and the answer the one after; each ledger entry is
        stamped with the index of its speaker's turn. With ``expect_index`` (the index the writer's
        snapshot implied), a turn stored meanwhile raises :class:`TurnConflict` and nothing is stored.
        """
        with self._tx() as db:
            index = self._next_index(db, session_id, expect_index)
            customer, _ = self._insert_turn(db, session_id, index, "customer", customer_text)
            agent, agent_id = self._insert_turn(db, session_id, index + 1, "agent", agent_text)
            self._insert_record(db, agent_id, agent, record)
            self._insert_ledger(db, session_id, ledger, {"customer": customer.index, "agent": agent.index})
            self._turn_event(db, customer, "customer")
            flags = len(record.check.findings)
            self._turn_event(
                db, agent, "model", model=record.model, source=record.source, stage=record.stage, flags=flags
            )
            texts = self._texts({"message": customer_text, "answer": agent_text})
            self._audit(db, audit.answer(session_id, agent.index, record, texts))
            if floor is not None:
                self._change_floor(db, session_id, floor)
        return TurnResult(session_id=session_id, customer=customer, agent=agent, record=record)

    @staticmethod
    def _next_index(db: sqlite_utils.Database, session_id: str, expected: int | None) -> int:
        """The session's next turn index, read inside the writing transaction (the one place it is decided)."""
        row = db.execute(
            "SELECT (SELECT COALESCE(MAX(idx), -1) + 1 FROM turns WHERE session_id = s.id) FROM sessions s WHERE s.id = ?",
            [session_id],
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session with id {session_id!r}")
        (index,) = row
        if expected is not None and index != expected:
            raise TurnConflict(
                f"session {session_id}: the turn was to be number {expected}, but another turn took that place; "
                "nothing was stored"
            )
        return int(index)

    @staticmethod
    def _insert_turn(db: sqlite_utils.Database, session_id: str, index: int, role: Role, text: str) -> tuple[Turn, int]:
        """The turn inserted, and its row id."""
        turn = Turn(session_id=session_id, index=index, role=role, text=text, created_at=time.time())
        cursor = db.execute(
            "INSERT INTO turns (session_id, idx, role, text, created_at) VALUES (?, ?, ?, ?, ?)",
            [session_id, turn.index, role, text, turn.created_at],
        )
        return turn, int(cursor.lastrowid or 0)

    @staticmethod
    def _insert_record(db: sqlite_utils.Database, turn_id: int, agent: Turn, record: TurnRecord) -> None:
        """Write an answer's record beside its just-inserted turn (row ``turn_id``), its parts as JSON.
        Plain SQL: on the answer's path, where sqlite-utils' insert reads the table's schema first."""
        db.execute(
            "INSERT INTO turn_records (turn_id, session_id, idx, stage, model, source, prompt_tokens, "
            'completion_tokens, manifest, timings, "check", knowledge) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
            [
                turn_id,
                agent.session_id,
                agent.index,
                record.stage,
                record.model,
                record.source,
                record.prompt_tokens,
                record.completion_tokens,
                json.dumps(to_dict(record.manifest)),
                json.dumps(to_dict(record.timings)),
                json.dumps(to_dict(record.check)),
                json.dumps(to_dict(record.knowledge)) if record.knowledge is not None else None,
            ],
        )

    def records(self, session_id: str, *, last: int = -1) -> list[tuple[int, TurnRecord]]:
        """Each answered turn's index and record, oldest first; the ``last`` ones only, if given."""
        newest = "SELECT * FROM turn_records WHERE session_id = ? ORDER BY idx DESC LIMIT ?"
        rows = self._rows(f"SELECT * FROM ({newest}) ORDER BY idx", [session_id, last])
        return [
            (
                r["idx"],
                from_dict(
                    TurnRecord,
                    {
                        "stage": r["stage"],
                        "model": r["model"],
                        "source": r["source"],
                        "prompt_tokens": r["prompt_tokens"],
                        "completion_tokens": r["completion_tokens"],
                        "manifest": json.loads(r["manifest"]),
                        "timings": json.loads(r["timings"]),
                        "check": json.loads(r["check"]),
                        "knowledge": json.loads(r["knowledge"]) if r.get("knowledge") else None,
                    },
                ),
            )
            for r in rows
        ]

    # summaries ----------------------------------------------------------------------------------

    def add_summary(self, summary: SummaryVersion) -> SummaryVersion:
        """Store a new version (numbered after the last one, whatever ``summary.version`` says)."""
        self.session(summary.session_id)
        with self._tx() as db:
            (version,) = db.execute(
                "SELECT COALESCE(MAX(version), 0) + 1 FROM summaries WHERE session_id = ?", [summary.session_id]
            ).fetchone()
            stored = SummaryVersion(**{**to_dict(summary), "version": version, "created_at": time.time()})
            db.table("summaries").insert(to_dict(stored))
            self._event(db, stored.session_id, "summary", to_dict(stored))
            facts = (stored.version, stored.author, stored.status, stored.covers_to)
            self._audit(db, audit.summary(stored.session_id, *facts))
        return stored

    def summaries(self, session_id: str) -> tuple[SummaryVersion, ...]:
        rows = self._rows(f"{_SUMMARY} WHERE session_id = ? ORDER BY version", [session_id])
        return tuple(SummaryVersion(**r) for r in rows)

    def current_summary(self, session_id: str) -> SummaryVersion | None:
        """The newest accepted version; read alone, as every turn's snapshot does, not among them all."""
        rows = self._rows(
            f"{_SUMMARY} WHERE session_id = ? AND status = 'accepted' ORDER BY version DESC LIMIT 1", [session_id]
        )
        return SummaryVersion(**rows[0]) if rows else None

    # ledger -------------------------------------------------------------------------------------

    @staticmethod
    def _insert_ledger(
        db: sqlite_utils.Database, session_id: str, entries: Iterable[LedgerEntry], index_of: dict[str, int]
    ) -> None:
        """Write ledger entries, each stamped with the index its speaker's turn was just given."""
        rows = [{"session_id": session_id, **to_dict(e), "turn": index_of.get(e.speaker, e.turn)} for e in entries]
        if rows:
            db.table("ledger").insert_all(rows)

    def ledger(self, session_id: str) -> tuple[LedgerEntry, ...]:
        rows = self._rows(
            "SELECT kind, value, turn, speaker, slot, norm, label, subject FROM ledger WHERE session_id = ? "
            "ORDER BY turn, id",
            [session_id],
        )
        return tuple(LedgerEntry(**r) for r in rows)

    # embeddings ---------------------------------------------------------------------------------

    def put_embeddings(self, session_id: str, model: str, vectors: Iterable[tuple[int, bytes]]) -> None:
        rows = [{"session_id": session_id, "idx": idx, "model": model, "vector": blob} for idx, blob in vectors]
        if rows:
            with self._tx() as db:
                db.table("embeddings").insert_all(rows, replace=True)

    def embeddings(self, session_id: str, model: str) -> dict[int, bytes]:
        rows = self._rows("SELECT idx, vector FROM embeddings WHERE session_id = ? AND model = ?", [session_id, model])
        return {r["idx"]: r["vector"] for r in rows}

    def integrity_ok(self) -> bool:
        return bool(self._rows("PRAGMA integrity_check")[0]["integrity_check"] == "ok")
