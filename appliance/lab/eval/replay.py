"""One (dialogue, policy) replay: every real turn recorded, probes and sampled questions asked.

Every real turn is *recorded* (teacher forcing, :meth:`Sessions.record_turn`), which runs the
ledger and the summary worker exactly as in production; the model is asked only where a question is
scored, with ``persist=False`` (nothing stored, the conversation goes on unchanged). The summary
worker is drained after every recorded turn and before every question: in production the summary
is made while the customer types, and draining makes the runs reproducible.

Each question gives one *point*, a JSON-ready dict of what was measured (the cache stores them,
:mod:`appliance.lab.eval.metrics` scores them).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appliance.config import Settings
from appliance.errors import ApplianceError
from appliance.lab.dialogues import BenchSession, Probe, equated, kept
from appliance.lab.harness import Recorder, appliance_for, evolve
from appliance.protocols import ChatModel, Recaller
from appliance.types import TurnResult

if TYPE_CHECKING:
    from appliance.app import Appliance

HISTORY_TURNS = 6  # real turns shown to the judge before a sampled question
Point = dict[str, Any]


def position_stage(index: int, total: int) -> str:
    """Seed 002's stage by position: the first 20 % of turns early, up to 90 % mid, the rest late."""
    progress = index / total if total else 0.0
    return "early" if progress <= 0.2 else "mid" if progress <= 0.9 else "late"


def sample_turns(dialogue: BenchSession, n: int, seed: int) -> tuple[int, ...]:
    """``n`` customer turns that have a real agent reply, chosen by a seed of the run and the dialogue
    (the same turns for every policy, so their answers can be compared pairwise)."""
    candidates = [
        i
        for i, (role, _) in enumerate(dialogue.turns[:-1])
        if role == "customer" and dialogue.turns[i + 1][0] == "agent"
    ]
    rng = random.Random(f"{seed}:{dialogue.id}")
    return tuple(sorted(rng.sample(candidates, min(n, len(candidates)))))


@dataclass
class Rig:
    """One replay's parts: an appliance over a fresh database, and the recorder around its responder."""

    appliance: Appliance
    recorder: Recorder
    drain_timeout_s: float = 600.0

    def drain(self) -> bool:
        worker = self.appliance.worker
        return True if worker is None else worker.drain(self.drain_timeout_s)

    def close(self) -> dict[str, Any]:
        """Close the appliance; the summarizer's counts for this replay."""
        stats: dict[str, Any] = {"runs": 0, "accepted": 0, "failures": 0, "durations_s": []}
        worker = self.appliance.worker
        if worker is not None:
            worker.stop()  # first, so that its counts are final
            s = worker.stats()
            stats = {"runs": s.runs, "accepted": s.accepted, "failures": s.failures, "durations_s": list(s.durations_s)}
        self.appliance.close()
        return stats


MakeRig = Callable[[Path, str], Rig]


def model_rig(
    settings: Settings, responder: ChatModel, summarizer: ChatModel | None, recall: Recaller | None = None
) -> MakeRig:
    """Rigs built the production way (:func:`appliance.lab.harness.appliance_for`) over a fresh
    database at the given path, around models loaded once for the whole run."""

    def make(db: Path, policy: str) -> Rig:
        recorder = Recorder(responder)
        local = evolve(settings, paths={"database": db})
        appliance = appliance_for(local, recorder, summarizer, policy, recall=recall)
        return Rig(appliance, recorder, drain_timeout_s=settings.summarizer.timeout_s * 8 + 60)

    return make


def replay(rig: Rig, dialogue: BenchSession, policy: str, samples: Sequence[int]) -> list[Point]:
    """Record every real turn, ask the probes and the sampled questions on the way; the points asked."""
    sessions = rig.appliance.sessions
    session = sessions.new_session(policy=policy, title=dialogue.id)
    total = len(dialogue.turns)
    due = sorted(dialogue.probes, key=lambda p: p.after_turn)
    wanted = set(samples)
    points: list[Point] = []
    history: list[str] = []
    for index, (role, text) in enumerate(dialogue.turns):
        while due and due[0].after_turn <= index:
            points.append(_probe_point(rig, session.id, due.pop(0), index, total))
        if index in wanted:
            point = _ask(rig, session.id, text, index, total)
            del point["_sent"]
            point.update(
                kind="sample", reference=dialogue.turns[index + 1][1], history="\n".join(history[-HISTORY_TURNS:])
            )
            points.append(point)
        sessions.record_turn(session.id, role, text)
        history.append(f"{'Customer' if role == 'customer' else 'Agent'}: {text}")
        rig.drain()
    for probe in due:
        points.append(_probe_point(rig, session.id, probe, total, total))
    return points


def _probe_point(rig: Rig, session_id: str, probe: Probe, index: int, total: int) -> Point:
    point = _ask(rig, session_id, probe.question, index, total)
    context = "\n".join(m.content for m in point.pop("_sent"))
    point.update(
        kind="probe",
        probe_kind=probe.kind,
        first_turn=probe.first_turn,
        expected=list(probe.expected),
        in_context=kept(probe.expected, context),
        # Right when the answer states the value in any form the entity normaliser equates...
        correct=equated(probe.expected, point["answer"]),
        # ...and the answer as the policy's context alone produced it: the guard's retry lists the ledger's facts.
        correct_unguarded=equated(probe.expected, point["first_answer"]),
        # The data's own rule: the value's characters, without case, spaces and commas.
        correct_exact=kept(probe.expected, point["answer"]),
        correct_exact_unguarded=kept(probe.expected, point["first_answer"]),
    )
    return point


def _ask(rig: Rig, session_id: str, question: str, index: int, total: int) -> Point:
    """Answer ``question`` at turn ``index`` without storing it; the point's measurements."""
    rig.drain()
    rig.recorder.prompts.clear()
    try:
        result: TurnResult = rig.appliance.pipeline.answer(session_id, question, persist=False)
    except ApplianceError as exc:  # e.g. a message that cannot fit the budget: scored as a miss, run goes on
        return {
            "turn": index,
            "turns_total": total,
            "stage": position_stage(index, total),
            "question": question,
            "answer": "",
            "first_answer": "",
            "error": f"{type(exc).__name__}: {exc}",
            "_sent": (),
        }
    r = result.record
    sent = rig.recorder.prompts[0] if rig.recorder.prompts else ()
    return {
        "turn": index,
        "turns_total": total,
        "stage": position_stage(index, total),
        "detected_stage": r.stage,
        "question": question,
        "answer": result.agent.text,
        "first_answer": r.check.original or result.agent.text,
        "context_tokens": r.manifest.total_tokens,
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "ttft_s": r.timings.ttft_s,
        "generate_s": r.timings.generate_s,
        "turn_s": r.timings.total_s,
        "context_ms": r.timings.context_ms,
        "recall_ms": getattr(r.timings, "recall_ms", 0.0),
        "recalled_turns": len(r.manifest.recalled_turns),
        "check_ms": r.timings.check_ms,
        "fallback": r.manifest.fallback,
        "cut_turns": len(r.manifest.cut_turns),
        # The guard found facts the conversation does not support (whatever it then did about them).
        "flagged": not r.check.ok or r.check.action != "none",
        "findings_left": len(r.check.findings),
        "guard_action": r.check.action,
        "_sent": sent,
    }
