"""`appliance bench stream`: replayed answers through the API in-process, checked and raw, and the
command's JSON."""

from __future__ import annotations

import json
import subprocess
import sys

from appliance.config import Settings
from appliance.lab.bench.stream import Case, pieces, run_bench

from .support import SHARED_DATA, write_config

CONVERSATIONS = SHARED_DATA / "dev_conversations.jsonl"


def test_pieces_cut_as_a_tokenizer_would_and_give_the_text_back():
    assert pieces("Fee: $1,500.00 now") == ["Fee", ":", " $", "1", ",", "5", "0", "0", ".", "0", "0", " now"]
    assert "".join(pieces("Ich benötige Ihre PIN.\nDanke!")) == "Ich benötige Ihre PIN.\nDanke!"


def test_a_fault_is_the_altered_fact_or_a_request_for_a_secret():
    altered = Case("altered", (), "?", "Your reference is W9945XIT .", "W9945XIT")
    assert altered.read_fault("Your reference is W9945XIT") and not altered.read_fault("Your reference is")
    asks = Case("asks", (), "?", "What is your PIN?")
    assert asks.read_fault("Sure. What is your PIN?") and not asks.read_fault("Sure.")


def test_checked_clients_read_what_is_stored_and_raw_ones_read_the_faults(settings: Settings):
    report = run_bench(settings, CONVERSATIONS, limit=8, generate=0, progress=lambda _m: None)
    replay = report["replay"]
    for client in ("native", "openai"):
        for kind in ("altered", "real", "asks"):
            tally = replay[f"checked/{client}/{kind}"]
            assert tally["answers"] > 0 and tally["differs"] == 0 and tally["read_fault"] == 0, (client, kind)
        assert replay[f"checked/{client}/real"]["changed"] == 0  # what the guard passes is read as said
        assert replay[f"raw/{client}/asks"]["differs"] == replay[f"raw/{client}/asks"]["answers"]
        assert replay[f"raw/{client}/altered"]["read_fault"] > 0  # the raw stream shows what the check found


def test_the_command_prints_json(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "appliance",
            "--config",
            str(write_config(tmp_path)),
            "bench",
            "stream",
            "--conversations",
            str(CONVERSATIONS),
            "--limit",
            "2",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["generate"] is None and report["replay"]["checked/native/asks"]["differs"] == 0
