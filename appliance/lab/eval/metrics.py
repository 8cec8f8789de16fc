"""``report.json`` from the cached points: probe scores, context size, latency, summarizer and guard.

Pure functions of the points, so the report can be recomputed from the cache. Stages are seed 002's
positional stages (first 20 % of a dialogue's turns early, last 10 % late): the evaluation knows
each dialogue's length, unlike the live stage detector, whose guess is kept per point as
``detected_stage``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from appliance.lab.stats import median, percentile, spread
from appliance.types import STAGES

if TYPE_CHECKING:
    from appliance.lab.eval.replay import Point


def share(flags: Sequence[bool]) -> float | None:
    """The share of true flags; None when there is nothing to count (a stage without probes is no 0 %)."""
    return round(sum(flags) / len(flags), 4) if flags else None


def probe_metrics(probes: Sequence[Point]) -> dict[str, Any]:
    """The probe scores: in context; answer right as the normaliser equates values ("October 8, 1980"
    for "10/08/1980"), and by the data's exact-string rule (``_exact``); each also before the guard."""
    return {
        "probes": len(probes),
        "probe_facts_in_context": share([p["in_context"] for p in probes]),
        "probe_answers_correct": share([p["correct"] for p in probes]),
        "probe_answers_correct_unguarded": share([p["correct_unguarded"] for p in probes]),
        "probe_answers_exact": share([p["correct_exact"] for p in probes]),
        "probe_answers_exact_unguarded": share([p["correct_exact_unguarded"] for p in probes]),
    }


def point_metrics(points: Sequence[Point]) -> dict[str, Any]:
    """Probe scores, context size, latency and guard flags of a set of answered points."""
    probes = [p for p in points if p["kind"] == "probe"]
    failed = [p for p in points if p.get("error")]
    points = [p for p in points if not p.get("error")]  # no answer: nothing to time or count
    tokens = [p["context_tokens"] for p in points]
    actions: dict[str, int] = {}
    for p in points:
        if p["flagged"]:
            actions[p["guard_action"]] = actions.get(p["guard_action"], 0) + 1
    return {
        **probe_metrics(probes),
        "answers": len(points),
        "errors": len(failed),
        "context_tokens": {
            "median": round(percentile(tokens, 50), 1),
            "p95": round(percentile(tokens, 95), 1),
            "max": max(tokens, default=0),
        },
        "ttft_s": spread([p["ttft_s"] for p in points], 4),
        "turn_s": spread([p["turn_s"] for p in points], 4),
        "guard": {
            "flagged": sum(actions.values()),
            "flagged_share": share([p["flagged"] for p in points]) or 0.0,
            "actions": actions,
        },
    }


def summarizer_metrics(units: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Runs, failures and time of the summary worker over a policy's replays, and the answers whose
    context fell back to verbatim turns because the summary was missing or behind."""
    durations = [d for u in units for d in u["summarizer"]["durations_s"]]
    points = [p for u in units for p in u["points"] if not p.get("error")]
    return {
        "runs": sum(u["summarizer"]["runs"] for u in units),
        "accepted": sum(u["summarizer"]["accepted"] for u in units),
        "failures": sum(u["summarizer"]["failures"] for u in units),
        "fallbacks": sum(1 for p in points if p["fallback"]),
        "time_s": round(float(sum(durations)), 3),
        "median_s": round(median(durations), 3),
    }


def policy_metrics(units: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    points = [p for u in units for p in u["points"]]
    out = point_metrics(points)
    out["dialogues"] = len(units)
    out["summarizer"] = summarizer_metrics(units)
    out["by_stage"] = {s: point_metrics([p for p in points if p["stage"] == s]) for s in STAGES}
    probes = [p for p in points if p["kind"] == "probe"]
    kinds = sorted({p.get("probe_kind") or "?" for p in probes})
    out["by_kind"] = {k: probe_metrics([p for p in probes if (p.get("probe_kind") or "?") == k]) for k in kinds}
    return out


def build_report(units: Sequence[Mapping[str, Any]], policies: Sequence[str], run: Mapping[str, Any]) -> dict[str, Any]:
    """``report.json`` (schema in docs/evaluation.md) from the replays' points."""
    report: dict[str, Any] = {"policies": {}}
    for name in policies:
        report["policies"][name] = policy_metrics([u for u in units if u["policy"] == name])
    raw = report["policies"].get("raw")
    for metrics in report["policies"].values():
        base = raw["context_tokens"]["median"] if raw else 0
        median_tokens = metrics["context_tokens"]["median"]
        metrics["context_tokens"]["ratio_to_raw"] = round(median_tokens / base, 4) if base else None
    report["run"] = dict(run)
    return report
