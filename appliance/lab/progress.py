"""Progress on stderr, so that stdout carries only the report (``--json`` output stays parseable).

The only importer of tqdm: bars for the evaluation's replays and verdicts, lines for the benches.
"""

from __future__ import annotations

import sys
from typing import Any


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def bar(total: int, desc: str, unit: str, *, enabled: bool = True) -> Any:
    """A tqdm bar on stderr (a silent one when not ``enabled``); use it as a context manager."""
    from tqdm import tqdm  # type: ignore[import-untyped]  # tqdm ships no type information

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not enabled)
