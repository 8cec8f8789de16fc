"""``appliance bench facts``: the fact ledger alone, with no model, on a written table and the dev probes.

Two measures, both per kind:

- **The table** (``facts_table.jsonl`` beside this module; it ships with the package so the command
  runs wherever the appliance is installed): short exchanges as customers type them, in every
  built-in language, each with the facts the ledger must hold after it. A fact is *held* when an
  entry of its kind has its value (the same characters without case, spaces or punctuation, or a
  form the normaliser equates), with its label or subject where the table gives one, current or
  superseded as the table says. An entry of a kind the table scores (:data:`SCORED`) that the
  case does not list is a *false fact*, whatever else it is: a date read as a phone, a product
  read as a name. Rows with no facts are negatives. A plain ``number`` (a run of digits the ledger
  cannot name: an order number, a meter reading) that a case does not list is counted apart
  (``plain_numbers``), not as a false fact: the ledger keeps it because the checker verifies every
  number an answer quotes against what was said, and it claims no kind that could be wrong. Where a
  case expects a kind for it (a ticket given with its label), filing it as a plain number is still
  a miss of that kind. ``false_with_plain`` counts them as false facts too, for comparison.
  The ``ho-`` and ``h2-`` cases were written blind to the code, in other domains (telecom, shop
  returns, airline, insurance, utilities, city office, gym, helpdesk, pharmacy, parcels; then car
  rental, dentist, registrar, phone shop, library, cinema club, lost property, energy, courier, IT
  desk, travel agency, parking permits), and are kept as they were written; ``--table`` scores
  another file of this format instead.
- **The dev probes** (``shared/data``): at each probe, whether the ledger of the turns before it
  holds the expected value (``held``), and, where the probe's question is a read-back, whether
  the facts the read-back would give include it (``read_back``), each compared as the probe compares
  an answer (:func:`_holds`); a read-back that gives values,
  none of them the expected one, is counted ``read_back_wrong``. Every turn of the dev files is
  also read, and the scored kinds' entries and plain numbers counted (``dev_entries``), so that a change of the
  ledger on real turns shows up as a change of these counts.
- **The checker** on the table's facts (``checker``): each stated in an answer, a current value must
  pass, a superseded one be flagged, and a copy with a code's character or a name's surname changed
  be flagged, per kind.

Runs in seconds: the ledger is regular expressions over text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from appliance.facts import ledger, readback
from appliance.facts.matching import index_keys
from appliance.lab.dialogues import in_ledger, kept, load_dialogues, load_sessions
from appliance.lexicon.text import fold
from appliance.types import LedgerEntry, Role, Turn, current_facts

TABLE = Path(__file__).with_name("facts_table.jsonl")

# The kinds a table case lists completely: any other entry of these kinds is a false fact.
SCORED = frozenset("name username customer_id member_number member_level ticket phone account card".split())
# A run of digits the ledger cannot name: held where a case lists it, counted apart where it does not.
PLAIN = "number"

# The dev sets: (name, conversations or sessions file, probes file or None).
DEV_SETS = (
    ("dev_conversations", "dev_conversations.jsonl", "dev_probes.jsonl"),
    ("dev_sessions", "dev_sessions.jsonl", None),
    ("dev_star_sessions", "dev_star_sessions.jsonl", None),
)


@dataclass(frozen=True)
class Expected:
    """A fact the ledger must hold after a case: its kind and value, and where given its label,
    subject, and whether it is current (False: stored, but superseded by a correction)."""

    kind: str
    value: str
    label: str = ""
    subject: str = ""
    current: bool = True


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    row: str
    turns: tuple[Turn, ...]
    facts: tuple[Expected, ...]


def load_table(path: Path = TABLE) -> list[Case]:
    """The written table: one case a line (``id``, ``lang``, ``row``, ``turns``, ``facts``)."""
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        turns = tuple(Turn(raw["id"], i, t["role"], t["text"]) for i, t in enumerate(raw["turns"]))
        facts = tuple(Expected(**f) for f in raw["facts"])
        cases.append(Case(raw["id"], raw["lang"], raw["row"], turns, facts))
    return cases


@dataclass
class KindTally:
    expected: int = 0
    held: int = 0
    entries: int = 0
    false: int = 0


@dataclass
class TableScore:
    cases: int = 0
    turns: int = 0
    by_kind: dict[str, KindTally] = field(default_factory=dict)
    by_language: dict[str, KindTally] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)
    false_facts: list[str] = field(default_factory=list)
    plain_numbers: list[str] = field(default_factory=list)

    def kind(self, kind: str) -> KindTally:
        return self.by_kind.setdefault(kind, KindTally())

    def language(self, lang: str) -> KindTally:
        return self.by_language.setdefault(lang, KindTally())


def _matches(fact: Expected, e: LedgerEntry) -> bool:
    if e.kind != fact.kind or not in_ledger((fact.value,), (e,)):
        return False
    if fact.label and fold(fact.label) != fold(getattr(e, "label", "")):
        return False
    return not fact.subject or fold(fact.subject) == fold(getattr(e, "subject", ""))


def score_case(case: Case, score: TableScore) -> None:
    """Add one case's held facts, misses and false facts to ``score``."""
    entries = ledger.entries(case.turns)
    current = set(current_facts(entries))
    score.cases += 1
    score.turns += len(case.turns)
    used: set[int] = set()
    for fact in case.facts:
        tally, lang = score.kind(fact.kind), score.language(case.lang)
        tally.expected += 1
        lang.expected += 1
        found = [i for i, e in enumerate(entries) if _matches(fact, e) and (e in current) == fact.current]
        if found:
            tally.held += 1
            lang.held += 1
            used.update(i for i, e in enumerate(entries) if e.kind == fact.kind and in_ledger((fact.value,), (e,)))
        else:
            held = ", ".join(_show(e, e in current) for e in entries) or "nothing"
            score.misses.append(f"{case.id}: {fact.kind} {fact.value!r} not held ({held})")
    for i, e in enumerate(entries):
        if e.kind == PLAIN and i not in used:
            score.plain_numbers.append(f"{case.id}: {_show(e, e in current)}")
        if e.kind not in SCORED:
            continue
        score.kind(e.kind).entries += 1
        score.language(case.lang).entries += 1
        if i not in used:
            score.kind(e.kind).false += 1
            score.language(case.lang).false += 1
            score.false_facts.append(f"{case.id}: {_show(e, e in current)}")


