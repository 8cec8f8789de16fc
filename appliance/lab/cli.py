"""The lab's commands: ``appliance bench ...``, ``appliance eval`` and ``appliance export-training``.

They live here, not in :mod:`appliance.cli`, so that the product never imports the lab: the main
command group loads this module only when one of these commands is asked for. Each command imports
its heavy modules (models, matplotlib) when it runs. The lab may import the product's CLI helpers
(settings from ``--config``/``--set``, the error edge); never the reverse.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from appliance.cli import Context, edge, pass_ctx
from appliance.config import ROOT
from appliance.lab.bench.events import events_command

__all__ = ["bench", "eval_command", "export_training"]


# bench -------------------------------------------------------------------------------------------


@click.group()
def bench() -> None:
    """Benchmarks that print ratios measured side by side in one run."""


bench.add_command(events_command)


@bench.command("perf")
@click.option(
    "--sessions",
    "sessions_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=str(ROOT.parent / "shared" / "data" / "dev_sessions.jsonl"),
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
    from appliance.lab.bench.perf import dumps, format_text, run_perf
    from appliance.lab.progress import say

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


def _dialogues(command: Callable[..., None]) -> Callable[..., None]:
    """The dialogues file and how many of them: the options of the benches that replay dialogues."""
    command = click.option("--limit", type=click.IntRange(1), help="Only the first N dialogues.")(command)
    return click.option(
        "--conversations",
        "conversations_file",
        required=True,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Dialogues, one JSON object a line (as shared/data/dev_conversations.jsonl).",
    )(command)


@bench.command("guards")
@_dialogues
@click.option(
    "--generate", is_flag=True, help="Also answer every customer turn with the configured responder and guard it."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_guards_cmd(obj: Context, conversations_file: Path, limit: int | None, generate: bool, as_json: bool) -> None:
    """Entity-check accuracy on real and one-character-altered quoted facts, stage agreement, check time."""
    import json

    from appliance.lab.bench.guards import format_table, run_bench
    from appliance.lab.progress import say

    report = run_bench(obj.settings, conversations_file, limit=limit, generate=generate, progress=say)
    click.echo(json.dumps(report) if as_json else format_table(report))


def _data_dir(help: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The folder of the development data (as shared/data): an option of the benches that read it."""
    return click.option(
        "--data",
        "data_dir",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=str(ROOT.parent / "shared" / "data"),
        show_default=True,
        help=help,
    )


