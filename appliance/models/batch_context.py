"""One llama.cpp context that holds several sequences: the low-level calls batched decoding needs.

A :class:`BatchContext` is made on an already loaded model's weights (no second copy of them) with
``n_seq_max`` sequences, each with a KV cache of its own of ``n_ctx`` tokens (llama.cpp's non-unified
cache: one sequence can never take another's room). One :meth:`BatchContext.decode` evaluates tokens
of several sequences in one ``llama_decode``. :class:`SeqSampler` is llama.cpp's sampler chain for one
sequence, in the order llama-cpp-python builds it for the single-sequence path, so that the same
``Sampling`` samples the same way in both. Sequence states are saved and restored by sequence id
(``llama_state_seq_get_data``/``set_data``); llama.cpp writes them differently for a context of
several sequences, so a state the single context saved does not load here (``restore`` says so).
One sequence's cache can be copied into another's (:meth:`BatchContext.copy`): a prompt prefix that
several answers share is evaluated once.

Used by :mod:`appliance.models.batched` (the engine) and, bare, by the lab's ``bench batch``. Like
``llama.py`` and ``native.py`` this module may import llama_cpp: they are the llama.cpp backend.
"""

from __future__ import annotations

import codecs
import ctypes
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from appliance.errors import GenerationError
from appliance.models.yesno import yes_share
from appliance.types import Sampling

if TYPE_CHECKING:
    from appliance.models.llama import LlamaChatModel

# llama-cpp-python's default ``last_n_tokens_size``: the window its repeat penalty looks back over.
PENALTY_LAST_N = 64


@dataclass(frozen=True)
class Entry:
    """One token of one sequence in a batch; ``logits`` asks for the scores after it (to sample from)."""

    token: int
    pos: int
    seq: int
    logits: bool


