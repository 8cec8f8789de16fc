"""``appliance bench knowledge``: the knowledge base on a dialogue set with its documents.

Input: a folder of documents and dialogues in the format of ``shared/data/knowledge_dev/`` (each item:
the turns up to a customer's message, ``needs_knowledge``, and the ``gold`` document and section).
The documents are synced into a fresh database in a temporary folder (``ingest``: seconds and chunks),
then synced again unchanged (``resync_s``); with ``database``, into that file, which is kept, so the
next run re-syncs an unchanged folder in a moment (``ingest.reused``: its documents were already
there). Each item's last message is then looked up as the turn would look it up (its earlier turns,
newest first, as the conversation's recent text; whether it gives details or asks for a fact again, as
the ledger and the read-back cues find them; the customer's language, as the turn detects it among
``summarizer.languages``):

* ``fetch``: precision and recall of the fetch check against ``needs_knowledge``;
* ``retrieval`` (items with a gold section): ``at_1`` and ``at_3``, the gold section among the first one
  or three passages; ``gold_placed``, among the best passages that fit ``knowledge.budget_tokens``
  (their tokens added in rank order, as the context gives them room);
* ``not_found``: ``rate``, the share of the knowledge questions no document answers (``needs_knowledge``
  and an empty ``gold``) that come out as ``not_found`` (fetched, and no passage); ``answerable``, the
  share of items with a gold section that come out so wrongly (the fetch check's decision as taken);
* ``latency_ms``: ``Knowledge.consult``'s time per item (the turn's call: the fetch check, and
  retrieval when it fetches), p50 and p95.

The same figures are given for the odd- and even-numbered items (``halves``): the weights and
thresholds were chosen on the odd ones, so the even ones are held out. With ``answers``, the appliance
answers the knowledge-seeking items too (:mod:`.knowledge_answers`: agreement, not-found, unsupported
entities, TTFT with and without passages).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from appliance.app import open_knowledge
from appliance.config import Settings
from appliance.errors import InputError
from appliance.facts import readback
from appliance.facts.entities import extract
from appliance.knowledge import Knowledge, Query, Retrieval
from appliance.knowledge.retrieve import conversation
from appliance.lab.bench.knowledge_answers import abstention
from appliance.lexicon.text import SENTENCE_BREAK
from appliance.store import Store
from appliance.summarizer import customer_language
from appliance.types import Turn

Progress = Callable[[str], None]
# knowledge.min_answerable's values the refusal curve is given at.
CURVE = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def load_items(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    items = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                items.append(json.loads(line))
            if limit is not None and len(items) >= limit:
                break
    return items


def query_of(item: dict[str, Any], turns: int, languages: Sequence[str] = ()) -> Query:
    """The item's last customer message, with the turns before it (newest first) as its recent text;
    it gives details when the ledger would take a fact from it, and reads back when it asks for one;
    its language is the customer's among ``languages`` (None when unsure, or none given)."""
    said = [t["text"] for t in item["turns"]]
    spoken = [Turn(str(item.get("id", "")), i, t["role"], t["text"]) for i, t in enumerate(item["turns"])]
    recent = tuple(reversed(said[:-1]))[:turns]
    message = said[-1]
    previous, answered = conversation([(t["role"], t["text"]) for t in item["turns"][-3:-1]])
    return Query(
        message=message,
        recent=recent,
        previous=previous,
        answered=answered,
        gives_details=bool(extract(message)),
        reads_back=readback.request(message) is not None,
        language=customer_language(spoken, languages, quick=True),  # as the turn detects it
    )


def placed(retrieval: Retrieval, budget: int) -> list[int]:
    """Positions of the passages that fit ``budget`` tokens, taken in rank order (one that does not
    fit is skipped and a smaller one after it may still go in)."""
    used, out = 0, []
    for i, passage in enumerate(retrieval.passages):
        if used + passage.tokens <= budget:
            used += passage.tokens
            out.append(i)
    return out


