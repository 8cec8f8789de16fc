"""``appliance bench slow-clients``: one client holds many slow connections; is another still served?

The attack of issue 27: one machine on the branch network opens ``count`` connections and sends each
request's headers a line every ``interval_s`` seconds (a share of them, ``body_share``, sends whole
headers and then a declared 1,000-byte body a byte at a time), never finishing. Meanwhile a second
client, from another loopback address (127.0.0.2), asks ``/readyz`` on a fresh connection every half
second. Measured, side by side with the issue's targets:

* the second client's slowest answer (target: under 1 s);
* the share of the slow connections the daemon closed within ``server.header_timeout_s`` + 5 s of
  their opening, whether refused at once by the per-client cap or cut off at a deadline (target:
  at least 95 %);
* the daemon's open files at their peak, beside the unit's ``LimitNOFILE`` (4,096: no exhaustion),
  and after the connections are gone;
* the daemon's resident memory (VmRSS) before the attack and at its peak (target: at most 50 MB more);
* its refusals by reason, from ``/metrics``.

The daemon is a real ``appliance serve`` subprocess on a free loopback port with a throw-away
database and the tiny test model as responder and summarizer (its answers are not what is measured),
started the way ``bench footprint`` starts one. ``--per-client`` lifts the per-client cap, so that
every slow connection is admitted and must be cut off by a deadline. ``--tls`` serves https with a
throw-away self-signed certificate (made by openssl), as on the branch network: then half of the slow
connections that are not slow bodies never begin their handshake. MB are 10^6 bytes.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import resource
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.errors import ApplianceError
from appliance.lab.bench.footprint import MB, daemon_env, free_port, rss_bytes, serve_command
from appliance.lab.stats import spread

TINY = "smollm2-135m-instruct"
LIMIT_NOFILE = 4096  # the unit's
TARGETS = {"second_client_max_s": 1.0, "closed_share": 0.95, "slack_s": 5.0, "rss_growth_mb": 50.0}


@dataclass(frozen=True)
class Plan:
    """What one run does."""

    count: int
    body_share: float
    interval_s: float
    header_timeout_s: float
    per_client: int | None  # None: the configured cap
    cert: Path | None  # the daemon's certificate when it serves https

    def kinds(self) -> list[str]:
        """Each slow connection's way of being slow, spread so that the per-client cap admits some of each."""
        share = self.body_share
        kinds = ["body" if int((i + 1) * share) > int(i * share) else "headers" for i in range(self.count)]
        if self.cert is not None:
            kinds = [k if k == "body" or i % 2 else "silent" for i, k in enumerate(kinds)]
        return kinds

    def context(self) -> ssl.SSLContext | None:
        return None if self.cert is None else ssl.create_default_context(cafile=str(self.cert))

    def url(self, port: int, path: str) -> str:
        return f"{'https' if self.cert else 'http'}://127.0.0.1:{port}{path}"

    @property
    def window_s(self) -> float:
        return self.header_timeout_s + TARGETS["slack_s"]


def run_slow_clients(
    settings: Settings,
    *,
    config: str | None,
    overrides: Sequence[str] = (),
    count: int = 1000,
    body_share: float = 0.2,
    interval_s: float = 2.0,
    per_client: int | None = None,
    tls: bool = False,
    timeout_s: float = 600.0,
    progress: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    """Start the daemon, run the attack of ``count`` slow connections, and report the figures."""
    _raise_file_limit(count + 256)
    extra = [f"responder.model={TINY}", f"summarizer.model={TINY}", "recall.enabled=false"]
    if per_client is not None:
        extra.append(f"server.max_connections_per_client={per_client}")
    with tempfile.TemporaryDirectory(prefix="appliance-slow-") as tmp:
        cert = _self_signed(Path(tmp)) if tls else None
        if cert is not None:
            extra += [f"server.tls_cert_file={cert}", f"server.tls_key_file={cert.with_suffix('.key')}"]
        plan = Plan(count, body_share, interval_s, settings.server.header_timeout_s, per_client, cert)
        port = free_port()
        log = Path(tmp) / "daemon.log"
        command = serve_command(config, [*overrides, *extra], Path(tmp) / "slow.db", port)
        progress(f"starting `appliance serve` on 127.0.0.1:{port} with the tiny model")
        with log.open("wb") as out:
            proc = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=daemon_env()
            )
        try:
            _wait_ready(proc, plan, port, log, timeout_s)
            progress(f"ready; {count} slow connections from 127.0.0.1, a second client from 127.0.0.2")
            report = asyncio.run(_attack(plan, port, proc.pid))
            report["refusals"] = _refusals(plan, port)
            report["exhausted"] = "Too many open files" in log.read_text(errors="replace")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    report["met"] = met(report)
    return report