class BatchContext:
    """A llama.cpp context with ``n_seq`` sequences of ``n_ctx`` tokens each, on ``llama``'s weights.

    ``llama`` is a loaded ``llama_cpp.Llama``: its model, vocabulary and context parameters (threads,
    batch sizes, attention kernels) are reused; only the sequence count and the cache size differ.
    Single-threaded like any llama.cpp context: one owner calls it.
    """

    def __init__(self, llama: Any, *, n_seq: int, n_ctx: int, n_batch: int = 512) -> None:
        import llama_cpp

        self.n_seq = n_seq
        self.n_ctx = n_ctx
        self.n_batch = n_batch
        self.vocab = llama._model.vocab
        self.n_vocab = int(llama.n_vocab())
        self.eos = int(llama.token_eos())
        source = llama.context_params
        params = type(source).from_buffer_copy(source)
        params.n_ctx = n_ctx * n_seq
        params.n_seq_max = n_seq
        params.n_batch = n_batch
        # not the source's: a batched model's own single context is small (BatchedChatModel), its batches too
        params.n_ubatch = n_batch
        params.kv_unified = False  # a cache per sequence: no sequence can crowd out another
        params.no_perf = True
        ctx = llama_cpp.llama_init_from_model(llama._model.model, params)
        if not ctx:
            raise GenerationError(f"llama.cpp cannot make a context of {n_seq} sequences x {n_ctx} tokens")
        self.ctx = ctx
        self._memory = llama_cpp.llama_get_memory(ctx)
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._piece = ctypes.create_string_buffer(256)

    def close(self) -> None:
        import llama_cpp

        if self.ctx:
            llama_cpp.llama_batch_free(self._batch)
            llama_cpp.llama_free(self.ctx)
            self.ctx = None

    def decode(self, entries: Sequence[Entry]) -> int:
        """Evaluate ``entries`` (at most ``n_batch``) in one ``llama_decode``; llama.cpp's return code
        (0: done; otherwise nothing of this batch is in the cache)."""
        import llama_cpp

        if not entries:
            return 0
        if len(entries) > self.n_batch:
            raise GenerationError(f"a batch of {len(entries)} tokens exceeds n_batch {self.n_batch}")
        b = self._batch
        for i, e in enumerate(entries):
            b.token[i] = e.token
            b.pos[i] = e.pos
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = e.seq
            b.logits[i] = e.logits
        b.n_tokens = len(entries)
        return int(llama_cpp.llama_decode(self.ctx, b))

    def forget(self, seq: int, start: int = 0) -> None:
        """Drop sequence ``seq``'s cache from position ``start`` on."""
        import llama_cpp

        llama_cpp.llama_memory_seq_rm(self._memory, seq, start, -1)

    def copy(self, src: int, dst: int, n: int) -> None:
        """Make sequence ``dst`` hold the first ``n`` tokens of ``src``'s cache, instead of evaluating them.

        Between two sequences of a non-unified cache llama.cpp copies only whole KV buffers (it aborts
        the process on a range), and only when the next ``llama_decode`` begins: the whole of ``src``
        goes over, then ``dst`` forgets what lies past ``n``. Until that decode, neither cache may be
        saved or restored into (the engine keeps track); a decode or a ``forget`` is fine.
        """
        import llama_cpp

        llama_cpp.llama_memory_seq_cp(self._memory, src, dst, 0, -1)
        self.forget(dst, n)

    def save(self, seq: int) -> bytes:
        """Sequence ``seq``'s state (its KV cache), empty if llama.cpp writes none."""
        import llama_cpp

        size = llama_cpp.llama_state_seq_get_size(self.ctx, seq)
        data = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(self.ctx, data, size, seq)
        return bytes(memoryview(data)[:written])

    def restore(self, seq: int, state: bytes) -> bool:
        """Load a saved sequence state into ``seq``; False (and ``seq`` empty) if it does not load."""
        import llama_cpp

        self.forget(seq)
        data = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_seq_set_data(self.ctx, data, len(state), seq) != len(state):
            self.forget(seq)
            return False
        return True

    def is_end(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))

    def piece(self, token: int) -> bytes:
        """A token's bytes as text (control tokens give none), as the single path detokenizes."""
        import llama_cpp

        n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece, len(self._piece), 0, False)
        if n < 0:
            self._piece = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece, len(self._piece), 0, False)
        return self._piece.raw[: max(n, 0)]

    def logits(self, index: int) -> np.ndarray:
        """The logits after batch output ``index`` (-1: the last), as a view valid until the next decode."""
        import llama_cpp

        return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self.ctx, index), shape=(self.n_vocab,))

    def argmax(self, index: int) -> int:
        """The most likely next token at batch output ``index`` (the bare benchmark's sampler)."""
        return int(np.argmax(self.logits(index)))


def batch_context(model: LlamaChatModel, n_seq: int, n_ctx: int | None = None) -> BatchContext:
    """A context of ``n_seq`` sequences of ``n_ctx`` tokens each (default: the model's ``n_ctx``) on
    ``model``'s loaded weights: the batched engine's, or the lab's bare timings'."""
    with model.native() as llama:
        return BatchContext(llama, n_seq=n_seq, n_ctx=n_ctx or model.n_ctx)


def kv_bytes_per_token(model: LlamaChatModel) -> int:
    """Bytes of KV cache one token takes: K and V of every layer, in llama.cpp's default f16, from the
    GGUF's metadata (so a vocab-only load will do). A context of ``parallel`` sequences of ``n_ctx``
    tokens holds ``parallel x n_ctx`` of them."""
    with model.native() as llama:
        meta = llama.metadata
    arch = meta.get("general.architecture", "")

    def number(key: str, default: int = 0) -> int:
        return int(meta.get(f"{arch}.{key}", default))

    heads = number("attention.head_count", 1)
    head_dim = number("attention.key_length") or number("embedding_length") // max(1, heads)
    return 2 * number("block_count") * number("attention.head_count_kv", heads) * head_dim * 2


