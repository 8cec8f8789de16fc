"""The one percentile of every lab report, so that a p95 means the same in each of them.

Linearly interpolated between the two nearest ranks (numpy's default, and what docs/evaluation.md
documents); a median is its 50th percentile. No values give 0.0: a report must not fail on an
empty stage or window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile of ``values`` (``pct`` from 0 to 100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * pct / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def spread(values: Sequence[float], digits: int) -> dict[str, float]:
    """``{"p50": ..., "p95": ...}`` rounded to ``digits``, the shape every report uses."""
    return {"p50": round(percentile(values, 50), digits), "p95": round(percentile(values, 95), digits)}
