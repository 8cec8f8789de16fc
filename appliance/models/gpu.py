"""Where a local model runs: on the GPU when there is one with room for it, else on the CPU.

``n_gpu_layers = "auto"`` (the default) offloads every layer when an NVIDIA GPU is present, the
installed llama.cpp was built to offload (``scripts/setup`` builds it with CUDA where ``nvidia-smi``
finds a GPU), and the GPU's free memory holds the model file and a margin; else none. The rule,
:func:`place`, is a pure function of what :func:`detect` read, so it is tested without a GPU.
Stdlib only: the GPU is asked through ``nvidia-smi``, which comes with the driver.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from typing import Literal

# Beyond the weights, llama.cpp's CUDA backend takes the CUDA context, compute buffers and the KV
# cache (117 MB for the default responder's 4096 tokens) on the GPU; a model that leaves less free
# than this stays on the CPU rather than failing to load, or starving the other model, which loads
# at the same time and reads the same free memory.
MARGIN_BYTES = 1 << 30
SMI_TIMEOUT_S = 10.0

GpuLayers = int | Literal["auto"]


@dataclass(frozen=True)
class Gpu:
    """One NVIDIA GPU as ``nvidia-smi`` reports it."""

    name: str
    free_bytes: int


@dataclass(frozen=True)
class Placement:
    """Where a model's layers run: ``layers`` on ``gpu`` (-1: all of them), the rest on the CPU."""

    layers: int = 0
    gpu: str = ""

    def __str__(self) -> str:
        if not self.layers:
            return "cpu"
        return f"gpu ({self.gpu}, {'all' if self.layers < 0 else self.layers} layers)"


def parse(text: str) -> tuple[Gpu, ...]:
    """The GPUs in ``nvidia-smi --query-gpu=name,memory.free --format=csv,noheader,nounits``'s output
    (free memory in MiB); lines that are not such a pair (a driver's error text) are left out."""
    found = []
    for line in text.splitlines():
        name, _, free = line.rpartition(",")
        if name.strip() and free.strip().isdigit():
            found.append(Gpu(name.strip(), int(free) * 1024 * 1024))
    return tuple(found)


def detect() -> Gpu | None:
    """The first NVIDIA GPU (llama.cpp's main device), or None where ``nvidia-smi`` is missing, fails
    or lists none (no driver, no device, or the service's sandbox hides it)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    query = [smi, "--query-gpu=name,memory.free", "--format=csv,noheader,nounits"]
    try:
        done = subprocess.run(query, capture_output=True, text=True, timeout=SMI_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    gpus = parse(done.stdout) if done.returncode == 0 else ()
    return gpus[0] if gpus else None


def place(setting: GpuLayers, *, gpu: Gpu | None, offload: bool, model_bytes: int) -> Placement:
    """Where a model of ``model_bytes`` runs under ``n_gpu_layers = setting``: ``auto`` puts all its
    layers on ``gpu`` when llama.cpp can ``offload`` and the GPU has room, none otherwise; a number is
    taken as given (0: CPU only, -1: all), and means the CPU too without a GPU or offload."""
    if gpu is None or not offload or setting == 0:
        return Placement()
    if setting == "auto":
        return Placement(-1, gpu.name) if gpu.free_bytes >= model_bytes + MARGIN_BYTES else Placement()
    return Placement(setting, gpu.name)
