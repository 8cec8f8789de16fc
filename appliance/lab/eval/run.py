"""``appliance eval`` from start to end: load the models once, replay (or read the cache), judge if
asked, and write ``report.json``, ``report.md`` and the plots."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.errors import InputError
from appliance.lab.dialogues import load_dialogues
from appliance.lab.eval.cache import run_units, write_json
from appliance.lab.eval.judge import Judge, judge_units
from appliance.lab.eval.metrics import build_report
from appliance.lab.eval.plots import plot
from appliance.lab.eval.replay import MakeRig, model_rig
from appliance.lab.eval.report import format_markdown
from appliance.lab.harness import choose_policies, evolve
from appliance.protocols import ChatModel


@dataclass(frozen=True)
class EvalOptions:
    policies: tuple[str, ...]
    out: Path
    conversations: Path | None = None
    sessions: Path | None = None
    probes: Path | None = None
    limit: int | None = None
    judge: str | None = None
    samples: int = 3
    seed: int = 0
    progress: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def evaluate(
    options: EvalOptions, make_rig: MakeRig, *, run: Mapping[str, Any], judge_model: ChatModel | None = None
) -> dict[str, Any]:
    """Replay (or read from the cache), judge if asked, and write report.json, report.md and the plots."""
    dialogues = load_dialogues(options.conversations, options.sessions, options.probes, limit=options.limit)
    if not dialogues:
        raise InputError("no dialogues in the given files", field="conversations")
    options.out.mkdir(parents=True, exist_ok=True)
    units = run_units(
        dialogues,
        options.policies,
        options.out,
        make_rig,
        run=run,
        samples=options.samples,
        seed=options.seed,
        progress=options.progress,
    )
    # The judge is not a replay's input (changing it must not invalidate the cache), so it is added here.
    shown = {
        **run,
        "judge": options.judge,
        "dialogues": len(dialogues),
        "samples_per_dialogue": options.samples,
        "seed": options.seed,
    }
    report = build_report(units, options.policies, shown)
    if judge_model is not None:
        judged = judge_units(
            Judge(judge_model, options.out / "judge.json", seed=options.seed),
            units,
            options.policies,
            seed=options.seed,
            progress=options.progress,
        )
        for name, metrics in judged["scores"].items():
            report["policies"][name]["judge"] = metrics
        report["pairwise"] = judged["pairwise"]
    write_json(options.out / "report.json", report)
    (options.out / "report.md").write_text(format_markdown(report, units), encoding="utf-8")
    plot(units, report, options.out)
    return report


def run_eval(settings: Settings, options: EvalOptions) -> dict[str, Any]:
    """Load the configured models (verified), fix the seeds, and evaluate."""
    from appliance.app import policies as configured_policies
    from appliance.app.loading import load_recall, load_responder, load_summarizer

    local = evolve(settings, responder={"seed": options.seed}, summarizer={"seed": options.seed})
    policies = choose_policies(options.policies, configured_policies(local))
    responder = load_responder(local)
    summarizer = load_summarizer(local) if any(p.uses_summary for p in policies.values()) else None
    judge_model = None
    if options.judge:
        judge_model = load_responder(evolve(local, responder={"model": options.judge}))
    run = {
        "responder": local.responder.model,
        "summarizer": local.summarizer.model if summarizer is not None else None,
        "budget_tokens": local.context.budget_tokens,
        "max_tokens": local.responder.max_tokens,
        "temperature": local.responder.temperature,
        "system_prompt": local.chat.system_prompt,
        "instruction": local.chat.instruction,
        "summarizer_every_turns": local.summarizer.every_turns,
        **options.extra,
    }
    recall = load_recall(local)
    run["recall"] = recall is not None
    return evaluate(options, model_rig(local, responder, summarizer, recall), run=run, judge_model=judge_model)
