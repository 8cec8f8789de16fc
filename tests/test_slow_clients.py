"""Slow and oversized clients (issue 27, item 2): each is cut off while the others are served.

Against a real daemon on loopback with the tiny model, over raw sockets (a second client address is
127.0.0.2, which Linux routes over loopback like 127.0.0.1): headers trickled line by line are
closed at the header deadline (408); a body sent a byte at a time is closed once it falls below the
minimum rate; one address's connections are capped (429) while another address is served; a 20 KB
header is 431; and ``/metrics`` counts each by its reason. Every wait is bounded: the deadline plus
a generous slack, never a timing asserted tighter than that. The figures for 1,000 slow connections
are the benchmark's (``appliance bench slow-clients``).
"""

from __future__ import annotations

import resource
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from appliance.serve.connections import FILES_RESERVED, Gate, total_cap

from .support import eventually, open_connections_in, read_all, refusals_in
from .test_daemon import Daemon, needs_model, start_daemon

real_daemon = [pytest.mark.real_model, pytest.mark.daemon, needs_model]
HEADER_TIMEOUT_S = 3.0
BODY_GRACE_S = 1.0
PER_CLIENT = 4
SLACK_S = 5.0  # a loaded test box answers late; the limits are asserted, the speed is the bench's


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    tmp = tmp_path_factory.mktemp("slow")
    server = (
        f"header_timeout_s = {HEADER_TIMEOUT_S}\nbody_grace_s = {BODY_GRACE_S}\nmin_body_bytes_per_s = 100\n"
        f"max_connections_per_client = {PER_CLIENT}\nmax_header_bytes = 16384\n"
    )
    daemon = start_daemon(tmp, server=server)
    yield daemon
    assert daemon.stop() == 0, daemon.output()


def port(daemon: Daemon) -> int:
    return int(daemon.url.rsplit(":", 1)[1])


