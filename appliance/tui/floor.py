"""The operator's live view of the branch floor: every session, its state and how long it has waited.

The rows are built from ``GET /v1/sessions`` once and then kept by the daemon's events
(``/v1/events``): a pure function (:func:`apply`) maps the rows and one event to the next rows, so the
list needs no reload and is tested without a screen. Sessions that need a person come first, the
longest waiting at the top, then those a person holds, then the rest by last activity.

Everything drawn from a session (its title, which a client chose) is hostile text: cells are
``Text`` objects, never markup.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from appliance.terminal import one_line
from appliance.tui.client import JSON

STATE_ORDER = {"needs_person": 0, "with_person": 1, "bot": 2, "closed": 3}
STATE_LABEL = {"needs_person": "NEEDS PERSON", "with_person": "with person", "bot": "bot", "closed": "closed"}
STATE_STYLE = {"needs_person": "bold white on red", "with_person": "bold magenta", "bot": "green", "closed": "dim"}


@dataclass(frozen=True)
class FloorRow:
    """One session on the floor: its state and since when, its last activity, its last answer's
    stage and how many facts the guard flagged in it."""

    session_id: str
    title: str = ""
    state: str = "bot"
    since: float = 0.0
    last_at: float = 0.0
    stage: str = ""
    flags: int = 0


Rows = Mapping[str, FloorRow]


def rows_from_sessions(sessions: list[JSON]) -> dict[str, FloorRow]:
    """The rows of ``GET /v1/sessions``'s list."""
    return {
        str(s["id"]): FloorRow(
            session_id=str(s["id"]),
            title=str(s.get("title") or ""),
            state=str(s.get("floor_state") or "bot"),
            since=float(s.get("floor_since") or 0.0),
            last_at=float(s.get("last_at") or s.get("created_at") or 0.0),
        )
        for s in sessions
    }


def apply(rows: Rows, kind: str, data: Mapping[str, Any]) -> dict[str, FloorRow]:
    """The rows after one event (``session``, ``turn``, ``floor``, ``erased``; others change nothing)."""
    out = dict(rows)
    sid = str(data.get("session_id", ""))
    at = float(data.get("at") or 0.0)
    row = out.get(sid, FloorRow(sid))
    if kind == "erased":
        out.pop(sid, None)
    elif kind == "session":
        out[sid] = dataclasses.replace(row, title=str(data.get("title") or ""), last_at=at)
    elif kind == "turn":
        changed: dict[str, Any] = {"last_at": at}
        if data.get("by") == "model":
            changed |= {"stage": str(data.get("stage") or ""), "flags": int(data.get("flags") or 0)}
        out[sid] = dataclasses.replace(row, **changed)
    elif kind == "floor":
        out[sid] = dataclasses.replace(row, state=str(data.get("state", "bot")), since=float(data.get("since") or at))
    return out


def ordered(rows: Rows) -> list[FloorRow]:
    """Needs a person first (longest waiting first), then with a person, then by last activity."""

    def key(row: FloorRow) -> tuple[int, float]:
        order = STATE_ORDER.get(row.state, 2)
        return (order, row.since if order < 2 else -row.last_at)

    return sorted(rows.values(), key=key)


def waiting(rows: Rows) -> int:
    return sum(1 for r in rows.values() if r.state == "needs_person")


def ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def cells(row: FloorRow, now: float) -> tuple[Text, ...]:
    """The row's cells: state, waiting time, last activity, stage, flags, session."""
    state = Text(STATE_LABEL.get(row.state, row.state), style=STATE_STYLE.get(row.state, ""))
    wait = ago(now - row.since) if row.state in ("needs_person", "with_person") and row.since else ""
    last = f"{ago(now - row.last_at)} ago" if row.last_at else ""
    flags = Text(str(row.flags), style="bold red") if row.flags else Text("")
    name = Text(row.session_id)
    if row.title:
        name.append(" · " + one_line(row.title), style="dim")
    return (state, Text(wait), Text(last), Text(row.stage), flags, name)


def alert_text(count: int) -> Text:
    """The console's alert while customers wait for a person."""
    who = "1 customer is" if count == 1 else f"{count} customers are"
    return Text(f" ⚠ {who} waiting for a person: F9 opens the floor ", style="bold white on red")


class FloorScreen(Screen[str | None]):
    """The live list; Enter (the table's selection) opens the session under the cursor, following it
    live; Escape goes back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f9", "dismiss_none", "Back", key_display="Esc"),
    ]

    def __init__(self, rows: Rows, clock: Any = time.time) -> None:
        super().__init__()
        self.rows = dict(rows)
        self.clock = clock

    def compose(self) -> ComposeResult:
        yield Static("The floor · live", id="floor-head", classes="section")
        table: DataTable[Text] = DataTable(id="floor", cursor_type="row", zebra_stripes=True)
        table.add_columns("state", "waiting", "last activity", "stage", "flags", "session")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.show(self.rows)
        self.set_interval(1.0, lambda: self.show(self.rows))  # the waiting times count up
        self.query_one(DataTable).focus()

    def show(self, rows: Rows) -> None:
        self.rows = dict(rows)
        table: DataTable[Text] = self.query_one(DataTable)
        current = table.cursor_row
        table.clear()
        now = self.clock()
        for row in ordered(self.rows):
            table.add_row(*cells(row, now), key=row.session_id)
        if self.rows:
            table.move_cursor(row=min(current, len(self.rows) - 1))
        head = self.query_one("#floor-head", Static)
        count = waiting(self.rows)
        head.update(alert_text(count) if count else Text(f"The floor · {len(self.rows)} sessions · live"))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(event.row_key.value)
