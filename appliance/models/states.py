"""Evaluated prompt prefixes kept per session, so customers answered in turn do not evict each other.

llama.cpp holds one context: answering customer B after customer A throws away A's evaluated
prompt, and A's next answer pays its whole prompt again. The llama.cpp backend saves the context's
state (the KV cache of its one sequence, without the logits llama-cpp-python's own state copies)
under the session after each answer or warm-up, and restores it when that session is answered next.
This module is the bookkeeping only: a least-recently-used map bounded by bytes, with counts for
the metrics and the bench. It knows nothing of llama.cpp.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SavedState:
    """One session's evaluated tokens and the backend's bytes that restore them."""

    tokens: np.ndarray  # int token ids, in order; the state holds exactly these
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data) + self.tokens.nbytes


@dataclass(frozen=True)
class CacheStats:
    entries: int = 0
    bytes: int = 0
    saves: int = 0
    restores: int = 0
    evictions: int = 0


def shared_prefix(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> int:
    """How many leading tokens two id sequences share."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(differ[0]) if differ.size else n


class StateCache:
    """Saved states by key (a session id), least recently used out first once over ``limit_bytes``.

    A state larger than the whole limit is not kept (it would evict every other session for one).
    Thread-safe: the backend calls it under its own lock, the metrics read it from another thread.
    """

    def __init__(self, limit_bytes: int) -> None:
        self.limit = max(0, limit_bytes)
        self._states: OrderedDict[str, SavedState] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._stats = CacheStats()

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def get(self, key: str) -> SavedState | None:
        with self._lock:
            state = self._states.get(key)
            if state is not None:
                self._states.move_to_end(key)
            return state

    def put(self, key: str, state: SavedState) -> None:
        with self._lock:
            self._pop(key)
            if state.size > self.limit:
                return
            self._states[key] = state
            self._bytes += state.size
            evicted = 0
            while self._bytes > self.limit:
                _, old = self._states.popitem(last=False)
                self._bytes -= old.size
                evicted += 1
            self._count(saves=1, evictions=evicted)

    def restored(self) -> None:
        with self._lock:
            self._count(restores=1)

    def drop(self, key: str) -> None:
        """Forget a session (erased, or its state no longer matches anything worth keeping)."""
        with self._lock:
            self._pop(key)

    def clear(self) -> None:
        with self._lock:
            self._states.clear()
            self._bytes = 0

    def stats(self) -> CacheStats:
        with self._lock:
            s = self._stats
            return CacheStats(len(self._states), self._bytes, s.saves, s.restores, s.evictions)

    def _pop(self, key: str) -> None:
        old = self._states.pop(key, None)
        if old is not None:
            self._bytes -= old.size

    def _count(self, **more: int) -> None:
        s = self._stats
        self._stats = CacheStats(
            s.entries,
            s.bytes,
            s.saves + more.get("saves", 0),
            s.restores + more.get("restores", 0),
            s.evictions + more.get("evictions", 0),
        )
