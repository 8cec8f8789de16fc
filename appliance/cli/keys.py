"""`appliance keys`: the Ed25519 key pair that signs offline bundles, signing a manifest, verifying a bundle.

The only importer of the cryptography library. Keys are standard PEM, so the system's openssl reads
them too (a bundle's ``install`` verifies with openssl, on a box that may have no appliance yet): the
private key PKCS#8 (mode 0600; it stays on the machine that builds bundles and never enters one),
the public key SubjectPublicKeyInfo. A signature is the 64 raw bytes Ed25519 makes of the file.

`keys verify` checks a bundle with this installed appliance's code rather than the bundle's own
``install`` (which a changed bundle could have changed): the signature over SHA256SUMS, no file
that it does not list, and every file's sum.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import click
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from appliance.cli.base import Context, Failure, edge, pass_ctx
from appliance.serve.provenance import MANIFEST, SIGNATURE, key_fingerprint

DEFAULT_NAME = "bundle-signing"
PATH = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.group("keys")
def keys_group() -> None:
    """The key pair that signs offline bundles (scripts/bundle --sign-key) and checking a bundle with it."""


@keys_group.command("new")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--name", default=DEFAULT_NAME, show_default=True, help="The files' name: NAME.pem and NAME.pub.pem.")
@edge
def keys_new(folder: Path, name: str) -> None:
    """Write a new Ed25519 pair into FOLDER: NAME.pem (private, mode 0600) and NAME.pub.pem (public).

    Keep the private key on the machine that builds bundles; give the public key to the boxes
    (`install --public-key`, or `bundle.public_key` in their config). An existing file is never replaced.
    """
    private, public = folder / f"{name}.pem", folder / f"{name}.pub.pem"
    for path in (private, public):
        if path.exists():
            raise Failure(f"{path} exists: a key is never overwritten (give another --name or folder)")
    key = Ed25519PrivateKey.generate()
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    folder.mkdir(parents=True, exist_ok=True)
    secret = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # Created 0600 (not chmod-ed after): the private key is never readable by others, even briefly.
    fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(secret)
    public.write_bytes(pem)
    click.echo(f"private key {private} (keep it off the boxes and out of bundles)")
    click.echo(f"public key  {public}, fingerprint sha256:{key_fingerprint(pem)}")


@keys_group.command("sign")
@click.option("--key", "key_file", type=PATH, required=True, help="The private key (PEM, from `keys new`).")
@click.argument("file", type=PATH)
@edge
def keys_sign(key_file: Path, file: Path) -> None:
    """Sign FILE with the private key: FILE.sig, the 64-byte Ed25519 signature (scripts/bundle signs SHA256SUMS)."""
    try:
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise Failure(f"{key_file}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise Failure(f"{key_file}: not an Ed25519 private key (`appliance keys new` writes one)")
    signature = file.with_name(file.name + ".sig")
    signature.write_bytes(key.sign(file.read_bytes()))
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    click.echo(f"signed {file} with key sha256:{key_fingerprint(public)}: {signature}", err=True)


@keys_group.command("verify")
@click.argument("bundle", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--public-key", "key_file", type=PATH, help="The signer's public key (default: bundle.public_key).")
@pass_ctx
@edge
def keys_verify(obj: Context, bundle: Path, key_file: Path | None) -> None:
    """Check BUNDLE before installing it: its signature, no unlisted file, every file's sha256.

    Exit status 0 when all hold; 2, naming the file, when one does not.
    """
    if key_file is None:
        configured = obj.settings.bundle.public_key
        if not configured:
            raise Failure("no public key: give --public-key PEM, or set bundle.public_key in the config")
        key_file = Path(configured)
    fingerprint = verify_signature(bundle, key_file)
    listed = verify_files(bundle)
    click.echo(f"{bundle}: signed by key sha256:{fingerprint}; {listed} files match SHA256SUMS")


def public_key(key_file: Path) -> tuple[Ed25519PublicKey, str]:
    """The Ed25519 public key in ``key_file`` and its fingerprint."""
    try:
        pem = key_file.read_bytes()
        key = serialization.load_pem_public_key(pem)
    except (OSError, ValueError) as exc:
        raise Failure(f"{key_file}: not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise Failure(f"{key_file}: not an Ed25519 public key (`appliance keys new` writes one)")
    return key, key_fingerprint(pem)


def verify_signature(bundle: Path, key_file: Path) -> str:
    """The key's fingerprint once ``bundle``'s SHA256SUMS.sig verifies with it; else a Failure naming the file."""
    key, fingerprint = public_key(key_file)
    manifest, signature = bundle / MANIFEST, bundle / SIGNATURE
    for path in (manifest, signature):
        if not path.is_file():
            raise Failure(f"{path} is missing: the bundle is not signed; do not install it")
    try:
        key.verify(signature.read_bytes(), manifest.read_bytes())
    except InvalidSignature:
        raise Failure(
            f"{signature} does not verify with key sha256:{fingerprint} ({key_file}); do not install it"
        ) from None
    return fingerprint


def verify_files(bundle: Path) -> int:
    """How many files SHA256SUMS lists, once every file of ``bundle`` is listed and matches; else a Failure."""
    sums: dict[str, str] = {}
    for line in (bundle / MANIFEST).read_text().splitlines():
        digest, _, name = line.partition("  ")
        sums[name] = digest
    present = {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_symlink() or not p.is_dir()}
    unlisted = sorted(present - sums.keys() - {MANIFEST, SIGNATURE})
    if unlisted:  # an unlisted wheel would be one pip could choose
        raise Failure(f"{bundle / unlisted[0]} is not listed in the signed SHA256SUMS; do not install it")
    for name, digest in sorted(sums.items()):
        path = bundle / name
        if not path.is_file():
            raise Failure(f"{path} is listed in SHA256SUMS but missing; do not install it")
        with path.open("rb") as f:
            if hashlib.file_digest(f, "sha256").hexdigest() != digest:
                raise Failure(f"{path} does not match the signed SHA256SUMS; do not install it")
    return len(sums)
