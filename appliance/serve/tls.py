"""TLS for the daemon's TCP address: the server's context, and the rule for plain HTTP off loopback.

Tokens and conversations cross the branch network, so an address other than loopback is served
only over TLS (``server.tls_cert_file`` and ``server.tls_key_file``, PEM), unless
``server.allow_plain_http_on_lan`` says the operator accepts plain HTTP; the daemon then warns at
every start. The Unix socket stays plain: its file mode is its access control, and nothing on it
leaves the box. The context is the standard library's, as uvicorn would build it, with TLS 1.2 as
the floor; the daemon's server hands it to asyncio itself (see :mod:`appliance.serve.server`), so
that a handshake gets the same deadline as a request's headers.
"""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

from appliance.config import ServerSettings
from appliance.errors import ConfigError

log = logging.getLogger("appliance.daemon")

KEYS = "server.tls_cert_file and server.tls_key_file"


def server_context(cfg: ServerSettings) -> ssl.SSLContext | None:
    """The TLS context of ``server.tls_cert_file`` and ``server.tls_key_file``; None without them."""
    if not cfg.tls_cert_file:
        return None
    for key, name in (("server.tls_cert_file", cfg.tls_cert_file), ("server.tls_key_file", cfg.tls_key_file)):
        if not Path(name).is_file():
            raise ConfigError(f"{key}: {name} is not a readable file")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    try:
        context.load_cert_chain(cfg.tls_cert_file, cfg.tls_key_file)
    except (ssl.SSLError, OSError) as exc:
        # The library's reason ("KEY_VALUES_MISMATCH", "PEM lib") says which; the files are named here.
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
        raise ConfigError(f"{KEYS}: cannot use {cfg.tls_cert_file} with {cfg.tls_key_file}: {reason}") from None
    return context


def check_plain_http(cfg: ServerSettings, off_loopback: bool) -> None:
    """Refuse plain HTTP on an address other than loopback, unless the operator allowed it (then warn)."""
    if not off_loopback or cfg.tls_cert_file:
        return
    if not cfg.allow_plain_http_on_lan:
        raise ConfigError(
            f"server.host {cfg.host!r} is not a loopback address: set {KEYS} (PEM) so that tokens and "
            "conversations cross the network encrypted, or set server.allow_plain_http_on_lan = true "
            "to accept plain HTTP"
        )
    log.warning(
        "serving plain HTTP on %s (server.allow_plain_http_on_lan): tokens and conversations cross the "
        "network readable; set %s",
        cfg.host,
        KEYS,
    )
