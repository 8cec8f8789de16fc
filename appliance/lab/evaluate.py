"""``appliance eval``: replay real dialogues through the real pipeline and score what each policy keeps.

Why a replay and not a chat with the model: the dialogues' agent turns were written by people, so
every real turn is *recorded* (teacher forcing, :meth:`Pipeline.record_turn`), which runs the ledger
and the summary worker exactly as in production, and the model is asked only where a question is
scored. That keeps every policy on the same transcript, turn for turn.

* At each probe (formats of ``shared/data/SOURCES.md``) the probe's question is answered with
  ``persist=False`` (nothing stored, the conversation goes on unchanged). The probe's fact counts as
  *in context* when an expected value occurs in the messages actually sent to the model, and the
  answer as *correct* when it contains one; both compared lower-cased without spaces and commas.
* At a few sampled customer turns (seeded per dialogue, the same turns for every policy) the
  appliance's answer is generated next to the real agent's reply, for latency, context size and the
  optional judge.
* The summary worker is drained after every recorded turn: in production the summary is made while
  the customer types, and draining makes the runs reproducible. Seeds are fixed.
* Each (dialogue, policy) result is cached as JSON in ``OUT/cache`` under a fingerprint of its
  inputs, so an interrupted run resumes where it stopped; judge verdicts are cached the same way.

Stages in the report are seed 002's positional stages (first 20 % of a dialogue's turns early, last
10 % late): the evaluation knows each dialogue's length, unlike the live stage detector, whose guess
is kept per answer as ``detected_stage``.

Metrics are pure functions of the cached points, so the report can be recomputed from the cache.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.errors import ApplianceError, InputError
from appliance.lab.bench_context import BenchSession, Probe, jsonl_records, kept, load_sessions, probe_of, uses_summary
from appliance.turn.pipeline import Pipeline
from appliance.types import STAGES, Generation, Message, Sampling, TurnResult

CACHE_VERSION = 2
HISTORY_TURNS = 6  # real turns shown to the judge before a sampled question
JUDGE_DIMENSIONS = ("human_likeness", "continuity", "tone_clarity", "task_appropriateness")
Point = dict[str, Any]


# data ---------------------------------------------------------------------------------------------


def load_probes(path: Path) -> dict[str, list[Probe]]:
    """Probes of ``shared/data/dev_probes.jsonl`` by conversation id; errors name the file and line."""
    out: dict[str, list[Probe]] = {}
    for number, raw in jsonl_records(path, "probes"):
        try:
            out.setdefault(str(raw["conversation_id"]), []).append(probe_of(raw))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"{path}:{number}: not a probe line ({exc})", field="probes") from None
    return out


def load_dialogues(
    conversations: Path | None = None,
    sessions: Path | None = None,
    probes: Path | None = None,
    *,
    limit: int | None = None,
) -> list[BenchSession]:
    """Conversations (with the probes file's probes attached) then sessions (probes inline);
    ``limit`` takes the first N of each file."""
    if conversations is None and sessions is None:
        raise InputError("nothing to evaluate: give --conversations and/or --sessions", field="conversations")
    extra = load_probes(probes) if probes is not None else {}
    return [
        BenchSession(d.id, d.turns, (*d.probes, *extra.get(d.id, ())))
        for path in (conversations, sessions)
        if path is not None
        for d in load_sessions(path, limit)
    ]


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


# the replay ---------------------------------------------------------------------------------------


class Recorder:
    """Wraps the responder to keep the messages of each generation: what was really sent."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.prompts: list[tuple[Message, ...]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    @property
    def name(self) -> str:
        return str(self.model.name)

    @property
    def n_ctx(self) -> int:
        return int(self.model.n_ctx)

    def count(self, messages: Sequence[Message]) -> int:
        return int(self.model.count(messages))

    def count_text(self, text: str) -> int:
        return int(self.model.count_text(text))

    def generate(self, messages: Sequence[Message], sampling: Sampling, **kwargs: Any) -> Generation:
        self.prompts.append(tuple(messages))
        return self.model.generate(messages, sampling, **kwargs)  # type: ignore[no-any-return]


@dataclass
class Rig:
    """One (dialogue, policy) replay's parts: a pipeline over a fresh database, and its summary worker."""

    pipeline: Pipeline
    recorder: Recorder
    worker: Any = None  # a SummaryWorker, when the policy reads the summary
    drain_timeout_s: float = 600.0

    def drain(self) -> bool:
        return True if self.worker is None else bool(self.worker.drain(self.drain_timeout_s))

    def close(self) -> dict[str, Any]:
        """Stop the worker and the store; the summarizer's counts for this replay."""
        stats: dict[str, Any] = {"runs": 0, "accepted": 0, "failures": 0, "durations_s": []}
        if self.worker is not None:
            self.worker.stop()
            s = self.worker.stats()
            stats = {"runs": s.runs, "accepted": s.accepted, "failures": s.failures, "durations_s": list(s.durations_s)}
        self.pipeline.store.close()
        return stats


MakeRig = Callable[[Path, str], Rig]


def model_rig(settings: Settings, responder: Any, summarizer: Any | None, recall: Any = None) -> MakeRig:
    """Rigs built the production way (:func:`production_pipeline`) over a fresh database at the given
    path, around models loaded once for the whole run."""

    def make(db: Path, policy: str) -> Rig:
        recorder = Recorder(responder)
        local = evolve(settings, paths={"database": db})
        pipeline, worker = production_pipeline(local, recorder, summarizer, policy, recall=recall)
        return Rig(pipeline, recorder, worker, drain_timeout_s=settings.summarizer.timeout_s * 8 + 60)

    return make


def production_pipeline(
    settings: Settings, responder: Any, summarizer: Any | None, policy: str, *, recall: Any = None
) -> tuple[Pipeline, Any]:
    """A pipeline built as the daemon builds it, over ``settings.database``, with the given (already
    loaded) recall, and its summary worker: attached as the daemon attaches it, with ``summarizer``,
    when ``policy`` reads the summary; None otherwise. Models are loaded once per run, not per replay."""
    from appliance.app import build_pipeline
    from appliance.facts.entities import extract
    from appliance.turn.worker import SummaryWorker

    pipeline = build_pipeline(settings, responder=responder, recall=recall if recall is not None else False)
    worker = getattr(pipeline, "worker", None)
    if worker is None and summarizer is not None and uses_summary(policy, pipeline.policies[policy]):
        worker = SummaryWorker.configured(pipeline.store, summarizer, settings, extract, answering=pipeline.answering)
        pipeline.after_store.append(worker.notify)
    return pipeline, worker


def evolve(settings: Settings, **sections: Mapping[str, Any]) -> Settings:
    """A copy of ``settings`` with some fields of some sections replaced (no re-validation)."""
    updates = {name: getattr(settings, name).model_copy(update=dict(values)) for name, values in sections.items()}
    return settings.model_copy(update=updates)


def replay(rig: Rig, dialogue: BenchSession, policy: str, samples: Sequence[int]) -> list[Point]:
    """Record every real turn, ask the probes and the sampled questions on the way; the points asked."""
    pipeline = rig.pipeline
    session = pipeline.new_session(policy=policy, title=dialogue.id)
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
        pipeline.record_turn(session.id, role, text)
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
        correct=kept(probe.expected, point["answer"]),
        # The answer as the policy's context alone produced it: the guard's retry lists the ledger's facts.
        correct_unguarded=kept(probe.expected, point["first_answer"]),
    )
    return point


