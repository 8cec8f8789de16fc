"""systemd readiness and watchdog notifications, in plain stdlib.

The protocol is one datagram of ``KEY=VALUE`` lines to the AF_UNIX socket named by
``$NOTIFY_SOCKET``, so a dependency would add nothing but risk. Outside systemd (no
``$NOTIFY_SOCKET``) every call is a silent no-op. The watchdog ping is rate-limited to half of
``$WATCHDOG_USEC``: the serving loop may call :meth:`Notifier.watchdog` as often as it likes, and
a loop that stops calling it (a hung model, a blocked event loop) lets systemd restart us.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)


class Notifier:
    def __init__(
        self,
        path: str | None,
        *,
        watchdog_usec: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path or None
        # sd_watchdog_enabled(3): ping at half the window, so one late ping is not fatal.
        self.watchdog_interval = watchdog_usec / 2_000_000 if watchdog_usec else None
        self._clock = clock
        self._last_ping: float | None = None
        self._warned = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Notifier:
        """The notifier systemd asked for; the watchdog only if it is meant for this process."""
        env = os.environ if env is None else env
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        mine = not pid or pid == str(os.getpid())
        return cls(env.get("NOTIFY_SOCKET"), watchdog_usec=int(usec) if usec.isdigit() and mine else None)

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def send(self, *fields: str) -> bool:
        """Send one notification; False (and one warning in the log) if systemd could not be told."""
        if self.path is None:
            return False
        # A leading "@" names a socket in the abstract namespace.
        address = "\0" + self.path[1:] if self.path.startswith("@") else self.path
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                # Never block the serving loop on a reader that is behind: drop the message instead.
                sock.setblocking(False)
                sock.sendto("\n".join(fields).encode(), address)
        except OSError as exc:
            # Notifications are advice to the supervisor; failing to send one must not stop serving.
            if not self._warned:
                log.warning("cannot notify systemd at %s: %s", self.path, exc)
                self._warned = True
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def extend(self, seconds: float, status: str = "") -> bool:
        """Ask for ``seconds`` more to start (``EXTEND_TIMEOUT_USEC``): a long start that is making progress."""
        return self.send(f"EXTEND_TIMEOUT_USEC={int(seconds * 1_000_000)}", *([f"STATUS={status}"] if status else []))

    def stopping(self, status: str = "") -> bool:
        return self.send("STOPPING=1", *([f"STATUS={status}"] if status else []))

    def watchdog(self) -> bool:
        """Ping the watchdog if half its window has passed since the last ping; True if one was sent."""
        if self.watchdog_interval is None or self.path is None:
            return False
        now = self._clock()
        if self._last_ping is not None and now - self._last_ping < self.watchdog_interval:
            return False
        self._last_ping = now
        return self.send("WATCHDOG=1")
