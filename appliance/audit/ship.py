"""The shipper: copies sealed records from the store to the sinks on a thread of its own.

The store keeps every record (written in its fact's transaction), so the shipper needs no queue of
its own: woken after a commit, it reads the records after the last one it wrote and hands each to
every sink. At start it resumes after the file's last record, so records written while it was not
running (``appliance sessions erase`` from the command line, a crash between a commit and its write)
reach the file at the next start. A sink that fails is logged and skipped for that record; the file
is the trail that is verified, syslog the copy that leaves the box.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Callable, Sequence

from appliance.audit.sinks import JsonlFile, Sink, Syslog
from appliance.config import Settings
from appliance.errors import ConfigError

log = logging.getLogger("appliance.audit")

# (after seq, limit) -> [(seq, line)], oldest first
Fetch = Callable[[int, int], list[tuple[int, str]]]


class Shipper:
    def __init__(self, fetch: Fetch, sinks: Sequence[Sink], *, after: int, batch: int = 500) -> None:
        self.fetch, self.sinks, self.last, self.batch = fetch, tuple(sinks), after, batch
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._failing: set[int] = set()  # sinks whose failure is logged already (once until they recover)
        self._thread = threading.Thread(target=self._run, name="audit-shipper", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """After a commit that wrote records (the store's hook: must not block)."""
        self._wake.set()

    def drain(self) -> int:
        """Write every record after the last written; how many (called on the shipper's thread, and at stop)."""
        shipped = 0
        while rows := self.fetch(self.last, self.batch):
            for seq, line in rows:
                for n, sink in enumerate(self.sinks):
                    self._write(n, sink, line)
                self.last = seq
                shipped += 1
        return shipped

    def _write(self, n: int, sink: Sink, line: str) -> None:
        try:
            sink.write(line)
        except OSError as exc:
            if n not in self._failing:
                log.warning(
                    "audit: %s failed (%s); its records are skipped until it recovers", type(sink).__name__, exc
                )
            self._failing.add(n)
        else:
            self._failing.discard(n)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(1.0)
            self._wake.clear()
            try:
                self.drain()
            except Exception:  # noqa: BLE001 - a closed or locked database: logged, tried again at the next wake
                log.exception("audit: shipping failed")

    def stop(self, timeout: float = 5.0) -> None:
        """Ship what is left, then close the sinks."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)
        try:
            self.drain()
        finally:
            for sink in self.sinks:
                sink.close()


def start(settings: Settings, fetch: Fetch, head: int) -> Shipper:
    """The shipper of ``settings.audit``: the file, and syslog where a host is named. ``head`` is the
    store's newest seq: a file that is ahead of it belongs to another database, and the new chain is
    written after it (``appliance audit verify`` then names where it starts again)."""
    a = settings.audit
    file = JsonlFile(settings.audit_path, max_bytes=int(a.max_mb * 1_000_000), backups=a.backups)
    sinks: list[Sink] = [file]
    try:
        if a.syslog_host:
            sinks.append(Syslog(a.syslog_host, a.syslog_port, a.syslog_transport, ca_file=a.syslog_ca_file))
    except (OSError, ssl.SSLError) as exc:
        file.close()
        raise ConfigError(f"audit.syslog_ca_file: cannot read {a.syslog_ca_file!r}: {exc}") from None
    after = file.last_seq()
    if after > head:
        log.warning("audit: %s ends at seq %d, past the database's %d: a new chain follows", file.path, after, head)
        after = 0
    return Shipper(fetch, sinks, after=after)
