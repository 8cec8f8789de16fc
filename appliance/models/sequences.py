"""What each sequence of a batched context holds, and where a new answer's cache begins.

The batched engine (:mod:`appliance.models.batched`) admits an answer into a free sequence; this
module decides what of its prompt need not be evaluated: what that sequence holds already, the
session's saved state, or what another sequence holds or is evaluating, copied over
(:meth:`~appliance.models.batch_context.BatchContext.copy`). Customers share the system prompt, so
answers that arrive together would otherwise each evaluate it, and on a CPU prompt evaluation is
most of an answer's time. llama.cpp makes a copy only when the next decode begins, so
:class:`Sequences` also remembers the copies not made yet: until then neither sequence's cache may
be saved or restored into.

Used by the engine's decode thread only, like the context itself.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from appliance.models.batch_context import BatchContext, SeqSampler, YesNoReader
from appliance.models.states import SavedState, StateCache, shared_prefix
from appliance.protocols import Flag
from appliance.types import Sampling

# Fewest prompt tokens worth copying from another sequence: llama.cpp copies a sequence's whole KV
# buffer (see BatchContext.copy), which a system prompt repays but a chat template's first tokens do not.
MIN_COPY = 16


class Request:
    """One answer asked of the engine: its prompt and sampling, and the caller's side of its stream."""

    def __init__(
        self,
        prompt: Sequence[int],
        sampling: Sampling,
        cache_key: str | None,
        cancel: Flag | None,
        warm: bool = False,
        words: tuple[tuple[int, ...], tuple[int, ...]] | None = None,
    ) -> None:
        self.prompt = list(prompt)
        self.warm = warm  # evaluate and keep the prompt, sample nothing (a warm-up)
        self.words = words  # read the yes and no tokens' logits after the prompt instead of sampling
        self.judged: float | None = None  # what they said: the probability of a yes
        self.sampling = sampling
        self.cache_key = cache_key
        self.cancel = cancel
        self.withdrawn = threading.Event()  # the caller gave up (its on_token failed)
        self.out: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()

    def stopped(self) -> bool:
        return self.withdrawn.is_set() or (self.cancel is not None and self.cancel.is_set())


@dataclass(eq=False)
class Seq:
    """An admitted answer: its sequence id, what the cache holds of it, and what comes next."""

    slot: int
    request: Request
    sampler: SeqSampler | YesNoReader
    kv: list[int] = field(default_factory=list)  # the tokens in this sequence's cache, in order
    todo: list[int] = field(default_factory=list)  # prompt tokens not yet evaluated
    reused: int = 0  # prompt tokens it did not evaluate (kept, restored or copied)
    next: int | None = None  # the sampled token the next step evaluates
    generated: int = 0
    taken: list[int] = field(default_factory=list)  # this step's tokens, until the decode succeeds
    # The answer evaluating the prefix this one shares (None: a free sequence holds it), that answer's
    # sequence, and the tokens to copy from it: while ``shares`` is set, this one waits for them.
    source: Seq | None = None
    source_slot: int = -1
    shares: int = 0


@dataclass(frozen=True)
class PromptStats:
    """Prompt tokens of the answers and warm-ups the engine admitted, by where their cache came from:
    ``kept`` (already in the sequence they got), ``restored`` (the session's saved state), ``copied``
    (another sequence's cache: a shared prefix) or ``evaluated`` by ``llama_decode``."""

    prompt: int = 0
    kept: int = 0
    restored: int = 0
    copied: int = 0
    evaluated: int = 0


