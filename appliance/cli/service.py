"""The daemon's commands: `serve` (the daemon itself), `start`, and `tui` on it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from appliance.cli.base import Context, Failure, edge, pass_ctx

# tui ----------------------------------------------------------------------------------------------


@click.command()
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


@click.command()
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
                raise Failure("the daemon exited during start-up:\n" + "\n".join(tail))
            if time.monotonic() > deadline:
                raise Failure(f"the daemon was not ready after {wait_s:.0f} s; see {log}")
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
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


# serve --------------------------------------------------------------------------------------------


@click.command()
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
