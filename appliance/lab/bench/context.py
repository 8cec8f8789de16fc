"""``appliance bench context``: how many early facts each context policy keeps, and at what cost.

Sessions are replayed teacher-forced: every turn is recorded as it was said (with its ledger
entries), and the summary worker runs as in production, after each stored turn. At each probe the
context that would be sent for the probe's question is built by every policy from the same snapshot,
and the probe counts as kept when an expected value occurs in it (lower-cased, without spaces and
commas, as the data's probes are compared). The summarizer runs only when a chosen policy reads the
summary; policies that do not read it see a snapshot without one.

The probe's question is built as the pipeline builds it: when it asks for something back ("can you
read back the account number I gave you?"), the ledger's facts of that kind go into
``PromptSpec.readback`` (:mod:`appliance.facts.readback`), which ``rolling`` places before it.

Per policy the JSON gives ``by_kind`` (``{kind: {"probes", "kept"}}``, ``kept`` a share, kinds as
the probes name them) and ``ledger_has``: the share of probes whose expected value the ledger's
entries hold at the probe, current or not (whether extraction found it: a property of the
ledger, the same for every policy). With
``misses`` each probe a policy missed, and each probe the ledger lacks, is listed with the turn
that said it and what the ledger holds of the kind the question asks for.
"""

from __future__ import annotations

import functools
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from appliance.config import Settings
from appliance.context import ContextPolicy, PromptSpec
from appliance.facts import readback
from appliance.lab.dialogues import BenchSession, Probe, in_ledger, kept, load_sessions
from appliance.lab.harness import choose_policies
from appliance.lab.stats import median, spread
from appliance.protocols import TokenCounter
from appliance.stage import prompt_texts
from appliance.store import Store
from appliance.turn.worker import SummaryWorker, WorkerStats
from appliance.types import LedgerEntry, Role, Snapshot, Turn


@dataclass
class _Tally:
    probes: int = 0
    kept: int = 0
    in_ledger: int = 0
    tokens: list[int] = field(default_factory=list)
    build_ms: list[float] = field(default_factory=list)
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [probes, kept]


