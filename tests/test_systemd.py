"""systemd: the unit files pass `systemd-analyze verify` as installed, keep their hardening (and
their `systemd-analyze security` exposure) and load the bearer tokens as credentials; and the
notify/watchdog messages arrive on a real AF_UNIX datagram socket."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from appliance.config import ROOT, load_settings
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


def verify(units: Path, unit: str = "appliance.service") -> subprocess.CompletedProcess[str]:
    assert ANALYZE is not None
    env = {**os.environ, "SYSTEMD_UNIT_PATH": f"{units}:"}  # the trailing colon keeps the default path too
    return subprocess.run([ANALYZE, "verify", str(units / unit)], capture_output=True, text=True, timeout=60, env=env)


def exposure_within(unit: Path, threshold: int) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze security` of an installed unit (with its drop-ins), failing above ``threshold``.

    The threshold counts on a 0-100 scale: 9 is an exposure of 0.9 of 10.
    """
    assert ANALYZE is not None
    return subprocess.run(
        [ANALYZE, "security", "--offline=true", f"--threshold={threshold}", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=unit.parent,
    )


def unit_keys(name: str) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for line in (ROOT / "systemd" / name).read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            keys.setdefault(key, []).append(value)
    return keys


class TestUnits:
    @needs_analyze
    @pytest.mark.parametrize("args", [(), ("--gpu",), ("--kiosk",)])
    def test_installed_units_verify_cleanly(self, tmp_path: Path, args: tuple[str, ...]):
        units = install(tmp_path, *args)
        assert (units / "appliance.service.d" / "gpu.conf").exists() == ("--gpu" in args)
        assert (units / "appliance-kiosk.service").exists() == ("--kiosk" in args)
        for unit in ["appliance.service", *(["appliance-kiosk.service"] if "--kiosk" in args else [])]:
            done = verify(units, unit)
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
        keys = unit_keys("appliance.service")
        for key, value in {
            "Type": "notify",
            "Restart": "on-failure",
            "DynamicUser": "yes",
            "Group": "appliance-operators",
            "StateDirectory": "appliance",
            "NoNewPrivileges": "yes",
            "ProtectSystem": "strict",
            "ProtectHome": "yes",
            "PrivateTmp": "yes",
            "PrivateIPC": "yes",
            "ProcSubset": "pid",
            "UMask": "0077",
            "LimitCORE": "0",
            "IPAddressDeny": "any",
            "IPAddressAllow": "localhost",
            "Environment": "APPLIANCE__PATHS__DATABASE=/var/lib/appliance/appliance.db",
        }.items():
            assert value in keys.get(key, []), key
        for key in ("WatchdogSec", "MemoryMax", "TasksMax", "LimitNOFILE"):
            assert key in keys, key

    def test_tokens_are_credentials_the_config_points_at(self):
        keys = unit_keys("appliance.service")
        assert sorted(keys["LoadCredential"]) == [
            f"{role}.token:/etc/appliance/tokens/{role}.token" for role in ("integration", "kiosk", "operator")
        ]
        env = dict(v.strip('"').split("=", 1) for v in keys["Environment"])
        assert env["APPLIANCE__SERVER__TOKEN_FILE"] == "%d/operator.token"
        # The value systemd sets (after %d) is a TOML inline table, as the config reads it.
        credentials = "/run/credentials/appliance.service"
        settings = load_settings(
            ROOT / "config.toml",
            env={
                name: value.replace("%d", credentials)
                for name, value in env.items()
                if name.startswith("APPLIANCE__SERVER__")
            },
        )
        assert settings.server.tokens == {
            f"{credentials}/kiosk.token": "kiosk",
            f"{credentials}/integration.token": "integration",
        }
        kiosk = unit_keys("appliance-kiosk.service")
        assert kiosk["LoadCredential"] == ["kiosk.token:/etc/appliance/tokens/kiosk.token"]
        assert "APPLIANCE__TUI__TOKEN_FILE=%d/kiosk.token" in kiosk["Environment"]

    def test_kiosk_unit_is_hardened_and_always_comes_back(self):
        keys = unit_keys("appliance-kiosk.service")
        for key, value in {
            "Restart": "always",  # the operator key never leaves tty1 blank
            "DynamicUser": "yes",
            "DevicePolicy": "closed",
            "DeviceAllow": "/dev/tty1 rw",
            "PrivateIPC": "yes",
            "PrivateMounts": "yes",
            "ProcSubset": "pid",
            "UMask": "0077",
            "LimitCORE": "0",
            "IPAddressDeny": "any",
        }.items():
            assert value in keys.get(key, []), key
        for key in ("MemoryMax", "TasksMax", "LimitNOFILE"):
            assert key in keys, key

    def test_install_writes_one_private_token_per_role(self, tmp_path: Path):
        install(tmp_path)
        tokens = tmp_path / "etc" / "appliance" / "tokens"
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o700
        written = {p.name: p.read_text().strip() for p in tokens.iterdir()}
        assert sorted(written) == ["integration.token", "kiosk.token", "operator.token"]
        assert len(set(written.values())) == 3 and all(len(t) >= 40 for t in written.values())
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in tokens.iterdir())
        install(tmp_path)  # a second install keeps them
        assert {p.name: p.read_text().strip() for p in tokens.iterdir()} == written

    @needs_analyze
    @pytest.mark.parametrize(
        ("args", "unit", "threshold"),
        [
            ((), "appliance.service", 9),  # exposure 0.9 "SAFE" (1.0 before ProcSubset, UMask, @resources)
            (("--kiosk",), "appliance-kiosk.service", 11),  # 1.1 (1.5 before); it needs its tty and loopback
            (("--gpu",), "appliance.service", 14),  # 1.4: the GPU's devices, JIT memory and /proc/driver
        ],
    )
    def test_security_exposure_stays_low(self, tmp_path: Path, args: tuple[str, ...], unit: str, threshold: int):
        units = install(tmp_path, *args)
        # An install under a home folder (or with pyenv's interpreter) gets hidden.conf: fake empty homes
        # with those folders bound back read-only, which systemd-analyze scores 0.1 above ProtectHome=yes.
        hidden = units / f"{unit}.d" / "hidden.conf"
        home = hidden.exists() and "ProtectHome=tmpfs" in hidden.read_text()
        done = exposure_within(units / unit, threshold + home)
        assert done.returncode == 0, done.stdout + done.stderr

    @pytest.mark.parametrize("args", [(), ("--kiosk",)])
    def test_folders_the_sandbox_hides_are_bound_back_read_only(self, tmp_path: Path, args: tuple[str, ...]):
        units = install(tmp_path, *args)
        places = [Path(p) for p in (ROOT, Path(sys.base_prefix))]
        homes = [str(p) for p in places if p.parts[1:2] in (("root",), ("home",))]
        hidden = [
            str(p) for p in places if p.parts[1:2] in (("root",), ("home",), ("tmp",)) or p.parts[1:3] == ("var", "tmp")
        ]
        for unit in ["appliance.service", *(["appliance-kiosk.service"] if args else [])]:
            dropin = units / f"{unit}.d" / "hidden.conf"
            if not hidden:
                assert not dropin.exists()
                continue
            keys = dict(line.split("=", 1) for line in dropin.read_text().splitlines() if "=" in line)
            assert keys == {**({"ProtectHome": "tmpfs"} if homes else {}), "BindReadOnlyPaths": " ".join(hidden)}

    @needs_analyze
    def test_the_exposure_check_catches_a_weakened_unit(self, tmp_path: Path):
        units = install(tmp_path)
        unit = units / "appliance.service"
        text = unit.read_text()
        for line in ("ProcSubset=pid\n", "SystemCallFilter=~@resources\n", "UMask=0077\n"):
            text = text.replace(line, "")
        unit.write_text(text)  # as it was before issue 12: 1.0
        assert exposure_within(unit, 9).returncode != 0


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
