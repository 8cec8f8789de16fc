"""Pure rendering for the terminal UI: the daemon's JSON payloads → Rich ``Text`` and plain rows.

No widget, no I/O: each function maps what ``GET /v1/sessions/{id}`` and the health poll returned
to what a widget shows, so the screen's wording is tested without starting an app. Everything a
person, the model or the daemon wrote goes into ``Text`` objects through :func:`as_text`, never
markup, and through :func:`~appliance.terminal.visible`, so neither Textual nor the terminal
interprets it: a title ``[/]`` or ``\x1b[2J`` is shown as written.

The context panel is careful about what the model saw: the prompt gauge and the cut/recalled
lists come from the last answer's manifest, and a summary written after that answer is marked as
not yet seen by the model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.text import Text

from appliance.terminal import visible
from appliance.tui.client import JSON, Health

GAUGE_WIDTH = 12
EIGHTHS = " ▏▎▍▌▋▊▉"
PART_ORDER = (
    "system",
    "summary",
    "ledger",
    "recent",
    "recalled",
    "ledger-latest",
    "passages",
    "ledger-readback",
    "history",
    "question",
    "instruction",
    "template",
)


def as_text(text: object, style: str = "") -> Text:
    """Outside text as ``Text``: never read as markup, every terminal control made visible."""
    return Text(visible(str(text)), style=style)


def records_by_turn(payload: JSON) -> dict[int, JSON]:
    """Each generated answer's record, keyed by the agent turn's index (human turns have none)."""
    return {int(r["index"]): r for r in payload.get("records", [])}


def highlight_findings(text: str, check: JSON | None) -> Text:
    """The answer with each entity the guard flagged shown in reverse red."""
    out = as_text(text)  # the same length as ``text``: the offsets below still hold
    for finding in (check or {}).get("findings", []):
        entity = finding.get("entity", {})
        value = str(entity.get("text", ""))
        start, end = int(entity.get("start", -1)), int(entity.get("end", -1))
        if not (0 <= start < end <= len(text) and text[start:end] == value):
            start = text.find(value) if value else -1  # the stored text may differ from the checked draft
            end = start + len(value)
        if start >= 0:
            out.stylize("bold reverse red", start, end)
    return out


def finding_lines(check: JSON | None) -> list[str]:
    """One line per flagged entity: what the answer said and what the ledger says instead."""
    lines = []
    for finding in (check or {}).get("findings", []):
        value = finding.get("entity", {}).get("text", "?")
        expected = finding.get("expected", "")
        if finding.get("status") == "contradiction" and expected:
            lines.append(f"⚠ {value!r} contradicts the ledger: {expected!r}")
        else:
            lines.append(f"⚠ {value!r} is not supported by the conversation")
    action = (check or {}).get("action", "none")
    if lines and action not in ("", "none"):
        lines.append(f"  guard action: {action}")
    return lines


def sources_of(record: JSON | None) -> list[JSON]:
    """The passages an answer's prompt carried (its sources), best first; none for an older record."""
    return list(((record or {}).get("knowledge") or {}).get("sources") or [])


def source_lines(record: JSON | None) -> list[str]:
    """The operator's view of an answer's sources: document, section and score, one a line; or that
    it is the configured not-found text."""
    knowledge = (record or {}).get("knowledge") or {}
    if knowledge.get("not_found"):
        return ["no document answers this: the configured not-found text (knowledge.not_found)"]
    lines = []
    for source in sources_of(record):
        where = source.get("heading") or source.get("location") or source.get("title", "")
        lines.append(f"source: {source.get('doc', '?')} › {where} ({float(source.get('score', 0.0)):.2f})")
    return lines


def source_line(record: JSON | None) -> str:
    """The customer's short "Source:" line: the titles of the answer's documents, best first."""
    titles = list(dict.fromkeys(str(s.get("title") or s.get("doc", "")) for s in sources_of(record)))
    return f"Source: {', '.join(titles)}" if titles else ""


