"""The llama.cpp backend: one loaded model's single context (its native library's loading and
saved states in :mod:`.native`).

The prompt is rendered with the GGUF's own chat template and tokenized here, and exactly those
tokens are sent to the model, so the count that enforces the budget is the count the model sees.
Identical prompt prefixes across turns let llama.cpp reuse its cache; each session's evaluated prefix
is also saved (``states.StateCache``) and restored when that session is answered next, and a
session's next prefix can be evaluated ahead of its question (:meth:`LlamaChatModel.prepare`).
"""

from __future__ import annotations

import contextlib
import functools
import re
import secrets
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from appliance.errors import Cancelled, GenerationError, ModelLoadError
from appliance.models import gpu, native
from appliance.models.lookup import Drafts, Lookup, drafting, speculate
from appliance.models.openmp import decoding
from appliance.models.states import StateCache, shared_prefix
from appliance.models.yesno import Words, answer_words, yes_share
from appliance.protocols import Flag, Warmed
from appliance.types import Generation, Message, Sampling

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

# Tokens evaluated between two looks at ``cancel`` while warming: an answer waits at most one chunk.
WARM_CHUNK = 32
# Token lists of recent pieces kept: a prompt is tokenized line by line (see ``_LINE_START``), and from one
# turn to the next nearly every line recurs: the system prompt, the summary, the turns, the
# instruction. So only new lines reach llama.cpp's tokenizer.
PIECE_CACHE = 2048
# A message's text is tokenized in pieces, cut after a line break that is followed by a character
# other than white space: Qwen's and Llama 3's pre-tokenizers never join those two, so the pieces'
# ids are the whole text's. ``_SPLIT_PROBE`` checks that at load; a tokenizer that gives it other ids
# (GPT-2's splits a run of breaks before a line its own way) gets whole texts.
_LINE_START = re.compile(r"(?<=\n)(?=\S)")
_SPLIT_PROBE = (
    "[CONTEXT]\nSummary of turns 0-7:\nThe customer (Ana) paid £45.50 on 3/4.\n\nLatest turns:\n"
    "Customer: ref TR3396, ok?\n  Agent: Yes!\n\n\n[QUESTION]\nWhen?\n \nx\t\n\ny"
)


def _lines(text: str) -> list[str]:
    return _LINE_START.split(text)


def _read(
    stream: Iterable[tuple[str, str | None]],
    start: float,
    cancel: threading.Event | None,
    on_token: Callable[[str], None] | None,
) -> tuple[list[str], float, str]:
    """The streamed pieces, the seconds from ``start`` to the first, and the finish reason; raises
    ``Cancelled`` between two pieces once ``cancel`` is set."""
    pieces: list[str] = []
    first, finish = 0.0, "stop"
    for piece, finished in stream:
        if cancel is not None and cancel.is_set():
            raise Cancelled("generation cancelled")
        if piece:
            if not first:
                first = time.perf_counter() - start
            pieces.append(piece)
            if on_token is not None:
                on_token(piece)
        finish = finished or finish
    return pieces, first, finish


def _chunks(stream: Any) -> Generator[tuple[str, str | None]]:
    """``(text, finish)`` of each of llama-cpp-python's completion chunks; closes its stream when done."""
    with contextlib.closing(stream):
        for chunk in stream:
            choice = chunk["choices"][0]
            yield choice["text"], choice.get("finish_reason")


def continued(messages: Sequence[Message]) -> bool:
    """Whether the prompt ends with the assistant's own text, which the answer continues."""
    return bool(messages) and messages[-1].role == "assistant"


