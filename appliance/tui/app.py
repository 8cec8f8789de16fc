"""`appliance tui`: the operator's and the kiosk's terminal UI, a client of the daemon's HTTP API.

The only importer of Textual. It never opens the database or a model: every fact on screen comes
from :mod:`appliance.client`, so what an operator sees is exactly what the daemon stored. HTTP runs
in Textual workers; streamed tokens arrive as replaceable messages (a flood of tokens collapses into
the latest text); failures become notifications, and an unreachable daemon becomes a banner while
a poll reconnects. Typed text stays in the input until the daemon has accepted it.

The context panel is careful about what the model saw: the prompt gauge and the cut/recalled
lists come from the last answer's manifest, and a summary written after that answer is marked as
not yet seen by the model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from appliance.config import Settings, TuiSettings, read_token_file
from appliance.tui.client import JSON, DaemonClient, DaemonError, DaemonUnreachable, Health

GAUGE_WIDTH = 12
EIGHTHS = " ▏▎▍▌▋▊▉"
PART_ORDER = (
    "system",
    "summary",
    "ledger",
    "recent",
    "recalled",
    "ledger-latest",
    "history",
    "question",
    "instruction",
    "template",
)


# pure rendering: payload dicts of the API → rich Text ------------------------------------------


def records_by_turn(payload: JSON) -> dict[int, JSON]:
    """Each generated answer's record, keyed by the agent turn's index (human turns have none)."""
    return {int(r["index"]): r for r in payload.get("records", [])}


def highlight_findings(text: str, check: JSON | None) -> Text:
    """The answer with each entity the guard flagged shown in reverse red."""
    out = Text(text)
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


def turn_text(turn: JSON, record: JSON | None, *, kiosk: bool = False) -> Text:
    """A turn's label line (who, turn number, stage, guard) and its text."""
    role = turn.get("role", "")
    index = turn.get("index", "?")
    if kiosk:
        label = Text("You" if role == "customer" else "Assistant", style="bold")
        return Text.assemble(label, "\n", Text(turn.get("text", "")))
    if role == "customer":
        label = Text(f"Customer · turn {index}", style="bold cyan")
    elif record is None:
        label = Text(f"Operator (human) · turn {index} · recorded, not generated", style="bold magenta")
    else:
        label = Text(f"Agent · turn {index} · stage {record.get('stage', '?')}", style="bold green")
        if record.get("check", {}).get("findings"):
            label.append(" · flagged", style="bold red")
    body = highlight_findings(turn.get("text", ""), record.get("check") if record else None)
    parts: list[Text | str] = [label, "\n", body]
    for line in finding_lines(record.get("check") if record else None):
        parts += ["\n", Text(line, style="red")]
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
        out.append(f"{part.get('name', ''):<{names}} ")
        out.append(drawn, style="green")
        out.append("·" * (bar - len(drawn)), style="dim")
        out.append(f" {tokens:>5}\n")
    total = int(manifest.get("total_tokens", 0))
    out.append(f"total {total} of {budget} tokens · {manifest.get('policy', '?')}", style="bold")
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


# messages and widgets -----------------------------------------------------------------------------


