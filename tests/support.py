"""Helpers the tests share: paths, a config writer, and the plumbing for tests that start real servers.

Fixtures live in conftest.py; fakes of the models in fakes.py.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
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


def wait_until_ready(
    proc: subprocess.Popen[bytes],
    url: str,
    log: Path,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 120.0,
) -> None:
    """Poll ``url`` until it answers 200; fail with the server's log if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            if httpx.get(url, headers=headers or {}, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} never answered 200:\n{log.read_text(errors='replace')}")
        time.sleep(0.1)


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
