"""llama.cpp's native library in this process: imported with the environment's CUDA libraries at
hand, quiet and laid out as asked while models load (:class:`Loading`), its errors to the journal
afterwards; where a model runs (its layers, CPU or GPU, and its threads); and a context's one
sequence saved and restored (:func:`saved`, :func:`restore`), which llama-cpp-python does not wrap.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import sys
import sysconfig
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from appliance.errors import ModelLoadError
from appliance.models import gpu
from appliance.models.states import SavedState

if TYPE_CHECKING:
    from llama_cpp import Llama


class Loading:
    """While any model loads: the process's stdout and stderr point at /dev/null, llama.cpp logs
    through its own C logger (to that /dev/null) instead of a Python callback, and it keeps the
    weights as the file lays them out.

    * llama.cpp writes its loading chatter straight to fds 1 and 2. The first load to start redirects
      and the last to end restores, so models load at once (on two cores the summarizer loads while
      the responder's file is hashed). llama-cpp-python's own redirection (``verbose=False``) saves
      and restores per load: two at once could restore each other's /dev/null and silence the daemon.
    * A load logs thousands of lines, and a Python callback takes the GIL for each: beside a thread
      running Python (imports, another load's set-up) a load took several times as long.
      Afterwards llama.cpp's errors go to the ``appliance.llama`` logger (see :func:`log_errors`).
    * llama.cpp repacks the quantized weights for its CPU kernels (``use_extra_bufts``) unless told
      not to, which llama-cpp-python has no argument for, so its default model parameters are
      replaced while we load, with the layout each loading thread asked for (:meth:`laid_out`).
      Repacked weights load and evaluate long prompts more slowly; where the CPU has the kernels
      (AVX-512 here) they decode faster, several sequences at once most of all (docs/batching.md).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved: tuple[int, int] | None = None
        self._default_params: Callable[[], Any] | None = None
        self._layout = threading.local()  # per loading thread: two models may load at once, each its way

    def laid_out(self, *, repack: bool) -> Loading:
        """This context, for a load in this thread with weights repacked or as the file lays them out."""
        self._layout.repack = repack
        return self

    def __enter__(self) -> None:
        import llama_cpp
        import llama_cpp.llama_cpp as native  # where llama_cpp.Llama looks its model parameters up

        with self._lock:
            if self._users == 0:
                self._default_params = native.llama_model_default_params
                native.llama_model_default_params = self._params(self._default_params)
                _flush_std()
                saved = (os.dup(1), os.dup(2))
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
                os.close(null)
                self._saved = saved
                llama_cpp.llama_log_set(llama_cpp.llama_log_callback(0), None)  # NULL: llama.cpp's C logger
            self._users += 1

    def _params(self, default_params: Callable[[], Any]) -> Callable[[], Any]:
        """llama.cpp's default model parameters, repacking as the calling thread's load asked."""

        def params() -> Any:
            chosen = default_params()
            chosen.use_extra_bufts = getattr(self._layout, "repack", False)
            return chosen

        return params

    def __exit__(self, *exc: object) -> None:
        import llama_cpp
        import llama_cpp.llama_cpp as native

        with self._lock:
            self._users -= 1
            if self._users == 0 and self._saved is not None:
                native.llama_model_default_params = self._default_params
                self._default_params = None
                llama_cpp.llama_log_set(_error_logger(), None)
                _flush_std()
                for fd, copy in zip((1, 2), self._saved):
                    os.dup2(copy, fd)
                    os.close(copy)
                self._saved = None


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            continue  # replaced by a caller, closed, or None under pythonw: nothing of ours is buffered


_LOG = logging.getLogger("appliance.llama")
_GGML_LOG_LEVEL_ERROR = 3


def log_errors(level: int, text: bytes | None, _user_data: Any) -> None:
    """llama.cpp's log callback between loads: its errors, to the journal; nothing else."""
    if level == _GGML_LOG_LEVEL_ERROR and text:
        _LOG.error("llama.cpp: %s", text.decode("utf-8", "replace").rstrip())


@functools.cache
def _error_logger() -> Any:
    """:func:`log_errors` as a C function pointer, made once and kept (llama.cpp holds its address)."""
    import llama_cpp

    return llama_cpp.llama_log_callback(log_errors)


LOADING = Loading()

# The CUDA libraries a CUDA build of llama.cpp needs, as the registry's NVIDIA packages install them in
# this environment (scripts/setup): llama.cpp's libraries look only beside themselves, so they are
# loaded first, by path, and the dynamic linker then finds them by name. Dependencies first.
_CUDA_LIBRARIES = ("libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13")


@functools.cache
def import_native() -> None:
    """Import llama_cpp (its native library), with the environment's CUDA libraries loaded before it."""
    folder = Path(sysconfig.get_path("purelib")) / "nvidia" / "cu13" / "lib"
    for name in _CUDA_LIBRARIES:
        if (folder / name).is_file():
            ctypes.CDLL(str(folder / name), mode=ctypes.RTLD_GLOBAL)
    import llama_cpp  # noqa: F401  (loads the native library now, with the CUDA libraries at hand)


def supports_gpu_offload() -> bool:
    """Whether the installed llama.cpp can put layers on a GPU (a CUDA build; a CPU build cannot)."""
    import_native()
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())


def placement(path: Path, setting: gpu.GpuLayers, name: str) -> gpu.Placement:
    """Where this model's layers go under ``n_gpu_layers = setting`` (see :func:`appliance.models.gpu.place`)."""
    if setting == 0:
        return gpu.Placement()  # nvidia-smi is not asked: a vocab-only load, or CPU only by choice
    found, offload = gpu.detect(), supports_gpu_offload()
    placed = gpu.place(setting, gpu=found, offload=offload, model_bytes=path.stat().st_size)
    if setting != "auto" and not placed.layers:
        why = "no GPU was found" if found is None else "this llama.cpp was built without GPU offload"
        _LOG.warning("%s: n_gpu_layers = %s, but %s: it runs on the CPU", name, setting, why)
    return placed


def usable_cpus() -> int:
    """The CPUs this process may run on (``n_threads = 0``: one thread each): its affinity where the
    system has one (systemd's CPUAffinity=, a container's cpuset), else every CPU. More threads than
    that would wait at llama.cpp's barriers for a CPU."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this system
        return os.cpu_count() or 1


def load(
    path: Path, *, n_ctx: int, threads: int, placed: gpu.Placement, seed: int, vocab_only: bool, repack: bool
) -> Llama:
    """A GGUF loaded into a context of ``n_ctx`` tokens, quietly (:data:`LOADING`), its layers where
    ``placed`` puts them; a failure is a :class:`ModelLoadError` naming the file."""
    import_native()  # imported here so that the rest of the app starts without the native library
    import llama_cpp

    try:
        with LOADING.laid_out(repack=repack):
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                n_gpu_layers=placed.layers,
                seed=seed if seed >= 0 else llama_cpp.LLAMA_DEFAULT_SEED,
                vocab_only=vocab_only,
                # Read, not mapped: once loaded, the weights no longer follow the file on disk, and
                # page-cache pressure from other processes cannot evict them between turns.
                use_mmap=vocab_only or placed.layers != 0,
                verbose=True,  # no redirection of its own: LOADING's is shared (see Loading)
            )
        llama.verbose = False  # no timing lines on stderr after each generation
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelLoadError(f"cannot load {path}: {exc}") from None
    return llama


def device(llama: Llama, placed: gpu.Placement) -> str:
    """Where a loaded model runs, as ``appliance status`` and ``/readyz`` say it."""
    import llama_cpp

    layers = llama_cpp.llama_model_n_layer(llama.model)
    # -1 (or more than there are) offloads them all: said as the model's count
    return str(placed if 0 <= placed.layers <= layers else gpu.Placement(layers, placed.gpu))


def saved(llama: Llama) -> SavedState | None:
    """The context's one sequence (its KV cache, not the logits) and its tokens; None: nothing was written."""
    import llama_cpp

    ctx = llama._ctx.ctx
    size = llama_cpp.llama_state_seq_get_size(ctx, 0)
    data = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(ctx, data, size, 0)
    if not written:
        return None
    tokens = np.array(llama.input_ids[: llama.n_tokens], dtype=np.intc)
    return SavedState(tokens=tokens, data=bytes(memoryview(data)[:written]))


def restore(llama: Llama, state: SavedState) -> bool:
    """Replace what the context holds by a saved sequence; False: it did not load (the context is reset)."""
    import llama_cpp

    ctx = llama._ctx.ctx
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
    data = (ctypes.c_uint8 * len(state.data)).from_buffer_copy(state.data)
    if llama_cpp.llama_state_seq_set_data(ctx, data, len(state.data), 0) != len(state.data):
        llama.reset()
        return False
    n = len(state.tokens)
    llama.input_ids[:n] = state.tokens
    llama.n_tokens = n
    llama._requires_eval = True  # logits are not part of the saved state: the answer re-evaluates a token
    return True
