"""The latency a customer feels, for ``appliance bench perf``: spikes, several customers, the floor.

* **Spikes** (``ttft_spike_ratio``): the time to first token of every answered customer turn from
  ``--early`` to the end of the ``rolling`` replay, turns right after a summary update included,
  as production sees it: the summary worker and the prefix warm-up have had the customer's typing
  time (they are drained first). p95 / p50.
* **Several customers** (``interleaved_ratio``): four sessions of other dialogues, replayed to their
  late turns, answered round-robin (each answer follows another session's), against the same turns
  answered one session at a time (each follows its own session's warm-up). Medians.
* **The floor** (``ttft_floor_ratio``): the late ``rolling`` TTFT median against the time bare
  llama.cpp takes to evaluate just the customer's message on a cache holding the rest.
* **Warm-up** (``prewarm``): how many measured turns found their prefix warmed, and its idle time.

The time to first token is the customer's: from the call into the pipeline to the first streamed
piece, after which the answer is cancelled (its length is not what is measured here).
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from appliance.app import Appliance
from appliance.errors import Cancelled, InputError
from appliance.lab.dialogues import load_sessions
from appliance.lab.stats import median, percentile
from appliance.protocols import ChatModel, Recaller
from appliance.turn.pipeline import Pipeline

CUSTOMERS = 4  # sessions answered round-robin
SLOWEST = 5  # turns listed with the spike report


def first_token_s(pipeline: Pipeline, session_id: str, text: str) -> float:
    """Seconds from asking (not stored) to the first streamed piece; the rest is not generated."""
    cancel = threading.Event()
    first: list[float] = []

    def seen(_piece: str) -> None:
        if not first:
            first.append(time.perf_counter())
        cancel.set()

    start = time.perf_counter()
    try:
        pipeline.answer(session_id, text, persist=False, on_token=seen, cancel=cancel)
    except Cancelled:
        pass
    return (first[0] if first else time.perf_counter()) - start  # an empty answer: the customer waited for it all


def settle(appliance: Appliance) -> None:
    """Give the background its idle time: the summary first, then the warm-up that follows it."""
    if appliance.worker is not None:
        appliance.worker.drain()
    if appliance.prewarmer is not None:
        appliance.prewarmer.drain()


def warmed(appliance: Appliance, session_id: str) -> bool:
    """Whether the session's latest warm-up evaluated its whole prefix."""
    if appliance.prewarmer is None:
        return False
    last = appliance.prewarmer.last.get(session_id)
    return last is not None and last.complete


def summary_version(appliance: Appliance, session_id: str) -> int:
    current = appliance.store.current_summary(session_id)
    return current.version if current is not None else 0