def replay(
    sessions: Sequence[BenchSession],
    policies: Mapping[str, ContextPolicy],
    spec: PromptSpec,
    counter: TokenCounter,
    *,
    make_worker: Callable[[Store], SummaryWorker] | None = None,
    ledger_for: Callable[[Turn], Sequence[LedgerEntry]] | None = None,
    ledger_of: Callable[[Sequence[Turn]], Sequence[LedgerEntry]] | None = None,
    misses: bool = False,
    progress: Callable[[str], None] = lambda _msg: None,
) -> dict[str, Any]:
    """Replay ``sessions`` and return the bench's JSON object (see the module docstring).

    ``make_worker`` builds the summary worker over the bench's store; it is called only when a policy
    reads the summary. A turn's ledger entries come from ``ledger_of`` (the whole transcript so far,
    whose last turn is being stored: entries that depend on the turn before, such as a bare answer to
    a request for a name), else from ``ledger_for`` (the turn alone), else there are none. With
    ``misses`` the report lists what was missed (module docstring).
    """
    tallies = {name: _Tally() for name in policies}
    missed: list[dict[str, Any]] | None = [] if misses else None
    need_summary = make_worker is not None and any(p.uses_summary for p in policies.values())
    stats = WorkerStats()
    with tempfile.TemporaryDirectory(prefix="bench-context-") as folder:
        store = Store.open(Path(folder) / "bench.db")
        worker = make_worker(store) if need_summary and make_worker is not None else None
        try:
            for number, bench in enumerate(sessions, 1):
                session = store.create_session(policy="raw", title=bench.id)
                due = sorted(bench.probes, key=lambda p: p.after_turn)
                said: list[Turn] = []
                for index, (role, text) in enumerate(bench.turns):
                    while due and due[0].after_turn == index:
                        _probe(store, session.id, bench, due.pop(0), policies, spec, counter, tallies, missed)
                    speaker = cast(Role, role)  # as the sessions file says; not validated here
                    turn = Turn(session_id=session.id, index=index, role=speaker, text=text)
                    said.append(turn)
                    if ledger_of is not None:
                        entries = [e for e in ledger_of(said) if e.turn == index]
                    else:
                        entries = list(ledger_for(turn)) if ledger_for else []
                    store.append_turn(session.id, speaker, text, ledger=entries)
                    if worker is not None:
                        worker.notify(session.id)
                        # Deterministic replay: in production the summary is made while the customer types.
                        worker.drain()
                for probe in due:
                    _probe(store, session.id, bench, probe, policies, spec, counter, tallies, missed)
                progress(f"session {number}/{len(sessions)}: {bench.id} ({len(bench.turns)} turns)")
        finally:
            if worker is not None:
                worker.stop()
                stats = worker.stats()
            store.close()
    report: dict[str, Any] = {}
    for name, t in tallies.items():
        ran = policies[name].uses_summary and worker is not None
        report[name] = {
            "probes": t.probes,
            "probe_facts_in_context": round(t.kept / t.probes, 4) if t.probes else 0.0,
            "by_kind": {
                kind: {"probes": n, "kept": round(k / n, 4) if n else 0.0} for kind, (n, k) in sorted(t.by_kind.items())
            },
            "ledger_has": round(t.in_ledger / t.probes, 4) if t.probes else 0.0,
            "context_tokens": {
                "median": int(median(t.tokens)),
                "max": max(t.tokens, default=0),
            },
            "build_ms": spread(t.build_ms, 3),
            "summarizer": {
                "runs": stats.runs if ran else 0,
                "failures": stats.failures if ran else 0,
                "median_s": round(stats.median_s, 3) if ran else 0.0,
            },
        }
    out: dict[str, Any] = {"policies": report}
    if missed is not None:
        out["misses"] = missed
    return out


def _probe(
    store: Store,
    session_id: str,
    bench: BenchSession,
    probe: Probe,
    policies: Mapping[str, ContextPolicy],
    spec: PromptSpec,
    counter: TokenCounter,
    tallies: dict[str, _Tally],
    missed: list[dict[str, Any]] | None,
) -> None:
    snap = store.snapshot(session_id)
    asked = readback.wanted(readback.request(probe.question), snap.ledger)
    # as the pipeline builds it: the facts the question asks for, for the policy to place
    spec = replace(spec, readback=readback.facts_of(asked))
    has = in_ledger(probe.expected, snap.ledger)
    kind = probe.kind or "?"
    if missed is not None and not has:
        missed.append(_miss(bench, probe, "ledger", snap, asked))
    for name, policy in policies.items():
        seen = snap if policy.uses_summary else replace(snap, summary=None)
        started = time.perf_counter()
        prompt = policy.build(seen, probe.question, spec, counter)
        elapsed = (time.perf_counter() - started) * 1000
        tally = tallies[name]
        ok = kept(probe.expected, "\n".join(m.content for m in prompt.messages))
        tally.probes += 1
        tally.kept += ok
        tally.in_ledger += has
        counts = tally.by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += ok
        tally.tokens.append(prompt.manifest.total_tokens)
        tally.build_ms.append(elapsed)
        if missed is not None and not ok:
            missed.append(_miss(bench, probe, name, snap, asked))


def _miss(
    bench: BenchSession, probe: Probe, where: str, snap: Snapshot, asked: Sequence[readback.Asked]
) -> dict[str, Any]:
    """One missed probe: ``where`` is the policy that missed it, or ``ledger`` when the ledger lacks it."""
    said = bench.turns[probe.first_turn] if 0 <= probe.first_turn < len(bench.turns) else None
    topics = {a.topic for a in asked}
    req = readback.request(probe.question)
    return {
        "session": bench.id,
        "missed_by": where,
        "kind": probe.kind,
        "question": probe.question,
        "expected": list(probe.expected),
        "said_in_turn": probe.first_turn,
        "said": f"{said[0]}: {said[1]}" if said else "",
        "asks_for": list(req.topics) if req else [],
        "ledger_of_kind": [
            f"{e.kind} {e.value} (turn {e.turn}, {e.slot})" for a in asked for e in a.facts if a.topic in topics
        ],
        "ledger_turn": [f"{e.kind} {e.value}" for e in snap.ledger if e.turn == probe.first_turn],
    }


