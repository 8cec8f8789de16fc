"""``appliance audit verify``: walk the audit trail's files and name the first broken link."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from appliance.audit.verify import Verdict, verify, walk
from appliance.cli.base import Context, Failure, edge, pass_ctx

EXIT_BROKEN = 1  # the trail was read and a link is broken (2: it could not be read)


@click.group("audit")
def audit_group() -> None:
    """The audit trail: one hash-chained record per answer and per operator action."""


@audit_group.command("verify")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--database", "database", is_flag=True, help="Check the database's copy of the trail instead.")
@pass_ctx
@edge
def audit_verify(obj: Context, path: Path | None, database: bool) -> None:
    """Check the trail (PATH, default audit.path, and its rotated files, oldest first): each record's
    hash, its link to the one before and its number. Exit 1 naming the first broken link's file and
    line, or 0 with the count and the head's hash."""
    if database:
        verdict = _database(obj)
        where = str(obj.settings.database)
    else:
        path = path or obj.settings.audit_path
        try:
            verdict = verify(path)
        except OSError as exc:
            raise Failure(f"cannot read the audit trail {path}: {exc}") from None
        if not verdict.files:
            raise Failure(f"no audit trail at {path}")
        where = f"{len(verdict.files)} file(s) at {path}"
    if not verdict.ok:
        click.echo(f"broken: {verdict.broken} ({verdict.records} records before it verified)", err=True)
        sys.exit(EXIT_BROKEN)
    click.echo(f"ok: {verdict.records} records in {where}, last seq {verdict.last_seq}, head {verdict.head}")


def _database(obj: Context) -> Verdict:
    from appliance.store import Store

    with Store.open(obj.settings.database) as store:
        return walk((f"database seq {seq}", line) for seq, line in store.audit_after(0, limit=-1))
