"""How far summaries are behind: the rule, and the gauge ``/metrics`` shows.

A summary falls behind when answers keep the worker waiting. The gauge follows the sessions the
worker was told about and that are still behind; their lag is read from the store when the gauge is
read (a metrics scrape), never on the answer's thread, which reads its session once per turn.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Collection

from appliance.errors import SessionNotFound, StoreError
from appliance.store import Store

log = logging.getLogger(__name__)

TRACK_SESSIONS = 4096  # sessions the gauge follows, latest notified first; the others ended long ago


def summary_lag(n_turns: int, keep_turns: int, covers_to: int) -> int:
    """How many turns the current summary is behind: the turns it may cover (all but the newest
    ``keep_turns``, which the context carries verbatim anyway) that it does not. ``covers_to`` is the
    current accepted version's, -1 without one."""
    return max(0, n_turns - keep_turns - (covers_to + 1))


class LagGauge:
    """The largest lag among the sessions notified lately (those behind by at least one turn)."""

    def __init__(self, store: Store, keep_turns: int, policies: Collection[str] | None) -> None:
        self.store = store
        self.keep_turns = keep_turns
        self.policies = frozenset(policies) if policies is not None else None
        self._lags: OrderedDict[str, int | None] = OrderedDict()  # None: not read since it changed
        self._lock = threading.Lock()

    def lag_of(self, policy: str, n_turns: int, covers_to: int) -> int | None:
        """A session's lag (:func:`summary_lag`); None for a policy that reads no summary."""
        if self.policies is not None and policy not in self.policies:
            return None
        return summary_lag(n_turns, self.keep_turns, covers_to)

    def changed(self, session_id: str) -> None:
        """A turn or a summary was stored: read this session's lag at the next look. No store access."""
        with self._lock:
            self._lags.pop(session_id, None)
            self._lags[session_id] = None
            while len(self._lags) > TRACK_SESSIONS:
                self._lags.popitem(last=False)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._lags.pop(session_id, None)

    def max_lag(self) -> int:
        """Read the lag of every session followed (those behind, and those changed since the last
        look), drop those caught up or erased, and return the largest (0: none)."""
        with self._lock:
            followed = list(self._lags)
        lags = {session_id: self._read(session_id) for session_id in followed}
        with self._lock:
            for session_id, lag in lags.items():
                if session_id not in self._lags:
                    continue  # forgotten meanwhile
                if lag:
                    self._lags[session_id] = lag
                else:
                    del self._lags[session_id]
            return max((lag for lag in self._lags.values() if lag), default=0)

    def _read(self, session_id: str) -> int | None:
        try:
            policy = self.store.session(session_id).policy
            if self.policies is not None and policy not in self.policies:
                return None
            current = self.store.current_summary(session_id)
            return self.lag_of(policy, self.store.turn_count(session_id), current.covers_to if current else -1)
        except SessionNotFound:
            return None
        except StoreError:  # a gauge: never fail the scrape for one session
            log.warning("summary lag: cannot read session %s", session_id, exc_info=True)
            return None