def _ask(rig: Rig, session_id: str, question: str, index: int, total: int) -> Point:
    """Answer ``question`` at turn ``index`` without storing it; the point's measurements."""
    rig.drain()
    rig.recorder.prompts.clear()
    try:
        result: TurnResult = rig.pipeline.answer(session_id, question, persist=False)
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


# the cache ----------------------------------------------------------------------------------------


def fingerprint(dialogue: BenchSession, policy: str, run: Mapping[str, Any]) -> str:
    """What a cached result depends on: the dialogue, the policy and the run's settings."""
    data = {
        "v": CACHE_VERSION,
        "dialogue": [dialogue.id, dialogue.turns, [p.__dict__ for p in dialogue.probes]],
        "policy": policy,
        "run": run,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def cache_path(out: Path, dialogue_id: str, policy: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", dialogue_id)[:60]
    digest = hashlib.sha1(dialogue_id.encode()).hexdigest()[:8]
    return out / "cache" / policy / f"{slug}-{digest}.json"


def read_cached(path: Path, key: str) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("fingerprint") == key else None


def write_json(path: Path, data: Any) -> None:
    """Write whole or not at all (an interrupted run must not leave half a cache file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def run_units(
    dialogues: Sequence[BenchSession],
    policies: Sequence[str],
    out: Path,
    make_rig: MakeRig,
    *,
    run: Mapping[str, Any],
    samples: int = 3,
    seed: int = 0,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Every (dialogue, policy) result, from the cache where it is there, else replayed and cached."""
    from tqdm import tqdm

    units = []
    bar = tqdm(total=len(dialogues) * len(policies), desc="eval", unit="replay", file=sys.stderr, disable=not progress)
    try:
        for dialogue in dialogues:
            chosen = sample_turns(dialogue, samples, seed)
            for policy in policies:
                key = fingerprint(dialogue, policy, {**run, "samples": samples, "seed": seed})
                path = cache_path(out, dialogue.id, policy)
                unit = read_cached(path, key)
                bar.set_postfix_str(f"{policy} {dialogue.id[:40]}{' (cached)' if unit else ''}")
                if unit is None:
                    with tempfile.TemporaryDirectory(prefix="eval-") as folder:
                        rig = make_rig(Path(folder) / "eval.db", policy)
                        try:
                            points = replay(rig, dialogue, policy, chosen)
                        finally:
                            summarizer = rig.close()
                    unit = {
                        "fingerprint": key,
                        "dialogue": dialogue.id,
                        "policy": policy,
                        "turns": len(dialogue.turns),
                        "points": points,
                        "summarizer": summarizer,
                    }
                    write_json(path, unit)
                units.append(unit)
                bar.update(1)
    finally:
        bar.close()
    return units


# metrics (pure) -----------------------------------------------------------------------------------


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile; 0.0 for no values (a report must not fail on an empty stage)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * pct / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def share(flags: Sequence[bool]) -> float | None:
    """The share of true flags; None when there is nothing to count (a stage without probes is no 0 %)."""
    return round(sum(flags) / len(flags), 4) if flags else None


def spread(values: Sequence[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 4), "p95": round(percentile(values, 95), 4)}


def point_metrics(points: Sequence[Point]) -> dict[str, Any]:
    """Probe scores, context size, latency and guard flags of a set of answered points."""
    probes = [p for p in points if p["kind"] == "probe"]
    failed = [p for p in points if p.get("error")]
    points = [p for p in points if not p.get("error")]  # no answer: nothing to time or count
    tokens = [p["context_tokens"] for p in points]
    actions: dict[str, int] = {}
    for p in points:
        if p["flagged"]:
            actions[p["guard_action"]] = actions.get(p["guard_action"], 0) + 1
    return {
        "probes": len(probes),
        "probe_facts_in_context": share([p["in_context"] for p in probes]),
        "probe_answers_correct": share([p["correct"] for p in probes]),
        "probe_answers_correct_unguarded": share([p["correct_unguarded"] for p in probes]),
        "answers": len(points),
        "errors": len(failed),
        "context_tokens": {
            "median": round(percentile(tokens, 50), 1),
            "p95": round(percentile(tokens, 95), 1),
            "max": max(tokens, default=0),
        },
        "ttft_s": spread([p["ttft_s"] for p in points]),
        "turn_s": spread([p["turn_s"] for p in points]),
        "guard": {
            "flagged": sum(actions.values()),
            "flagged_share": share([p["flagged"] for p in points]) or 0.0,
            "actions": actions,
        },
    }


def summarizer_metrics(units: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Runs, failures and time of the summary worker over a policy's replays, and the answers whose
    context fell back to verbatim turns because the summary was missing or behind."""
    durations = [d for u in units for d in u["summarizer"]["durations_s"]]
    points = [p for u in units for p in u["points"] if not p.get("error")]
    return {
        "runs": sum(u["summarizer"]["runs"] for u in units),
        "accepted": sum(u["summarizer"]["accepted"] for u in units),
        "failures": sum(u["summarizer"]["failures"] for u in units),
        "fallbacks": sum(1 for p in points if p["fallback"]),
        "time_s": round(float(sum(durations)), 3),
        "median_s": round(statistics.median(durations), 3) if durations else 0.0,
    }


def policy_metrics(units: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    points = [p for u in units for p in u["points"]]
    out = point_metrics(points)
    out["dialogues"] = len(units)
    out["summarizer"] = summarizer_metrics(units)
    out["by_stage"] = {s: point_metrics([p for p in points if p["stage"] == s]) for s in STAGES}
    return out


def build_report(units: Sequence[Mapping[str, Any]], policies: Sequence[str], run: Mapping[str, Any]) -> dict[str, Any]:
    """``report.json`` (schema in README, "Evaluation") from the replays' points."""
    report: dict[str, Any] = {"policies": {}}
    for name in policies:
        report["policies"][name] = policy_metrics([u for u in units if u["policy"] == name])
    raw = report["policies"].get("raw")
    for metrics in report["policies"].values():
        base = raw["context_tokens"]["median"] if raw else 0
        median = metrics["context_tokens"]["median"]
        metrics["context_tokens"]["ratio_to_raw"] = round(median / base, 4) if base else None
    report["run"] = dict(run)
    return report


# the judge ----------------------------------------------------------------------------------------


def judge_prompt(history: str, question: str, answer: str) -> tuple[Message, ...]:
    """Seed 002's four dimensions, 1-5 each, asked for as one JSON object."""
    system = "You are a strict evaluator of customer-service replies. You answer with JSON only."
    user = (
        "Rate the agent's reply on four dimensions, each an integer from 1 (poor) to 5 (excellent):\n"
        "human_likeness: does it sound like a real agent, not a bot?\n"
        "continuity: does it correctly use what was said earlier in the conversation?\n"
        "tone_clarity: is it professional, clear and polite?\n"
        "task_appropriateness: does it actually address the customer's message?\n\n"
        f"Conversation so far:\n{history or '(none)'}\n\nCustomer: {question}\n\nAgent's reply: {answer}\n\n"
        'Answer with exactly: {"human_likeness": N, "continuity": N, "tone_clarity": N, "task_appropriateness": N}'
    )
    return (Message("system", system), Message("user", user))


def pairwise_prompt(history: str, question: str, first: str, second: str) -> tuple[Message, ...]:
    system = "You are a strict evaluator of customer-service replies. You answer with JSON only."
    user = (
        "Two agents replied to the same customer message. Which reply is better for the customer "
        "(correct use of the conversation, addresses the message, clear and polite)?\n\n"
        f"Conversation so far:\n{history or '(none)'}\n\nCustomer: {question}\n\n"
        f"Reply A: {first}\n\nReply B: {second}\n\n"
        'Answer with exactly one of: {"better": "A"} or {"better": "B"} or {"better": "tie"}'
    )
    return (Message("system", system), Message("user", user))


_NUMBER = r"\s*[\"']?\s*[:=]\s*[\"']?\s*([1-5])(?:\.\d+)?"


def parse_scores(text: str) -> dict[str, int] | None:
    """The four scores from a judge's reply: JSON if there is an object, else ``name: N`` pairs in any
    spelling (small judges add prose, code fences, spaces or capitals); None if any is missing."""
    for match in re.finditer(r"\{[^{}]*\}", text):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(data, dict):
            norm = {re.sub(r"[^a-z]", "", str(k).lower()): v for k, v in data.items()}
            got = {d: _score(norm.get(d.replace("_", ""))) for d in JUDGE_DIMENSIONS}
            if all(v is not None for v in got.values()):
                return got  # type: ignore[return-value]
    flat = text.lower()
    out: dict[str, int] = {}
    for d in JUDGE_DIMENSIONS:
        words = r"[\s_\-&/and]*".join(re.escape(w) for w in d.split("_"))
        m = re.search(words + _NUMBER, flat)
        if m is None:
            return None
        out[d] = int(m.group(1))
    return out


def _score(value: Any) -> int | None:
    try:
        number = round(float(value))
    except (TypeError, ValueError):
        return None
    return number if 1 <= number <= 5 else None


def parse_choice(text: str) -> str | None:
    """ "A", "B" or "tie" from a pairwise verdict, JSON or not; None when it says nothing usable."""
    m = re.search(r"better[\"'\s]*[:=][\"'\s]*(a|b|tie)\b", text, re.IGNORECASE)
    if m is None:
        m = re.search(r"^\W*(a|b|tie)\W*$", text.strip(), re.IGNORECASE)
    if m is None:
        return None
    word = m.group(1).lower()
    return "tie" if word == "tie" else word.upper()


class Judge:
    """A local model asked for verdicts at temperature 0; each verdict cached in ``OUT/judge.json``."""

    def __init__(self, model: Any, cache: Path, *, seed: int = 0, max_tokens: int = 96) -> None:
        self.model = model
        self.cache = cache
        self.sampling = Sampling(
            temperature=0.0, top_p=1.0, top_k=1, repeat_penalty=1.0, max_tokens=max_tokens, seed=seed
        )
        try:
            self.verdicts: dict[str, str] = json.loads(cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.verdicts = {}

    def ask(self, messages: tuple[Message, ...]) -> str:
        key = hashlib.sha256(json.dumps([self.model.name, [m.__dict__ for m in messages]]).encode()).hexdigest()
        if key not in self.verdicts:
            try:
                self.verdicts[key] = self.model.generate(messages, self.sampling).text
            except ApplianceError as exc:  # a prompt too long for the judge: recorded as no verdict
                self.verdicts[key] = f"(no verdict: {exc})"
            write_json(self.cache, self.verdicts)
        return self.verdicts[key]


def judge_units(
    judge: Judge, units: Sequence[Mapping[str, Any]], policies: Sequence[str], *, seed: int = 0, progress: bool = True
) -> dict[str, Any]:
    """Scores of every sampled answer, and pairwise verdicts between every two policies on the same turn
    (the order shown to the judge is drawn per comparison, so position bias cancels out)."""
    from tqdm import tqdm

    samples = [
        (u["policy"], u["dialogue"], p)
        for u in units
        for p in u["points"]
        if p["kind"] == "sample" and not p.get("error")
    ]
    by_turn: dict[tuple[str, int], dict[str, Point]] = {}
    for policy, dialogue, p in samples:
        by_turn.setdefault((dialogue, p["turn"]), {})[policy] = p
    pairs = list(itertools.combinations(policies, 2))
    total = len(samples) + sum(1 for v in by_turn.values() for a, b in pairs if a in v and b in v)
    scores: dict[str, list[tuple[str, dict[str, int] | None]]] = {name: [] for name in policies}
    pairwise: dict[str, dict[str, Any]] = {}
    rng = random.Random(seed)
    with tqdm(total=total, desc="judge", unit="verdict", file=sys.stderr, disable=not progress) as bar:
        for policy, _dialogue, p in samples:
            verdict = parse_scores(judge.ask(judge_prompt(p["history"], p["question"], p["answer"])))
            scores[policy].append((p["stage"], verdict))
            bar.update(1)
        for a, b in pairs:
            tally = {"a": a, "b": b, "comparisons": 0, "a_wins": 0, "b_wins": 0, "ties": 0, "unparsed": 0}
            for key in sorted(by_turn):
                both = by_turn[key]
                if a not in both or b not in both:
                    continue
                swap = rng.random() < 0.5
                first, second = (both[b], both[a]) if swap else (both[a], both[b])
                choice = parse_choice(
                    judge.ask(pairwise_prompt(first["history"], first["question"], first["answer"], second["answer"]))
                )
                tally["comparisons"] += 1
                if choice is None:
                    tally["unparsed"] += 1
                elif choice == "tie":
                    tally["ties"] += 1
                elif (choice == "A") != swap:
                    tally["a_wins"] += 1
                else:
                    tally["b_wins"] += 1
                bar.update(1)
            decided = tally["comparisons"] - tally["unparsed"]
            tally["a_win_rate"] = round((tally["a_wins"] + 0.5 * tally["ties"]) / decided, 4) if decided else None
            pairwise[f"{a} vs {b}"] = tally
    return {"scores": {name: judge_metrics(v) for name, v in scores.items()}, "pairwise": pairwise}


def judge_metrics(verdicts: Sequence[tuple[str, dict[str, int] | None]]) -> dict[str, Any]:
    """Mean score per dimension and overall, overall and by stage; unparsed verdicts are counted apart."""

    def means(items: Sequence[dict[str, int]]) -> dict[str, Any]:
        out: dict[str, Any] = {
            d: round(statistics.fmean(v[d] for v in items), 3) if items else None for d in JUDGE_DIMENSIONS
        }
        out["overall"] = round(statistics.fmean(statistics.fmean(v.values()) for v in items), 3) if items else None
        out["answers"] = len(items)
        return out

    parsed = [(s, v) for s, v in verdicts if v is not None]
    result = means([v for _, v in parsed])
    result["unparsed"] = len(verdicts) - len(parsed)
    result["by_stage"] = {s: means([v for st, v in parsed if st == s]) for s in STAGES}
    return result


# outputs ------------------------------------------------------------------------------------------


def _f(value: Any, pct: bool = False) -> str:
    if value is None:
        return "–"
    if pct:
        return f"{value:.1%}"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def format_markdown(report: Mapping[str, Any], units: Sequence[Mapping[str, Any]] = ()) -> str:
    """``report.md``: the report's tables, and a few sampled answers beside the real agent's."""
    pol = report["policies"]
    run = report.get("run", {})
    out = ["# Evaluation report", ""]
    if run:
        short = {k: v for k, v in run.items() if not isinstance(v, (dict, list)) and len(str(v)) <= 60}
        out += [", ".join(f"{k}: `{v}`" for k, v in short.items()), ""]
    out += [
        "## Overall",
        "",
        _table(
            (
                "policy",
                "probes",
                "facts in context",
                "answers correct",
                "before guard",
                "answers",
                "ctx tokens median",
                "p95",
                "max",
                "ratio to raw",
                "TTFT p50 s",
                "p95",
                "turn p50 s",
                "p95",
            ),
            (
                (
                    name,
                    str(m["probes"]),
                    _f(m["probe_facts_in_context"], True),
                    _f(m["probe_answers_correct"], True),
                    _f(m["probe_answers_correct_unguarded"], True),
                    str(m["answers"]),
                    _f(m["context_tokens"]["median"]),
                    _f(m["context_tokens"]["p95"]),
                    str(m["context_tokens"]["max"]),
                    _f(m["context_tokens"]["ratio_to_raw"]),
                    _f(m["ttft_s"]["p50"]),
                    _f(m["ttft_s"]["p95"]),
                    _f(m["turn_s"]["p50"]),
                    _f(m["turn_s"]["p95"]),
                )
                for name, m in pol.items()
            ),
        ),
        "",
    ]
    out += [
        "## By stage",
        "",
        _table(
            (
                "policy",
                "stage",
                "probes",
                "facts in context",
                "answers correct",
                "answers",
                "ctx tokens median",
                "TTFT p50 s",
                "turn p50 s",
            ),
            (
                (
                    name,
                    s,
                    str(b["probes"]),
                    _f(b["probe_facts_in_context"], True),
                    _f(b["probe_answers_correct"], True),
                    str(b["answers"]),
                    _f(b["context_tokens"]["median"]),
                    _f(b["ttft_s"]["p50"]),
                    _f(b["turn_s"]["p50"]),
                )
                for name, m in pol.items()
                for s, b in m["by_stage"].items()
            ),
        ),
        "",
    ]
    out += [
        "## Summarizer and guard",
        "",
        _table(
            (
                "policy",
                "summary runs",
                "accepted",
                "failures",
                "fallback answers",
                "summarizer time s",
                "median s",
                "guard flags",
                "flagged share",
            ),
            (
                (
                    name,
                    str(m["summarizer"]["runs"]),
                    str(m["summarizer"]["accepted"]),
                    str(m["summarizer"]["failures"]),
                    str(m["summarizer"]["fallbacks"]),
                    _f(m["summarizer"]["time_s"]),
                    _f(m["summarizer"]["median_s"]),
                    str(m["guard"]["flagged"]),
                    _f(m["guard"]["flagged_share"], True),
                )
                for name, m in pol.items()
            ),
        ),
        "",
    ]
    if any("judge" in m for m in pol.values()):
        out += [
            f"## Judge ({run.get('judge', '')})",
            "",
            _table(
                ("policy", "answers", *JUDGE_DIMENSIONS, "overall", "unparsed"),
                (
                    (
                        name,
                        str(m["judge"]["answers"]),
                        *(_f(m["judge"][d]) for d in JUDGE_DIMENSIONS),
                        _f(m["judge"]["overall"]),
                        str(m["judge"]["unparsed"]),
                    )
                    for name, m in pol.items()
                    if "judge" in m
                ),
            ),
            "",
        ]
    if report.get("pairwise"):
        out += [
            "## Pairwise",
            "",
            _table(
                ("a", "b", "comparisons", "a wins", "b wins", "ties", "unparsed", "a win rate"),
                (
                    (
                        t["a"],
                        t["b"],
                        str(t["comparisons"]),
                        str(t["a_wins"]),
                        str(t["b_wins"]),
                        str(t["ties"]),
                        str(t["unparsed"]),
                        _f(t["a_win_rate"], True),
                    )
                    for t in report["pairwise"].values()
                ),
            ),
            "",
        ]
    examples = [
        (u["policy"], u["dialogue"], p)
        for u in units
        for p in u["points"]
        if p["kind"] == "sample" and not p.get("error")
    ][:6]
    if examples:
        out += [
            "## Sampled answers",
            "",
            _table(
                ("policy", "dialogue", "turn", "customer", "appliance", "real agent"),
                (
                    (pname, did, str(p["turn"]), _cell(p["question"]), _cell(p["answer"]), _cell(p["reference"]))
                    for pname, did, p in examples
                ),
            ),
            "",
        ]
    out += ["Plots: `context_tokens.png`, `probe_accuracy.png`, `latency.png`.", ""]
    return "\n".join(out)


def format_summary(report: Mapping[str, Any]) -> str:
    """One line per policy for the terminal; the tables are in report.md."""
    return "\n".join(
        f"{name}: {m['probes']} probes, facts in context {_f(m['probe_facts_in_context'], True)}, answers correct "
        f"{_f(m['probe_answers_correct'], True)}, context tokens median {_f(m['context_tokens']['median'])} "
        f"(ratio to raw {_f(m['context_tokens']['ratio_to_raw'])}), TTFT p50 {_f(m['ttft_s']['p50'])} s"
        for name, m in report["policies"].items()
    )


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plot(units: Sequence[Mapping[str, Any]], report: Mapping[str, Any], out: Path) -> list[Path]:
    """The three PNGs: context tokens and latency against turn number per policy, probe scores per policy."""
    import matplotlib

    matplotlib.use("Agg")  # headless: no display on the appliance or in CI
    import matplotlib.pyplot as plt

    names = list(report["policies"])
    points = {n: [p for u in units if u["policy"] == n for p in u["points"] if not p.get("error")] for n in names}
    paths = []

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for n in names:
        xs, ys = _by_turn(points[n], "context_tokens")
        ax.plot(xs, ys, marker="o", markersize=3, label=n)
    ax.set(xlabel="turn number", ylabel="context tokens (median over dialogues)", title="Prompt size")
    ax.legend()
    ax.grid(alpha=0.3)
    paths.append(_save(fig, out / "context_tokens.png"))

    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.38
    xs = range(len(names))
    facts = [report["policies"][n]["probe_facts_in_context"] or 0.0 for n in names]
    right = [report["policies"][n]["probe_answers_correct"] or 0.0 for n in names]
    ax.bar([x - width / 2 for x in xs], facts, width, label="fact in context")
    ax.bar([x + width / 2 for x in xs], right, width, label="answer correct")
    ax.set_xticks(list(xs), names)
    ax.set(ylim=(0, 1.05), ylabel="share of probes", title="Fact-recall probes")
    ax.legend()
    paths.append(_save(fig, out / "probe_accuracy.png"))

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    for n in names:
        xs, ys = _by_turn(points[n], "ttft_s")
        top.plot(xs, ys, marker="o", markersize=3, label=n)
        xs, ys = _by_turn(points[n], "turn_s")
        bottom.plot(xs, ys, marker="o", markersize=3, label=n)
    top.set(ylabel="time to first token, s", title="Latency (median over dialogues)")
    bottom.set(xlabel="turn number", ylabel="turn time, s")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.legend()
    paths.append(_save(fig, out / "latency.png"))
    return paths


def _by_turn(points: Sequence[Point], key: str) -> tuple[list[int], list[float]]:
    """Median of ``key`` per turn number, turns in order."""
    groups: dict[int, list[float]] = {}
    for p in points:
        groups.setdefault(p["turn"], []).append(p[key])
    turns = sorted(groups)
    return turns, [statistics.median(groups[t]) for t in turns]


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)
    return path


# the command --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalOptions:
    policies: tuple[str, ...]
    out: Path
    conversations: Path | None = None
    sessions: Path | None = None
    probes: Path | None = None
    limit: int | None = None
    judge: str | None = None
    samples: int = 3
    seed: int = 0
    progress: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def evaluate(
    options: EvalOptions, make_rig: MakeRig, *, run: Mapping[str, Any], judge_model: Any = None
) -> dict[str, Any]:
    """Replay (or read from the cache), judge if asked, and write report.json, report.md and the plots."""
    dialogues = load_dialogues(options.conversations, options.sessions, options.probes, limit=options.limit)
    if not dialogues:
        raise InputError("no dialogues in the given files", field="conversations")
    options.out.mkdir(parents=True, exist_ok=True)
    units = run_units(
        dialogues,
        options.policies,
        options.out,
        make_rig,
        run=run,
        samples=options.samples,
        seed=options.seed,
        progress=options.progress,
    )
    # The judge is not a replay's input (changing it must not invalidate the cache), so it is added here.
    shown = {
        **run,
        "judge": options.judge,
        "dialogues": len(dialogues),
        "samples_per_dialogue": options.samples,
        "seed": options.seed,
    }
    report = build_report(units, options.policies, shown)
    if judge_model is not None:
        judged = judge_units(
            Judge(judge_model, options.out / "judge.json", seed=options.seed),
            units,
            options.policies,
            seed=options.seed,
            progress=options.progress,
        )
        for name, metrics in judged["scores"].items():
            report["policies"][name]["judge"] = metrics
        report["pairwise"] = judged["pairwise"]
    write_json(options.out / "report.json", report)
    (options.out / "report.md").write_text(format_markdown(report, units), encoding="utf-8")
    plot(units, report, options.out)
    return report


def run_eval(settings: Settings, options: EvalOptions) -> dict[str, Any]:
    """Load the configured models (verified), fix the seeds, and evaluate."""
    from appliance.app import load_recall, load_responder, load_summarizer
    from appliance.app import policies as configured_policies
    from appliance.lab.bench_context import choose_policies

    local = evolve(settings, responder={"seed": options.seed}, summarizer={"seed": options.seed})
    policies = choose_policies(options.policies, configured_policies(local))
    responder = load_responder(local)
    summarizer = load_summarizer(local) if any(uses_summary(n, p) for n, p in policies.items()) else None
    judge_model = None
    if options.judge:
        judge_model = load_responder(evolve(local, responder={"model": options.judge}))
    run = {
        "responder": local.responder.model,
        "summarizer": local.summarizer.model if summarizer is not None else None,
        "budget_tokens": local.context.budget_tokens,
        "max_tokens": local.responder.max_tokens,
        "temperature": local.responder.temperature,
        "system_prompt": local.chat.system_prompt,
        "instruction": local.chat.instruction,
        "summarizer_every_turns": local.summarizer.every_turns,
        **options.extra,
    }
    recall = load_recall(local)
    run["recall"] = recall is not None
    return evaluate(options, model_rig(local, responder, summarizer, recall), run=run, judge_model=judge_model)
