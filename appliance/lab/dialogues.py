"""The dialogues the lab replays, read from the files of ``shared/data`` (formats in its SOURCES.md).

A dialogue is a sequence of real (role, text) turns with probes: questions asked after a turn whose
answer must contain an expected value stated earlier. Errors name the file and line. :func:`kept`
is how every report decides that a probed fact survived: an expected value occurs in the text,
compared lower-cased without spaces and commas, as the data's probes are written. :func:`equated`
also accepts the value in any form the entity normaliser equates ("October 8, 1980" for
"10/08/1980", "$300" for "300 dollars"), and :func:`in_ledger` asks the same of ledger entries.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.errors import InputError
from appliance.facts.entities import compact, extract
from appliance.facts.readback import same_value
from appliance.summarizer import squash
from appliance.types import LedgerEntry


@dataclass(frozen=True)
class Probe:
    after_turn: int
    question: str
    expected: tuple[str, ...]
    kind: str = ""
    first_turn: int = -1


@dataclass(frozen=True)
class BenchSession:
    id: str
    turns: tuple[tuple[str, str], ...]  # (role, text)
    probes: tuple[Probe, ...]


def jsonl_records(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line; errors name the file (and line) and ``what`` it holds."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}", field=what) from None
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path}:{number}: not JSON ({exc})", field=what) from None


def probe_of(raw: dict[str, Any]) -> Probe:
    """A probe as written in ``dev_probes.jsonl`` and in a session's ``probes``."""
    return Probe(
        after_turn=int(raw["after_turn"]),
        question=raw["question"],
        expected=tuple(raw["expected"]),
        kind=raw.get("kind", ""),
        first_turn=int(raw.get("first_turn", -1)),
    )


def load_sessions(path: Path, limit: int | None = None) -> list[BenchSession]:
    """Sessions in the format of ``shared/data/dev_sessions.jsonl`` (probes inline)."""
    sessions = []
    for number, raw in jsonl_records(path, "sessions"):
        try:
            sessions.append(
                BenchSession(
                    id=str(raw.get("id", f"line {number}")),
                    turns=tuple((t["role"], t["text"]) for t in raw["turns"]),
                    probes=tuple(probe_of(p) for p in raw.get("probes", [])),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"{path}:{number}: not a session line ({exc})", field="sessions") from None
        if limit is not None and len(sessions) >= limit:
            break
    return sessions


def load_probes(path: Path) -> dict[str, list[Probe]]:
    """Probes of ``shared/data/dev_probes.jsonl`` by conversation id."""
    out: dict[str, list[Probe]] = {}
    for number, raw in jsonl_records(path, "probes"):
        try:
            out.setdefault(str(raw["conversation_id"]), []).append(probe_of(raw))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"{path}:{number}: not a probe line ({exc})", field="probes") from None
    return out


def load_dialogues(
    conversations: Path | None = None,
    sessions: Path | None = None,
    probes: Path | None = None,
    *,
    limit: int | None = None,
) -> list[BenchSession]:
    """Conversations (with the probes file's probes attached) then sessions (probes inline);
    ``limit`` takes the first N of each file."""
    if conversations is None and sessions is None:
        raise InputError("nothing to evaluate: give --conversations and/or --sessions", field="conversations")
    extra = load_probes(probes) if probes is not None else {}
    return [
        BenchSession(d.id, d.turns, (*d.probes, *extra.get(d.id, ())))
        for path in (conversations, sessions)
        if path is not None
        for d in load_sessions(path, limit)
    ]


def kept(expected: Sequence[str], text: str) -> bool:
    """Whether an expected value of a probe occurs in ``text`` (without case, spaces and commas)."""
    flat = squash(text)
    return any(squash(value) in flat for value in expected)


def equated(expected: Sequence[str], text: str) -> bool:
    """Whether ``text`` states an expected value: as :func:`kept` does, or as an entity whose
    normalised form the extractor equates with the value's (dates, amounts, phones, codes)."""
    if kept(expected, text):
        return True
    found = extract(text)
    return any(same_value(v.kind, v.norm, e) for value in expected for v in extract(value) for e in found)


def in_ledger(expected: Sequence[str], entries: Sequence[LedgerEntry]) -> bool:
    """Whether a ledger entry holds an expected value (the same characters without case, spaces and
    punctuation, or a value the normaliser equates)."""
    for value in expected:
        flat = compact(value)
        parsed = extract(value)
        for e in entries:
            if flat and flat == compact(e.value):
                return True
            if e.norm and any(same_value(e.kind, e.norm, v) for v in parsed):
                return True
    return False