def connect(daemon: Daemon, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(HEADER_TIMEOUT_S + SLACK_S)
    sock.connect(("127.0.0.1", port(daemon)))
    return sock


def closed(sock: socket.socket) -> bool:
    """Whether the daemon has closed the connection (a read returns at once with nothing, or a reset)."""
    sock.setblocking(False)
    try:
        return sock.recv(65536) == b"" or closed(sock)
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        sock.setblocking(True)


def refusals(daemon: Daemon) -> dict[str, float]:
    text = httpx.get(f"{daemon.url}/metrics", timeout=30).text
    return refusals_in(text)


def counted(daemon: Daemon, before: dict[str, float], reason: str) -> float:
    return refusals(daemon).get(reason, 0) - before.get(reason, 0)


class TestSlowClients:
    pytestmark = real_daemon

    def test_headers_trickled_line_by_line_are_closed_at_the_deadline(self, daemon: Daemon):
        before = refusals(daemon)
        sock = connect(daemon)
        started = time.monotonic()
        sock.sendall(b"GET /readyz HTTP/1.1\r\n")
        lines = 0
        while not closed(sock) and time.monotonic() - started < HEADER_TIMEOUT_S + SLACK_S:
            try:
                sock.sendall(b"X-Trickle-%d: 1\r\n" % lines)
            except (BrokenPipeError, ConnectionResetError):
                break
            lines += 1
            time.sleep(0.25)
        took = time.monotonic() - started
        assert HEADER_TIMEOUT_S - 0.5 <= took < HEADER_TIMEOUT_S + SLACK_S, took
        assert lines >= 4  # it really was trickling when it was cut off
        sock.close()
        assert counted(daemon, before, "header_timeout") == 1

    def test_a_connection_that_says_nothing_gets_408_and_is_closed(self, daemon: Daemon):
        with connect(daemon) as sock:
            sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never ends its headers
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n") and b'"type": "header_timeout"' in answer

    def test_a_body_sent_a_byte_at_a_time_is_closed(self, daemon: Daemon):
        before = refusals(daemon)
        sock = connect(daemon)
        sock.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
        sock.sendall(b"Content-Length: 1000\r\n\r\n")
        started = time.monotonic()
        sent = 0
        while not closed(sock) and time.monotonic() - started < BODY_GRACE_S + SLACK_S:
            try:
                sock.sendall(b" ")
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1
            time.sleep(0.1)
        took = time.monotonic() - started
        sock.close()
        assert BODY_GRACE_S <= took < BODY_GRACE_S + SLACK_S and sent < 1000, (took, sent)
        assert counted(daemon, before, "body_too_slow") == 1

    def test_a_body_at_a_fair_pace_is_served(self, daemon: Daemon):
        body = b'{"title": "' + b"t" * 180 + b'"}'
        with connect(daemon) as sock:
            sock.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
            sock.sendall(b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body))
            for i in range(0, len(body), 50):  # 50 bytes every 0.25 s: 200 B/s, over the minimum of 100
                sock.sendall(body[i : i + 50])
                time.sleep(0.25)
            answer = read_all(sock)
        assert answer.startswith(b"HTTP/1.1 201 "), answer[:200]

    def test_one_address_is_capped_while_another_is_served(self, daemon: Daemon):
        before = refusals(daemon)
        held = [connect(daemon, "127.0.0.2") for _ in range(PER_CLIENT)]
        try:
            with connect(daemon, "127.0.0.2") as extra:
                answer = read_all(extra)
            assert (
                answer.startswith(b"HTTP/1.1 429 Too Many Requests\r\n")
                and b"server.max_connections_per_client" in answer
            )
            assert b"retry-after: 1" in answer.lower()
            started = time.monotonic()
            reply = httpx.get(f"{daemon.url}/readyz", timeout=30)  # from 127.0.0.1: another client
            assert reply.status_code == 200 and time.monotonic() - started < SLACK_S
        finally:
            for sock in held:
                sock.close()
        assert counted(daemon, before, "connections_per_client") == 1

        def admitted_again() -> bool:
            with connect(daemon, "127.0.0.2") as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                return read_all(sock).startswith(b"HTTP/1.1 200 ")

        deadline = time.monotonic() + SLACK_S
        while not admitted_again():  # the closed connections are released
            assert time.monotonic() < deadline, "127.0.0.2 was never admitted again"
            time.sleep(0.1)

    def test_a_20_kb_header_is_431_and_16_kb_of_headers_are_served(self, daemon: Daemon):
        before = refusals(daemon)
        reply = httpx.get(f"{daemon.url}/readyz", headers={"X-Big": "a" * 20_000}, timeout=30)
        assert reply.status_code == 431
        assert reply.json()["error"]["type"] == "headers_too_large"
        assert "server.max_header_bytes" in reply.json()["error"]["message"]
        assert httpx.get(f"{daemon.url}/readyz", headers={"X-Big": "a" * 15_000}, timeout=30).status_code == 200
        with connect(daemon) as sock:  # in pieces, as a slow client would send it
            sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            try:
                for _ in range(30):
                    sock.sendall(b"X-Piece: " + b"b" * 1000 + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            assert read_all(sock).startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
        assert counted(daemon, before, "headers_too_large") == 2

    def test_the_metrics_name_every_limit_and_count_open_connections(self, daemon: Daemon):
        text = httpx.get(f"{daemon.url}/metrics", timeout=30).text
        assert "# HELP appliance_access_refused_total Requests and connections refused" in text
        with connect(daemon, "127.0.0.3"), connect(daemon, "127.0.0.3"):

            def opened() -> float:
                with httpx.Client(base_url=daemon.url, timeout=30) as http:
                    return open_connections_in(http.get("/metrics").text)

            eventually(lambda: opened() >= 3, "the two held and the one asking counted")


class TestGate:
    def test_the_total_fits_the_open_file_limit(self, caplog: pytest.LogCaptureFixture):
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert total_cap(soft - FILES_RESERVED) == soft - FILES_RESERVED and not caplog.text
        assert total_cap(soft + 10) == soft - FILES_RESERVED
        assert "does not fit the open-file limit" in caplog.text

    def test_caps_per_address_and_in_all_and_releases(self):
        gate = Gate(per_client=2, total=3)
        assert gate.admit("10.0.0.5") is None and gate.admit("10.0.0.5") is None
        refusal = gate.admit("10.0.0.5")
        assert refusal is not None and (refusal.reason, refusal.status) == ("connections_per_client", 429)
        assert gate.admit("10.0.0.6") is None
        refusal = gate.admit(None)  # the Unix socket counts in all, never per address
        assert refusal is not None and (refusal.reason, refusal.status) == ("connections_total", 503)
        gate.release("10.0.0.5")
        assert gate.admit(None) is None and gate.open == 3
        for client in ("10.0.0.5", "10.0.0.6", None):
            gate.release(client)
        assert gate.open == 0 and gate.admit("10.0.0.5") is None