def turn_text(turn: JSON, record: JSON | None, *, plain: bool = False, sources: bool = True) -> Text:
    """A turn's label line (who, turn number, stage, guard) and its text, with its sources under it.

    ``plain`` is the customer's view: "You" and "Assistant", no stages, guard findings or operators,
    and with ``sources`` a short "Source:" line under an answer drawn from the documents.
    """
    role = turn.get("role", "")
    index = turn.get("index", "?")
    if plain:
        # An agent's turn without a record was not generated: a member of staff wrote it.
        label = Text("You" if role == "customer" else "Assistant" if record is not None else "Staff", style="bold")
        line = source_line(record) if sources and role == "agent" else ""
        cited = ("\n", as_text(line, style="dim italic")) if line else ()
        return Text.assemble(label, "\n", as_text(turn.get("text", "")), *cited)
    if role == "customer":
        label = as_text(f"Customer · turn {index}", style="bold cyan")
    elif record is None:
        label = as_text(f"Operator (human) · turn {index} · recorded, not generated", style="bold magenta")
    else:
        label = as_text(f"Agent · turn {index} · stage {record.get('stage', '?')}", style="bold green")
        if record.get("check", {}).get("findings"):
            label.append(" · flagged", style="bold red")
    body = highlight_findings(turn.get("text", ""), record.get("check") if record else None)
    parts: list[Text | str] = [label, "\n", body]
    for line in finding_lines(record.get("check") if record else None):
        parts += ["\n", as_text(line, style="red")]
    for line in source_lines(record):
        parts += ["\n", as_text(line, style="dim cyan")]
    return Text.assemble(*parts)


def gauge_text(manifest: JSON | None, width: int = 40) -> Text:
    """A bar per prompt part of the last manifest, scaled to the budget, fitted to ``width`` cells."""
    if not manifest:
        return Text("No answer yet: nothing has been sent to the model.", style="dim")
    budget = max(int(manifest.get("budget", 0)), 1)
    parts = sorted(manifest.get("parts", []), key=lambda p: _order(p.get("name", "")))
    names = max([len(str(p.get("name", ""))) for p in parts] + [5])
    bar = max(4, min(GAUGE_WIDTH, width - names - 8))
    out = Text()
    for part in parts:
        tokens = int(part.get("tokens", 0))
        eighths = min(bar * 8, max(1, round(bar * 8 * tokens / budget))) if tokens else 0
        full, rest = divmod(eighths, 8)
        drawn = "█" * full + (EIGHTHS[rest] if rest else "")
        out.append(visible(f"{part.get('name', ''):<{names}} "))
        out.append(drawn, style="green")
        out.append("·" * (bar - len(drawn)), style="dim")
        out.append(f" {tokens:>5}\n")
    total = int(manifest.get("total_tokens", 0))
    out.append(visible(f"total {total} of {budget} tokens · {manifest.get('policy', '?')}"), style="bold")
    return out


def _order(name: str) -> int:
    return PART_ORDER.index(name) if name in PART_ORDER else len(PART_ORDER)


def manifest_notes(manifest: JSON | None) -> list[str]:
    """What the last prompt cut, recalled, summarized or fell back on, in the manifest's words."""
    if not manifest:
        return []
    lines = [f"cut: {c}" for c in manifest.get("cuts", [])]
    for key, what in (
        ("cut_turns", "turns left out"),
        ("recalled_turns", "recalled turns"),
        ("summarized_turns", "turns seen only as summary"),
        ("verbatim_turns", "verbatim turns"),
    ):
        turns = manifest.get(key) or []
        if turns:
            lines.append(f"{what}: {_ranges(turns)}")
    if manifest.get("fallback"):
        lines.append("fallback: previous summary + the newer turns verbatim")
    for passage in manifest.get("passages") or []:
        where = passage.get("heading") or passage.get("location", "")
        lines.append(f"passage: {passage.get('doc', '?')} › {where} ({float(passage.get('score', 0.0)):.2f})")
    return lines or ["nothing cut, nothing recalled"]


