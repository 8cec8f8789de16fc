"""`appliance bench guards`: how well the entity check and the stage guess work on real dialogues.

Without a model (the default) it measures, on every dialogue:

- checker accuracy: each agent turn that quotes a fact stated earlier (an entity whose matching key
  is among the ledger's entries of the earlier turns, so a customer's bare answer to a request,
  "Sarah Brown" after "Could I get your name?", counts) is checked against the conversation before
  it. The real turn must not have a quoted fact flagged; a copy with one quoted fact changed must
  be flagged: a code, number, date or amount by one character or digit (to a value that is still a
  fact of its kind and was never said), a name by another name (a different surname, or given name
  when it is one word). The counts are also given by the quoted fact's kind (``by_kind``). New facts of a real turn
  (a fresh booking reference from the booking system) are not scored: the checker cannot see that
  system, and in the appliance an agent model that states one is inventing it. They are counted as
  ``real_new_facts`` so the share is visible.
- stage agreement with position labels (seed 002: first 20% of turns early, last 10% late), scored
  on customer turns, where the stage is decided;
- the time of one check, per answer, p50/p95 in milliseconds, in this same run;
- answers that ask for a secret (``secret_requests``, :mod:`appliance.lab.bench.asking`): on a table of
  real-looking answers in en, de, fr, es and nl, those that ask caught, those that only mention one
  left untouched.

With ``--generate`` the configured responder answers every customer turn with the real history
before it (teacher-forced, raw context) and the guard runs as configured; the report gives the share
of answers with unsupported facts before and after the guard, and what the guard costs per turn.

The scoring functions are pure and take no model; only :func:`generate_report` needs one.
"""

from __future__ import annotations

import functools
import json
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.facts.checker import REQUEST, check, clear_caches, redact, strict_instruction
from appliance.facts.entities import extract, family, index_keys, lookup_keys
from appliance.facts.ledger import entries
from appliance.lab.bench import asking
from appliance.lab.stats import spread
from appliance.stage import LATE_CUES, OPEN_CUES, cue_table, detect, prompt_texts
from appliance.types import CheckResult, Entity, LedgerEntry, Session, Snapshot, Stage, Turn, current_facts

Progress = Callable[[str], None]