class SeqSampler:
    """llama.cpp's sampler chain for one sequence, built as llama-cpp-python builds the single path's
    (penalties, then greedy at temperature 0, else top-k, top-p, temperature and a seeded draw)."""

    def __init__(self, context: BatchContext, sampling: Sampling) -> None:
        import llama_cpp

        self._context = context
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        add = llama_cpp.llama_sampler_chain_add
        if sampling.ignore_eos:
            bias = (llama_cpp.llama_logit_bias * 1)(llama_cpp.llama_logit_bias(context.eos, float("-inf")))
            add(chain, llama_cpp.llama_sampler_init_logit_bias(context.n_vocab, 1, bias))
        add(
            chain,
            llama_cpp.llama_sampler_init_penalties(context.n_vocab, PENALTY_LAST_N, sampling.repeat_penalty, 0.0, 0.0),
        )
        if sampling.temperature == 0:
            add(chain, llama_cpp.llama_sampler_init_greedy())
        else:
            add(chain, llama_cpp.llama_sampler_init_top_k(sampling.top_k))
            add(chain, llama_cpp.llama_sampler_init_top_p(sampling.top_p, 1))
            add(chain, llama_cpp.llama_sampler_init_temp(sampling.temperature))
            seed = sampling.seed if sampling.seed >= 0 else llama_cpp.LLAMA_DEFAULT_SEED
            add(chain, llama_cpp.llama_sampler_init_dist(seed))
        self._chain = chain
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def sample(self, index: int) -> int:
        """The next token from batch output ``index`` (the chain accepts it, for its penalties)."""
        import llama_cpp

        return int(llama_cpp.llama_sampler_sample(self._chain, self._context.ctx, index))

    def text(self, token: int) -> str:
        """The token's text; a character split across tokens comes whole with its last token."""
        return self._text.decode(self._context.piece(token))

    def close(self) -> None:
        import llama_cpp

        if self._chain is not None:
            llama_cpp.llama_sampler_free(self._chain)
            self._chain = None


