"""``appliance knowledge ...``: the operator's documents, on the database, without a running daemon.

``add`` and ``sync`` read, chunk and embed with recall's encoder and size the chunks with the
responder's tokenizer (a vocab-only load: no weights); a running daemon sees the change at its next
question. Documents are text from outside: everything shown of them passes :mod:`appliance.terminal`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from appliance.cli.base import Context, edge, pass_ctx
from appliance.terminal import one_line, visible

if TYPE_CHECKING:
    from appliance.knowledge import Knowledge, Report


@click.group("knowledge")
def knowledge_group() -> None:
    """The knowledge base: add, sync, list, remove and search the operator's documents."""


@contextmanager
def _opened(obj: Context, *, models: bool = True) -> Iterator[Knowledge]:
    from appliance.app import open_knowledge
    from appliance.knowledge import Knowledge
    from appliance.store import Store

    settings = obj.settings
    with Store.open(settings.database) as store:
        if models:
            yield open_knowledge(settings, store)
        else:  # listing and removing need neither the encoder nor the tokenizer
            yield Knowledge(store, _NoModel(), _NoModel(), settings.knowledge)


class _NoModel:
    model_name = ""

    def embed(self, texts: Any) -> Any:
        raise AssertionError("this command embeds nothing")

    def count(self, messages: Any) -> int:
        raise AssertionError("this command counts nothing")

    def count_text(self, text: str) -> int:
        raise AssertionError("this command counts nothing")


def _show(report: Report, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.as_dict()))
    else:
        parts = [f"{len(report.added)} added", f"{len(report.replaced)} replaced", f"{len(report.removed)} removed"]
        parts.append(f"{len(report.unchanged)} unchanged")
        click.echo(f"{', '.join(parts)}; {report.chunks} chunks in {report.seconds:.1f} s")
    for _, error in report.failed:
        click.echo(f"not taken in: {visible(error)}", err=True)
    if report.failed:
        sys.exit(1)


@knowledge_group.command("add")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def add(obj: Context, paths: tuple[Path, ...], as_json: bool) -> None:
    """Add or replace documents (files, or every document of folders). Exit 1 if one could not be used."""
    with _opened(obj) as knowledge:
        _show(knowledge.add(paths, progress=lambda text: click.echo(text, err=True)), as_json)


@knowledge_group.command("sync")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@pass_ctx
@edge
def sync(obj: Context, folder: Path, as_json: bool) -> None:
    """Make the documents from FOLDER equal to its files: add new ones, replace changed ones, remove deleted ones."""
    with _opened(obj) as knowledge:
        _show(knowledge.sync(folder, progress=lambda text: click.echo(text, err=True)), as_json)


@knowledge_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the documents as one JSON object.")
@pass_ctx
@edge
def list_documents(obj: Context, as_json: bool) -> None:
    """Every document: name, format, chunks, size and title."""
    with _opened(obj, models=False) as knowledge:
        documents = knowledge.documents()
    if as_json:
        click.echo(json.dumps({"documents": documents}))
        return
    for d in documents:
        click.echo(
            f"{one_line(d['name'])}  {d['format']:<8} {d['chunks']:>5} chunks {d['bytes'] / 1e3:>9.1f} kB  "
            f"{one_line(d['title'])}"
        )
    click.echo(f"({len(documents)} documents)", err=True)


@knowledge_group.command("remove")
@click.argument("doc")
@pass_ctx
@edge
def remove(obj: Context, doc: str) -> None:
    """Remove a document (its name as listed, or its path) and all its chunks."""
    with _opened(obj, models=False) as knowledge:
        removed = knowledge.remove(doc)
    click.echo(f"removed {removed} document{'s' if removed != 1 else ''}")


@knowledge_group.command("search")
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print the passages as one JSON object.")
@pass_ctx
@edge
def search(obj: Context, query: str, as_json: bool) -> None:
    """Print the passages for QUERY with their scores, and what the fetch check would decide."""
    from appliance.types import to_dict

    with _opened(obj) as knowledge:
        found = knowledge.search(query)
    if as_json:
        body = {"decision": to_dict(found.decision), "passages": [to_dict(p) for p in found.passages]}
        click.echo(json.dumps(body))
        return
    d = found.decision
    click.echo(
        f"fetch check: {'fetch' if d.fetch else 'no fetch'} ({d.reason}, score {d.score:.2f} of {d.threshold:.2f})"
    )
    for i, p in enumerate(found.passages, start=1):
        click.echo(f"\n[{i}] {p.score:.3f}  {one_line(p.doc)} ({one_line(p.location)})")
        click.echo(visible(p.text))
    if not found.passages:
        click.echo("no passage reaches knowledge.min_score")