def load_conversations(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """Dialogues in the format of ``shared/data/dev_conversations.jsonl``."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(json.loads(line))
            if limit is not None and len(out) >= limit:
                break
    return out


def to_turns(conversation: dict[str, Any]) -> tuple[Turn, ...]:
    cid = str(conversation.get("id", ""))
    return tuple(Turn(cid, i, t["role"], t["text"]) for i, t in enumerate(conversation["turns"]))


@dataclass(frozen=True)
class Context:
    """What the checker sees when turn ``i`` is the answer: the history, and the question it answers."""

    history: tuple[Turn, ...]
    question: str


def context_before(turns: Sequence[Turn], i: int) -> Context:
    prior = tuple(turns[:i])
    if prior and prior[-1].role == "customer":
        return Context(prior[:-1], prior[-1].text)
    return Context(prior, "")


def check_in_context(answer: str, ctx: Context, ledger: Sequence[LedgerEntry] | None = None) -> CheckResult:
    """The check as the appliance runs it for this turn (no summary: the whole transcript is there)."""
    if ledger is None:
        ledger = entries(ctx.history)
    return check(answer, ledger=ledger, summary="", transcript=ctx.history, question=ctx.question)


def said_keys(turns: Sequence[Turn]) -> set[str]:
    """The matching keys of every fact the ledger holds of ``turns`` (slot answers included; secrets,
    recorded without their value, are no fact to quote)."""
    return {k for e in entries(turns) if e.kind != "secret" for k in index_keys(e.kind, e.norm)}


def quoted(entity: Entity, keys: set[str]) -> bool:
    return any(k in keys for k in lookup_keys(entity.kind, entity.norm))


# Names an altered answer calls the customer instead: surnames and given names of several traditions.
OTHER_NAMES = ("Lindqvist", "Okafor", "Novak", "Haddad", "Moreau", "Tanaka")


def alter(text: str, entity: Entity, forbidden: set[str]) -> tuple[str, Entity] | None:
    """``text`` with ``entity`` changed so that it is still a fact of the same family, with a value
    not among ``forbidden`` keys. A name gets another last word (:data:`OTHER_NAMES`); anything else
    one character, tried from the last backwards (digits to a neighbouring digit, letters to a
    neighbouring letter). ``None`` if no such change exists (a weekday cannot become another weekday
    by one letter)."""
    if entity.kind == "name":
        return _other_name(text, entity, forbidden)
    for pos in range(entity.end - 1, entity.start - 1, -1):
        for ch in _replacements(text[pos]):
            changed = text[:pos] + ch + text[pos + 1 :]
            for e in extract(changed):
                if (
                    e.start <= pos < e.end
                    and family(e.kind) == family(entity.kind)
                    and e.norm != entity.norm
                    and not quoted(e, forbidden)
                ):
                    return changed, e
    return None


def _other_name(text: str, entity: Entity, forbidden: set[str]) -> tuple[str, Entity] | None:
    words = entity.text.split()
    for other in OTHER_NAMES:
        if other.casefold() in entity.norm.split():
            continue
        name = " ".join([*words[:-1], other])
        changed = text[: entity.start] + name + text[entity.end :]
        end = entity.start + len(name)
        for e in extract(changed):
            if e.kind == "name" and e.start <= entity.start < e.end and e.end >= end and not quoted(e, forbidden):
                return changed, e
        # the extractor may not see a name where the turn's wording needed the ledger to (a bare reply)
        new = Entity("name", name, entity.start, end, " ".join(w.casefold() for w in name.split()))
        if not quoted(new, forbidden):
            return changed, new
    return None


def _replacements(c: str) -> tuple[str, ...]:
    if c.isdigit() and c.isascii():
        d = int(c)
        return (str((d + 1) % 10), str((d + 9) % 10))
    if c.isascii() and c.isalpha():
        base = ord("a") if c.islower() else ord("A")
        k = ord(c) - base
        return (chr(base + (k + 1) % 26), chr(base + (k + 25) % 26))
    return ()


def overlaps(findings: Iterable[Any], spans: Iterable[tuple[int, int]]) -> bool:
    """Whether any finding covers part of any of ``spans``."""
    spans = list(spans)
    return any(f.entity.start < e and s < f.entity.end for f in findings for s, e in spans)


@dataclass
class KindScore:
    quoted: int = 0
    real_flagged: int = 0
    altered: int = 0
    altered_flagged: int = 0


@dataclass
class CheckerScore:
    real: int = 0
    real_flagged: int = 0
    real_new_facts: int = 0
    quoted_facts: int = 0
    quoted_in_other_form: int = 0
    altered: int = 0
    altered_flagged: int = 0
    altered_contradictions: int = 0
    unalterable: int = 0
    check_ms: list[float] = field(default_factory=list)
    cold_check_ms: list[float] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)
    by_kind: dict[str, KindScore] = field(default_factory=dict)

    def kind(self, kind: str) -> KindScore:
        return self.by_kind.setdefault(kind, KindScore())


def score_checker(
    conversations: Sequence[Sequence[Turn]], *, timer: Callable[[], float] = time.perf_counter, cold: bool = False
) -> CheckerScore:
    """Score every quoting agent turn and its altered copies. ``check_ms`` times each check as the
    appliance runs it: the answer is new text, the earlier turns were extracted when they were
    stored. With ``cold``, ``cold_check_ms`` also times the real turn's check with nothing cached
    (the ledger read from the store after a restart)."""
    score = CheckerScore()
    for turns in conversations:
        for i, turn in enumerate(turns):
            if turn.role != "agent":
                continue
            ledger_before = [e for e in entries(turns[:i]) if e.kind != "secret"]
            earlier = {k for e in ledger_before for k in index_keys(e.kind, e.norm)}
            facts = [e for e in extract(turn.text) if quoted(e, earlier) or _names_a_known(e, ledger_before)]
            if not facts:
                continue
            ctx = context_before(turns, i)
            ledger = entries(ctx.history)  # made when those turns were stored, not at check time
            if cold:
                # as after a restart: the ledger comes from the store, no text has been extracted yet
                score.cold_check_ms.append(
                    _best_ms(functools.partial(check_in_context, turn.text, ctx, ledger), timer, clear_caches)
                )
            result = check_in_context(turn.text, ctx, ledger)
            fresh = _answer_uncached(ctx)
            score.check_ms.append(_best_ms(functools.partial(check_in_context, turn.text, ctx, ledger), timer, fresh))
            score.real += 1
            score.quoted_facts += len(facts)
            score.quoted_in_other_form += sum(1 for e in facts if not any(e.text in t.text for t in turns[:i]))
            for e in facts:
                score.kind(e.kind).quoted += 1
                score.kind(e.kind).real_flagged += overlaps(result.findings, [(e.start, e.end)])
            if overlaps(result.findings, [(e.start, e.end) for e in facts]):
                score.real_flagged += 1
                score.false_alarms.append(f"{turn.session_id}#{i}: {turn.text}")
            if any(not overlaps([f], [(e.start, e.end) for e in facts]) for f in result.findings):
                score.real_new_facts += 1
            for fact in facts:
                changed = alter(turn.text, fact, earlier)
                if changed is None:
                    score.unalterable += 1
                    continue
                text, new = changed
                altered = check_in_context(text, ctx, ledger)
                score.check_ms.append(_best_ms(functools.partial(check_in_context, text, ctx, ledger), timer, fresh))
                score.altered += 1
                score.kind(fact.kind).altered += 1
                hits = [f for f in altered.findings if f.entity.start < new.end and new.start < f.entity.end]
                if hits:
                    score.altered_flagged += 1
                    score.kind(fact.kind).altered_flagged += 1
                    score.altered_contradictions += any(f.status == "contradiction" for f in hits)
                else:
                    score.missed.append(f"{turn.session_id}#{i}: {fact.text!r} -> {new.text!r}")
    return score


def _names_a_known(e: Entity, ledger: Sequence[LedgerEntry]) -> bool:
    """A name in an answer that is a ledger name, whole or in part ("Sarah" for "Sarah Brown")."""
    if e.kind != "name":
        return False
    words = set(e.norm.split())
    return any(x.kind == "name" and words <= set(x.norm.split()) for x in ledger)


def _answer_uncached(ctx: Context) -> Callable[[], None]:
    """Before a timed check: the earlier turns extracted (as in the appliance), the answer not."""

    def prepare() -> None:
        # the checker's own indexes of the earlier turns stay warm from the untimed first check
        extract.cache_clear()
        for t in ctx.history:
            extract(t.text)

    return prepare


def _best_ms(run: Callable[[], object], timer: Callable[[], float], before: Callable[[], None] | None = None) -> float:
    """The fastest of three runs, in ms: the cost of the work itself, not of the scheduler of a busy
    machine (the habit of ``timeit``)."""
    best = float("inf")
    for _ in range(3):
        if before is not None:
            before()
        t0 = timer()
        run()
        best = min(best, timer() - t0)
    return best * 1000


def position_label(i: int, n: int) -> Stage:
    """Seed 002's labels: the first 20% of a dialogue's turns are early, the last 10% late."""
    if i < 0.2 * n:
        return "early"
    if i >= 0.9 * n:
        return "late"
    return "mid"


@dataclass
class StageScore:
    turns: int = 0
    agreed: int = 0
    confusion: dict[str, int] = field(default_factory=dict)

    @property
    def agreement(self) -> float:
        return self.agreed / self.turns if self.turns else 0.0


def score_stage(
    conversations: Sequence[Sequence[Turn]], *, early_turns: int, late_cues: Any = LATE_CUES, open_cues: Any = OPEN_CUES
) -> StageScore:
    score = StageScore()
    for turns in conversations:
        n = len(turns)
        for i, turn in enumerate(turns):
            if turn.role != "customer":
                continue
            guess = detect(turns[:i], turn.text, early_turns=early_turns, late_cues=late_cues, open_cues=open_cues)
            label = position_label(i, n)
            score.turns += 1
            score.agreed += guess == label
            key = f"{label}->{guess}"
            score.confusion[key] = score.confusion.get(key, 0) + 1
    return score


def run_bench(
    settings: Settings,
    conversations_file: Path,
    *,
    limit: int | None = None,
    generate: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The whole report, as ``--json`` prints it."""
    say = progress or (lambda _m: None)
    raw = load_conversations(conversations_file, limit)
    conversations = [to_turns(c) for c in raw]
    say(f"checking {len(conversations)} dialogues")
    checker = score_checker(conversations, cold=True)
    late, open_ = cue_table(settings.stage.late_cues, LATE_CUES), cue_table(settings.stage.open_cues, OPEN_CUES)
    stage_score = score_stage(conversations, early_turns=settings.stage.early_turns, late_cues=late, open_cues=open_)
    report: dict[str, Any] = {
        "checker": {
            "altered": checker.altered,
            "altered_flagged": checker.altered_flagged,
            "real": checker.real,
            "real_flagged": checker.real_flagged,
            "altered_contradictions": checker.altered_contradictions,
            "unalterable": checker.unalterable,
            "real_new_facts": checker.real_new_facts,
            "quoted_facts": checker.quoted_facts,
            "quoted_in_other_form": checker.quoted_in_other_form,
            "check_ms": spread(checker.check_ms, 3),
            "check_ms_cold": spread(checker.cold_check_ms, 3),
            "missed": checker.missed[:20],
            "false_alarms": checker.false_alarms[:20],
            "by_kind": {k: vars(v) for k, v in sorted(checker.by_kind.items())},
        },
        "stage": {
            "turns": stage_score.turns,
            "agreement": round(stage_score.agreement, 4),
            "confusion": dict(sorted(stage_score.confusion.items())),
        },
        "secret_requests": asking.report(),
        "generate": None,
    }
    if generate:
        from appliance.app.loading import load_responder

        model = load_responder(settings)
        report["generate"] = generate_report(conversations, model, settings, progress=say)
    return report


def generate_report(
    conversations: Sequence[Sequence[Turn]], model: Any, settings: Settings, *, progress: Progress | None = None
) -> dict[str, Any]:
    """Answers from ``model`` at every customer turn (teacher-forced history, raw context), checked
    and guarded as ``settings.guard`` says. ``model`` follows :class:`appliance.protocols.ChatModel`."""
    from appliance.app import pipeline_settings
    from appliance.context import PromptSpec, RawPolicy

    say = progress or (lambda _m: None)
    ps = pipeline_settings(settings)
    policy = RawPolicy()
    guard = settings.guard
    late, open_ = cue_table(settings.stage.late_cues, LATE_CUES), cue_table(settings.stage.open_cues, OPEN_CUES)
    answers = before = after = regenerated = redacted = 0
    asks_before = asks_after = 0  # answers asking for a secret; the guard then gives the safe answer
    examples: list[dict[str, Any]] = []
    guard_ms: list[float] = []
    generate_s: list[float] = []
    for turns in conversations:
        for i, turn in enumerate(turns):
            if turn.role != "customer":
                continue
            history = tuple(turns[:i])
            ledger = entries(history)
            snap = Snapshot(session=Session(id=turn.session_id, created_at=0.0), turns=history, ledger=ledger)
            stage = detect(history, turn.text, early_turns=settings.stage.early_turns, late_cues=late, open_cues=open_)
            system, instruction = prompt_texts(stage, ps.instructions, ps.system_prompt, ps.instruction)
            spec = PromptSpec(system=system, instruction=instruction, budget=ps.budget_tokens)
            prompt = policy.build(snap, turn.text, spec, model)
            t0 = time.perf_counter()
            gen = model.generate(prompt.messages, ps.sampling)
            generate_s.append(time.perf_counter() - t0)
            text = gen.text
            t0 = time.perf_counter()
            result = check(text, ledger=ledger, summary="", transcript=history, question=turn.text)
            answers += 1
            before += not result.ok
            asks_before += any(f.entity.kind == REQUEST for f in result.findings)
            if not result.ok and len(examples) < 10:
                examples.append(
                    {
                        "turn": f"{turn.session_id}#{i}",
                        "answer": text,
                        "findings": [f"{f.entity.kind} {f.entity.text!r} {f.status}" for f in result.findings],
                    }
                )
            if not result.ok and guard.policy == "regenerate":
                strict = spec.adding(strict_instruction(current_facts(ledger), result.findings))
                retry = model.generate(policy.build(snap, turn.text, strict, model).messages, ps.sampling)
                second = check(retry.text, ledger=ledger, summary="", transcript=history, question=turn.text)
                regenerated += 1
                if len(second.findings) < len(result.findings):
                    text, result = retry.text, second
            elif not result.ok and guard.policy == "redact":
                text = redact(text, result, guard.redact_phrase)
                result = check(text, ledger=ledger, summary="", transcript=history, question=turn.text)
                redacted += 1
            guard_ms.append((time.perf_counter() - t0) * 1000)
            after += not result.ok
            asks_after += any(f.entity.kind == REQUEST for f in result.findings)
            if answers % 20 == 0:
                say(f"{answers} answers generated")

    def share(k: int) -> float:
        return round(k / answers, 4) if answers else 0.0

    return {
        "model": getattr(model, "name", "?"),
        "policy": guard.policy,
        "answers": answers,
        "unsupported_before": share(before),
        "unsupported_after": share(after),
        "regenerated": regenerated,
        "redacted": redacted,
        "asking_for_a_secret": {"first": asks_before, "after_the_retry": asks_after},
        "guard_ms": {**spread(guard_ms, 3), "mean": round(statistics.fmean(guard_ms), 3) if guard_ms else 0.0},
        "generate_s": spread(generate_s, 3),
        "examples": examples,
    }


def format_table(report: dict[str, Any]) -> str:
    c, s, g = report["checker"], report["stage"], report["generate"]
    lines = [
        "checker (no model)",
        f"  real quoting turns flagged   {c['real_flagged']}/{c['real']}"
        f"  ({_pct(c['real_flagged'], c['real'])}; target <= 2%)",
        f"  altered facts flagged        {c['altered_flagged']}/{c['altered']}"
        f"  ({_pct(c['altered_flagged'], c['altered'])}; target 100%; {c['altered_contradictions']} as contradictions)",
        f"  quoted facts                 {c['quoted_facts']} ({c['quoted_in_other_form']} written differently than before)",
        f"  facts no 1-char change keeps {c['unalterable']}",
        f"  quoting turns with new facts {c['real_new_facts']}/{c['real']} (from the booking system; not scored)",
        f"  check time per answer        p50 {c['check_ms']['p50']:.3f} ms  p95 {c['check_ms']['p95']:.3f} ms (target < 2 ms)",
        f"  ... with nothing cached      p50 {c['check_ms_cold']['p50']:.3f} ms  p95 {c['check_ms_cold']['p95']:.3f} ms",
        *(
            f"  {kind:<28} quoted {k['quoted']}, real flagged {k['real_flagged']}, "
            f"altered flagged {k['altered_flagged']}/{k['altered']}"
            for kind, k in c["by_kind"].items()
        ),
        "stage",
        f"  customer turns               {s['turns']}",
        f"  agreement with positions     {s['agreement']:.1%}",
        f"  confusion (label->guess)     {', '.join(f'{k} {v}' for k, v in s['confusion'].items())}",
    ]
    if c["missed"]:
        lines.append("  missed: " + "; ".join(c["missed"][:5]))
    if (a := report.get("secret_requests")) is not None:
        lines += [
            f"answers asking for a secret ({', '.join(a['languages'])})",
            f"  asks caught                  {a['asks_caught']}/{a['asks']}",
            f"  mentions untouched           {a['mentions_untouched']}/{a['mentions']}",
            f"  look per answer              p50 {a['look_ms']['p50']:.3f} ms  p95 {a['look_ms']['p95']:.3f} ms",
            *(f"  missed: {t}" for t in a["missed"][:5]),
            *(f"  false alarm: {t}" for t in a["false_alarms"][:5]),
        ]
    if g:
        lines += [
            f"generate ({g['model']}, guard {g['policy']})",
            f"  answers                      {g['answers']}",
            f"  with unsupported facts       before {g['unsupported_before']:.1%}  after {g['unsupported_after']:.1%}",
            f"  asking for a secret          first {g['asking_for_a_secret']['first']}"
            f"  after the retry {g['asking_for_a_secret']['after_the_retry']} (then the safe answer)",
            f"  guard time per turn          p50 {g['guard_ms']['p50']:.1f} ms  p95 {g['guard_ms']['p95']:.1f} ms"
            f"  mean {g['guard_ms']['mean']:.1f} ms (regenerations included)",
        ]
    return "\n".join(lines)


def _pct(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "n/a"
