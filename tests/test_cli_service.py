"""`appliance start`, `status` and `stop`: the daemon `start` launches is recorded, reported and stopped;
no other process is ever signalled, and a daemon that systemd runs is left to systemctl."""

from __future__ import annotations

import http.server
import os
import signal
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli, running

from .support import free_port, write_config
from .test_daemon import model_config, needs_model

CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("APPLIANCE", "NOTIFY_SOCKET", "WATCHDOG_"))}


def appliance(config: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The real command line, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "appliance", "--config", str(config), *args],
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
        timeout=timeout,
    )


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A live process that is not the daemon: the one a recycled pid would now name."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def leftover(tmp_path: Path) -> Iterator[None]:
    """Whatever daemon a test's `start` launched is gone at its end, even if the test failed."""
    yield
    launch = running.recorded(tmp_path / running.PIDFILE_NAME)
    if launch is not None and running.alive(launch):
        os.kill(launch.pid, signal.SIGKILL)


@pytest.mark.real_model
@pytest.mark.daemon
@needs_model
def test_start_status_stop_status(tmp_path: Path, leftover: None):
    config = write_config(tmp_path, model_config(extra=f"[server]\nport = {free_port()}\n"))
    started = appliance(config, "start", "--no-console")
    assert started.returncode == 0, started.stderr
    launch = running.recorded(tmp_path / running.PIDFILE_NAME)
    assert launch is not None and running.alive(launch)

    up = appliance(config, "status")
    assert up.returncode == 0, up.stderr
    assert "running: a daemon answers" in up.stdout and "(ready)" in up.stdout
    assert f"pid        {launch.pid}" in up.stdout
    assert "started by appliance start" in up.stdout and "memory" in up.stdout

    stopped = appliance(config, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopping the daemon (pid {launch.pid})" in stopped.stderr and "stopped" in stopped.stderr
    assert not running.alive(launch)
    assert "stopped cleanly" in Path(launch.log).read_text()  # SIGTERM: the daemon's own clean shutdown
    assert not (tmp_path / running.PIDFILE_NAME).exists()

    down = appliance(config, "status")
    assert down.returncode == 3, down.stdout + down.stderr
    assert "not running" in down.stdout


class TestStop:
    def config(self, tmp_path: Path) -> Path:
        return write_config(tmp_path, f"[server]\nport = {free_port()}\n")  # nothing answers there

    def test_a_pid_with_another_start_time_is_never_signalled(self, tmp_path: Path, sleeper: subprocess.Popen[bytes]):
        ticks = running.start_ticks(sleeper.pid)
        assert ticks is not None
        pidfile = tmp_path / running.PIDFILE_NAME
        pidfile.write_text(f'{{"pid": {sleeper.pid}, "started": {ticks - 1}, "log": "x"}}\n')
        result = CliRunner().invoke(cli, ["--config", str(self.config(tmp_path)), "stop"])
        assert result.exit_code == 0, result.output
        assert "nothing signalled" in result.stderr and "no daemon is running" in result.stderr
        assert sleeper.poll() is None  # still alive: the pid was another process's
        assert not pidfile.exists()

    def test_nothing_running(self, tmp_path: Path):
        result = CliRunner().invoke(cli, ["--config", str(self.config(tmp_path)), "stop"])
        assert result.exit_code == 0 and "no daemon is running" in result.stderr

    def test_a_daemon_under_systemd_is_left_to_systemctl(
        self, tmp_path: Path, sleeper: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
    ):
        monkeypatch.setattr(running, "ask", lambda url, tls=None: running.Answer(200, sleeper.pid))
        monkeypatch.setattr(running, "_unit", lambda pid: "appliance.service")
        result = CliRunner().invoke(cli, ["--config", str(self.config(tmp_path)), "stop"])
        assert result.exit_code == 1
        assert "systemctl stop appliance.service" in result.stderr
        assert sleeper.poll() is None

    def test_a_daemon_started_by_hand_is_not_stopped(
        self, tmp_path: Path, sleeper: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
    ):
        monkeypatch.setattr(running, "ask", lambda url, tls=None: running.Answer(200, sleeper.pid))
        monkeypatch.setattr(running, "_unit", lambda pid: None)
        result = CliRunner().invoke(cli, ["--config", str(self.config(tmp_path)), "stop"])
        assert result.exit_code == 1 and "did not launch it: not stopped" in result.stderr
        assert sleeper.poll() is None


class TestStatus:
    def test_nothing_running_exits_3(self, tmp_path: Path):
        config = write_config(tmp_path, f"[server]\nport = {free_port()}\n")
        result = CliRunner().invoke(cli, ["--config", str(config), "status"])
        assert result.exit_code == 3 and "not running: nothing answers at http://127.0.0.1:" in result.output

    def test_a_launched_daemon_still_loading_counts_as_running(self, tmp_path: Path, sleeper: subprocess.Popen[bytes]):
        config = write_config(tmp_path, f"[server]\nport = {free_port()}\n")
        running.record(tmp_path / running.PIDFILE_NAME, sleeper.pid, tmp_path / "appliance.log")
        result = CliRunner().invoke(cli, ["--config", str(config), "status"])
        assert result.exit_code == 0, result.output
        assert "starting: the daemon does not answer" in result.output
        assert f"pid        {sleeper.pid}" in result.output and "started by appliance start" in result.output

    def test_where_each_model_runs_as_the_daemon_reports_it(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
        devices = (("responder", "gpu (NVIDIA L4, 29 layers)"), ("summarizer", "cpu\x1b[2J"))
        monkeypatch.setattr(running, "ask", lambda url, tls=None: running.Answer(200, os.getpid(), None, devices))
        result = CliRunner().invoke(cli, ["--config", str(write_config(tmp_path)), "status"])
        assert result.exit_code == 0, result.output
        assert "  responder  gpu (NVIDIA L4, 29 layers)\n" in result.output
        assert "  summarizer cpu\u241b[2J\n" in result.output  # a terminal's escapes shown, never obeyed

    def test_help_documents_the_exit_codes(self):
        help_text = " ".join(CliRunner().invoke(cli, ["status", "--help"]).output.split())
        assert "0 when a daemon runs" in help_text and "3 when none does" in help_text


def test_the_console_says_on_exit_that_the_daemon_runs_on(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
):
    import appliance.tui.app

    config = write_config(tmp_path)
    running.record(tmp_path / running.PIDFILE_NAME, sleeper.pid, tmp_path / "appliance.log")
    monkeypatch.setattr(running, "ask", lambda url, tls=None: running.Answer(200))
    monkeypatch.setattr(appliance.tui.app, "run_tui", lambda settings, kiosk: 0)
    result = CliRunner().invoke(cli, ["--config", str(config), "start"])
    assert result.exit_code == 0
    assert f"The daemon (pid {sleeper.pid}) is still running in the background" in result.stderr
    assert f"--config {config} stop" in result.stderr


class TestProcesses:
    def test_systemd_units_from_the_control_group(self):
        assert running.unit_of("0::/system.slice/appliance.service\n") == "appliance.service"
        assert running.unit_of("12:pids:/x\n1:name=systemd:/system.slice/appliance.service\n") == "appliance.service"
        assert running.unit_of("0::/user.slice/user-1000.slice/session-3.scope\n") is None
        assert running.unit_of("0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n") is None
        assert running.unit_of("0::/\n") is None

    def test_a_zombie_or_missing_process_has_no_start_time(self):
        proc = subprocess.Popen(["true"])
        while running.start_ticks(proc.pid) is not None:  # exited but not reaped: a zombie
            pass
        proc.wait()
        assert running.start_ticks(proc.pid) is None

    def test_ask_reads_the_status_and_the_pid_over_tcp_and_a_unix_socket(self, tmp_path: Path):
        class NotReady(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(503 if self.path == "/readyz" else 404)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        class UnixServer(socketserver.UnixStreamServer):
            def get_request(self):  # BaseHTTPRequestHandler expects an address pair
                conn, _ = super().get_request()
                return conn, ("local", 0)

        tcp = http.server.HTTPServer(("127.0.0.1", 0), NotReady)
        unix = UnixServer(str(tmp_path / "s.sock"), NotReady)
        for server in (tcp, unix):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            assert running.ask(f"http://127.0.0.1:{tcp.server_port}") == running.Answer(503, os.getpid())
            assert running.ask(f"unix:{tmp_path / 's.sock'}") == running.Answer(503, os.getpid())
            assert running.ask(f"http://127.0.0.1:{free_port()}") == running.Answer(None)
        finally:
            for server in (tcp, unix):
                server.shutdown()
                server.server_close()

    def test_ask_reads_the_bundle_and_the_devices_a_daemon_reports(self):
        class Ready(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = b'{"ready": true, "bundle": "unsigned", "devices": {"responder": "gpu (NVIDIA L4, 29 layers)"}}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Ready)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            answer = running.ask(f"http://127.0.0.1:{server.server_port}")
        finally:
            server.shutdown()
            server.server_close()
        assert (answer.bundle, answer.devices) == ("unsigned", (("responder", "gpu (NVIDIA L4, 29 layers)"),))