def _ranges(numbers: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` → ``"0-2, 5"``."""
    out: list[str] = []
    run: list[int] = []
    for n in sorted(set(numbers)):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out)


def last_record(payload: JSON | None) -> JSON | None:
    records = (payload or {}).get("records", [])
    return max(records, key=lambda r: r["index"]) if records else None


def summary_head(payload: JSON | None) -> tuple[str, str]:
    """The summary's title (version, author, coverage) and whether the model has seen it."""
    summary = (payload or {}).get("summary")
    if not summary:
        return "Summary: none yet", "The model has been given no summary."
    head = f"Summary v{summary['version']} · {summary['author']} · turns 0-{summary['covers_to']}"
    record = last_record(payload)
    if record is None:
        return head, "Not used in a prompt yet."
    turns = {t["index"]: t for t in (payload or {}).get("turns", [])}
    answered_at = float(turns.get(record["index"], {}).get("created_at", 0.0))
    if float(summary.get("created_at", 0.0)) > answered_at:
        return head, "New since the last answer: the model has not seen this version yet."
    part = next((p for p in record["manifest"].get("parts", []) if p.get("name") == "summary"), None)
    if part is None:
        return head, f"Not in the last prompt (policy {record['manifest'].get('policy', '?')} sent no summary)."
    return head, f"In the last prompt ({part.get('tokens', 0)} tokens)."


def ledger_rows(payload: JSON | None) -> list[tuple[str, str, str, str]]:
    """(kind, value, turn, in last prompt) per fact; "in prompt" is what the last manifest says, never assumed.

    ``yes``: its turn's facts were in the prompt's ledger part; ``cut``: older facts left out to fit;
    ``later``: stated after that prompt was built; ``no``: the prompt had no ledger part at all.
    """
    record = last_record(payload)
    # ``rolling`` puts the facts of summarized turns and of the latest turns in two parts.
    manifest_parts = record["manifest"].get("parts", []) if record else []
    parts = [p for p in manifest_parts if str(p.get("name", "")).startswith("ledger")]
    sent_turns = {t for p in parts for t in p.get("turns", [])}
    rows = []
    for entry in (payload or {}).get("ledger", []):
        turn = int(entry.get("turn", -1))
        if record is None or turn >= int(record["index"]) - 1:
            sent = "later" if record is None or turn >= int(record["index"]) else "question"
        elif not parts:
            sent = "no"
        else:
            sent = "yes" if turn in sent_turns else "cut"
        rows.append((str(entry.get("kind", "")), str(entry.get("value", "")), str(turn), sent))
    return rows


def summarizer_state(health: Health | None, payload: JSON | None) -> str:
    """idle / running / paused / failed with its reason, from the metrics and the session's versions."""
    if health is None:
        return "unknown"
    if payload and payload.get("session", {}).get("summary_paused"):
        return "paused"
    counters = health.summarizer
    if counters is None:
        return "off"
    if health.checks.get("worker") is False or counters.get("alive", 1) == 0:
        return "failed: worker stopped"
    if counters.get("running", 0):
        return "running"
    versions = (payload or {}).get("summaries", [])
    newest = max(versions, key=lambda s: s["version"]) if versions else None
    if newest and newest.get("status") == "rejected":
        return f"failed: {newest.get('reason') or 'rejected'}"
    return "idle"


def speed(record: JSON | None) -> str:
    """The last answer's latency and decode speed, as in ``appliance chat -v``."""
    if not record:
        return "last turn —"
    t = record.get("timings", {})
    decode_s = max(float(t.get("generate_s", 0.0)) - float(t.get("ttft_s", 0.0)), 1e-9)
    tokens = int(record.get("completion_tokens", 0))
    rate = (tokens - 1) / decode_s if tokens > 1 else 0.0
    return f"last turn {float(t.get('total_s', 0.0)):.1f} s, {rate:.1f} tok/s"


@dataclass(frozen=True)
class Status:
    """What the status bar is drawn from: the last health poll and the session on screen."""

    connected: bool | None  # None until the first poll has answered
    health: Health | None
    payload: JSON | None
    session_id: str | None
    takeover: bool
    floor: str = "bot"  # the session's state on the branch floor
    notice: str = ""  # the daemon's sentence for a customer waiting for a person


def status_line(status: Status) -> Text:
    """The operator's status bar: daemon, model, queue, summarizer, last turn's speed, session."""
    h = status.health
    if not status.connected or h is None:
        dot, model = Text("● offline", style="bold red"), ""
    else:
        dot = Text("● ready" if h.ready else "● not ready", style="bold green" if h.ready else "bold yellow")
        model = f" · {h.model}"
    queue = f" · queue {h.queue}{' (answering)' if h.answering else ''}" if h else ""
    return Text.assemble(
        dot,
        as_text(model),
        queue,
        as_text(f" · summarizer {summarizer_state(h, status.payload)}"),
        f" · {speed(last_record(status.payload))}",
        as_text(f" · session {status.session_id or 'new'}"),
        Text(" · TAKE OVER", style="bold magenta") if status.takeover else "",
        Text(f" · {FLOOR_FLAGS[status.floor]}", style="bold red") if status.floor in FLOOR_FLAGS else "",
    )


FLOOR_FLAGS = {"needs_person": "NEEDS A PERSON", "closed": "CLOSED"}
