"""Several answers decoded together: one llama.cpp context, one sequence per answer (continuous batching).

Generating a token reads every weight whether it is for one sequence or for four, so the answers of
several waiting customers share one :class:`~appliance.models.batch_context.BatchContext`. One thread
owns it and loops: it admits waiting answers into free sequences, each starting from the longest
prefix of its prompt that is evaluated already (:mod:`appliance.models.sequences`: a prefix another
answer holds or is evaluating is copied, not evaluated again), then makes one ``llama_decode`` of one
token of every answer that is generating plus a chunk of a prompt that is being evaluated, then
samples each answer's next token with its own sampler chain. A new answer joins at the next step,
and a long prompt is evaluated a chunk per step, so it does not freeze the others' streams.

The callers (the model queue's threads) block in :meth:`BatchedEngine.generate`; pieces of text come
to them through a queue of their own, so a slow ``on_token`` never stalls the decode loop. An answer
whose ``cancel`` is set, or whose caller failed, leaves its sequence at the next step. A decode that
llama.cpp refuses is retried one answer at a time, so a fault fails only the answer it belongs to.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from appliance.errors import Cancelled, GenerationError
from appliance.models.batch_context import BatchContext, Entry, SeqSampler, YesNoReader, batch_context
from appliance.models.llama import LlamaChatModel, continued
from appliance.models.openmp import release_workers
from appliance.models.sequences import PromptStats, Request, Seq, Sequences
from appliance.models.states import SavedState, StateCache
from appliance.protocols import Flag, OnToken, Warmed
from appliance.types import Generation, Message, Sampling

# Prompt tokens evaluated per step while other answers are generating: each step then takes longer
# by this piece's share, so their streams slow down instead of stopping. 128 rather than 64
# evaluates a prompt in fewer, cheaper passes (~1.3 s a step instead of ~0.8; docs/batching.md,
# round four). The piece does not shrink as more answers generate: a prompt is then cut the same
# way whoever is beside it, and greedy answers stay the same (how a prefix is cut rounds its cache).
PROMPT_CHUNK = 128
# Tokens of the single llama.cpp context a batched model keeps beside its engine's: it answers in
# the engine, so the single one only has to exist (the lab's bare timings ask for a full one).
SINGLE_CTX = 256

_LOG = logging.getLogger("appliance.batched")


@dataclass(frozen=True)
class Ended:
    """How an answer's sequence ended: ``stop`` (end of text) or ``length``, and the tokens sampled."""

    finish: str
    completion_tokens: int


class BatchedChatModel(LlamaChatModel):
    """A :class:`LlamaChatModel` whose answers and warm-ups share one context of ``parallel``
    sequences (the engine's). Its own single context holds ``SINGLE_CTX`` tokens, or ``n_ctx`` for the
    lab's bare timings (``bare``). Counting and the chat template are the single model's, so are the
    saved states' keys."""

    def __init__(self, path: Path, *, parallel: int, bare: bool = False, **options: Any) -> None:
        n_ctx = options.get("n_ctx", 4096)
        # The single context is left small unless the lab's bare timings (``bare``) evaluate in it.
        super().__init__(path, single_ctx=n_ctx if bare else min(SINGLE_CTX, n_ctx), **options)
        self.engine = BatchedEngine(batch_context(self, parallel), self.states, name=self.name)

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: OnToken | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        prompt = self.tokens(messages, open_end=continued(messages))
        return self.engine.generate(prompt, sampling, on_token=on_token, cancel=cancel, cache_key=cache_key)

    def yes_or_no(self, messages: Sequence[Message], *, cache_key: str | None = None) -> float | None:
        words = self._answers
        return None if words is None else self.engine.judge(self.tokens(messages), words, cache_key=cache_key)

    def prepare(self, messages: Sequence[Message], *, cache_key: str, cancel: Flag | None = None) -> Warmed:
        return self.engine.prepare(self.tokens(messages, open_end=True), cache_key=cache_key, cancel=cancel)

    def close(self) -> None:
        self.engine.close()


