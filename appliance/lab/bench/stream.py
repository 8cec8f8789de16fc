"""`appliance bench stream`: does a client read only what the guard kept?

Each case is an answer the guard must act on, or one it must pass, sent through the daemon's API as
a client sees it (the app in-process over httpx's ASGI transport; the real pipeline, checker, guard
and store) under ``guard.stream = "checked"`` and ``"raw"``, on the native stream and on the OpenAI
endpoint's chunks. The answers are replayed: :class:`ReplayResponder` streams a given text in pieces
cut as a BPE tokenizer cuts them (a word with its space, a digit, a mark), so the cases are the same
for both modes and need no model:

* ``altered``: every agent turn of the dialogues that quotes an earlier fact, with one such fact
  changed (:func:`appliance.lab.bench.guards.alter`: a code, number, date or amount by one character,
  a name by another name), answering the customer turn before it with the real history;
* ``real``: the same turns unchanged, those whose every fact the conversation supports (the guard
  must pass them, and they are read as stored; a turn with a fresh booking reference states a fact
  no check can support, and is left out);
* ``asks``: the answers of :mod:`appliance.lab.bench.asking` that ask for a secret.

A replayed answer repeats itself when the guard asks again, the worst case for the retry. The report
counts, per mode and client, the answers whose streamed text is not the start of the stored answer
(the target is 0 under ``checked``), those where the client read the case's fault (the altered fact,
a request for a secret), and the answers the guard changed.

With ``--generate N`` the configured responder answers the first N dialogues' second customer turns
(temperature 0) in both modes, alternating which goes first: the time to the first text shown and the
total time, checked against raw, as ratios of the medians, measured side by side in one run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import re
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.facts.asking import find as find_asking
from appliance.facts.entities import extract, index_keys
from appliance.facts.ledger import entries
from appliance.lab.bench import asking
from appliance.lab.bench.guards import alter, check_in_context, context_before, load_conversations, quoted, to_turns
from appliance.lab.harness import evolve
from appliance.protocols import OnToken
from appliance.types import Generation, Message, Sampling, Turn

Progress = Callable[[str], None]
MODES = ("checked", "raw")
CLIENTS = ("native", "openai")
# Pieces as a BPE tokenizer cuts text: a word with its leading space, one digit, one mark, a line break.
_PIECES = re.compile(r" ?[^\W\d_]+| ?\d| ?[^\w\s]|\s+", re.UNICODE)


def pieces(text: str) -> list[str]:
    found = _PIECES.findall(text)
    assert "".join(found) == text, "the pieces must give the text back"
    return found


class ReplayResponder:
    """A responder that streams the text it is given (``script``) in token-like pieces, the same text
    again for a retry; one word a token for counts. Not a model: it replays answers for the bench."""

    name = "replay"
    n_ctx = 8192

    def __init__(self) -> None:
        self.script = ""

    def count(self, messages: Sequence[Message]) -> int:
        return sum(len(m.content.split()) + 4 for m in messages)

    def count_text(self, text: str) -> int:
        return len(text.split())

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        cut = pieces(self.script)
        for piece in cut:
            if on_token is not None:
                on_token(piece)
        return Generation(self.script, self.name, self.count(messages), len(cut), 0.0, 0.0)


@dataclass(frozen=True)
class Case:
    kind: str  # altered, real or asks
    history: tuple[Turn, ...]
    question: str
    answer: str
    fault: str = ""  # the altered fact's text (an ``altered`` case)

    def read_fault(self, read: str) -> bool:
        """Whether a client read this answer's fault: the altered fact, or a request for a secret."""
        if self.kind == "asks":
            return bool(find_asking(read))
        return bool(self.fault) and self.fault in read


def cases(conversations: Sequence[Sequence[Turn]]) -> Iterator[Case]:
    """The altered and real quoting answers of the dialogues, then the answers that ask for a secret."""
    for turns in conversations:
        for i, turn in enumerate(turns):
            if turn.role != "agent" or i == 0 or turns[i - 1].role != "customer":
                continue
            earlier = {k for e in entries(turns[:i]) if e.kind != "secret" for k in index_keys(e.kind, e.norm)}
            facts = [e for e in extract(turn.text) if quoted(e, earlier)]
            if not facts or not check_in_context(turn.text, context_before(turns, i)).ok:
                continue  # a fresh booking reference is a new fact: the guard may not pass it
            history, question = tuple(turns[: i - 1]), turns[i - 1].text
            yield Case("real", history, question, turn.text)
            changed = alter(turn.text, facts[0], earlier)
            if changed is not None:
                yield Case("altered", history, question, changed[0], changed[1].text)
    for _, text in asking.ASKS:
        yield Case("asks", (), "I would like to make a payment.", text)


@dataclass
class Tally:
    answers: int = 0
    differs: int = 0  # streamed text that is not the start of the stored answer
    read_fault: int = 0  # a client read the altered fact or the request for a secret
    changed: int = 0  # stored answers that are not the replayed one
    examples: list[str] = dataclasses.field(default_factory=list)

    def add(self, case: Case, streamed: str, stored: str) -> None:
        self.answers += 1
        self.changed += stored != case.answer
        self.read_fault += case.read_fault(streamed)
        if not stored.startswith(streamed):
            self.differs += 1
            if len(self.examples) < 5:
                self.examples.append(f"{case.kind}: read {streamed!r}, stored {stored!r}")


