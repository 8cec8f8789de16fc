"""The remote backend: an OpenAI-compatible inference server (llama.cpp server, vLLM, Ollama, ...).

For a site that outgrows one box: only inference moves to the cluster, while the appliance keeps
the sessions, summaries, ledger and guards. This is the only module that talks to such a server.

Counting tokens is what keeps a prompt inside the model's window, so it has one small interface
(:class:`TokenCounter`) and one precedence, coded in :func:`choose_counter`:

1. a local vocab-only copy of the model's GGUF (tokenizer and chat template, no weights): exact,
   because it renders the prompt with the model's own template;
2. the server's tokenize endpoint (llama-cpp-python ``/extras/tokenize``, llama.cpp ``/tokenize``,
   vLLM ``/tokenize``): exact for plain text, and for a chat prompt the messages' text plus
   :data:`MESSAGE_OVERHEAD` tokens per message and :data:`REPLY_OVERHEAD` for the reply's opening;
3. neither: the backend is refused at load time, since a budget that cannot be counted cannot be kept.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from appliance.errors import Cancelled, GenerationError, ModelLoadError
from appliance.protocols import TokenCounter
from appliance.types import Generation, Message, Sampling

TokenizerChoice = Literal["auto", "server", "local"]

# ChatML (Qwen, SmolLM) and Llama 3 wrap each message in 5 tokens (start marker, role, separator,
# end marker, newline) and open the reply with 3; one more each is a margin for templates with
# longer markers and for merges at the boundaries. An overestimate only costs a little context.
MESSAGE_OVERHEAD = 6
REPLY_OVERHEAD = 4

DEFAULT_TIMEOUT_S = 120.0
CONNECT_TIMEOUT_S = 5.0
_PROBE_TEXT = "Order W9945XIS: 12.50 EUR, due 3 March — thank you!"
_CACHE_SIZE = 4096


def server_root(base_url: str) -> str:
    """The server's root (tokenize endpoints live there, not under the OpenAI ``/v1`` prefix)."""
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _client(token: str | None, timeout_s: float) -> httpx.Client:
    """An HTTP client carrying the bearer token in a header only, so no message can show it."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(headers=headers, timeout=httpx.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S))


@dataclass(frozen=True)
class _Dialect:
    """One server family's tokenize request: where it goes and what the body looks like."""

    server: str
    path: str
    body: Callable[[str, str], dict[str, Any]]


DIALECTS = (
    _Dialect("llama-cpp-python", "/extras/tokenize", lambda text, model: {"input": text, "model": model}),
    _Dialect("llama.cpp", "/tokenize", lambda text, model: {"content": text}),
    _Dialect("vLLM", "/tokenize", lambda text, model: {"model": model, "prompt": text}),
)