def run_bench(
    settings: Settings,
    sessions_file: Path,
    *,
    policy_names: Sequence[str] = (),
    limit: int | None = None,
    budget: int | None = None,
    summarizer: bool = True,
    misses: bool = False,
    progress: Callable[[str], None] = lambda _msg: None,
) -> dict[str, Any]:
    """Load what the configuration names (the responder's tokenizer only, the summarizer if needed) and replay.

    ``summarizer=False`` replays without one, as when it is down: the policies that read the summary
    then show their fallback (no summary; the turns stay verbatim or give way).
    """
    from appliance.app import pipeline_settings
    from appliance.app import policies as configured_policies
    from appliance.app.loading import load_summarizer
    from appliance.facts.entities import extract
    from appliance.facts.ledger import entries
    from appliance.models.files import find, verified_path
    from appliance.models.llama import LlamaChatModel

    policies = choose_policies(policy_names, configured_policies(settings))
    sessions = load_sessions(sessions_file, limit)
    entry = find(settings.models_dir, settings.responder.model)
    # The tokenizer alone (vocab_only): counts exactly as the responder will, without loading weights.
    counter = LlamaChatModel(verified_path(settings.models_dir, entry), name=entry.name, vocab_only=True)
    ps = pipeline_settings(settings)
    # Every replayed turn gets a mid-conversation turn's fixed texts: the budget's share they take.
    system, instruction = prompt_texts("mid", ps.instructions, ps.system_prompt, ps.instruction)
    spec = PromptSpec(system=system, instruction=instruction, budget=budget if budget is not None else ps.budget_tokens)
    make_worker: Callable[[Store], SummaryWorker] | None = None
    if summarizer and any(p.uses_summary for p in policies.values()):
        model = load_summarizer(settings)
        make_worker = functools.partial(SummaryWorker.configured, model=model, settings=settings, extract=extract)
    return replay(
        sessions, policies, spec, counter, make_worker=make_worker, ledger_of=entries, misses=misses, progress=progress
    )


def format_table(report: dict[str, Any]) -> str:
    header = (
        "policy",
        "probes",
        "facts kept",
        "in ledger",
        "tokens med",
        "tokens max",
        "build p50 ms",
        "build p95 ms",
        "sum runs",
        "sum fails",
        "sum med s",
    )
    rows = [header]
    for name, r in report["policies"].items():
        s = r["summarizer"]
        rows.append(
            (
                name,
                str(r["probes"]),
                f"{r['probe_facts_in_context']:.1%}",
                f"{r['ledger_has']:.1%}",
                str(r["context_tokens"]["median"]),
                str(r["context_tokens"]["max"]),
                f"{r['build_ms']['p50']:.2f}",
                f"{r['build_ms']['p95']:.2f}",
                str(s["runs"]),
                str(s["failures"]),
                f"{s['median_s']:.2f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for name, r in report["policies"].items():
        kinds = ", ".join(f"{k} {v['kept']:.0%} of {v['probes']}" for k, v in r["by_kind"].items())
        lines.append(f"{name} by kind: {kinds}")
    for m in report.get("misses", []):
        lines.append(
            f"missed by {m['missed_by']}: {m['session']} {m['kind']} {'/'.join(m['expected'])} "
            f"(said in turn {m['said_in_turn']}: {m['said'][:80]!r}; ledger of the kind: "
            f"{'; '.join(m['ledger_of_kind']) or 'nothing'}; ledger of that turn: {'; '.join(m['ledger_turn']) or 'nothing'})"
        )
    return "\n".join(lines)
