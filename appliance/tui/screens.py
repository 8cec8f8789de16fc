"""The modal dialogs: the help (in both modes), and the operator's summary editor, version restore
and session search.

Each returns its answer through ``dismiss`` and leaves the daemon calls that change anything to the
app (the session search only reads). The help lists keys generated from the bindings themselves,
so it cannot go stale. Summary texts, reasons and session titles are shown as ``Text`` through
:func:`~appliance.tui.render.as_text`: an option or a cell given a string would read it as markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from appliance.terminal import visible
from appliance.tui.client import JSON, DaemonClient, DaemonError, DaemonUnreachable
from appliance.tui.render import as_text


class HelpScreen(ModalScreen[None]):
    """Every key binding, generated from the bindings themselves so it cannot go stale."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,q", "dismiss", "Close help")]

    def __init__(self, rows: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box", classes="dialog"):
            yield Static("Keys", classes="dialog-title")
            table: DataTable[Text] = DataTable(id="help-table", show_cursor=False)
            table.add_columns("key", "what it does")
            for key, what in self.rows:
                table.add_row(as_text(key), as_text(what))
            yield table
            yield Static("Esc closes this help.", classes="note")


class EditSummaryScreen(ModalScreen[str | None]):
    """Edit the summary; saving stores it as a new operator version (history is kept).

    The editor starts from the text with its terminal controls made visible (a TextArea draws
    them raw): saving an edit of a hostile summary stores those stand-ins, not the controls.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save as new version"),
        Binding("escape", "cancel", "Cancel edit"),
    ]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = visible(text)

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
                    as_text(
                        f"v{v['version']} · {v['author']} · {v['status']}"
                        + (f" ({v['reason']})" if v.get("reason") else "")
                        + f" · {v['text'][:60]!r}"
                    ),
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
                as_text(
                    f"{s['id']} · {s.get('turns', 0)} turns · {s.get('policy', '')} · {s.get('title') or '(untitled)'}"
                ),
                id=str(s["id"]),
            )
            for s in sessions
        )

    @on(OptionList.OptionSelected, "#found")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


DIALOGS: dict[type[ModalScreen[Any]], str] = {
    EditSummaryScreen: "summary editor",
    RestoreScreen: "restore list",
    SessionsScreen: "session search",
    HelpScreen: "help",
}


def binding_rows(bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    """(keys, what they do) for the app's described bindings, then for every dialog's."""
    rows = [(key_names(b), b.description) for b in _described(bindings)]
    for screen, where in DIALOGS.items():
        rows += [(key_names(b), f"{b.description} (in {where})") for b in _described(screen.BINDINGS)]
    return rows


def _described(bindings: Iterable[BindingType]) -> list[Binding]:
    return [b for b in bindings if isinstance(b, Binding) and b.description]


def key_names(binding: Binding) -> str:
    """``"f2,ctrl+f"`` → ``"F2 / Ctrl+F"``."""
    names = []
    for key in binding.key.split(","):
        parts = key.strip().split("+")
        names.append("+".join("Esc" if p == "escape" else p.upper() if len(p) <= 3 else p.title() for p in parts))
    return " / ".join(names)