class ServerTokenizer:
    """Counts with the remote server's own tokenizer.

    Whatever the server adds to every text (a BOS token, say) is measured once on an empty text and
    taken off, so ``count_text`` counts the text alone. Counts are cached by text: context building
    counts the same turns many times per answer, and each count would otherwise be a round trip.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        dialect: _Dialect,
        *,
        token: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.url = server_root(base_url) + dialect.path
        self.model = model
        self.dialect = dialect
        self._http = _client(token, timeout_s)
        self._cache: dict[str, int] = {}
        self._lock = threading.Lock()
        self.baseline = 0
        try:
            self.baseline = len(self._tokens(""))
        except GenerationError:
            pass  # some servers refuse an empty text; they then add nothing we can measure

    @classmethod
    def probe(
        cls, base_url: str, model: str, *, token: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> ServerTokenizer:
        """The first dialect the server answers with tokens; ``ModelLoadError`` naming the URL if none does."""
        root = server_root(base_url)
        tried = []
        with _client(token, timeout_s) as http:
            for dialect in DIALECTS:
                url = root + dialect.path
                try:
                    reply = http.post(url, json=dialect.body(_PROBE_TEXT, model))
                except httpx.HTTPError as exc:
                    raise ModelLoadError(f"{url}: cannot ask for a token count: {_describe(exc)}") from None
                if reply.status_code in (401, 403):
                    raise ModelLoadError(f"{url} answered HTTP {reply.status_code}: check the token_file")
                tried.append(f"{dialect.server} {url}: HTTP {reply.status_code}")
                if reply.status_code == 200 and _token_list(_json(reply)):
                    return cls(base_url, model, dialect, token=token, timeout_s=timeout_s)
        raise ModelLoadError(f"{root} has no tokenize endpoint ({'; '.join(tried)})")

    def _tokens(self, text: str) -> list[int]:
        try:
            reply = self._http.post(self.url, json=self.dialect.body(text, self.model))
            reply.raise_for_status()
            tokens = _token_list(reply.json())
        except (httpx.HTTPError, ValueError) as exc:
            raise GenerationError(f"{self.url}: cannot count tokens: {_describe(exc)}") from None
        if tokens is None:
            raise GenerationError(f"{self.url}: the tokenize answer has no token list")
        return tokens

    def count_text(self, text: str) -> int:
        with self._lock:
            cached = self._cache.get(text)
        if cached is not None:
            return cached
        n = max(0, len(self._tokens(text)) - self.baseline) if text else 0
        with self._lock:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[text] = n
        return n

    def count(self, messages: Sequence[Message]) -> int:
        """An estimate of the rendered chat prompt: text tokens plus the documented overheads."""
        inner = sum(self.count_text(m.content) + MESSAGE_OVERHEAD for m in messages)
        return self.baseline + inner + REPLY_OVERHEAD

    def close(self) -> None:
        self._http.close()


def _json(reply: httpx.Response) -> Any:
    try:
        return reply.json()
    except ValueError:
        return None


def _token_list(data: Any) -> list[int] | None:
    tokens = data.get("tokens") if isinstance(data, dict) else None
    return tokens if isinstance(tokens, list) else None


def choose_counter(
    choice: TokenizerChoice, *, local: TokenCounter | None, server: ServerTokenizer | None, where: str
) -> TokenCounter:
    """The precedence of the module docstring. ``auto`` takes the local copy over the server, but
    first checks that the two agree on a sample, so a catalogue entry that names a different model
    than the one served is caught at load time instead of mis-sizing every prompt."""
    if choice == "local" or (choice == "auto" and local is not None):
        if local is None:
            raise ModelLoadError(f"{where}: remote_tokenizer = 'local' needs the model's GGUF in the catalogue")
        if choice == "auto" and server is not None:
            mine, theirs = local.count_text(_PROBE_TEXT), server.count_text(_PROBE_TEXT)
            if mine != theirs:
                raise ModelLoadError(
                    f"{where}: the local copy's tokenizer counts {mine} tokens where the server counts {theirs}: "
                    "the catalogued model is not the one served; name the served model's entry, "
                    "or choose one with remote_tokenizer = 'local' or 'server'"
                )
        return local
    if server is None:
        raise ModelLoadError(
            f"{where}: no way to count tokens: the server has no tokenize endpoint and no local GGUF copy is "
            "available; add the served model's GGUF to the catalogue (remote_tokenizer = 'local')"
        )
    return server


class RemoteChatModel:
    """A chat model served by an OpenAI-compatible server, streamed over ``/chat/completions``.

    The prompt is counted by ``counter`` (see :func:`choose_counter`) and sent as messages; the
    server applies the chat template. Cancellation is checked between streamed lines: the stream is
    closed, which tells the server to stop, and :class:`Cancelled` is raised. It does not continue a
    given text: servers treat a last assistant message differently (``continues`` is false).
    """

    continues = False

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        n_ctx: int,
        counter: TokenCounter,
        token: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.name = model
        self.n_ctx = n_ctx
        self.base_url = base_url.rstrip("/")
        self.device = f"remote ({self.base_url})"
        self.counter = counter
        self._http = _client(token, timeout_s)

    def count(self, messages: Sequence[Message]) -> int:
        return self.counter.count(messages)

    def count_text(self, text: str) -> int:
        return self.counter.count_text(text)

    def generate(
        self,
        messages: Sequence[Message],
        sampling: Sampling,
        *,
        on_token: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,  # the server keeps its own prompt cache
    ) -> Generation:
        url = f"{self.base_url}/chat/completions"
        pieces: list[str] = []
        finish = "stop"
        usage: dict[str, Any] | None = None
        start = time.perf_counter()
        first = 0.0
        try:
            for chunk in self._chunks(url, self._request(messages, sampling), cancel):
                usage = chunk.get("usage") or usage
                for choice in chunk.get("choices") or []:
                    piece = (choice.get("delta") or {}).get("content") or ""
                    if piece:
                        first = first or time.perf_counter() - start
                        pieces.append(piece)
                        if on_token is not None:
                            on_token(piece)
                    finish = choice.get("finish_reason") or finish
        except httpx.HTTPError as exc:
            raise GenerationError(f"{url}: {_describe(exc)}") from None
        total = time.perf_counter() - start
        text = "".join(pieces).strip()
        prompt_tokens, completion_tokens = self._usage(usage, messages, text)
        return Generation(
            text=text,
            model=self.name,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            ttft_s=first or total,
            total_s=total,
            finish_reason=finish,
        )

    def _chunks(self, url: str, body: dict[str, Any], cancel: threading.Event | None) -> Iterator[dict[str, Any]]:
        """The JSON chunks the server streams for ``body``, up to its ``[DONE]`` (a status not 200 raises)."""
        with self._http.stream("POST", url, json=body) as reply:
            if reply.status_code != 200:
                detail = reply.read().decode("utf-8", "replace").strip()[:300]
                raise GenerationError(f"{url} answered HTTP {reply.status_code}: {detail}")
            for line in reply.iter_lines():
                if cancel is not None and cancel.is_set():
                    raise Cancelled("generation cancelled")  # leaving the block closes the stream
                chunk = sse_event(line, url)
                if chunk == "done":
                    return
                if chunk is not None:
                    yield chunk

    def yes_or_no(self, messages: Sequence[Message], *, cache_key: str | None = None) -> float | None:
        """P(yes) among yes and no as the answer's first token, from the server's ``top_logprobs`` (one
        token generated, greedy); None when the server sends no log-probabilities or neither word is
        among them."""
        url = f"{self.base_url}/chat/completions"
        body = {
            "model": self.name,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": 20,
        }
        try:
            reply = self._http.post(url, json=body)
        except httpx.HTTPError as exc:
            raise GenerationError(f"{url}: {_describe(exc)}") from None
        if reply.status_code != 200:
            raise GenerationError(f"{url} answered HTTP {reply.status_code}: {reply.text.strip()[:300]}")
        try:
            first = _json(reply)["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            found = {str(t["token"]): float(t["logprob"]) for t in first}
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        mass = {
            word: sum(math.exp(lp) for t, lp in found.items() if t.strip().lower() == word) for word in ("yes", "no")
        }
        total = mass["yes"] + mass["no"]
        return mass["yes"] / total if total > 0 else None

    def _request(self, messages: Sequence[Message], sampling: Sampling) -> dict[str, Any]:
        """OpenAI's fields, plus llama.cpp's ``top_k`` and ``repeat_penalty`` (servers ignore what they lack)."""
        body: dict[str, Any] = {
            "model": self.name,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k,
            "repeat_penalty": sampling.repeat_penalty,
        }
        if sampling.seed >= 0:
            body["seed"] = sampling.seed
        return body

    def _usage(self, usage: dict[str, Any] | None, messages: Sequence[Message], text: str) -> tuple[int, int]:
        """The server's own counts when it sent them (``stream_options``), else our counter's."""
        if usage and isinstance(usage.get("prompt_tokens"), int) and isinstance(usage.get("completion_tokens"), int):
            return usage["prompt_tokens"], usage["completion_tokens"]
        return self.counter.count(messages), self.counter.count_text(text) if text else 0

    def close(self) -> None:
        self._http.close()


def sse_event(line: str, url: str) -> dict[str, Any] | Literal["done"] | None:
    """One server-sent-events line: a JSON chunk, ``"done"`` at ``[DONE]``, None for anything else."""
    if line.startswith("error:"):  # llama.cpp's server reports a failure mid-stream this way
        raise GenerationError(f"{url}: the server reported an error: {line[len('error:') :].strip()[:300]}")
    if not line.startswith("data:"):
        return None  # blank separators, comments (keep-alive pings), event names
    data = line[len("data:") :].strip()
    if data == "[DONE]":
        return "done"
    try:
        chunk = json.loads(data)
    except ValueError:
        raise GenerationError(f"{url}: the stream sent something that is not JSON: {data[:100]!r}") from None
    if not isinstance(chunk, dict):
        raise GenerationError(f"{url}: the stream sent {data[:100]!r}, not a chunk")
    if "error" in chunk:
        error = chunk["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        raise GenerationError(f"{url}: the server reported an error: {message}")
    return chunk


def _describe(exc: Exception) -> str:
    """httpx's message, which names neither headers nor the token; its class name when the message is empty."""
    return str(exc) or type(exc).__name__


def open_remote(
    base_url: str,
    model: str,
    *,
    n_ctx: int,
    token: str | None = None,
    local: TokenCounter | None = None,
    tokenizer: TokenizerChoice = "auto",
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> RemoteChatModel:
    """A remote model with its counter chosen by :func:`choose_counter`.

    The server's tokenize endpoint is probed unless ``tokenizer`` is ``local``. Under ``auto`` a
    server that cannot be reached or has no endpoint is no obstacle when a local copy counts;
    under ``server`` it is a ``ModelLoadError``.
    """
    server = None
    if tokenizer != "local":
        try:
            server = ServerTokenizer.probe(base_url, model, token=token, timeout_s=timeout_s)
        except ModelLoadError as exc:
            if tokenizer == "server":
                raise
            if local is None:
                raise ModelLoadError(
                    f"{exc}; and no local GGUF copy of the model is there to count with: add the served model's "
                    "GGUF to the catalogue and name its entry"
                ) from None
    counter = choose_counter(tokenizer, local=local, server=server, where=base_url)
    if server is not None and counter is not server:
        server.close()
    return RemoteChatModel(base_url, model, n_ctx=n_ctx, counter=counter, token=token, timeout_s=timeout_s)
