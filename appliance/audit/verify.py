"""Walk an audit trail's files, oldest first, and name the first broken link.

A rotated trail is ``audit.jsonl.N`` (oldest) ... ``audit.jsonl.1``, then ``audit.jsonl``. The first
record kept is the anchor: rotation and retention drop older ones, so its ``prev`` is taken as
given; from there every record must hash to its ``hash``, name the one before as ``prev`` and be
numbered one more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from appliance.audit.record import digest


@dataclass(frozen=True)
class Verdict:
    """The outcome: ``ok``, how many records, the last's seq and hash, and where the chain broke."""

    records: int
    head: str = ""
    last_seq: int = 0
    broken: str = ""  # "FILE line N (seq S): what is wrong"; empty when ok
    files: tuple[Path, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.broken


def trail(path: Path) -> list[Path]:
    """The files of the trail at ``path``, oldest first (rotated ones, then ``path`` itself)."""
    rotated = []
    for sibling in path.parent.glob(path.name + ".*"):
        tail = sibling.name[len(path.name) + 1 :]
        if re.fullmatch(r"[0-9]+", tail):
            rotated.append((int(tail), sibling))
    files = [p for _, p in sorted(rotated, reverse=True)]
    return [*files, path] if path.exists() else files


def lines(files: Iterable[Path]) -> Iterator[tuple[str, str]]:
    """Every line of ``files`` in order, each with where it is (``FILE line N``, from 1)."""
    for file in files:
        with file.open(encoding="ascii", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                yield f"{file} line {number}", line.rstrip("\n")


def verify(path: Path) -> Verdict:
    """Check the trail at ``path``; the verdict names the first broken link."""
    files = tuple(trail(path))
    return replace(walk(lines(files)), files=files)


def walk(located: Iterable[tuple[str, str]]) -> Verdict:
    """Check lines given with where each is (a file's line, a database row), oldest first."""
    count, prev, seq = 0, "", 0
    for where, line in located:
        fault, record = _fault(line, prev, seq, first=count == 0)
        if fault:
            at = f" (seq {record.get('seq')})" if isinstance(record.get("seq"), int) else ""
            return Verdict(count, prev, seq, f"{where}{at}: {fault}")
        count, prev, seq = count + 1, record["hash"], record["seq"]
    return Verdict(count, prev, seq)


def _fault(line: str, prev: str, seq: int, *, first: bool) -> tuple[str, dict[str, Any]]:
    """What is wrong with one line after the record (``prev``, ``seq``); "" when nothing."""
    try:
        record = json.loads(line)
    except ValueError:
        return "not a JSON record", {}
    if not isinstance(record, dict) or not isinstance(record.get("seq"), int) or not record.get("hash"):
        return "not an audit record", record if isinstance(record, dict) else {}
    if digest(record) != record["hash"]:
        return "its hash does not match its content (edited)", record
    if not first and record.get("prev") != prev:
        return f"its prev does not name the record before (seq {seq}): a record was removed or replaced", record
    if not first and record["seq"] != seq + 1:
        return f"its seq follows {seq}: records are missing or out of order", record
    return "", record