def spike_report(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """p50, p95 and their ratio over every sample, and the turns right after a summary update."""
    ttft = [x["ttft_s"] for x in samples]
    after = [x["ttft_s"] for x in samples if x["after_summary_update"]]
    p50, p95 = percentile(ttft, 50), percentile(ttft, 95)
    return {
        "turns": len(ttft),
        "p50_s": round(p50, 4),
        "p95_s": round(p95, 4),
        "max_s": round(max(ttft, default=0.0), 4),
        "after_summary_update": {"turns": len(after), "median_s": round(median(after), 4) if after else 0.0},
        "ratio": round(p95 / p50, 4) if p50 > 0 else 0.0,
        # what the slowest turns had in common, to tell a spike's cause
        "slowest": sorted(samples, key=lambda x: -x["ttft_s"])[:SLOWEST],
    }


def prewarm_report(samples: Sequence[dict[str, Any]], appliance: Appliance | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"turns": len(samples), "warmed": sum(1 for x in samples if x["warmed"])}
    if appliance is not None and appliance.prewarmer is not None:
        st = appliance.prewarmer.stats()
        out |= {
            "runs": st.runs,
            "interrupted": st.interrupted,
            "evaluated_tokens": st.evaluated_tokens,
            "idle_s": round(st.seconds, 3),
            "idle_s_per_run": round(st.seconds / st.runs, 4) if st.runs else 0.0,
        }
    return out


def chains(path: Path, count: int, turns: int) -> list[list[tuple[str, str]]]:
    """``count`` sessions of ``turns`` turns, each starting with a different dialogue (the k-th
    longest) and chained with the ones after it, so no two prompts share more than the system's."""
    sessions = sorted(load_sessions(path), key=lambda s: (-len(s.turns), s.id))
    if not sessions:
        raise InputError(f"{path}: no sessions", field="sessions")
    if len(sessions) < count:
        raise InputError(f"{path}: {len(sessions)} sessions, {count} needed", field="sessions")
    out = []
    for k in range(count):
        chain: list[tuple[str, str]] = []
        for s in sessions[k:] + sessions[:k]:
            chain.extend(s.turns)
            if len(chain) >= turns:
                break
        if len(chain) < turns:
            raise InputError(
                f"{path}: all sessions together have {len(chain)} turns, fewer than {turns}", field="turns"
            )
        out.append(chain[:turns])
    return out


def answered(turns: Sequence[tuple[str, str]], index: int) -> bool:
    return turns[index][0] == "customer" and index + 1 < len(turns) and turns[index + 1][0] == "agent"


def interleaved(
    build: Callable[[Path], tuple[Appliance, Any]],
    model: ChatModel,
    sessions_file: Path,
    *,
    late: int,
    rounds: int,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """``CUSTOMERS`` sessions replayed teacher-forced to ``late``, then ``rounds`` rounds: each
    session's next customer turn answered round-robin, then the same turns one session at a time
    (each after its own warm-up; saved states dropped first, so none holds the question already),
    then the real exchanges stored and the background settled."""
    needed = late + 4 * rounds + 4
    scripts = chains(sessions_file, CUSTOMERS, needed)
    with tempfile.TemporaryDirectory(prefix="bench-interleaved-") as folder:
        appliance, switch = build(Path(folder) / "interleaved.db")
        pipeline = appliance.pipeline
        try:
            ids, at = [], []
            for k, script in enumerate(scripts):
                sid = appliance.sessions.new_session(policy="rolling", title=f"bench interleaved {k}").id
                progress(f"interleaved: replaying session {k + 1} of {CUSTOMERS} to turn {late}")
                at.append(replay(appliance, switch, sid, script, 0, late))
                ids.append(sid)
            mixed: list[float] = []
            alone: list[float] = []
            states = getattr(model, "states", None)
            for r in range(rounds):
                asked = [scripts[k][at[k]][1] for k in range(CUSTOMERS)]
                for k in range(CUSTOMERS):
                    mixed.append(first_token_s(pipeline, ids[k], asked[k]))
                if states is not None:
                    states.clear()
                for k in range(CUSTOMERS):
                    if appliance.prewarmer is not None:
                        appliance.prewarmer.warm(ids[k])
                    alone.append(first_token_s(pipeline, ids[k], asked[k]))
                progress(
                    f"interleaved round {r + 1}: round-robin "
                    + ", ".join(f"{x:.3f}" for x in mixed[-CUSTOMERS:])
                    + " s; one at a time "
                    + ", ".join(f"{x:.3f}" for x in alone[-CUSTOMERS:])
                    + " s"
                )
                for k in range(CUSTOMERS):
                    at[k] = replay(appliance, switch, ids[k], scripts[k], at[k], at[k] + 1)
        finally:
            appliance.close()
    m, a = median(mixed), median(alone)
    return {
        "sessions": CUSTOMERS,
        "rounds": rounds,
        "round_robin_median_s": round(m, 4),
        "one_at_a_time_median_s": round(a, 4),
        "ratio": round(m / a, 4) if a > 0 else 0.0,
        "samples": {"round_robin": [round(x, 4) for x in mixed], "one_at_a_time": [round(x, 4) for x in alone]},
    }


def replay(
    appliance: Appliance, switch: Any, session_id: str, script: Sequence[tuple[str, str]], start: int, stop: int
) -> int:
    """Store ``script`` from ``start`` teacher-forced (answers replayed instantly) until at least
    ``stop`` and an answered customer turn; returns that turn's index, the background settled."""
    pipeline, index = appliance.pipeline, start
    while index < len(script) and (index < stop or not answered(script, index)):
        role, text = script[index]
        if answered(script, index):
            switch.replay = script[index + 1][1]
            try:
                pipeline.answer(session_id, text)
            finally:
                switch.replay = None
            index += 2
        else:
            appliance.sessions.record_turn(session_id, role, text)
            index += 1
        settle(appliance)
    if index >= len(script):
        raise InputError("the session ran out of turns before the measured ones", field="turns")
    return index


def interleaved_builder(
    settings: Any, switch_of: Callable[[], Any], summarizer: ChatModel | None, recall: Recaller | None
) -> Callable[[Path], tuple[Appliance, Any]]:
    """How :func:`interleaved` builds its appliance: the bench's settings over a fresh database."""
    from appliance.lab.harness import appliance_for, evolve

    def build(database: Path) -> tuple[Appliance, Any]:
        local = evolve(
            settings,
            paths={"database": database},
            context={"policy": "rolling"},
            guard={"policy": "flag"},
            routing={"early": ""},
            refine={"enabled": False},
        )
        switch = switch_of()
        return appliance_for(local, switch, summarizer, "rolling", recall=recall, prewarm=True), switch

    return build