class AnswerProgress(Message):
    """The streamed answer so far. Replaceable: a queue of them collapses to the newest text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AnswerProgress)


class TurnView(Static):
    """One turn of the conversation; its class says who spoke."""


class ConversationView(VerticalScroll):
    """The transcript, rebuilt from the daemon's payload, plus the exchange being streamed."""

    def __init__(self, *, kiosk: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kiosk = kiosk
        self.shown: tuple[int, ...] | None = None
        self.pending: TurnView | None = None

    def show(self, payload: JSON | None) -> None:
        turns = (payload or {}).get("turns", [])
        records = records_by_turn(payload or {})
        key = (len(turns), *sorted(records))  # turns and records are append-only: counting them is enough
        if key == self.shown and self.pending is None:
            return  # nothing new (a summary changed, say): keep the operator's scroll position
        self.shown = key
        self.pending = None
        self.remove_children()
        views = []
        for turn in turns:
            record = records.get(turn["index"])
            role = "customer" if turn["role"] == "customer" else "agent" if record or self.kiosk else "operator"
            views.append(TurnView(turn_text(turn, record, kiosk=self.kiosk), classes=f"turn -{role}"))
        self.mount_all(views)
        self.scroll_end(animate=False)

    def begin(self, customer_text: str) -> None:
        """Show the customer's message and an empty answer while it streams."""
        label = "You" if self.kiosk else "Customer · sending"
        self.mount(
            TurnView(Text.assemble(Text(label, style="bold cyan"), "\n", customer_text), classes="turn -customer")
        )
        self.pending = TurnView(Text("…", style="dim"), classes="turn -agent -pending")
        self.mount(self.pending)
        self.scroll_end(animate=False)

    def progress(self, text: str) -> None:
        if self.pending is not None:
            label = "Assistant" if self.kiosk else "Agent · streaming"
            self.pending.update(Text.assemble(Text(label, style="bold green"), "\n", text))
            self.scroll_end(animate=False)

    def interrupted(self, why: str) -> None:
        """The stream broke: say so, and say that nothing of it was stored."""
        if self.pending is not None:
            self.pending.update(Text(f"(answer interrupted: {why}; nothing was stored)", style="bold red"))
            self.pending = None
        self.shown = None

    def clear(self) -> None:
        self.remove_children()
        self.shown = None
        self.pending = None


class ContextPanel(VerticalScroll):
    """What the model was given: summary, ledger, the last prompt's parts, what was cut or recalled."""

    def compose(self) -> ComposeResult:
        yield Static("Summary", id="summary-head", classes="section")
        yield Static("", id="summary-seen", classes="note")
        yield Static("", id="summary-text")
        yield Static("Last prompt", id="prompt-head", classes="section")
        yield Static("", id="gauge")
        yield Static("", id="notes", classes="note")
        yield Static("Ledger", id="ledger-head", classes="section")
        table: DataTable[str] = DataTable(id="ledger", show_cursor=False, zebra_stripes=True)
        table.add_columns("kind", "value", "turn", "in prompt")
        yield table

    manifest: JSON | None = None

    def on_resize(self) -> None:
        self.call_after_refresh(self._draw_gauge)

    def _draw_gauge(self) -> None:
        gauge = self.query_one("#gauge", Static)
        gauge.update(gauge_text(self.manifest, gauge.content_region.width or 40))

    def show(self, payload: JSON | None) -> None:
        head, seen = summary_head(payload)
        summary = (payload or {}).get("summary")
        self.query_one("#summary-head", Static).update(head)
        self.query_one("#summary-seen", Static).update(seen)
        self.query_one("#summary-text", Static).update(Text(summary["text"]) if summary else "")
        record = last_record(payload)
        manifest = record["manifest"] if record else None
        where = f"Last prompt (answer at turn {record['index']})" if record else "Last prompt"
        self.query_one("#prompt-head", Static).update(where)
        self.manifest = manifest
        self._draw_gauge()
        self.query_one("#notes", Static).update("\n".join(manifest_notes(manifest)))
        rows = ledger_rows(payload)
        self.query_one("#ledger-head", Static).update(f"Ledger · {len(rows)} facts")
        table = self.query_one("#ledger", DataTable)
        table.clear()
        for row in rows:
            table.add_row(*row)


# screens ---------------------------------------------------------------------------------------


class HelpScreen(ModalScreen[None]):
    """Every key binding, generated from the bindings themselves so it cannot go stale."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,q", "dismiss", "Close help")]

    def __init__(self, rows: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box", classes="dialog"):
            yield Static("Keys", classes="dialog-title")
            table: DataTable[str] = DataTable(id="help-table", show_cursor=False)
            table.add_columns("key", "what it does")
            for key, what in self.rows:
                table.add_row(key, what)
            yield table
            yield Static("Esc closes this help.", classes="note")


class EditSummaryScreen(ModalScreen[str | None]):
    """Edit the summary; saving stores it as a new operator version (history is kept)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save as new version"),
        Binding("escape", "cancel", "Cancel edit"),
    ]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="edit-box", classes="dialog"):
            yield Static("Edit summary · Ctrl+S saves a new operator version · Esc cancels", classes="dialog-title")
            yield TextArea(self.text, id="summary-editor", soft_wrap=True)

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class RestoreScreen(ModalScreen[int | None]):
    """Pick an earlier summary version to make current again (stored as a new version)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel restore")]

    def __init__(self, versions: Sequence[JSON]) -> None:
        super().__init__()
        self.versions = versions

    def compose(self) -> ComposeResult:
        with Vertical(id="restore-box", classes="dialog"):
            yield Static("Restore a summary version · Enter restores · Esc cancels", classes="dialog-title")
            options = [
                Option(
                    f"v{v['version']} · {v['author']} · {v['status']}"
                    + (f" ({v['reason']})" if v.get("reason") else "")
                    + f" · {v['text'][:60]!r}",
                    id=str(v["version"]),
                    disabled=v.get("status") != "accepted",
                )
                for v in sorted(self.versions, key=lambda v: -v["version"])
            ]
            yield OptionList(*options, id="versions")

    @on(OptionList.OptionSelected)
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0))

    def action_cancel(self) -> None:
        self.dismiss(None)


class SessionsScreen(ModalScreen[str | None]):
    """Search sessions (ids, titles, message text) and resume one."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel search")]

    def __init__(self, client: DaemonClient) -> None:
        super().__init__()
        self.client = client

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-box", classes="dialog"):
            yield Static("Find a session · type to search · ↓ and Enter resume · Esc cancels", classes="dialog-title")
            yield Input(placeholder="id, title or words said", id="search")
            yield OptionList(id="found")

    def on_mount(self) -> None:
        self.search("")

    @on(Input.Changed, "#search")
    def changed(self, event: Input.Changed) -> None:
        self.search(event.value)

    @on(Input.Submitted, "#search")
    def submitted(self) -> None:
        found = self.query_one("#found", OptionList)
        if found.option_count:
            found.focus()
            found.highlighted = 0

    @work(exclusive=True, group="search")
    async def search(self, text: str) -> None:
        try:
            sessions = await self.client.sessions(search=text)
        except (DaemonUnreachable, DaemonError) as exc:
            self.notify(str(exc), title=exc.title, severity="error")
            return
        found = self.query_one("#found", OptionList)
        found.clear_options()
        found.add_options(
            Option(
                f"{s['id']} · {s.get('turns', 0)} turns · {s.get('policy', '')} · {s.get('title') or '(untitled)'}",
                id=s["id"],
            )
            for s in sessions
        )

    @on(OptionList.OptionSelected, "#found")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


