"""Settings: loaded once, validated strictly, frozen.

Precedence is coded here and nowhere else: command line (``--set key=value``), then environment
(``APPLIANCE__SECTION__KEY=value``), then the TOML file, then the defaults below. Every field has a
description; ``appliance config docs`` prints them as the README's reference table (a test keeps the
two equal). Errors name the file and the dotted key, and suggest the nearest valid key for a typo.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import ConfigError

ENV_FILE = "APPLIANCE_CONFIG"
ENV_PREFIX = "APPLIANCE__"
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILE = ROOT / "config.toml"

PolicyName = Literal["raw"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class PathsSettings(_Section):
    database: Path = Field(
        Path("data/appliance.db"),
        description="SQLite database file (created with its folder). Relative paths start at the config file's folder.",
    )
    models_dir: Path = Field(
        Path("models"),
        description="Folder holding the GGUF files and `MODELS.toml`. Relative paths start at the config file's folder.",
    )


class ResponderSettings(_Section):
    model: str = Field(
        "qwen2.5-coder-1.5b-instruct",
        min_length=1,
        description="Name of the answering model's entry in `models/MODELS.toml` (its file must carry a chat template).",
    )
    n_ctx: int = Field(4096, ge=256, le=131072, description="Context window in tokens given to llama.cpp.")
    n_threads: int = Field(0, ge=0, le=512, description="CPU threads for generation; 0 means one per core.")
    n_gpu_layers: int = Field(0, ge=-1, description="Layers offloaded to a GPU; 0 for CPU only, -1 for all.")
    temperature: float = Field(0.7, ge=0.0, le=2.0, description="Sampling temperature.")
    top_p: float = Field(0.9, gt=0.0, le=1.0, description="Nucleus sampling threshold.")
    top_k: int = Field(40, ge=0, description="Top-k sampling; 0 disables it.")
    repeat_penalty: float = Field(1.1, ge=1.0, le=2.0, description="Penalty for repeated tokens.")
    max_tokens: int = Field(256, ge=1, le=8192, description="Longest answer in tokens.")
    seed: int = Field(-1, ge=-1, description="Sampling seed; -1 picks a random one per start.")


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
        description="The [INSTRUCTION] part of every prompt.",
    )
    max_message_chars: int = Field(
        2000, ge=1, le=100_000, description="Longest customer message accepted, in characters; longer ones are rejected."
    )


class ContextSettings(_Section):
    policy: PolicyName = Field("raw", description="Context policy for new sessions: `raw` (whole transcript, oldest turns dropped to fit).")
    budget_tokens: int = Field(
        1536,
        ge=64,
        description="Most prompt tokens (system, context, question, instruction), counted with the responder's own tokenizer and chat template.",
    )


class SummarizerSettings(_Section):
    model: str = Field(
        "qwen2.5-coder-0.5b-instruct",
        min_length=1,
        description="Name of the summarizing model's entry in `models/MODELS.toml`: a second, smaller model run off the answer's path.",
    )
    n_ctx: int = Field(4096, ge=512, le=131072, description="Context window in tokens given to the summarizer's llama.cpp instance.")
    n_threads: int = Field(0, ge=0, le=512, description="CPU threads for summarizing; 0 means one per core.")
    n_gpu_layers: int = Field(0, ge=-1, description="Summarizer layers offloaded to a GPU; 0 for CPU only, -1 for all.")
    temperature: float = Field(0.3, ge=0.0, le=2.0, description="Sampling temperature (seed 002: 0.3, for consistent summaries).")
    max_tokens: int = Field(250, ge=16, le=4096, description="The summary's cap in tokens (seed 002: 250); a longer version is rejected.")
    seed: int = Field(-1, ge=-1, description="Summarizer sampling seed; -1 picks a random one per start.")
    every_turns: int = Field(
        4,
        ge=1,
        le=1000,
        description="Summarize once this many turns are not yet covered by the current summary (4 = two turn pairs; the turns not yet covered stay in the prompt verbatim).",
    )
    resummarize_every: int = Field(
        16,
        ge=2,
        le=10000,
        description="Every this many turns, summarize again from the whole transcript instead of the previous summary, against drift (seed 002: every 15-20 turns).",
    )
    timeout_s: float = Field(
        60.0, gt=0, le=3600, description="Longest time one summary may take; it is then cancelled and stored as rejected."
    )
    yield_to_answers: bool = Field(
        True, description="Do not start a summary while an answer is being generated (the responder gets the CPU)."
    )
    languages: tuple[str, ...] = Field(
        ("en", "de", "fr", "es", "it", "nl", "pt"),
        min_length=1,
        description="ISO 639-1 codes the language detector chooses among (the first is the fallback); a summary must be in the conversation's language.",
    )

    @model_validator(mode="after")
    def _cap_fits_window(self) -> "SummarizerSettings":
        if self.max_tokens * 2 > self.n_ctx:
            raise ValueError(
                f"summarizer.max_tokens ({self.max_tokens}) must leave at least as much room for the prompt "
                f"in summarizer.n_ctx ({self.n_ctx})"
            )
        bad = [code for code in self.languages if not re.fullmatch(r"[a-z]{2}", code)]
        if bad:
            raise ValueError(f"summarizer.languages: {', '.join(map(repr, bad))} are not ISO 639-1 codes like 'en'")
        return self


class Settings(_Section):
    paths: PathsSettings = Field(default_factory=PathsSettings, description="Where the appliance keeps its files.")
    responder: ResponderSettings = Field(default_factory=ResponderSettings, description="The model that answers.")
    chat: ChatSettings = Field(default_factory=ChatSettings, description="What the model is told and what it accepts.")
    context: ContextSettings = Field(default_factory=ContextSettings, description="How the prompt is filled.")
    summarizer: SummarizerSettings = Field(
        default_factory=SummarizerSettings, description="The model that keeps the rolling summary, off the answer's path."
    )
    source: str = Field("<defaults>", exclude=True, description="internal")

    @model_validator(mode="after")
    def _budget_fits_window(self) -> "Settings":
        need = self.context.budget_tokens + self.responder.max_tokens
        if need > self.responder.n_ctx:
            raise ValueError(
                f"context.budget_tokens ({self.context.budget_tokens}) + responder.max_tokens "
                f"({self.responder.max_tokens}) = {need} exceeds responder.n_ctx ({self.responder.n_ctx})"
            )
        return self

    @property
    def database(self) -> Path:
        return self.paths.database

    @property
    def models_dir(self) -> Path:
        return self.paths.models_dir


def load_settings(
    path: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Iterable[str] = (),
) -> Settings:
    """Load settings from ``path`` (or ``$APPLIANCE_CONFIG``, or the root ``config.toml``)."""
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
            lines.append(f"{where}: {key}: {err['msg']}{shown}")
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
    base = file.resolve().parent

    def absolute(p: Path) -> Path:
        p = p.expanduser()
        return p if p.is_absolute() else base / p

    paths = settings.paths.model_copy(
        update={"database": absolute(settings.paths.database), "models_dir": absolute(settings.paths.models_dir)}
    )
    return settings.model_copy(update={"paths": paths, "source": str(file)})


def reference_table() -> str:
    """The README's configuration reference, generated from the fields' descriptions."""
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
            default = repr(shown).replace("|", "\\|") if isinstance(shown, str) else str(shown).lower() if isinstance(shown, bool) else str(shown)
            if isinstance(shown, str) and len(default) > 40:
                default = "(see `config.toml`)"
            rows.append(f"| `{section}.{name}` | `{default}` | {finfo.description} |")
    return "\n".join(rows)
