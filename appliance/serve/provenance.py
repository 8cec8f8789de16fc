"""Where the running code came from: the signed manifest of the bundle it was installed from.

A bundle's ``install`` verifies the bundle's manifest (SHA256SUMS: the sha256 of every wheel, model
file and knowledge file) against its Ed25519 signature before it writes anything, and keeps the
manifest, the signature and the public key it verified them with in the ``.venv`` it creates
(``.venv/bundle``). The code that runs from that ``.venv`` is what the manifest lists, so its
fingerprint names what runs; a daemon reports the one it started with. Stdlib only: this reads and
hashes, and verifies nothing (``appliance keys verify`` does, with the cryptography library).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

INSTALLED = Path(sys.prefix) / "bundle"  # the running .venv's copy of its bundle's signed manifest
MANIFEST = "SHA256SUMS"
SIGNATURE = "SHA256SUMS.sig"
SIGNER = "signer.pub.pem"
UNSIGNED = "unsigned (not installed from a bundle)"

_PUBLIC_PEM = ("-----BEGIN PUBLIC KEY-----", "-----END PUBLIC KEY-----")


@dataclass(frozen=True)
class Provenance:
    """The signed manifest a .venv was installed from, and the key its signature was verified with."""

    manifest: str  # sha256 of SHA256SUMS, hex
    key: str  # sha256 of the public key's DER SubjectPublicKeyInfo, hex (see key_fingerprint)

    def __str__(self) -> str:
        return f"manifest sha256:{self.manifest}, signed by key sha256:{self.key}"


def key_fingerprint(pem: bytes) -> str:
    """sha256 of a PEM public key's DER bytes, as ``openssl pkey -pubin -outform DER | sha256sum`` prints it.

    Raises ``ValueError`` for anything but one PEM ``PUBLIC KEY`` block.
    """
    text = pem.decode("ascii", errors="replace").strip()
    begin, end = _PUBLIC_PEM
    if not (text.startswith(begin) and text.endswith(end)):
        raise ValueError("not a PEM public key (-----BEGIN PUBLIC KEY-----)")
    try:
        der = base64.b64decode("".join(text[len(begin) : -len(end)].split()), validate=True)
    except binascii.Error:
        raise ValueError("the PEM public key's body is not base64") from None
    return hashlib.sha256(der).hexdigest()


def installed(folder: Path = INSTALLED) -> Provenance | None:
    """The provenance kept in ``folder``; None where there is none (a checkout's .venv, say) or it is unreadable."""
    try:
        manifest = (folder / MANIFEST).read_bytes()
        key = key_fingerprint((folder / SIGNER).read_bytes())
        if not (folder / SIGNATURE).is_file():
            return None
    except (OSError, ValueError):
        return None
    return Provenance(hashlib.sha256(manifest).hexdigest(), key)


def describe(folder: Path = INSTALLED) -> str:
    """One line for ``appliance status`` and ``/readyz``: the provenance, or that there is none."""
    found = installed(folder)
    return str(found) if found is not None else UNSIGNED