class BatchedEngine:
    """Answers decoded together in ``context``'s sequences, on one thread; ``states`` holds each
    session's saved sequence state between its answers (shared with the single context's warm-ups)."""

    def __init__(
        self, context: BatchContext, states: StateCache, *, name: str, chunk: int = PROMPT_CHUNK, share: bool = True
    ) -> None:
        self.context = context
        self.states = states
        self.name = name
        self.chunk = chunk
        # share: copy a prefix another sequence holds or is evaluating instead of evaluating it
        self._seqs = Sequences(context, states, share=share)
        self._pending: deque[Request] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=f"batch-{name}", daemon=True)
        self._thread.start()

    @property
    def active(self) -> int:
        """Answers holding a sequence now."""
        return len(self._seqs.active)

    @property
    def waiting(self) -> int:
        """Answers waiting for a free sequence."""
        return len(self._pending)

    def alive(self) -> bool:
        """Whether the decode loop runs (until :meth:`close`)."""
        return self._thread.is_alive()

    def stats(self) -> PromptStats:
        """Prompt tokens admitted so far, and how many of them were evaluated."""
        return self._seqs.stats

    def close(self, timeout: float | None = 30.0) -> None:
        """Stop the loop: answers in progress or waiting end with ``Cancelled``; the context is freed."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def generate(
        self,
        prompt: Sequence[int],
        sampling: Sampling,
        *,
        on_token: Callable[[str], None] | None = None,
        cancel: Flag | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        """Generate an answer to ``prompt`` (token ids) in a sequence of its own, streaming its text to
        ``on_token`` on the calling thread. Raises ``Cancelled`` once ``cancel`` is set, and
        ``GenerationError`` if llama.cpp fails this answer."""
        if len(prompt) + sampling.max_tokens > self.context.n_ctx:
            raise GenerationError(
                f"prompt of {len(prompt)} tokens + max_tokens {sampling.max_tokens} exceeds n_ctx {self.context.n_ctx}"
            )
        if not prompt:
            raise GenerationError(f"{self.name}: an empty prompt")
        request = self._submit(Request(prompt, sampling, cache_key, cancel))
        start = time.perf_counter()
        pieces: list[str] = []
        first = 0.0
        while True:
            kind, value = request.out.get()
            if kind == "piece":
                assert isinstance(value, str)
                first = first or time.perf_counter() - start
                pieces.append(value)
                if on_token is not None:
                    try:
                        on_token(value)
                    except BaseException:
                        request.withdrawn.set()  # frees the sequence at the next step
                        raise
            elif isinstance(value, Ended):
                break
            else:
                assert isinstance(value, BaseException)
                raise value
        total = time.perf_counter() - start
        return Generation(
            text="".join(pieces).strip(),
            model=self.name,
            prompt_tokens=len(prompt),
            completion_tokens=value.completion_tokens,
            ttft_s=first or total,
            total_s=total,
            finish_reason=value.finish,
        )

    def judge(
        self, prompt: Sequence[int], words: tuple[tuple[int, ...], tuple[int, ...]], *, cache_key: str | None = None
    ) -> float | None:
        """The probability of ``words``' yes among its yes and no as the first token after ``prompt``,
        evaluated in a sequence of its own like an answer's prompt (its prefix shared and kept alike)."""
        if not prompt or len(prompt) >= self.context.n_ctx:
            raise GenerationError(
                f"{self.name}: a prompt of {len(prompt)} tokens cannot be judged in n_ctx {self.context.n_ctx}"
            )
        request = self._submit(Request(prompt, Sampling(max_tokens=1, temperature=0.0), cache_key, None, words=words))
        while True:
            kind, value = request.out.get()
            if isinstance(value, Ended):
                return request.judged
            if isinstance(value, BaseException):
                raise value

    def prepare(self, prefix: Sequence[int], *, cache_key: str, cancel: Flag | None = None) -> Warmed:
        """Evaluate all but the last of ``prefix`` (a session's next prompt up to its question) in a
        sequence, in chunks, and keep it under ``cache_key``; once ``cancel`` is set it stops at the
        next step and keeps what was evaluated."""
        start = time.perf_counter()
        if len(prefix) < 2:
            return Warmed(reused=0, evaluated=0, total=0, seconds=0.0)
        request = self._submit(Request(prefix[:-1], Sampling(max_tokens=1), cache_key, cancel, warm=True))
        kind, value = request.out.get()
        if not isinstance(value, Warmed):
            assert isinstance(value, BaseException)
            raise value
        return Warmed(value.reused, value.evaluated, value.total, time.perf_counter() - start)

    def _submit(self, request: Request) -> Request:
        with self._cond:
            if self._closed:
                raise Cancelled(f"{self.name}: the model is closing")
            self._pending.append(request)
            self._cond.notify()
        return request

    # the decode loop (its own thread; the only user of the context) ----------------------------------

    def _loop(self) -> None:
        try:
            while True:
                with self._cond:
                    self._drop_stopped_waiting()
                    if not (self._closed or self._seqs.active or self._pending):
                        release_workers()  # idle: other threads' decodes keep spinning (see openmp)
                    while not self._closed and not self._seqs.active and not self._pending:
                        self._cond.wait()
                    if self._closed:
                        return
                    admitted = [self._pick(self._pending.popleft()) for _ in range(self._room())]
                for request, slot in admitted:
                    self._admit(request, slot)
                for seq in [s for s in self._seqs.active if s.request.stopped()]:
                    self._end(seq, _warmed(seq) if seq.request.warm else Cancelled("generation cancelled"), keep=True)
                if self._seqs.active:
                    self._step()
                elif not admitted:
                    with self._cond:  # waiting answers were all withdrawn: look again shortly
                        self._cond.wait(0.05)
        except BaseException as exc:  # a bug in the loop: every caller learns of it instead of hanging
            _LOG.exception("%s: the batched decode loop failed", self.name)
            self._fail_all(GenerationError(f"{self.name}: the batched decode loop failed: {exc!r}"))
            raise
        finally:
            self._fail_all(Cancelled(f"{self.name}: the model is closing"))
            self.context.close()

    def _room(self) -> int:
        return min(len(self._seqs.free), len(self._pending))

    def _drop_stopped_waiting(self) -> None:
        for request in [r for r in self._pending if r.stopped()]:
            self._pending.remove(request)
            request.out.put(("error", Cancelled("withdrawn before it started")))

    def _fail_all(self, error: Exception) -> None:
        for seq in list(self._seqs.active):
            self._end(seq, error, keep=False)
        with self._cond:
            self._closed = True
            while self._pending:
                self._pending.popleft().out.put(("error", error))

    def _pick(self, request: Request) -> tuple[Request, int]:
        return request, self._seqs.pick(request)

    def _admit(self, request: Request, slot: int) -> None:
        """Give ``request`` sequence ``slot``, its cache started as :meth:`Sequences.place` finds best."""
        try:
            sampler: SeqSampler | YesNoReader = (
                YesNoReader(self.context, request.words)
                if request.words
                else SeqSampler(self.context, request.sampling)
            )
        except Exception as exc:  # a sampler llama.cpp cannot make fails this answer alone
            self._seqs.free.append(slot)  # its cache untouched: what it held
            request.out.put(("error", GenerationError(f"{self.name}: {exc}")))
            return
        seq = Seq(slot, request, sampler)
        self._seqs.place(seq)
        if request.warm and not seq.todo:  # all of it was saved already
            self._end(seq, _warmed(seq), keep=True)

    def _step(self) -> None:
        """One ``llama_decode``: a token of every generating answer, and prompt chunks within budget
        (given in the order the answers came).

        The batch lists its sequences in increasing order: with a cache per sequence, llama.cpp
        evaluates in one pass only sequences whose ids follow each other in the batch, and splits the
        rest into more passes over the weights (its ``split_equal``), while answers take and free
        sequences in any order."""
        generating = sum(1 for s in self._seqs.active if s.next is not None)
        budget = self.chunk if generating else self.context.n_batch
        group: list[Seq] = []
        for seq in self._seqs.active:
            if seq.next is not None:
                seq.taken = [seq.next]
            else:
                seq.taken = [] if seq.shares else seq.todo[: max(0, budget)]
                budget -= len(seq.taken)
            if seq.taken:
                group.append(seq)
        if group:  # (an empty one is no decode: the copies queued are not made)
            self._run(sorted(group, key=lambda s: s.slot))

    def _run(self, group: list[Seq]) -> None:
        """Decode ``group``'s taken tokens in one call and sample those that reached their end; if
        llama.cpp refuses the batch, each answer is decoded alone and only one that fails alone fails."""
        entries: list[Entry] = []
        outputs: list[tuple[Seq, int]] = []
        for seq in group:
            last_of_prompt = seq.next is None and len(seq.taken) == len(seq.todo) and not seq.request.warm
            for i, token in enumerate(seq.taken):
                wants = i == len(seq.taken) - 1 and (seq.next is not None or last_of_prompt)
                if wants:
                    outputs.append((seq, len(entries)))
                entries.append(Entry(token, len(seq.kv) + i, seq.slot, wants))
        code = self.context.decode(entries)
        if code != 0:
            if len(group) > 1:
                for seq in group:
                    self._run([seq])
            else:
                self._end(group[0], GenerationError(f"{self.name}: llama_decode returned {code}"), keep=False)
            return
        self._seqs.decoded(group)
        for seq in group:
            if seq.request.warm and not seq.todo:
                self._end(seq, _warmed(seq), keep=True)
        for seq, index in outputs:
            self._sample(seq, index)

    def _sample(self, seq: Seq, index: int) -> None:
        try:
            token = seq.sampler.sample(index)
            seq.generated += 1
            if self.context.is_end(token):
                self._end(seq, Ended("stop", seq.generated), keep=True)
                return
            text = seq.sampler.text(token)
        except Exception as exc:  # a fault here belongs to this answer alone
            self._end(seq, GenerationError(f"{self.name}: {exc}"), keep=False)
            return
        if text:
            seq.request.out.put(("piece", text))
        if seq.generated >= seq.request.sampling.max_tokens or len(seq.kv) + 1 >= self.context.n_ctx:
            self._end(seq, Ended("length", seq.generated), keep=True)
        else:
            seq.next = token

    def _end(self, seq: Seq, outcome: Ended | Warmed | Exception, *, keep: bool) -> None:
        """Free ``seq``'s sequence at once (its state kept under the session first when ``keep``) and
        tell its caller how it ended."""
        self._seqs.ending(seq)
        try:
            if keep:
                self._keep(seq)
        finally:
            self._seqs.release(seq, keep=keep)
            seq.sampler.close()
            if isinstance(seq.sampler, YesNoReader):
                seq.request.judged = seq.sampler.found
            seq.request.out.put(("error" if isinstance(outcome, Exception) else "end", outcome))

    def _keep(self, seq: Seq) -> None:
        key = seq.request.cache_key
        if key is None or not self.states.enabled or not seq.kv or not self._seqs.savable(seq.slot):
            return  # (a copy not yet made would be saved as what the sequence held before)
        data = self.context.save(seq.slot)
        if not data:
            self.states.drop(key)
            return
        self.states.put(key, SavedState(tokens=np.array(seq.kv, dtype=np.intc), data=data))


def _warmed(seq: Seq) -> Warmed:
    total = len(seq.request.prompt)
    return Warmed(reused=seq.reused, evaluated=len(seq.kv) - seq.reused, total=total, seconds=0.0)