def _show(e: LedgerEntry, current: bool) -> str:
    extra = [x for x in (getattr(e, "label", ""), getattr(e, "subject", "")) if x]
    about = f" ({', '.join(extra)})" if extra else ""
    return f"{e.kind}{about} {e.value!r}{'' if current else ' superseded'}"


def score_table(cases: Iterable[Case]) -> TableScore:
    score = TableScore()
    for case in cases:
        score_case(case, score)
    return score


@dataclass
class ProbeTally:
    probes: int = 0
    held: int = 0
    read_backs: int = 0
    read_back: int = 0
    read_back_wrong: int = 0


def score_probes(conversations: Path | None, sessions: Path | None, probes: Path | None) -> dict[str, ProbeTally]:
    """Per probe kind: whether the ledger of the turns before each probe holds its value, and what a
    read-back of the probe's question would give."""
    out: dict[str, ProbeTally] = {}
    for dialogue in load_dialogues(conversations, sessions, probes):
        turns = _turns(dialogue.id, dialogue.turns)
        for probe in dialogue.probes:
            entries = ledger.entries(turns[: probe.after_turn])
            tally = out.setdefault(probe.kind or "?", ProbeTally())
            tally.probes += 1
            tally.held += _holds(probe.expected, entries)
            asked = readback.wanted(readback.request(probe.question), entries)
            given = readback.facts_of(asked)
            if given:
                tally.read_backs += 1
                right = _holds(probe.expected, given)
                tally.read_back += right
                tally.read_back_wrong += not right
    return out


def _turns(session: str, said: Sequence[tuple[str, str]]) -> tuple[Turn, ...]:
    return tuple(Turn(session, i, cast(Role, role), text) for i, (role, text) in enumerate(said))


def _holds(expected: Sequence[str], entries: Sequence[LedgerEntry]) -> bool:
    """Whether an entry holds an expected value: as :func:`in_ledger` sees it, or as the probe compares
    an answer (the expected text inside the value, without case, spaces and commas: "$4,30" is
    written so for "$4,300")."""
    return in_ledger(expected, entries) or any(kept(expected, e.value) for e in entries)


def dev_entries(files: Sequence[Path]) -> dict[str, int]:
    """The scored kinds' entries and the plain numbers on every turn of the dev files, by kind."""
    counts: dict[str, int] = {}
    for path in files:
        for dialogue in load_sessions(path):
            turns = _turns(dialogue.id, dialogue.turns)
            for e in ledger.entries(turns):
                if e.kind in SCORED or e.kind == PLAIN:
                    counts[e.kind] = counts.get(e.kind, 0) + 1
    return dict(sorted(counts.items()))


@dataclass
class CheckTally:
    answers: int = 0
    flagged: int = 0


def score_checker(cases: Iterable[Case]) -> dict[str, dict[str, CheckTally]]:
    """The checker on the table's facts, each stated in an answer ("Your account is 12345679."): a
    current value must pass (``current``), a superseded one be flagged (``superseded``), and a copy
    with one character of a code or the surname of a name changed be flagged (``altered``)."""
    from appliance.facts.checker import check
    from appliance.facts.entities import extract
    from appliance.lab.bench.guards import alter, overlaps

    out: dict[str, dict[str, CheckTally]] = {"current": {}, "superseded": {}, "altered": {}}
    for case in cases:
        entries = ledger.entries(case.turns)
        said = {k for e in entries for k in index_keys(e.kind, e.norm)}
        for fact in case.facts:
            answer = f"Your {fact.kind.replace('_', ' ')} is {fact.value}."
            start = answer.index(fact.value)
            span = (start, start + len(fact.value))
            found = check(answer, ledger=entries, summary="", transcript=case.turns, question="")
            tally = out["current" if fact.current else "superseded"].setdefault(fact.kind, CheckTally())
            tally.answers += 1
            tally.flagged += overlaps(found.findings, [span])
            stated = [e for e in extract(answer) if e.start <= start < e.end]
            changed = alter(answer, stated[0], said) if fact.current and stated else None
            if changed is not None:
                text, new = changed
                result = check(text, ledger=entries, summary="", transcript=case.turns, question="")
                altered = out["altered"].setdefault(fact.kind, CheckTally())
                altered.answers += 1
                altered.flagged += overlaps(result.findings, [(new.start, new.end)])
    return out


