"""The report's three PNGs, drawn headless; the only importer of matplotlib (loaded when drawing).

Context tokens and latency against turn number per policy (medians over dialogues), probe scores
per policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from appliance.lab.stats import median

if TYPE_CHECKING:
    from appliance.lab.eval.replay import Point


def plot(units: Sequence[Mapping[str, Any]], report: Mapping[str, Any], out: Path) -> list[Path]:
    """The three PNGs: context tokens and latency against turn number per policy, probe scores per policy."""
    import matplotlib

    matplotlib.use("Agg")  # headless: no display on the appliance or in CI
    import matplotlib.pyplot as plt

    names = list(report["policies"])
    points = {n: [p for u in units if u["policy"] == n for p in u["points"] if not p.get("error")] for n in names}
    paths = []

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for n in names:
        xs, ys = _by_turn(points[n], "context_tokens")
        ax.plot(xs, ys, marker="o", markersize=3, label=n)
    ax.set(xlabel="turn number", ylabel="context tokens (median over dialogues)", title="Prompt size")
    ax.legend()
    ax.grid(alpha=0.3)
    paths.append(_save(fig, out / "context_tokens.png"))

    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.38
    slots = range(len(names))
    facts = [report["policies"][n]["probe_facts_in_context"] or 0.0 for n in names]
    right = [report["policies"][n]["probe_answers_correct"] or 0.0 for n in names]
    ax.bar([x - width / 2 for x in slots], facts, width, label="fact in context")
    ax.bar([x + width / 2 for x in slots], right, width, label="answer correct")
    ax.set_xticks(list(slots), names)
    ax.set(ylim=(0, 1.05), ylabel="share of probes", title="Fact-recall probes")
    ax.legend()
    paths.append(_save(fig, out / "probe_accuracy.png"))

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
    for n in names:
        xs, ys = _by_turn(points[n], "ttft_s")
        top.plot(xs, ys, marker="o", markersize=3, label=n)
        xs, ys = _by_turn(points[n], "turn_s")
        bottom.plot(xs, ys, marker="o", markersize=3, label=n)
    top.set(ylabel="time to first token, s", title="Latency (median over dialogues)")
    bottom.set(xlabel="turn number", ylabel="turn time, s")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.legend()
    paths.append(_save(fig, out / "latency.png"))
    return paths


def _by_turn(points: Sequence[Point], key: str) -> tuple[list[int], list[float]]:
    """Median of ``key`` per turn number, turns in order."""
    groups: dict[int, list[float]] = {}
    for p in points:
        groups.setdefault(p["turn"], []).append(p[key])
    turns = sorted(groups)
    return turns, [median(groups[t]) for t in turns]


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)
    return path
