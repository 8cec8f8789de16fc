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
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.context.policies import ContextPolicy, PromptSpec
from appliance.errors import InputError
from appliance.store import Store
from appliance.summarizer import squash
from appliance.turn.worker import SummaryWorker, WorkerStats
from appliance.types import LedgerEntry, TokenCounter, Turn


@dataclass(frozen=True)
class Probe:
    after_turn: int
    question: str
    expected: tuple[str, ...]
    kind: str = ""
    first_turn: int = -1


@dataclass(frozen=True)
class BenchSession:
    id: str
    turns: tuple[tuple[str, str], ...]  # (role, text)
    probes: tuple[Probe, ...]


@dataclass
class _Tally:
    probes: int = 0
    kept: int = 0
    tokens: list[int] = field(default_factory=list)
    build_ms: list[float] = field(default_factory=list)


def jsonl_records(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line; errors name the file (and line) and ``what`` it holds."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}", field=what) from None
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path}:{number}: not JSON ({exc})", field=what) from None


def probe_of(raw: dict[str, Any]) -> Probe:
    """A probe as written in ``dev_probes.jsonl`` and in a session's ``probes``."""
    return Probe(
        after_turn=int(raw["after_turn"]),
        question=raw["question"],
        expected=tuple(raw["expected"]),
        kind=raw.get("kind", ""),
        first_turn=int(raw.get("first_turn", -1)),
    )


def load_sessions(path: Path, limit: int | None = None) -> list[BenchSession]:
    """Sessions in the format of ``shared/data/dev_sessions.jsonl``; errors name the file and line."""
    sessions = []
    for number, raw in jsonl_records(path, "sessions"):
        try:
            sessions.append(
                BenchSession(
                    id=str(raw.get("id", f"line {number}")),
                    turns=tuple((t["role"], t["text"]) for t in raw["turns"]),
                    probes=tuple(probe_of(p) for p in raw.get("probes", [])),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"{path}:{number}: not a session line ({exc})", field="sessions") from None
        if limit is not None and len(sessions) >= limit:
            break
    return sessions


def uses_summary(name: str, policy: ContextPolicy) -> bool:
    """Whether sessions of this policy need the summarizer (a policy says so itself)."""
    return policy.uses_summary


def kept(expected: Sequence[str], context: str) -> bool:
    flat = squash(context)
    return any(squash(value) in flat for value in expected)


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
    need_summary = make_worker is not None and any(uses_summary(n, p) for n, p in policies.items())
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
                    turn = Turn(session_id=session.id, index=index, role=role, text=text)  # type: ignore[arg-type]
                    store.append_turn(session.id, role, text, ledger=ledger_for(turn) if ledger_for else ())
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
        ran = uses_summary(name, policies[name]) and worker is not None
        report[name] = {
            "probes": t.probes,
            "probe_facts_in_context": round(t.kept / t.probes, 4) if t.probes else 0.0,
            "context_tokens": {
                "median": int(statistics.median(t.tokens)) if t.tokens else 0,
                "max": max(t.tokens, default=0),
            },
            "build_ms": {"p50": _percentile(t.build_ms, 50), "p95": _percentile(t.build_ms, 95)},
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
        seen = snap if uses_summary(name, policy) else replace(snap, summary=None)
        started = time.perf_counter()
        prompt = policy.build(seen, probe.question, spec, counter)
        elapsed = (time.perf_counter() - started) * 1000
        tally = tallies[name]
        tally.probes += 1
        tally.kept += kept(probe.expected, "\n".join(m.content for m in prompt.messages))
        tally.tokens.append(prompt.manifest.total_tokens)
        tally.build_ms.append(elapsed)


def _percentile(values: Sequence[float], pct: int) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return round(ordered[rank], 3)


def choose_policies(names: Sequence[str], known: Mapping[str, ContextPolicy]) -> dict[str, ContextPolicy]:
    """The named policies (all when none is named), in the order given."""
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(f"unknown policy {', '.join(map(repr, unknown))} (known: {', '.join(known)})", field="policy")
    return {n: known[n] for n in (dict.fromkeys(names) or known)}


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
    extract, ledger_for = _fact_parts()
    make_worker: Callable[[Store], SummaryWorker] | None = None
    if summarizer and any(uses_summary(n, p) for n, p in policies.items()):
        model = load_summarizer(settings)
        make_worker = functools.partial(_worker, model=model, settings=settings, extract=extract)
    return replay(sessions, policies, spec, counter, make_worker=make_worker, ledger_for=ledger_for, progress=progress)


def _worker(store: Store, *, model: Any, settings: Settings, extract: Callable[[str], Sequence[Any]]) -> SummaryWorker:
    return SummaryWorker.configured(store, model, settings, extract)


def _fact_parts() -> tuple[Callable[[str], Sequence[Any]], Callable[[Turn], Sequence[LedgerEntry]] | None]:
    """The entity extractor and the ledger, from the modules that own them (the ledger may not exist yet)."""
    from appliance.facts.entities import extract

    try:
        from appliance.facts import ledger
    except ImportError:
        return extract, None
    entries_for = getattr(ledger, "entries_for", None)
    return extract, entries_for


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


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
