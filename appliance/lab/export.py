"""``appliance export-training``: stored conversations as fine-tuning examples (seed 002's data pipeline).

One JSON line per agent turn: the four-part prompt the appliance would have built for the customer
message before it, and the real agent reply as the target. The [CONTEXT] is what the appliance knew
*as of that turn*, so the examples teach the model to answer from a summary and a ledger the way it
will have to in production, never from facts that were only summarized later:

* the snapshot is cut at the question (turns before it, ledger entries from those turns);
* its summary is the latest accepted version whose ``covers_to`` is before the question;
* the prompt is built by the configured ``rolling`` policy itself (the same objects as
  :data:`appliance.context.POLICIES`), with the stage, instruction and budget of the pipeline's own
  settings, and tokens counted by the responder's tokenizer, so the format cannot drift from what
  the pipeline sends. Recall is not replayed (it needs the embedding model): recalled turns are empty.

Conversations are kept when their number of turns is within ``[min_turns, max_turns]`` (seed 002
keeps 5-100: shorter ones lack multi-turn context, longer ones are often noise or hand-offs).

Training data leaves the appliance's database, so by default every name, number, identifier and
contact in it is replaced by a placeholder numbered per conversation (``[NAME_1]``, ``[ACCOUNT_2]``):
the examples still teach the model to copy the same value from context into its answer, without
carrying a customer's data. ``--keep-pii`` opts out. The file is written owner-only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from appliance import stage
from appliance.config import Settings
from appliance.context import POLICIES, ContextPolicy, PromptSpec
from appliance.errors import InputError
from appliance.protocols import TokenCounter
from appliance.store import Store
from appliance.turn.settings import PipelineSettings
from appliance.types import Snapshot, SummaryVersion

POLICY = "rolling"
# Entity kinds that identify a person or an account; amounts, dates and times stay as they are.
PII_KINDS = frozenset({"name", "email", "phone", "account", "number", "reference", "postcode"})


class Masker:
    """Replaces identifying entities with placeholders, the same value with the same one (per conversation)."""

    def __init__(self) -> None:
        self.placeholders: dict[tuple[str, str], str] = {}
        self.counts: dict[str, int] = {}

    def __call__(self, text: str) -> str:
        from appliance.facts.entities import extract

        out, pos = [], 0
        for entity in extract(text):
            if entity.kind not in PII_KINDS or entity.start < pos:
                continue
            key = (entity.kind, entity.norm)
            if key not in self.placeholders:
                n = self.counts[entity.kind] = self.counts.get(entity.kind, 0) + 1
                self.placeholders[key] = f"[{entity.kind.upper()}_{n}]"
            out += [text[pos : entity.start], self.placeholders[key]]
            pos = entity.end
        return "".join([*out, text[pos:]])


def masked(example: dict[str, Any], mask: Masker) -> dict[str, Any]:
    """The example with every identifying entity in its texts replaced."""
    return {
        **example,
        "prompt": mask(example["prompt"]),
        "target": mask(example["target"]),
        "messages": [{**m, "content": mask(m["content"])} for m in example["messages"]],
    }


def summary_as_of(summaries: tuple[SummaryVersion, ...], question_index: int) -> SummaryVersion | None:
    """The latest accepted version that covers only turns before the question."""
    usable = [s for s in summaries if s.status == "accepted" and s.covers_to < question_index]
    return max(usable, key=lambda s: s.version) if usable else None


def snapshot_as_of(snap: Snapshot, summaries: tuple[SummaryVersion, ...], question_index: int) -> Snapshot:
    """What the appliance knew when the question at ``question_index`` arrived."""
    return Snapshot(
        session=snap.session,
        turns=tuple(t for t in snap.turns if t.index < question_index),
        summary=summary_as_of(summaries, question_index),
        ledger=tuple(e for e in snap.ledger if e.turn < question_index),
    )


def session_examples(
    snap: Snapshot,
    summaries: tuple[SummaryVersion, ...],
    spec: PipelineSettings,
    counter: TokenCounter,
    policy: ContextPolicy = POLICIES[POLICY],
) -> Iterator[dict[str, Any]]:
    """One example per agent turn that follows a customer message, with the stage, instruction and
    budget the pipeline would use (``spec`` is the pipeline's own settings); turns whose prompt cannot
    fit the budget are skipped (the pipeline would have refused the message too)."""
    turns = snap.turns
    for pos, turn in enumerate(turns):
        if turn.role != "agent" or pos == 0 or turns[pos - 1].role != "customer":
            continue
        question = turns[pos - 1]
        seen = snapshot_as_of(snap, summaries, question.index)
        turn_stage = stage.detect(
            seen.turns, question.text, early_turns=spec.early_turns, late_cues=spec.late_cues, open_cues=spec.open_cues
        )
        system, instruction = stage.prompt_texts(turn_stage, spec.instructions, spec.system_prompt, spec.instruction)
        try:
            prompt = policy.build(seen, question.text, PromptSpec(system, instruction, spec.budget_tokens), counter)
        except InputError:
            continue
        system, user = prompt.messages[0].content, prompt.messages[-1].content
        yield {
            "session_id": snap.session.id,
            "turn": turn.index,
            "stage": turn_stage,
            "summary_version": seen.summary.version if seen.summary is not None else None,
            "prompt": f"{user}\n\n[RESPONSE]\n",
            "target": turn.text,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
                {"role": "assistant", "content": turn.text},
            ],
        }


def export(
    store: Store,
    out: IO[str],
    spec: PipelineSettings,
    counter: TokenCounter,
    *,
    min_turns: int = 5,
    max_turns: int = 100,
    policy: ContextPolicy = POLICIES[POLICY],
    keep_pii: bool = False,
) -> dict[str, int]:
    """Write the examples of every stored conversation within the turn limits; counts for the edge."""
    counts = {"sessions": 0, "skipped_sessions": 0, "examples": 0}
    rows = store.sessions(limit=1 << 30)
    for row in sorted(rows, key=lambda r: (r["created_at"], r["id"])):
        if not min_turns <= row["turns"] <= max_turns:
            counts["skipped_sessions"] += 1
            continue
        counts["sessions"] += 1
        snap = store.snapshot(row["id"])
        mask = Masker()
        for example in session_examples(snap, store.summaries(row["id"]), spec, counter, policy):
            if not keep_pii:
                example = masked(example, mask)
            out.write(json.dumps(example, ensure_ascii=False) + "\n")
            counts["examples"] += 1
    return counts


def run_export(
    settings: Settings, out_file: Path, *, min_turns: int, max_turns: int, keep_pii: bool = False
) -> dict[str, int]:
    """Export from the configured database, counting tokens with the responder's tokenizer (vocab only)."""
    from appliance.app import pipeline_settings, policies
    from appliance.models.files import find, verified_path
    from appliance.models.llama import LlamaChatModel

    if min_turns > max_turns:
        raise InputError(f"--min-turns {min_turns} is more than --max-turns {max_turns}", field="min_turns")
    if not settings.database.exists():
        raise InputError(f"{settings.database}: no database to export from (paths.database)", field="database")
    entry = find(settings.models_dir, settings.responder.model)
    counter = LlamaChatModel(verified_path(settings.models_dir, entry), name=entry.name, vocab_only=True)
    spec = pipeline_settings(settings)
    store = Store.open(settings.database)
    try:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(out_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)  # whatever the umask: the examples hold customers' words
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            return export(
                store,
                fh,
                spec,
                counter,
                min_turns=min_turns,
                max_turns=max_turns,
                policy=policies(settings)[POLICY],
                keep_pii=keep_pii,
            )
    finally:
        store.close()
