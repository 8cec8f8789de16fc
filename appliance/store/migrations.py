"""The schema: named, append-only migrations (sqlite-utils), applied when the store opens.

A migration is never edited once released; a change of schema is a new function below the others.
The transcript's append-only rule lives here, as triggers, so that it holds below any code.
"""

from __future__ import annotations

import sqlite_utils
from sqlite_utils.migrations import Migrations

migrations = Migrations("appliance")


@migrations()
def m001_initial(db: sqlite_utils.Database) -> None:
    db.execute(
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            policy TEXT NOT NULL,
            summary_paused INTEGER NOT NULL DEFAULT 0
        )"""
    )
    db.execute(
        """CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            idx INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('customer', 'agent')),
            text TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (session_id, idx)
        )"""
    )
    # The transcript is never rewritten: refuse updates and deletes at the lowest level.
    db.execute(
        "CREATE TRIGGER turns_no_update BEFORE UPDATE ON turns BEGIN SELECT RAISE(ABORT, 'turns are append-only'); END"
    )
    db.execute(
        "CREATE TRIGGER turns_no_delete BEFORE DELETE ON turns BEGIN SELECT RAISE(ABORT, 'turns are append-only'); END"
    )
    db.execute(
        """CREATE TABLE turn_records (
            turn_id INTEGER PRIMARY KEY REFERENCES turns(id),
            session_id TEXT NOT NULL REFERENCES sessions(id),
            idx INTEGER NOT NULL,
            stage TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            manifest TEXT NOT NULL,
            timings TEXT NOT NULL,
            "check" TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX turn_records_session ON turn_records(session_id, idx)")
    db.execute(
        """CREATE TABLE summaries (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            version INTEGER NOT NULL,
            text TEXT NOT NULL,
            covers_to INTEGER NOT NULL,
            author TEXT NOT NULL CHECK (author IN ('model', 'operator', 'fallback')),
            status TEXT NOT NULL CHECK (status IN ('accepted', 'rejected')),
            reason TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            UNIQUE (session_id, version)
        )"""
    )
    db.execute(
        """CREATE TABLE ledger (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id),
            turn INTEGER NOT NULL,
            speaker TEXT NOT NULL,
            kind TEXT NOT NULL,
            slot TEXT NOT NULL,
            value TEXT NOT NULL,
            norm TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX ledger_session ON ledger(session_id, turn)")


@migrations()
def m002_embeddings(db: sqlite_utils.Database) -> None:
    # One vector per turn, for recall of older verbatim turns; written off the answer's path.
    db.execute(
        """CREATE TABLE embeddings (
            session_id TEXT NOT NULL REFERENCES sessions(id),
            idx INTEGER NOT NULL,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (session_id, idx, model)
        )"""
    )


@migrations()
def m003_erasure(db: sqlite_utils.Database) -> None:
    # A conversation can be erased (a privacy request, or retention): its turns may then be deleted,
    # and nothing else ever may. Each erasure leaves an audit row without any of the content.
    db.execute("ALTER TABLE sessions ADD COLUMN erasing INTEGER NOT NULL DEFAULT 0")
    db.execute("DROP TRIGGER turns_no_delete")
    db.execute(
        """CREATE TRIGGER turns_no_delete BEFORE DELETE ON turns
           WHEN (SELECT erasing FROM sessions WHERE id = OLD.session_id) IS NOT 1
           BEGIN SELECT RAISE(ABORT, 'turns are append-only'); END"""
    )
    db.execute(
        """CREATE TABLE erasures (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            erased_at REAL NOT NULL,
            reason TEXT NOT NULL,
            turns INTEGER NOT NULL
        )"""
    )


@migrations()
def m004_owner(db: sqlite_utils.Database) -> None:
    # Which client (a kiosk or integration token's digest, never the token) started a session, so that
    # its rights to the session survive a restart; empty for operators' sessions.
    db.execute("ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT ''")


@migrations()
def m005_knowledge(db: sqlite_utils.Database) -> None:
    # The operator's documents, their chunks, an FTS5 index over the chunks and the chunks' vectors.
    # ``key`` names a document's source (its absolute path, or ``upload:<name>``); ``folder`` the synced
    # folder it came from ('' for one added by hand or uploaded), so a sync removes only its own.
    db.execute(
        """CREATE TABLE knowledge_documents (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            folder TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL,
            format TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            chunks INTEGER NOT NULL,
            model TEXT NOT NULL,
            added_at REAL NOT NULL
        )"""
    )
    db.execute(
        """CREATE TABLE knowledge_chunks (
            id INTEGER PRIMARY KEY,
            doc_id INTEGER NOT NULL REFERENCES knowledge_documents(id) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            title TEXT NOT NULL,
            heading TEXT NOT NULL,
            location TEXT NOT NULL,
            text TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            text_sha TEXT NOT NULL,
            vector BLOB NOT NULL
        )"""
    )
    db.execute("CREATE INDEX knowledge_chunks_doc ON knowledge_chunks(doc_id, ord)")
    db.execute("CREATE INDEX knowledge_chunks_sha ON knowledge_chunks(text_sha)")
    db.execute(
        """CREATE VIRTUAL TABLE knowledge_fts USING fts5(
            title, heading, text, content='knowledge_chunks', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        )"""
    )
    # The index follows its chunks below any code, so no stale chunk is ever found by a search.
    db.execute(
        """CREATE TRIGGER knowledge_chunks_ai AFTER INSERT ON knowledge_chunks BEGIN
            INSERT INTO knowledge_fts(rowid, title, heading, text) VALUES (new.id, new.title, new.heading, new.text);
        END"""
    )
    db.execute(
        """CREATE TRIGGER knowledge_chunks_ad AFTER DELETE ON knowledge_chunks BEGIN
            INSERT INTO knowledge_fts(knowledge_fts, rowid, title, heading, text)
            VALUES ('delete', old.id, old.title, old.heading, old.text);
        END"""
    )
    db.execute(
        "CREATE TRIGGER knowledge_chunks_no_update BEFORE UPDATE ON knowledge_chunks BEGIN SELECT RAISE(ABORT, 'a chunk is replaced, never edited'); END"
    )
    # Bumped by every change, so that each process's in-memory index knows when to reload.
    db.execute("CREATE TABLE knowledge_state (id INTEGER PRIMARY KEY CHECK (id = 1), generation INTEGER NOT NULL)")
    db.execute("INSERT INTO knowledge_state (id, generation) VALUES (1, 0)")


@migrations()
def m006_ledger_labels(db: sqlite_utils.Database) -> None:
    # What tells several values of one kind apart ("savings", "mobile") and what a value is about
    # ("Lakeside Hotel"); rows written before have neither. Which value is superseded is not stored:
    # it follows from the slots (appliance.types.current_facts), so it can never disagree with them.
    db.execute("ALTER TABLE ledger ADD COLUMN label TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE ledger ADD COLUMN subject TEXT NOT NULL DEFAULT ''")


@migrations()
def m007_turn_knowledge(db: sqlite_utils.Database) -> None:
    # What the operator's documents gave each answer (the fetch check's decision and scores, the
    # passages cited, whether it is the not-found text), as JSON; NULL where none was consulted.
    db.execute("ALTER TABLE turn_records ADD COLUMN knowledge TEXT")


@migrations()
def m008_floor(db: sqlite_utils.Database) -> None:
    # The conversation's state on the branch floor, owned by the daemon (appliance.turn.floor).
    db.execute(
        "ALTER TABLE sessions ADD COLUMN floor_state TEXT NOT NULL DEFAULT 'bot' "
        "CHECK (floor_state IN ('bot', 'needs_person', 'with_person', 'closed'))"
    )
    db.execute("ALTER TABLE sessions ADD COLUMN floor_reason TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE sessions ADD COLUMN floor_since REAL NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE sessions ADD COLUMN floor_by TEXT NOT NULL DEFAULT ''")
    # Everything stored, as events, written in the transaction of what they report. AUTOINCREMENT: an
    # erasure deletes a session's events, and a reused id would hide the next event from a client
    # that resumes after it (Last-Event-ID).
    db.execute(
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            data TEXT NOT NULL,
            created_at REAL NOT NULL
        )"""
    )
    db.execute("CREATE INDEX events_session ON events(session_id, id)")
    # The audit trail of state changes: who moved which conversation from what to what, and why (a
    # fixed word); nothing of the content, so it outlives an erasure like the erasures' rows.
    db.execute(
        """CREATE TABLE floor_changes (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            at REAL NOT NULL,
            from_state TEXT NOT NULL,
            to_state TEXT NOT NULL,
            reason TEXT NOT NULL,
            by_role TEXT NOT NULL,
            by_client TEXT NOT NULL
        )"""
    )


@migrations()
def m009_knowledge_chunking(db: sqlite_utils.Database) -> None:
    # How a document was cut into passages (the chunker's version and size): a sync re-cuts a document
    # whose file is unchanged when the chunking changed. Rows written before have none, so they are re-cut.
    db.execute("ALTER TABLE knowledge_documents ADD COLUMN chunking TEXT NOT NULL DEFAULT ''")


@migrations()
def m010_audit(db: sqlite_utils.Database) -> None:
    # The audit trail (appliance.audit): one sealed, content-free line per answer and operator action,
    # written in its fact's transaction and chained by hash. Never edited; retention deletes the oldest
    # rows, but never the newest, which the next record links to.
    db.execute(
        """CREATE TABLE audit (
            seq INTEGER PRIMARY KEY,
            at REAL NOT NULL,
            line TEXT NOT NULL,
            hash TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX audit_at ON audit(at)")
    db.execute(
        "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'audit records are append-only'); END"
    )
    db.execute(
        """CREATE TRIGGER audit_keep_head BEFORE DELETE ON audit
           WHEN OLD.seq = (SELECT MAX(seq) FROM audit)
           BEGIN SELECT RAISE(ABORT, 'the newest audit record is the chain''s head'); END"""
    )


@migrations()
def m011_answer_source(db: sqlite_utils.Database) -> None:
    # Where each answer's text came from (appliance.types.AnswerSource). Rows written before said it in
    # sentinel model names (the waiting sentence, the not-found text) or in the guard's action.
    db.execute("ALTER TABLE turn_records ADD COLUMN source TEXT NOT NULL DEFAULT 'model'")
    db.execute("UPDATE turn_records SET source = 'waiting' WHERE model = 'floor.waiting_message'")
    db.execute("UPDATE turn_records SET source = 'not_found' WHERE model = 'knowledge.not_found'")
    db.execute(
        "UPDATE turn_records SET source = json_extract(\"check\", '$.action') "
        "WHERE json_extract(\"check\", '$.action') IN ('readback', 'safe_answer', 'not_found', 'quote')"
    )
