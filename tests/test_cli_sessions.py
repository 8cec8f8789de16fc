"""`appliance sessions`: subject-access export, erasure and retention, straight on the database."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from click.testing import CliRunner

from appliance.cli import cli
from appliance.store import Store

from .support import write_config


def seeded(tmp_path: Path) -> tuple[Path, str, str]:
    config = write_config(tmp_path)
    store = Store.open(tmp_path / "app.db")
    old = store.create_session(policy="raw", title="old")
    store.append_turn(old.id, "customer", "My name is Ada Quill, order QQ-4455")
    new = store.create_session(policy="raw", title="new")
    store.append_turn(new.id, "customer", "hello")
    # Make the first conversation 40 days quiet.
    past = time.time() - 40 * 86400
    store.db.execute("UPDATE sessions SET created_at = ? WHERE id = ?", [past, old.id])
    store.db.execute("DROP TRIGGER turns_no_update")  # test set-up only: back-date the turn
    store.db.execute("UPDATE turns SET created_at = ? WHERE session_id = ?", [past, old.id])
    store.close()
    return config, old.id, new.id


def run(config: Path, *args: str):
    return CliRunner().invoke(cli, ["--config", str(config), "sessions", *args])


class TestSessions:
    def test_export_writes_everything_to_an_owner_only_file(self, tmp_path: Path):
        config, old, _ = seeded(tmp_path)
        out = tmp_path / "sar" / "export.json"
        previous = os.umask(0)
        try:
            done = run(config, "export", old, "--out", str(out))
        finally:
            os.umask(previous)
        assert done.exit_code == 0, done.output
        data = json.loads(out.read_text())
        assert data["session"]["id"] == old and data["turns"][0]["text"].startswith("My name is Ada Quill")
        assert {"summaries", "ledger", "records"} <= set(data)
        assert out.stat().st_mode & 0o777 == 0o600

    def test_erase_and_an_unknown_id(self, tmp_path: Path):
        config, old, new = seeded(tmp_path)
        assert run(config, "erase", old).exit_code == 0
        missing = run(config, "erase", old)
        assert missing.exit_code == 2 and old in missing.output
        store = Store.open(tmp_path / "app.db")
        assert [s["id"] for s in store.sessions()] == [new]
        assert [e["reason"] for e in store.erasures()] == ["operator request"]
        store.close()

    def test_purge_erases_only_what_is_older_than_the_limit(self, tmp_path: Path):
        config, old, new = seeded(tmp_path)
        done = run(config, "purge", "--older-than", "30")
        assert done.exit_code == 0 and "erased 1 session" in done.output
        store = Store.open(tmp_path / "app.db")
        assert [s["id"] for s in store.sessions()] == [new]
        assert [(e["session_id"], e["reason"]) for e in store.erasures()] == [(old, "retention")]
        store.close()