class Sequences:
    """The context's sequences: the free ones and what each holds, the active answers, the copies not
    made yet, and the prompt counts. ``share`` turns copying between sequences on."""

    def __init__(self, context: BatchContext, states: StateCache, *, share: bool = True) -> None:
        self.context = context
        self.states = states
        self.share = share
        self.free = list(range(context.n_seq))
        # What each free sequence's cache holds: the next answer reuses what its prompt shares with it.
        self.held: dict[int, list[int]] = {slot: [] for slot in self.free}
        self.active: list[Seq] = []
        self.stats = PromptStats()
        self._copy_from: set[int] = set()
        self._copy_to: set[int] = set()

    def pick(self, request: Request) -> int:
        """Take the free sequence whose cache shares the most of ``request``'s prompt; of equals, the
        lowest: the busy sequences stay together, and llama.cpp decodes a run of sequence ids in one
        pass (see ``BatchedEngine._step``)."""
        slot = max(sorted(self.free), key=lambda s: shared_prefix(self.held[s], request.prompt))
        self.free.remove(slot)
        return slot

    def place(self, seq: Seq) -> None:
        """Start ``seq``'s cache with the longest prefix of its prompt that is evaluated already: what
        its sequence holds, the session's saved state, or what another sequence holds (copied now) or
        is evaluating (waited for, then copied, instead of evaluated twice side by side). An answer's
        last prompt token is always evaluated: sampling needs its logits."""
        prompt, slot = seq.request.prompt, seq.slot
        room = len(prompt) - (0 if seq.request.warm else 1)  # a warm-up samples nothing
        kept = min(shared_prefix(self.held[slot], prompt), room)
        saved = self._saved(seq.request, slot)
        restorable = 0 if saved is None else min(shared_prefix(saved.tokens, prompt), room)
        source, source_slot, shares = self._sharer(prompt) if self.share else (None, -1, 0)
        restored = 0
        if shares >= max(kept, restorable) + MIN_COPY:
            seq.source, seq.source_slot, seq.shares = source, source_slot, shares
        elif saved is not None and restorable > kept:
            kept = 0  # the sequence is emptied first, whether the state loads or not
            if self.context.restore(slot, saved.data):
                self.states.restored()
                restored = restorable
        self.context.forget(slot, kept + restored)
        self.held[slot] = []
        self.count(prompt=len(prompt), kept=kept, restored=restored)
        seq.reused = kept + restored
        seq.kv, seq.todo = prompt[: seq.reused], prompt[seq.reused :]
        self.active.append(seq)
        if seq.shares:
            self.follow(seq)

    def follow(self, seq: Seq) -> None:
        """Copy the prefix ``seq`` waits for into its sequence once its source has evaluated it, or has
        ended with part of it; until then ``seq`` evaluates nothing."""
        source = seq.source
        if source is not None and source in self.active and len(source.kv) < seq.shares:
            return
        n = seq.shares if source is None else min(seq.shares, len(source.kv))
        seq.source, seq.shares = None, 0
        if n < len(seq.kv) + MIN_COPY:
            return
        self.context.copy(seq.source_slot, seq.slot, n)
        self._copy_from.add(seq.source_slot)
        self._copy_to.add(seq.slot)
        self.count(copied=n - len(seq.kv))  # what it kept is the copy's start: counted once
        seq.reused += n - len(seq.kv)
        seq.kv, seq.todo = seq.request.prompt[:n], seq.request.prompt[n:]

    def decoded(self, group: Sequence[Seq]) -> None:
        """``group``'s taken tokens are in their caches now, and llama.cpp made the copies queued before
        this decode. Answers waiting for a prefix that is evaluated now copy it (before the next decode)."""
        self._copy_from.clear()
        self._copy_to.clear()
        for seq in group:
            seq.kv += seq.taken
            if seq.next is None:
                self.count(evaluated=len(seq.taken))
                seq.todo = seq.todo[len(seq.taken) :]
        for seq in [s for s in self.active if s.shares]:
            self.follow(seq)

    def ending(self, seq: Seq) -> None:
        """``seq`` leaves the active answers: those waiting for its prefix copy what it has, before its
        sequence is forgotten or given to another answer."""
        self.active.remove(seq)
        for waiting in [s for s in self.active if s.source is seq]:
            self.follow(waiting)

    def release(self, seq: Seq, *, keep: bool) -> None:
        """Free ``seq``'s sequence, its cache left for the next answer to reuse when ``keep``."""
        if keep:
            self.held[seq.slot] = seq.kv
        else:
            self.context.forget(seq.slot)
            self.held[seq.slot] = []
        self.free.append(seq.slot)

    def savable(self, slot: int) -> bool:
        """Whether ``slot``'s cache is what it holds: not while a copy into it waits for a decode."""
        return slot not in self._copy_to

    def count(self, **more: int) -> None:
        self.stats = PromptStats(**{k: v + more.get(k, 0) for k, v in vars(self.stats).items()})

    def _saved(self, request: Request, slot: int) -> SavedState | None:
        """The session's saved state, unless ``slot`` awaits a copy (it would overwrite what is loaded)."""
        if not request.cache_key or not self.states.enabled or slot in self._copy_from | self._copy_to:
            return None
        return self.states.get(request.cache_key)

    def _sharer(self, prompt: list[int]) -> tuple[Seq | None, int, int]:
        """Where the longest prefix of ``prompt`` is, or is being, evaluated: the answer evaluating it
        (None for a free sequence's cache), its sequence, and how many tokens (all but the prompt's
        last at most)."""
        best: tuple[Seq | None, int, int] = (None, -1, 0)
        for seq in self.active:
            n = 0 if seq.shares else shared_prefix(seq.kv + seq.todo, prompt)  # one waiting is no source
            if n > best[2]:
                best = (seq, seq.slot, n)
        for slot in self.free:
            n = shared_prefix(self.held[slot], prompt)
            if n > best[2]:
                best = (None, slot, n)
        return best[0], best[1], min(best[2], len(prompt) - 1)
