"""Bare llama.cpp on the appliance's loaded model: the baselines ``appliance bench perf`` compares with.

Each function reaches the loaded ``llama_cpp.Llama`` through :meth:`LlamaChatModel.native`, which
holds the model's lock for the block, and calls its methods directly, without the appliance's
streaming, detokenizing and callbacks around them. The lab never imports llama_cpp itself: only
``appliance.models.llama`` does.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from appliance.errors import GenerationError
from appliance.models.llama import LlamaChatModel
from appliance.types import Message, Sampling


def forget_prefix(model: LlamaChatModel) -> None:
    """Make the next prompt evaluate from its first token, so that a cold prompt can be timed: the
    live context and every saved session state are dropped."""
    with model.native() as llama:
        llama.reset()
        model.states.clear()


def eval_s(model: LlamaChatModel, messages: Sequence[Message], text: str) -> float:
    """Seconds bare llama.cpp takes to evaluate just ``text``'s tokens where they stand in the last
    message, on a cache that holds everything before them: the floor under any time to first token
    (everything else could have been evaluated while the customer was typing)."""
    *head, last = messages
    at = last.content.rfind(text)
    if at < 0 or not text:
        raise GenerationError(f"{model.name}: the text is not in the prompt's last message")
    full = model.tokens(messages)
    n = model.count_text(text)  # as the prompt holds it: line by line where the model allows
    # Where the text begins; a token that merges across the boundary counts as the text's.
    start = min(len(model.tokens([*head, Message(last.role, last.content[:at])], open_end=True)) - 1, len(full) - n)
    with model.native() as llama:
        llama.reset()
        llama.eval(full[:start])
        began = time.perf_counter()
        llama.eval(full[start : start + n])
        return time.perf_counter() - began


def generate_tps(model: LlamaChatModel, messages: Sequence[Message], sampling: Sampling) -> tuple[int, float]:
    """(tokens, decode tokens/s) of llama-cpp-python's own token generator on the same loaded model,
    threads and prompt. The clock starts at the first token, so prompt processing and prefix reuse
    do not count."""
    prompt = model.tokens(messages)
    n, first, last = 0, 0.0, 0.0
    with model.native() as llama:
        eos = llama.token_eos()
        if sampling.seed >= 0:
            llama.set_seed(sampling.seed)
        for token in llama.generate(
            prompt,
            top_k=sampling.top_k,
            top_p=sampling.top_p,
            min_p=0.0,
            temp=sampling.temperature,
            repeat_penalty=sampling.repeat_penalty,
        ):
            now = time.perf_counter()
            if token == eos:
                break
            n += 1
            first = first or now
            last = now
            if n >= sampling.max_tokens:
                break
    rate = (n - 1) / (last - first) if n > 1 and last > first else 0.0
    return n, rate
