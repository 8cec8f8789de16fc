"""A modest GPU (issue 43): where each model runs under ``n_gpu_layers``, the GPU as ``nvidia-smi``
reports it, and the set-up's CUDA build, all without a GPU: a fake ``nvidia-smi`` first on PATH."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from appliance.config import Settings, load_settings
from appliance.errors import ConfigError
from appliance.models import gpu
from appliance.models.files import find, verified_path
from appliance.models.gpu import Gpu, Placement, place
from appliance.models.llama import LlamaChatModel
from appliance.models.native import supports_gpu_offload

from .support import MODELS_DIR, ROOT, TEST_MODEL, write_config

GIB = 1 << 30
CARD = Gpu("NVIDIA GeForce RTX 3060", 12 * GIB)
BASH = shutil.which("bash") or "/bin/bash"


def fake_smi(folder: Path, output: str, status: int = 0) -> Path:
    """A folder holding an ``nvidia-smi`` that prints ``output`` and exits with ``status``, whatever it is asked."""
    folder.mkdir(exist_ok=True)
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!{BASH}\nprintf '%s\\n' {shlex.quote(output)}\nexit {status}\n")  # no other command on PATH
    smi.chmod(0o755)
    return folder


class TestPlacement:
    """The ``auto`` rule and the numbers, as a pure function of what was detected."""

    def test_auto_puts_all_layers_on_a_gpu_with_room(self):
        assert place("auto", gpu=CARD, offload=True, model_bytes=GIB) == Placement(-1, CARD.name)

    def test_auto_stays_on_the_cpu_without_room_for_the_model_and_the_margin(self):
        tight = Gpu(CARD.name, GIB + gpu.MARGIN_BYTES - 1)
        assert place("auto", gpu=tight, offload=True, model_bytes=GIB) == Placement()
        assert place("auto", gpu=Gpu(CARD.name, GIB + gpu.MARGIN_BYTES), offload=True, model_bytes=GIB).layers == -1

    def test_auto_stays_on_the_cpu_without_a_gpu(self):
        assert place("auto", gpu=None, offload=True, model_bytes=GIB) == Placement()

    def test_auto_stays_on_the_cpu_where_llama_cpp_cannot_offload(self):
        assert place("auto", gpu=CARD, offload=False, model_bytes=GIB) == Placement()

    @pytest.mark.parametrize("layers", [-1, 12, 500])
    def test_a_number_is_taken_as_given_even_without_room(self, layers: int):
        assert place(layers, gpu=Gpu(CARD.name, 0), offload=True, model_bytes=GIB) == Placement(layers, CARD.name)

    @pytest.mark.parametrize(("found", "offload"), [(None, True), (CARD, False)])
    def test_a_number_means_the_cpu_without_a_gpu_or_offload(self, found: Gpu | None, offload: bool):
        assert place(-1, gpu=found, offload=offload, model_bytes=GIB) == Placement()

    def test_zero_is_the_cpu(self):
        assert place(0, gpu=CARD, offload=True, model_bytes=GIB) == Placement()

    def test_said_as_status_and_readyz_show_it(self):
        assert str(Placement()) == "cpu"
        assert str(Placement(29, "NVIDIA L4")) == "gpu (NVIDIA L4, 29 layers)"
        assert str(Placement(-1, "NVIDIA L4")) == "gpu (NVIDIA L4, all layers)"


class TestDetection:
    def test_parse_reads_each_card_in_mib(self):
        text = "NVIDIA GeForce RTX 3060, 11873\nNVIDIA RTX A2000, 12GB, 512\n"
        assert gpu.parse(text) == (
            Gpu("NVIDIA GeForce RTX 3060", 11873 << 20),
            Gpu("NVIDIA RTX A2000, 12GB", 512 << 20),  # a comma in the name
        )

    def test_parse_leaves_out_what_is_not_a_card(self):
        assert gpu.parse("No devices were found\n[N/A], [N/A]\n") == ()

    def test_detect_asks_nvidia_smi_first_on_path(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
        monkeypatch.setenv("PATH", str(fake_smi(tmp_path / "bin", "NVIDIA L4, 22000\nNVIDIA T4, 15000")))
        assert gpu.detect() == Gpu("NVIDIA L4", 22000 << 20)  # the first: llama.cpp's main device

    def test_no_gpu_when_nvidia_smi_fails_or_is_missing(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
        monkeypatch.setenv("PATH", str(fake_smi(tmp_path / "bin", "NVIDIA-SMI has failed", status=9)))
        assert gpu.detect() is None
        monkeypatch.setenv("PATH", str(tmp_path / "empty"))
        assert gpu.detect() is None


@pytest.mark.real_model
def test_a_loaded_model_says_where_it_runs():
    path = verified_path(MODELS_DIR, find(MODELS_DIR, TEST_MODEL))
    assert LlamaChatModel(path, name="tiny", n_ctx=256, n_gpu_layers=0).device == "cpu"
    auto = LlamaChatModel(path, name="tiny", n_ctx=256, n_gpu_layers="auto").device
    if supports_gpu_offload() and gpu.detect() is not None:  # scripts/gpu-check's machine
        assert re.fullmatch(r"gpu \(.+, \d+ layers\)", auto), auto  # all of them, counted
    else:
        assert auto == "cpu"


class TestSettings:
    def test_both_models_default_to_auto(self):
        settings = load_settings(env={})
        assert settings.responder.n_gpu_layers == "auto" == settings.summarizer.n_gpu_layers
        assert Settings().responder.n_gpu_layers == "auto"

    @pytest.mark.parametrize(("given", "read"), [("0", 0), ("-1", -1), ("20", 20), ("auto", "auto")])
    def test_numbers_and_auto_from_the_environment(self, tmp_path: Path, given: str, read: int | str):
        env = {"APPLIANCE__RESPONDER__N_GPU_LAYERS": given, "APPLIANCE__SUMMARIZER__N_GPU_LAYERS": given}
        settings = load_settings(write_config(tmp_path), env=env)
        assert settings.responder.n_gpu_layers == read == settings.summarizer.n_gpu_layers

    @pytest.mark.parametrize("value", ['"gpu"', "-2", "true", "1.5"])
    def test_anything_else_is_refused_naming_the_file_and_the_key(self, tmp_path: Path, value: str):
        config = write_config(tmp_path, f"[summarizer]\nn_gpu_layers = {value}\n")
        with pytest.raises(ConfigError) as info:
            load_settings(config, env={})
        message = str(info.value)
        assert message.startswith(f"{config}: summarizer.n_gpu_layers: expected 'auto' or a number of layers")
        assert "\n" not in message  # one error, not one per member of the union


def script(name: str, *args: str, path: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(ROOT / "scripts" / name), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), "PATH": path},
        timeout=60,
    )


class TestSetup:
    """scripts/gpu-detect (which card setup builds for) and scripts/build-cuda up to its build command."""

    def detect(self, tmp_path: Path, output: str | None, status: int = 0) -> subprocess.CompletedProcess[str]:
        folder = tmp_path / "bin"
        folder.mkdir()
        if output is not None:
            fake_smi(folder, output, status)
        return script("gpu-detect", path=str(folder))  # nothing else on PATH: no real nvidia-smi either

    def test_the_cards_architecture(self, tmp_path: Path):
        found = self.detect(tmp_path, "8.6, 580.65.06")
        assert (found.returncode, found.stdout, found.stderr) == (0, "86\n", "")

    def test_each_kind_of_card_once(self, tmp_path: Path):
        assert self.detect(tmp_path, "8.9, 590.10\n8.6, 590.10\n8.9, 590.10").stdout == "89;86\n"

    def test_no_nvidia_smi_exits_1_saying_nothing(self, tmp_path: Path):
        found = self.detect(tmp_path, None)
        assert (found.returncode, found.stdout, found.stderr) == (1, "", "")

    def test_a_failing_nvidia_smi_is_no_gpu(self, tmp_path: Path):
        found = self.detect(tmp_path, "NVIDIA-SMI has failed because it couldn't communicate with the driver", 9)
        assert found.returncode == 1 and found.stdout == "" and "nvidia-smi failed" in found.stderr

    @pytest.mark.parametrize("row", ["6.1, 580.65.06", "8.6, 550.54.15"], ids=["Pascal", "driver 550"])
    def test_a_card_or_driver_too_old_for_cuda_13_is_left_out(self, tmp_path: Path, row: str):
        found = self.detect(tmp_path, row)
        assert found.returncode == 1 and found.stdout == "" and "older than CUDA 13 supports" in found.stderr

    def dry_run(self, tmp_path: Path, archs: str, cmake_args: str = "") -> dict[str, str]:
        env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "CMAKE_ARGS": cmake_args}
        done = script("build-cuda", "--dry-run", archs, path=os.environ["PATH"], env=env)
        assert done.returncode == 0, done.stderr
        return dict(line.split("=", 1) if "=" in line else line.split(": ", 1) for line in done.stdout.splitlines())

    def test_the_build_is_for_the_cards_architecture_with_the_registrys_cuda(self, tmp_path: Path):
        plan = self.dry_run(tmp_path, "86")
        folder = plan["wheel folder"]
        assert folder.startswith(str(tmp_path / "cache" / "appliance" / "llama-cuda")) and plan["built"] == "no"
        assert plan["CMAKE_ARGS"].split() == [
            "-DGGML_CUDA=on",
            "-DCMAKE_CUDA_ARCHITECTURES=86",
            f"-DCUDAToolkit_ROOT={folder}/toolkit/nvidia/cu13",
            f"-DCMAKE_CUDA_COMPILER={folder}/toolkit/nvidia/cu13/bin/nvcc",
        ]

    def test_each_architecture_and_cpu_flag_set_is_cached_apart(self, tmp_path: Path):
        folders = {
            self.dry_run(tmp_path, "86")["wheel folder"],
            self.dry_run(tmp_path, "89")["wheel folder"],
            self.dry_run(tmp_path, "86", "-DGGML_AMX_INT8=OFF")["wheel folder"],
        }
        assert len(folders) == 3
        assert self.dry_run(tmp_path, "86", "-DGGML_AMX_INT8=OFF")["CMAKE_ARGS"].endswith(" -DGGML_AMX_INT8=OFF")

    def test_a_built_wheel_is_found_in_its_folder(self, tmp_path: Path):
        env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "CMAKE_ARGS": ""}
        missing = script("build-cuda", "--wheel", "86", path=os.environ["PATH"], env=env)
        assert missing.returncode == 1 and "no wheel built for 86" in missing.stderr
        wheel = Path(self.dry_run(tmp_path, "86")["wheel folder"]) / "llama_cpp_python-0.3.36-cp311-linux_x86_64.whl"
        wheel.parent.mkdir(parents=True)
        wheel.touch()
        assert self.dry_run(tmp_path, "86")["built"] == str(wheel)
        assert script("build-cuda", "--wheel", "86", path=os.environ["PATH"], env=env).stdout == f"{wheel}\n"