class YesNoReader:
    """In place of a sampler, for a question answered yes or no (:meth:`LlamaChatModel.yes_or_no`):
    reads the probability of the yes tokens among the yes and no tokens from the logits after the
    prompt, and ends the sequence there."""

    def __init__(self, context: BatchContext, words: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
        self._context = context
        self._words = words
        self.found: float | None = None

    def sample(self, index: int) -> int:
        self.found = yes_share(self._context.logits(index), self._words)
        return self._context.eos

    def text(self, token: int) -> str:
        return ""

    def close(self) -> None:
        pass


# bare timings, for the lab's ``bench batch`` --------------------------------------------------------


def fill(context: BatchContext, seqs: Sequence[int], prompt: Sequence[int]) -> None:
    """Evaluate ``prompt`` into each of ``seqs``, one sequence at a time, in ``n_batch`` chunks."""
    for seq in seqs:
        context.forget(seq)
        for at in range(0, len(prompt), context.n_batch):
            chunk = prompt[at : at + context.n_batch]
            last = at + len(chunk) == len(prompt)
            entries = [Entry(t, at + i, seq, last and i == len(chunk) - 1) for i, t in enumerate(chunk)]
            if context.decode(entries):
                raise GenerationError("llama_decode failed while filling a sequence")


def decode_rate(context: BatchContext, prompt: Sequence[int], n_seqs: int, steps: int) -> float:
    """Tokens per second (all sequences together) of ``steps`` greedy decode steps of ``n_seqs``
    sequences that each start from ``prompt``: one ``llama_decode`` per step, one token per sequence."""
    seqs = list(range(n_seqs))
    fill(context, seqs, prompt)
    last = {s: context.argmax(-1) for s in seqs}  # logits of the last filled sequence: same prompt, same token
    pos = len(prompt)
    began = time.perf_counter()
    for step in range(steps):
        if context.decode([Entry(last[s], pos + step, s, True) for s in seqs]):
            raise GenerationError("llama_decode failed in a decode step")
        last = {s: context.argmax(i) for i, s in enumerate(seqs)}
    return n_seqs * steps / (time.perf_counter() - began)


def prompt_seconds(
    context: BatchContext, prompt: Sequence[int], *, chunk: int, decoding: int, warm: Sequence[int]
) -> tuple[float, int]:
    """Seconds to evaluate ``prompt`` into the last sequence in ``chunk``-token pieces, while ``decoding``
    other sequences (started from ``warm``) each decode one token per step alongside, as a batched
    server would; and how many tokens those others decoded meanwhile."""
    seq = context.n_seq - 1
    others = list(range(decoding))
    fill(context, others, warm)
    context.forget(seq)
    last = {s: context.argmax(-1) for s in others}
    pos = {s: len(warm) for s in others}
    done = decoded = 0
    began = time.perf_counter()
    while done < len(prompt):
        piece = prompt[done : done + chunk]
        end = done + len(piece) == len(prompt)
        entries = [Entry(last[s], pos[s], s, True) for s in others]
        entries += [Entry(t, done + i, seq, end and i == len(piece) - 1) for i, t in enumerate(piece)]
        if context.decode(entries):
            raise GenerationError("llama_decode failed while evaluating a prompt")
        last = {s: context.argmax(i) for i, s in enumerate(others)}
        for s in others:
            pos[s] += 1
        decoded += len(others)
        done += len(piece)
    return time.perf_counter() - began, decoded


def answers_seconds(
    context: BatchContext,
    warm: Sequence[int],
    prompt: Sequence[int],
    tokens: int,
    n: int,
    *,
    chunk: int,
    each: int = 1,
) -> float:
    """Seconds for ``n`` sequences to give ``each`` answers apiece, each answer evaluating ``prompt``
    after ``warm`` (held already, as a session's kept prefix is) and then generating greedy tokens,
    ``tokens`` on average: answer ``g`` (in the order they start) ``tokens`` x 0.5, 1 or 1.5 by
    ``g % 3``, so that answers end apart as real ones do. A sequence starts its next answer as soon
    as one ends (customers who ask again at once, as ``bench load``'s do). Scheduled as the batched
    engine schedules: one token of every generating answer per step, and prompt pieces of ``chunk``
    tokens beside them (``n_batch`` while none generates). With ``n`` = 1 it is the single
    context's way: one answer at a time, its prompt in ``n_batch`` pieces."""
    seqs = list(range(n))
    fill(context, seqs, warm)
    left = dict.fromkeys(seqs, each)
    todo = {s: list(prompt) for s in seqs}
    pos = dict.fromkeys(seqs, len(warm))
    last: dict[int, int] = {}  # the generating answers: the token each decodes next
    made = dict.fromkeys(seqs, 0)
    cycle = [max(1, round(tokens * f)) for f in (0.5, 1.0, 1.5)]
    length = {s: cycle[s % 3] for s in seqs}
    started = n
    began = time.perf_counter()
    while any(left.values()):
        entries, outputs = _step(seqs, last, left, todo, pos, chunk if last else context.n_batch)
        if context.decode(entries):
            raise GenerationError("llama_decode failed in an answer")
        for index, s in zip((i for i, e in enumerate(entries) if e.logits), outputs):
            made[s] += 1
            if made[s] < length[s]:
                last[s] = context.argmax(index)
                continue
            left[s] -= 1  # this answer is done: the sequence's next one starts from the kept prefix
            made[s], pos[s], todo[s] = 0, len(warm), list(prompt)
            length[s], started = cycle[started % 3], started + 1
            context.forget(s, len(warm))
    return time.perf_counter() - began


def _step(
    seqs: list[int],
    last: dict[int, int],
    left: dict[int, int],
    todo: dict[int, list[int]],
    pos: dict[int, int],
    budget: int,
) -> tuple[list[Entry], list[int]]:
    """One step's entries, as the batched engine schedules them: the next token of every generating
    answer (taken from ``last``), and prompt pieces of up to ``budget`` tokens in all beside them (taken
    from ``todo``; ``pos`` moves on); and the sequences whose logits it reads, in the entries' order."""
    entries: list[Entry] = []
    outputs: list[int] = []
    for s in seqs:
        if s in last:
            entries.append(Entry(last.pop(s), pos[s], s, True))
            outputs.append(s)
            pos[s] += 1
        elif left[s] and todo[s] and budget > 0:
            piece, todo[s] = todo[s][:budget], todo[s][budget:]
            budget -= len(piece)
            entries += [Entry(t, pos[s] + i, s, not todo[s] and i == len(piece) - 1) for i, t in enumerate(piece)]
            pos[s] += len(piece)
            if not todo[s]:
                outputs.append(s)
    return entries, outputs