@bench.command("stream")
@_dialogues
@click.option(
    "--generate",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Also answer N dialogues' second customer turns with the configured responder in both modes, side by side.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_stream_cmd(obj: Context, conversations_file: Path, limit: int | None, generate: int, as_json: bool) -> None:
    """What a client reads against what is stored, checked and raw stream, native and OpenAI clients."""
    import json

    from appliance.lab.bench.stream import format_table, run_bench
    from appliance.lab.progress import say

    report = run_bench(obj.settings, conversations_file, limit=limit, generate=generate, progress=say)
    click.echo(json.dumps(report) if as_json else format_table(report))


@bench.command("lookup")
@_data_dir("Folder of dev_sessions.jsonl, dev_conversations.jsonl and knowledge_dev/ (as shared/data).")
@click.option(
    "--documents",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=str(ROOT / "examples" / "branch"),
    show_default=True,
    help="Markdown FAQ documents whose sections are asked by their headings.",
)
@click.option("--limit", type=click.IntRange(1), default=6, show_default=True, help="Answers of each kind.")
@click.option("--max-tokens", type=click.IntRange(1, 8192), default=64, show_default=True, help="Longest answer.")
@click.option("--draft", type=click.IntRange(1, 64), help="Tokens drafted a decode (default: responder.lookup_tokens).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_lookup_cmd(
    obj: Context, data_dir: Path, documents: Path, limit: int, max_tokens: int, draft: int | None, as_json: bool
) -> None:
    """Prompt-lookup decoding on and off, side by side: grounded answers, read-backs and ordinary answers."""
    from appliance.lab.bench.lookup import dumps, format_table, run_bench
    from appliance.lab.progress import say

    report = run_bench(
        obj.settings,
        documents=documents,
        knowledge=data_dir / "knowledge_dev",
        sessions=data_dir / "dev_sessions.jsonl",
        conversations=data_dir / "dev_conversations.jsonl",
        limit=limit,
        max_tokens=max_tokens,
        draft=draft,
        progress=say,
    )
    click.echo(dumps(report) if as_json else format_table(report))


@bench.command("facts")
@_data_dir("Folder of the dev dialogues and probes (as shared/data).")
@click.option(
    "--table",
    "table_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A table of cases in the written table's format (default: the one beside the bench).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@edge
def bench_facts_cmd(data_dir: Path, table_file: Path | None, as_json: bool) -> None:
    """The fact ledger alone: facts held and false facts per kind, on the written table and the dev probes."""
    import json

    from appliance.lab.bench.facts import TABLE, format_table, run_bench

    report = run_bench(data_dir, table_file or TABLE)
    click.echo(json.dumps(report, ensure_ascii=False) if as_json else format_table(report))


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
@click.option(
    "--misses",
    is_flag=True,
    help="List each missed probe: session, kind, expected value, the turn that said it, what the ledger holds.",
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
    misses: bool,
    as_json: bool,
) -> None:
    """Replay sessions and count the probed early facts each policy keeps in the context it would send."""
    import json

    from appliance.lab.bench.context import format_table, run_bench
    from appliance.lab.progress import say

    report = run_bench(
        obj.settings,
        sessions_file,
        policy_names=policy_names,
        limit=limit,
        budget=budget,
        summarizer=not no_summarizer,
        misses=misses,
        progress=say,
    )
    click.echo(json.dumps(report) if as_json else format_table(report))


@bench.command("knowledge")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="DIALOGUES:DOCS",
    help="A dialogue file (one JSON object a line, as shared/data/knowledge_dev/dialogues.jsonl) and the "
    "folder of documents it asks about; repeat for several sets, one row each.",
)
@click.option(
    "--dialogues",
    "dialogues_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="One set's dialogue items (with --docs): the same as --set DIALOGUES:DOCS.",
)
@click.option(
    "--docs",
    "docs_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The folder of documents --dialogues asks about.",
)
@click.option("--limit", type=click.IntRange(1), help="Only the first N items of each set.")
@click.option("--rows", is_flag=True, help="With --json: each item's decision, scores and gold rank too.")
@click.option(
    "--database",
    type=click.Path(path_type=Path),
    help="Sync the documents into this database file (a folder holding one per set, with several sets) and "
    "keep it, so the next run re-uses the ingest.",
)
@click.option(
    "--answers/--no-answers",
    default=True,
    show_default=True,
    help="Answer the knowledge-seeking items with the configured responder (agreement, not-found, TTFT).",
)
@click.option(
    "--probe",
    is_flag=True,
    help="With --no-answers: judge each knowledge question as the turn does (is it answered by its placed "
    "passages?) with the configured responder, without answering it: abstention and the refusal curve.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_knowledge_cmd(
    obj: Context,
    sets: tuple[str, ...],
    dialogues_file: Path | None,
    docs_dir: Path | None,
    limit: int | None,
    rows: bool,
    database: Path | None,
    answers: bool,
    probe: bool,
    as_json: bool,
) -> None:
    """Knowledge base on one or several dialogue sets: ingest time and chunks, fetch-check precision and
    recall, the gold answer and section placed and at ranks 1 and 3, abstention on questions no document
    answers; and the answers: agreement with the gold answers, not-found, unsupported entities, TTFT."""
    import json

    from appliance.lab.bench.knowledge import format_sets, format_text, named_sets, run_sets
    from appliance.lab.progress import say

    if (dialogues_file is None) != (docs_dir is None):
        raise click.UsageError("--dialogues and --docs go together (or use --set DIALOGUES:DOCS)")
    chosen = named_sets(sets) + ([(dialogues_file, docs_dir)] if dialogues_file and docs_dir else [])
    if not chosen:
        raise click.UsageError("no set to measure: give --set DIALOGUES:DOCS (repeatable) or --dialogues and --docs")
    reports = run_sets(obj.settings, chosen, limit=limit, progress=say, answers=answers, probe=probe, database=database)
    if not rows:
        for report in reports:
            report.pop("rows")
    if as_json:
        click.echo(json.dumps(reports[0] if len(reports) == 1 else {"sets": reports}))
    else:
        click.echo(format_text(reports[0]) if len(reports) == 1 else format_sets(reports))


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

    from appliance.lab.bench.load import run_load

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


@bench.command("batch")
@click.option("--threads", type=click.IntRange(1, 512), default=2, show_default=True, help="llama.cpp threads.")
@click.option("--steps", type=click.IntRange(2, 4096), default=24, show_default=True, help="Decode steps timed.")
@click.option("--prompt-tokens", type=click.IntRange(8, 8192), default=256, show_default=True, help="Prompt evaluated.")
@click.option("--chunk", type=click.IntRange(1, 512), default=64, show_default=True, help="Prompt tokens per step.")
@click.option("--rounds", type=click.IntRange(1, 20), default=2, show_default=True, help="Interleaved repeats.")
@click.option(
    "--engine-seqs",
    type=click.IntRange(0, 8),
    default=4,
    show_default=True,
    help="Answers at once through the batched engine (0: skip that measurement).",
)
@click.option(
    "--answer-prompt",
    type=click.IntRange(1, 4096),
    default=105,
    show_default=True,
    help="Prompt tokens each answer evaluates (the default models' turns under bench load).",
)
@click.option(
    "--answer-tokens",
    type=click.IntRange(1, 4096),
    default=14,
    show_default=True,
    help="Tokens each answer generates, on average.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_batch_cmd(
    obj: Context,
    threads: int,
    steps: int,
    prompt_tokens: int,
    chunk: int,
    rounds: int,
    engine_seqs: int,
    answer_prompt: int,
    answer_tokens: int,
    as_json: bool,
) -> None:
    """Decode throughput with 1-8 sequences in one batch, prompt evaluation beside decoding, the engine against bare."""
    from appliance.lab.bench.batch import dumps, format_text, run_batch
    from appliance.lab.progress import say

    report = run_batch(
        obj.settings,
        threads=threads,
        steps=steps,
        prompt_tokens=prompt_tokens,
        chunk=chunk,
        rounds=rounds,
        engine_seqs=engine_seqs,
        answer_prompt=answer_prompt,
        answer_tokens=answer_tokens,
        progress=say,
    )
    click.echo(dumps(report) if as_json else format_text(report))


@bench.command("footprint")
@click.option(
    "--message", default=None, help="The customer message answered and embedded (default: one that points back)."
)
@click.option("--runs", type=click.IntRange(1, 10_000), default=100, show_default=True, help="Timed embeddings.")
@click.option(
    "--timeout",
    "timeout_s",
    type=float,
    default=600.0,
    show_default=True,
    help="Seconds allowed to READY and the turn.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_footprint_cmd(obj: Context, message: str | None, runs: int, timeout_s: float, as_json: bool) -> None:
    """Runtime install size, daemon memory after READY and after a turn, start to READY, shared libraries, embedding time."""
    from appliance.lab.bench.footprint import MESSAGE, dumps, format_text, run_footprint
    from appliance.lab.progress import say

    report = run_footprint(
        obj.settings,
        config=obj.config,
        overrides=obj.overrides,
        message=message or MESSAGE,
        runs=runs,
        timeout_s=timeout_s,
        progress=say,
    )
    click.echo(dumps(report) if as_json else format_text(report))


@bench.command("slow-clients")
@click.option("--count", type=click.IntRange(1, 10_000), default=1000, show_default=True, help="Slow connections.")
@click.option(
    "--body-share",
    type=click.FloatRange(0, 1),
    default=0.2,
    show_default=True,
    help="Share of them that send whole headers, then a body a byte a second.",
)
@click.option(
    "--interval", "interval_s", type=float, default=2.0, show_default=True, help="Seconds between header lines."
)
@click.option(
    "--per-client",
    type=click.IntRange(1, 100_000),
    default=None,
    help="Set server.max_connections_per_client (default: as configured), e.g. above --count to admit them all.",
)
@click.option("--tls", is_flag=True, help="Serve https with a throw-away certificate; some never begin a handshake.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def bench_slow_clients_cmd(
    obj: Context, count: int, body_share: float, interval_s: float, per_client: int | None, tls: bool, as_json: bool
) -> None:
    """Many slow connections from one client against a real daemon: is a second client still served?"""
    from appliance.lab.bench.slow_clients import dumps, format_text, run_slow_clients
    from appliance.lab.progress import say

    report = run_slow_clients(
        obj.settings,
        config=obj.config,
        overrides=obj.overrides,
        count=count,
        body_share=body_share,
        interval_s=interval_s,
        per_client=per_client,
        tls=tls,
        progress=say,
    )
    click.echo(dumps(report) if as_json else format_text(report))


# eval and export-training --------------------------------------------------------------------------


@click.command("eval")
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
def eval_command(
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
    from appliance.lab.eval import EvalOptions, format_summary, run_eval

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


@click.command("export-training")
@click.option(
    "--out", "out_file", required=True, type=click.Path(dir_okay=False, path_type=Path), help="JSONL file to write."
)
@click.option(
    "--min-turns", type=click.IntRange(1), default=5, show_default=True, help="Skip conversations with fewer turns."
)
@click.option(
    "--max-turns", type=click.IntRange(1), default=100, show_default=True, help="Skip conversations with more turns."
)
@click.option(
    "--keep-pii", is_flag=True, help="Keep names, numbers and contacts as stored (default: numbered placeholders)."
)
@pass_ctx
@edge
def export_training(obj: Context, out_file: Path, min_turns: int, max_turns: int, keep_pii: bool) -> None:
    """One four-part-prompt example per stored agent turn, with context as of that turn (for fine-tuning).

    Names, numbers, identifiers and contacts are replaced by numbered placeholders unless --keep-pii.
    """
    from appliance.lab.export import run_export

    counts = run_export(obj.settings, out_file, min_turns=min_turns, max_turns=max_turns, keep_pii=keep_pii)
    click.echo(
        f"{counts['examples']} examples from {counts['sessions']} conversations "
        f"({counts['skipped_sessions']} outside {min_turns}-{max_turns} turns) -> {out_file}",
        err=True,
    )
