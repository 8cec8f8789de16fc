"""`appliance bench footprint`: the runtime install's distributions, the process probes, and the
report's schema from a real daemon with the tiny model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from appliance.config import ROOT
from appliance.lab.bench import footprint

from .support import TEST_MODEL, write_config

TINY = (
    f'[responder]\nmodel = "{TEST_MODEL}"\nn_ctx = 2048\nmax_tokens = 16\nseed = 7\n'
    f'[summarizer]\nmodel = "{TEST_MODEL}"\nn_ctx = 2048\n'
)


class TestInstall:
    def test_the_runtime_closure_has_the_runtime_and_nothing_of_the_lab_or_the_reference(self):
        names = {footprint._key(d.metadata["Name"]) for d in footprint.runtime_closure()}
        assert {"appliance", "llama-cpp-python", "onnxruntime", "tokenizers", "fastapi", "textual"} <= names
        assert not names & {"torch", "sentence-transformers", "transformers", "matplotlib", "pytest", "ruff"}

    def test_sizes_come_from_the_files_on_disk(self):
        report = footprint.install_report()
        assert report["mb"] == pytest.approx(
            sum(footprint.distribution_bytes(d) for d in footprint.runtime_closure()) / footprint.MB, abs=0.1
        )
        assert 0 < max(report["largest_mb"].values()) < report["mb"] and "RECORD" in report["basis"]

    def test_an_editable_install_counts_its_package_tree(self):
        me = next(d for d in footprint.runtime_closure() if d.metadata["Name"] == "appliance")
        tree = sum(p.stat().st_size for p in (ROOT / "appliance").rglob("*.py"))
        assert footprint.distribution_bytes(me) >= tree


class TestProbes:
    def test_memory_and_libraries_of_this_process(self):
        import onnxruntime  # noqa: F401  (a shared library to find)

        assert footprint.rss_bytes(os.getpid()) > 10e6
        split = footprint.memory_bytes(os.getpid())
        assert split["anon"] > 0 and split["anon"] + split["file"] <= split["rss"]
        libs = footprint.shared_libraries(os.getpid())
        assert libs == sorted(set(libs)) and any(name.startswith("libc.so") for name in libs)
        assert any("onnxruntime" in name for name in libs)

    def test_serve_command_keeps_the_operators_config_and_isolates_the_database(self, tmp_path: Path):
        cmd = footprint.serve_command("c.toml", ["a.b=1"], tmp_path / "f.db", 4242, python="py")
        assert cmd[:6] == ["py", "-m", "appliance", "--config", "c.toml", "--set"]
        assert f"paths.database={tmp_path / 'f.db'}" in cmd and cmd[-5:] == [
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "4242",
        ]

    def test_text_report_marks_targets(self):
        report = {
            "install_mb": 420.0,
            "rss_mb": {"idle_ready": 2500.0, "after_turn": 2510.0},
            "ready_s": 3.2,
            "embed_ms": None,
            "loaded": ["libc.so.6"],
            "rss_split_mb": {"anon": 900.0, "file": 1600.0},
            "models": {},
            "install": {"largest_mb": {"numpy": 71.0}},
        }
        report["met"] = footprint.met(report)
        assert report["met"] == {"install_mb": True, "rss_idle_ready_mb": False, "ready_s": True, "embed_p50_ms": None}
        text = footprint.format_text(report)
        assert "OVER" in text and "recall off" in text and "numpy 71" in text


@pytest.mark.real_model
@pytest.mark.daemon
def test_footprint_of_a_real_daemon_with_the_tiny_model(tmp_path: Path):
    cfg = write_config(tmp_path, TINY)
    done = subprocess.run(
        [sys.executable, "-m", "appliance", "--config", str(cfg), "bench", "footprint", "--runs", "20", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["install_mb"] > 0
    assert 0 < report["rss_mb"]["idle_ready"] <= report["rss_mb"]["after_turn"] * 1.05
    assert 0 < report["rss_split_mb"]["file"] and 0 < report["rss_split_mb"]["anon"] < report["rss_mb"]["idle_ready"]
    assert 0 < report["ready_s"] < 600
    assert 0 < report["embed_ms"]["p50"] <= report["embed_ms"]["p95"]
    loaded = report["loaded"]
    assert all(isinstance(name, str) for name in loaded)
    assert any(name.startswith("libllama") for name in loaded)  # the GGUF models
    assert any("onnxruntime" in name for name in loaded)  # recall
    assert not [name for name in loaded if "torch" in name]  # and no PyTorch
    assert report["models"] == {
        "responder": TEST_MODEL,
        "summarizer": TEST_MODEL,
        "embeddings": "all-minilm-l6-v2-int8",
    }
    assert set(report["met"]) == {"install_mb", "rss_idle_ready_mb", "ready_s", "embed_p50_ms"}
    assert not list(tmp_path.glob("*.db"))  # the daemon's database was a throw-away one
