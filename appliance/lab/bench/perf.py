"""``appliance bench perf``: the appliance's own cost, measured side by side with the model's, in one run.

One long session (the longest of the sessions file, chained with the next longest until it has
``turns`` turns) is replayed teacher-forced, once per policy (``rolling``, then ``raw``):

* **Overhead** (``rolling``): each customer turn is answered through the real pipeline by a
  *replay* model that counts tokens with the real tokenizer but "generates" the real agent reply
  instantly. So the turn's time beyond inference (snapshot, stage, context build with real token
  counts, guard, store) is measured exactly, and the stored transcript stays the real one. The guard
  runs in ``flag`` mode here, so a flagged real reply is stored as it was said (and early routing and
  refinement are off: the measured model answers every turn). Reported over the
  answered turns of the session's last 40 turns (around turn 100 of the default 120).
* **TTFT** over a window of ``window`` answered customer turns from ``early`` and from ``late``, for
  each policy, with the real model, as production sees it: llama.cpp's cache holds the previous
  answer's prompt, so only what changed since is evaluated (``ttft_ratio``, medians late / early).
  Each prompt is also timed cold (cache emptied first: ``ttft_cold_ratio``), which shows how the
  prompt itself grows with the conversation.
* **Generation speed** through the appliance (the pipeline streaming to a callback) against bare
  llama-cpp-python's token generator on the same loaded model, threads, prompt and sampling
  (:func:`appliance.lab.bench.bare.generate_tps`); decode only, medians of ``repeats`` alternating runs,
  on a question at the late turn that draws a long answer (``GEN_QUESTION``).
* **Prefix reuse** over the late window: the tokens each prompt shares with the previous answer's,
  and TTFT cold against after the previous prompt; it pays off when the latter is clearly faster.

The summary worker runs for ``rolling`` as in production and is drained after each turn, so it never
competes with a measurement.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from appliance.config import Settings
from appliance.errors import GenerationError, InputError
from appliance.lab.bench import bare, latency
from appliance.lab.harness import Recorder, appliance_for, evolve
from appliance.lab.stats import median, percentile
from appliance.models.llama import LlamaChatModel
from appliance.models.states import shared_prefix
from appliance.protocols import ChatModel, OnToken, Recaller
from appliance.turn.pipeline import Pipeline
from appliance.types import Generation, Message, Sampling

POLICIES = ("rolling", "raw")
TAIL_TURNS = 40
# Asked for the generation-speed measurement: a question that draws a long answer, so the rate is
# measured over many tokens (the customer's own late message often gets ten).
GEN_QUESTION = "Could you go over everything we have arranged so far, with every detail, step by step?"
TARGETS = {
    "overhead_p50_ms": 5.0,
    "gen_tps_ratio": 0.95,
    "ttft_ratio_rolling": 1.2,
    "ttft_spike_ratio": 1.5,
    "ttft_floor_ratio": 3.0,
    "interleaved_ratio": 1.3,
}


def long_session(path: Path, turns: int) -> list[tuple[str, str]]:
    """The longest session, chained with the next longest ones until it has ``turns`` turns."""
    return latency.chains(path, 1, turns)[0]


def customer_turn_at(turns: Sequence[tuple[str, str]], index: int) -> int:
    """The first customer turn at or after ``index`` that an agent answers."""
    for i in range(max(0, index), len(turns) - 1):
        if latency.answered(turns, i):
            return i
    raise InputError(f"no answered customer turn at or after turn {index}", field="turns")


class Switch(Recorder):
    """The pipeline's responder during the bench: replays a given text instantly (counting with the real
    tokenizer), or passes through to the real model; remembers the messages of each call, and of the
    last replayed one (the previous answer's prompt, as production would have evaluated it)."""

    def __init__(self, model: ChatModel) -> None:
        super().__init__(model)
        self.replay: str | None = None
        self.replayed: tuple[Message, ...] = ()

    @property
    def last(self) -> tuple[Message, ...]:
        return self.prompts[-1] if self.prompts else ()

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        if self.replay is None:
            return super().generate(messages, sampling, on_token=on_token, cancel=cancel, cache_key=cache_key)
        self.prompts.append(tuple(messages))
        self.replayed = tuple(messages)
        if on_token is not None:
            on_token(self.replay)
        return Generation(
            text=self.replay, model=self.name, prompt_tokens=0, completion_tokens=0, ttft_s=0.0, total_s=0.0
        )


def ratio(num: float, den: float) -> float:
    return round(num / den, 4) if den > 0 else 0.0


def _median(values: Sequence[float]) -> float:
    return round(median(values), 4)


def _ttft(
    pipeline: Pipeline,
    model: LlamaChatModel,
    switch: Switch,
    session_id: str,
    turn: int,
    text: str,
    warm: float | None,
) -> dict[str, Any]:
    """TTFT of answering ``text`` (not stored) as production does (``warm``, measured by the caller
    or here: after the previous answer and the warm-up of this prefix), and cold (cache emptied)."""
    previous = switch.replayed
    if warm is None:
        warm = latency.first_token_s(pipeline, session_id, text)
    current = model.tokens(switch.last)
    bare.forget_prefix(model)
    cold = latency.first_token_s(pipeline, session_id, text)
    shared = shared_prefix(model.tokens(previous), current) if previous else 0
    return {
        "turn": turn,
        "ttft_s": round(warm, 4),
        "cold_ttft_s": round(cold, 4),
        "prompt_tokens": len(current),
        "shared_prefix_tokens": shared,
    }


def _window_summary(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Medians of a window's measurements, and the measurements."""
    med = {
        k: _median([x[k] for x in samples]) for k in ("ttft_s", "cold_ttft_s", "prompt_tokens", "shared_prefix_tokens")
    }
    return {
        "turns": [x["turn"] for x in samples],
        **med,
        "max_ttft_s": max(x["ttft_s"] for x in samples),
        "samples": list(samples),
    }


def measured_turns(turns: Sequence[tuple[str, str]], start: int, window: int) -> list[int]:
    """The first ``window`` answered customer turns at or after ``start``."""
    out = [customer_turn_at(turns, start)]
    while len(out) < window:
        try:
            out.append(customer_turn_at(turns, out[-1] + 1))
        except InputError:
            break
    return out


def replay_policy(
    settings: Settings,
    model: LlamaChatModel,
    summarizer: ChatModel | None,
    recall: Recaller | None,
    policy: str,
    turns: Sequence[tuple[str, str]],
    *,
    windows: dict[str, list[int]],
    repeats: int,
    measure_gen: bool,
    progress: Callable[[str], None],
    every_from: int | None = None,
) -> dict[str, Any]:
    """One teacher-forced replay of ``turns`` under ``policy`` with every measurement taken on the way;
    TTFT at the customer turns of ``windows`` ("early" and "late", see :func:`measured_turns`), and
    at every answered customer turn from ``every_from`` on, with the floor at the late ones."""
    from appliance.app import pipeline_settings

    out: dict[str, Any] = {"overhead": [], "ttft": {}, "every": [], "floor": []}
    samples: dict[str, list[dict[str, Any]]] = {which: [] for which in windows}
    measured = {i: which for which, window in windows.items() for i in window}
    switch = Switch(model)
    with tempfile.TemporaryDirectory(prefix="bench-perf-") as folder:
        # One model answers every turn, unrewritten: early routing and refinement would replace the replayed text.
        local = evolve(
            settings,
            paths={"database": Path(folder) / "perf.db"},
            context={"policy": policy},
            guard={"policy": "flag"},
            routing={"early": ""},
            refine={"enabled": False},
        )
        appliance = appliance_for(local, switch, summarizer, policy, recall=recall, prewarm=True)
        pipeline, worker = appliance.pipeline, appliance.worker
        sampling = pipeline_settings(local).sampling
        try:
            session = appliance.sessions.new_session(policy=policy, title=f"bench perf {policy}")
            index = 0
            version = 0
            while index < len(turns):
                role, text = turns[index]
                latency.settle(appliance)  # the customer's typing time: the summary, then the warm-up
                if not latency.answered(turns, index):
                    appliance.sessions.record_turn(session.id, role, text)
                    index += 1
                    continue
                switch.replay = None
                production = None
                if every_from is not None and index >= every_from:
                    production = latency.first_token_s(pipeline, session.id, text)
                    now = latency.summary_version(appliance, session.id)
                    out["every"].append(
                        {
                            "turn": index,
                            "ttft_s": round(production, 4),
                            "after_summary_update": now != version,
                            "warmed": latency.warmed(appliance, session.id),
                            # recall adds older turns after the warmed prefix: a suspect for a spike
                            "recall_gate": bool(pipeline.recall and pipeline.recall.points_back(text)),
                        }
                    )
                    version = now
                if index in measured:
                    which = measured[index]
                    sample = _ttft(pipeline, model, switch, session.id, index, text, production)
                    samples[which].append(sample)
                    if which == "late" and every_from is not None:
                        try:
                            floor = bare.eval_s(model, switch.last, appliance.sessions.validate_message(text))
                        except GenerationError as exc:  # the message was masked or cut: no floor for this turn
                            progress(f"{policy}: turn {index}: no floor measured: {exc}")
                        else:
                            out["floor"].append({"turn": index, "floor_s": round(floor, 4), "ttft_s": sample["ttft_s"]})
                    progress(
                        f"{policy}: turn {index} ({which}): {sample['prompt_tokens']} prompt tokens "
                        f"({sample['shared_prefix_tokens']} shared with the previous), TTFT "
                        f"{sample['ttft_s']:.3f} s, cold {sample['cold_ttft_s']:.3f} s"
                    )
                    if index == windows["late"][0] and measure_gen:
                        out["gen_tps"] = _gen_tps(pipeline, model, switch, sampling, session.id, GEN_QUESTION, repeats)
                switch.replay = turns[index + 1][1]
                result = pipeline.answer(session.id, text)
                t = result.record.timings
                out["overhead"].append(
                    {
                        "turn": index,
                        "ms": (t.total_s - t.generate_s) * 1000,
                        "context_ms": t.context_ms,
                        "recall_ms": getattr(t, "recall_ms", 0.0),
                        "check_ms": t.check_ms,
                        "store_ms": t.store_ms,
                        # snapshot, stage, ledger extraction: the rest of the turn beyond inference
                        "other_ms": (t.total_s - t.generate_s) * 1000
                        - t.context_ms
                        - getattr(t, "recall_ms", 0.0)
                        - t.check_ms
                        - t.store_ms,
                    }
                )
                index += 2
            out["ttft"] = {which: _window_summary(x) for which, x in samples.items()}
        finally:
            switch.replay = None
            if worker is not None:
                worker.stop()  # first, so that its counts are final
                stats = worker.stats()
                out["summarizer"] = {"runs": stats.runs, "accepted": stats.accepted, "failures": stats.failures}
            out["prewarm"] = latency.prewarm_report(out["every"], appliance)
            appliance.close()
    return out


def _gen_tps(
    pipeline: Pipeline,
    model: LlamaChatModel,
    switch: Switch,
    sampling: Sampling,
    session_id: str,
    text: str,
    repeats: int,
) -> dict[str, Any]:
    """Decode tokens/s through the pipeline and bare, alternating, on the same prompt and sampling."""
    appliance: list[float] = []
    baseline: list[float] = []
    tokens: list[tuple[int, int]] = []
    for _ in range(repeats):
        pieces: list[str] = []
        r = pipeline.answer(session_id, text, persist=False, on_token=pieces.append).record
        decode = r.timings.generate_s - r.timings.ttft_s
        if r.completion_tokens > 1 and decode > 0:
            appliance.append((r.completion_tokens - 1) / decode)
        n, rate = bare.generate_tps(model, switch.last, sampling)
        if rate > 0:
            baseline.append(rate)
        tokens.append((r.completion_tokens, n))
    return {"appliance": _median(appliance), "bare": _median(baseline), "tokens": tokens}


def run_perf(
    settings: Settings,
    sessions_file: Path,
    *,
    model_name: str | None = None,
    turns: int = 120,
    early: int = 5,
    late: int = 60,
    window: int = 5,
    gen_tokens: int = 64,
    repeats: int = 3,
    summarize: bool = True,
    progress: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    """Load the model (verified, the configured responder unless named) and take every measurement."""
    from appliance.app.loading import load_recall, load_responder, load_summarizer

    if not 0 <= early < late < turns - 1:
        raise InputError(f"need 0 <= --early ({early}) < --late ({late}) < --turns ({turns}) - 1", field="turns")
    local = evolve(
        settings,
        responder={
            "model": model_name or settings.responder.model,
            "max_tokens": gen_tokens,
            "seed": max(settings.responder.seed, 0),
        },
        summarizer={"seed": max(settings.summarizer.seed, 0)},
    )
    session = long_session(sessions_file, turns)
    windows = {"early": measured_turns(session, early, window), "late": measured_turns(session, late, window)}
    if windows["late"][0] <= windows["early"][-1]:
        raise InputError(
            f"the early TTFT window (from turn {early}, {window} answers) reaches turn {late}: "
            "start --late later or make --window smaller",
            field="late",
        )
    model = load_responder(local, bare=True)  # its bare timings evaluate in the single context
    if not isinstance(model, LlamaChatModel):
        raise InputError(
            f"{local.responder.model}: bench perf measures a local llama.cpp model, not a remote one", field="model"
        )
    summarizer = load_summarizer(local) if summarize else None
    recall = load_recall(local)
    runs = {}
    for policy in POLICIES:
        progress(f"{policy}: replaying {len(session)} turns")
        runs[policy] = replay_policy(
            local,
            model,
            summarizer if policy == "rolling" else None,
            recall,
            policy,
            session,
            windows=windows,
            repeats=repeats,
            measure_gen=policy == "rolling",
            progress=progress,
            every_from=windows["early"][0] if policy == "rolling" else None,
        )
    build = latency.interleaved_builder(local, lambda: Switch(model), summarizer, recall)
    runs["rolling"]["interleaved"] = latency.interleaved(
        build, model, sessions_file, late=late, rounds=window, progress=progress
    )
    return summarize_runs(runs, local, len(session))


def summarize_runs(runs: dict[str, dict[str, Any]], settings: Settings, turns: int) -> dict[str, Any]:
    """The bench's JSON object from the replays' raw measurements."""
    rolling = runs["rolling"]
    tail = [o for o in rolling["overhead"] if o["turn"] >= turns - TAIL_TURNS]
    every = rolling["overhead"]
    gen = rolling.get("gen_tps", {"appliance": 0.0, "bare": 0.0})
    report: dict[str, Any] = {
        "overhead_ms": {
            "p50": round(percentile([o["ms"] for o in tail], 50), 3),
            "p95": round(percentile([o["ms"] for o in tail], 95), 3),
        },
        "gen_tps_ratio": ratio(gen["appliance"], gen["bare"]),
        "ttft_ratio": {p: ratio(runs[p]["ttft"]["late"]["ttft_s"], runs[p]["ttft"]["early"]["ttft_s"]) for p in runs},
        "ttft_cold_ratio": {
            p: ratio(runs[p]["ttft"]["late"]["cold_ttft_s"], runs[p]["ttft"]["early"]["cold_ttft_s"]) for p in runs
        },
        "turns": turns,
        "model": settings.responder.model,
        "n_threads": settings.responder.n_threads,
        "overhead_window": [max(0, turns - TAIL_TURNS), turns - 1],
        "overhead_ms_all": {
            "p50": round(percentile([o["ms"] for o in every], 50), 3),
            "p95": round(percentile([o["ms"] for o in every], 95), 3),
            "turns": len(every),
        },
        "overhead_parts_ms_p50": {
            k: round(percentile([o[k] for o in tail], 50), 3)
            for k in ("recall_ms", "context_ms", "check_ms", "store_ms", "other_ms")
        },
        "overhead_ms_raw": {
            "p50": round(
                percentile([o["ms"] for o in runs["raw"]["overhead"] if o["turn"] >= turns - TAIL_TURNS], 50), 3
            )
        },
        "gen_tps": gen,
        "ttft_s": {p: runs[p]["ttft"] for p in runs},
        "prefix_reuse": {p: prefix_reuse(runs[p]["ttft"]["late"]) for p in runs},
        "summarizer": rolling.get("summarizer", {"runs": 0, "accepted": 0, "failures": 0}),
        "targets": TARGETS,
    }
    spikes = latency.spike_report(rolling.get("every", []))
    floor = rolling.get("floor", [])
    floor_s = median([x["floor_s"] for x in floor]) if floor else 0.0
    mixed = rolling.get("interleaved", {"ratio": 0.0})
    report |= {
        "ttft_spike_ratio": spikes["ratio"],
        "ttft_floor_ratio": ratio(rolling["ttft"]["late"]["ttft_s"], floor_s),
        "interleaved_ratio": mixed["ratio"],
        "prewarm": rolling.get("prewarm", {"turns": 0, "warmed": 0}),
        "ttft_every": spikes,
        "ttft_floor_s": {"median": round(floor_s, 4), "samples": floor},
        "interleaved": mixed,
    }
    report["met"] = {
        "overhead_p50_ms": report["overhead_ms"]["p50"] < TARGETS["overhead_p50_ms"],
        "gen_tps_ratio": report["gen_tps_ratio"] >= TARGETS["gen_tps_ratio"],
        "ttft_ratio_rolling": report["ttft_ratio"]["rolling"] <= TARGETS["ttft_ratio_rolling"],
        **{k: 0 < report[k] <= TARGETS[k] for k in ("ttft_spike_ratio", "ttft_floor_ratio", "interleaved_ratio")},
    }
    return report


def prefix_reuse(late: dict[str, Any]) -> dict[str, Any]:
    """Whether llama.cpp's prefix cache pays off at the late turns: what production saves over cold."""
    speedup = ratio(late["cold_ttft_s"], late["ttft_s"])
    return {
        "prompt_tokens": late["prompt_tokens"],
        "shared_prefix_tokens": late["shared_prefix_tokens"],
        "cold_ttft_s": late["cold_ttft_s"],
        "next_turn_ttft_s": late["ttft_s"],
        "speedup": speedup,
        "pays_off": speedup > 1.1,
    }


def _span(window: dict[str, Any]) -> str:
    return f"{window['turns'][0]}-{window['turns'][-1]}"


def format_text(r: dict[str, Any]) -> str:
    """The ratios, each beside its target, then the measurements behind them."""
    yes = {True: "ok", False: "MISSED"}
    lines = [
        f"bench perf: {r['model']}, {r['turns']} turns teacher-forced, n_threads={r['n_threads'] or 'one per core'}",
        f"  overhead per turn (turns {r['overhead_window'][0]}-{r['overhead_window'][1]}): p50 "
        f"{r['overhead_ms']['p50']:.2f} ms, p95 {r['overhead_ms']['p95']:.2f} ms  (target p50 < 5 ms: "
        f"{yes[r['met']['overhead_p50_ms']]})",
        "    parts p50: " + ", ".join(f"{k} {v:.2f}" for k, v in r["overhead_parts_ms_p50"].items()),
        f"  generation tokens/s, appliance / bare llama-cpp-python: {r['gen_tps']['appliance']:.1f} / "
        f"{r['gen_tps']['bare']:.1f} = {r['gen_tps_ratio']:.3f}  (target >= 0.95: {yes[r['met']['gen_tps_ratio']]})",
    ]
    for p, t in r["ttft_s"].items():
        target = f"  (target <= 1.2: {yes[r['met']['ttft_ratio_rolling']]})" if p == "rolling" else ""
        late, early = t["late"], t["early"]
        lines.append(
            f"  TTFT {p}, median after the previous answer: turns {_span(late)} {late['ttft_s']:.3f} s / "
            f"turns {_span(early)} {early['ttft_s']:.3f} s = {r['ttft_ratio'][p]:.3f}{target}"
        )
        lines.append(
            f"    cold: {late['cold_ttft_s']:.3f} s ({late['prompt_tokens']:.0f} tok) / {early['cold_ttft_s']:.3f} s "
            f"({early['prompt_tokens']:.0f} tok) = {r['ttft_cold_ratio'][p]:.3f}; slowest late turn {late['max_ttft_s']:.3f} s"
        )
    for p, pr in r["prefix_reuse"].items():
        lines.append(
            f"  prefix reuse {p} (late turns, medians): {pr['shared_prefix_tokens']:.0f} of {pr['prompt_tokens']:.0f} "
            f"prompt tokens shared with the previous answer's; TTFT {pr['next_turn_ttft_s']:.3f} s against "
            f"{pr['cold_ttft_s']:.3f} s cold: {'pays off' if pr['pays_off'] else 'does not pay off'}"
        )
    if "ttft_every" in r:
        e, w, mixed, fl = r["ttft_every"], r["prewarm"], r["interleaved"], r["ttft_floor_s"]
        lines += [
            f"  TTFT spikes, rolling, every answered turn ({e['turns']}): p95 {e['p95_s']:.3f} s / p50 {e['p50_s']:.3f} s "
            f"= {r['ttft_spike_ratio']:.3f}  (target <= 1.5: {yes[r['met']['ttft_spike_ratio']]}); right after a "
            f"summary update: median {e['after_summary_update']['median_s']:.3f} s over {e['after_summary_update']['turns']}",
            f"  TTFT floor, late rolling median / bare evaluation of the message alone {fl['median']:.3f} s "
            f"= {r['ttft_floor_ratio']:.3f}  (target <= 3: {yes[r['met']['ttft_floor_ratio']]})",
            f"  several customers, {mixed.get('sessions', 0)} sessions round-robin / one at a time: "
            f"{mixed.get('round_robin_median_s', 0.0):.3f} s / {mixed.get('one_at_a_time_median_s', 0.0):.3f} s "
            f"= {r['interleaved_ratio']:.3f}  (target <= 1.3: {yes[r['met']['interleaved_ratio']]})",
            f"  prefix warm-up: {w['warmed']} of {w['turns']} measured turns found their prefix warmed; "
            f"{w.get('runs', 0)} warm-ups, {w.get('idle_s', 0.0):.1f} s of idle time",
        ]
    s = r["summarizer"]
    lines.append(f"  summarizer (rolling): {s['runs']} runs, {s['accepted']} accepted, {s['failures']} failures")
    return "\n".join(lines)


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report)
