"""TLS on the branch network (issue 27, item 1): the daemon serves https with the branch's keys, and
its clients trust only the certificate they were told to.

Against a real daemon on loopback with the tiny model, over a real handshake with certificates made
here by openssl (a test CA and a server certificate it signed): a client without the CA is refused,
with the CA or the right pin it works, a wrong pin is refused before anything is sent, and a plain
HTTP client gets nothing that reads as HTTP. The rules before the daemon starts (no plain HTTP off
loopback unless allowed, unusable keys, one way of trusting) run without a model.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from appliance.cli import running
from appliance.config import ROOT, load_settings
from appliance.errors import ConfigError
from appliance.serve.tls import check_plain_http, server_context
from appliance.tui.client import DaemonClient, DaemonUnreachable, daemon_url, tls_for
from appliance.tui.trust import client_context, fingerprint, pinned_context

from .support import eventually, open_connections_in, read_all, refusals_in, write_config
from .test_daemon import Daemon, needs_model, start_daemon
from .test_systemd import exposure_within, install, needs_analyze, verify

real_daemon = [pytest.mark.real_model, pytest.mark.daemon, needs_model]
TOKEN = "tok-tls-operator-4d1f"
HANDSHAKE_S = 3.0  # server.header_timeout_s, which bounds a handshake too
PER_CLIENT = 6
SLACK_S = 5.0


@dataclass(frozen=True)
class Keys:
    ca: Path  # the test CA's certificate: what a client is told to trust
    cert: Path  # the daemon's certificate, for 127.0.0.1 and localhost, signed by the CA
    key: Path
    other_ca: Path  # a CA that signed nothing here

    def pin(self) -> str:
        der = ssl.PEM_cert_to_DER_cert(self.cert.read_text())
        return fingerprint(der)


def openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def make_ca(folder: Path, name: str) -> tuple[Path, Path]:
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
        "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", str(key), "-out", str(cert),
    )  # fmt: skip
    return cert, key


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    folder = tmp_path_factory.mktemp("keys")
    ca, ca_key = make_ca(folder, "test-ca")
    other_ca, _ = make_ca(folder, "other-ca")
    key, csr, cert = folder / "server.key", folder / "server.csr", folder / "server.crt"
    openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=appliance",
        "-keyout", str(key), "-out", str(csr),
    )  # fmt: skip
    ext = folder / "server.ext"
    ext.write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
    )
    openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
        "-days", "2", "-extfile", str(ext), "-out", str(cert),
    )  # fmt: skip
    return Keys(ca, cert, key, other_ca)


def trusting(cafile: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cafile))


# the daemon over TLS ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(keys: Keys, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    tmp = tmp_path_factory.mktemp("tls")
    server = (
        f'tls_cert_file = "{keys.cert}"\ntls_key_file = "{keys.key}"\n'
        f"header_timeout_s = {HANDSHAKE_S}\nmax_connections_per_client = {PER_CLIENT}\n"
    )
    daemon = start_daemon(tmp, token=TOKEN, server=server, tls=trusting(keys.ca))
    yield daemon
    assert daemon.stop() == 0, daemon.output()
    assert TOKEN not in daemon.output()


def https(daemon: Daemon, verify: ssl.SSLContext | bool) -> httpx.Client:
    return httpx.Client(base_url=daemon.url, headers=daemon.headers, verify=verify, timeout=60)


def raw(daemon: Daemon, source: str = "127.0.0.1") -> socket.socket:
    """A TCP connection to the daemon's TLS port that never begins a handshake."""
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(HANDSHAKE_S + SLACK_S)
    sock.connect(("127.0.0.1", int(daemon.url.rsplit(":", 1)[1])))
    return sock


def open_connections(daemon: Daemon, keys: Keys) -> float:
    with https(daemon, trusting(keys.ca)) as http:
        return open_connections_in(http.get("/metrics").text)


def refusals(daemon: Daemon, keys: Keys) -> dict[str, float]:
    with https(daemon, trusting(keys.ca)) as http:
        text = http.get("/metrics").text
    return refusals_in(text)


