"""The daemon's commands: `serve` (the daemon itself), `start`, `status` and `stop`, and `tui` on it.

`start` launches a daemon unless one answers, and records it (:mod:`.running`), so that `stop` can
stop that one and no other process, and so that the console, when it closes, can say that the daemon
runs on. A daemon that systemd runs is systemd's to stop.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import click

from appliance.cli import running
from appliance.cli.base import Context, Failure, edge, pass_ctx
from appliance.config import Settings, load_settings
from appliance.serve import provenance
from appliance.terminal import one_line

EXIT_NOT_RUNNING = 3  # as `systemctl status` says "not running"
EXIT_NOT_STOPPED = 1

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


# start, status, stop -----------------------------------------------------------------------------


KNOWLEDGE_OPTION = click.option(
    "--knowledge",
    "folders",
    multiple=True,
    metavar="FOLDER",
    type=click.Path(exists=True, file_okay=False, resolve_path=True, path_type=Path),
    help="A folder of documents to answer from, synced into the knowledge base beside `knowledge.paths` (repeatable).",
)


def _with_folders(obj: Context, folders: tuple[Path, ...]) -> None:
    """``folders`` added to the configured ``knowledge.paths`` for this command (and the daemon it starts)."""
    if folders:
        configured = load_settings(obj.config, overrides=obj.overrides, options=obj.options).knowledge.paths
        obj.options["knowledge.paths"] = [str(p) for p in dict.fromkeys((*configured, *folders))]


@click.command()
@click.option("--kiosk", is_flag=True, help="Open the customer-facing kiosk instead of the operator console.")
@click.option("--no-console", is_flag=True, help="Only start the daemon; return once it answers.")
@click.option(
    "--wait",
    "wait_s",
    type=float,
    default=600.0,
    show_default=True,
    help="Seconds to wait for a freshly started daemon to load and verify its models.",
)
@KNOWLEDGE_OPTION
@pass_ctx
@edge
def start(obj: Context, kiosk: bool, no_console: bool, wait_s: float, folders: tuple[Path, ...]) -> None:
    """Start the daemon unless one already answers, then open the terminal UI on it.

    The daemon started here runs on in the background when the console closes (its log and pid file
    are beside the database): `appliance stop` stops it. Under systemd, use scripts/install-service.
    With --knowledge, the daemon syncs those folders at start; a daemon that already answers gets them
    synced into its database now, and sees them at its next question.
    """
    from appliance.tui.app import daemon_url, run_tui
    from appliance.tui.client import tls_for

    _with_folders(obj, folders)
    settings = obj.settings
    url = daemon_url(settings)
    if running.ask(url, tls=tls_for(settings, url)).status is None:
        _launch(obj, settings, url, wait_s, folders)
    else:
        if no_console:
            click.echo(f"a daemon already answers at {url}", err=True)
        _sync_beside(settings, folders)
    code = 0 if no_console else run_tui(settings, kiosk=kiosk)
    launch = _launched(settings)
    if launch is not None:
        click.echo(
            f"The daemon (pid {launch.pid}) is {'still ' if not no_console else ''}running in the background; "
            f"stop it with: {shlex.join(_self(obj, 'stop'))}",
            err=True,
        )
    sys.exit(code)


def _sync_beside(settings: Settings, folders: tuple[Path, ...]) -> None:
    """Sync ``folders`` into the database of a daemon that already runs (it reloads its index when it changes)."""
    if not folders:
        return
    from appliance.app import open_knowledge
    from appliance.store import Store

    with Store.open(settings.database) as store:
        knowledge = open_knowledge(settings, store)
        for folder in folders:
            report = knowledge.sync(folder)
            click.echo(f"{folder}: {report.chunks} chunks, {len(report.failed)} not taken in", err=True)


def _launch(obj: Context, settings: Settings, url: str, wait_s: float, folders: tuple[Path, ...] = ()) -> None:
    """Start `appliance serve` in the background, record it, and wait until it answers at ``url``."""
    folder = settings.database.parent
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / running.LOG_NAME
    with log.open("ab") as out:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "appliance", *obj.command("serve", *(f"--knowledge={f}" for f in folders))],
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    running.record(folder / running.PIDFILE_NAME, daemon.pid, log)
    click.echo(f"starting the daemon (pid {daemon.pid}, log {log}); loading and verifying models...", err=True)
    deadline = time.monotonic() + wait_s
    from appliance.tui.client import tls_for

    tls = tls_for(settings, url)
    while running.ask(url, tls=tls).status is None:
        if daemon.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            raise Failure("the daemon exited during start-up:\n" + "\n".join(tail))
        if time.monotonic() > deadline:
            raise Failure(f"the daemon was not ready after {wait_s:.0f} s; see {log}")
        time.sleep(0.5)


def _launched(settings: Settings) -> running.Launch | None:
    """The daemon `appliance start` launched, if it still runs (a stale pid file is removed)."""
    pidfile = settings.database.parent / running.PIDFILE_NAME
    launch = running.recorded(pidfile)
    if launch is None or running.alive(launch):
        return launch
    pidfile.unlink(missing_ok=True)
    return None


def _self(obj: Context, *args: str) -> list[str]:
    """How to run this program again with the same config: the console script if that is what ran."""
    program = Path(sys.argv[0])
    head = [os.path.abspath(program)] if program.name == "appliance" else [sys.executable, "-m", "appliance"]
    return [*head, *obj.command(*args)]


@click.command()
@click.option("--url", metavar="URL", help="Where to look (default: tui.url, else http://127.0.0.1:<server.port>).")
@pass_ctx
@edge
def status(obj: Context, url: str | None) -> None:
    """Whether a daemon runs: where it answers, its pid, who started it, its uptime and memory, where
    each of its models runs (cpu, or a GPU and how many layers), and the signed manifest of the bundle
    its code was installed from (or this install's, while it loads).

    Exit status: 0 when a daemon runs (answering, or still loading after `appliance start`), 3 when
    none does (as `systemctl status`), 2 for an error such as an invalid configuration.
    """
    from appliance.tui.app import daemon_url
    from appliance.tui.client import tls_for

    where = daemon_url(obj.settings, url)
    answer = running.ask(where, tls=tls_for(obj.settings, where))
    launch = _launched(obj.settings)
    if answer.status is None and launch is None:
        click.echo(f"not running: nothing answers at {where}")
        sys.exit(EXIT_NOT_RUNNING)
    pid = launch.pid if launch is not None else answer.pid
    if answer.status is None:
        click.echo(f"starting: the daemon does not answer at {where} yet (loading its models?)")
    else:
        click.echo(f"running: a daemon answers at {where} ({_readiness(answer.status)})")
    devices = [(one_line(role), one_line(device)) for role, device in answer.devices]  # as the daemon said
    for name, value in [*_describe(pid, launch), *devices]:
        click.echo(f"  {name:<11}{value}")
    click.echo(f"  {'bundle':<11}{answer.bundle or provenance.describe()}")


def _readiness(status: int) -> str:
    return {200: "ready", 503: "not ready"}.get(status, f"HTTP {status} to /readyz")


def _describe(pid: int | None, launch: running.Launch | None) -> list[tuple[str, str]]:
    """The status lines about the process: pid, who started it, uptime, memory."""
    if pid is None:
        return [("pid", "unknown (another user's process?)"), ("started by", "unknown")]
    proc = running.process(pid)
    if launch is not None:
        by = f"appliance start (log {launch.log})"
    else:
        by = f"systemd ({proc.unit})" if proc.unit else "unknown"
    rows = [("pid", str(pid)), ("started by", by)]
    if proc.uptime_s is not None:
        rows.append(("uptime", _duration(proc.uptime_s)))
    if proc.rss_bytes is not None:
        size = f"{proc.rss_bytes / 1e9:.1f} GB" if proc.rss_bytes >= 1e9 else f"{proc.rss_bytes / 1e6:.0f} MB"
        rows.append(("memory", f"{size} resident"))
    return rows


def _duration(seconds: float) -> str:
    minutes, hours = int(seconds // 60) % 60, int(seconds // 3600)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {int(seconds) % 60:02d} s"


@click.command()
@click.option(
    "--wait", "wait_s", type=float, default=60.0, show_default=True, help="Seconds to wait for the daemon to exit."
)
@pass_ctx
@edge
def stop(obj: Context, wait_s: float) -> None:
    """Stop the daemon that `appliance start` launched: SIGTERM, then wait until it has exited.

    A daemon that systemd runs is left alone (stop it with `systemctl stop`), as is one started any
    other way. Exit status: 0 when it stopped or none was running, 1 when a daemon runs that this
    command does not stop or it did not exit within --wait, 2 for an error such as an invalid configuration.
    """
    from appliance.tui.app import daemon_url
    from appliance.tui.client import tls_for

    settings = obj.settings
    pidfile = settings.database.parent / running.PIDFILE_NAME
    launch = running.recorded(pidfile)
    if launch is not None and running.alive(launch):
        click.echo(f"stopping the daemon (pid {launch.pid})...", err=True)
        if not running.terminate(launch, wait_s):
            click.echo(f"the daemon (pid {launch.pid}) did not exit within {wait_s:g} s; see {launch.log}", err=True)
            sys.exit(EXIT_NOT_STOPPED)
        pidfile.unlink(missing_ok=True)
        click.echo("stopped", err=True)
        return
    if launch is not None:
        pidfile.unlink(missing_ok=True)
        click.echo(
            f"{pidfile} named pid {launch.pid}, which has exited (or is now another process's): nothing signalled",
            err=True,
        )
    where = daemon_url(settings)
    answer = running.ask(where, tls=tls_for(settings, where))
    if answer.status is None:
        click.echo(f"no daemon is running (nothing answers at {where})", err=True)
        return
    unit = running.process(answer.pid).unit if answer.pid is not None else None
    if unit is not None:
        click.echo(f"the daemon runs under systemd: stop it with `systemctl stop {unit}`", err=True)
    else:
        pid = f" (pid {answer.pid})" if answer.pid is not None else ""
        click.echo(f"a daemon{pid} answers at {where}, but `appliance start` did not launch it: not stopped", err=True)
    sys.exit(EXIT_NOT_STOPPED)


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
@KNOWLEDGE_OPTION
@pass_ctx
@edge
def serve(obj: Context, host: str | None, port: int | None, socket_path: str | None, folders: tuple[Path, ...]) -> None:
    """Run the daemon: load and verify the models, sync the knowledge folders, then serve the HTTP API until SIGTERM."""
    from appliance.serve.daemon import serve as run_daemon

    given = {"server.host": host, "server.port": port, "server.socket": socket_path}
    obj.options.update({key: value for key, value in given.items() if value is not None})
    _with_folders(obj, folders)
    run_daemon(obj.settings)
