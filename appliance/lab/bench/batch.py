"""``appliance bench batch``: what batched decoding can give on this machine, bare llama.cpp first.

On the configured responder (default threads: 2), through one llama.cpp context of several sequences
(:class:`appliance.models.batch_context.BatchContext`, llama-cpp-python's low-level API, greedy argmax
and no streaming around it):

* **Decode throughput** with 1, 2, 4 and 8 sequences in one batch: tokens per second of all sequences
  together, one ``llama_decode`` per step with one token of each sequence. The ratio to one sequence
  is what batching can give at most.
* **Prompt evaluation** of one prompt in chunks, alone and with other sequences decoding one token
  each per chunk (as a new customer's prompt is evaluated while others are answered): seconds, and
  the others' decode rate meanwhile.
* **Through the appliance** (``engine``): the batched engine (``responder.parallel`` = ``--engine-seqs``,
  default 4) with that many answers at once, against the bare figure for as many sequences.
* **Answers shaped like the daemon's** (``answers``): as many sequences as the engine has, each
  giving 4 answers one after another as soon as the last ends (``bench load``'s clients), each
  answer evaluating ``--answer-prompt`` tokens after a kept prefix and then generating
  ``--answer-tokens`` on average (half, once or one and a half times, so they end apart); against
  the same answers one after another in one sequence (``parallel = 1``'s way). Each side runs on
  the weights as its own setting lays them out (``responder.repack``: with ``auto`` the single
  context's as in the file, the batched one's repacked; the model is then loaded twice). The ratio
  is what bare llama.cpp can give ``bench load``'s turns/s with answers of that shape: prompt
  evaluation gains little from batching, so the more of an answer is prompt, the less it gives.
  The defaults are the default models' own under ``bench load --clients 4`` at temperature 0 (a
  turn evaluated 105 prompt tokens and generated 14: the engine's counts and the stored records).

Each measurement is taken ``rounds`` times, interleaved, so a loaded machine slows all of them alike;
the report gives every round and the medians.

Both sides are timed alike: the same prompt and positions, the same threads and batch sizes, greedy,
prompt evaluation left out, and one OpenMP worker pool alive while either decodes (the bare timings'
thread hands its pool back before the engine decodes, and the engine's when it is idle: see
:mod:`appliance.models.openmp`; before, the engine always decoded beside the bare thread's idle pool,
which makes libgomp sleep at every barrier, and the bare timings did too from the second round on).
The engine's first token of each answer comes with its prompt's evaluation, so it is not counted.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from appliance.config import Settings
from appliance.errors import InputError
from appliance.lab.bench.load import MESSAGES as LOAD_MESSAGES
from appliance.lab.harness import evolve
from appliance.lab.stats import median
from appliance.models.batch_context import answers_seconds, batch_context, decode_rate, prompt_seconds
from appliance.models.batched import PROMPT_CHUNK, BatchedChatModel
from appliance.models.llama import LlamaChatModel
from appliance.models.openmp import release_workers
from appliance.types import Message, Sampling

SEQS = (1, 2, 4, 8)
EACH = 4  # answers each sequence gives in the answers measurement, one after another as bench load's turns
# A customer's question in the default prompt's shape; repeated for the prompt-evaluation timing.
QUESTION = "My card ending 4821 was blocked after I paid 49.90 EUR on 3 March. Can you unblock it today?"


def _prompts(model: LlamaChatModel, prompt_tokens: int) -> tuple[list[int], list[int]]:
    """A short prompt the decoding sequences start from, and one of about ``prompt_tokens`` to evaluate."""
    short = model.tokens([Message("user", QUESTION)])
    long: list[int] = []
    while len(long) < prompt_tokens:
        long += model.tokens([Message("user", QUESTION)], open_end=True)
    return short, long[:prompt_tokens]


def _engine_rate(model: LlamaChatModel, n: int, tokens: int) -> float:
    """Tokens/s of ``n`` answers generated at once through the model's batched engine (greedy, EOS ignored)."""
    sampling = Sampling(temperature=0.0, max_tokens=tokens, ignore_eos=True)
    messages = [Message("user", QUESTION)]
    results: list[Any] = [None] * n

    def one(i: int) -> None:
        results[i] = model.generate(messages, sampling)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    prompt_s = max(r.ttft_s for r in results)  # the first tokens: sampled after the prompts, before this window
    return sum(r.completion_tokens - 1 for r in results) / max(wall - prompt_s, 1e-9)


