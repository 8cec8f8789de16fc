"""llama.cpp's CPU worker threads when it is built with OpenMP (GNU libgomp): a thread that is done
decoding hands its workers back, so that the threads that decode next keep spinning at their barriers.

libgomp keeps a pool of worker threads for each thread that has run a parallel region (every
``llama_decode`` with ``n_threads`` > 1 is one), alive until that thread exits. Once the pools of the
process together hold more threads than the machine has CPUs, libgomp stops spinning at barriers and
sleeps on a futex instead, in every pool, even while only one of them works. A decode waits at a
barrier after every node of the model's graph, hundreds a step, and each sleep costs a wake-up. The
appliance decodes on several threads, mostly one at a time (the model queue's or the batched engine's,
the warm-up's, the summary worker's), so its idle pools made every decode sleep at every barrier: on
two cores, a second pool alone turned a few voluntary context switches per decode into about a
thousand. A thread that goes idle therefore releases its pool (``omp_pause_resource_all``) and the next
decode on it starts a new one (one thread start). When two threads really decode at once, libgomp
still sleeps instead of spinning, as it should with more threads than cores.

A no-op where llama.cpp runs without libgomp (another build, or ggml's own thread pool).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path


@functools.cache
def _pause() -> Callable[[int], int] | None:
    """libgomp's ``omp_pause_resource_all`` as llama.cpp loaded it, or None if no libgomp is loaded."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:  # not Linux: llama.cpp's builds there do not use libgomp
        return None
    paths = {line.split()[-1] for line in maps.splitlines() if "/libgomp" in line}
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)  # the copy in use, never a new one
        except OSError:
            continue
        pause = getattr(lib, "omp_pause_resource_all", None)  # OpenMP 5.0 (GCC 9)
        if pause is not None:
            pause.argtypes, pause.restype = [ctypes.c_int], ctypes.c_int
            return pause  # type: ignore[no-any-return]
    return None


_SOFT = 1  # omp_pause_soft: the pool's threads end; libgomp starts new ones when asked


def release_workers() -> bool:
    """End the calling thread's OpenMP worker pool, if it has one; whether libgomp is there to ask.
    Call it where a thread's llama.cpp work ends; only the calling thread's pool is ended."""
    pause = _pause()
    if pause is None:
        return False
    pause(_SOFT)
    return True


@contextlib.contextmanager
def decoding() -> Iterator[None]:
    """A block of llama.cpp work on this thread: its OpenMP workers are released when it ends."""
    try:
        yield
    finally:
        release_workers()
