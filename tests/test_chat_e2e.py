"""`appliance chat` end to end with real GGUF models and a real database, in real subprocesses;
and what it prints of a hostile answer, through the fake responder in this process."""

from __future__ import annotations

import builtins
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from appliance.cli.talk import _chat, _show_guard, _Streamer
from appliance.config import ROOT, load_settings
from appliance.store import Store
from appliance.turn.pipeline import Pipeline
from appliance.types import CheckResult, Entity, Finding, GuardAction, Manifest, Timings, Turn, TurnRecord, TurnResult

from .fakes import FakeResponder
from .support import TEST_MODEL, write_config

# One thread: on a 2-core box shared with the test process (or anything else), llama.cpp's threads
# wait for each other and a second one slows generation down several times over.
# Answers of at most 16 tokens: these tests check what is streamed, stored and resumed, not length.
TINY = (
    f'[responder]\nmodel = "{TEST_MODEL}"\nn_ctx = 2048\nmax_tokens = 16\ntemperature = 0.2\nseed = 7\nn_threads = 1\n'
)


def chat(cfg: Path, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "appliance", "--config", str(cfg), "chat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def session_id_of(stderr: str) -> str:
    return next(line.split()[1] for line in stderr.splitlines() if line.startswith("session "))


@pytest.mark.real_model
class TestLineMode:
    def test_one_answer_per_line_stored_and_resumable(self, tmp_path: Path):
        cfg = write_config(tmp_path, TINY)
        messages = ["Hello, my booking reference is W9945XIS.", "Can I change it to Sunday?", "Thanks!"]
        done = chat(cfg, "--verbose", stdin="\n".join(messages) + "\n")
        assert done.returncode == 0, done.stderr
        answers = done.stdout.splitlines()
        assert len(answers) == 3 and all(a.strip() for a in answers)
        assert done.stderr.count("tok/s") == 3  # --verbose: one line of figures per turn
        sid = session_id_of(done.stderr)

        store = Store.open(load_settings(cfg, env={}).database)
        turns = store.turns(sid)
        assert [t.role for t in turns] == ["customer", "agent"] * 3
        assert [t.text for t in turns[::2]] == messages
        # Line mode folds an answer's line breaks into spaces; the store keeps them.
        assert [" ".join(t.text.split()) for t in turns[1::2]] == [" ".join(a.split()) for a in answers]
        records = store.records(sid)
        assert all(r.prompt_tokens > 0 and r.completion_tokens > 0 and r.model == TEST_MODEL for _, r in records)
        store.close()

        again = chat(cfg, "--session", sid, stdin="What was my reference?\n")
        assert again.returncode == 0, again.stderr
        store = Store.open(load_settings(cfg, env={}).database)
        assert len(store.turns(sid)) == 8
        (_, last) = store.records(sid)[-1]
        assert last.manifest.verbatim_turns == tuple(range(6))  # the resumed prompt carries the earlier turns
        store.close()

    def test_bad_messages_are_refused_and_not_stored(self, tmp_path: Path):
        cfg = write_config(tmp_path, TINY + "[chat]\nmax_message_chars = 40\n")
        done = chat(cfg, stdin="\n" + "y" * 41 + "\nHi there\n")
        assert done.returncode == 0, done.stderr
        assert "empty message" in done.stderr and "limit of 40" in done.stderr
        assert len(done.stdout.splitlines()) == 1
        store = Store.open(load_settings(cfg, env={}).database)
        assert [t.text for t in store.turns(session_id_of(done.stderr))][0] == "Hi there"
        store.close()

    def test_unknown_session_exits_2(self, tmp_path: Path):
        done = chat(write_config(tmp_path, TINY), "--session", "nope", stdin="hi\n")
        assert done.returncode == 2 and "no session with id 'nope'" in done.stderr

    def test_missing_model_file_names_the_fetch_command(self, tmp_path: Path):
        models = tmp_path / "models"
        models.mkdir()
        (models / "MODELS.toml").write_text((ROOT / "models" / "MODELS.toml").read_text())
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[paths]\nmodels_dir = "{models}"\ndatabase = "{tmp_path / "db.sqlite"}"\n')
        done = chat(cfg, stdin="hi\n")
        assert done.returncode == 2
        assert "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" in done.stderr and "appliance models fetch" in done.stderr


@pytest.mark.real_model
class TestKilledMidTurn:
    def test_database_stays_consistent(self, tmp_path: Path):
        # A first exchange with short answers, then the session resumed with answers of exactly 400
        # tokens, so that the kill always lands in the middle of one (only the killed answer is long).
        done = chat(write_config(tmp_path, TINY), stdin="Hello!\n")
        assert done.returncode == 0, done.stderr
        first = done.stdout.encode()
        assert first.strip()
        cfg = write_config(tmp_path, TINY.replace("max_tokens = 16", "max_tokens = 400\nignore_eos = true"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "appliance", "--config", str(cfg), "chat", "--verbose"]
            + ["--session", session_id_of(done.stderr)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        assert proc.stdin and proc.stdout and proc.stderr
        proc.stdin.write(b"Please count from 1 to 300, one number after another, separated by commas.\n")
        proc.stdin.flush()
        # --verbose says on stderr when the answer starts streaming.
        markers = 0
        deadline = time.monotonic() + 120
        while markers < 1 and time.monotonic() < deadline:
            line = proc.stderr.readline()
            markers += line.strip() == b"[answering]"
        assert markers == 1, "the second answer never started"
        os.kill(proc.pid, signal.SIGKILL)  # the process dies mid-generation
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        assert proc.stdout.read() == b"", "answer finished before the kill; cannot test mid-turn"

        store = Store.open(load_settings(cfg, env={}).database)
        assert store.integrity_ok()
        [session] = store.sessions()
        turns = store.turns(session["id"])
        assert [t.role for t in turns] == ["customer", "agent"]  # the killed turn left nothing behind
        assert " ".join(turns[1].text.split()) == " ".join(first.decode().split())
        assert len(store.records(session["id"])) == 1
        store.close()
        # Resumed with short answers (the same database): the resuming is what is checked here.
        resumed = chat(write_config(tmp_path, TINY), "--session", session["id"], stdin="Are you there?\n")
        assert resumed.returncode == 0 and resumed.stdout.strip()


@pytest.mark.real_model
class TestDefaultResponder:
    def test_loads_counts_exactly_and_generates(self, tmp_path: Path):
        from appliance.app.loading import load_responder
        from appliance.types import Message, Sampling

        settings = load_settings(write_config(tmp_path), env={})
        model = load_responder(settings)  # the default responder, sha256-verified first
        messages = (Message("system", "You are terse."), Message("user", "Say the word 'ready'."))
        pieces: list[str] = []
        result = model.generate(messages, Sampling(max_tokens=8, temperature=0.0), on_token=pieces.append)
        assert result.text and "".join(pieces).strip() == result.text
        assert result.prompt_tokens == model.count(messages)
        assert 0 < result.completion_tokens <= 8
        assert result.model == settings.responder.model


# hostile answers: shown, never obeyed by the terminal (issue 12, item 4) ----------------------------

# Anything a terminal could obey; an independent oracle, not the module under test.
TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
ESCAPES = (
    "\x1b[2J\x1b[H \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b]52;c;ZXZpbA==\x07 \x9b31m \x90q\x9c "
    "\u202eevil\u202c \u2066iso\u2069 over\rwritten line\u2028sep para\u2029sep next\x85line nul\x00 del\x7f bell\x07"
)
HOSTILE_ANSWER = f"[bold red]Hello[/] [@click=app.quit]x {ESCAPES} end\r\nof answer"


def hostile_appliance(pipeline: Pipeline, store: Store, fake_responder: FakeResponder) -> Any:
    """What ``_chat`` uses of a built appliance: the pipeline (over the fake responder), its session
    services and the store."""
    fake_responder.default = HOSTILE_ANSWER
    return SimpleNamespace(pipeline=pipeline, sessions=pipeline.sessions, store=store)


def stored_answers(store: Store) -> list[str]:
    [session] = store.sessions()
    return [t.text for t in store.turns(session["id"]) if t.role == "agent"]


class TestHostileAnswers:
    def test_line_mode_prints_one_safe_line_per_answer(self, pipeline, store, fake_responder, monkeypatch, capsys):
        monkeypatch.setattr(sys, "stdin", io.StringIO("hi\nagain \x1b[2J\n"))
        _chat(hostile_appliance(pipeline, store, fake_responder), None, None, False)
        out = capsys.readouterr().out
        answers = stored_answers(store)
        assert len(answers) == 2 and "\x1b[2J" in answers[0]  # stored as the model said it
        assert out.count("\n") == 2 and len(out.splitlines()) == 2  # one line each, whatever splits lines
        assert not TERMINAL_CONTROL.findall(out) and "\r" not in out
        line = out.splitlines()[0]
        assert line.startswith("[bold red]Hello[/] [@click=app.quit]x ␛[2J␛[H ␛]8;;http://evil.example␛\\link")
        assert "␛]52;c;ZXZpbA==␇" in line and "over␍written line sep para sep next line nul␀ del␡" in line
        assert line.endswith("end of answer")

    def test_terminal_mode_streams_a_safe_answer(self, pipeline, store, fake_responder, monkeypatch, capsys):
        said = iter(["hello"])

        def typed(prompt: str = "") -> str:
            try:
                return next(said)
            except StopIteration:
                raise EOFError from None

        monkeypatch.setattr(sys, "stdin", SimpleNamespace(isatty=lambda: True))
        monkeypatch.setattr(builtins, "input", typed)
        _chat(hostile_appliance(pipeline, store, fake_responder), None, None, False)
        captured = capsys.readouterr()
        assert not TERMINAL_CONTROL.findall(captured.out + captured.err) and "\r" not in captured.out
        assert captured.out.startswith("agent> [bold red]Hello[/] [@click=app.quit]x ␛[2J␛[H")
        assert "over␍written line\nsep para\nsep next\nline" in captured.out  # separators shown as line breaks
        assert captured.out.endswith("end \nof answer\n")

    def test_streamer_across_pieces(self):
        out = io.StringIO()
        streamer = _Streamer(prefix="agent> ", out=out)
        for piece in ("  ", "a\x1b", "[2J\r", "\nb\r", "c\ud800\u202e", "d\r"):  # CRLF and escapes cut in two
            streamer.write(piece)
        streamer.finish()
        assert out.getvalue() == "agent> a␛[2J \nb␍c\ufffd\ufffdd\n"

    def test_guard_lines_are_safe(self, capsys):
        entity = Entity("order_id", "A-1\x1b]52;c;eA==\x07", 0, 5, "A1")
        check = CheckResult(
            findings=(Finding(entity, "contradiction", expected="\u202eA-2\r\n"),),
            action=GuardAction.REGENERATE,
            original="first draft",
        )
        record = TurnRecord("mid", "m", Manifest("raw", 10, 5, ()), 5, 3, Timings(), check)
        result = TurnResult(
            "s", Turn("s", 0, "customer", "hi"), Turn("s", 1, "agent", "fixed \x1b[31mred\x1b[0m"), record
        )
        _show_guard(result)
        captured = capsys.readouterr()
        assert captured.out == "(corrected by the guard, regenerate) agent> fixed ␛[31mred␛[0m\n"
        assert captured.err == "  ! contradiction: A-1␛]52;c;eA==␇ (the conversation says \ufffdA-2)\n"
