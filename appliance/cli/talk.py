"""`appliance chat`: a conversation in the terminal, without a daemon."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

import click

from appliance.cli.base import Context, edge, pass_ctx
from appliance.errors import InputError
from appliance.terminal import one_line, visible
from appliance.types import TurnResult

if TYPE_CHECKING:
    from appliance.app import Appliance


@click.command()
@click.option("--session", "session_id", metavar="ID", help="Resume this session instead of starting a new one.")
@click.option("--policy", metavar="NAME", help="Context policy for a new session (default: context.policy).")
@click.option(
    "--verbose", "-v", is_flag=True, help="After each answer, print prompt tokens, speed and latency to stderr."
)
@pass_ctx
@edge
def chat(obj: Context, session_id: str | None, policy: str | None, verbose: bool) -> None:
    """Talk to the appliance in the terminal.

    When standard input is not a terminal, each line is one customer message and each answer is
    printed on one line; the command exits 0 at the end of input.
    """
    from appliance.app import build

    with build(obj.settings) as appliance:
        _chat(appliance, session_id, policy, verbose)


def _chat(appliance: Appliance, session_id: str | None, policy: str | None, verbose: bool) -> None:
    """The chat loop over a built appliance (closed by the caller: a summary in progress is cancelled)."""
    pipeline = appliance.pipeline
    if session_id:
        session = appliance.store.session(session_id)
    else:
        session = appliance.sessions.new_session(policy=policy)
    interactive = sys.stdin.isatty()
    click.echo(f"session {session.id} ({'resumed' if session_id else 'new'}, policy {session.policy})", err=True)
    if interactive:
        click.echo("Type a message and press Enter; Ctrl-D to leave.", err=True)
    while True:
        try:
            line = input("you> ") if interactive else sys.stdin.readline()
        except EOFError:
            break
        if not interactive and line == "":
            break  # end of input
        text = line.rstrip("\r\n")
        if interactive:
            shown = _Streamer(prefix="agent> ", out=sys.stdout)
        else:
            # Line mode prints the stored answer once it is final (the guard may replace it).
            shown = _Streamer(
                prefix="", out=None, started=(lambda: click.echo("[answering]", err=True)) if verbose else None
            )
        try:
            result = pipeline.answer(session.id, text, on_token=shown.write)
        except InputError as exc:
            click.echo(f"error: {one_line(str(exc))}", err=True)
            continue
        if interactive:
            shown.finish()
            _show_guard(result)
        else:  # one answer per line, whatever it holds: no line breaks, no terminal controls
            click.echo(one_line(result.agent.text))
        if verbose:
            click.echo(_describe_turn(result), err=True)
    if interactive:
        click.echo("", err=True)


class _Streamer:
    """Shows an answer as it streams (interactive mode), and notices when it starts.

    The model's text reaches the terminal through :func:`~appliance.terminal.visible`: an escape
    sequence, a lone CR or a bidi override is shown, not obeyed. A CR ending a piece is held back
    until the next one says whether it is half of a CRLF.
    """

    def __init__(self, *, prefix: str, out: TextIO | None, started: Callable[[], None] | None = None) -> None:
        self.prefix = prefix
        self.out = out
        self.started = started
        self.seen = False
        self.held = ""

    def write(self, piece: str) -> None:
        piece, self.held = self.held + piece, ""
        if piece.endswith("\r"):
            piece, self.held = piece[:-1], "\r"
        piece = visible(piece)
        if not self.seen:
            piece = piece.lstrip()
            if not piece:
                return
            self.seen = True
            if self.started is not None:
                self.started()
            if self.out is not None:
                self.out.write(self.prefix)
        if self.out is not None:
            self.out.write(piece)
            self.out.flush()

    def finish(self) -> None:
        self.held = ""  # a CR at the very end moves nothing: dropped
        if self.out is not None:
            self.out.write("\n")
            self.out.flush()


def _show_guard(result: TurnResult) -> None:
    """Tell the person at the terminal what the entity check did to the answer they just saw."""
    check = result.record.check
    if check.original:
        click.echo(f"(corrected by the guard, {check.action}) agent> {visible(result.agent.text)}")
    for f in check.findings:
        hint = f" (the conversation says {one_line(f.expected)})" if f.expected else ""
        click.echo(f"  ! {f.status}: {one_line(f.entity.text)}{hint}", err=True)


def _describe_turn(result: TurnResult) -> str:
    r = result.record
    t = r.timings
    decode_s = max(t.generate_s - t.ttft_s, 1e-9)
    rate = (r.completion_tokens - 1) / decode_s if r.completion_tokens > 1 else 0.0
    cut = f" · cut {len(r.manifest.cut_turns)} turns" if r.manifest.cut_turns else ""
    return (
        f"[turn {result.agent.index} · {r.stage} · prompt {r.prompt_tokens} tok{cut} · "
        f"{r.completion_tokens} tok in {t.generate_s:.2f} s ({rate:.1f} tok/s) · "
        f"first token {t.ttft_s:.2f} s · total {t.total_s:.2f} s]"
    )
