"""Where a turn's time goes: one timer per turn, its phases named, read out as one frozen record.

The turn's phases are not back to back (planning, generation and the store's bookkeeping happen
between them), so each is timed on its own; ``total_s`` runs from the timer's start to the moment the
record is read. Generation times come from the model's own :class:`~appliance.types.Generation`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from appliance.types import Generation, Timings

Phase = Literal["recall", "knowledge", "context", "probe", "check", "repair", "store"]


class TurnTimer:
    """Started with the turn; ``with timer.phase("context"):`` times one phase, ``timings`` reads them out.

    ``recall`` covers the turn's facts, read-back request and recalled turns; ``knowledge`` the fetch
    check and retrieval; ``context`` the prompt's
    build; ``probe`` whether the placed passages answer the question (before the answer: the customer
    waits for it); ``check`` the first answer's check; ``repair`` the guard and the refinement after it; and
    ``store`` the record and the write. A phase that did not run reads as zero.
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._started = clock()
        self._spent: dict[Phase, float] = {}

    @contextmanager
    def phase(self, name: Phase) -> Iterator[None]:
        begun = self._clock()
        try:
            yield
        finally:
            self._spent[name] = self._spent.get(name, 0.0) + self._clock() - begun

    def timings(self, first: Generation) -> Timings:
        """The phases so far, with ``first``'s time to first token and generation time, and the time
        since the start as ``total_s``."""
        spent = self._spent.get
        return Timings(
            context_ms=spent("context", 0.0) * 1000,
            recall_ms=spent("recall", 0.0) * 1000,
            knowledge_ms=spent("knowledge", 0.0) * 1000,
            probe_ms=spent("probe", 0.0) * 1000,
            ttft_s=first.ttft_s,
            generate_s=first.total_s,
            check_ms=spent("check", 0.0) * 1000,
            repair_s=spent("repair", 0.0),
            store_ms=spent("store", 0.0) * 1000,
            total_s=self._clock() - self._started,
        )
