"""The llama.cpp backend: the only module that imports llama_cpp.

The prompt is rendered with the GGUF's own chat template and tokenized here, and exactly those
tokens are sent to the model, so the count that enforces the budget is the count the model sees.
Identical prompt prefixes across turns let llama.cpp reuse its cache; each session's evaluated prefix
is also saved (``states.StateCache``) and restored when that session is answered next, and a
session's next prefix can be evaluated ahead of its question (:meth:`LlamaChatModel.prepare`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import os
import re
import secrets
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from appliance.errors import Cancelled, GenerationError, ModelLoadError
from appliance.models import gpu
from appliance.models.lookup import Drafts, Lookup, drafting, speculate
from appliance.models.openmp import decoding
from appliance.models.states import SavedState, StateCache, shared_prefix
from appliance.protocols import Flag, Warmed
from appliance.types import Generation, Message, Sampling

if TYPE_CHECKING:
    from llama_cpp import Llama

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


def yes_share(logits: np.ndarray, words: tuple[tuple[int, ...], tuple[int, ...]]) -> float:
    """The probability of ``words``' yes ids among its yes and no ids, from a token's ``logits``."""
    yes, no = (logits[list(ids)].astype(np.float64) for ids in words)
    top = max(yes.max(), no.max())
    p_yes, p_no = np.exp(yes - top).sum(), np.exp(no - top).sum()
    return float(p_yes / (p_yes + p_no))


class _Loading:
    """While any model loads: the process's stdout and stderr point at /dev/null, llama.cpp logs
    through its own C logger (to that /dev/null) instead of a Python callback, and it keeps the
    weights as the file lays them out.

    * llama.cpp writes its loading chatter straight to fds 1 and 2. The first load to start redirects
      and the last to end restores, so models load at once (on two cores the summarizer loads while
      the responder's file is hashed). llama-cpp-python's own redirection (``verbose=False``) saves
      and restores per load: two at once could restore each other's /dev/null and silence the daemon.
    * A load logs thousands of lines, and a Python callback takes the GIL for each: beside a thread
      running Python (imports, another load's set-up) a load took several times as long.
      Afterwards llama.cpp's errors go to the ``appliance.llama`` logger (see :func:`_log_errors`).
    * llama.cpp repacks the quantized weights for its CPU kernels (``use_extra_bufts``) unless told
      not to, which llama-cpp-python has no argument for, so its default model parameters are
      replaced while we load, with the layout each loading thread asked for (:meth:`laid_out`).
      Repacked weights load and evaluate long prompts more slowly; where the CPU has the kernels
      (AVX-512 here) they decode faster, several sequences at once most of all (docs/batching.md).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved: tuple[int, int] | None = None
        self._default_params: Callable[[], Any] | None = None
        self._layout = threading.local()  # per loading thread: two models may load at once, each its way

    def laid_out(self, *, repack: bool) -> _Loading:
        """This context, for a load in this thread with weights repacked or as the file lays them out."""
        self._layout.repack = repack
        return self

    def __enter__(self) -> None:
        import llama_cpp
        import llama_cpp.llama_cpp as native  # where llama_cpp.Llama looks its model parameters up

        with self._lock:
            if self._users == 0:
                self._default_params = native.llama_model_default_params
                native.llama_model_default_params = self._params(self._default_params)
                _flush_std()
                saved = (os.dup(1), os.dup(2))
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
                os.close(null)
                self._saved = saved
                llama_cpp.llama_log_set(llama_cpp.llama_log_callback(0), None)  # NULL: llama.cpp's C logger
            self._users += 1

    def _params(self, default_params: Callable[[], Any]) -> Callable[[], Any]:
        """llama.cpp's default model parameters, repacking as the calling thread's load asked."""

        def params() -> Any:
            chosen = default_params()
            chosen.use_extra_bufts = getattr(self._layout, "repack", False)
            return chosen

        return params

    def __exit__(self, *exc: object) -> None:
        import llama_cpp
        import llama_cpp.llama_cpp as native

        with self._lock:
            self._users -= 1
            if self._users == 0 and self._saved is not None:
                native.llama_model_default_params = self._default_params
                self._default_params = None
                llama_cpp.llama_log_set(_error_logger(), None)
                _flush_std()
                for fd, copy in zip((1, 2), self._saved):
                    os.dup2(copy, fd)
                    os.close(copy)
                self._saved = None


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            continue  # replaced by a caller, closed, or None under pythonw: nothing of ours is buffered


_LOG = logging.getLogger("appliance.llama")
_GGML_LOG_LEVEL_ERROR = 3


def _log_errors(level: int, text: bytes | None, _user_data: Any) -> None:
    """llama.cpp's log callback between loads: its errors, to the journal; nothing else."""
    if level == _GGML_LOG_LEVEL_ERROR and text:
        _LOG.error("llama.cpp: %s", text.decode("utf-8", "replace").rstrip())


@functools.cache
def _error_logger() -> Any:
    """:func:`_log_errors` as a C function pointer, made once and kept (llama.cpp holds its address)."""
    import llama_cpp

    return llama_cpp.llama_log_callback(_log_errors)


_LOADING = _Loading()

# The CUDA libraries a CUDA build of llama.cpp needs, as the registry's NVIDIA packages install them in
# this environment (scripts/setup): llama.cpp's libraries look only beside themselves, so they are
# loaded first, by path, and the dynamic linker then finds them by name. Dependencies first.
_CUDA_LIBRARIES = ("libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13")


@functools.cache
def _native() -> None:
    """Import llama_cpp (its native library), with the environment's CUDA libraries loaded before it."""
    folder = Path(sysconfig.get_path("purelib")) / "nvidia" / "cu13" / "lib"
    for name in _CUDA_LIBRARIES:
        if (folder / name).is_file():
            ctypes.CDLL(str(folder / name), mode=ctypes.RTLD_GLOBAL)
    import llama_cpp  # noqa: F401  (loads the native library now, with the CUDA libraries at hand)


def supports_gpu_offload() -> bool:
    """Whether the installed llama.cpp can put layers on a GPU (a CUDA build; a CPU build cannot)."""
    _native()
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())


def _placement(path: Path, setting: gpu.GpuLayers, name: str) -> gpu.Placement:
    """Where this model's layers go under ``n_gpu_layers = setting`` (see :func:`appliance.models.gpu.place`)."""
    if setting == 0:
        return gpu.Placement()  # nvidia-smi is not asked: a vocab-only load, or CPU only by choice
    found, offload = gpu.detect(), supports_gpu_offload()
    placed = gpu.place(setting, gpu=found, offload=offload, model_bytes=path.stat().st_size)
    if setting != "auto" and not placed.layers:
        why = "no GPU was found" if found is None else "this llama.cpp was built without GPU offload"
        _LOG.warning("%s: n_gpu_layers = %s, but %s: it runs on the CPU", name, setting, why)
    return placed


def usable_cpus() -> int:
    """The CPUs this process may run on (``n_threads = 0``: one thread each): its affinity where the
    system has one (systemd's CPUAffinity=, a container's cpuset), else every CPU. More threads than
    that would wait at llama.cpp's barriers for a CPU."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this system
        return os.cpu_count() or 1


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
    ``repack`` lays the weights out for llama.cpp's CPU matrix kernels (see :class:`_Loading`);
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
        _native()  # imported here so that the rest of the app starts without the native library
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.name = name
        self.path = Path(path)
        self.n_ctx = n_ctx
        self._lock = threading.Lock()
        self.states = StateCache(state_cache_mb * 1024 * 1024)
        self.lookup, self.lookup_tokens = lookup, lookup_tokens
        self.drafts = Drafts()  # drafted tokens checked and kept, for the lab
        threads = n_threads or usable_cpus()
        placed = _placement(path, n_gpu_layers, name)
        try:
            with _LOADING.laid_out(repack=repack):
                self._llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=single_ctx or n_ctx,  # a batched model answers in a context of its own
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_gpu_layers=placed.layers,
                    seed=seed if seed >= 0 else llama_cpp.LLAMA_DEFAULT_SEED,
                    vocab_only=vocab_only,
                    # Read, not mapped: once loaded, the weights no longer follow the file on disk, and
                    # page-cache pressure from other processes cannot evict them between turns.
                    use_mmap=vocab_only or placed.layers != 0,
                    verbose=True,  # no redirection of its own: _LOADING's is shared (see _Loading)
                )
            self._llama.verbose = False  # no timing lines on stderr after each generation
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelLoadError(f"cannot load {path}: {exc}") from None
        layers = llama_cpp.llama_model_n_layer(self._llama.model)
        # -1 (or more than there are) offloads them all: said as the model's count
        self.device = str(placed if 0 <= placed.layers <= layers else gpu.Placement(layers, placed.gpu))
        template = self._llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelLoadError(f"{path} has no chat template (tokenizer.chat_template) in its metadata")
        eos_id, bos_id = self._llama.token_eos(), self._llama.token_bos()
        text_of = self._llama._model.token_get_text
        self._eos = text_of(eos_id) if eos_id != -1 else ""
        # Placeholders for message texts while the template renders; no text a person types contains NUL+nonce.
        self._nonce = secrets.token_hex(8)
        self._formatter = Jinja2ChatFormatter(
            template=template, eos_token=self._eos, bos_token=text_of(bos_id) if bos_id != -1 else ""
        )
        # Both are pure: the template sees only roles and placeholders, the tokenizer only its text.
        self._frame = functools.lru_cache(maxsize=16)(self._render_frame)
        self._piece = functools.lru_cache(maxsize=PIECE_CACHE)(self._tokenize_piece)
        self._by_line = self._splits_cleanly()

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
            return ids
        return ids + self._tokenize(prompt[pos:], special=True, add_bos=bos)

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
        return len(self.tokens(messages))

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
    def _answers(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """The token ids that say yes and those that say no as a whole first word."""
        found = []
        for word in ("yes", "no"):
            forms = {word, word.capitalize(), word.upper(), " " + word, " " + word.capitalize()}
            ids = {ids[0] for ids in (self._tokenize_piece(f, False, False) for f in forms) if len(ids) == 1}
            found.append(tuple(sorted(ids)))
        yes, no = found
        return (yes, no) if yes and no and not set(yes) & set(no) else None

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
        import llama_cpp

        ctx = llama._ctx.ctx
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
        data = (ctypes.c_uint8 * len(saved.data)).from_buffer_copy(saved.data)
        if llama_cpp.llama_state_seq_set_data(ctx, data, len(saved.data), 0) != len(saved.data):
            llama.reset()  # a state that does not load is dropped: this answer evaluates from the start
            self.states.drop(key)
            return
        n = len(saved.tokens)
        llama.input_ids[:n] = saved.tokens
        llama.n_tokens = n
        llama._requires_eval = True  # logits are not part of the saved state: the answer re-evaluates a token
        self.states.restored()

    def _keep(self, key: str | None) -> None:
        """Save the live context's one sequence (its KV cache, not the logits) under ``key``."""
        if key is None or not self.states.enabled or self._llama.n_tokens == 0:
            return
        import llama_cpp

        llama, ctx = self._llama, self._llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        data = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, data, size, 0)
        if not written:
            self.states.drop(key)
            return
        tokens = np.array(llama.input_ids[: llama.n_tokens], dtype=np.intc)
        self.states.put(key, SavedState(tokens=tokens, data=bytes(memoryview(data)[:written])))

    # for the lab ----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def native(self) -> Iterator[Llama]:
        """The loaded ``llama_cpp.Llama``, held under this model's lock for the block: for the lab's timings
        of bare llama.cpp (``appliance.lab.bench.bare``), which call its methods instead of importing llama_cpp.
        Its context is left as llama-cpp-python tracks it: the next answer reuses what its prompt shares."""
        with self._lock, decoding():
            yield self._llama