def same_answers(model: BatchedChatModel, questions: Sequence[str], tokens: int) -> dict[str, Any]:
    """Greedy answers decoded together (all ``questions`` at once) against each alone on the model's
    single context: how many are identical, and where the others first differ (in characters)."""
    sampling = Sampling(temperature=0.0, max_tokens=tokens)
    alone = [LlamaChatModel.generate(model, [Message("user", q)], sampling).text for q in questions]
    together: list[str] = [""] * len(questions)

    def one(i: int) -> None:
        together[i] = model.generate([Message("user", questions[i])], sampling).text

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(questions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    differ = [
        next(i for i, (a, b) in enumerate(zip(x + "\0", y + "\1")) if a != b) for x, y in zip(alone, together) if x != y
    ]
    return {"answers": len(questions), "identical": len(questions) - len(differ), "differ_at_chars": differ}


def run_batch(
    settings: Settings,
    *,
    threads: int = 2,
    steps: int = 24,
    prompt_tokens: int = 256,
    chunk: int = 64,
    rounds: int = 2,
    engine_seqs: int = 4,
    answer_prompt: int = 105,
    answer_tokens: int = 14,
    progress: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    """Load the responder (verified) and take every measurement ``rounds`` times."""
    from appliance.app.loading import load_responder

    local = evolve(settings, responder={"n_threads": threads, "parallel": engine_seqs if engine_seqs > 1 else 1})
    alone_settings = evolve(local, responder={"parallel": 1})
    model = load_responder(local, bare=True)  # same_answers compares with its single context
    if not isinstance(model, LlamaChatModel):
        raise InputError(f"{local.responder.model}: bench batch measures a local llama.cpp model", field="model")
    relaid = alone_settings.responder.repacked != local.responder.repacked
    single = load_responder(alone_settings) if relaid else model  # parallel = 1's own weights
    assert isinstance(single, LlamaChatModel)
    n_answers = engine_seqs if engine_seqs > 1 else 4
    short, long = _prompts(model, max(prompt_tokens, answer_prompt))
    context = batch_context(model, max(SEQS), len(long) + max(steps, answer_tokens) + len(short) + 8)
    one = batch_context(single, 1, len(short) + len(long) + max(steps, answer_tokens) + 8) if relaid else context
    decode: dict[int, list[float]] = {n: [] for n in SEQS}
    decode_single: list[float] = []
    prompt: dict[str, list[float]] = {"alone_s": [], "beside_decode_s": [], "beside_decode_tps": []}
    answers: dict[str, list[float]] = {"one_after_another_s": [], "side_by_side_s": []}
    engine: list[float] = []
    same: dict[str, Any] | None = None
    try:
        for r in range(rounds):
            for n in SEQS:
                progress(f"round {r + 1}: decode, {n} sequence(s)")
                decode[n].append(decode_rate(context, short, n, steps))
            if relaid:
                progress(f"round {r + 1}: decode, 1 sequence, the weights as parallel = 1 lays them out")
                decode_single.append(decode_rate(one, short, 1, steps))
            progress(f"round {r + 1}: prompt evaluation, alone and beside 3 decoding sequences")
            alone, _ = prompt_seconds(context, long[:prompt_tokens], chunk=chunk, decoding=0, warm=short)
            beside, decoded = prompt_seconds(context, long[:prompt_tokens], chunk=chunk, decoding=3, warm=short)
            prompt["alone_s"].append(alone)
            prompt["beside_decode_s"].append(beside)
            prompt["beside_decode_tps"].append(decoded / beside)
            progress(f"round {r + 1}: {n_answers} answers one after another, then side by side")
            piece = long[:answer_prompt]
            answers["one_after_another_s"].append(
                answers_seconds(one, short, piece, answer_tokens, 1, chunk=PROMPT_CHUNK, each=n_answers * EACH)
            )
            answers["side_by_side_s"].append(
                answers_seconds(context, short, piece, answer_tokens, n_answers, chunk=PROMPT_CHUNK, each=EACH)
            )
            release_workers()  # this thread's pool, idle while the engine decodes (see the docstring)
            if engine_seqs > 1:
                progress(f"round {r + 1}: {engine_seqs} answers through the batched engine")
                engine.append(_engine_rate(model, engine_seqs, steps))
        if isinstance(model, BatchedChatModel):
            progress(f"greedy answers, {engine_seqs} together against each alone")
            same = same_answers(model, [m.format(n=i) for i, m in enumerate(LOAD_MESSAGES[:engine_seqs])], steps)
    finally:
        context.close()
        if relaid:
            one.close()
        if isinstance(model, BatchedChatModel):
            model.close()
    report = _report(model.name, threads, decode, prompt, engine, engine_seqs, prompt_tokens, chunk, steps)
    one_median = median(answers["one_after_another_s"])
    return {
        **report,
        "repacked": {"batched": local.responder.repacked, "alone": alone_settings.responder.repacked},
        "decode_tps_alone_weights": [round(x, 2) for x in decode_single] if relaid else None,
        "decode_ratio_to_one_alone_weights": (
            {str(n): round(median(xs) / (median(decode_single) or 1e-9), 2) for n, xs in decode.items()}
            if relaid
            else None
        ),
        "answers": {
            "n": n_answers,
            "each": EACH,
            "prompt_tokens": answer_prompt,
            "tokens": answer_tokens,
            **{k: [round(x, 3) for x in xs] for k, xs in answers.items()},
            "ratio": round(one_median / (median(answers["side_by_side_s"]) or 1e-9), 2),
        },
        "same_answers": same,
    }


def _report(
    name: str,
    threads: int,
    decode: dict[int, list[float]],
    prompt: dict[str, list[float]],
    engine: Sequence[float],
    engine_seqs: int,
    prompt_tokens: int,
    chunk: int,
    steps: int,
) -> dict[str, Any]:
    one = median(decode[1]) or 1e-9
    bare_n = median(decode.get(engine_seqs, [])) or 1e-9
    return {
        "model": name,
        "threads": threads,
        "decode_steps": steps,
        "decode_tps": {str(n): [round(x, 2) for x in xs] for n, xs in decode.items()},
        "decode_tps_median": {str(n): round(median(xs), 2) for n, xs in decode.items()},
        "decode_ratio_to_one": {str(n): round(median(xs) / one, 2) for n, xs in decode.items()},
        "prompt_tokens": prompt_tokens,
        "prompt_chunk": chunk,
        "prompt_s": {k: [round(x, 3) for x in xs] for k, xs in prompt.items()},
        "prompt_slowdown_beside_decode": round(
            median(prompt["beside_decode_s"]) / (median(prompt["alone_s"]) or 1e-9), 2
        ),
        "engine_seqs": engine_seqs,
        "engine_tps": [round(x, 2) for x in engine],
        "engine_ratio_to_bare": round(median(engine) / bare_n, 2) if engine else None,
    }


def format_text(report: dict[str, Any]) -> str:
    seqs = list(report["decode_tps_median"])
    lines = [
        f"bench batch: {report['model']}, {report['threads']} threads, {report['decode_steps']} decode steps",
        "sequences         " + "".join(f"{n:>10}" for n in seqs),
        "decode tok/s      " + "".join(f"{report['decode_tps_median'][n]:>10.2f}" for n in seqs),
        "ratio to 1        " + "".join(f"{report['decode_ratio_to_one'][n]:>10.2f}" for n in seqs),
        "rounds (tok/s)    " + "  ".join("/".join(f"{x:.1f}" for x in report["decode_tps"][n]) for n in seqs),
        f"prompt of {report['prompt_tokens']} tokens in chunks of {report['prompt_chunk']}: "
        f"alone {median(report['prompt_s']['alone_s']):.2f} s, beside 3 decoding "
        f"{median(report['prompt_s']['beside_decode_s']):.2f} s "
        f"(x{report['prompt_slowdown_beside_decode']:.2f}; they decode "
        f"{median(report['prompt_s']['beside_decode_tps']):.2f} tok/s meanwhile)",
    ]
    if report["engine_tps"]:
        lines.append(
            f"engine, {report['engine_seqs']} answers at once: "
            f"{'/'.join(f'{x:.1f}' for x in report['engine_tps'])} tok/s, "
            f"{report['engine_ratio_to_bare']:.2f} of bare"
        )
    alone_weights = report.get("decode_tps_alone_weights")
    if alone_weights:
        lines += [
            f"1 sequence on parallel = 1's weights (repacked: {report['repacked']['alone']}): "
            f"{median(alone_weights):.2f} tok/s; the figures above (repacked: {report['repacked']['batched']}) to it:",
            "ratio             " + "".join(f"{report['decode_ratio_to_one_alone_weights'][n]:>10.2f}" for n in seqs),
        ]
    a = report["answers"]
    lines.append(
        f"{a['n']} x {a['each']} answers of {a['prompt_tokens']} prompt + {a['tokens']} generated tokens: "
        f"one after another {median(a['one_after_another_s']):.2f} s, side by side "
        f"{median(a['side_by_side_s']):.2f} s (x{a['ratio']:.2f})"
    )
    same = report.get("same_answers")
    if same:
        lines.append(
            f"greedy, together against alone: {same['identical']} of {same['answers']} answers identical"
            + (
                f" (the others differ from character {', '.join(map(str, same['differ_at_chars']))})"
                if same["differ_at_chars"]
                else ""
            )
        )
    return "\n".join(lines)


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report)
