"""A throw-away Debian with systemd as PID 1, for checking the units under a real systemd.

The root file system is made once by ``debootstrap`` from Debian's packages (the only thing fetched,
at test set-up, from the package registry this machine reaches) and cached; every boot runs on a
volatile overlay of it (``systemd-nspawn --volatile=overlay``), so no run sees another's changes.
The checkout and its interpreter are bound read-only at their own paths, so the installed units run
exactly this checkout's ``.venv``; the container has its own network namespace (only loopback).
Commands run inside through ``nsenter`` into the container's init, which needs no machined.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

# systemd and what the interpreter and llama.cpp link against beyond a minimal Debian.
PACKAGES = (
    "systemd",
    "systemd-sysv",
    "dbus",
    "libgomp1",
    "libssl3",
    "libsqlite3-0",
    "libffi8",
    "libbz2-1.0",
    "liblzma5",
    "zlib1g",
    "libstdc++6",
    "libuuid1",
    "libexpat1",
    "libreadline8",
    "libncursesw6",
    "openssl",  # scripts/install-service --tls-self-signed
)
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
CACHE = Path(os.environ.get("APPLIANCE_TEST_ROOTFS_CACHE", "/var/cache/appliance-tests"))


class Unavailable(Exception):
    """The container cannot be made or booted here; the message says why (a skip reason)."""


def unavailable() -> str | None:
    """Why no container can boot on this machine, or None."""
    if sys.platform != "linux":
        return "systemd-nspawn needs Linux"
    if os.geteuid() != 0:
        return "booting a container with systemd-nspawn needs root"
    missing = [tool for tool in ("debootstrap", "systemd-nspawn", "nsenter") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} missing (scripts/setup installs debootstrap and systemd-container as root)"
    return None


def rootfs() -> Path:
    """The cached root file system, made by debootstrap on first use."""
    key = hashlib.sha256(" ".join((SUITE, MIRROR, *PACKAGES)).encode()).hexdigest()[:12]
    root = CACHE / f"{SUITE}-systemd-{key}"
    if (root / "usr" / "lib" / "systemd" / "systemd").exists():
        return root
    building = root.with_name(root.name + ".partial")
    shutil.rmtree(building, ignore_errors=True)
    building.parent.mkdir(parents=True, exist_ok=True)
    argv = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(building), MIRROR]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        shutil.rmtree(building, ignore_errors=True)
        raise Unavailable(f"debootstrap {SUITE} from {MIRROR} failed: {done.stdout[-400:]}{done.stderr[-400:]}")
    building.rename(root)  # complete or absent: an interrupted build is never taken for a root
    return root


class Container:
    """A booted container; :meth:`run` a command in it, :meth:`stop` it (also on exit)."""

    def __init__(self, root: Path, *, bind_ro: Sequence[Path] = (), bind: Sequence[tuple[str, str]] = ()) -> None:
        self.root = root
        self.bind_ro = tuple(dict.fromkeys(str(p) for p in bind_ro))
        self.bind = tuple(bind)
        self.proc: subprocess.Popen[bytes] | None = None
        self.init_pid = 0
        # The console, in a file: a pipe nobody reads would block the container once it fills.
        self.console = tempfile.TemporaryFile()

    def __enter__(self) -> Container:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 90.0) -> None:
        argv = [
            "systemd-nspawn",
            "--quiet",
            f"--directory={self.root}",
            "--boot",
            "--register=no",  # no machined on the host: find the init by its parent
            "--keep-unit",
            "--private-network",
            "--volatile=overlay",
            "--console=pipe",
            f"--machine=appliance-test-{os.getpid()}",
            *(f"--bind-ro={path}" for path in self.bind_ro),
            *(f"--bind={outside}:{inside}" for outside, inside in self.bind),
        ]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.console, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not self.init_pid:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise Unavailable(f"systemd-nspawn did not boot: {self.output()[-600:]}")
            self.init_pid = _child_named(self.proc.pid, "systemd")
            time.sleep(0.1)
        state = self.run("systemctl", "is-system-running", "--wait", timeout=max(1.0, deadline - time.monotonic()))
        while not state.stdout.strip() and time.monotonic() < deadline:  # its manager not listening yet
            time.sleep(0.2)
            state = self.run("systemctl", "is-system-running", "--wait", timeout=max(1.0, deadline - time.monotonic()))
        if state.stdout.strip() not in ("running", "degraded"):
            failed = self.run("systemctl", "--failed", "--no-pager").stdout
            self.stop()
            raise Unavailable(f"the container's systemd is {state.stdout.strip()!r}: {failed[-600:]}")

    def run(
        self, *argv: str, input: str | None = None, timeout: float = 60.0, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["nsenter", f"--target={self.init_pid}", "--all", *argv],
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {done.returncode}: {done.stdout[-800:]}{done.stderr[-800:]}")
        return done

    def journal(self, unit: str) -> str:
        return self.run("journalctl", "--unit", unit, "--no-pager", "--output=short-monotonic").stdout

    def output(self) -> str:
        self.console.seek(0)
        return self.console.read().decode(errors="replace")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # nspawn asks the container's systemd to power off
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _child_named(parent: int, name: str) -> int:
    """A direct child of ``parent`` whose command name is ``name`` (0 if none yet)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == parent and comm == name:
            return int(entry.name)
    return 0
