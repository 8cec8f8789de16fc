"""systemd: the unit files pass `systemd-analyze verify` as installed, and the notify/watchdog
messages arrive on a real AF_UNIX datagram socket."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from appliance.config import ROOT
from appliance.serve.sdnotify import Notifier

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is missing (scripts/setup installs it)")


def install(root: Path, *args: str) -> Path:
    """Run scripts/install-service into ``root``; the folder holding the installed units."""
    done = subprocess.run(
        [ROOT / "scripts" / "install-service", "--root", str(root), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return root / "etc" / "systemd" / "system"


def verify(units: Path) -> subprocess.CompletedProcess[str]:
    assert ANALYZE is not None
    env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{units}:"}  # the trailing colon keeps the default path too
    return subprocess.run(
        [ANALYZE, "verify", str(units / "appliance.service")], capture_output=True, text=True, timeout=60, env=env
    )


class TestUnits:
    @needs_analyze
    @pytest.mark.parametrize("args", [(), ("--gpu",)])
    def test_installed_units_verify_cleanly(self, tmp_path: Path, args: tuple[str, ...]):
        units = install(tmp_path, *args)
        assert (units / "appliance.service.d" / "gpu.conf").exists() == bool(args)
        done = verify(units)
        # Unknown keys are only warnings to systemd-analyze: demand silence, not just exit 0.
        assert done.returncode == 0 and done.stderr == "", done.stderr

    @needs_analyze
    def test_verify_catches_a_broken_unit(self, tmp_path: Path):
        units = install(tmp_path)
        unit = units / "appliance.service"
        unit.write_text(unit.read_text().replace("Type=notify", "Type=notify\nWatchdogSecs=5"))
        assert "Unknown key" in verify(units).stderr

    def test_installed_unit_runs_this_checkout(self, tmp_path: Path):
        unit = (install(tmp_path) / "appliance.service").read_text()
        assert f"ExecStart={ROOT}/.venv/bin/appliance serve" in unit
        assert "/opt/appliance" not in unit
        assert (tmp_path / "etc" / "appliance" / "config.toml").read_text() == (ROOT / "config.toml").read_text()

    def test_unit_asks_for_readiness_watchdog_and_hardening(self):
        keys = {}
        for line in (ROOT / "systemd" / "appliance.service").read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                key, value = line.split("=", 1)
                keys.setdefault(key, []).append(value)
        for key, value in {
            "Type": "notify",
            "Restart": "on-failure",
            "DynamicUser": "yes",
            "StateDirectory": "appliance",
            "NoNewPrivileges": "yes",
            "ProtectSystem": "strict",
            "ProtectHome": "yes",
            "PrivateTmp": "yes",
            "IPAddressDeny": "any",
            "IPAddressAllow": "localhost",
            "Environment": "APPLIANCE__PATHS__DATABASE=/var/lib/appliance/appliance.db",
        }.items():
            assert value in keys.get(key, []), key
        assert "WatchdogSec" in keys

    @needs_analyze
    def test_security_exposure_stays_low(self, tmp_path: Path):
        units = install(tmp_path)
        # --threshold counts on a 0-100 scale: 20 is an exposure of 2.0 of 10 (the unit scores 1.0, "OK").
        done = subprocess.run(
            [ANALYZE, "security", "--offline=true", "--threshold=20", str(units / "appliance.service")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / "notify")
    sock.bind(path)
    sock.settimeout(5)
    yield sock, path
    sock.close()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TestNotifier:
    def test_ready_status_and_stopping_arrive_as_datagrams(self, listener: tuple[socket.socket, str]):
        sock, path = listener
        notifier = Notifier(path)
        assert notifier.ready("serving on x")
        assert sock.recv(256) == b"READY=1\nSTATUS=serving on x"
        assert notifier.status("loading")
        assert sock.recv(256) == b"STATUS=loading"
        assert notifier.stopping()
        assert sock.recv(256) == b"STOPPING=1"

    def test_watchdog_is_rate_limited_to_half_the_window(self, listener: tuple[socket.socket, str]):
        sock, path = listener
        clock = Clock()
        notifier = Notifier(path, watchdog_usec=10_000_000, clock=clock)  # a 10 s window: ping every 5 s
        assert notifier.watchdog_interval == 5.0
        sent = []
        for step in range(21):  # 0 .. 10 s in half-second steps
            clock.now = 100.0 + step * 0.5
            sent.append(notifier.watchdog())
        assert sent.count(True) == 3  # at 0, 5 and 10 s
        sock.setblocking(False)
        assert [sock.recv(64) for _ in range(3)] == [b"WATCHDOG=1"] * 3
        with pytest.raises(BlockingIOError):
            sock.recv(64)

    def test_abstract_namespace_socket(self):
        name = f"appliance-test-{os.getpid()}"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.bind("\0" + name)
            sock.settimeout(5)
            assert Notifier("@" + name).ready()
            assert sock.recv(64) == b"READY=1"

    def test_silent_outside_systemd(self):
        notifier = Notifier.from_env({})
        assert not notifier.enabled
        assert notifier.ready() is False and notifier.watchdog() is False

    def test_watchdog_only_for_the_process_it_names(self, listener: tuple[socket.socket, str]):
        _, path = listener
        other = Notifier.from_env({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "1"})
        mine = Notifier.from_env({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000", "WATCHDOG_PID": str(os.getpid())})
        assert other.watchdog_interval is None and mine.watchdog_interval == 2.0

    def test_a_vanished_socket_does_not_raise(self, tmp_path: Path):
        assert Notifier(str(tmp_path / "gone")).ready() is False
