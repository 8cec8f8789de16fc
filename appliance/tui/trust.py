"""How a client trusts an ``https://`` daemon: a CA file, or one certificate pinned by its SHA-256.

``tui.ca_file`` names PEM certificates the daemon's must chain to (the box's self-signed one is
its own CA), with its host name checked as usual. ``tui.cert_fingerprint`` pins one certificate
instead: the chain and name are not checked, but the handshake fails unless the server's
certificate has exactly that fingerprint, so nothing (no token) is sent to any other server. The
pin is checked inside the handshake by the context's socket and object classes, which the
standard library lets a context choose; both the TUI's httpx and the status probe's http.client
use them. Without either, a client on the daemon's own box trusts the certificate the daemon serves
(``server.tls_cert_file`` of the same config); elsewhere the system's authorities decide.
"""

from __future__ import annotations

import hashlib
import hmac
import ssl
from pathlib import Path

from appliance.config import Settings
from appliance.errors import ConfigError


def client_context(settings: Settings) -> ssl.SSLContext:
    """The TLS context for an ``https://`` daemon: ``tui.cert_fingerprint``, ``tui.ca_file``, the
    daemon's own ``server.tls_cert_file``, or the system's authorities, in that order."""
    tui, server = settings.tui, settings.server
    if tui.cert_fingerprint:
        return pinned_context(tui.cert_fingerprint)
    key, cafile = ("tui.ca_file", tui.ca_file) if tui.ca_file else ("server.tls_cert_file", server.tls_cert_file)
    if not cafile:
        return ssl.create_default_context()
    try:
        context = ssl.create_default_context(cafile=cafile)
    except (OSError, ssl.SSLError) as exc:
        reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
        raise ConfigError(f"{key}: cannot read certificates from {Path(cafile)}: {reason}") from None
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # a branch's own leaf certificate may be the anchor
    return context


def fingerprint(der: bytes) -> str:
    """A certificate's SHA-256 fingerprint as ``openssl x509 -fingerprint -sha256`` prints it."""
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def pinned_context(pin: str) -> ssl.SSLContext:
    """A context that accepts only the certificate whose SHA-256 fingerprint is ``pin``."""
    want = bytes.fromhex(pin.replace(":", ""))

    def check(peer: bytes | None) -> None:
        if peer is None or not hmac.compare_digest(hashlib.sha256(peer).digest(), want):
            seen = fingerprint(peer) if peer else "none"
            raise ssl.SSLCertVerificationError(
                f"the daemon's certificate (SHA-256 {seen}) is not the one tui.cert_fingerprint pins"
            )

    class PinnedSocket(ssl.SSLSocket):
        def do_handshake(self, block: bool = False) -> None:
            super().do_handshake(block)
            check(self.getpeercert(binary_form=True))

    class PinnedObject(ssl.SSLObject):
        def do_handshake(self) -> None:
            super().do_handshake()
            check(self.getpeercert(binary_form=True))

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False  # the pin names the certificate itself, whatever host it is reached at
    context.verify_mode = ssl.CERT_NONE
    context.sslsocket_class = PinnedSocket
    context.sslobject_class = PinnedObject
    return context
