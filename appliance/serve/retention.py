"""Retention: conversations quiet for longer than ``retention.days`` are erased, at start and daily.

Each erasure runs as a job in the session's lane of the model's queue, like an answer, so it can never
land between an answer's snapshot and its write; inside the job the session is looked at again, and
one that a turn reached since the sweep found it quiet is kept. The store erases (its text gone from
the database file and its WAL, an audit row left with the reason ``retention``). The log says how
many conversations were erased, never what they held. The audit trail's records older than the
conversations kept are deleted in the same sweep (the newest always stays: the chain goes on from it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from appliance.errors import Busy, Cancelled, SessionNotFound, ShuttingDown
from appliance.store import Store
from appliance.turn.queue import FairQueue, Job

log = logging.getLogger("appliance.retention")

DAY_S = 86400.0


def sweep(
    store: Store,
    queue: FairQueue,
    older_than_s: float,
    *,
    clock: Callable[[], float] = time.time,
    timeout_s: float = 600.0,
    on_erased: Callable[[str], None] = lambda session_id: None,
) -> int:
    """Erase every session quiet for longer than ``older_than_s``, one job at a time; returns how many.

    ``clock`` is the wall clock the turns were stamped with (``time.time``). A full queue or a stopping
    appliance ends the sweep early; the next one takes up the rest.
    """
    now = clock()
    cutoff = now - older_than_s
    erased = 0
    for session_id in store.expired(older_than_s, now=now):

        def erase(job: Job[bool], session_id: str = session_id) -> bool:
            return erase_if_quiet(store, session_id, cutoff)

        try:
            if queue.submit(session_id, erase).future.result(timeout_s):
                erased += 1
                on_erased(session_id)
        except SessionNotFound:
            continue  # erased meanwhile by a request
        except (Busy, ShuttingDown, Cancelled, TimeoutError):
            break
    store.prune_audit(older_than_s, now=now)  # the audit trail is kept as long as the conversations
    return erased


def erase_if_quiet(store: Store, session_id: str, cutoff: float) -> bool:
    """In the session's lane: erase it unless a turn arrived after ``cutoff`` (a time.time())."""
    turns = store.turns(session_id)
    last = turns[-1].created_at if turns else store.session(session_id).created_at
    if last >= cutoff:
        return False
    store.erase(session_id, reason="retention")
    return True


async def keep(
    store: Store,
    queue: FairQueue,
    days: float,
    *,
    on_erased: Callable[[str], None] = lambda session_id: None,
    every_s: float = DAY_S,
    clock: Callable[[], float] = time.time,
) -> None:
    """Sweep now and then every ``every_s`` seconds, off the event loop, until cancelled; 0 days: never."""
    if days <= 0:
        return
    while True:
        try:
            erased = await asyncio.to_thread(sweep, store, queue, days * DAY_S, clock=clock, on_erased=on_erased)
        except Exception:  # noqa: BLE001 - a failed sweep (a locked database) must not stop the daemon; logged
            log.exception("retention: the sweep failed; trying again in %.0f s", every_s)
        else:
            log.info("retention: erased %d conversations quiet for more than %g days", erased, days)
        await asyncio.sleep(every_s)