class TestHandshake:
    pytestmark = real_daemon

    def test_the_daemon_says_it_serves_https(self, daemon: Daemon):
        assert daemon.url.startswith("https://127.0.0.1:")
        # uvicorn accepts (and /readyz answers) a moment before the daemon logs that it is ready
        eventually(lambda: f"serving on {daemon.url}" in daemon.output(), daemon.output, timeout=10)

    def test_a_client_with_the_ca_is_served(self, daemon: Daemon, keys: Keys):
        with https(daemon, trusting(keys.ca)) as http:
            assert http.get("/readyz").status_code == 200
            created = http.post("/v1/sessions", json={"title": "over TLS"})
            assert created.status_code == 201, created.text

    @pytest.mark.parametrize("which", ["system", "other-ca"])
    def test_a_client_without_the_ca_is_refused(self, daemon: Daemon, keys: Keys, which: str):
        verify = ssl.create_default_context() if which == "system" else trusting(keys.other_ca)
        with https(daemon, verify) as http, pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            http.get("/readyz")

    def test_a_plain_http_client_gets_nothing_that_reads_as_http(self, daemon: Daemon, keys: Keys):
        port = int(daemon.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(f"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
            answer = read_all(raw)
        assert not answer.startswith(b"HTTP/") and b"ready" not in answer, answer[:200]
        with httpx.Client(base_url=daemon.url.replace("https:", "http:"), timeout=10) as http:
            with pytest.raises(httpx.TransportError):
                http.get("/readyz")
        assert refusals(daemon, keys).get("handshake_failed", 0) >= 2

    def test_a_handshake_never_begun_is_closed_at_the_deadline_and_counted(self, daemon: Daemon, keys: Keys):
        before = refusals(daemon, keys)
        with raw(daemon) as sock:
            started = time.monotonic()
            assert sock.recv(1) == b""  # closed by the daemon, having said nothing
            took = time.monotonic() - started
        assert HANDSHAKE_S - 0.5 <= took < HANDSHAKE_S + SLACK_S, took
        after = refusals(daemon, keys)
        assert after.get("handshake_timeout", 0) - before.get("handshake_timeout", 0) == 1

    def test_connections_that_never_handshake_are_capped_per_address(self, daemon: Daemon, keys: Keys):
        before = refusals(daemon, keys)
        held = [raw(daemon, "127.0.0.2") for _ in range(PER_CLIENT)]
        try:
            eventually(lambda: open_connections(daemon, keys) >= PER_CLIENT + 1, "the held connections counted")
            with raw(daemon, "127.0.0.2") as extra:
                started = time.monotonic()
                try:
                    assert extra.recv(1) == b""
                except ConnectionResetError:
                    pass
                assert time.monotonic() - started < HANDSHAKE_S - 0.5  # at once, not at the deadline
            with https(daemon, trusting(keys.ca)) as http:  # another address is served meanwhile
                assert http.get("/readyz").status_code == 200
        finally:
            for sock in held:
                sock.close()
        after = refusals(daemon, keys)
        assert after.get("connections_per_client", 0) - before.get("connections_per_client", 0) == 1

    def test_the_tui_client_works_with_the_right_pin_and_refuses_a_wrong_one(self, daemon: Daemon, keys: Keys):
        wrong = "AB:" * 31 + "AB"

        async def ask(pin: str) -> object:
            client = DaemonClient(daemon.url, token=TOKEN, tls=pinned_context(pin))
            try:
                return await client.sessions()
            finally:
                await client.aclose()

        assert isinstance(asyncio.run(ask(keys.pin())), list)
        with pytest.raises(DaemonUnreachable, match="TLS: .*not the one tui.cert_fingerprint pins"):
            asyncio.run(ask(wrong))

    def test_the_status_probe_verifies_too(self, daemon: Daemon, keys: Keys):
        url = daemon.url  # the probe carries no token: any HTTP status means the daemon answers
        assert running.ask(url, tls=trusting(keys.ca)).status == 401
        assert running.ask(url, tls=pinned_context(keys.pin())).status == 401
        assert running.ask(url, tls=trusting(keys.other_ca)).status is None  # not our daemon
        assert running.ask(url, tls=pinned_context("00" * 32)).status is None

    def test_the_client_commands_trust_what_the_config_says(self, daemon: Daemon, keys: Keys, tmp_path: Path):
        port = daemon.url.rsplit(":", 1)[1]
        for tui in (f'ca_file = "{keys.ca}"', f'cert_fingerprint = "{keys.pin()}"'):
            config = write_config(tmp_path, f"[server]\nport = {port}\n[tui]\n{tui}\n")
            settings = load_settings(config)
            url = daemon_url(settings)
            assert url == daemon.url
            assert running.ask(url, tls=tls_for(settings, url)).status == 401
            done = subprocess.run(
                [sys.executable, "-m", "appliance", "--config", str(config), "status"],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=ROOT,
            )
            assert done.returncode == 0 and f"a daemon answers at {daemon.url}" in done.stdout, done


# the rules before anything listens --------------------------------------------------------------


class TestConfiguration:
    def test_a_lan_address_without_tls_exits_2_naming_the_keys(self, tmp_path: Path):
        (tmp_path / "token").write_text("tok-lan-1\n")
        config = write_config(tmp_path, f'[server]\ntoken_file = "{tmp_path / "token"}"\n')
        done = subprocess.run(
            [sys.executable, "-m", "appliance", "--config", str(config), "serve", "--host", "192.0.2.10"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
        assert done.returncode == 2, done.stderr
        assert "server.tls_cert_file and server.tls_key_file" in done.stderr
        assert "server.allow_plain_http_on_lan" in done.stderr

    def test_plain_http_on_the_lan_when_allowed_is_a_warning(self, tmp_path: Path, caplog: pytest.LogCaptureFixture):
        config = write_config(tmp_path, '[server]\nhost = "192.0.2.10"\nallow_plain_http_on_lan = true\n')
        with caplog.at_level(logging.WARNING, logger="appliance.daemon"):
            check_plain_http(load_settings(config).server, off_loopback=True)
        assert "plain HTTP on 192.0.2.10" in caplog.text
        refused = write_config(tmp_path, '[server]\nhost = "192.0.2.10"\n')
        with pytest.raises(ConfigError, match="server.tls_cert_file"):
            check_plain_http(load_settings(refused).server, off_loopback=True)
        check_plain_http(load_settings(refused).server, off_loopback=False)  # loopback: nothing to say

    def test_a_key_that_is_not_the_certificates_is_refused_naming_both(self, keys: Keys, tmp_path: Path):
        other_key = keys.other_ca.with_suffix(".key")
        config = write_config(tmp_path, f'[server]\ntls_cert_file = "{keys.cert}"\ntls_key_file = "{other_key}"\n')
        with pytest.raises(ConfigError, match=r"server.tls_cert_file and server.tls_key_file: .*KEY_VALUES_MISMATCH"):
            server_context(load_settings(config).server)
        missing = write_config(tmp_path, f'[server]\ntls_cert_file = "{keys.cert}"\ntls_key_file = "nope.key"\n')
        with pytest.raises(ConfigError, match="server.tls_key_file: .*nope.key is not a readable file"):
            server_context(load_settings(missing).server)

    @pytest.mark.parametrize(
        ("body", "message"),
        [
            ('[server]\ntls_cert_file = "a.crt"\n', "server.tls_cert_file is set but server.tls_key_file is not"),
            ('[tui]\ncert_fingerprint = "12:34"\n', "tui.cert_fingerprint must be a SHA-256 fingerprint"),
            ('[tui]\nca_file = "ca.crt"\ncert_fingerprint = "' + "ab" * 32 + '"\n', "choose one way"),
        ],
    )
    def test_half_a_setting_is_refused_at_load(self, tmp_path: Path, body: str, message: str):
        with pytest.raises(ConfigError, match=message):
            load_settings(write_config(tmp_path, body))

    def test_an_unreadable_ca_file_names_its_key(self, tmp_path: Path):
        settings = load_settings(write_config(tmp_path, '[tui]\nca_file = "missing-ca.crt"\n'))
        assert daemon_url(settings).startswith("https://")
        with pytest.raises(ConfigError, match="tui.ca_file: cannot read certificates from .*missing-ca.crt"):
            client_context(settings)

    def test_the_fingerprint_is_the_one_openssl_prints(self, keys: Keys):
        done = subprocess.run(
            ["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", str(keys.cert)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.strip().split("=", 1)[1] == keys.pin()


# installing the box's keys ----------------------------------------------------------------------


class TestInstall:
    def test_self_signed_keys_are_made_once_and_loaded_as_a_credential(self, tmp_path: Path):
        units = install(tmp_path, "--tls-self-signed", "--kiosk")
        tls = tmp_path / "etc" / "appliance" / "tls"
        cert, key = tls / "appliance.crt", tls / "appliance.key"
        assert key.stat().st_mode & 0o777 == 0o600 and cert.stat().st_mode & 0o777 == 0o644
        dropin = (units / "appliance.service.d" / "tls.conf").read_text()
        assert "LoadCredential=tls.key:/etc/appliance/tls/appliance.key" in dropin
        assert "APPLIANCE__SERVER__TLS_KEY_FILE=%d/tls.key" in dropin
        assert (
            "APPLIANCE__TUI__CA_FILE=/etc/appliance/tls/appliance.crt"
            in (units / "appliance-kiosk.service.d" / "tls.conf").read_text()
        )
        # The pair works as the daemon and a client on the box would use it.
        config = write_config(tmp_path, f'[server]\ntls_cert_file = "{cert}"\ntls_key_file = "{key}"\n')
        settings = load_settings(config)
        assert server_context(settings.server) is not None
        assert client_context(settings).verify_mode == ssl.CERT_REQUIRED
        before = cert.read_bytes()
        install(tmp_path, "--tls-self-signed")
        assert cert.read_bytes() == before  # a second install keeps the box's certificate

    @needs_analyze
    def test_the_units_with_tls_verify_cleanly_and_stay_hardened(self, tmp_path: Path):
        units = install(tmp_path, "--tls-self-signed", "--kiosk")
        for unit in ("appliance.service", "appliance-kiosk.service"):
            done = verify(units, unit)
            assert done.returncode == 0 and done.stderr == "", done.stderr
        done = exposure_within(units / "appliance.service", 9)  # as without TLS: 0.9
        assert done.returncode == 0, done.stdout + done.stderr

    def test_the_branchs_own_keys_are_installed(self, tmp_path: Path, keys: Keys):
        install(tmp_path / "root", "--tls-cert", str(keys.cert), "--tls-key", str(keys.key))
        tls = tmp_path / "root" / "etc" / "appliance" / "tls"
        assert (tls / "appliance.crt").read_bytes() == keys.cert.read_bytes()
        assert (tls / "appliance.key").stat().st_mode & 0o777 == 0o600
        done = subprocess.run(
            [ROOT / "scripts" / "install-service", "--root", str(tmp_path / "r2"), "--tls-cert", str(keys.key),
             "--tls-key", str(keys.key)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2 and "no PEM certificate" in done.stderr
