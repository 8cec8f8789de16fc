"""The daemon as a process: whether one answers, which process it is, who started it, and stopping it.

`appliance start` launches the daemon in the background and records it in a pid file beside its log
(both in the database's folder): the pid, and the time the kernel started that process. A pid is
signalled only while the process holding it has that start time, so a pid the system has since given
to another process is never signalled. The rest comes from Linux's /proc: a process's start time,
resident memory and control group (a ``….service`` group means systemd runs it), and which process
listens on a TCP port (only among processes this user may inspect). A Unix socket names its peer.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import struct
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

LOG_NAME = "appliance.log"
PIDFILE_NAME = "appliance.pid"


@dataclass(frozen=True)
class Launch:
    """What the pid file records of a daemon `appliance start` launched."""

    pid: int
    started: int  # the process's start, in clock ticks after boot (field 22 of /proc/<pid>/stat)
    log: str


@dataclass(frozen=True)
class Process:
    """What /proc tells of a running process; ``None`` where this user may not read it."""

    pid: int
    uptime_s: float | None
    rss_bytes: int | None
    unit: str | None  # the systemd unit it runs in, if any


@dataclass(frozen=True)
class Answer:
    """How a daemon answered ``GET /readyz``: its HTTP status (None: nothing answers), where known its
    pid, the signed bundle manifest it reports (None from a daemon that reports none), and where each
    of its models runs (role, device)."""

    status: int | None
    pid: int | None = None
    bundle: str | None = None
    devices: tuple[tuple[str, str], ...] = ()


# the pid file ------------------------------------------------------------------------------------


def record(pidfile: Path, pid: int, log: Path) -> Launch | None:
    """Write the pid file for a daemon just launched; None (and no file) if the process is already gone."""
    started = start_ticks(pid)
    if started is None:
        return None
    launch = Launch(pid, started, str(log))
    pidfile.write_text(json.dumps({"pid": pid, "started": started, "log": str(log)}) + "\n")
    return launch


def recorded(pidfile: Path) -> Launch | None:
    """The pid file's daemon, whether or not it still runs; None without a readable pid file."""
    try:
        data = json.loads(pidfile.read_text())
        return Launch(int(data["pid"]), int(data["started"]), str(data.get("log", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def alive(launch: Launch) -> bool:
    """Whether the launched process still runs: its pid is held by a process with its start time."""
    return start_ticks(launch.pid) == launch.started


def terminate(launch: Launch, wait_s: float, *, clock: Callable[[], float] = time.monotonic) -> bool:
    """SIGTERM to the launched daemon (only if it is still that process), then wait until it has exited."""
    if not alive(launch):
        return True
    os.kill(launch.pid, signal.SIGTERM)
    deadline = clock() + wait_s
    while alive(launch):
        if clock() > deadline:
            return False
        time.sleep(0.1)
    return True


# /proc -------------------------------------------------------------------------------------------


def start_ticks(pid: int) -> int | None:
    """When the kernel started process ``pid`` (ticks after boot); None if there is none, or only its zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return None if fields[0] in ("Z", "X") else int(fields[19])


def process(pid: int) -> Process:
    """Uptime, resident memory and systemd unit of a running process, as far as /proc lets this user see."""
    started = start_ticks(pid)
    uptime = None
    if started is not None:
        since_boot_s = float(Path("/proc/uptime").read_text().split()[0])
        uptime = max(0.0, since_boot_s - started / os.sysconf("SC_CLK_TCK"))
    return Process(pid, uptime, _rss_bytes(pid), _unit(pid))


def _rss_bytes(pid: int) -> int | None:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    kb = [line.split()[1] for line in lines if line.startswith("VmRSS:")]
    return int(kb[0]) * 1024 if kb else None


def _unit(pid: int) -> str | None:
    try:
        return unit_of(Path(f"/proc/{pid}/cgroup").read_text())
    except OSError:
        return None


def unit_of(cgroup: str) -> str | None:
    """The ``….service`` whose control group holds a process (systemd runs it), from /proc/<pid>/cgroup; else None."""
    lines = cgroup.splitlines()
    # cgroup v2 has the one line "0::/path"; v1 has systemd's own hierarchy among the controllers'.
    ours = [line for line in lines if line.startswith("0::") or ":name=systemd:" in line] or lines[:1]
    name = ours[0].rpartition(":")[2].rstrip("/").rpartition("/")[2] if ours else ""
    return name if name.endswith(".service") and not name.startswith("user@") else None


def listener(port: int) -> int | None:
    """The pid of the process listening on TCP ``port``, among those this user may inspect."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cells = row.split()
            if cells[3] == "0A" and int(cells[1].rpartition(":")[2], 16) == port:  # 0A: LISTEN
                sockets.add(f"socket:[{cells[9]}]")
    for entry in Path("/proc").iterdir() if sockets else ():
        if entry.name.isdigit():
            try:
                if any(os.readlink(fd) in sockets for fd in (entry / "fd").iterdir()):
                    return int(entry.name)
            except OSError:
                continue  # another user's process, or one that just exited
    return None


# asking the daemon -------------------------------------------------------------------------------


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def ask(url: str, timeout: float = 2.0, tls: ssl.SSLContext | None = None) -> Answer:
    """``GET /readyz`` at ``url`` (``http://host:port``, ``https://host:port`` verified with ``tls``, or
    ``unix:/path``); any HTTP status means a daemon answers.

    The pid comes from the Unix socket's peer, or from /proc for a port on this machine. A server
    whose certificate fails verification does not count as the daemon.
    """
    unix = url.startswith("unix:")
    parts = urllib.parse.urlsplit("http://localhost" if unix else url)
    try:
        if unix:
            conn: http.client.HTTPConnection = _UnixConnection(url.removeprefix("unix:"), timeout)
        elif parts.scheme == "https":
            conn = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=timeout, context=tls)
        else:
            conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    except ValueError:  # a port that is no number
        return Answer(None)
    try:
        conn.request("GET", f"{parts.path.rstrip('/')}/readyz")
        pid = _peer(conn.sock) if unix else None
        response = conn.getresponse()
        status, (bundle, devices) = response.status, _reported(response.read(65536))
    except (OSError, http.client.HTTPException):
        return Answer(None)
    finally:
        conn.close()
    if pid is None and parts.hostname in ("127.0.0.1", "localhost", "::1") and parts.port:
        pid = listener(parts.port)
    return Answer(status, pid, bundle, devices)


def _reported(body: bytes) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The ``bundle`` and the ``devices`` of a /readyz body, as far as it is JSON that has them."""
    try:
        data = json.loads(body)
        bundle, devices = data.get("bundle"), data.get("devices")
    except (ValueError, AttributeError):
        return None, ()
    pairs = devices.items() if isinstance(devices, dict) else ()
    return bundle if isinstance(bundle, str) else None, tuple((str(k), str(v)) for k, v in pairs)


def _peer(sock: socket.socket | None) -> int | None:
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    pid, _uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return int(pid)
