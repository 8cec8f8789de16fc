"""Everything that differs between the operator console and the customer kiosk, in one place.

The same app serves both. Instead of asking "am I a kiosk?" wherever it draws or acts, it asks
its :class:`Mode`, chosen once at start: which panels it composes, which actions are off, which
key leaves, when the screen is handed to the next customer, and how it speaks (an operator reads
the daemon's own words; a customer reads short, calm sentences and learns nothing about the
machinery, not even the operator key).

The hand-over: a customer ends a conversation with the "New conversation" button or its key; the
screen also clears by itself a short while after a goodbye (an answer the daemon marks ``late``)
and after a longer while without a key. Either way the next message starts a new session, so the
next customer never sees the previous one's words. The operator key does not leave tty1 blank: it
exits with :data:`KIOSK_RESTART_STATUS`, which the kiosk's systemd unit restarts on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text

from appliance.config import TuiSettings
from appliance.tui.render import Status, status_line

# Every action of the operator console, and every quitting key: none of them work in the kiosk.
OPERATOR_ACTIONS = frozenset(
    {
        "new_session",
        "find_session",
        "edit_summary",
        "restore_summary",
        "toggle_pause",
        "take_over",
        "hand_back",
        "floor",
        "toggle_context",
        "refresh",
        "quit",
        "help_quit",
    }
)
# The operator key's exit status: EX_TEMPFAIL, "try again". The kiosk unit restarts on it
# (RestartForceExitStatus=75) and counts it as no failure (SuccessExitStatus=75): a fresh kiosk,
# with nothing of the last customer in its memory, instead of a blank tty1.
KIOSK_RESTART_STATUS = 75
NEW_CONVERSATION_KEY = "f2"
NEW_CONVERSATION_LABEL = "New conversation (F2)"
TALK_TO_PERSON_LABEL = "Talk to a person"
KIOSK_AWAY = "Sorry, the assistant is restarting. Please wait a moment; what you typed is kept."
KIOSK_PLACEHOLDER = "Type your question and press Enter"


@dataclass(frozen=True)
class Mode:
    """How the app composes, which keys it answers to, and how it speaks."""

    session_title: str  # the title of the sessions it creates
    panels: bool  # the context panel and the footer of keys
    welcome: str | None  # a greeting above the conversation
    plain_conversation: bool  # "You" and "Assistant" only: no stages, guard findings or operators
    show_sources: bool  # under an answer from the documents, its sources (the kiosk: a short "Source:" line)
    screen_classes: tuple[str, ...]  # set on the screen, for app.tcss
    blocked_actions: frozenset[str]
    operator_key: str | None  # the key that leaves the kiosk
    new_conversation_key: str | None  # the customer's key (and button) that clears the screen
    idle_reset_s: float | None  # clear the screen after this long without a key
    goodbye_reset_s: float | None  # and this long after a goodbye (a ``late`` answer) without a key
    placeholder: str
    takeover_placeholder: str
    away_banner: str | None  # the banner while the daemon is away; None: the daemon's reason
    apology: str | None  # the notification of a failed request; None: the daemon's error
    help_rows: tuple[tuple[str, str], ...]  # (keys, what they do) at the top of the help
    help_lists_bindings: bool  # then every described binding of the app and its dialogs
    status: Callable[[Status], Text]


def operator_mode() -> Mode:
    """The console: every panel and action, the daemon's own words for what went wrong."""
    return Mode(
        session_title="",
        panels=True,
        welcome=None,
        plain_conversation=False,
        show_sources=True,
        screen_classes=(),
        blocked_actions=frozenset({"leave_kiosk", "new_conversation"}),  # Ctrl+N starts a new session
        operator_key=None,
        new_conversation_key=None,
        idle_reset_s=None,
        goodbye_reset_s=None,
        placeholder="Customer message (Enter sends)",
        takeover_placeholder="TAKE OVER: type the agent's reply (recorded, not generated)",
        away_banner=None,
        apology=None,
        help_rows=(("Enter", "Send (taking over: record the agent reply)"),),
        help_lists_bindings=True,
        status=status_line,
    )


def kiosk_mode(settings: TuiSettings) -> Mode:
    """The kiosk: the conversation alone, locked keys but the operator's, a fresh screen when idle."""
    return Mode(
        session_title="kiosk",
        panels=False,
        welcome=settings.kiosk_welcome,
        plain_conversation=True,
        show_sources=settings.show_sources,
        screen_classes=("-kiosk", "-large") if settings.large_text else ("-kiosk",),
        blocked_actions=OPERATOR_ACTIONS,
        operator_key=settings.operator_key,
        new_conversation_key=NEW_CONVERSATION_KEY,
        idle_reset_s=settings.kiosk_idle_reset_s,
        goodbye_reset_s=settings.kiosk_goodbye_reset_s,
        placeholder=KIOSK_PLACEHOLDER,
        takeover_placeholder=KIOSK_PLACEHOLDER,  # taking over is an operator action: off here
        away_banner=KIOSK_AWAY,
        apology="Sorry, that did not work. Please try again in a moment.",
        # The operator key is not listed: customers must not learn it.
        help_rows=(("Enter", "Send your message"), ("F2", "Start a new conversation"), ("F1", "This help")),
        help_lists_bindings=False,
        status=kiosk_status,
    )


WAITING = "A member of staff will be with you shortly."
WITH_STAFF = "A member of staff is with you."


def kiosk_status(status: Status) -> Text:
    """The customer's status bar: ready or not, or that a person is coming or here; nothing about the machinery."""
    if status.connected and status.floor == "needs_person":
        return Text(status.notice or WAITING, style="bold")
    if status.connected and status.floor == "with_person":
        return Text(WITH_STAFF, style="bold")
    return Text("Ready" if status.connected else "Please wait…")


def mode_for(settings: TuiSettings, *, kiosk: bool) -> Mode:
    return kiosk_mode(settings) if kiosk else operator_mode()
