"""Command line: the edge that turns typed errors into messages on stderr and exit code 2.

The group and its options are here; the commands live beside it by concern: :mod:`.talk` (chat),
:mod:`.service` (the daemon: serve, start, status, stop, tui), :mod:`.records` (models, config,
sessions), :mod:`.knowledge` (the operator's documents), :mod:`.keys` (signed bundles), :mod:`.audit` (the audit trail). :mod:`.base` holds what they share, which the lab's commands import too.
"""

from __future__ import annotations

import importlib

import click

from appliance.cli import audit, keys, knowledge, records, service, talk
from appliance.cli.base import Context, Failure, edge, pass_ctx

__all__ = ["Context", "Failure", "cli", "edge", "main", "pass_ctx"]


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


for command in (
    talk.chat,
    service.serve,
    service.start,
    service.status,
    service.stop,
    service.tui,
    records.models,
    records.config_group,
    records.sessions_group,
    knowledge.knowledge_group,
    keys.keys_group,
    audit.audit_group,
):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="appliance")