# the app ---------------------------------------------------------------------------------------

KIOSK_AWAY = "Sorry, the assistant is restarting. Please wait a moment; what you typed is kept."
DIALOGS: dict[type[ModalScreen[Any]], str] = {
    EditSummaryScreen: "summary editor",
    RestoreScreen: "restore list",
    SessionsScreen: "session search",
    HelpScreen: "help",
}
OPERATOR_ACTIONS = frozenset(
    {
        "new_session",
        "find_session",
        "edit_summary",
        "restore_summary",
        "toggle_pause",
        "toggle_takeover",
        "toggle_context",
        "refresh",
        "quit",
        "help_quit",
    }
)


class ApplianceTUI(App[int]):
    """The operator console (default) or the customer kiosk (``kiosk=True``)."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses may live elsewhere
    TITLE = "appliance"
    ENABLE_COMMAND_PALETTE = False  # a kiosk must offer no way around its locked-down keys
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help", key_display="F1"),
        Binding("ctrl+n", "new_session", "New session", key_display="^N"),
        Binding("f2,ctrl+f", "find_session", "Find/resume session", key_display="F2"),
        Binding("f3,ctrl+e", "edit_summary", "Edit summary", key_display="F3"),
        Binding("f4,ctrl+r", "restore_summary", "Restore version", key_display="F4"),
        Binding("f5,ctrl+y", "toggle_pause", "Pause/resume summarizing", key_display="F5"),
        Binding("f6,ctrl+t", "toggle_takeover", "Take over (type agent replies)", key_display="F6"),
        Binding("f7,ctrl+b", "toggle_context", "Show/hide context panel", key_display="F7"),
        Binding("ctrl+l", "refresh", "Reload session", show=False),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        client: DaemonClient,
        settings: TuiSettings | None = None,
        *,
        kiosk: bool = False,
        session_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.client = client
        self.settings = settings or TuiSettings()
        self.kiosk = kiosk
        self.session_id = session_id
        self.clock = clock
        self.payload: JSON | None = None
        self.health: Health | None = None
        self.connected: bool | None = None
        self.sending = False
        self.takeover = False
        self.last_activity = clock()
        if self.settings.theme in self.available_themes:
            self.theme = self.settings.theme
        if kiosk:
            self.bind(self.settings.operator_key, "leave_kiosk", description="Operator", show=False)

    # layout ------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static("", id="banner")
        with Horizontal(id="body"):
            with Vertical(id="left"):
                if self.kiosk:
                    yield Static(self.settings.kiosk_welcome, id="welcome")
                yield ConversationView(kiosk=self.kiosk, id="conversation")
                yield Input(placeholder=self._placeholder(), id="message")
            if not self.kiosk:
                yield ContextPanel(id="context")
        yield Static("connecting…", id="status")
        if not self.kiosk:
            yield Footer()

    def on_mount(self) -> None:
        if self.kiosk:
            self.screen.add_class("-kiosk")
            if self.settings.large_text:
                self.screen.add_class("-large")
        self.query_one("#banner").display = False
        self.query_one("#message", Input).focus()
        self.set_interval(self.settings.poll_s, self.poll)
        if self.kiosk:
            self.set_interval(1.0, self.reset_if_idle)
        self.poll()
        if self.session_id:
            self.reload()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """In kiosk mode every operator action and every quitting key is off; only the operator key leaves."""
        if self.kiosk and action in OPERATOR_ACTIONS:
            return False
        if action == "leave_kiosk":
            return self.kiosk
        return True

    def _placeholder(self) -> str:
        if self.kiosk:
            return "Type your question and press Enter"
        if self.takeover:
            return "TAKE OVER: type the agent's reply (recorded, not generated)"
        return "Customer message (Enter sends)"

    # connection --------------------------------------------------------------------------------

    @work(exclusive=True, group="poll")
    async def poll(self) -> None:
        """Status for the bar; on failure a banner, and on recovery the session again."""
        try:
            await self._poll()
        except NoMatches:
            pass  # the app is closing and its widgets are gone: nothing left to show

    async def _poll(self) -> None:
        try:
            health = await self.client.health()
        except DaemonUnreachable as exc:
            self.set_connection(
                False,
                f"Daemon unreachable ({exc}). Reconnecting every {self.settings.poll_s:g} s; your typing is kept.",
            )
            return
        except DaemonError as exc:
            self.set_connection(False, f"Daemon error: {exc}. Retrying every {self.settings.poll_s:g} s.")
            return
        self.health = health
        was = self.connected
        if health.ready:
            self.set_connection(True, "")
        else:
            failing = ", ".join(k for k, ok in health.checks.items() if not ok) or "starting"
            self.set_connection(False, f"Daemon not ready ({failing}): it may be loading or restarting. Waiting…")
        if self.session_id and not self.sending:
            await self._load(quiet=was is not False)
        self.update_status()

    def set_connection(self, ok: bool, why: str) -> None:
        banner = self.query_one("#banner", Static)
        banner.update(KIOSK_AWAY if self.kiosk else why)
        banner.display = not ok
        if ok and self.connected is False:
            self.notify("Connected to the daemon again.", title="Reconnected")
        self.connected = ok
        if not ok:
            self.update_status()

    def update_status(self) -> None:
        status = self.query_one("#status", Static)
        if self.kiosk:
            status.update("Ready" if self.connected else "Please wait…")
            return
        h = self.health
        if not self.connected or h is None:
            dot, model = Text("● offline", style="bold red"), ""
        else:
            dot = Text("● ready" if h.ready else "● not ready", style="bold green" if h.ready else "bold yellow")
            model = f" · {h.model}"
        queue = f" · queue {h.queue}{' (answering)' if h.answering else ''}" if h else ""
        line = Text.assemble(
            dot,
            model,
            queue,
            f" · summarizer {summarizer_state(h, self.payload)}",
            f" · {speed(last_record(self.payload))}",
            f" · session {self.session_id or 'new'}",
            Text(" · TAKE OVER", style="bold magenta") if self.takeover else "",
        )
        status.update(line)

    # sessions ------------------------------------------------------------------------------------

    async def _ensure_session(self) -> str:
        if self.session_id is None:
            created = await self.client.new_session(title="kiosk" if self.kiosk else "")
            self.session_id = str(created["id"])
        return self.session_id

    async def _load(self, *, quiet: bool = False) -> None:
        """Fetch the session and show it; errors become notifications unless ``quiet``."""
        if self.session_id is None:
            return
        try:
            payload = await self.client.session(self.session_id)
        except (DaemonUnreachable, DaemonError) as exc:
            if not quiet:
                self.report(exc)
            return
        self.show(payload)

    def show(self, payload: JSON | None) -> None:
        if payload is not None and payload == self.payload:
            self.update_status()
            return  # a poll found nothing new: keep scroll positions and selections
        self.payload = payload
        self.query_one(ConversationView).show(payload)
        if not self.kiosk:
            self.query_one(ContextPanel).show(payload)
            self.query_one("#context").border_title = (
                f"Context · {payload['session']['policy']}" if payload else "Context"
            )
        self.update_status()

    @work(exclusive=True, group="load")
    async def reload(self) -> None:
        await self._load()

    def reset_conversation(self) -> None:
        """Forget the session on screen; the next message starts a new one."""
        self.session_id = None
        self.payload = None
        self.query_one(ConversationView).clear()
        if not self.kiosk:
            self.query_one(ContextPanel).show(None)
        self.update_status()

    # sending -------------------------------------------------------------------------------------

    @on(Input.Changed, "#message")
    def typing(self) -> None:
        self.last_activity = self.clock()

    @on(Input.Submitted, "#message")
    def submitted(self, event: Input.Submitted) -> None:
        self.last_activity = self.clock()
        text = event.value.strip()
        if not text:
            return
        if self.sending:
            self.notify("Still answering the previous message.", severity="warning")
            return
        self.sending = True  # now, not in the worker: a second Enter must not start a second answer
        if self.takeover:
            self.record_agent(text)
        else:
            self.send(text)

    def _clear_input(self, sent: str) -> None:
        """Empty the input only if it still holds what was sent (the typist may have moved on)."""
        box = self.query_one("#message", Input)
        if box.value.strip() == sent:
            box.value = ""

    @work(group="send")
    async def send(self, text: str) -> None:
        """Stream one answer; the typed text is cleared only once the daemon has accepted it."""
        conversation = self.query_one(ConversationView)
        answer = ""
        started = False
        try:
            session_id = await self._ensure_session()
            async for event in self.client.stream_message(session_id, text):
                if event.kind == "accepted":
                    started = True
                    self._clear_input(text)
                    conversation.begin(text)
                elif event.kind == "token":
                    answer += str(event.data.get("text", ""))
                    self.post_message(AnswerProgress(answer))
                elif event.kind == "done":  # the stored answer: the guard may have replaced the streamed draft
                    self.post_message(AnswerProgress(str(event.data.get("text", answer))))
                elif event.kind == "error":
                    error = event.data.get("error", {})
                    raise DaemonError(str(error.get("message", "the answer failed")), kind=str(error.get("type", "")))
        except DaemonUnreachable as exc:
            self.set_connection(False, f"Daemon unreachable ({exc}). Reconnecting; your message was kept.")
            self.report(exc)
            if started:
                conversation.interrupted("the daemon went away")
                self.query_one("#message", Input).value = self.query_one("#message", Input).value or text
            return
        except DaemonError as exc:
            self.report(exc)
            if started:
                conversation.interrupted(exc.kind or "error")
            return
        finally:
            self.sending = False
        await self._load()

    def report(self, exc: DaemonUnreachable | DaemonError) -> None:
        """A failure as a notification: the daemon's words for operators, a plain apology for customers."""
        if self.kiosk:
            self.notify("Sorry, that did not work. Please try again in a moment.", severity="warning")
        else:
            self.notify(str(exc), title=exc.title, severity="error")

    def on_answer_progress(self, message: AnswerProgress) -> None:
        self.query_one(ConversationView).progress(message.text)

    @work(group="send")
    async def record_agent(self, text: str) -> None:
        """Take over: the operator's reply is recorded as the agent's turn, not generated."""
        try:
            session_id = await self._ensure_session()
            await self.client.record_turn(session_id, "agent", text)
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        finally:
            self.sending = False
        self._clear_input(text)
        await self._load()

    # kiosk -----------------------------------------------------------------------------------------

    def on_key(self) -> None:
        self.last_activity = self.clock()

    def reset_if_idle(self) -> None:
        """Kiosk: after ``kiosk_idle_reset_s`` without a key, the next customer gets a clean screen."""
        idle = self.clock() - self.last_activity
        if self.sending or idle < self.settings.kiosk_idle_reset_s:
            return
        if self.session_id is not None or self.query_one("#message", Input).value:
            self.query_one("#message", Input).value = ""
            self.reset_conversation()

    def action_leave_kiosk(self) -> None:
        self.exit(0)

    # operator actions ----------------------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.key_rows()))

    def key_rows(self) -> list[tuple[str, str]]:
        """Every key this mode answers to, from the bindings of the app and its dialogs."""
        if self.kiosk:  # the operator key is not listed: customers must not learn it
            return [("Enter", "Send your message"), ("F1", "This help")]
        rows = [("Enter", "Send (taking over: record the agent reply)")]
        rows += [(_keys(b), b.description) for b in self._bindings_of(ApplianceTUI)]
        for screen, where in DIALOGS.items():
            rows += [(_keys(b), f"{b.description} (in {where})") for b in self._bindings_of(screen)]
        return rows

    @staticmethod
    def _bindings_of(cls: type[Any]) -> list[Binding]:
        return [b for b in cls.BINDINGS if isinstance(b, Binding) and b.description]

    def action_toggle_context(self) -> None:
        context = self.query_one("#context")
        context.display = not context.display

    def action_refresh(self) -> None:
        self.reload()

    def action_toggle_takeover(self) -> None:
        self.takeover = not self.takeover
        box = self.query_one("#message", Input)
        box.placeholder = self._placeholder()
        box.set_class(self.takeover, "-takeover")
        self.notify(
            "Take over: your replies are recorded as the agent's."
            if self.takeover
            else "Back to the model: messages are answered by the model."
        )
        self.update_status()

    @work(exclusive=True, group="action")
    async def action_new_session(self) -> None:
        self.reset_conversation()
        try:
            await self._ensure_session()
        except (DaemonUnreachable, DaemonError) as exc:
            self.notify(
                f"{exc} (a session will be created with the first message)", title=exc.title, severity="warning"
            )
            return
        self.notify(f"New session {self.session_id}.")
        await self._load()

    def action_find_session(self) -> None:
        def resume(session_id: str | None) -> None:
            if session_id:
                self.session_id = session_id
                self.payload = None
                self.query_one(ConversationView).clear()
                self.reload()

        self.push_screen(SessionsScreen(self.client), resume)

    def _need_session(self) -> str | None:
        if self.session_id is None or self.payload is None:
            self.notify("No session yet: send a message or resume one first.", severity="warning")
            return None
        return self.session_id

    def action_edit_summary(self) -> None:
        session_id = self._need_session()
        if session_id is None:
            return
        summary = (self.payload or {}).get("summary")

        def save(text: str | None) -> None:
            if text is not None and text.strip():
                self.save_summary(session_id, text)

        self.push_screen(EditSummaryScreen(summary["text"] if summary else ""), save)

    @work(exclusive=True, group="action")
    async def save_summary(self, session_id: str, text: str) -> None:
        try:
            version = await self.client.edit_summary(session_id, text)
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        self.notify(f"Saved as summary version {version['version']} (operator).")
        await self._load()

    def action_restore_summary(self) -> None:
        session_id = self._need_session()
        if session_id is None:
            return
        versions = (self.payload or {}).get("summaries", [])
        if not versions:
            self.notify("This session has no summary versions yet.", severity="warning")
            return

        def restore(version: int | None) -> None:
            if version:
                self.restore_version(session_id, version)

        self.push_screen(RestoreScreen(versions), restore)

    @work(exclusive=True, group="action")
    async def restore_version(self, session_id: str, version: int) -> None:
        try:
            new = await self.client.restore_summary(session_id, version)
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        self.notify(f"Version {version} restored as version {new['version']}.")
        await self._load()

    @work(exclusive=True, group="action")
    async def action_toggle_pause(self) -> None:
        session_id = self._need_session()
        if session_id is None:
            return
        paused = not (self.payload or {}).get("session", {}).get("summary_paused", False)
        try:
            await self.client.set_paused(session_id, paused)
        except (DaemonUnreachable, DaemonError) as exc:
            self.report(exc)
            return
        self.notify("Summarizing paused for this session." if paused else "Summarizing resumed.")
        await self._load()

    async def action_quit(self) -> None:
        if not self.kiosk:
            self.exit(0)

    async def on_unmount(self) -> None:
        await self.client.aclose()


