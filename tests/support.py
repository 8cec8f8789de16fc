"""Helpers the tests share: paths, a config writer, one way to wait for something (:func:`eventually`),
and the plumbing for tests that start real servers.

Fixtures live in conftest.py; fakes of the models in fakes.py.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from appliance.config import ROOT

SHARED_DATA = ROOT.parent / "shared" / "data"
MODELS_DIR = ROOT / "models"
TEST_MODEL = "smollm2-135m-instruct"


# Prepended to a `python -c` script: any attempt to reach the network fails and is recorded in `attempts`.
NO_NETWORK = r"""
import socket
attempts = []
def refuse(*args, **kwargs):
    attempts.append(repr(args[:2]))
    raise OSError("network access is impossible in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
"""


def write_config(tmp_path: Path, body: str = "") -> Path:
    """A config file in ``tmp_path`` whose database lives there and whose models are the repo's."""
    path = tmp_path / "config.toml"
    path.write_text(f'[paths]\ndatabase = "{tmp_path / "app.db"}"\nmodels_dir = "{MODELS_DIR}"\n{body}')
    return path


def free_port() -> int:
    """A loopback TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def eventually(
    predicate: Callable[[], object],
    what: str | Callable[[], str],
    *,
    timeout: float = 60.0,
    every: float = 0.01,
) -> None:
    """Poll ``predicate`` every ``every`` seconds until it holds; after ``timeout`` seconds fail with
    an AssertionError that names what was waited for (``what``, or what it returns then, so that a
    message can carry a server's log). An exception from ``predicate`` ends the wait at once."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(_waited(what, timeout))
        time.sleep(every)


async def eventually_async(
    predicate: Callable[[], object],
    what: str | Callable[[], str],
    *,
    timeout: float = 60.0,
    every: float = 0.01,
    pause: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> None:
    """:func:`eventually` for a test that runs an event loop: the wait awaits ``pause`` (a Textual
    pilot's ``pause``, which also lets the app handle its messages), so the code under test runs."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(_waited(what, timeout))
        await pause(every)


def _waited(what: str | Callable[[], str], timeout: float) -> str:
    return f"waited {timeout:g} s for {what if isinstance(what, str) else what()}"


def wait_until_ready(
    proc: subprocess.Popen[bytes],
    url: str,
    log: Path,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 120.0,
    verify: ssl.SSLContext | bool = True,
) -> None:
    """Until ``url`` answers 200; fail with the server's log if ``proc`` exits or time runs out
    (``verify``: how an https server's certificate is checked)."""

    def ready() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            return httpx.get(url, headers=headers or {}, timeout=2, verify=verify).status_code == 200
        except httpx.HTTPError:
            return False

    eventually(ready, lambda: f"{url} to answer 200:\n{log.read_text(errors='replace')}", timeout=timeout, every=0.1)


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """SIGTERM, and SIGKILL if it has not exited within ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def dev_conversations() -> list[dict]:
    with (SHARED_DATA / "dev_conversations.jsonl").open() as fh:
        return [json.loads(line) for line in fh]


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """The samples named ``name`` on a ``/metrics`` page (as the page writes it, ``_total`` included),
    each as its labels and value, read by prometheus-client's own parser."""
    from prometheus_client.parser import text_string_to_metric_families

    found = []
    for family in text_string_to_metric_families(text):
        found += [(sample.labels, sample.value) for sample in family.samples if sample.name == name]
    return found


def metric(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample ``name`` with exactly ``labels`` on a ``/metrics`` page; None when there is none."""
    return next((value for found, value in samples(text, name) if found == labels), None)


def refusals_in(metrics: str) -> dict[str, float]:
    """``/metrics``' refusal counters by reason (``appliance_access_refused_total{reason="..."}``)."""
    found = {}
    for line in metrics.splitlines():
        if line.startswith("appliance_access_refused_total{"):
            name, value = line.rsplit(" ", 1)
            found[name.split('"')[1]] = float(value)
    return found


def open_connections_in(metrics: str) -> float:
    """``/metrics``' gauge of the connections the daemon holds open (the one asking included)."""
    for line in metrics.splitlines():
        if line.startswith("appliance_connections_open "):
            return float(line.split()[1])
    raise AssertionError("/metrics has no appliance_connections_open")


def read_all(sock: socket.socket) -> bytes:
    """Everything the daemon sends until it closes (or the socket's timeout passes)."""
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return got