def _raise_file_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise ApplianceError(f"{needed} open files are needed and this process may have at most {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def _self_signed(folder: Path) -> Path:
    """A throw-away key and certificate for 127.0.0.1 (``cert.pem`` and ``cert.key``)."""
    cert = folder / "cert.pem"
    done = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(cert.with_suffix(".key")), "-out", str(cert)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if done.returncode != 0:
        raise ApplianceError(f"openssl could not make a certificate: {done.stderr.strip()}")
    return cert


def _wait_ready(proc: subprocess.Popen[bytes], plan: Plan, port: int, log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-8:]
            raise ApplianceError("the daemon exited during start-up:\n" + "\n".join(tail))
        try:
            with urllib.request.urlopen(plan.url(port, "/readyz"), timeout=2, context=plan.context()) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise ApplianceError(f"the daemon was not ready after {timeout_s:.0f} s; see {log}")
        time.sleep(0.1)


def _refusals(plan: Plan, port: int) -> dict[str, int]:
    with urllib.request.urlopen(plan.url(port, "/metrics"), timeout=10, context=plan.context()) as reply:
        text = reply.read().decode()
    found = {}
    for line in text.splitlines():
        if line.startswith("appliance_access_refused_total{"):
            name, value = line.rsplit(" ", 1)
            found[name.split('"')[1]] = int(float(value))
    return found


# the attack --------------------------------------------------------------------------------------


async def _attack(plan: Plan, port: int, pid: int) -> dict[str, Any]:
    samples: list[tuple[int, int]] = []  # (rss bytes, open files) of the daemon
    sampling = asyncio.create_task(_sample(pid, samples))
    await asyncio.sleep(0.5)
    rss_before, fds_before = samples[-1]
    spawn = multiprocessing.get_context("spawn")
    results: Queue[list[tuple[float, float | None]]] = spawn.Queue()
    second = spawn.Process(target=_second_client, args=(port, plan.cert, plan.window_s * 1.2, results), daemon=True)
    second.start()
    launched = time.monotonic()
    await asyncio.sleep(1.0)  # the second client's interpreter starts, and asks once before the attack
    started = time.monotonic()
    kinds = plan.kinds()
    tls = plan.context()
    closed = await asyncio.gather(*(_slow_one(port, plan, kind, tls) for kind in kinds))
    attack_s = time.monotonic() - started
    answers = await asyncio.to_thread(results.get, True, 120)
    second.join(10)
    await asyncio.sleep(1.0)  # the daemon lets go of what it held
    sampling.cancel()
    rss_after, fds_after = samples[-1]
    times = [t for t in closed if t is not None]
    within = sum(1 for t in times if t <= plan.window_s)
    served = [a for _, a in answers if a is not None]
    slowest = max(((s, at) for at, s in answers if s is not None), default=None)
    return {
        "plan": {
            "count": plan.count,
            "slow_bodies": kinds.count("body"),
            "never_handshaking": kinds.count("silent"),
            "tls": plan.cert is not None,
            "interval_s": plan.interval_s,
            "header_timeout_s": plan.header_timeout_s,
            "per_client": plan.per_client,
        },
        "attack_s": round(attack_s, 1),
        "closed_within_window": within,
        "closed_share": round(within / plan.count, 4),
        "close_s": {**spread(times, 2), "max": round(max(times), 2)} if times else None,
        "never_closed": len(closed) - len(times),
        "second_client": {
            "asked": len(answers),
            "answered": len(served),
            "max_s": round(max(served), 3) if served else None,
            # when the slowest answer was asked, in seconds after the attack began (roughly: the
            # second client's clock starts as its process does)
            "max_at_s": round(slowest[1] - (started - launched), 1) if slowest else None,
            "p50_s": round(sorted(served)[len(served) // 2], 3) if served else None,
        },
        "fds": {"before": fds_before, "peak": max(f for _, f in samples), "after": fds_after, "limit": LIMIT_NOFILE},
        "rss_mb": {
            "before": round(rss_before / MB, 1),
            "peak": round(max(r for r, _ in samples) / MB, 1),
            "after": round(rss_after / MB, 1),
            "growth": round((max(r for r, _ in samples) - rss_before) / MB, 1),
        },
    }


async def _sample(pid: int, samples: list[tuple[int, int]]) -> None:
    fd_dir = Path(f"/proc/{pid}/fd")
    while True:
        samples.append((rss_bytes(pid), sum(1 for _ in fd_dir.iterdir())))
        await asyncio.sleep(0.2)


async def _slow_one(port: int, plan: Plan, kind: str, tls: ssl.SSLContext | None) -> float | None:
    """One slow connection: seconds from its opening until the daemon closed it (None: it did not
    within the window and a half). ``kind``: ``headers`` (a line every ``interval_s``), ``body``
    (whole headers, then a byte a second) or ``silent`` (no TLS handshake, nothing at all)."""
    opened = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, local_addr=("127.0.0.1", 0), ssl=None if kind == "silent" else tls
        )
    except ConnectionError:
        return time.monotonic() - opened  # refused during the handshake
    except OSError:
        return None
    head = b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    pieces = iter(
        [b"Content-Length: 1000\r\n\r\n", *([b" "] * 1000)]
        if kind == "body"
        else [b"X-Slow-%d: 1\r\n" % i for i in range(10_000)]
    )
    try:
        if kind != "silent":
            writer.write(head)
        while time.monotonic() - opened < plan.window_s * 1.5:
            try:
                if await asyncio.wait_for(reader.read(65536), 1.0 if kind == "body" else plan.interval_s) == b"":
                    return time.monotonic() - opened
            except TimeoutError:
                if kind != "silent":
                    writer.write(next(pieces))
        return None
    except (ConnectionError, OSError):
        return time.monotonic() - opened
    finally:
        writer.close()


def _second_client(port: int, cert: Path | None, seconds: float, out: Queue[list[tuple[float, float | None]]]) -> None:
    """``GET /readyz`` from 127.0.0.2 on a fresh connection every half second for ``seconds``: each
    answer's seconds (None: none). It runs in a process of its own, so that the attacker's work in
    this one does not delay it and only the daemon is measured."""
    tls = None if cert is None else ssl.create_default_context(cafile=str(cert))
    took: list[tuple[float, float | None]] = []  # (when it asked, after the process started; seconds or None)
    begun = time.monotonic()
    until = begun + seconds
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0)) as plain:
                sock = tls.wrap_socket(plain, server_hostname="127.0.0.1") if tls else plain
                sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
            took.append((started - begun, time.monotonic() - started if answer.startswith(b"HTTP/1.1 200 ") else None))
        except OSError:
            took.append((started - begun, None))
        time.sleep(0.5)
    out.put(took)


