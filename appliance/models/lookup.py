"""Prompt-lookup decoding on the single context: tokens drafted from the prompt, checked in one decode.

An answer that repeats its prompt (a passage's wording, a read-back's reference) can guess its next
tokens by finding its last two tokens earlier in the prompt and taking what followed them
(llama-cpp-python's ``LlamaPromptLookupDecoding``). The guess and the token before it are evaluated
in one ``llama_decode``, with logits after each, and the answer's own sampler picks every token as
it would one at a time: it keeps the drafted tokens up to the first it would not have picked, whose
place takes the token it did pick. So the text is the one the model gives without lookup; only the
number of decodes changes. On a CPU one token's decode reads every weight, and a few more tokens
in the same pass cost little beside that.

llama-cpp-python drives a ``draft_model`` itself, but only with logits kept for every token
(``logits_all``): a row of the vocabulary for each of ``n_ctx`` positions allocated (2.4 GB for
Qwen2.5 at 4096) and written for every prompt token too, which slows the prompt the customer waits
for. So the loop here is the appliance's own; it drafts with the library's lookup.

A batched model (``responder.parallel`` > 1) does not draft: its step already shares each weight
read among several answers, so a drafted token is one more row in a pass that is busy, and its
sequences would each need their own rollback in the engine's step.
"""

from __future__ import annotations

import codecs
import functools
import random
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from appliance.models.states import shared_prefix
from appliance.types import Sampling

Lookup = Literal["off", "on", "auto"]
# The longest run of the answer's last tokens looked for in the prompt; a shorter one is tried next.
NGRAM = 2


def drafting(mode: Lookup, sampling: Sampling) -> bool:
    """Whether an answer sampled so drafts from its prompt. ``auto``: when it is greedy: the pipeline
    answers greedily exactly the turns that repeat their prompt (passages, read-back facts), and a
    sampled answer keeps fewer of the drafts. Never a fixed-length answer (``ignore_eos``): its ban
    on the end token is a logits processor this loop does not run."""
    if mode == "off" or sampling.ignore_eos:
        return False
    return mode == "on" or sampling.temperature == 0


@dataclass
class Drafts:
    """Drafted tokens checked against what the model picked, and those it kept: a model's running count."""

    checked: int = 0
    kept: int = 0


@dataclass(frozen=True)
class Step:
    """Tokens picked after one decode: those that follow the decoded ones, and how many drafts they kept."""

    picked: tuple[int, ...]
    kept: int


def verify(drafts: Sequence[int], pick: Callable[[int], int]) -> Step:
    """The tokens ``pick(row)`` chooses after each row of the last decode (the token before the drafts,
    then each draft; counted from the end, as llama.cpp's outputs are: -1 the last), up to and
    including the first that is not the draft it follows."""
    picked: list[int] = []
    first = -len(drafts) - 1
    for i, draft in enumerate(drafts):
        token = pick(first + i)
        picked.append(token)
        if token != draft:
            return Step(tuple(picked), i)
    picked.append(pick(-1))
    return Step(tuple(picked), len(drafts))


def speculate(
    llama: Any, prompt: Sequence[int], sampling: Sampling, *, draft: int, drafts: Drafts
) -> Generator[tuple[str, str | None]]:
    """``(text, finish)`` pieces of the answer to ``prompt`` on ``llama`` (a loaded ``llama_cpp.Llama``,
    held by the caller), drafting up to ``draft`` tokens a decode; ``finish`` (``stop`` or ``length``)
    comes with the last piece. Like ``create_completion``, the context keeps the prompt's prefix it
    shares (a prompt it holds whole, with its logits, is not evaluated again), and afterwards holds what
    it would: the prompt and every answer token but the last."""
    import llama_cpp
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    lookup = LlamaPromptLookupDecoding(max_ngram_size=NGRAM, num_pred_tokens=draft)
    sampler = _sampler(llama, sampling)
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    _evaluate(llama, prompt)
    batch: list[int] = []
    answered = 0
    try:
        while True:
            guess = batch[1:]
            step = verify(guess, functools.partial(sampler.sample, llama._ctx))
            drafts.checked += min(len(guess), step.kept + 1)
            drafts.kept += step.kept
            if batch:
                llama.n_tokens -= len(guess) - step.kept  # the drafts not kept leave the cache
                llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)
            for token in step.picked:
                answered += 1
                if llama_cpp.llama_vocab_is_eog(llama._model.vocab, token):
                    yield text.decode(b"", final=True), "stop"
                    return
                piece = text.decode(llama.detokenize([token]))
                if answered >= sampling.max_tokens:
                    yield piece + text.decode(b"", final=True), "length"
                    return
                yield piece, None
            last = step.picked[-1]
            room = min(draft, sampling.max_tokens - answered - 1, llama.n_ctx() - llama.n_tokens - 1)
            ahead = lookup(np.append(llama.input_ids[: llama.n_tokens], last).astype(np.intc)) if room > 0 else ()
            batch = [last, *(int(t) for t in ahead[:room])]
            _decode(llama, batch)
    finally:
        # As create_completion leaves it: the answer's last token picked but not evaluated.
        llama.n_tokens = min(llama.n_tokens, len(prompt) + answered - 1)
        llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)


def _sampler(llama: Any, sampling: Sampling) -> Any:
    """The answer's sampler, seeded as ``create_completion`` seeds, so that a sampled answer draws as it
    would there."""
    llama.set_seed(sampling.seed if sampling.seed >= 0 else random.Random(llama._seed).randint(0, 2**32))
    return llama._init_sampler(
        top_k=sampling.top_k,
        top_p=sampling.top_p,
        min_p=0.0,
        temp=sampling.temperature,
        repeat_penalty=sampling.repeat_penalty,
    )


def _evaluate(llama: Any, prompt: Sequence[int]) -> None:
    """Evaluate ``prompt`` past the prefix the context shares with it, logits after its last token only;
    a prompt the context holds whole, with live logits, is not evaluated again."""
    shared = shared_prefix(llama.input_ids[: llama.n_tokens], np.asarray(prompt))
    if not (shared == len(prompt) == llama.n_tokens and not llama._requires_eval):  # else its logits are live
        llama.n_tokens = min(shared, len(prompt) - 1)  # eval() drops the cache beyond this position
        llama.eval(prompt[llama.n_tokens :])


def _decode(llama: Any, tokens: list[int]) -> None:
    """Evaluate ``tokens`` after the context's, with logits after each (``eval`` keeps only the last's
    unless the model was loaded for all, see the module's note)."""
    at = llama.n_tokens
    llama._ctx.kv_cache_seq_rm(-1, at, -1)
    llama._batch.set_batch(batch=tokens, n_past=at, logits_all=True)
    llama._ctx.decode(llama._batch)
    llama.input_ids[at : at + len(tokens)] = tokens
    llama.n_tokens = at + len(tokens)
    llama._requires_eval = False
