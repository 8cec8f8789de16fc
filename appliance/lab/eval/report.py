"""``report.md`` and the terminal's summary: the report's numbers as tables, and a few sampled answers.

Formatting only; the numbers come from :mod:`appliance.lab.eval.metrics` and the judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from appliance.lab.eval.judge import JUDGE_DIMENSIONS


def _f(value: Any, pct: bool = False) -> str:
    if value is None:
        return "–"
    if pct:
        return f"{value:.1%}"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def format_markdown(report: Mapping[str, Any], units: Sequence[Mapping[str, Any]] = ()) -> str:
    """``report.md``: the report's tables, and a few sampled answers beside the real agent's."""
    pol = report["policies"]
    run = report.get("run", {})
    out = ["# Evaluation report", ""]
    if run:
        short = {k: v for k, v in run.items() if not isinstance(v, (dict, list)) and len(str(v)) <= 60}
        out += [", ".join(f"{k}: `{v}`" for k, v in short.items()), ""]
    out += [
        "## Overall",
        "",
        _table(
            (
                "policy",
                "probes",
                "facts in context",
                "answers correct",
                "before guard",
                "answers",
                "ctx tokens median",
                "p95",
                "max",
                "ratio to raw",
                "TTFT p50 s",
                "p95",
                "turn p50 s",
                "p95",
            ),
            (
                (
                    name,
                    str(m["probes"]),
                    _f(m["probe_facts_in_context"], True),
                    _f(m["probe_answers_correct"], True),
                    _f(m["probe_answers_correct_unguarded"], True),
                    str(m["answers"]),
                    _f(m["context_tokens"]["median"]),
                    _f(m["context_tokens"]["p95"]),
                    str(m["context_tokens"]["max"]),
                    _f(m["context_tokens"]["ratio_to_raw"]),
                    _f(m["ttft_s"]["p50"]),
                    _f(m["ttft_s"]["p95"]),
                    _f(m["turn_s"]["p50"]),
                    _f(m["turn_s"]["p95"]),
                )
                for name, m in pol.items()
            ),
        ),
        "",
    ]
    out += [
        "## By stage",
        "",
        _table(
            (
                "policy",
                "stage",
                "probes",
                "facts in context",
                "answers correct",
                "answers",
                "ctx tokens median",
                "TTFT p50 s",
                "turn p50 s",
            ),
            (
                (
                    name,
                    s,
                    str(b["probes"]),
                    _f(b["probe_facts_in_context"], True),
                    _f(b["probe_answers_correct"], True),
                    str(b["answers"]),
                    _f(b["context_tokens"]["median"]),
                    _f(b["ttft_s"]["p50"]),
                    _f(b["turn_s"]["p50"]),
                )
                for name, m in pol.items()
                for s, b in m["by_stage"].items()
            ),
        ),
        "",
    ]
    out += [
        "## Probes by kind",
        "",
        _table(
            (
                "policy",
                "kind",
                "probes",
                "facts in context",
                "answers correct",
                "before guard",
                "exact",
                "exact before guard",
            ),
            (
                (
                    name,
                    k,
                    str(b["probes"]),
                    _f(b["probe_facts_in_context"], True),
                    _f(b["probe_answers_correct"], True),
                    _f(b["probe_answers_correct_unguarded"], True),
                    _f(b["probe_answers_exact"], True),
                    _f(b["probe_answers_exact_unguarded"], True),
                )
                for name, m in pol.items()
                for k, b in m.get("by_kind", {}).items()
            ),
        ),
        "",
    ]
    out += [
        "## Summarizer and guard",
        "",
        _table(
            (
                "policy",
                "summary runs",
                "accepted",
                "failures",
                "fallback answers",
                "summarizer time s",
                "median s",
                "guard flags",
                "flagged share",
            ),
            (
                (
                    name,
                    str(m["summarizer"]["runs"]),
                    str(m["summarizer"]["accepted"]),
                    str(m["summarizer"]["failures"]),
                    str(m["summarizer"]["fallbacks"]),
                    _f(m["summarizer"]["time_s"]),
                    _f(m["summarizer"]["median_s"]),
                    str(m["guard"]["flagged"]),
                    _f(m["guard"]["flagged_share"], True),
                )
                for name, m in pol.items()
            ),
        ),
        "",
    ]
    if any("judge" in m for m in pol.values()):
        out += [
            f"## Judge ({run.get('judge', '')})",
            "",
            _table(
                ("policy", "answers", *JUDGE_DIMENSIONS, "overall", "unparsed"),
                (
                    (
                        name,
                        str(m["judge"]["answers"]),
                        *(_f(m["judge"][d]) for d in JUDGE_DIMENSIONS),
                        _f(m["judge"]["overall"]),
                        str(m["judge"]["unparsed"]),
                    )
                    for name, m in pol.items()
                    if "judge" in m
                ),
            ),
            "",
        ]
    if report.get("pairwise"):
        out += [
            "## Pairwise",
            "",
            _table(
                ("a", "b", "comparisons", "a wins", "b wins", "ties", "unparsed", "a win rate"),
                (
                    (
                        t["a"],
                        t["b"],
                        str(t["comparisons"]),
                        str(t["a_wins"]),
                        str(t["b_wins"]),
                        str(t["ties"]),
                        str(t["unparsed"]),
                        _f(t["a_win_rate"], True),
                    )
                    for t in report["pairwise"].values()
                ),
            ),
            "",
        ]
    examples = [
        (u["policy"], u["dialogue"], p)
        for u in units
        for p in u["points"]
        if p["kind"] == "sample" and not p.get("error")
    ][:6]
    if examples:
        out += [
            "## Sampled answers",
            "",
            _table(
                ("policy", "dialogue", "turn", "customer", "appliance", "real agent"),
                (
                    (pname, did, str(p["turn"]), _cell(p["question"]), _cell(p["answer"]), _cell(p["reference"]))
                    for pname, did, p in examples
                ),
            ),
            "",
        ]
    out += ["Plots: `context_tokens.png`, `probe_accuracy.png`, `latency.png`.", ""]
    return "\n".join(out)


def format_summary(report: Mapping[str, Any]) -> str:
    """One line per policy for the terminal; the tables are in report.md."""
    return "\n".join(
        f"{name}: {m['probes']} probes, facts in context {_f(m['probe_facts_in_context'], True)}, answers correct "
        f"{_f(m['probe_answers_correct'], True)} (before the guard {_f(m['probe_answers_correct_unguarded'], True)}; "
        f"exact {_f(m['probe_answers_exact'], True)}), context tokens median {_f(m['context_tokens']['median'])} "
        f"(ratio to raw {_f(m['context_tokens']['ratio_to_raw'])}), TTFT p50 {_f(m['ttft_s']['p50'])} s"
        for name, m in report["policies"].items()
    )


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"
