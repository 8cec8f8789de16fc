"""``appliance bench context``: how many early facts each context policy keeps, and at what cost.

Sessions are replayed teacher-forced: every turn is recorded as it was said (with its ledger
entries), and the summary worker runs as in production, after each stored turn. At each probe the
context that would be sent for the probe's question is built by every policy from the same snapshot,
and the probe counts as kept when an expected value occurs in it (lower-cased, without spaces and
commas, as the data's probes are compared). The summarizer runs only when a chosen policy reads the
summary; policies that do not read it see a snapshot without one.
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
from appliance.lab.dialogues import BenchSession, Probe, kept, load_sessions
from appliance.lab.harness import choose_policies
from appliance.lab.stats import median, spread
from appliance.store import Store
from appliance.turn.worker import SummaryWorker, WorkerStats
from appliance.types import LedgerEntry, Role, TokenCounter, Turn


@dataclass
class _Tally:
    probes: int = 0
    kept: int = 0
    tokens: list[int] = field(default_factory=list)
    build_ms: list[float] = field(default_factory=list)


def replay(
    sessions: Sequence[BenchSession],
    policies: Mapping[str, ContextPolicy],
    spec: PromptSpec,
    counter: TokenCounter,
    *,
    make_worker: Callable[[Store], SummaryWorker] | None = None,
    ledger_for: Callable[[Turn], Sequence[LedgerEntry]] | None = None,
    progress: Callable[[str], None] = lambda _msg: None,
) -> dict[str, Any]:
    """Replay ``sessions`` and return the bench's JSON object (see the module docstring).

    ``make_worker`` builds the summary worker over the bench's store; it is called only when a policy
    reads the summary. ``ledger_for`` gives a turn's ledger entries (none without it).
    """
    tallies = {name: _Tally() for name in policies}
    need_summary = make_worker is not None and any(p.uses_summary for p in policies.values())
    stats = WorkerStats()
    with tempfile.TemporaryDirectory(prefix="bench-context-") as folder:
        store = Store.open(Path(folder) / "bench.db")
        worker = make_worker(store) if need_summary and make_worker is not None else None
        try:
            for number, bench in enumerate(sessions, 1):
                session = store.create_session(policy="raw", title=bench.id)
                due = sorted(bench.probes, key=lambda p: p.after_turn)
                for index, (role, text) in enumerate(bench.turns):
                    while due and due[0].after_turn == index:
                        _probe(store, session.id, due.pop(0), policies, spec, counter, tallies)
                    speaker = cast(Role, role)  # as the sessions file says; not validated here
                    turn = Turn(session_id=session.id, index=index, role=speaker, text=text)
                    store.append_turn(session.id, speaker, text, ledger=ledger_for(turn) if ledger_for else ())
                    if worker is not None:
                        worker.notify(session.id)
                        # Deterministic replay: in production the summary is made while the customer types.
                        worker.drain()
                for probe in due:
                    _probe(store, session.id, probe, policies, spec, counter, tallies)
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
    return {"policies": report}


def _probe(
    store: Store,
    session_id: str,
    probe: Probe,
    policies: Mapping[str, ContextPolicy],
    spec: PromptSpec,
    counter: TokenCounter,
    tallies: dict[str, _Tally],
) -> None:
    snap = store.snapshot(session_id)
    for name, policy in policies.items():
        seen = snap if policy.uses_summary else replace(snap, summary=None)
        started = time.perf_counter()
        prompt = policy.build(seen, probe.question, spec, counter)
        elapsed = (time.perf_counter() - started) * 1000
        tally = tallies[name]
        tally.probes += 1
        tally.kept += kept(probe.expected, "\n".join(m.content for m in prompt.messages))
        tally.tokens.append(prompt.manifest.total_tokens)
        tally.build_ms.append(elapsed)


def run_bench(
    settings: Settings,
    sessions_file: Path,
    *,
    policy_names: Sequence[str] = (),
    limit: int | None = None,
    budget: int | None = None,
    summarizer: bool = True,
    progress: Callable[[str], None] = lambda _msg: None,
) -> dict[str, Any]:
    """Load what the configuration names (the responder's tokenizer only, the summarizer if needed) and replay.

    ``summarizer=False`` replays without one, as when it is down: the policies that read the summary
    then show their fallback (no summary; the turns stay verbatim or give way).
    """
    from appliance.app import load_summarizer
    from appliance.app import policies as configured_policies
    from appliance.facts.entities import extract
    from appliance.facts.ledger import entries_for
    from appliance.models.files import find, verified_path
    from appliance.models.llama import LlamaChatModel

    policies = choose_policies(policy_names, configured_policies(settings))
    sessions = load_sessions(sessions_file, limit)
    entry = find(settings.models_dir, settings.responder.model)
    # The tokenizer alone (vocab_only): counts exactly as the responder will, without loading weights.
    counter = LlamaChatModel(verified_path(settings.models_dir, entry), name=entry.name, vocab_only=True)
    spec = PromptSpec(
        system=settings.chat.system_prompt,
        instruction=settings.chat.instruction,
        budget=budget if budget is not None else settings.context.budget_tokens,
    )
    make_worker: Callable[[Store], SummaryWorker] | None = None
    if summarizer and any(p.uses_summary for p in policies.values()):
        model = load_summarizer(settings)
        make_worker = functools.partial(SummaryWorker.configured, model=model, settings=settings, extract=extract)
    return replay(sessions, policies, spec, counter, make_worker=make_worker, ledger_for=entries_for, progress=progress)


def format_table(report: dict[str, Any]) -> str:
    header = (
        "policy",
        "probes",
        "facts kept",
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
    return "\n".join(lines)
