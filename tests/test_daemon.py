"""The daemon as a process (real SmolLM2 model): readiness and watchdog messages, SIGTERM, restart,
the Unix socket, and a client that goes away; plus the per-model queue's fairness and the watchdog's
silence on a stuck model, without a process."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import socket
import ssl
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from appliance.config import ROOT
from appliance.errors import Busy, Cancelled
from appliance.turn.queue import FairQueue

from .support import (
    MODELS_DIR,
    TEST_MODEL,
    eventually,
    eventually_async,
    free_port,
    metric,
    samples,
    wait_until_ready,
    write_config,
)

MODEL_FILE = MODELS_DIR / "SmolLM2-135M-Instruct.Q4_1.gguf"
needs_model = pytest.mark.skipif(not MODEL_FILE.exists(), reason="run scripts/setup test to fetch SmolLM2-135M")


# a real daemon process -------------------------------------------------------------------------


def model_config(max_tokens: int = 48, extra: str = "") -> str:
    """The test model, one thread (a shared 2-core box), and only the parts these tests are about:
    no embedding model to load (recall off), and one generation per answer (the guard flags rather
    than regenerates, so the streamed text is the stored text)."""
    return (
        f'[responder]\nmodel = "{TEST_MODEL}"\nn_ctx = 2048\nmax_tokens = {max_tokens}\nn_threads = 1\n'
        f'[context]\nbudget_tokens = 1024\n[recall]\nenabled = false\n[guard]\npolicy = "flag"\n{extra}'
    )


@dataclass
class Daemon:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path
    database: Path
    token: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def client(self, **kwargs: object) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=300, **kwargs)  # type: ignore[arg-type]

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = 300) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


def start_daemon(
    tmp_path: Path,
    *,
    max_tokens: int = 48,
    server: str = "",
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    token: str | None = None,
    name: str = "daemon",
    extra: str = "",
    tls: ssl.SSLContext | None = None,
) -> Daemon:
    """Start ``appliance serve`` on a free port with the test model, and wait for /readyz; ``extra``
    is more of the config file (whole sections); with ``tls`` (how to verify it) the daemon serves
    https, its keys given in ``server``."""
    extra = extra + "[server]\n"
    if token is not None:
        (tmp_path / "token").write_text(token + "\n")
        extra += f'token_file = "{tmp_path / "token"}"\n'
    extra += server  # last: it may open sub-tables such as [server.tokens]
    config = write_config(tmp_path, model_config(max_tokens, extra))
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("APPLIANCE", "NOTIFY_SOCKET", "WATCHDOG_"))}
    log = tmp_path / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "appliance", "--config", str(config), "serve", "--port", str(port), *args],
            cwd=ROOT,
            env={**clean, **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    daemon = Daemon(
        proc,
        f"{'https' if tls else 'http'}://127.0.0.1:{port}",
        log,
        tmp_path / "app.db",
        token,
        {"Authorization": f"Bearer {token}"} if token else {},
    )
    try:
        wait_until_ready(proc, f"{daemon.url}/readyz", log, headers=daemon.headers, verify=tls or True)
    except AssertionError:
        daemon.stop()
        raise
    return daemon


class NotifyListener:
    """A real AF_UNIX datagram socket standing in for systemd's, read by a thread as systemd would."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.messages: list[str] = []
        self.seen = 0
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            data = self.sock.recv(4096)
            with self.arrived:
                self.messages.append(data.decode())
                self.arrived.notify_all()

    def until(self, found: Callable[[str], bool], timeout: float = 300) -> list[str]:
        """The messages after the last call, up to and including the first that ``found`` accepts."""
        with self.arrived:

            def ready() -> bool:
                return any(found(m) for m in self.messages[self.seen :])

            assert self.arrived.wait_for(ready, timeout), f"no such message in {self.messages}"
            end = next(i for i in range(self.seen, len(self.messages)) if found(self.messages[i])) + 1
            batch, self.seen = self.messages[self.seen : end], end
            return batch


@pytest.fixture
def daemons() -> Iterator[list[Daemon]]:
    """Daemons started by a test; any still running at its end are stopped."""
    started: list[Daemon] = []
    yield started
    for d in started:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait(10)


def wait_idle(client: httpx.Client, timeout: float = 300) -> None:
    """Until no answer is being generated (after a cancel, the model stops at its next chunk)."""

    def idle() -> bool:
        text = client.get("/metrics").text
        waiting = [value for _, value in samples(text, "appliance_queue_waiting")]
        return metric(text, "appliance_answering") == 0 and bool(waiting) and not any(waiting)

    eventually(idle, "the daemon to answer nothing and queue nothing", timeout=timeout, every=0.05)


# readiness, watchdog, SIGTERM, restart ------------------------------------------------------------


