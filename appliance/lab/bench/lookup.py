"""`appliance bench lookup`: prompt-lookup decoding (``responder.lookup``) against none, side by side.

Three kinds of answers, each prompt answered greedily (temperature 0) with lookup ``on`` and ``off``
by the same loaded responder, one after the other, the order alternating from prompt to prompt so
that the machine's noise falls on both alike:

* ``grounded``: a question answered from passages: the FAQ sections of a document folder (the
  branch example), each asked by its own heading with the section and the next one as passages,
  alternating with the knowledge set's questions that need a document (its gold section placed,
  after the dialogue's last turns);
* ``readback``: a session's probe question, with the turn that stated the fact placed and named
  before it as a read-back places it, after the session's last turns;
* ``ordinary``: a dialogue's middle customer turn after the turns before it, nothing to copy.

The prompts are laid out as the appliance's four parts, but built here, not by the pipeline (no
knowledge base, ledger or checker), so the bench runs on the model alone. Before each answer the
prompt is evaluated (as the daemon's warm-up leaves it), so both answers evaluate only its last
token and the time to the first token measures the start of decoding, not the prompt. Per kind:
generation tokens/s with and without lookup (tokens after the first over the time after it) and
their ratio, the share of drafted tokens kept, the median time to the first token, and how many
answers' text is the same both ways.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.errors import InputError
from appliance.lab.bench.guards import load_conversations
from appliance.lab.harness import evolve
from appliance.models.llama import LlamaChatModel
from appliance.models.lookup import Lookup
from appliance.types import Message, Sampling

Progress = Callable[[str], None]
KINDS = ("grounded", "readback", "ordinary")
MODES: tuple[Lookup, ...] = ("on", "off")
SYSTEM = "You are the customer-service assistant of this branch. Answer briefly, from the context."
RECENT = 6  # turns placed verbatim before a question
_HEADING = re.compile(r"^#{2,3} +(.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Case:
    kind: str
    messages: tuple[Message, ...]


def prompt(kind: str, context: Sequence[str], question: str, instruction: str) -> Case:
    """A case whose user message holds the four parts, the response left for the model."""
    body = "\n\n".join(part for part in context if part)
    text = f"[CONTEXT]\n{body}\n\n[QUESTION]\n{question}\n\n[INSTRUCTION]\n{instruction}"
    return Case(kind, (Message("system", SYSTEM), Message("user", text)))


def _recent(turns: Sequence[dict[str, Any]]) -> str:
    lines = [f"{'Customer' if t['role'] == 'customer' else 'Agent'}: {t['text']}" for t in turns[-RECENT:]]
    return "Latest turns:\n" + "\n".join(lines) if lines else ""


def sections(text: str) -> list[tuple[str, str]]:
    """A Markdown document's (heading, body) sections at ``##`` and ``###``, those with a body."""
    found = list(_HEADING.finditer(text))
    out = []
    for m, after in zip(found, [*found[1:], None]):
        body = text[m.end() : after.start() if after else len(text)].strip()
        if body:
            out.append((m.group(1).strip(), body))
    return out


def branch_cases(folder: Path) -> Iterator[Case]:
    """Each FAQ section of the folder's Markdown documents asked by its heading, it and the next as passages."""
    for doc in sorted(folder.glob("*.md")):
        found = sections(doc.read_text(encoding="utf-8"))
        for i, (heading, _) in enumerate(found):
            passages = [f"Passage ({doc.stem}): {h}\n{b}" for h, b in found[i : i + 2]]
            yield prompt("grounded", passages, heading, "Answer from the passages, in their words.")


def knowledge_cases(folder: Path) -> Iterator[Case]:
    """The knowledge set's questions that need a document, its gold section placed."""
    for item in load_conversations(folder / "dialogues.jsonl"):
        if not item.get("needs_knowledge") or not item.get("gold"):
            continue
        gold = item["gold"][0]
        passage = f"Passage ({gold['doc'].removesuffix('.md')}): {gold['section']}\n{gold['answer']}"
        turns = item["turns"]
        yield prompt(
            "grounded", [passage, _recent(turns[:-1])], turns[-1]["text"], "Answer from the passages, in their words."
        )


def readback_cases(sessions: Path) -> Iterator[Case]:
    """Each session probe, the turn that stated its fact placed and named before the question."""
    for session in load_conversations(sessions):
        turns = session["turns"]
        for probe in session["probes"]:
            said = turns[probe["first_turn"]]
            facts = f"Facts asked for (from turn {probe['first_turn']}, {said['role']}): {said['text']}"
            yield prompt(
                "readback",
                [_recent(turns[: probe["after_turn"]]), facts],
                probe["question"],
                "Repeat the values asked for exactly as the facts give them.",
            )