def is_gold(passage: Any, gold: Sequence[dict[str, Any]]) -> bool:
    return any(passage.doc == g["doc"] and passage.heading.split(" > ")[-1] == g["section"] for g in gold)


def _plain(text: str) -> str:
    return " ".join(text.lower().split())


def answer_placed(answer: str, texts: Sequence[str]) -> bool:
    """Whether the gold ``answer`` is inside the placed passages' ``texts``, whichever document holds it:
    whole inside one, or (an answer the chunking cut in two) each of its sentences inside one; compared
    without case or runs of white space."""
    whole = _plain(answer)
    if not whole:
        return False
    placed = [_plain(t) for t in texts]
    if any(whole in t for t in placed):
        return True
    sentences = [_plain(s) for s in SENTENCE_BREAK.split(answer) if len(s.split()) >= 3]
    return len(sentences) > 1 and all(any(s in t for t in placed) for s in sentences)


def score(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Fetch precision and recall, retrieval at 1, at 3 and placed, and not-found rates, over ``rows``."""
    fetched = [r for r in rows if r["fetch"]]
    needed = [r for r in rows if r["needs"]]
    hits = [r for r in fetched if r["needs"]]
    golds = [r for r in needed if r["gold"]]
    unanswered = [r for r in needed if not r["gold"]]
    share = lambda n, d: round(n / d, 3) if d else None  # noqa: E731
    return {
        "items": len(rows),
        "fetch": {"precision": share(len(hits), len(fetched)), "recall": share(len(hits), len(needed))},
        "retrieval": {
            "items": len(golds),
            "gold_placed": share(sum(r["placed"] for r in golds), len(golds)),
            "answer_placed": share(sum(r["answer_placed"] for r in golds), len(golds)),
            "at_1": share(sum(r["rank"] == 1 for r in golds), len(golds)),
            "at_3": share(sum(0 < r["rank"] <= 3 for r in golds), len(golds)),
        },
        "not_found": {
            "items": len(unanswered),
            "rate": share(sum(r["not_found"] for r in unanswered), len(unanswered)),
            "answerable": share(sum(r["not_found"] for r in golds), len(golds)),
        },
    }


def evaluate(
    knowledge: Knowledge, items: Sequence[dict[str, Any]], budget: int, turns: int, languages: Sequence[str] = ()
) -> list[dict[str, Any]]:
    rows = []
    for item in items:
        query = query_of(item, turns, languages)
        started = time.perf_counter()
        consulted = knowledge.consult(query)
        elapsed = time.perf_counter() - started
        found = knowledge.search(query)
        decision = found.decision
        gold = item.get("gold", ())
        ranks = [i + 1 for i, p in enumerate(found.passages) if is_gold(p, gold)]
        rows.append(
            {
                "id": item.get("id", ""),
                "needs": bool(item.get("needs_knowledge")),
                "gold": bool(gold),
                "fetch": decision.fetch,
                "reason": decision.reason,
                "score": round(decision.score, 4),
                "best": round(decision.best, 4),
                "subject": list(decision.subject),
                "language": query.language,
                "rank": ranks[0] if ranks else 0,
                "placed": any(is_gold(found.passages[i], gold) for i in placed(found, budget)),
                "answer_placed": any(
                    answer_placed(g["answer"], [found.passages[i].text for i in placed(found, budget)]) for g in gold
                ),
                "not_found": consulted.not_found,
                "consult_ms": round(elapsed * 1000, 2),
            }
        )
    return rows


def latency(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """p50 and p95 of ``consult_ms``."""
    times = sorted(r["consult_ms"] for r in rows)
    if not times:
        return {"p50": None, "p95": None}
    return {"p50": times[len(times) // 2], "p95": times[min(len(times) - 1, int(len(times) * 0.95))]}


@contextlib.contextmanager
def _database(kept: Path | None) -> Iterator[Path]:
    """The database file to sync into: ``kept``, or one in a temporary folder removed afterwards."""
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        yield kept
        return
    with tempfile.TemporaryDirectory(prefix="bench-knowledge-") as tmp:
        yield Path(tmp) / "bench.db"


def run_bench(
    settings: Settings,
    dialogues: Path,
    docs: Path,
    *,
    limit: int | None = None,
    progress: Progress | None = None,
    encoder: Any = None,
    counter: Any = None,
    answers: bool = False,
    probe: bool = False,
    responder: Any = None,
    database: Path | None = None,
) -> dict[str, Any]:
    """The report (see the module's docstring); ``encoder``, ``counter`` and ``responder`` replace the
    configured ones (tests); ``database``: the file the documents are synced into and kept (a
    temporary one otherwise)."""
    say = progress or (lambda _msg: None)
    items = load_items(dialogues, limit)
    with _database(database) as path:
        store = Store.open(path)
        try:
            kb = open_knowledge(settings, store, encoder=encoder, counter=counter)
            say(f"syncing {docs} into {path}")
            first = kb.sync(docs, say)
            started = time.monotonic()
            again = kb.sync(docs)
            resync_s = time.monotonic() - started
            chunks = len(kb.index())
            say(f"{chunks} chunks ({first.chunks} new) in {first.seconds:.1f} s; looking up {len(items)} items")
            rows = evaluate(
                kb, items, settings.passage_tokens, settings.knowledge.subject_turns, settings.summarizer.languages
            )
        finally:
            store.close()
        answered: dict[str, Any] = {}
        if probe and not answers:  # the answers judge their questions too
            from appliance.lab.bench.knowledge_answers import run_probes

            for row, extra in zip(
                rows, run_probes(settings, path, items, responder=responder, encoder=encoder, progress=say), strict=True
            ):
                row.update(extra or {})
        if answers:
            from appliance.lab.bench.knowledge_answers import run_answers

            answered, answer_rows = run_answers(
                settings, path, items, responder=responder, encoder=encoder, progress=say
            )
            for row, extra in zip(rows, answer_rows, strict=True):
                row.update(extra or {})
    whole = score(rows)
    judged = any("answerable" in r for r in rows)
    return {
        "ingest": {
            "seconds": round(first.seconds, 2),
            "chunks": chunks,
            "documents": len(first.added) + len(first.replaced) + len(first.unchanged),
            "reused": bool(first.unchanged),
        },
        "failed": [{"document": n, "error": e} for n, e in first.failed],
        "resync_s": round(resync_s, 3),
        "resync_unchanged": len(again.unchanged),
        "fetch": whole["fetch"],
        "retrieval": whole["retrieval"],
        "not_found": whole["not_found"],
        "latency_ms": latency(rows),
        **({"abstention": abstention(rows, CURVE)} if judged else {}),
        "halves": {"odd": score(rows[1::2]), "even": score(rows[0::2])},
        "budget_tokens": settings.passage_tokens,
        "items": len(rows),
        **answered,
        "rows": rows,
    }


def format_text(report: dict[str, Any]) -> str:
    f, r, n = report["fetch"], report["retrieval"], report["not_found"]
    lines = [
        f"ingest: {report['ingest']['documents']} documents, {report['ingest']['chunks']} chunks in "
        f"{report['ingest']['seconds']:.1f} s{' (a kept database)' if report['ingest']['reused'] else ''}; "
        f"unchanged re-sync {report['resync_s']:.2f} s",
        f"fetch check: precision {f['precision']}, recall {f['recall']} ({report['items']} items)",
        f"retrieval: gold answer placed in {report['budget_tokens']} tokens {r['answer_placed']}, its section "
        f"{r['gold_placed']}, at 1 {r['at_1']}, at 3 {r['at_3']} ({r['items']} items)",
        f"not found: {n['rate']} of {n['items']} questions no document answers; answerable ones called not "
        f"found {n['answerable']}",
        f"consult: p50 {report['latency_ms']['p50']} ms, p95 {report['latency_ms']['p95']} ms",
    ]
    if "abstention" in report:
        a = report["abstention"]
        lines.append(
            f"judged: {a['unanswerable']} of {a['items']['unanswerable']} questions no document answers get the "
            f"not-found answer; {a['refused']} of {a['items']['answerable']} answerable ones do (AUC {a['auc']})"
        )
        lines.append(
            "refusal curve (min_answerable: refused answerable / answered unanswerable): "
            + ", ".join(f"{c['threshold']}: {c['refused_answerable']}/{c['answered_unanswerable']}" for c in a["curve"])
        )
    for name, half in report["halves"].items():
        lines.append(
            f"  {name} items: fetch P {half['fetch']['precision']} R {half['fetch']['recall']}; "
            f"placed {half['retrieval']['gold_placed']}, at 1 {half['retrieval']['at_1']}, at 3 {half['retrieval']['at_3']}"
        )
    from appliance.lab.bench.knowledge_answers import format_answers

    lines += format_answers(report)
    for failed in report["failed"]:
        lines.append(f"  not taken in: {failed['document']}: {failed['error']}")
    return "\n".join(lines)


def named_sets(specs: Sequence[str]) -> list[tuple[Path, Path]]:
    """``DIALOGUES:DOCS`` pairs as paths, each checked to exist (``InputError`` naming the one that does not)."""
    found = []
    for spec in specs:
        dialogues, sep, docs = spec.rpartition(":")
        if not sep or not dialogues or not docs:
            raise InputError(
                f"--set {spec!r}: expected DIALOGUES:DOCS (a dialogue file and its documents' folder)", field="set"
            )
        pair = (Path(dialogues), Path(docs))
        if not pair[0].is_file():
            raise InputError(f"--set {spec!r}: {pair[0]} is not a file", field="set")
        if not pair[1].is_dir():
            raise InputError(f"--set {spec!r}: {pair[1]} is not a folder", field="set")
        found.append(pair)
    return found


def run_sets(
    settings: Settings,
    sets: Sequence[tuple[Path, Path]],
    *,
    database: Path | None = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """:func:`run_bench` on each set, each report named by its set (``set``: the documents' folder and
    the one above it); ``database``: with one set, its database file; with several, a folder holding
    one per documents' folder."""
    reports = []
    for dialogues, docs in sets:
        folder = docs.resolve()
        name = f"{folder.parent.name}-{folder.name}"  # sets of one folder share a database, others do not
        kept = database if database is None or len(sets) == 1 else database / f"{name}.db"
        report = run_bench(settings, dialogues, docs, database=kept, **options)
        reports.append({"set": f"{name} ({dialogues.name})", **report})
    return reports


def format_sets(reports: Sequence[dict[str, Any]]) -> str:
    """One table, a row per set."""

    def cell(value: Any) -> str:
        return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)

    head = [
        "set",
        "items",
        "fetch P/R",
        "answer placed",
        "section placed",
        "at 1/3",
        "no passage (unanswerable/answerable)",
        "abstain (unanswerable)",
        "refused (answerable)",
        "agreement",
        "consult p50 ms",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in reports:
        f, rt = r["fetch"], r["retrieval"]
        a = r.get("abstention", {})
        lines.append(
            "| "
            + " | ".join(
                [
                    r.get("set", ""),
                    str(r["items"]),
                    f"{cell(f['precision'])}/{cell(f['recall'])}",
                    cell(rt["answer_placed"]),
                    cell(rt["gold_placed"]),
                    f"{cell(rt['at_1'])}/{cell(rt['at_3'])}",
                    f"{cell(r['not_found']['rate'])}/{cell(r['not_found']['answerable'])}",
                    cell(a.get("unanswerable")),
                    cell(a.get("refused")),
                    cell(r.get("answers", {}).get("agreement")),
                    cell(r["latency_ms"]["p50"]),
                ]
            )
            + " |"
        )
    for r in reports:
        curve = r.get("abstention", {}).get("curve")
        if curve:
            points = ", ".join(
                f"{c['threshold']}: {cell(c['refused_answerable'])}/{cell(c['answered_unanswerable'])}" for c in curve
            )
            lines.append(
                f"refusal curve, {r.get('set', '')} (min_answerable: refused answerable/answered unanswerable): {points}"
            )
    return "\n".join(lines)