class LlamaChatModel:
    """One loaded GGUF with a chat template. A lock serialises use: a llama.cpp context is single-threaded.
    ``single_ctx`` sizes that context when not ``n_ctx`` (a ``BatchedChatModel`` answers in another);
    ``repack`` lays the weights out for llama.cpp's CPU matrix kernels (see :class:`.native.Loading`);
    ``lookup`` drafts up to ``lookup_tokens`` tokens of an answer from its prompt (:mod:`.lookup`).
    ``n_gpu_layers`` is resolved by :func:`appliance.models.gpu.place` (``auto``: all on a GPU with
    room, else none); ``device`` says where the model runs, for ``appliance status`` and ``/readyz``.
    A prompt that ends with the assistant's text is continued (the template is left open after it)."""

    continues = True

    def __init__(
        self,
        path: Path,
        *,
        name: str,
        n_ctx: int = 4096,
        n_threads: int = 0,
        n_gpu_layers: gpu.GpuLayers = 0,
        seed: int = -1,
        vocab_only: bool = False,
        state_cache_mb: int = 0,
        single_ctx: int | None = None,
        repack: bool = False,
        lookup: Lookup = "off",
        lookup_tokens: int = 8,
    ) -> None:
        self.name = name
        self.path = Path(path)
        self.n_ctx = n_ctx
        self._lock = threading.Lock()
        self.states = StateCache(state_cache_mb * 1024 * 1024)
        self.lookup, self.lookup_tokens = lookup, lookup_tokens
        self.drafts = Drafts()  # drafted tokens checked and kept, for the lab
        placed = native.placement(path, n_gpu_layers, name)
        self._llama = native.load(
            path,
            n_ctx=single_ctx or n_ctx,  # a batched model answers in a context of its own
            threads=n_threads or native.usable_cpus(),
            placed=placed,
            seed=seed,
            vocab_only=vocab_only,
            repack=repack,
        )
        self.device = native.device(self._llama, placed)
        self._formatter = self._chat_format()
        # Both are pure: the template sees only roles and placeholders, the tokenizer only its text.
        self._frame = functools.lru_cache(maxsize=16)(self._render_frame)
        self._piece = functools.lru_cache(maxsize=PIECE_CACHE)(self._tokenize_piece)
        # The few latest whole prompts: the one a build counted last is the one generation (or the
        # answerability probe) tokenizes next, the same messages, within the same turn.
        self._prompt_ids = functools.lru_cache(maxsize=4)(self._render_ids)
        self._by_line = self._splits_cleanly()

    def _chat_format(self) -> Jinja2ChatFormatter:
        """The GGUF's own chat template, with its end and start tokens' texts (``_eos`` kept for the
        answers) and a fresh nonce for the placeholders of message texts."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self._llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelLoadError(f"{self.path} has no chat template (tokenizer.chat_template) in its metadata")
        eos_id, bos_id = self._llama.token_eos(), self._llama.token_bos()
        text_of = self._llama._model.token_get_text
        self._eos = text_of(eos_id) if eos_id != -1 else ""
        # Placeholders for message texts while the template renders; no text a person types contains NUL+nonce.
        self._nonce = secrets.token_hex(8)
        return Jinja2ChatFormatter(
            template=template, eos_token=self._eos, bos_token=text_of(bos_id) if bos_id != -1 else ""
        )

    def _splits_cleanly(self) -> bool:
        """Whether this tokenizer gives a text line by line the ids it gives it whole."""
        text = _SPLIT_PROBE
        whole = self._tokenize_piece(text, False, False)
        return whole == tuple(t for line in _lines(text) for t in self._tokenize_piece(line, False, False))

    def _render_frame(self, roles: tuple[str, ...]) -> tuple[str, bool]:
        """The chat template rendered around message placeholders, and whether it added BOS itself."""
        chat: list[Any] = [{"role": role, "content": self._mark(i)} for i, role in enumerate(roles)]
        rendered = self._formatter(messages=chat)
        return rendered.prompt, bool(rendered.added_special)

    def _mark(self, i: int) -> str:
        return f"\x00{self._nonce}:{i}\x00"

    def tokens(self, messages: Sequence[Message], *, open_end: bool = False) -> list[int]:
        """The exact token ids the model receives for these messages.

        Only the chat template's own markers become control tokens: the template is rendered around
        placeholders, and each message's text is tokenized as plain text in its place, so a customer
        who types ``<|im_end|>`` gets those characters, never the token that ends a turn. With
        ``open_end`` the ids stop after the last message's text: a prefix of a longer last message.
        """
        return list(self._prompt_ids(tuple(messages), open_end))

    def _render_ids(self, messages: tuple[Message, ...], open_end: bool) -> tuple[int, ...]:
        prompt, added_special = self._frame(tuple(m.role for m in messages))
        pos = 0
        ids: list[int] = []
        bos = not added_special
        for i, message in enumerate(messages):
            mark = self._mark(i)
            at = prompt.find(mark, pos)
            if at < 0:
                continue  # the template leaves this message out (some drop a system message)
            ids += self._tokenize(prompt[pos:at], special=True, add_bos=bos)
            ids += self._text_ids(message.content)
            bos, pos = False, at + len(mark)
        if open_end:
            return tuple(ids)
        return tuple(ids + self._tokenize(prompt[pos:], special=True, add_bos=bos))

    def _text_ids(self, text: str) -> list[int]:
        """A message's text as plain text, line by line where that gives the same ids (``_LINE_START``)."""
        if not self._by_line or "\n" not in text:
            return self._tokenize(text, special=False, add_bos=False)
        ids: list[int] = []
        for line in _lines(text):
            ids += self._piece(line, False, False)
        return ids

    def _tokenize(self, text: str, *, special: bool, add_bos: bool) -> list[int]:
        if not text and not add_bos:
            return []
        return list(self._piece(text, special, add_bos))

    def _tokenize_piece(self, text: str, special: bool, add_bos: bool) -> tuple[int, ...]:
        # llama_cpp's own tokenize() zeroes a buffer as long as the training context (128 KiB for
        # Qwen) at every call, which cost more than tokenizing a line; no text has more tokens than
        # bytes, besides BOS and EOS.
        import llama_cpp

        data = text.encode("utf-8")
        vocab = self._llama._model.vocab
        size = len(data) + 2
        buf = (llama_cpp.llama_token * size)()
        n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, size, add_bos, special)
        if n < 0:  # not expected, but llama.cpp says how many it needs
            size = -n
            buf = (llama_cpp.llama_token * size)()
            n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, size, add_bos, special)
            if n < 0:
                raise GenerationError(f"{self.name}: cannot tokenize a text of {len(data)} bytes")
        return tuple(buf[:n])

    def count(self, messages: Sequence[Message]) -> int:
        return len(self._prompt_ids(tuple(messages), False))

    def count_text(self, text: str) -> int:
        return len(self._text_ids(text))

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
    ) -> Generation:
        prompt = self.tokens(messages, open_end=continued(messages))
        if len(prompt) + sampling.max_tokens > self.n_ctx:
            raise GenerationError(
                f"prompt of {len(prompt)} tokens + max_tokens {sampling.max_tokens} exceeds n_ctx {self.n_ctx}"
            )
        with self._lock, decoding():  # this thread's llama.cpp workers are released after (see openmp)
            start = time.perf_counter()
            self._select(cache_key, prompt)
            stream = self._stream(prompt, sampling)
            try:
                pieces, first, finish = _read(stream, start, cancel, on_token)
            except (RuntimeError, ValueError) as exc:  # llama.cpp's; Cancelled passes through
                raise GenerationError(f"{self.name}: {exc}") from None
            finally:
                stream.close()
                self._keep(cache_key)
            total = time.perf_counter() - start
            # Tokens actually evaluated after the prompt: exact, unlike counting streamed pieces.
            completion = max(0, self._llama.n_tokens - len(prompt) + 1) if pieces else 0
        return Generation(
            text="".join(pieces).strip(),
            model=self.name,
            prompt_tokens=len(prompt),
            completion_tokens=completion,
            ttft_s=first or total,
            total_s=total,
            finish_reason=finish,
        )

    def _stream(self, prompt: list[int], sampling: Sampling) -> Generator[tuple[str, str | None]]:
        """The answer's ``(text, finish)`` pieces: drafted from the prompt where ``lookup`` says so."""
        if drafting(self.lookup, sampling):
            return speculate(self._llama, prompt, sampling, draft=self.lookup_tokens, drafts=self.drafts)
        return _chunks(self._completion(prompt, sampling))

    def _completion(self, prompt: list[int], sampling: Sampling) -> Any:
        """llama-cpp-python's stream of completion chunks for ``prompt`` (an iterator of chunk dicts;
        its annotation is the union of the streamed and the whole result)."""
        return self._llama.create_completion(
            prompt=prompt,
            max_tokens=sampling.max_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            min_p=0.0,
            repeat_penalty=sampling.repeat_penalty,
            seed=sampling.seed if sampling.seed >= 0 else None,
            stop=[] if sampling.ignore_eos or not self._eos else [self._eos],
            logit_bias={self._llama.token_eos(): float("-inf")} if sampling.ignore_eos else None,
            stream=True,
        )

    def yes_or_no(self, messages: Sequence[Message], *, cache_key: str | None = None) -> float | None:
        """The probability that the answer to ``messages`` opens with a yes rather than a no, read from the
        logits of its first token (the words' one-token forms, with and without a leading space and a
        capital); None when this tokenizer has no one-token yes or no. The prompt's prefix is evaluated
        once: an answer to a prompt that shares it (the same messages up to their end) reuses it."""
        words = self._answers
        if words is None:
            return None
        prompt = self.tokens(messages)
        if len(prompt) >= self.n_ctx:
            raise GenerationError(f"prompt of {len(prompt)} tokens exceeds n_ctx {self.n_ctx}")
        with self._lock, decoding():
            self._select(cache_key, prompt)
            llama = self._llama
            # One token at least is evaluated, so the context's logits are this prompt's last.
            reused = min(shared_prefix(llama.input_ids[: llama.n_tokens], np.asarray(prompt)), len(prompt) - 1)
            try:
                llama.n_tokens = reused  # eval() drops the cache beyond this position
                llama.eval(prompt[reused:])
            except (RuntimeError, ValueError) as exc:
                raise GenerationError(f"{self.name}: {exc}") from None
            return yes_share(np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)), words)

    @functools.cached_property
    def _answers(self) -> Words | None:
        """The token ids that say yes and those that say no as a whole first word."""
        return answer_words(lambda form: self._tokenize_piece(form, False, False))

    # evaluated prefixes, per session -----------------------------------------------------------------

    def prepare(self, messages: Sequence[Message], *, cache_key: str, cancel: Flag | None = None) -> Warmed:
        """Evaluate a session's next prompt up to the end of ``messages`` (the question is not known
        yet), in chunks of ``WARM_CHUNK`` tokens, stopping once ``cancel`` is set; what was evaluated
        is kept under ``cache_key`` either way, so an interrupted warm-up still shortens the answer."""
        prefix = self.tokens(messages, open_end=True)
        with self._lock, decoding():
            start = time.perf_counter()
            self._select(cache_key, prefix)
            llama = self._llama
            # One token is left for the answer to evaluate: llama.cpp needs fresh logits to sample from.
            reused = min(shared_prefix(llama.input_ids[: llama.n_tokens], np.asarray(prefix)), len(prefix) - 1)
            done = reused
            try:
                if done < len(prefix) - 1:
                    llama.n_tokens = done  # eval() drops the cache beyond this position
                    while done < len(prefix) - 1 and not (cancel is not None and cancel.is_set()):
                        chunk = prefix[done : min(done + WARM_CHUNK, len(prefix) - 1)]
                        llama.eval(chunk)
                        done += len(chunk)
            except (RuntimeError, ValueError) as exc:
                raise GenerationError(f"{self.name}: {exc}") from None
            finally:
                self._keep(cache_key)
        return Warmed(
            reused=reused, evaluated=done - reused, total=len(prefix) - 1, seconds=time.perf_counter() - start
        )

    def _select(self, key: str | None, prompt: Sequence[int]) -> None:
        """Restore ``key``'s saved state if it shares more of ``prompt`` than the live context does."""
        if key is None or not self.states.enabled:
            return
        saved = self.states.get(key)
        if saved is None:
            return
        llama, wanted = self._llama, np.asarray(prompt)
        if shared_prefix(saved.tokens, wanted) <= shared_prefix(llama.input_ids[: llama.n_tokens], wanted):
            return
        if native.restore(llama, saved):
            self.states.restored()
        else:  # a state that does not load is dropped: this answer evaluates from the start
            self.states.drop(key)

    def _keep(self, key: str | None) -> None:
        """Save the live context's one sequence (its KV cache, not the logits) under ``key``."""
        if key is None or not self.states.enabled or self._llama.n_tokens == 0:
            return
        saved = native.saved(self._llama)
        if saved is None:
            self.states.drop(key)
        else:
            self.states.put(key, saved)

    # for the lab ----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def native(self) -> Iterator[Llama]:
        """The loaded ``llama_cpp.Llama``, held under this model's lock for the block: for the lab's timings
        of bare llama.cpp (``appliance.lab.bench.bare``), which call its methods instead of importing llama_cpp.
        Its context is left as llama-cpp-python tracks it: the next answer reuses what its prompt shares."""
        with self._lock, decoding():
            yield self._llama