def replay_report(settings: Settings, conversations: Sequence[Sequence[Turn]], progress: Progress) -> dict[str, Any]:
    """Every case through both streams in both modes: the tallies by mode, client and kind."""
    import httpx

    from appliance.app import build
    from appliance.serve.api import create_app

    replay = ReplayResponder()
    appliance = build(settings, responder=replay, summarizer=replay, recall=False, worker=False, prewarm=False)
    app = create_app(appliance)
    every = list(cases(conversations))
    progress(f"replaying {len(every)} answers x {len(MODES)} modes x {len(CLIENTS)} clients")
    tallies = {f"{m}/{c}/{k}": Tally() for m in MODES for c in CLIENTS for k in ("altered", "real", "asks")}

    async def main() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://appliance", timeout=60) as http:
            for case in every:
                for mode in MODES:
                    appliance.pipeline.settings = dataclasses.replace(appliance.pipeline.settings, stream=mode)
                    for client in CLIENTS:
                        replay.script = case.answer
                        session = _session(appliance, case)
                        streamed = await _ask(http, client, session, case.question)
                        stored = appliance.store.turns(session)[-1].text
                        tallies[f"{mode}/{client}/{case.kind}"].add(case, streamed, stored)

    try:
        asyncio.run(main())
    finally:
        appliance.close()
    return {key: dataclasses.asdict(t) for key, t in tallies.items()}


def _session(appliance: Any, case: Case) -> str:
    session = appliance.sessions.new_session().id
    for turn in case.history:
        appliance.sessions.record_turn(session, turn.role, turn.text)
    return session


async def _ask(http: Any, client: str, session: str, question: str) -> str:
    """What the client read of the answer to ``question`` in ``session``."""
    if client == "native":
        body = {"text": question, "stream": True}
        reply = await http.post(f"/v1/sessions/{session}/messages", json=body)
        reply.raise_for_status()
        return "".join(e["text"] for kind, e in _events(reply.text) if kind == "token")
    body = {"model": "x", "stream": True, "session_id": session, "messages": [{"role": "user", "content": question}]}
    reply = await http.post("/v1/chat/completions", json=body)
    reply.raise_for_status()
    chunks = [e for _, e in _events(reply.text) if isinstance(e, dict) and e.get("choices")]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)


def _events(text: str) -> Iterator[tuple[str, Any]]:
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields and fields["data"] != "[DONE]":
            yield fields.get("event", "message"), json.loads(fields["data"])


def generate_report(
    settings: Settings, conversations: Sequence[Sequence[Turn]], n: int, progress: Progress
) -> dict[str, Any]:
    """The configured responder, checked against raw, side by side: time to first text and total."""
    from appliance.app import build

    appliance = build(settings, worker=False)
    pipe = appliance.pipeline
    greedy = dataclasses.replace(pipe.settings.sampling, temperature=0.0)
    asked = [(t[: i[1]], t[i[1]].text) for t in conversations if len(i := _customers(t)) >= 2][:n]
    times: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
    differs = dict.fromkeys(MODES, 0)
    try:
        for k, (history, question) in enumerate(asked):
            progress(f"answer {k + 1} of {len(asked)}")
            for mode in MODES if k % 2 == 0 else MODES[::-1]:
                pipe.settings = dataclasses.replace(pipe.settings, stream=mode, sampling=greedy)
                session = _session(appliance, Case("", tuple(history), question, ""))
                got: list[tuple[float, str]] = []
                start = time.perf_counter()
                result = pipe.answer(session, question, on_token=functools.partial(_arrived, got, start))
                total = time.perf_counter() - start
                times[mode].append((got[0][0] if got else total, total))
                differs[mode] += not result.agent.text.startswith("".join(s for _, s in got))
    finally:
        appliance.close()

    def median(mode: str, i: int) -> float:
        return statistics.median(t[i] for t in times[mode])

    return {
        "answers": len(asked),
        "differs": differs,
        "first_shown_s_p50": {m: round(median(m, 0), 3) for m in MODES},
        "total_s_p50": {m: round(median(m, 1), 3) for m in MODES},
        "first_shown_ratio": round(median("checked", 0) / median("raw", 0), 3),
        "total_ratio": round(median("checked", 1) / median("raw", 1), 3),
    }


def _arrived(got: list[tuple[float, str]], start: float, text: str) -> None:
    got.append((time.perf_counter() - start, text))


def _customers(turns: Sequence[Turn]) -> list[int]:
    return [i for i, t in enumerate(turns) if t.role == "customer"]


def run_bench(
    settings: Settings, conversations_file: Path, *, limit: int | None, generate: int, progress: Progress
) -> dict[str, Any]:
    conversations = [to_turns(c) for c in load_conversations(conversations_file, limit)]
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as folder:  # the site's own store is not touched
        local = evolve(settings, paths={"database": Path(folder) / "stream.db"}, refine={"enabled": False})
        report: dict[str, Any] = {"replay": replay_report(local, conversations, progress), "generate": None}
        if generate:
            report["generate"] = generate_report(local, conversations, generate, progress)
    return report


def format_table(report: dict[str, Any]) -> str:
    lines = ["mode/client/kind            answers  changed  read != stored  read the fault"]
    for key, t in report["replay"].items():
        lines.append(f"{key:<28}{t['answers']:>7}{t['changed']:>9}{t['differs']:>16}{t['read_fault']:>16}")
    gen = report["generate"]
    if gen:
        lines.append(
            f"responder, {gen['answers']} answers: first text shown p50 checked {gen['first_shown_s_p50']['checked']} s,"
            f" raw {gen['first_shown_s_p50']['raw']} s (x{gen['first_shown_ratio']}); total p50 checked"
            f" {gen['total_s_p50']['checked']} s, raw {gen['total_s_p50']['raw']} s (x{gen['total_ratio']});"
            f" read != stored: {gen['differs']}"
        )
    return "\n".join(lines)