def _keys(binding: Binding) -> str:
    """``"f2,ctrl+f"`` → ``"F2 / Ctrl+F"``."""
    names = []
    for key in binding.key.split(","):
        parts = key.strip().split("+")
        names.append("+".join("Esc" if p == "escape" else p.upper() if len(p) <= 3 else p.title() for p in parts))
    return " / ".join(names)


def daemon_url(settings: Settings, url: str | None = None) -> str:
    """``--url``, else ``tui.url``, else the local daemon: its TCP port, or its Unix socket when it has no host."""
    if url or settings.tui.url:
        return url or settings.tui.url
    server = settings.server
    if not server.host and server.socket:
        return f"unix:{_beside_config(settings, server.socket)}"
    return f"http://127.0.0.1:{server.port or 8088}"


def _beside_config(settings: Settings, name: str) -> Path:
    """A path from the config, relative to the config file's folder as the daemon reads it."""
    path = Path(name).expanduser()
    if not path.is_absolute() and settings.source != "<defaults>":
        path = Path(settings.source).parent / path
    return path


def read_token(settings: Settings) -> str | None:
    """The bearer token from ``tui.token_file`` (relative to the config file), or None."""
    if not settings.tui.token_file:
        return None
    return read_token_file(_beside_config(settings, settings.tui.token_file), "tui.token_file")


def run_tui(settings: Settings, *, url: str | None = None, kiosk: bool = False, session_id: str | None = None) -> int:
    """Run the app until the operator quits (or, in kiosk mode, presses the operator key)."""
    client = DaemonClient(daemon_url(settings, url), token=read_token(settings))
    app = ApplianceTUI(client, settings.tui, kiosk=kiosk, session_id=session_id)
    return app.run() or 0
