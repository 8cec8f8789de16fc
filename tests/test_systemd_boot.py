"""The units under a real systemd: a Debian container with systemd as PID 1 (tests/container.py).

``systemd-analyze verify`` and ``security --offline`` (tests/test_systemd.py) read the units; only a
running systemd shows what fails at run time: a system-call filter that kills one of llama.cpp's
threads, a credential path that is wrong only when the unit starts, an interpreter hidden by
ProtectHome. Here scripts/install-service installs both units in the container, as at a branch, with
the tiny model and a self-signed certificate, and then: READY comes only after the models load; the
tokens and the TLS key arrive through LoadCredential=, and clients verify the certificate; an answer is generated under the full hardening; the watchdog restarts a hung
daemon; the kiosk comes back after the operator key's exit 75.

Skipped, with the reason, where no container can boot (not root, no systemd-nspawn or debootstrap,
no Debian mirror). The container has its own network namespace: the daemon's port is its own.
"""

from __future__ import annotations

import json
import os
import re
import select
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from appliance.config import ROOT
from tests.container import Container, Unavailable, rootfs, unavailable
from tests.support import MODELS_DIR, TEST_MODEL

pytestmark = [pytest.mark.systemd, pytest.mark.daemon, pytest.mark.real_model]

PYTHON = ROOT / ".venv" / "bin" / "python"
# A client run by the checkout's interpreter inside the container: method, path, token, JSON body.
# Over TLS, trusting ``ca`` (a file; empty: the system's authorities, which do not know the box).
CLIENT = """
import ssl, sys, urllib.error, urllib.request
base, ca, method, path, token, body = sys.argv[1:7]
headers = {"Content-Type": "application/json"} | ({"Authorization": "Bearer " + token} if token else {})
request = urllib.request.Request(base + path, body.encode() or None, headers, method=method)
context = ssl.create_default_context(cafile=ca or None) if base.startswith("https") else None
try:
    with urllib.request.urlopen(request, timeout=240, context=context) as response:
        print(response.status, response.read().decode())
except urllib.error.HTTPError as error:
    print(error.code, error.read().decode())
except OSError as error:
    print(0, error)  # nothing answers (yet)
"""
BASE = "https://127.0.0.1:8088"  # installed with --tls-self-signed: the daemon serves TLS, loopback too
CERT = "/etc/appliance/tls/appliance.crt"
# Short enough to see a restart within the test, long enough for a slow box's idle pings.
WATCHDOG = "[Service]\nWatchdogSec=6s\nTimeoutAbortSec=5s\n"
F12 = b"\x1b[24~"  # tui.operator_key in a Linux console's (and xterm's) encoding


def eventually(check: Callable[[], object], what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)


class Box:
    """The booted container with the appliance installed, and a pty bound as its /dev/tty1."""

    def __init__(self, container: Container, tty: int) -> None:
        self.container = container
        self.tty = tty

    def request(
        self, method: str, path: str, token: str = "", body: object = None, *, base: str = BASE, ca: str = CERT
    ) -> tuple[int, str]:
        payload = "" if body is None else json.dumps(body)
        argv = (str(PYTHON), "-c", CLIENT, base, ca, method, path, token, payload)
        done = self.container.run(*argv, timeout=300, check=True)
        status, _, text = done.stdout.partition(" ")
        return int(status), text

    def ready(self) -> bool:
        return self.request("GET", "/readyz", self.token("operator"))[0] == 200

    def running(self) -> None:
        """The daemon started (if a test before did not) and ready."""
        self.systemctl("start", "appliance.service")
        eventually(self.ready, "the daemon to be ready")

    def token(self, role: str) -> str:
        return self.container.run("cat", f"/etc/appliance/tokens/{role}.token", check=True).stdout.strip()

    def show(self, unit: str, *keys: str) -> dict[str, str]:
        done = self.container.run("systemctl", "show", unit, *(f"--property={key}" for key in keys), check=True)
        return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)

    def systemctl(self, *args: str, timeout: float = 300.0) -> None:
        self.container.run("systemctl", *args, timeout=timeout, check=True)


def _config() -> str:
    """The shipped config.toml with the tiny model in both roles (what is checked is the unit, not the answer)."""
    text = (ROOT / "config.toml").read_text()
    text, swapped = re.subn(r'(?m)^model = "[^"]+"', f'model = "{TEST_MODEL}"', text)
    assert swapped == 2, "config.toml no longer names the responder's and the summarizer's model on their own lines"
    return text


@pytest.fixture(scope="module")
def box() -> Iterator[Box]:
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    if not (MODELS_DIR / "MODELS.toml").exists() or not any(MODELS_DIR.glob("*.gguf")):
        pytest.skip("models/ not set up")
    try:
        root = rootfs()
    except Unavailable as exc:
        pytest.skip(str(exc))
    master, slave = os.openpty()
    # The checkout at its own path (the .venv's scripts name it), the interpreter the .venv points
    # at, and wherever the model files really are (a worktree links them).
    binds = [ROOT, Path(sys.base_prefix), *(p.resolve().parent for p in MODELS_DIR.iterdir() if p.is_symlink())]
    container = Container(root, bind_ro=binds, bind=[(os.ttyname(slave), "/dev/tty1")])
    try:
        container.start()
    except Unavailable as exc:
        os.close(master)
        os.close(slave)
        pytest.skip(str(exc))
    try:
        container.run("mkdir", "-p", "/etc/appliance", "/etc/systemd/system/appliance.service.d", check=True)
        container.run("tee", "/etc/appliance/config.toml", input=_config(), check=True)
        container.run("tee", "/etc/systemd/system/appliance.service.d/test-watchdog.conf", input=WATCHDOG, check=True)
        install = (str(ROOT / "scripts" / "install-service"), "--kiosk", "--tls-self-signed", "--no-start")
        container.run(*install, check=True)
        yield Box(container, master)
    finally:
        container.stop()
        os.close(master)
        os.close(slave)


