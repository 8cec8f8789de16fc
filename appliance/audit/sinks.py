"""Where audit lines go: a JSON-lines file that rotates by size, and RFC 5424 syslog over UDP, TCP or TLS.

Both take one sealed line at a time from the shipper's thread, never from the hot path. The file is
written by hand rather than through ``logging.handlers.RotatingFileHandler``, which creates files
with the umask's mode and prints a failed write to stderr instead of raising it: an audit file is
owner-only, and a failure is the shipper's to report. Syslog is a small formatter over a socket
(the standard library's ``SysLogHandler`` writes RFC 3164 and has no TLS): the MSG is the record's
canonical JSON, pure ASCII, and TCP and TLS frame it with its octet count (RFC 6587, RFC 5425).
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import ssl
import time
from pathlib import Path
from typing import Any, Protocol

from appliance.audit.verify import trail

# The facility (13: log audit) and severity (6: informational), as RFC 5424's PRI.
PRI = 13 * 8 + 6
RETRY_S = 5.0  # how long a syslog receiver that refused or dropped a connection is left alone


class Sink(Protocol):
    def write(self, line: str) -> None: ...

    def close(self) -> None: ...


class JsonlFile:
    """``path``, rotated to ``path.1`` ... ``path.N`` (oldest) once it would pass ``max_bytes``."""

    def __init__(self, path: Path, *, max_bytes: int, backups: int) -> None:
        self.path, self.max_bytes, self.backups = path, max_bytes, backups
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = self._open()

    def _open(self) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)  # read: its last byte
        os.fchmod(fd, 0o600)
        return fd

    def last_seq(self) -> int:
        """The seq of the last whole record written (0: none), from the newest file that holds one. A
        line cut short (a power cut mid-write) is passed over here; ``audit verify`` names it."""
        for file in reversed(trail(self.path)):
            with file.open("rb") as fh:
                fh.seek(max(0, file.stat().st_size - 65536))
                tail = fh.read().splitlines()
            for line in reversed(tail):
                try:
                    return int(json.loads(line)["seq"])
                except (ValueError, KeyError, TypeError):
                    continue
        return 0

    def write(self, line: str) -> None:
        data = (line + "\n").encode("ascii")
        size = os.fstat(self._fd).st_size
        if size and size + len(data) > self.max_bytes:
            self._rotate()
        elif size and os.pread(self._fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # after a line cut short, the next record starts a line of its own
        os.write(self._fd, data)

    def _rotate(self) -> None:
        os.close(self._fd)
        for n in range(self.backups, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{n}")
            if n == self.backups:
                older.unlink(missing_ok=True)
            elif older.exists():
                older.rename(self.path.with_name(f"{self.path.name}.{n + 1}"))
        if self.backups:
            self.path.rename(self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink(missing_ok=True)
        self._fd = self._open()

    def close(self) -> None:
        os.close(self._fd)


def rfc5424(line: str, *, hostname: str, app: str = "appliance") -> bytes:
    """One syslog message: ``<PRI>1 TIME HOST APP PROCID MSGID - MSG``, MSG the record's JSON."""
    record = json.loads(line)
    stamp = datetime.datetime.fromtimestamp(record["at"], datetime.UTC).isoformat(timespec="microseconds")
    msgid = _printable(str(record.get("action", "-")), 32)
    head = f"<{PRI}>1 {stamp.replace('+00:00', 'Z')} {_printable(hostname, 255)} {app} {os.getpid()} {msgid} -"
    return f"{head} {line}".encode("ascii")


def _printable(value: str, limit: int) -> str:
    """A header field: printable ASCII without spaces, at most ``limit`` long, ``-`` when empty."""
    kept = "".join(c for c in value if 33 <= ord(c) <= 126)[:limit]
    return kept or "-"


class Syslog:
    """A remote syslog receiver; ``transport`` ``udp`` (a datagram each), ``tcp`` or ``tls`` (a
    connection kept open, made again after a failure)."""

    def __init__(self, host: str, port: int, transport: str, *, ca_file: str = "", timeout_s: float = 5.0) -> None:
        self.host, self.port, self.transport, self.timeout_s = host, port, transport, timeout_s
        self.hostname = socket.gethostname()
        self._tls = ssl.create_default_context(cafile=ca_file or None) if transport == "tls" else None
        self._sock: socket.socket | None = None
        self._address: tuple[int, Any] | None = None  # udp: (family, address), resolved once
        self._retry_at = 0.0  # tcp, tls: no connection is tried before this (time.monotonic())

    def write(self, line: str) -> None:
        message = rfc5424(line, hostname=self.hostname)
        if self.transport == "udp":
            if self._address is None:
                family, _, _, _, address = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_DGRAM)[0]
                self._address = (family, address)
            with socket.socket(self._address[0], socket.SOCK_DGRAM) as sock:
                sock.sendto(message, self._address[1])
            return
        if time.monotonic() < self._retry_at:  # a receiver that is down does not hold up the file's writes
            raise ConnectionError(f"syslog receiver {self.host}:{self.port} is down; trying again shortly")
        try:
            self._connected().sendall(b"%d %s" % (len(message), message))
        except OSError:
            self.close()
            self._retry_at = time.monotonic() + RETRY_S  # the first record after it connects again
            raise

    def _connected(self) -> socket.socket:
        if self._sock is None:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname=self.host)
            self._sock = sock
        return self._sock

    def close(self) -> None:
        """End the connection so the receiver still reads every frame: a socket closed with unread data
        (TLS 1.3's session tickets) is reset, and a reset drops what the receiver had not read yet."""
        sock, self._sock = self._sock, None
        if sock is None:
            return
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(1.0)
            for _ in range(64):  # until the receiver closes its side; bounded
                if not sock.recv(4096):
                    break
        except OSError:
            pass  # already gone: nothing left to keep
        finally:
            sock.close()