# the report --------------------------------------------------------------------------------------


def met(report: dict[str, Any]) -> dict[str, bool]:
    second = report["second_client"]
    return {
        "second_client_served": second["answered"] == second["asked"]
        and (second["max_s"] or 0) < TARGETS["second_client_max_s"],
        "closed_share": report["closed_share"] >= TARGETS["closed_share"],
        "no_fd_exhaustion": report["fds"]["peak"] < LIMIT_NOFILE and not report["exhausted"],
        "rss_growth": report["rss_mb"]["growth"] <= TARGETS["rss_growth_mb"],
    }


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report)


def format_text(report: dict[str, Any]) -> str:
    plan, second, fds, rss = report["plan"], report["second_client"], report["fds"], report["rss_mb"]
    window = plan["header_timeout_s"] + TARGETS["slack_s"]

    def mark(key: str) -> str:
        return "met" if report["met"][key] else "NOT MET"

    def row(name: str, measured: object, target: str = "", key: str = "") -> str:
        return f"{name:<44}{measured!s:>16}{target:>12}  {mark(key) if key else ''}".rstrip()

    close = report["close_s"] or {}
    cap = plan["per_client"] if plan["per_client"] is not None else "as configured"
    return "\n".join(
        [
            f"{plan['count']} slow connections from one address ({plan['slow_bodies']} with a slow body"
            + (f", {plan['never_handshaking']} never beginning a TLS handshake" if plan["tls"] else "")
            + f"), a header line every {plan['interval_s']:g} s; header_timeout_s {plan['header_timeout_s']:g}, "
            f"per-client cap {cap}{', over TLS' if plan['tls'] else ''}",
            f"{'figure':<44}{'measured':>16}{'target':>12}",
            row("second client: slowest answer (s)", second["max_s"], "< 1", "second_client_served"),
            row("second client: answered / asked", f"{second['answered']} / {second['asked']}", "all"),
            row("  the slowest, asked at (s into the attack)", second["max_at_s"]),
            row(
                f"slow ones closed within {window:g} s (%)",
                round(report["closed_share"] * 100, 1),
                ">= 95",
                "closed_share",
            ),
            row("  closing time p50 / p95 / max (s)", f"{close.get('p50')} / {close.get('p95')} / {close.get('max')}"),
            row(
                "daemon open files: before / peak / after",
                f"{fds['before']} / {fds['peak']} / {fds['after']}",
                f"< {fds['limit']}",
                "no_fd_exhaustion",
            ),
            row("daemon RSS MB: before / peak / after", f"{rss['before']} / {rss['peak']} / {rss['after']}"),
            row("daemon RSS growth (MB)", rss["growth"], "<= 50", "rss_growth"),
            "refusals by reason: " + ", ".join(f"{k} {v}" for k, v in sorted(report["refusals"].items())),
        ]
    )