def _rate(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def _tallies(tallies: dict[str, KindTally]) -> dict[str, Any]:
    return {
        k: {**vars(t), "hit_rate": _rate(t.held, t.expected), "false_rate": _rate(t.false, t.entries)}
        for k, t in sorted(tallies.items())
    }


def run_bench(data: Path, table: Path = TABLE) -> dict[str, Any]:
    """The whole report, as ``--json`` prints it; ``data`` is the folder of the dev files."""
    score = score_table(load_table(table))
    expected = sum(t.expected for t in score.by_kind.values())
    held = sum(t.held for t in score.by_kind.values())
    entries = sum(t.entries for t in score.by_kind.values())
    false = sum(t.false for t in score.by_kind.values())
    report: dict[str, Any] = {
        "table": {
            "cases": score.cases,
            "turns": score.turns,
            "hit_rate": _rate(held, expected),
            "false_rate": _rate(false, entries),
            "expected": expected,
            "held": held,
            "entries": entries,
            "false": false,
            "plain_numbers": len(score.plain_numbers),
            "false_with_plain": _rate(false + len(score.plain_numbers), entries + len(score.plain_numbers)),
            "by_kind": _tallies(score.by_kind),
            "by_language": _tallies(score.by_language),
            "misses": score.misses,
            "false_facts": score.false_facts,
            "plain_number_entries": score.plain_numbers,
        },
        "checker": {
            what: {k: vars(t) for k, t in sorted(tallies.items())}
            for what, tallies in score_checker(load_table(table)).items()
        },
        "probes": {},
        "dev_entries": {},
    }
    present = [(name, data / conv, data / probes if probes else None) for name, conv, probes in DEV_SETS]
    present = [(n, c, p) for n, c, p in present if c.exists() and (p is None or p.exists())]
    for name, conv, probes in present:
        by_kind = score_probes(conv if probes else None, None if probes else conv, probes)
        n = sum(t.probes for t in by_kind.values())
        report["probes"][name] = {
            "probes": n,
            "hit_rate": _rate(sum(t.held for t in by_kind.values()), n),
            "read_back_rate": _rate(
                sum(t.read_back for t in by_kind.values()), sum(t.read_backs for t in by_kind.values())
            ),
            "by_kind": {k: {**vars(t), "hit_rate": _rate(t.held, t.probes)} for k, t in sorted(by_kind.items())},
        }
    report["dev_entries"] = dev_entries(sorted(p for p in data.glob("*.jsonl") if "probes" not in p.name))
    return report


def format_table(report: dict[str, Any]) -> str:
    t = report["table"]
    lines = [
        f"table: {t['cases']} cases, {t['turns']} turns",
        f"  facts held      {t['held']}/{t['expected']}  ({t['hit_rate']:.1%}; target >= 98%)",
        f"  false facts     {t['false']}/{t['entries']}  ({t['false_rate']:.1%}; target <= 1%)",
        f"  plain numbers   {t['plain_numbers']} not listed  ({t['false_with_plain']:.1%} if counted as false facts)",
        "  by kind                held    false",
        *(
            f"  {kind:<20} {k['held']:>4}/{k['expected']:<4} {k['false']:>3}/{k['entries']}"
            for kind, k in t["by_kind"].items()
        ),
        "  by language            held    false",
        *(
            f"  {lang:<20} {k['held']:>4}/{k['expected']:<4} {k['false']:>3}/{k['entries']}"
            for lang, k in t["by_language"].items()
        ),
    ]
    lines += [f"  miss: {m}" for m in t["misses"][:15]]
    lines += [f"  false: {m}" for m in t["false_facts"][:15]]
    for what, tallies in report["checker"].items():
        counts = ", ".join(f"{k} {v['flagged']}/{v['answers']}" for k, v in tallies.items())
        lines.append(f"checker, {what} values flagged: {counts}")
    for name, p in report["probes"].items():
        lines.append(f"{name}: {p['probes']} probes, held {p['hit_rate']:.1%}, read back {p['read_back_rate']:.1%}")
        lines += [
            f"  {kind:<20} held {k['held']}/{k['probes']}, read back {k['read_back']}/{k['read_backs']}"
            f" ({k['read_back_wrong']} wrong)"
            for kind, k in p["by_kind"].items()
        ]
    lines.append("dev entries: " + ", ".join(f"{k} {v}" for k, v in report["dev_entries"].items()))
    return "\n".join(lines)