@pytest.mark.real_model
@pytest.mark.daemon
@needs_model
class TestLifecycle:
    def test_notify_sigterm_and_restart_continue_the_session(self, tmp_path: Path, daemons: list[Daemon]):
        notify_path = tmp_path / "notify.sock"
        notify = NotifyListener(notify_path)
        # A 2 s watchdog window: pings at most once a second.
        first = start_daemon(
            tmp_path,
            env={"NOTIFY_SOCKET": str(notify_path), "WATCHDOG_USEC": "2000000"},
            server="shutdown_grace_s = 300\n",
        )
        daemons.append(first)

        messages = notify.until(lambda m: "READY=1" in m)
        assert messages[0].startswith("STATUS=")  # loading came before ready
        assert "STATUS=serving on http://127.0.0.1:" in messages[-1]

        with first.client() as http:
            session = http.post("/v1/sessions").json()["id"]
            one = http.post(f"/v1/sessions/{session}/messages", json={"text": "My order is A-5521."})
            assert one.status_code == 200
            # An answer in flight when SIGTERM arrives is finished and stored whole.
            with http.stream(
                "POST", f"/v1/sessions/{session}/messages", json={"text": "Where is it?", "stream": True}
            ) as s:
                lines = s.iter_lines()
                assert next(lines) == "event: token"
                first.proc.send_signal(signal.SIGTERM)
                rest = "\n".join(lines)
            assert "event: done" in rest

        later = notify.until(lambda m: m.startswith("STOPPING=1"))
        assert "WATCHDOG=1" in later
        assert first.proc.wait(300) == 0, first.output()
        assert "stopped cleanly" in first.output()

        # A restarted daemon (this time also on a Unix socket) continues the same session.
        sock_path = tmp_path / "run" / "appliance.sock"
        second = start_daemon(tmp_path, args=("--socket", str(sock_path)), name="second")
        daemons.append(second)
        assert stat.S_IMODE(sock_path.stat().st_mode) == 0o660
        with httpx.Client(
            transport=httpx.HTTPTransport(uds=str(sock_path)), base_url="http://appliance", timeout=300
        ) as http:
            before = http.get(f"/v1/sessions/{session}").json()
            assert [t["role"] for t in before["turns"]] == ["customer", "agent", "customer", "agent"]
            assert [r["index"] for r in before["records"]] == [1, 3]
            answer = http.post(f"/v1/sessions/{session}/messages", json={"text": "Thanks, anything else?"}).json()
        assert answer["agent"]["index"] == 5
        assert answer["manifest"]["verbatim_turns"] == [0, 1, 2, 3]  # the raw policy carried the old turns
        assert second.stop() == 0
        assert not sock_path.exists()


