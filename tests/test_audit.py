"""The audit trail (issue 42, item 2): one content-free, hash-chained record per answer and operator
action, sealed in its fact's transaction, shipped to a rotating JSON-lines file and to syslog.

On the real store in a temporary folder (what is sealed, in what order, with what text), the chain's
verification with a line edited, removed or moved (``appliance audit verify`` names the file and the
line), retention's pruning, RFC 5424 framing of hostile text, TLS to a receiver with a certificate
made here, and a real daemon with the tiny model sending a scripted session to a syslog receiver
this test starts on loopback, over UDP and over TCP. Every receiving loop is bounded in time.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from appliance.audit.record import GENESIS, acting
from appliance.audit.ship import Shipper
from appliance.audit.sinks import JsonlFile, Syslog, rfc5424
from appliance.audit.verify import verify, walk
from appliance.cli import cli
from appliance.config import ROOT
from appliance.errors import TurnConflict
from appliance.store import Store
from appliance.store.floor import FloorChange
from appliance.types import Citation, FetchDecision, Floor, Grounding, SummaryVersion

from .support import TEST_MODEL, eventually, write_config
from .test_daemon import needs_model, start_daemon
from .test_store import RECORD

MARKER = "Zebra-Quartz-4417"  # the customer's words: never in a record unless audit.text says so
SYSLOG = re.compile(r"<(\d+)>1 (\S+) (\S+) (\S+) (\d+) (\S+) - (\{.*\})\Z", re.S)


def scripted(store: Store) -> str:
    """A conversation's facts, each by the store's own method: answer, floor, reply, summary, pause, erasure."""
    session = store.create_session(policy="raw").id
    grounded = RECORD.__class__(
        **{
            **RECORD.__dict__,
            "knowledge": Grounding(FetchDecision(True, "cue"), (Citation(7, "fees.md", "Fees", "Cards", "p. 2"),)),
        }
    )
    store.append_exchange(session, f"My card {MARKER}", f"Noted {MARKER}", grounded)
    store.change_floor(session, FloorChange(lambda f: Floor("with_person", "taken", 5.0, "token:op1"), "operator"))
    store.append_turn(session, "agent", f"A person here, {MARKER}")
    with acting("token:op1", "operator"):
        store.add_summary(SummaryVersion(session, 0, f"About {MARKER}", 2, "operator"))
        store.set_summary_paused(session, True)
        store.erase(session)
    return session


def sealed(store: Store) -> list[dict[str, Any]]:
    return [json.loads(line) for _, line in store.audit_after(0, -1)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "app.db") as opened:
        yield opened


def ship(store: Store, path: Path, *, max_bytes: int = 1_000_000, backups: int = 5) -> None:
    """Everything the store sealed, to the file at ``path`` (as the daemon's shipper does)."""
    file = JsonlFile(path, max_bytes=max_bytes, backups=backups)
    Shipper(store.audit_after, [file], after=file.last_seq()).stop()


class TestRecords:
    def test_each_answer_and_operator_action_is_sealed_in_order_without_the_customers_words(self, store: Store):
        session = scripted(store)
        records = sealed(store)
        assert [r["action"] for r in records] == [
            "answer",
            "floor",
            "reply",
            "summary",
            "summary_paused",
            "erasure",
        ]
        assert [r["seq"] for r in records] == [1, 2, 3, 4, 5, 6]
        assert records[0]["prev"] == GENESIS
        assert all(r["prev"] == before["hash"] for before, r in zip(records, records[1:], strict=False))
        assert all(r["session"] == session for r in records)
        answer = records[0]
        assert (answer["turn"], answer["stage"], answer["model"], answer["role"]) == (1, "early", "m", "model")
        assert answer["guard"] == {
            "action": "none",
            "source": "model",
            "findings": 0,
            "checked": 0,
            "fetch": True,
            "not_found": False,
        }
        assert answer["sources"] == [{"doc": "fees.md", "chunk": 7, "location": "p. 2"}]
        assert records[1]["floor"] == {"from": "bot", "to": "with_person", "reason": "taken"}
        assert (records[2]["actor"], records[2]["role"]) == ("token:op1", "person")  # who holds it replied
        assert (records[5]["actor"], records[5]["erased"]) == ("token:op1", {"reason": "request", "turns": 3})
        assert MARKER not in json.dumps(records)

    def test_the_erasure_leaves_the_records_and_their_chain(self, store: Store):
        scripted(store)
        assert walk((str(seq), line) for seq, line in store.audit_after(0, -1)).records == 6

    def test_a_write_rolled_back_seals_nothing(self, store: Store):
        session = store.create_session(policy="raw").id
        with pytest.raises(TurnConflict):
            store.append_exchange(session, "q", "a", RECORD, expect_index=5)
        assert sealed(store) == []

    def test_customer_text_only_where_the_config_names_it(self, tmp_path: Path):
        with Store.open(tmp_path / "t.db", audit_text=("message",)) as store:
            session = store.create_session(policy="raw").id
            store.append_exchange(session, f"q {MARKER}", "the answer", RECORD)
            assert sealed(store)[0]["text"] == {"message": f"q {MARKER}"}

    def test_an_operators_document_added_and_removed_is_sealed_by_key_and_hash(self, store: Store):
        document = {"key": "upload:fees.md", "name": "fees.md", "title": "Fees", "format": "markdown"}
        document |= {"sha256": "ab" * 32, "bytes": 10, "model": "e"}
        with acting("token:op1", "operator"):
            store.replace_knowledge_document(document, [])
            store.remove_knowledge_documents(["upload:fees.md", "upload:none.md"])
        records = sealed(store)
        assert [r["document"] for r in records] == [
            {"change": "added", "key": "upload:fees.md", "sha256": "ab" * 32},
            {"change": "removed", "key": "upload:fees.md"},
        ]
        assert {(r["action"], r["actor"], r["role"]) for r in records} == {("document", "token:op1", "operator")}

    def test_off_seals_nothing(self, tmp_path: Path):
        with Store.open(tmp_path / "t.db", auditing=False) as store:
            scripted(store)
            assert store.audit_head() == 0


class TestVerify:
    def test_a_clean_trail_verifies_across_its_rotated_files(self, store: Store, tmp_path: Path):
        scripted(store)
        path = tmp_path / "audit.jsonl"
        ship(store, path, max_bytes=700)
        verdict = verify(path)
        assert verdict.ok and verdict.records == 6 and len(verdict.files) > 2, verdict
        assert verdict.files[-1] == path and verdict.head == sealed(store)[-1]["hash"]

    @pytest.mark.parametrize(
        ("tamper", "fault"),
        [
            (lambda lines: lines.__setitem__(2, lines[2].replace('"person"', '"model"')), "(edited)"),
            (lambda lines: lines.pop(2), "a record was removed or replaced"),
            (lambda lines: lines.insert(3, lines.pop(2)), "a record was removed or replaced"),
            (lambda lines: lines.__setitem__(2, "not json"), "not a JSON record"),
        ],
    )
    def test_verify_names_the_first_broken_link(self, store: Store, tmp_path: Path, tamper: Any, fault: str):
        scripted(store)
        path = tmp_path / "audit.jsonl"
        ship(store, path)
        lines = path.read_text().splitlines()
        tamper(lines)
        path.write_text("\n".join(lines) + "\n")
        verdict = verify(path)
        assert not verdict.ok and verdict.broken.startswith(f"{path} line 3"), verdict.broken
        assert fault in verdict.broken and verdict.records == 2

    def test_the_cli_says_ok_with_the_head_or_names_the_broken_line(self, store: Store, tmp_path: Path):
        scripted(store)
        path = tmp_path / "audit.jsonl"
        ship(store, path, max_bytes=700)
        config = str(write_config(tmp_path))
        ok = CliRunner().invoke(cli, ["--config", config, "audit", "verify", str(path)])
        assert ok.exit_code == 0 and "ok: 6 records" in ok.output and sealed(store)[-1]["hash"] in ok.output
        oldest = verify(path).files[0]
        oldest.write_text(oldest.read_text().replace('"answer"', '"answ3r"', 1))
        broken = CliRunner().invoke(cli, ["--config", config, "audit", "verify", str(path)])
        assert broken.exit_code == 1 and f"{oldest} line 1 (seq 1)" in broken.output, broken.output
        missing = CliRunner().invoke(cli, ["--config", config, "audit", "verify", str(tmp_path / "none.jsonl")])
        assert missing.exit_code == 2

    def test_the_database_copy_verifies(self, tmp_path: Path):
        config = str(write_config(tmp_path))
        with Store.open(tmp_path / "app.db") as store:
            scripted(store)
        result = CliRunner().invoke(cli, ["--config", config, "audit", "verify", "--database"])
        assert result.exit_code == 0 and "ok: 6 records" in result.output, result.output


class TestRetentionAndRestart:
    def test_pruning_keeps_the_newest_and_the_chain_goes_on_from_the_oldest_kept(self, store: Store):
        scripted(store)
        assert store.prune_audit(0, now=2e10) == 5  # everything older, but the head
        scripted(store)
        kept = store.audit_after(0, -1)
        assert [seq for seq, _ in kept] == list(range(6, 13))
        assert walk((str(seq), line) for seq, line in kept).ok
        with pytest.raises(Exception, match="head"):
            with store._tx() as db:
                db.execute("DELETE FROM audit")
        assert store.audit_after(0, -1) == kept  # nothing was deleted

    def test_records_sealed_while_no_shipper_ran_reach_the_file_at_the_next_start(self, store: Store, tmp_path: Path):
        path = tmp_path / "audit.jsonl"
        scripted(store)
        ship(store, path)
        scripted(store)  # as `appliance sessions erase` does: no shipper running
        ship(store, path)
        verdict = verify(path)
        assert verdict.ok and verdict.records == 12 and verdict.last_seq == 12

    def test_a_line_cut_short_is_named_and_the_records_after_it_start_their_own_line(
        self, store: Store, tmp_path: Path
    ):
        path = tmp_path / "audit.jsonl"
        scripted(store)
        ship(store, path)
        with path.open("a") as fh:
            fh.write('{"seq": 7, "ha')  # a power cut mid-write
        scripted(store)
        ship(store, path)
        lines = path.read_text().splitlines()
        assert len(lines) == 13 and json.loads(lines[-1])["seq"] == 12
        assert verify(path).broken.startswith(f"{path} line 7: not a JSON record")


# syslog ---------------------------------------------------------------------------------------------


class Receiver:
    """A syslog receiver on loopback: UDP datagrams, or octet-counted TCP (TLS) frames, each kept."""

    def __init__(self, transport: str, tls: ssl.SSLContext | None = None) -> None:
        self.messages: list[str] = []
        kept = self.messages

        class Datagram(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                kept.append(self.request[0].decode("ascii"))

        class Stream(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                for _ in range(10_000):  # bounded: a frame each
                    length = b""
                    while (c := self.rfile.read(1)) not in (b" ", b""):
                        length += c
                    if not length:
                        return
                    kept.append(self.rfile.read(int(length)).decode("ascii"))

        kind = socketserver.ThreadingUDPServer if transport == "udp" else socketserver.ThreadingTCPServer
        self.server = kind(("127.0.0.1", 0), Datagram if transport == "udp" else Stream)
        self.server.daemon_threads = True
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def records(self) -> list[dict[str, Any]]:
        found = [SYSLOG.match(m) for m in list(self.messages)]
        assert all(found), self.messages
        return [json.loads(m.group(7)) for m in found if m]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class TestSyslog:
    def test_hostile_text_stays_one_escaped_ascii_json_message(self, tmp_path: Path):
        hostile = 'ok"}\n<13>1 - forged - - - - ]\x00 ñ'
        with Store.open(tmp_path / "t.db", audit_text=("message",)) as store:
            store.append_exchange(store.create_session(policy="raw").id, hostile, "a", RECORD)
            (_, line), *_ = store.audit_after(0, 1)
        message = rfc5424(line, hostname="box 1\n")
        assert b"\n" not in message and message.isascii()
        found = SYSLOG.match(message.decode())
        assert found and found.group(1) == str(13 * 8 + 6) and found.group(3) == "box1" and found.group(6) == "answer"
        assert json.loads(found.group(7))["text"]["message"] == hostile
        assert found.group(2).endswith("Z") and "T" in found.group(2)

    @pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a certificate")
    def test_tls_to_a_receiver_whose_certificate_is_checked(self, tmp_path: Path, store: Store):
        key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"]
            + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        receiver = Receiver("tls", context)
        try:
            scripted(store)
            sink = Syslog("127.0.0.1", receiver.port, "tls", ca_file=str(cert))
            Shipper(store.audit_after, [sink], after=0).stop()
            eventually(
                lambda: len(receiver.messages) == 6, lambda: f"six records over TLS: {receiver.messages}", timeout=10
            )
            assert [r["seq"] for r in receiver.records()] == [1, 2, 3, 4, 5, 6]
            untrusted = Syslog("127.0.0.1", receiver.port, "tls")  # the system's CAs do not know it
            with pytest.raises(ssl.SSLError):
                untrusted.write(store.audit_after(0, 1)[0][1])
        finally:
            receiver.close()


def test_a_receiver_that_is_down_is_left_alone_while_the_file_goes_on(store: Store, tmp_path: Path):
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    path = tmp_path / "audit.jsonl"
    scripted(store)
    down = Syslog("127.0.0.1", port, "tcp")
    file = JsonlFile(path, max_bytes=1_000_000, backups=1)
    Shipper(store.audit_after, [down, file], after=0).stop()
    assert verify(path).records == 6
    with pytest.raises(ConnectionError, match="is down"):
        down.write(store.audit_after(0, 1)[0][1])  # not tried again at once


OPERATOR, KIOSK = "tok-op-9f8e7d", "tok-kiosk-6c5b"


@pytest.mark.real_model
@pytest.mark.daemon
@needs_model
@pytest.mark.parametrize("transport", ["udp", "tcp"])
def test_a_daemons_session_reaches_syslog_in_order_and_a_tampered_line_is_found(tmp_path: Path, transport: str):
    receiver = Receiver(transport)
    (tmp_path / "kiosk.token").write_text(KIOSK + "\n")
    audit = f'[audit]\nsyslog_host = "127.0.0.1"\nsyslog_port = {receiver.port}\nsyslog_transport = "{transport}"\n'
    daemon = start_daemon(
        tmp_path,
        token=OPERATOR,
        server=f'tokens = {{ "{tmp_path / "kiosk.token"}" = "kiosk" }}\n',
        extra=f'[summarizer]\nmodel = "{TEST_MODEL}"\nn_ctx = 1024\nn_threads = 1\n[floor]\nescalate_on_guard = false\n'
        + audit,
        env={"APPLIANCE__CONTEXT__POLICY": "raw"},  # no summary of the model's: the script is the record
    )
    try:
        kiosk_client = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {KIOSK}"}, timeout=300)
        with daemon.client() as operator, kiosk_client as kiosk:
            session = kiosk.post("/v1/sessions", json={}).json()["id"]
            steps = [
                kiosk.post(f"/v1/sessions/{session}/messages", json={"text": f"Hello, I am {MARKER}."}),
                kiosk.post(f"/v1/sessions/{session}/person"),
                operator.post(f"/v1/sessions/{session}/take"),
                operator.post(f"/v1/sessions/{session}/turns", json={"role": "agent", "text": f"Hi {MARKER}"}),
                operator.post(f"/v1/sessions/{session}/hand-back"),
                operator.put(f"/v1/sessions/{session}/summary", json={"text": f"Customer {MARKER}."}),
                operator.post(f"/v1/sessions/{session}/summary/pause"),
                operator.delete(f"/v1/sessions/{session}"),
            ]
        assert all(step.status_code < 300 for step in steps), [s.text for s in steps]
        want = ["answer", "floor", "floor", "reply", "floor", "summary", "summary_paused", "erasure"]
        eventually(lambda: len(receiver.messages) >= len(want), f"{len(want)} records at the receiver", timeout=15)
        records = receiver.records()
        assert [r["action"] for r in records] == want
        assert [r["seq"] for r in records] == list(range(1, len(want) + 1))
        assert [r["role"] for r in records[1:3]] == ["kiosk", "operator"]
        operator_key = records[2]["actor"]
        assert operator_key.startswith("token:") and OPERATOR not in operator_key
        assert {r["actor"] for r in records[3:]} == {operator_key}  # the reply, summary, pause and erasure
        assert MARKER not in json.dumps(records)
    finally:
        code = daemon.stop()
        receiver.close()
    assert code == 0, daemon.output()
    trail = tmp_path / "audit.jsonl"
    lines = trail.read_text().splitlines()
    assert [json.loads(line) for line in lines] == records  # the file and syslog carry the same records
    verify_then_tamper(tmp_path, trail, lines)


def verify_then_tamper(tmp_path: Path, trail: Path, lines: list[str]) -> None:
    """``appliance audit verify`` of the daemon's config passes the trail, then names its 4th line edited."""
    verify_cli = [sys.executable, "-m", "appliance", "--config", str(tmp_path / "config.toml"), "audit", "verify"]
    ok = subprocess.run(verify_cli, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and f"ok: {len(lines)} records" in ok.stdout, ok.stderr
    lines[3] = lines[3].replace('"reply"', '"floor"')
    trail.write_text("\n".join(lines) + "\n")
    broken = subprocess.run(verify_cli, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert broken.returncode == 1 and f"{trail} line 4 (seq 4)" in broken.stderr, broken.stderr
