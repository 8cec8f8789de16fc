"""The widgets of the main screen: the conversation as it streams, and the context panel.

Both are redrawn from the daemon's session payload (through :mod:`appliance.tui.render`) and hold
no state of their own beyond what keeps a redraw cheap: a poll that brings nothing new leaves the
operator's scroll position alone. Streamed tokens arrive as :class:`AnswerProgress`, a replaceable
message, so a flood of tokens collapses into the latest text. Nothing from the payload reaches a
widget as a string (which Textual would read as markup): only as ``Text`` from :func:`as_text`.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from appliance.tui.client import JSON
from appliance.tui.render import (
    as_text,
    gauge_text,
    last_record,
    ledger_rows,
    manifest_notes,
    records_by_turn,
    summary_head,
    turn_text,
)


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
    """The transcript, rebuilt from the daemon's payload, plus the exchange being streamed.

    ``plain`` is the customer's view (the kiosk's): "You" and "Assistant", no stages or guard findings;
    ``sources`` shows there a short "Source:" line under an answer drawn from the documents (the
    operator's view always names the sources).
    """

    def __init__(self, *, plain: bool, sources: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plain = plain
        self.sources = sources
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
            role = "customer" if turn["role"] == "customer" else "agent" if record or self.plain else "operator"
            text = turn_text(turn, record, plain=self.plain, sources=self.sources)
            views.append(TurnView(text, classes=f"turn -{role}"))
        self.mount_all(views)
        self.scroll_end(animate=False)

    def begin(self, customer_text: str) -> None:
        """Show the customer's message and an empty answer while it streams."""
        label = "You" if self.plain else "Customer · sending"
        self.mount(
            TurnView(
                Text.assemble(Text(label, style="bold cyan"), "\n", as_text(customer_text)), classes="turn -customer"
            )
        )
        self.pending = TurnView(Text("…", style="dim"), classes="turn -agent -pending")
        self.mount(self.pending)
        self.scroll_end(animate=False)

    def progress(self, text: str) -> None:
        if self.pending is not None:
            label = "Assistant" if self.plain else "Agent · streaming"
            self.pending.update(Text.assemble(Text(label, style="bold green"), "\n", as_text(text)))
            self.scroll_end(animate=False)

    def interrupted(self, why: str) -> None:
        """The stream broke: say so, and say that nothing of it was stored."""
        if self.pending is not None:
            self.pending.update(as_text(f"(answer interrupted: {why}; nothing was stored)", style="bold red"))
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
        table: DataTable[Text] = DataTable(id="ledger", show_cursor=False, zebra_stripes=True)
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
        self.query_one("#summary-head", Static).update(as_text(head))
        self.query_one("#summary-seen", Static).update(as_text(seen))
        self.query_one("#summary-text", Static).update(as_text(summary["text"]) if summary else "")
        record = last_record(payload)
        manifest = record["manifest"] if record else None
        where = f"Last prompt (answer at turn {record['index']})" if record else "Last prompt"
        self.query_one("#prompt-head", Static).update(as_text(where))
        self.manifest = manifest
        self._draw_gauge()
        self.query_one("#notes", Static).update(as_text("\n".join(manifest_notes(manifest))))
        rows = ledger_rows(payload)
        self.query_one("#ledger-head", Static).update(as_text(f"Ledger · {len(rows)} facts"))
        table: DataTable[Text] = self.query_one("#ledger", DataTable)
        table.clear()
        for row in rows:
            table.add_row(*(as_text(cell) for cell in row))  # a DataTable reads a str cell as markup