@pytest.mark.real_model
@pytest.mark.daemon
@needs_model
class TestClientGoesAway:
    """A long answer (400 tokens) is cancelled the moment its client leaves; nothing is stored."""

    @pytest.fixture(scope="class")
    def daemon(self, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
        # Answers of exactly 400 tokens: long enough that a client always leaves in the middle.
        d = start_daemon(
            tmp_path_factory.mktemp("away"), max_tokens=400, env={"APPLIANCE__RESPONDER__IGNORE_EOS": "true"}
        )
        yield d
        assert d.stop() == 0, d.output()

    def test_disconnect_mid_stream_stores_nothing(self, daemon: Daemon):
        with daemon.client() as http:
            session = http.post("/v1/sessions").json()["id"]
            with http.stream(
                "POST",
                f"/v1/sessions/{session}/messages",
                json={
                    "text": "Please count from 1 to 300, one number after another, separated by commas.",
                    "stream": True,
                },
            ) as s:
                lines = s.iter_lines()
                assert next(lines) == "event: token"
            wait_idle(http)
            assert http.get(f"/v1/sessions/{session}").json()["turns"] == []
            # The session is unharmed: the next answer is turn 0 and 1.
            again = http.post(f"/v1/sessions/{session}/messages", json={"text": "Hello?"}).json()
            assert again["customer"]["index"] == 0 and again["agent"]["index"] == 1

    def test_client_timeout_without_streaming_stores_nothing(self, daemon: Daemon):
        with daemon.client() as http:
            session = http.post("/v1/sessions").json()["id"]
        # A client that gives up waiting and goes away (its connection closes with it).
        with daemon.client() as impatient, pytest.raises(httpx.ReadTimeout):
            impatient.post(
                f"/v1/sessions/{session}/messages",
                timeout=httpx.Timeout(60, read=0.5),
                json={"text": "Please count from 1 to 300, one number after another, separated by commas."},
            )
        with daemon.client() as http:
            wait_idle(http)
            assert http.get(f"/v1/sessions/{session}").json()["turns"] == []

    def test_openai_stream_disconnect_stores_nothing(self, daemon: Daemon):
        with daemon.client() as http:
            session = http.post("/v1/sessions").json()["id"]
            body = {
                "model": "x",
                "stream": True,
                "session_id": session,
                "messages": [
                    {
                        "role": "user",
                        "content": "Please count from 1 to 300, one number after another, separated by commas.",
                    }
                ],
            }
            with http.stream("POST", "/v1/chat/completions", json=body) as s:
                lines = s.iter_lines()
                assert next(lines).startswith("data: ")
            wait_idle(http)
            assert http.get(f"/v1/sessions/{session}").json()["turns"] == []


@pytest.mark.daemon
class TestStartupChecks:
    """Refused before any model loads: the process exits 2 naming the setting."""

    def test_a_public_address_needs_a_token(self, tmp_path: Path):
        config = write_config(tmp_path, model_config())
        done = subprocess.run(
            [sys.executable, "-m", "appliance", "--config", str(config), "serve", "--host", "0.0.0.0"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2
        assert "server.token_file" in done.stderr

    def test_an_empty_token_file_is_refused(self, tmp_path: Path):
        (tmp_path / "token").write_text("\n")
        config = write_config(tmp_path, model_config(extra=f'[server]\ntoken_file = "{tmp_path / "token"}"\n'))
        done = subprocess.run(
            [sys.executable, "-m", "appliance", "--config", str(config), "serve"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2 and "is empty" in done.stderr


# the per-model queue, without a model -------------------------------------------------------------------


class TestFairQueue:
    def test_sessions_take_turns_and_each_keeps_its_order(self):
        queue = FairQueue("fake", max_waiting=100, retry_after=1).start()
        gate = threading.Event()
        order: list[str] = []
        blocker = queue.submit("x", lambda job: gate.wait(10))
        jobs = [
            queue.submit(key, lambda job, n=n: order.append(n))
            for key, n in [("a", "a1"), ("a", "a2"), ("a", "a3"), ("b", "b1"), ("b", "b2"), ("c", "c1")]
        ]
        gate.set()
        for job in [blocker, *jobs]:
            job.future.result(10)
        queue.close(timeout=10)
        assert order == ["a1", "b1", "c1", "a2", "b2", "a3"]

    def test_a_full_queue_is_busy_with_a_retry_time(self):
        queue = FairQueue("fake", max_waiting=2, retry_after=3).start()
        gate = threading.Event()
        running = queue.submit("a", lambda job: gate.wait(10))
        eventually(lambda: queue.running, "the first job to run")
        waiting = [queue.submit("b", lambda job: None), queue.submit("c", lambda job: None)]
        with pytest.raises(Busy) as info:
            queue.submit("d", lambda job: None)
        assert info.value.retry_after == 3
        gate.set()
        for job in [running, *waiting]:
            job.future.result(10)
        queue.close(timeout=10)

    def test_a_withdrawn_job_never_runs_and_frees_its_place(self):
        queue = FairQueue("fake", max_waiting=1, retry_after=1).start()
        gate = threading.Event()
        ran: list[str] = []
        running = queue.submit("a", lambda job: gate.wait(10))
        eventually(lambda: queue.running, "the first job to run")
        waiting = queue.submit("b", lambda job: ran.append("b"))
        queue.withdraw(waiting)
        with pytest.raises(Cancelled):
            waiting.future.result(1)
        queue.submit("c", lambda job: ran.append("c"))  # its place is free again
        gate.set()
        running.future.result(10)
        queue.close(timeout=10)
        assert ran == ["c"]

    def test_stop_accepting_fails_waiting_jobs_and_lets_the_running_one_finish(self):
        queue = FairQueue("fake", max_waiting=5, retry_after=1).start()
        gate = threading.Event()
        running = queue.submit("a", lambda job: gate.wait(10) and "done")
        eventually(lambda: queue.running, "the first job to run")
        waiting = queue.submit("b", lambda job: "never")
        queue.stop_accepting()
        assert waiting.future.exception(1) is not None
        gate.set()
        assert running.future.result(10) == "done"
        queue.close(timeout=10)


class TestParallelQueue:
    """``responder.parallel`` > 1: as many jobs at once, never two of one session."""

    def test_sessions_run_side_by_side_and_a_session_keeps_one_at_a_time(self):
        queue = FairQueue("fake", max_waiting=100, retry_after=1, parallel=2).start()
        gate = threading.Event()
        inside: list[str] = []
        most = [0]
        lock = threading.Lock()

        def work(job: object, name: str) -> str:
            with lock:
                inside.append(name)
                most[0] = max(most[0], len(inside))
            gate.wait(10)
            with lock:
                inside.remove(name)
            return name

        jobs = [queue.submit(key, lambda job, n=n: work(job, n)) for key, n in [("a", "a1"), ("a", "a2"), ("b", "b1")]]
        eventually(lambda: sorted(inside) == ["a1", "b1"], "a1 and b1 running together")
        assert jobs[1].future.running() is False  # a2 waits for a1, though a worker is free
        gate.set()
        assert [j.future.result(10) for j in jobs] == ["a1", "a2", "b1"]
        assert most[0] == 2
        queue.close(timeout=10)

    def test_a_client_over_its_share_of_sequences_waits_while_another_can_run(self):
        queue = FairQueue("fake", max_waiting=10, retry_after=1, parallel=2, share=0.5)  # one each
        gate = threading.Event()
        started: list[str] = []

        def work(job: object, name: str) -> None:
            started.append(name)
            gate.wait(10)

        # all queued before the workers start: client A's second session comes before B's first
        jobs = [
            queue.submit(key, lambda job, n=key: work(job, n), owner=owner)
            for key, owner in [("a1", "A"), ("a2", "A"), ("b1", "B")]
        ]
        queue.start()
        eventually(lambda: len(started) == 2, "two jobs running")
        assert sorted(started) == ["a1", "b1"]  # a2 waits: A holds its share
        gate.set()
        for job in jobs:
            job.future.result(10)
        assert started[-1] == "a2"
        queue.close(timeout=10)

    def test_a_client_alone_may_use_every_sequence(self):
        queue = FairQueue("fake", max_waiting=10, retry_after=1, parallel=2, share=0.5).start()
        gate = threading.Event()
        jobs = [queue.submit(key, lambda job: gate.wait(10), owner="A") for key in ("a1", "a2")]
        eventually(lambda: len(queue._running) == 2, "both of A's jobs running: nobody else waits")
        gate.set()
        for job in jobs:
            job.future.result(10)
        queue.close(timeout=10)

    def test_close_cancels_every_running_job(self):
        queue = FairQueue("fake", max_waiting=10, retry_after=1, parallel=3).start()
        jobs = [queue.submit(k, lambda job: job.cancel.wait(10)) for k in "abc"]
        eventually(lambda: len(queue._running) == 3, "three jobs running")
        queue.close(timeout=10)
        assert all(j.future.result(1) is True for j in jobs)
        assert not queue.alive()

    def test_stalled_looks_at_every_running_job(self):
        queue = FairQueue("fake", max_waiting=10, retry_after=1, parallel=2).start()
        gate = threading.Event()

        def ticking(job: object) -> None:
            while not gate.wait(0.01):
                job.progress()  # type: ignore[attr-defined]

        busy = queue.submit("a", ticking)
        stuck = queue.submit("b", lambda job: gate.wait(10))
        eventually(lambda: queue.stalled(0.2), "the stuck job to be seen", timeout=10)
        gate.set()
        for job in (busy, stuck):
            job.future.result(10)
        queue.close(timeout=10)


class TestWatchdog:
    """A generation that makes no progress stops the watchdog pings (so systemd restarts the daemon)."""

    def test_pings_stop_while_the_model_is_stuck(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
        from appliance.serve.sdnotify import Notifier
        from appliance.serve.server import _watchdog

        listener = NotifyListener(tmp_path / "notify")
        # Each reading of this clock is a second later: every call of watchdog() pings, so a ping
        # the loop should have held back cannot hide behind the rate limit.
        notifier = Notifier(str(tmp_path / "notify"), watchdog_usec=20_000, clock=itertools.count().__next__)
        queue = FairQueue("fake", max_waiting=4, retry_after=1).start()
        found: list[bool] = []  # what each round of the watchdog saw: a stalled model or not
        stalled = queue.stalled

        def looked(limit_s: float) -> bool:
            found.append(stalled(limit_s))
            return found[-1]

        monkeypatch.setattr(queue, "stalled", looked)

        async def watch_until(done: Callable[[], bool], what: str) -> None:
            task = asyncio.create_task(_watchdog(notifier, queue, hung_after_s=0.05))
            try:
                await eventually_async(done, what, timeout=30)
            finally:
                task.cancel()

        asyncio.run(watch_until(lambda: "WATCHDOG=1" in listener.messages, "a ping for the idle queue"))
        notifier.status("idle")  # the pings of those rounds, all read before the next part begins
        assert "WATCHDOG=1" in listener.until(lambda m: m == "STATUS=idle")  # a healthy, idle queue is pinged for

        gate = threading.Event()
        stuck = queue.submit("a", lambda job: gate.wait(30))  # runs, and never reports progress
        eventually(lambda: stalled(0.05), "the job to count as stalled")
        before = len(found)
        asyncio.run(watch_until(lambda: found[before:].count(True) >= 3, "three rounds that see the stalled model"))
        notifier.status("checked")  # datagrams arrive in order: any ping sent in those rounds comes first
        assert listener.until(lambda m: m == "STATUS=checked") == ["STATUS=checked"]
        gate.set()
        stuck.future.result(10)
        queue.close(timeout=10)