def ordinary_cases(conversations: Path) -> Iterator[Case]:
    """Each dialogue's middle customer turn, after the turns before it."""
    for conversation in load_conversations(conversations):
        turns = conversation["turns"]
        asks = [i for i, t in enumerate(turns) if t["role"] == "customer" and i > 0]
        if asks:
            i = asks[len(asks) // 2]
            yield prompt("ordinary", [_recent(turns[:i])], turns[i]["text"], "Answer the customer briefly.")


def _alternate(*sources: Iterator[Case]) -> Iterator[Case]:
    """One case of each source in turn, until all are spent."""
    live = list(sources)
    while live:
        for source in list(live):
            case = next(source, None)
            if case is None:
                live.remove(source)
            else:
                yield case


@dataclass
class Tally:
    """One mode's answers of one kind."""

    answers: int = 0
    tokens: int = 0  # generated after each answer's first token
    seconds: float = 0.0  # from each answer's first token to its end
    checked: int = 0
    kept: int = 0
    ttft: list[float] | None = None

    def add(self, model: LlamaChatModel, case: Case, sampling: Sampling) -> str:
        before = (model.drafts.checked, model.drafts.kept)
        out = model.generate(case.messages, sampling)
        self.answers += 1
        self.tokens += max(0, out.completion_tokens - 1)
        self.seconds += out.total_s - out.ttft_s
        self.checked += model.drafts.checked - before[0]
        self.kept += model.drafts.kept - before[1]
        self.ttft = [*(self.ttft or []), out.ttft_s]
        return out.text

    def rate(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def run_bench(
    settings: Settings,
    *,
    documents: Path,
    knowledge: Path,
    sessions: Path,
    conversations: Path,
    limit: int,
    max_tokens: int,
    draft: int | None,
    progress: Progress,
) -> dict[str, Any]:
    """Every kind's first ``limit`` cases, each answered with lookup on and off (see the module)."""
    from appliance.app.loading import load_model

    local = evolve(settings, responder={"parallel": 1})  # lookup drafts on the single context only
    model = load_model(local, local.responder.model, local.responder)
    if not isinstance(model, LlamaChatModel):
        raise InputError("bench lookup needs a local responder (responder.backend = 'local')", field="responder")
    model.lookup_tokens = draft or local.responder.lookup_tokens
    greedy = Sampling(temperature=0.0, repeat_penalty=local.responder.repeat_penalty, max_tokens=max_tokens)
    cases = {
        "grounded": _alternate(branch_cases(documents), knowledge_cases(knowledge)),
        "readback": readback_cases(sessions),
        "ordinary": ordinary_cases(conversations),
    }
    report: dict[str, Any] = {"model": model.name, "draft_tokens": model.lookup_tokens, "max_tokens": max_tokens}
    try:
        for kind in KINDS:
            tallies: dict[str, Tally] = {mode: Tally() for mode in MODES}
            same = 0
            for k, case in enumerate(c for _, c in zip(range(limit), cases[kind])):
                progress(f"{kind} {k + 1} of {limit}")
                texts = {}
                with model.native() as llama:  # the prompt evaluated once, as a warm-up leaves it: each
                    llama.reset()  # answer evaluates its last token, the one before reuses the rest
                    llama.eval(model.tokens(case.messages))
                for mode in MODES if k % 2 == 0 else MODES[::-1]:
                    model.lookup = mode
                    texts[mode] = tallies[mode].add(model, case, greedy)
                same += texts["on"] == texts["off"]
            report[kind] = summary(tallies, same)
    finally:
        model.lookup = "off"
    return report


def summary(tallies: Mapping[str, Tally], same: int) -> dict[str, Any]:
    on, off = tallies["on"], tallies["off"]
    return {
        "answers": on.answers,
        "tokens": {"on": on.tokens, "off": off.tokens},
        "tok_s": {"on": round(on.rate(), 2), "off": round(off.rate(), 2)},
        "ratio": round(on.rate() / off.rate(), 3) if off.rate() else None,
        "drafted": on.checked,
        "kept_share": round(on.kept / on.checked, 3) if on.checked else None,
        "ttft_s_p50": {m: round(statistics.median(t.ttft), 3) if t.ttft else None for m, t in tallies.items()},
        "identical": same,
    }


def format_table(report: dict[str, Any]) -> str:
    lines = [
        f"{report['model']}, up to {report['draft_tokens']} drafted tokens, {report['max_tokens']} tokens an answer, greedy",
        "kind       answers  tok/s on  tok/s off  ratio  drafted  kept  ttft p50 on/off (s)  identical",
    ]
    for kind in KINDS:
        r = report.get(kind)
        if not r or not r["answers"]:
            continue
        kept = "-" if r["kept_share"] is None else f"{r['kept_share']:.0%}"
        lines.append(
            f"{kind:<11}{r['answers']:>7}{r['tok_s']['on']:>10}{r['tok_s']['off']:>11}{r['ratio']!s:>7}"
            f"{r['drafted']:>9}{kept:>6}   {r['ttft_s_p50']['on']}/{r['ttft_s_p50']['off']}"
            f"{r['identical']:>12}/{r['answers']}"
        )
    return "\n".join(lines)


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report)