def test_ready_only_after_the_models_load(box: Box):
    box.systemctl("start", "--no-block", "appliance.service")
    seen: list[tuple[str, str]] = []

    def active() -> bool:
        unit = box.show("appliance.service", "ActiveState", "StatusText")
        seen.append((unit["ActiveState"], unit["StatusText"]))
        return unit["ActiveState"] != "activating"

    eventually(active, "the start to end", timeout=300)
    assert box.ready()  # at once: READY=1 meant the models were loaded and the socket served
    # The models are verified and loaded while systemd still holds the unit in "activating".
    assert ("activating", "verifying and loading the models") in seen, seen
    assert seen[-1][0] == "active" and seen[-1][1].startswith("serving on "), seen


def test_tokens_arrive_as_credentials(box: Box):
    box.running()
    assert box.request("GET", "/v1/sessions", box.token("operator"))[0] == 200
    assert box.request("POST", "/v1/sessions", box.token("kiosk"), {"title": "kiosk"})[0] == 201
    assert box.request("GET", "/v1/sessions", box.token("kiosk"))[0] == 403  # a kiosk lists nothing
    assert box.request("GET", "/v1/sessions", "not-a-token")[0] == 401
    # The service's own view of the file system: systemd's private copies of the three tokens.
    pid = box.show("appliance.service", "MainPID")["MainPID"]
    listed = box.container.run("ls", f"/proc/{pid}/root/run/credentials/appliance.service", check=True).stdout.split()
    assert sorted(listed) == ["integration.token", "kiosk.token", "operator.token", "tls.key"]


def test_tls_with_the_boxs_certificate_and_nothing_useful_without(box: Box):
    box.running()
    token = box.token("operator")
    assert box.request("GET", "/readyz", token)[0] == 200  # verified against the installed certificate
    status, error = box.request("GET", "/readyz", token, ca="")  # the system's authorities: refused
    assert status == 0 and "CERTIFICATE_VERIFY_FAILED" in error, error
    status, text = box.request("GET", "/readyz", token, base=BASE.replace("https", "http"))
    assert status != 200 and token not in text, text


def test_an_answer_under_the_full_hardening(box: Box):
    box.running()
    unit = box.show("appliance.service", "SystemCallFilter", "MemoryDenyWriteExecute", "PrivateUsers", "DropInPaths")
    assert unit["MemoryDenyWriteExecute"] == "yes" and unit["PrivateUsers"] == "yes" and unit["SystemCallFilter"]
    allowed = {"test-watchdog.conf", "hidden.conf", "tls.conf"}  # the test's watchdog; binds; TLS
    assert {Path(p).name for p in unit["DropInPaths"].split()} <= allowed
    token = box.token("kiosk")
    status, text = box.request("POST", "/v1/sessions", token, {"title": "answer"})
    assert status == 201, text
    session = json.loads(text)["id"]
    status, text = box.request("POST", f"/v1/sessions/{session}/messages", token, {"text": "Hello, are you open?"})
    assert status == 200, text
    assert json.loads(text)["text"].strip()
    assert box.show("appliance.service", "NRestarts")["NRestarts"] == "0", box.container.journal("appliance.service")


def test_the_watchdog_restarts_a_hung_daemon(box: Box):
    box.running()
    before = box.show("appliance.service", "MainPID", "NRestarts")
    box.systemctl("kill", "--kill-whom=main", "--signal=SIGSTOP", "appliance.service")  # hung: no more pings

    def restarted() -> bool:
        now = box.show("appliance.service", "MainPID", "NRestarts", "ActiveState")
        return now["NRestarts"] != before["NRestarts"] and now["ActiveState"] == "active"

    eventually(restarted, "systemd to restart the hung daemon", timeout=120)
    assert box.show("appliance.service", "MainPID")["MainPID"] != before["MainPID"]
    assert "Watchdog timeout" in box.container.journal("appliance.service")
    eventually(box.ready, "the restarted daemon")


def test_the_kiosk_comes_back_after_the_operator_key(box: Box):
    box.running()
    box.systemctl("start", "appliance-kiosk.service")
    drawn = _read(box.tty, until=lambda seen: b"\x1b[" in seen and len(seen) > 2000)
    assert drawn, box.container.journal("appliance-kiosk.service")
    before = box.show("appliance-kiosk.service", "NRestarts", "MainPID")
    os.write(box.tty, F12)

    exits: set[str] = set()

    def back() -> bool:
        now = box.show("appliance-kiosk.service", "NRestarts", "ActiveState", "SubState", "ExecMainStatus")
        if now["SubState"] == "auto-restart":  # RestartSec: the exit status is still the last run's
            exits.add(now["ExecMainStatus"])
        return now["NRestarts"] != before["NRestarts"] and now["ActiveState"] == "active"

    eventually(back, "the kiosk to exit 75 and come back", timeout=60)
    assert exits == {"75"}, box.container.journal("appliance-kiosk.service")
    assert "Deactivated successfully" in box.container.journal("appliance-kiosk.service")  # 75 is no failure
    assert _read(box.tty, until=lambda seen: len(seen) > 2000), "the fresh kiosk drew nothing"
    box.systemctl("stop", "appliance-kiosk.service")


def _read(fd: int, until: Callable[[bytes], bool], timeout: float = 60.0) -> bytes:
    """What the kiosk wrote to its console, until ``until`` holds or ``timeout`` passes."""
    seen = b""
    deadline = time.monotonic() + timeout
    while not until(seen) and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            seen += os.read(fd, 65536)
    return seen if until(seen) else b""
